"""Check for ho-py-orders-cancel-audit: cancel() writes one 'cancel' audit entry with actor and reason."""

import importlib.util
import sys
from decimal import Decimal
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("orders_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


class Recorder:
    def __init__(self):
        self.calls = []

    def record(self, action, order_id, **details):
        self.calls.append((action, order_id, details))


def main() -> None:
    mod = load(Path(sys.argv[1]))
    audit = Recorder()
    svc = mod.OrderService(audit)
    try:
        a = svc.place("ann", Decimal("10.00"))
        b = svc.place("bob", Decimal("5.00"))
        svc.mark_paid(b.id)
        svc.ship(b.id, "DHL")
        svc.cancel(a.id, "changed mind", actor="agent-7")
    except Exception as e:  # noqa: BLE001
        fail(f"the order flow raised {type(e).__name__}: {e}")
    actions = [c[0] for c in audit.calls]
    if actions != ["place", "place", "pay", "ship", "cancel"]:
        fail(f"audit actions are {actions!r}, expected one 'cancel' at the end")
    _, oid, details = audit.calls[-1]
    if oid != a.id:
        fail(f"the cancel entry names order {oid!r}, not {a.id!r}")
    if details.get("actor") != "agent-7":
        fail(f"the cancel entry's actor is {details.get('actor')!r}, expected 'agent-7'")
    if "changed mind" not in [str(v) for v in details.values()]:
        fail(f"the cancel entry does not carry the reason: {details!r}")
    if svc.get(a.id).state is not mod.State.CANCELLED or svc.get(a.id).notes != ["cancelled: changed mind"]:
        fail("cancel no longer sets the state/notes as before")
    try:
        svc.cancel(b.id, "too late")
    except mod.OrderError:
        pass
    except Exception as e:  # noqa: BLE001
        fail(f"cancelling a shipped order raised {type(e).__name__}")
    else:
        fail("cancelling a shipped order no longer raises OrderError")
    if len(audit.calls) != 5:
        fail("a refused cancel wrote an audit entry")
    mem = mod.MemoryAudit()
    svc2 = mod.OrderService(mem)
    try:
        o = svc2.place("cy", Decimal("1"))
        svc2.cancel(o.id, "dup")
    except Exception as e:  # noqa: BLE001
        fail(f"MemoryAudit flow raised {type(e).__name__}: {e}")
    if [e["action"] for e in mem.entries] != ["place", "cancel"]:
        fail(f"MemoryAudit entries are {[e['action'] for e in mem.entries]!r}")
    print("ok")


main()
