"""Check for py-importer-all-errors: python check.py PATH (PATH: the edited file)."""
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
    text = (
        "sku,name,price,stock\n"
        "ABC-0001,Mug,4.50,10\n"
        "bad,Plate,3.00,5\n"
        "ABC-0003,,2.00,1\n"
        "ABC-0004,Bowl,2.00,1\n"
        "ABC-0005,Spoon,-1,3\n"
    )
    rows = mod.read_rows(text)
    problems = list(mod.check_rows(rows))
    if len(problems) != 3:
        fail(f"check_rows found {len(problems)} problems, expected 3 (rows 3, 4 and 6): {problems!r}")
    for want, got in zip(("row 3", "row 4", "row 6"), problems):
        if want not in got:
            fail(f"problem {got!r} does not name {want} (problems: {problems!r})")
    if "sku" not in problems[0] or "name" not in problems[1] or "price" not in problems[2]:
        fail(f"the problem messages changed: {problems!r}")
    good = mod.read_rows("sku,name,price,stock\nABC-0001,Mug,4.50,10\n")
    if list(mod.check_rows(good)) != []:
        fail("check_rows on valid rows is not empty")
    products, probs = mod.import_catalogue("sku,name,price,stock\nABC-0001,Mug,4.50,10\nABC-0001,Mug,4.50,10\n")
    if products or probs != ["duplicate sku ABC-0001"]:
        fail(f"import_catalogue with duplicates changed: {probs!r}")
    products, probs = mod.import_catalogue("sku,name,price,stock\nABC-0001,Mug,4.50,10\n")
    if probs or len(products) != 1 or products[0]["stock"] != 10:
        fail("import_catalogue of a valid file changed")


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
