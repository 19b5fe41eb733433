"""Check for ho-js-linkcheck-fragment: a #fragment does not make a link to an existing file broken."""

import json
from collections import Counter
import subprocess
import sys
import tempfile
from pathlib import Path

INDEX = """# Docs

See [setup](setup.md#install) and [the FAQ](guide/faq.md).
Jump to [usage](#usage) below.
Broken: [old page](old-page.md#intro)
Broken too: [gone](gone.md)
Root link: [get items](/api/index.md#get-items)
![logo](img/logo%20dark.png)
[ext](https://example.com/x#y) and [mail](mailto:docs@example.com)

```md
[inside a fence](nope.md#x)
```

[faq q1](guide/faq.md#q-1 "FAQ") and [api broken](/api/missing.md#x)

## Usage
"""

FAQ = """# FAQ

Back to [the index](../index.md#top) or [setup](../setup.md).
[Bad anchor target](../setup.md.bak#install)
"""

DRIVER = r"""
const lc = require(process.argv[2]);
const path = require('path');
const root = process.argv[3];
const files = lc.findMarkdown(root);
const broken = lc.checkFiles(files, { root });
const out = broken.map((b) => [path.relative(root, b.file), b.line]);
process.stdout.write(JSON.stringify({ out, links: lc.extractLinks(require('fs').readFileSync(path.join(root, 'index.md'), 'utf8')).length }));
"""


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def main() -> None:
    target = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        (root / "guide").mkdir(parents=True)
        (root / "api").mkdir()
        (root / "img").mkdir()
        (root / "index.md").write_text(INDEX, encoding="utf-8")
        (root / "setup.md").write_text("# Setup\n\n## Install\n", encoding="utf-8")
        (root / "guide" / "faq.md").write_text(FAQ, encoding="utf-8")
        (root / "api" / "index.md").write_text("# API\n", encoding="utf-8")
        (root / "img" / "logo dark.png").write_bytes(b"\x89PNG")
        driver = Path(tmp) / "driver.js"
        driver.write_text(DRIVER, encoding="utf-8")
        try:
            done = subprocess.run(
                ["node", str(driver), str(target), str(root)], capture_output=True, text=True, timeout=20
            )
        except subprocess.TimeoutExpired:
            fail("node timed out")
    if done.returncode != 0:
        err = done.stderr.strip().splitlines() or ["?"]
        fail(f"node failed: {next((l for l in err if 'Error' in l), err[-1])}")
    try:
        res = json.loads(done.stdout)
    except json.JSONDecodeError:
        fail(f"driver printed {done.stdout[:200]!r}")
    got = Counter(tuple(x) for x in res["out"])
    want = Counter([("guide/faq.md", 4), ("index.md", 5), ("index.md", 6), ("index.md", 15)])
    if res["links"] != 11:
        fail(f"extractLinks found {res['links']} links in index.md, expected 11")
    wrongly = sorted((got - want).elements())
    missed = sorted((want - got).elements())
    if wrongly:
        fail(f"links to existing files reported broken (file, line): {wrongly}")
    if missed:
        fail(f"broken links no longer reported (file, line): {missed}")
    print("ok")


main()
