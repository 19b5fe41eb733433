"""Check for ho-js-query-array-values: buildQuery repeats the key for each array element."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

DRIVER = r"""
const q = require(process.argv[2]);
const out = {};
out.arr = q.buildQuery({ status: ['open', 'held'], q: 'a b', page: 2 });
out.nums = q.buildQuery({ id: [3, 1, 2] });
out.plain = q.buildQuery({ q: "it's", flag: true, none: null, empty: '', n: 0 });
out.url = q.withQuery('https://x.test/api?x=1#top', { tag: ['a', 'b c'] });
out.parsed = q.parseQuery(out.arr);
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
        err = (done.stderr.strip().splitlines() or ["?"])
        fail(f"node failed: {next((l for l in err if 'Error' in l), err[-1])}")
    try:
        out = json.loads(done.stdout)
    except json.JSONDecodeError:
        fail(f"driver printed {done.stdout[:200]!r}")
    arr = out["arr"].split("&")
    if sorted(arr) != sorted(["status=open", "status=held", "q=a%20b", "page=2"]):
        fail(f"buildQuery with an array gave {out['arr']!r}")
    if [p for p in arr if p.startswith("status=")] != ["status=open", "status=held"]:
        fail(f"array elements out of order: {out['arr']!r}")
    if out["nums"].split("&") != ["id=3", "id=1", "id=2"]:
        fail(f"buildQuery({{id: [3, 1, 2]}}) gave {out['nums']!r}")
    if out["plain"] != "q=it%27s&flag=true&n=0":
        fail(f"buildQuery on plain values changed: {out['plain']!r}")
    if out["url"] != "https://x.test/api?x=1&tag=a&tag=b%20c#top":
        fail(f"withQuery gave {out['url']!r}")
    if out["parsed"].get("status") != ["open", "held"]:
        fail(f"parseQuery of the result gave {out['parsed']!r}")
    print("ok")


main()
