"""Check for ho-py-feed-timeout-constant: the default timeout is 30 s, used by fetch and latest."""

import importlib.util
import io
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("feeds_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel>
<item><title> Old </title><link>https://a/1</link><pubDate>Mon, 01 Jan 2024 10:00:00 +0000</pubDate></item>
<item><title>New</title><link>https://a/2</link><pubDate>Tue, 02 Jan 2024 10:00:00 +0000</pubDate></item>
<item><title>Undated</title><link>https://a/3</link></item>
</channel></rss>"""


class Opener:
    def __init__(self):
        self.timeouts = []

    def __call__(self, req, timeout=None):
        self.timeouts.append(timeout)
        return io.BytesIO(RSS)


def main() -> None:
    mod = load(Path(sys.argv[1]))
    if getattr(mod, "DEFAULT_TIMEOUT", None) != 30:
        fail(f"DEFAULT_TIMEOUT is {getattr(mod, 'DEFAULT_TIMEOUT', None)!r}, expected 30")
    op = Opener()
    try:
        mod.fetch("https://a/feed", opener=op)
        mod.fetch("https://a/feed", timeout=5, opener=op)
        got = mod.latest(["https://a/feed"], limit=2, opener=op)
    except Exception as e:  # noqa: BLE001
        fail(f"fetch/latest raised {type(e).__name__}: {e}")
    if op.timeouts != [30, 5, 30]:
        fail(f"timeouts passed to the opener were {op.timeouts!r}, expected [30, 5, 30]")
    if [e.title for e in got] != ["New", "Old"]:
        fail(f"latest gave {[e.title for e in got]!r}")
    if mod.MAX_BYTES != 2 * 1024 * 1024:
        fail("MAX_BYTES changed")
    print("ok")


main()
