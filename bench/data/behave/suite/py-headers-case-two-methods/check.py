"""Check for py-headers-case-two-methods: Headers.set/get ignore the case of names."""

import importlib.util
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("httpmsg_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def main() -> None:
    mod = load(Path(sys.argv[1]))
    try:
        h = mod.Headers()
        h.set("Content-Type", "text/plain")
        for probe in ("content-type", "CONTENT-TYPE", "Content-Type"):
            if h.get(probe) != "text/plain":
                fail(f"after set('Content-Type'), get({probe!r}) is {h.get(probe)!r}")
        h.set("content-type", " application/json ")
        if len(h) != 1:
            fail(f"set('content-type') after set('Content-Type') left {len(h)} fields")
        if h.get("Content-Type") != "application/json":
            fail(f"the second set did not replace the value: {h.get('Content-Type')!r}")
        if h.get("X-Missing") is not None or h.get("x-missing", "d") != "d":
            fail("get on a missing name no longer returns the default")
        names = [n.lower() for n, _ in h.items()]
        if names != ["content-type"]:
            fail(f"items() gives {h.items()!r}")
        h2 = mod.Headers([("Accept", "*/*"), ("ACCEPT", "text/html")])
        if len(h2) != 1 or h2.get("accept") != "text/html":
            fail("Headers(pairs) does not merge names that differ in case")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"Headers raised {type(e).__name__}: {e}")
    try:
        mod.Headers().set("Bad Name", "x")
    except ValueError:
        pass
    else:
        fail("a header name with a space no longer raises ValueError")
    try:
        resp = mod.parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
        if resp.content_length() != 5 or resp.headers.get("Content-Length") != "5":
            fail("a lower-case content-length is not found by content_length()")
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001
        fail(f"parse_response raised {type(e).__name__}: {e}")
    try:
        mod.parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\nhello")
    except ValueError:
        pass
    except Exception as e:  # noqa: BLE001
        fail(f"a short body raised {type(e).__name__}")
    else:
        fail("a body shorter than a lower-case content-length is not caught")
    try:
        req = mod.Request("POST", "/hook", body=b"{}")
        req.headers.set("host", "old")
        raw = req.to_bytes("relay.example").decode("latin-1")
    except Exception as e:  # noqa: BLE001
        fail(f"Request.to_bytes raised {type(e).__name__}: {e}")
    head, _, body = raw.partition("\r\n\r\n")
    lines = head.split("\r\n")
    if lines[0] != "POST /hook HTTP/1.1" or body != "{}":
        fail(f"to_bytes gave {raw!r}")
    fields = sorted(line.lower() for line in lines[1:])
    if fields != ["content-length: 2", "host: relay.example"]:
        fail(f"request header lines are {lines[1:]!r}")
    print("ok")


main()
