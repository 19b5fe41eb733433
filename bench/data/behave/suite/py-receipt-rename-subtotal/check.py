"""Check for py-receipt-rename-subtotal: python check.py PATH (PATH: the edited file)."""
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


from decimal import Decimal

ITEMS = [
    {"name": "Coffee beans 1kg", "qty": 2, "unit_price": Decimal("12.50")},
    {"name": "Milk", "qty": 3, "unit_price": Decimal("0.99"), "discount": Decimal("0.10")},
    {"name": "A very long product name that will not fit", "qty": 1, "unit_price": Decimal("100")},
]


def check(mod, path):
    names = mod.format_item.__code__.co_varnames
    if "line_total" not in names:
        fail("format_item has no local variable line_total")
    if "subtotal" in names:
        fail("format_item still has a local variable subtotal")
    orig = load(os.path.join(HERE, "receipt.py"), "original_receipt")
    for item in ITEMS:
        if mod.format_item(item) != orig.format_item(item):
            fail(f"format_item's output changed: {mod.format_item(item)!r}")
    if mod.render(ITEMS) != orig.render(ITEMS):
        fail("render's output changed")
    if "(subtotal: 25.00)" not in mod.format_item(ITEMS[0])[1]:
        fail("the 'subtotal:' label of the detail line changed")


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
