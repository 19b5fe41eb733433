"""Invoices for the studio's client billing: totals, due dates and the overdue list.

Amounts are kept in integer cents throughout; tax is rounded once per invoice (half
up), never per line, so that the totals match what the accounting export computes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

DEFAULT_TERMS_DAYS = 30
DEFAULT_TAX_RATE = Decimal("0.20")


@dataclass(frozen=True)
class Line:
    description: str
    quantity: int
    unit_cents: int

    @property
    def cents(self) -> int:
        return self.quantity * self.unit_cents


@dataclass
class Invoice:
    number: str
    client: str
    issued: dt.date
    terms_days: int = DEFAULT_TERMS_DAYS
    tax_rate: Decimal = DEFAULT_TAX_RATE
    lines: list[Line] = field(default_factory=list)
    paid_on: dt.date | None = None

    @property
    def due(self) -> dt.date:
        return self.issued + dt.timedelta(days=self.terms_days)

    @property
    def subtotal(self) -> int:
        return sum(line.cents for line in self.lines)

    @property
    def tax(self) -> int:
        exact = Decimal(self.subtotal) * self.tax_rate
        return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))

    @property
    def total(self) -> int:
        return self.subtotal + self.tax

    @property
    def paid(self) -> bool:
        return self.paid_on is not None

    def add(self, description: str, quantity: int, unit_cents: int) -> Line:
        if quantity <= 0:
            raise ValueError(f"{self.number}: quantity must be positive, got {quantity}")
        line = Line(description, quantity, unit_cents)
        self.lines.append(line)
        return line


def format_cents(cents: int, currency: str = "EUR") -> str:
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}{whole:,}.{rest:02d} {currency}"


def overdue(invoices: Iterable[Invoice], today: dt.date) -> list[Invoice]:
    """The unpaid invoices whose due date has passed, oldest due date first."""
    late = [inv for inv in invoices if not inv.paid and inv.due < today]
    return sorted(late, key=lambda inv: (inv.due, inv.number))


def outstanding(invoices: Iterable[Invoice]) -> int:
    """What clients still owe, in cents."""
    return sum(inv.total for inv in invoices if not inv.paid)


def reminder_text(inv: Invoice, today: dt.date) -> str:
    days = (today - inv.due).days
    return (
        f"Invoice {inv.number} to {inv.client} for {format_cents(inv.total)} "
        f"was due on {inv.due.isoformat()} ({days} days ago)."
    )


def reminders(invoices: Iterable[Invoice], today: dt.date) -> list[str]:
    return [reminder_text(inv, today) for inv in overdue(invoices, today)]


if __name__ == "__main__":
    inv = Invoice("2024-017", "Hartmann GmbH", dt.date(2024, 2, 1), terms_days=14)
    inv.add("Logo redesign", 1, 180_000)
    inv.add("Revisions (hours)", 6, 9_500)
    print(f"{inv.number}: {format_cents(inv.subtotal)} + {format_cents(inv.tax)} tax")
    for text in reminders([inv], dt.date.today()):
        print(text)
