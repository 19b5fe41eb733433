"""Check: run the edited health check with a stub curl on PATH; exit 0 when it behaves as asked."""

import subprocess
import sys
from pathlib import Path

CURL = r"""#!/bin/bash
url="${@: -1}"
echo "$url" >> "$STUB_LOG"
case "$url" in
  *down*) printf 503 ;;
  *timeout*) printf 000; exit 28 ;;
  *) printf 200 ;;
esac
"""

ENDPOINTS = {
    "all-up": "# shopfront\nweb https://shop.example.test/healthz\n\napi https://api.example.test/ping\n",
    "one-down": "web https://shop.example.test/healthz\napi https://down.example.test/ping\nsearch https://search.example.test/ok\n",
    "timeout": "web https://timeout.example.test/healthz\n",
}


def run(tmp: Path, script: Path, args: list[str]) -> tuple[int, str, list[str]]:
    bin_dir = tmp / "stub-bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "curl").write_text(CURL, encoding="utf-8")
    (bin_dir / "curl").chmod(0o755)
    for name, text in ENDPOINTS.items():
        (tmp / f"{name}.txt").write_text(text, encoding="utf-8")
    log = tmp / "curl-calls.log"
    log.write_text("", encoding="utf-8")
    env = {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp), "LANG": "C",
           "STUB_LOG": str(log)}
    done = subprocess.run(["bash", str(script), *args], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=20, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout + done.stderr, log.read_text(encoding="utf-8").splitlines()


def main() -> int:
    script = Path(sys.argv[1]).resolve()
    tmp = script.parent
    rc, out, calls = run(tmp, script, ["all-up.txt"])
    if rc != 0 or "2/2 endpoints healthy" not in out:
        print(f"with every endpoint up the script exits {rc} or no longer says 2/2 healthy")
        return 1
    rc, out, calls = run(tmp, script, ["one-down.txt"])
    if rc == 0:
        print("the script exits 0 when an endpoint is down")
        return 1
    if rc == 2 and "cannot read" in out:
        print("a readable endpoints file is reported as unreadable")
        return 1
    if "FAIL  api" not in out or "OK    search" not in out or "2/3 endpoints healthy" not in out:
        print("with one endpoint down the other endpoints or the summary are no longer reported")
        return 1
    if len(calls) != 4:
        print(f"expected 4 requests (one endpoint down, 2 tries), got {len(calls)}")
        return 1
    rc, out, calls = run(tmp, script, ["-r", "3", "-t", "1", "timeout.txt"])
    if rc == 0 or "FAIL  web" not in out or len(calls) != 3:
        print("an endpoint that times out with -r 3 is not tried 3 times and reported as failed")
        return 1
    rc, out, calls = run(tmp, script, ["missing.txt"])
    if rc != 2 or "cannot read" not in out:
        print("a missing endpoints file no longer exits 2")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
