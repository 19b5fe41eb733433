"""Check for ho-md-readme-env-table-row: the Configuration table gains an APP_LOG_LEVEL row."""

import hashlib
import sys
from pathlib import Path

# sha256 of the README's lines outside tables (right-stripped, trailing blank lines dropped)
OUTSIDE = "686d3e2b2ac3d20a19976ab774bb2317c27a10e4fa41c5787cd1c8007c4b2c34"
OLD_ROWS = [
    ["`APP_ADDR`", "`127.0.0.1:8080`", "Address and port to listen on"],
    ["`APP_DB`", "`./pastes.db`", "Path of the SQLite database"],
    ["`APP_MAX_SIZE`", "`512k`", "Largest paste accepted (suffixes `k`, `m`)"],
    ["`APP_DEFAULT_TTL`", "`7d`", "Expiry when the client asks for none"],
    ["`APP_TRUST_PROXY`", "unset", "Trust `X-Forwarded-For` from the proxy"],
]


def fail(msg: str) -> None:
    print(msg)
    sys.exit(1)


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def main() -> None:
    text = Path(sys.argv[1]).read_text(encoding="utf-8")
    lines = text.splitlines()
    try:
        conf = lines.index("## Configuration")
    except ValueError:
        fail("no '## Configuration' heading any more")
    end = next((i for i in range(conf + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = lines[conf + 1 : end]
    start = next((i for i, l in enumerate(section) if l.startswith("| Variable")), None)
    if start is None:
        fail("the Configuration section has no variable table")
    table = []
    for line in section[start:]:
        if not line.lstrip().startswith("|"):
            break
        table.append(line)
    if len(table) < 2 or set(table[1].replace("|", "").strip()) - set("-: "):
        fail("the table's separator row is broken")
    rows = [cells(l) for l in table[2:]]
    log_rows = [r for r in rows if r and r[0].strip("`") == "APP_LOG_LEVEL"]
    if len(log_rows) != 1:
        fail(f"expected one APP_LOG_LEVEL row in the table, found {len(log_rows)}")
    row = log_rows[0]
    if len(row) != 3:
        fail(f"the APP_LOG_LEVEL row has {len(row)} cells, not 3: {row!r}")
    if row[1].strip("`").strip().lower() != "info":
        fail(f"the APP_LOG_LEVEL row's default is {row[1]!r}, expected info")
    if not row[2]:
        fail("the APP_LOG_LEVEL row has no meaning")
    others = [r for r in rows if r is not row]
    if others != OLD_ROWS:
        fail("the other rows of the table changed")
    outside = [l.rstrip() for l in lines if not l.lstrip().startswith("|")]
    while outside and not outside[-1]:
        outside.pop()
    if hashlib.sha256("\n".join(outside).encode()).hexdigest() != OUTSIDE:
        fail("text outside the table changed")
    print("ok")


main()
