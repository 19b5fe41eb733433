"""Order lifecycle for the storefront back office.

An order goes ``pending -> paid -> shipped``, or ``pending|paid -> cancelled``. Every
state change is written to the audit trail (who did what to which order, when), which
compliance exports once a quarter.
"""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Protocol


class State(enum.Enum):
    PENDING = "pending"
    PAID = "paid"
    SHIPPED = "shipped"
    CANCELLED = "cancelled"


class OrderError(Exception):
    pass


class AuditTrail(Protocol):
    def record(self, action: str, order_id: str, **details: object) -> None: ...


class MemoryAudit:
    """An audit trail kept in a list (tests, the demo shop)."""

    def __init__(self) -> None:
        self.entries: list[dict[str, object]] = []

    def record(self, action: str, order_id: str, **details: object) -> None:
        at = datetime.now(timezone.utc).isoformat()
        self.entries.append({"action": action, "order_id": order_id, "at": at, **details})


@dataclass
class Order:
    id: str
    customer: str
    total: Decimal
    state: State = State.PENDING
    notes: list[str] = field(default_factory=list)


class OrderService:
    def __init__(self, audit: AuditTrail):
        self._audit = audit
        self._orders: dict[str, Order] = {}
        self._ids = itertools.count(1001)

    def get(self, order_id: str) -> Order:
        try:
            return self._orders[order_id]
        except KeyError:
            raise OrderError(f"no order {order_id}") from None

    def place(self, customer: str, total: Decimal, actor: str = "web") -> Order:
        order = Order(f"O{next(self._ids)}", customer, total)
        self._orders[order.id] = order
        self._audit.record("place", order.id, actor=actor, total=str(total))
        return order

    def mark_paid(self, order_id: str, actor: str = "payments") -> None:
        order = self.get(order_id)
        if order.state is not State.PENDING:
            raise OrderError(f"{order_id} is {order.state.value}, cannot be paid")
        order.state = State.PAID
        self._audit.record("pay", order_id, actor=actor)

    def ship(self, order_id: str, carrier: str, actor: str = "warehouse") -> None:
        order = self.get(order_id)
        if order.state is not State.PAID:
            raise OrderError(f"{order_id} is {order.state.value}, cannot be shipped")
        order.state = State.SHIPPED
        order.notes.append(f"shipped with {carrier}")
        self._audit.record("ship", order_id, actor=actor, carrier=carrier)

    def cancel(self, order_id: str, reason: str, actor: str = "support") -> None:
        order = self.get(order_id)
        if order.state in (State.SHIPPED, State.CANCELLED):
            raise OrderError(f"{order_id} is {order.state.value}, cannot be cancelled")
        order.state = State.CANCELLED
        order.notes.append(f"cancelled: {reason}")
        self._audit.record("cancel", order_id, actor=actor, reason=reason)

    def open_orders(self) -> list[Order]:
        return [o for o in self._orders.values() if o.state in (State.PENDING, State.PAID)]

    def revenue(self) -> Decimal:
        done = (State.PAID, State.SHIPPED)
        return sum((o.total for o in self._orders.values() if o.state in done), Decimal("0"))
