"""Check for py-ledger-transaction-with: python check.py PATH (PATH: the edited file)."""
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


def check(mod, path):
    led = mod.Ledger()
    with led.transaction("salary") as t:
        if not isinstance(t, mod.Transaction):
            fail(f"`with ledger.transaction() as t` gave {t!r}, not the transaction")
        t.transfer("employer", "cash", 100)
    if led.balance("cash") != Decimal(100) or led.balance("employer") != Decimal(-100):
        fail("a `with` block that ended normally was not committed")
    if not t.closed or len(led.journal) != 1:
        fail("the transaction is not closed after the block")

    class Boom(Exception):
        pass

    try:
        with led.transaction("rent") as t2:
            t2.transfer("cash", "landlord", 40)
            raise Boom()
    except Boom:
        pass
    else:
        fail("an exception raised inside the `with` block was swallowed")
    if led.balance("cash") != Decimal(100) or led.balance("landlord") != 0:
        fail("a `with` block that raised was committed anyway")
    if not t2.closed:
        fail("a `with` block that raised did not roll back the transaction")
    try:
        with led.transaction("bad") as t3:
            t3.post("cash", 5)
    except mod.UnbalancedError:
        pass
    else:
        fail("an unbalanced transaction in a `with` block did not raise UnbalancedError")
    if led.balance("cash") != Decimal(100) or len(led.journal) != 1:
        fail("an unbalanced transaction changed the ledger")
    t4 = led.transaction("manual").transfer("cash", "shop", "2.50")
    t4.commit()
    if led.balance("shop") != Decimal("2.50"):
        fail("commit without `with` changed")
    rows, ok = mod.trial_balance(led)
    if not ok or len(rows) != 3:
        fail("trial_balance changed")


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
