"""Check for ho-js-tags-version-sort: sortTags orders release tags by version number."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
const r = require(process.argv[2]);
const tags = ['v1.10.0', 'nightly', 'v1.9.0', 'v0.9.12', 'v1.2.3', 'v2.0.0', 'v1.10.2', 'v1.2.10', 'v10.0.0', 'v1.9.0-rc1'];
const out = {};
out.sorted = r.sortTags(tags);
out.latest = r.latestTag(tags);
out.ranges = r.releaseRanges(['v1.10.0', 'v1.9.0', 'v1.8.1']);
out.next = r.nextVersion('v1.9.0', ['fix: x', 'feat(ui): y']);
out.empty = r.sortTags([]);
process.stdout.write(JSON.stringify(out));
"""


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def main() -> None:
    target = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.js"
        driver.write_text(DRIVER, encoding="utf-8")
        try:
            done = subprocess.run(["node", str(driver), str(target)], capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            fail("node timed out")
    if done.returncode != 0:
        err = done.stderr.strip().splitlines() or ["?"]
        fail(f"node failed: {next((l for l in err if 'Error' in l), err[-1])}")
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        fail(f"driver printed {done.stdout[:200]!r}")
    want = ["v0.9.12", "v1.2.3", "v1.2.10", "v1.9.0", "v1.10.0", "v1.10.2", "v2.0.0", "v10.0.0"]
    if out["sorted"] != want:
        fail(f"sortTags gave {out['sorted']!r}")
    if out["latest"] != "v10.0.0":
        fail(f"latestTag gave {out['latest']!r}")
    if out["ranges"] != [[None, "v1.8.1"], ["v1.8.1", "v1.9.0"], ["v1.9.0", "v1.10.0"]]:
        fail(f"releaseRanges gave {out['ranges']!r}")
    if out["next"] != "v1.10.0" or out["empty"] != []:
        fail("nextVersion or sortTags([]) changed")
    print("ok")


main()
