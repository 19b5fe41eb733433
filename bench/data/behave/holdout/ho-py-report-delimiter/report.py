"""Monthly sales report: load order rows, total them per region, write a CSV summary.

The input is the CSV export of the shop's order table (one row per order line); the
output is what finance imports into their spreadsheet every month.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

HEADER = ("region", "orders", "units", "revenue")
CENT = Decimal("0.01")


@dataclass(frozen=True)
class OrderLine:
    order_id: str
    region: str
    units: int
    unit_price: Decimal

    @property
    def amount(self) -> Decimal:
        return (self.unit_price * self.units).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass
class RegionTotal:
    region: str
    orders: set[str]
    units: int = 0
    revenue: Decimal = Decimal("0")


def parse_line(row: dict[str, str]) -> OrderLine:
    """One row of the export as an ``OrderLine`` (prices use a dot as decimal mark)."""
    return OrderLine(
        order_id=row["order_id"].strip(),
        region=row["region"].strip() or "unknown",
        units=int(row["units"]),
        unit_price=Decimal(row["unit_price"]),
    )


def load_orders(path: str | Path) -> list[OrderLine]:
    with open(path, newline="", encoding="utf-8") as f:
        return [parse_line(row) for row in csv.DictReader(f)]


def totals_by_region(lines: list[OrderLine]) -> list[RegionTotal]:
    """The totals per region, the biggest revenue first (ties by region name)."""
    acc: dict[str, RegionTotal] = defaultdict(lambda: RegionTotal("", set()))
    for line in lines:
        t = acc[line.region]
        t.region = line.region
        t.orders.add(line.order_id)
        t.units += line.units
        t.revenue += line.amount
    return sorted(acc.values(), key=lambda t: (-t.revenue, t.region))


def format_money(value: Decimal) -> str:
    return str(value.quantize(CENT, rounding=ROUND_HALF_UP))


def report_rows(totals: list[RegionTotal]) -> list[tuple[str, ...]]:
    return [
        (t.region, str(len(t.orders)), str(t.units), format_money(t.revenue)) for t in totals
    ]


def write_report(rows: list[tuple[str, ...]], path: str | Path) -> int:
    """Write ``rows`` under ``HEADER`` to ``path`` as CSV; return the number of data rows."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return len(rows)


def grand_total(totals: list[RegionTotal]) -> Decimal:
    return sum((t.revenue for t in totals), Decimal("0"))


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("orders", help="the order export (CSV)")
    parser.add_argument("out", help="where to write the summary")
    args = parser.parse_args(argv)
    totals = totals_by_region(load_orders(args.orders))
    n = write_report(report_rows(totals), args.out)
    print(f"{n} regions, {format_money(grand_total(totals))} in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
