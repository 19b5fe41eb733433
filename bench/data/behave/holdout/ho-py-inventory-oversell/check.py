"""Check for ho-py-inventory-oversell: remove() refuses to take more than is on hand."""

import importlib.util
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("inventory_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def main() -> None:
    mod = load(Path(sys.argv[1]))
    inv = mod.Inventory("w1")
    try:
        inv.register("A")
        inv.add("A", 3)
    except Exception as e:  # noqa: BLE001
        fail(f"register/add raised {type(e).__name__}: {e}")
    try:
        inv.remove("A", 10)
    except mod.InsufficientStock:
        pass
    except Exception as e:  # noqa: BLE001
        fail(f"remove(10) with 3 on hand raised {type(e).__name__}, not InsufficientStock")
    else:
        fail("remove(10) with 3 on hand did not raise InsufficientStock")
    if inv.on_hand("A") != 3:
        fail(f"after a refused remove, on_hand is {inv.on_hand('A')}, expected 3")
    if [m.delta for m in inv.history("A")] != [3]:
        fail(f"a refused remove changed the log: {[m.delta for m in inv.history('A')]}")
    try:
        inv.remove("A", 2)
        inv.remove("A", 1)
    except Exception as e:  # noqa: BLE001
        fail(f"remove within stock raised {type(e).__name__}: {e}")
    if inv.on_hand("A") != 0:
        fail(f"after removing all 3, on_hand is {inv.on_hand('A')}")
    if [m.delta for m in inv.history("A")] != [3, -2, -1]:
        fail(f"log after removals is {[m.delta for m in inv.history('A')]}")
    for bad, exc in ((("A", 0), ValueError), (("nope", 1), mod.UnknownSku)):
        try:
            inv.remove(*bad)
        except exc:
            continue
        except Exception as e:  # noqa: BLE001
            fail(f"remove{bad} raised {type(e).__name__}, expected {exc.__name__}")
        fail(f"remove{bad} no longer raises {exc.__name__}")
    print("ok")


main()
