"""Check for py-versions-bump-docstring: python check.py PATH (PATH: the edited file)."""
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
import inspect


def function(source, name):
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def body_without_docstring(fn):
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return [ast.dump(n) for n in body], ast.dump(fn.args)


def check(mod, path):
    new = function(open(path, encoding="utf-8").read(), "bump")
    old = function(open(os.path.join(HERE, "versions.py"), encoding="utf-8").read(), "bump")
    if new is None:
        fail("bump is gone")
    doc = ast.get_docstring(new)
    if not doc or not doc.strip():
        fail("bump has no docstring")
    for word in ("major", "minor", "patch"):
        if word not in doc.lower():
            fail(f"the docstring of bump does not mention {word!r}")
    if body_without_docstring(new) != body_without_docstring(old):
        fail("the code of bump changed, not only its docstring")
    if inspect.getdoc(mod.bump) != doc:
        fail("bump.__doc__ is not the new docstring")
    cases = [("1.2.3", "patch", "1.2.4"), ("1.2.3", "minor", "1.3.0"), ("v1.2.3", "major", "2.0.0"), ("1.2.0-rc.1", "patch", "1.2.0")]
    for v, part, want in cases:
        if str(mod.bump(v, part)) != want:
            fail(f"bump({v!r}, {part!r}) changed")
    if str(mod.bump("0.9.9")) != "0.9.10":
        fail("bump's default part changed")
    try:
        mod.bump("1.0.0", "build")
    except ValueError:
        pass
    else:
        fail("bump no longer rejects an unknown part")
    if mod.latest(["1.0.0", "1.10.0", "1.9.9", "2.0.0-rc.1"]) != "1.10.0":
        fail("latest changed")


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
