"""Check for ho-py-invoices-overdue-grace: overdue(..., grace_days=N) skips invoices at most N days late."""

import datetime as dt
import importlib.util
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("invoices_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    return mod


def numbers(invoices) -> list[str]:
    return [inv.number for inv in invoices]


def main() -> None:
    mod = load(Path(sys.argv[1]))
    D = dt.date
    try:
        a = mod.Invoice("A", "Acme", D(2024, 2, 1), terms_days=29)  # due 2024-03-01
        b = mod.Invoice("B", "Bolt", D(2024, 2, 10), terms_days=14)  # due 2024-02-24
        c = mod.Invoice("C", "Cara", D(2024, 2, 20), terms_days=14)  # due 2024-03-05
        d = mod.Invoice("D", "Dyne", D(2024, 1, 1), terms_days=14, paid_on=D(2024, 2, 1))
        for inv in (a, b, c, d):
            inv.add("Work", 2, 10_000)
        invs = [a, b, c, d]
    except Exception as e:  # noqa: BLE001
        fail(f"building invoices raised {type(e).__name__}: {e}")

    def call(today, **kw):
        try:
            return numbers(mod.overdue(invs, today, **kw))
        except TypeError as e:
            fail(f"overdue(..., {', '.join(f'{k}={v}' for k, v in kw.items())}) raised TypeError: {e}")
        except Exception as e:  # noqa: BLE001
            fail(f"overdue raised {type(e).__name__}: {e}")

    # default behaviour unchanged
    if call(D(2024, 3, 1)) != ["B"]:
        fail(f"overdue on the due date of A gave {call(D(2024, 3, 1))}, expected ['B']")
    if call(D(2024, 3, 2)) != ["B", "A"]:
        fail(f"overdue without grace gave {call(D(2024, 3, 2))}, expected ['B', 'A']")
    if call(D(2024, 3, 2), grace_days=0) != ["B", "A"]:
        fail("overdue with grace_days=0 differs from the default")

    # A due 03-01, B due 02-24, C due 03-05
    cases = [
        (D(2024, 3, 6), 5, ["B"]),  # A 5 days late: not yet
        (D(2024, 3, 7), 5, ["B", "A"]),  # A 6 days late
        (D(2024, 3, 2), 7, []),  # B 7 days late: not yet
        (D(2024, 3, 3), 7, ["B"]),
        (D(2024, 3, 20), 10, ["B", "A", "C"]),
        (D(2024, 3, 20), 30, []),
    ]
    for today, grace, want in cases:
        got = call(today, grace_days=grace)
        if got != want:
            fail(f"overdue(today={today}, grace_days={grace}) gave {got}, expected {want}")

    try:
        texts = mod.reminders(invs, D(2024, 3, 2))
    except Exception as e:  # noqa: BLE001
        fail(f"reminders raised {type(e).__name__}: {e}")
    if len(texts) != 2 or "Invoice B" not in texts[0] or "(7 days ago)" not in texts[0]:
        fail(f"reminders changed: {texts!r}")
    if mod.outstanding(invs) != 3 * 24_000:
        fail(f"outstanding changed: {mod.outstanding(invs)}")
    print("ok")


main()
