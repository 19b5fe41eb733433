"""Check for sh-rotate-keep-option: -k N keeps N rotated copies; without it 5 are kept."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def run(script: Path, args, cwd: Path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    try:
        return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=30, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        fail(f"the script timed out with {args!r}")


def setup(d: Path, name: str, copies: int) -> Path:
    log = d / name
    log.write_text("live line\n" * 200)
    for i in range(1, copies + 1):
        (d / f"{name}.{i}").write_text(f"copy {i}\n")
    return log


def state(d: Path, name: str) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(d.iterdir()) if p.name.startswith(name)}


def main() -> None:
    script = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        setup(d, "kiosk.log", 4)
        done = run(script, ["-k", "2", "-s", "0", "kiosk.log"], d)
        if done.returncode != 0:
            fail(f"-k 2 -s 0 exited {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1]}")
        got = state(d, "kiosk.log")
        want = {"kiosk.log": "", "kiosk.log.1": "live line\n" * 200, "kiosk.log.2": "copy 1\n"}
        if got != want:
            fail(f"with -k 2 the files are {sorted(got)} (expected kiosk.log, .1, .2 with the right contents)")

        setup(d, "app.log", 6)
        done = run(script, ["-s", "0", "-k", "3", "app.log"], d)
        got = state(d, "app.log")
        if done.returncode != 0 or sorted(got) != ["app.log", "app.log.1", "app.log.2", "app.log.3"]:
            fail(f"-s 0 -k 3 left {sorted(got)} (exit {done.returncode})")
        if got["app.log.3"] != "copy 2\n":
            fail("-k 3 shifted the copies wrongly")

        setup(d, "web.log", 5)
        done = run(script, ["-s", "0", "web.log"], d)
        got = state(d, "web.log")
        want_names = ["web.log", "web.log.1", "web.log.2", "web.log.3", "web.log.4", "web.log.5"]
        if done.returncode != 0 or sorted(got) != want_names or got["web.log.5"] != "copy 4\n":
            fail(f"without -k the files are {sorted(got)} (exit {done.returncode}); 5 copies expected")

        setup(d, "small.log", 0)
        done = run(script, ["-k", "2", "small.log"], d)
        if done.returncode != 0 or sorted(state(d, "small.log")) != ["small.log"]:
            fail("a log under the size limit was rotated or the run failed")
        if run(script, ["-k", "2"], d).returncode == 0:
            fail("no LOGFILE no longer exits non-zero")
    print("ok")


main()
