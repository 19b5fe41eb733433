"""Check for py-blogtags-sorted-unique: python check.py PATH (PATH: the edited file)."""
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
    posts = [
        {"title": "B", "slug": "b", "tags": ["Python", "web dev"], "draft": False},
        {"title": "A", "slug": "a", "tags": ["python", "Async", "python"], "draft": False},
        {"title": "C", "slug": "c", "tags": ["zzz-secret"], "draft": True},
        {"title": "D", "slug": "d", "tags": ["async", "Web-Dev", "  "], "draft": False},
    ]
    got = mod.all_tags(posts)
    if not isinstance(got, list):
        fail(f"all_tags returned a {type(got).__name__}, not a list")
    if got != ["async", "python", "web-dev"]:
        fail(f"all_tags gave {got!r}, expected ['async', 'python', 'web-dev']")
    if mod.all_tags([]) != []:
        fail("all_tags([]) is not []")
    if mod.post_tags(posts[1]) != ["python", "async"]:
        fail("post_tags changed")
    if mod.tag_cloud(posts) != [("async", "xs"), ("python", "xs"), ("web-dev", "xs")]:
        fail(f"tag_cloud changed: {mod.tag_cloud(posts)!r}")
    if [p["slug"] for p in mod.posts_with_tag(posts, "PYTHON")] != ["b", "a"]:
        fail("posts_with_tag changed")


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
