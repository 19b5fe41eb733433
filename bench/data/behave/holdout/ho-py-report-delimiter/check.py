"""Check for ho-py-report-delimiter: write_report takes delimiter=..., the default stays ','."""

import csv
import importlib.util
import sys
import tempfile
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def main() -> None:
    path = Path(sys.argv[1])
    spec = importlib.util.spec_from_file_location("report_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        fail(f"import failed: {type(e).__name__}: {e}")
    rows = [("north", "3", "12", "1,204.50"), ("south", "1", "2", "19.98")]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "semi.csv"
        try:
            n = mod.write_report(rows, out, delimiter=";")
        except TypeError as e:
            fail(f"write_report does not take delimiter=: {e}")
        except Exception as e:  # noqa: BLE001
            fail(f"write_report(..., delimiter=';') raised {type(e).__name__}: {e}")
        if n != 2:
            fail(f"write_report returned {n!r}, expected 2")
        text = out.read_text(encoding="utf-8")
        first = text.splitlines()[0] if text else ""
        if first != "region;orders;units;revenue":
            fail(f"header with delimiter=';' is {first!r}")
        got = list(csv.reader(text.splitlines(), delimiter=";"))
        if got[1:] != [list(r) for r in rows]:
            fail(f"rows with delimiter=';' read back as {got[1:]!r}")
        out2 = Path(tmp) / "comma.csv"
        try:
            mod.write_report(rows, out2)
        except Exception as e:  # noqa: BLE001
            fail(f"write_report(rows, path) raised {type(e).__name__}: {e}")
        text2 = out2.read_text(encoding="utf-8")
        if text2.splitlines()[0] != "region,orders,units,revenue":
            fail("the default delimiter is no longer ','")
        if list(csv.reader(text2.splitlines()))[1:] != [list(r) for r in rows]:
            fail("default CSV output changed")
    try:
        lines = [mod.OrderLine("a1", "north", 2, mod.Decimal("1.25"))]
        if mod.report_rows(mod.totals_by_region(lines)) != [("north", "1", "2", "2.50")]:
            fail("report_rows/totals_by_region changed")
    except Exception as e:  # noqa: BLE001
        fail(f"totals raised {type(e).__name__}: {e}")
    print("ok")


main()
