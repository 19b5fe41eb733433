"""Check for py-mediatypes-unknown-default: python check.py PATH (PATH: the edited file)."""
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
    for name in ("backup.tar.zst", "README", "photo.heic", ".bashrc"):
        try:
            got = mod.content_type(name)
        except Exception as e:
            fail(f"content_type({name!r}) raised {type(e).__name__} instead of returning application/octet-stream")
        if got != "application/octet-stream":
            fail(f"content_type({name!r}) returned {got!r}, expected application/octet-stream")
    if mod.content_type("a/b/Index.HTML") != "text/html":
        fail("content_type of a known extension changed")
    if mod.content_type("x.png") != "image/png":
        fail("content_type('x.png') changed")
    if mod.header_value("notes.txt") != "text/plain; charset=utf-8":
        fail("header_value of a text file changed")
    if mod.header_value("data.bin") != "application/octet-stream":
        fail(f"header_value('data.bin') is {mod.header_value('data.bin')!r}")
    mod.register("zst", "application/zstd")
    if mod.content_type("backup.tar.zst") != "application/zstd":
        fail("a registered extension is no longer used")


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
