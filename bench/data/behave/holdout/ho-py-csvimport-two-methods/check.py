"""Check for ho-py-csvimport-two-methods: header titles and cell values are stripped; the rest is unchanged."""

import importlib.util
import io
import sys
from datetime import date
from pathlib import Path


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def load(path: Path):
    spec = importlib.util.spec_from_file_location("contacts_import", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["contacts_import"] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001
        fail(f"the module does not import: {type(exc).__name__}: {exc}")
    return mod


CLEAN = "Email,Name,Company,Subscribed,Joined\n"
PADDED = " Email , NAME,  company ,Subscribed  ,\tJoined\n"


def main() -> None:
    ci = load(Path(sys.argv[1]).resolve())
    want_cols = {"email": 0, "name": 1, "company": 2, "subscribed": 3, "joined": 4}

    # header_map on its own
    imp = ci.ContactImporter()
    try:
        cols = imp.header_map(PADDED.rstrip("\n").split(","))
    except Exception as exc:  # noqa: BLE001
        fail(f"header_map on padded titles raised {type(exc).__name__}: {exc}")
    if cols != want_cols:
        fail(f"header_map on padded titles returned {cols}, expected {want_cols}")

    # parse_row on its own (columns from a clean header)
    imp = ci.ContactImporter()
    imp.header_map(CLEAN.rstrip("\n").split(","))
    try:
        c = imp.parse_row([" Ann@Example.com ", "  Ann Lee ", " Acme ", " no ", " 2023-04-01 "], 2)
    except Exception as exc:  # noqa: BLE001
        fail(f"parse_row on padded cells raised {type(exc).__name__}: {exc}")
    got = (c.email, c.name, c.company, c.subscribed, c.joined)
    want = ("ann@example.com", "Ann Lee", "Acme", False, date(2023, 4, 1))
    if got != want:
        fail(f"parse_row on padded cells gave {got}, expected {want}")

    # the whole file
    text = PADDED + " bo@example.org , Bo ,,yes, \n\n not-an-email , Cy ,,,\n"
    try:
        res = ci.ContactImporter().import_file(io.StringIO(text))
    except Exception as exc:  # noqa: BLE001
        fail(f"import_file on a padded file raised {type(exc).__name__}: {exc}")
    if [(c.email, c.name, c.subscribed, c.company) for c in res.contacts] != [("bo@example.org", "Bo", True, None)]:
        fail(f"import_file on a padded file imported {res.contacts}")
    if len(res.errors) != 1 or res.errors[0].line != 4:
        fail(f"import_file on a padded file rejected {[str(e) for e in res.errors]}, expected line 4 only")

    # unchanged behaviour
    text = CLEAN + "dee@example.com,Dee,,,\neve@example,Eve,,,\nfay@example.com,Fay,,maybe,\ngus@example.com,,,,\n"
    res = ci.ContactImporter(default_subscribed=False).import_file(io.StringIO(text))
    if [(c.email, c.subscribed, c.joined) for c in res.contacts] != [("dee@example.com", False, None)]:
        fail(f"a clean file imported {res.contacts}")
    if [e.line for e in res.errors] != [3, 4, 5]:
        fail(f"a clean file rejected lines {[e.line for e in res.errors]}, expected [3, 4, 5]")
    if res.summary() != "1 imported, 3 rejected":
        fail(f"summary() is {res.summary()!r}")
    try:
        ci.ContactImporter().header_map(["Email", "Company"])
    except ValueError:
        pass
    else:
        fail("a header without a name column did not raise ValueError")
    semi = ci.ContactImporter().import_file(io.StringIO("name;email\nHal;hal@example.com\n"), delimiter=";")
    if [(c.email, c.name) for c in semi.contacts] != [("hal@example.com", "Hal")]:
        fail(f"a ';'-delimited file imported {semi.contacts}")
    print("ok")


main()
