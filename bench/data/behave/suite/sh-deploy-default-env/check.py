"""Check: run the edited deploy script with stub git/npm/rsync/ssh on PATH; exit 0 when it behaves as asked."""

import os
import subprocess
import sys
from pathlib import Path

STUB = r"""#!/bin/bash
name="$(basename "$0")"
echo "$name $*" >> "$STUB_LOG"
what="$name"
if [ "$name" = npm ]; then what="npm-$1"; [ "$1" = run ] && what="npm-$2"; fi
case " ${STUB_FAIL:-} " in
  *" $what "*) echo "$what: simulated failure" >&2; exit 1 ;;
esac
case "$name $1" in
  "git rev-parse") echo "a1b2c3d" ;;
  "npm run") echo "bundle built" ;;
esac
exit 0
"""


def run(script: Path, args: list[str], fail: str = "") -> tuple[int, str, list[str]]:
    """Run ``script`` with ``args``; the stubs named in ``fail`` exit 1. Returns the exit
    status, the output and the stub calls in order."""
    tmp = script.parent
    bin_dir = tmp / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("git", "npm", "rsync", "ssh"):
        stub = bin_dir / name
        stub.write_text(STUB, encoding="utf-8")
        stub.chmod(0o755)
    log = tmp / "stub-calls.log"
    log.write_text("", encoding="utf-8")
    env = {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp),
        "LANG": "C",
        "STUB_LOG": str(log),
        "STUB_FAIL": fail,
        "BUILD_LOG": str(tmp / "build.log"),
    }
    done = subprocess.run(
        ["bash", str(script), *args],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
    )
    return done.returncode, done.stdout + done.stderr, log.read_text(encoding="utf-8").splitlines()


def main() -> int:
    script = Path(sys.argv[1]).resolve()
    rc, out, calls = run(script, [])
    if rc != 0:
        print(f"running without arguments exits {rc} instead of deploying to staging")
        return 1
    uploads = [c for c in calls if c.startswith("rsync ")]
    if "deployed shopfront a1b2c3d to staging" not in out or len(uploads) != 1 or "@stage-web-01.internal:" not in uploads[0]:
        print("running without arguments does not deploy to the staging host")
        return 1
    if "git rev-parse --short HEAD" not in calls:
        print("running without arguments no longer deploys HEAD")
        return 1
    rc, out, calls = run(script, ["production", "v2.4.0"])
    uploads = [c for c in calls if c.startswith("rsync ")]
    if rc != 0 or "to production" not in out or len(uploads) != 2:
        print("deploy.sh production v2.4.0 no longer deploys to both production hosts")
        return 1
    if "git rev-parse --short v2.4.0" not in calls:
        print("an explicit VERSION is no longer used")
        return 1
    rc, out, calls = run(script, ["staging"])
    if rc != 0 or "to staging" not in out:
        print("deploy.sh staging no longer works")
        return 1
    rc, out, calls = run(script, ["qa"])
    if rc == 0 or "unknown environment: qa" not in out or any(c.startswith("rsync ") for c in calls):
        print("an unknown environment is no longer refused")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
