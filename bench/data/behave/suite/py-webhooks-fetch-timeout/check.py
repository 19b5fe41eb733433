"""Check for py-webhooks-fetch-timeout: python check.py PATH (PATH: the edited file)."""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p) != HERE]


def fail(why):
    print(" ".join(str(why).split()))
    sys.exit(1)


def load(path, name="edited_module"):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


import io
import urllib.request

SENTINEL = object()
calls = []


class FakeResponse(io.BytesIO):
    status = 200

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def fake_urlopen(req, data=None, timeout=SENTINEL, *args, **kwargs):
    calls.append((req, timeout))
    return FakeResponse(b'{"ok": true, "n": 3}')


def check(mod, path):
    urllib.request.urlopen = fake_urlopen
    if hasattr(mod, "urlopen"):
        mod.urlopen = fake_urlopen
    got = mod.fetch_json("http://partner.invalid/status")
    if got != {"ok": True, "n": 3}:
        fail(f"fetch_json returned {got!r}")
    if calls[-1][1] is SENTINEL or calls[-1][1] != 10:
        fail(f"fetch_json(url) called urlopen with timeout {'none' if calls[-1][1] is SENTINEL else calls[-1][1]!r}, expected 10")
    mod.fetch_json("http://partner.invalid/status", timeout=2.5)
    if calls[-1][1] != 2.5:
        fail(f"fetch_json(url, timeout=2.5) passed timeout {calls[-1][1]!r} to urlopen")
    mod.fetch_json("http://partner.invalid/status", {"X-Key": "k"})
    req = calls[-1][0]
    if req.get_header("X-key") != "k" or req.get_header("User-agent") != mod.USER_AGENT:
        fail("fetch_json(url, headers) no longer sends the headers")
    if mod.post_event("http://partner.invalid/hook", {"a": 1}, "s") != 200 or calls[-1][1] != 30:
        fail("post_event changed")


if __name__ == "__main__":
    try:
        module = load(sys.argv[1])
    except BaseException as e:
        fail(f"the file does not import: {type(e).__name__}: {e}")
    try:
        check(module, sys.argv[1])
    except SystemExit:
        raise
    except BaseException as e:
        fail(f"{type(e).__name__}: {e}")
