"""Check for ho-sh-prune-marker-guard: no .ci-cache marker -> exit non-zero, nothing deleted."""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def make_tree(root: Path, marker: bool) -> tuple[Path, Path]:
    (root / "node" / "v20").mkdir(parents=True)
    old = root / "node" / "v20" / "old.tgz"
    new = root / "fresh.tgz"
    old.write_text("old")
    new.write_text("new")
    past = time.time() - 30 * 86400
    os.utime(old, (past, past))
    if marker:
        (root / ".ci-cache").write_text("")
        os.utime(root / ".ci-cache", (past, past))
    return old, new


def run(script: Path, args, env_extra=None):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
    env.update(env_extra or {})
    try:
        return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=30, env=env)
    except subprocess.TimeoutExpired:
        fail(f"the script timed out with {args!r}")


def main() -> None:
    script = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        bare = base / "home"
        bare.mkdir()
        old, new = make_tree(bare, marker=False)
        done = run(script, ["-d", str(bare)])
        if done.returncode == 0:
            fail("pruning a folder without a .ci-cache marker exited 0")
        if not old.exists() or not new.exists():
            fail("pruning a folder without a .ci-cache marker deleted files")
        done = run(script, [], {"CACHE_DIR": str(bare)})
        if done.returncode == 0 or not old.exists():
            fail("CACHE_DIR without a .ci-cache marker was pruned")

        cache = base / "cache"
        cache.mkdir()
        old, new = make_tree(cache, marker=True)
        done = run(script, ["-d", str(cache), "--dry-run"])
        if done.returncode != 0:
            fail(f"--dry-run on a marked cache exited {done.returncode}: {done.stderr.strip()[-200:]}")
        if not old.exists():
            fail("--dry-run deleted a file")
        done = run(script, ["-n", "7"], {"CACHE_DIR": str(cache)})
        if done.returncode != 0:
            fail(f"pruning a marked cache exited {done.returncode}: {done.stderr.strip()[-200:]}")
        if old.exists() or (cache / "node").exists():
            fail("pruning a marked cache did not delete the old file and its empty folders")
        if not new.exists() or not (cache / ".ci-cache").exists():
            fail("pruning a marked cache deleted a recent file or the marker")

        if run(script, ["-d", str(base / "missing")]).returncode == 0:
            fail("a missing folder no longer fails")
        if run(script, []).returncode == 0:
            fail("no folder at all no longer fails")
    print("ok")


main()
