"""Check for py-listing-page-size-constant: python check.py PATH (PATH: the edited file)."""
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


import ast


def check(mod, path):
    if getattr(mod, "PAGE_SIZE", None) != 25:
        fail(f"the module has no PAGE_SIZE constant equal to 25 (got {getattr(mod, 'PAGE_SIZE', None)!r})")
    tree = ast.parse(open(path, encoding="utf-8").read())
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name in ("page_count", "paginate"):
        fn = funcs.get(name)
        if fn is None:
            fail(f"function {name} is gone")
        if any(isinstance(n, ast.Constant) and n.value == 25 for n in ast.walk(fn)):
            fail(f"{name} still uses the literal 25")
        if not any(isinstance(n, ast.Name) and n.id == "PAGE_SIZE" for n in ast.walk(fn)):
            fail(f"{name} does not use PAGE_SIZE")
    if mod.short_title("x" * 25) != "x" * 25 or len(mod.short_title("y" * 40)) != 25:
        fail("short_title's 25-character cut changed")
    if mod.page_count(0) != 1 or mod.page_count(25) != 1 or mod.page_count(26) != 2:
        fail("page_count's default page size changed")
    rows = list(range(60))
    p = mod.paginate(rows, 3)
    if p.rows != list(range(50, 60)) or p.count != 3 or p.total != 60:
        fail("paginate with the default page size changed")
    p = mod.paginate(rows, "2", per_page=10)
    if p.rows != list(range(10, 20)) or p.count != 6:
        fail("paginate with per_page=10 changed")
    if mod.nav_numbers(mod.paginate(list(range(500)), 10)) != [1, None, 8, 9, 10, 11, 12, None, 20]:
        fail("nav_numbers changed")


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
