"""Import a product catalogue from CSV.

The shop's staff upload a spreadsheet exported as CSV with the columns
``sku``, ``name``, ``price`` and ``stock``.  The upload page shows the
problems ``check_rows`` finds; nothing is imported while there are any.
"""

import csv
import io
import re
from decimal import Decimal, InvalidOperation

REQUIRED_COLUMNS = ("sku", "name", "price", "stock")
SKU_RE = re.compile(r"^[A-Z]{3}-\d{4}$")
MAX_NAME_LENGTH = 120


def read_rows(text):
    """The rows of the CSV ``text`` as dicts; ValueError if a column is missing."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError("missing columns: " + ", ".join(missing))
    return list(reader)


def row_problem(row):
    """What is wrong with one row, or None when it is fine."""
    if not SKU_RE.match(row["sku"].strip()):
        return f"bad sku {row['sku']!r}"
    name = row["name"].strip()
    if not name:
        return "empty name"
    if len(name) > MAX_NAME_LENGTH:
        return "name too long"
    try:
        price = Decimal(row["price"])
    except InvalidOperation:
        return f"bad price {row['price']!r}"
    if price < 0:
        return "negative price"
    if not row["stock"].strip().isdigit():
        return f"bad stock {row['stock']!r}"
    return None


def check_rows(rows):
    """The problems of ``rows``, as messages 'row N: ...' (N counts from 2, the
    spreadsheet's line number, because line 1 is the header)."""
    for number, row in enumerate(rows, start=2):
        problem = row_problem(row)
        if problem:
            return [f"row {number}: {problem}"]
    return []


def duplicate_skus(rows):
    seen, dups = set(), []
    for row in rows:
        sku = row["sku"].strip()
        if sku in seen and sku not in dups:
            dups.append(sku)
        seen.add(sku)
    return dups


def to_products(rows):
    """The rows as product dicts with typed values (rows must be valid)."""
    return [
        {
            "sku": row["sku"].strip(),
            "name": row["name"].strip(),
            "price": Decimal(row["price"]),
            "stock": int(row["stock"]),
        }
        for row in rows
    ]


def import_catalogue(text):
    """(products, problems): the products when there is no problem, else []."""
    rows = read_rows(text)
    problems = check_rows(rows)
    problems += [f"duplicate sku {sku}" for sku in duplicate_skus(rows)]
    if problems:
        return [], problems
    return to_products(rows), []
