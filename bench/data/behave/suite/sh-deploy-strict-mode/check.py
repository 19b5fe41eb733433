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
    rc, out, calls = run(script, ["staging", "v2.4.0"])
    if rc != 0 or "deployed shopfront a1b2c3d to staging" not in out:
        print(f"a deploy where every step succeeds no longer completes (exit {rc})")
        return 1
    if not any(c.startswith("rsync ") for c in calls) or not any("ln -sfn" in c for c in calls):
        print("a successful deploy no longer uploads and activates the release")
        return 1
    for fail, step in (("rsync", "the upload"), ("npm-build", "the build (piped through tee)"),
                       ("npm-ci", "npm ci"), ("ssh", "the activation over ssh")):
        rc, out, calls = run(script, ["production"], fail)
        if rc == 0:
            print(f"the script exits 0 when {step} fails")
            return 1
        if "deployed shopfront" in out:
            print(f"the script still says 'deployed' when {step} fails")
            return 1
        if fail == "rsync" and any("ln -sfn" in c for c in calls):
            print("a release whose upload failed is still activated")
            return 1
        if fail.startswith("npm") and any(c.startswith("rsync ") for c in calls):
            print(f"the bundle is still uploaded when {step} fails")
            return 1
        if fail == "ssh" and sum(c.startswith("rsync ") for c in calls) != 1:
            print("the deploy goes on to the next host after the activation failed")
            return 1
    rc, out, calls = run(script, [])
    if rc != 2 or "Usage: deploy.sh ENVIRONMENT" not in out:
        print(f"running without arguments no longer prints the usage and exits 2 (exit {rc})")
        return 1
    rc, out, calls = run(script, ["qa"])
    if rc == 0 or "unknown environment: qa" not in out:
        print("an unknown environment is no longer refused")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
