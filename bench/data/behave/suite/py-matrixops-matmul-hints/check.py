"""Check for py-matrixops-matmul-hints: python check.py PATH (PATH: the edited file)."""
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


def check(mod, path):
    sig = inspect.signature(mod.matmul)
    params = list(sig.parameters.values())
    if [p.name for p in params] != ["a", "b"]:
        fail(f"matmul's parameters changed: {[p.name for p in params]!r}")
    for p in params:
        if p.annotation is inspect.Parameter.empty:
            fail(f"parameter {p.name} of matmul has no type hint")
        if "float" not in str(p.annotation):
            fail(f"the hint of {p.name} does not say float: {p.annotation!r}")
    if sig.return_annotation is inspect.Signature.empty:
        fail("matmul has no return type hint")
    if "float" not in str(sig.return_annotation):
        fail(f"the return hint of matmul does not say float: {sig.return_annotation!r}")
    old = ast.parse(open(os.path.join(HERE, "matrixops.py"), encoding="utf-8").read())
    new = ast.parse(open(path, encoding="utf-8").read())

    def body(tree):
        for n in tree.body:
            if isinstance(n, ast.FunctionDef) and n.name == "matmul":
                return [ast.dump(x) for x in n.body]
        return None

    if body(new) != body(old):
        fail("the body of matmul changed")
    a = [[1, 2], [3, 4]]
    b = [[5, 6], [7, 8]]
    if mod.matmul(a, b) != [[19, 22], [43, 50]]:
        fail("matmul gives another result")
    try:
        mod.matmul([[1, 2, 3]], [[1, 2]])
    except mod.ShapeError:
        pass
    else:
        fail("matmul no longer rejects mismatched shapes")
    if mod.transpose([[1, 2, 3]]) != [[1], [2], [3]] or mod.determinant([[2, 0], [0, 3]]) != 6.0:
        fail("other functions changed")


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
