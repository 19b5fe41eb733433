"""Check for ho-sh-sync-dry-run: `-n` lists the files that would be copied and leaves
DEST untouched; without it the script copies as before, and -x still works."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SRC_FILES = {
    "index.html": "<h1>home</h1>\n",
    "css/site.css": "body { color: #222; }\n",
    "css/site.css.map": "{\"version\": 3}\n",
    "js/app.js": "console.log('v2');\n",
    "notes.txt~": "scratch\n",
}
DEST_FILES = {
    "index.html": "<h1>home</h1>\n",  # identical: unchanged
    "css/site.css": "body { color: red; }\n",  # stale: would be copied
    "old.html": "<p>kept</p>\n",  # not in SRC: stays
}
WOULD_COPY = ["css/site.css", "js/app.js"]


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def write_tree(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def snapshot(root: Path) -> dict:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        out[rel] = path.read_text(encoding="utf-8") if path.is_file() else "<dir>"
    return out


def run(script: Path, cwd: Path, *args: str):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(cwd)}
    try:
        return subprocess.run(["bash", str(script), *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(f"publish.sh {' '.join(args)} timed out")


def why(done) -> str:
    lines = [l.strip() for l in (done.stderr + "\n" + done.stdout).splitlines() if l.strip()]
    return next((l for l in lines if l.startswith("publish.sh:")), lines[0] if lines else "no output")


def main() -> None:
    src_script = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        script = tmp / "publish.sh"
        shutil.copy(src_script, script)
        write_tree(tmp / "site", SRC_FILES)
        write_tree(tmp / "www", DEST_FILES)
        before = snapshot(tmp / "www")

        for args in (["-n"], ["-n", "-x", "*.map"]):
            shown = " ".join(args)
            done = run(script, tmp, *args, "site", "www")
            if done.returncode != 0:
                fail(f"publish.sh {shown} site www exits {done.returncode}: {why(done)}")
            after = snapshot(tmp / "www")
            if after != before:
                changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
                fail(f"publish.sh {shown} changed the destination ({changed[0]}); a dry run must copy nothing")
            output = done.stdout + done.stderr
            missing = [rel for rel in WOULD_COPY if rel not in output]
            if "*.map" not in args:
                missing += [] if "css/site.css.map" in output else ["css/site.css.map"]
            if missing:
                fail(f"publish.sh {shown} does not list {missing[0]}, which it would copy")
            if "*.map" in args and "site.css.map" in output:
                fail(f"publish.sh {shown} lists css/site.css.map although -x excludes it")

        done = run(script, tmp, "-x", "*.map", "site", "www")
        if done.returncode != 0:
            fail(f"publish.sh -x '*.map' site www exits {done.returncode}: {why(done)}")
        want = dict(DEST_FILES, **{k: v for k, v in SRC_FILES.items() if k not in ("css/site.css.map", "notes.txt~")})
        got = {k: v for k, v in snapshot(tmp / "www").items() if v != "<dir>"}
        if got != want:
            wrong = sorted(set(got) ^ set(want)) or [k for k in want if got.get(k) != want[k]]
            fail(f"without -n, the copy into an existing DEST is wrong (check {wrong[0]})")

        done = run(script, tmp, "site", "fresh/www")
        got = {k: v for k, v in snapshot(tmp / "fresh" / "www").items() if v != "<dir>"} if (tmp / "fresh" / "www").is_dir() else {}
        want = {k: v for k, v in SRC_FILES.items() if k != "notes.txt~"}
        if done.returncode != 0 or got != want:
            fail(f"publish.sh site fresh/www no longer copies the site into a new DEST: {why(done)}")

        done = run(script, tmp, "-q", "site", "www")
        if done.returncode == 0:
            fail("an unknown option (-q) is accepted")
    print("ok")


main()
