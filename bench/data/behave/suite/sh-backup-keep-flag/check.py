"""Check: run the edited backup script on made-up directories; exit 0 when it behaves as asked."""

import subprocess
import sys
import tempfile
from pathlib import Path


def setup(base: Path, old: int = 10) -> tuple[Path, Path]:
    """Source folders ``data`` and ``logs`` and a backup folder with ``old`` archives of each."""
    src = base / "src"
    for name in ("data", "logs"):
        (src / name).mkdir(parents=True)
        (src / name / "file.txt").write_text(f"{name}\n", encoding="utf-8")
    out = base / "out"
    out.mkdir()
    for i in range(old):
        for name in ("data", "logs"):
            (out / f"{name}-202401{i + 10:02d}-020000.tar.gz").write_bytes(b"")
    return src, out


def run(script: Path, args: list[str], env_extra: dict[str, str], cwd: Path) -> tuple[int, str]:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C", **env_extra}
    done = subprocess.run(
        ["bash", str(script), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr


def archives(out: Path, name: str) -> list[str]:
    return sorted(p.name for p in out.glob(f"{name}-*.tar.gz"))


def main() -> int:
    script = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src, out = setup(base)
        rc, log = run(script, ["-k", "3", str(src / "data")], {"DEST": str(out)}, base)
        if rc != 0:
            print(f"backup.sh -k 3 DIR exits {rc}: {log.strip().splitlines()[-1] if log.strip() else ''}")
            return 1
        kept = archives(out, "data")
        if len(kept) != 3:
            print(f"backup.sh -k 3 keeps {len(kept)} archives of data, not 3")
            return 1
        if kept[:2] != ["data-20240118-020000.tar.gz", "data-20240119-020000.tar.gz"] or kept[2] <= kept[1]:
            print(f"-k 3 did not keep the newest archives: {kept}")
            return 1
        if len(archives(out, "logs")) != 10:
            print("backing up data touched the archives of logs")
            return 1
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src, out = setup(base)
        rc, log = run(script, [str(src / "data"), str(src / "logs")], {"DEST": str(out)}, base)
        if rc != 0 or len(archives(out, "data")) != 7 or len(archives(out, "logs")) != 7:
            print("without -k the script no longer keeps 7 archives per directory")
            return 1
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src, out = setup(base, old=4)
        rc, log = run(script, ["-k", "2", str(src / "data"), str(src / "logs")], {"DEST": str(out)}, base)
        if rc != 0 or len(archives(out, "data")) != 2 or len(archives(out, "logs")) != 2:
            print("-k 2 with two directories does not keep 2 archives of each")
            return 1
        rc, log = run(script, ["-k", "5", str(src / "missing")], {"DEST": str(out)}, base)
        if rc == 0 or "not a directory" not in log:
            print("a missing source directory is no longer reported")
            return 1
        rc, log = run(script, [], {"DEST": str(out)}, base)
        if rc != 2 or "usage" not in log.lower():
            print("running without arguments no longer prints the usage and exits 2")
            return 1
        rc, log = run(script, ["-k", "3"], {"DEST": str(out)}, base)
        if rc == 0:
            print("-k 3 without any source directory exits 0")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
