"""Check for py-money-repr: python check.py PATH (PATH: the edited file)."""
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
    cases = [
        (mod.Money("12.5", "eur"), "Money('12.50', 'EUR')"),
        (mod.Money(3, "JPY"), "Money('3', 'JPY')"),
        (mod.Money("-0.125", "KWD"), "Money('-0.125', 'KWD')"),
    ]
    for m, want in cases:
        got = repr(m)
        if got.replace('"', "'") != want:
            fail(f"repr gave {got!r}, expected {want}")
        back = eval(got, {"Money": mod.Money})
        if back != m:
            fail(f"eval(repr(m)) is not equal to m for {want}")
    if str(mod.Money("12.5", "EUR")) != "12.50 EUR":
        fail("str(Money) changed")
    if repr([mod.Money(1, "USD")]).replace('"', "'") != "[Money('1.00', 'USD')]":
        fail("repr of a list of Money does not use the new repr")
    shares = mod.allocate(mod.Money("10", "EUR"), [1, 1, 1])
    if [str(s) for s in shares] != ["3.34 EUR", "3.33 EUR", "3.33 EUR"]:
        fail("allocate changed")


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
