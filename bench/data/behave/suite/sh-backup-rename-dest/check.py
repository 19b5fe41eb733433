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


import re


def main() -> int:
    script = Path(sys.argv[1]).resolve()
    text = script.read_text(encoding="utf-8")
    left = [i + 1 for i, line in enumerate(text.splitlines()) if re.search(r"\bDEST\b", line)]
    if left:
        print(f"DEST is still named on line(s) {', '.join(map(str, left))}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src, out = setup(base)
        wrong = base / "wrong"
        env = {"BACKUP_ROOT": str(out), "DEST": str(wrong)}
        rc, log = run(script, [str(src / "data")], env, base)
        if rc != 0:
            print(f"the script exits {rc} with BACKUP_ROOT set: {log.strip().splitlines()[-1] if log.strip() else ''}")
            return 1
        if wrong.exists():
            print("the script still writes to $DEST")
            return 1
        kept = archives(out, "data")
        if len(kept) != 7 or kept[-1] <= "data-20240119-020000.tar.gz":
            print(f"the new archive is not written to $BACKUP_ROOT and rotated there ({len(kept)} archives)")
            return 1
        if str(out) not in log:
            print("the log lines no longer show the backup folder")
            return 1
        if (out / ".backup.lock").exists():
            print("the lock is left behind in $BACKUP_ROOT")
            return 1
        (out / ".backup.lock").mkdir()
        rc, log = run(script, [str(src / "logs")], env, base)
        if rc != 3:
            print("the lock in $BACKUP_ROOT no longer stops a second backup")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
