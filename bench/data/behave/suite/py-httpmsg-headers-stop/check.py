"""Check for py-httpmsg-headers-stop: python check.py PATH (PATH: the edited file)."""
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


def check(mod, path):
    lines = ["Host: example.org\r\n", "Accept: text/html\r\n", "\r\n", "Note: see attachment\r\n"]
    got = mod.parse_headers(lines)
    if got != {"host": "example.org", "accept": "text/html"}:
        fail(f"parse_headers read past the blank line: {got!r}")
    try:
        got = mod.parse_headers(["X-A: 1\n", "\n", "just some body text\n", "  indented too\n"])
    except mod.MessageError as e:
        fail(f"parse_headers parsed a body line after the blank line: {e}")
    if got != {"x-a": "1"}:
        fail(f"parse_headers gave {got!r}, expected only x-a")
    got = mod.parse_headers(["Via: a\n", "Via: b\n", "Content-Length: 5\n"])
    if got != {"via": "a, b", "content-length": "5"}:
        fail(f"parse_headers without a blank line changed: {got!r}")
    try:
        mod.parse_headers(["no colon here\n"])
    except mod.MessageError:
        pass
    else:
        fail("parse_headers no longer rejects a bad header line")
    msg = mod.parse_message("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
    if msg.header("HOST") != "x" or msg.content_length != 2 or msg.body != "hi":
        fail("parse_message changed")


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
