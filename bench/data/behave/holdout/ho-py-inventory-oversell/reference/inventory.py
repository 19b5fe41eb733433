"""Warehouse stock: how many units of each SKU are on hand, and a movement log.

``Inventory`` is the in-memory model the picking service keeps per warehouse; it is
rebuilt from the movement log at start-up (``Inventory.replay``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone


class InventoryError(Exception):
    """Base class of the errors below."""


class UnknownSku(InventoryError, KeyError):
    def __init__(self, sku: str):
        super().__init__(sku)
        self.sku = sku

    def __str__(self) -> str:
        return f"unknown SKU {self.sku!r}"


class InsufficientStock(InventoryError):
    def __init__(self, sku: str, wanted: int, available: int):
        super().__init__(f"{sku}: wanted {wanted}, only {available} on hand")
        self.sku = sku
        self.wanted = wanted
        self.available = available


@dataclass(frozen=True)
class Movement:
    sku: str
    delta: int
    reason: str
    at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


class Inventory:
    def __init__(self, warehouse: str):
        self.warehouse = warehouse
        self._stock: dict[str, int] = {}
        self._reserved: dict[str, int] = {}
        self._log: list[Movement] = []
        self._lock = threading.Lock()

    def register(self, sku: str) -> None:
        """Start tracking ``sku`` with nothing on hand (no-op if already known)."""
        with self._lock:
            self._stock.setdefault(sku, 0)
            self._reserved.setdefault(sku, 0)

    def on_hand(self, sku: str) -> int:
        try:
            return self._stock[sku]
        except KeyError:
            raise UnknownSku(sku) from None

    def available(self, sku: str) -> int:
        """On hand minus what open orders have reserved."""
        return self.on_hand(sku) - self._reserved.get(sku, 0)

    def add(self, sku: str, qty: int, reason: str = "receipt") -> None:
        if qty <= 0:
            raise ValueError(f"qty must be positive, got {qty}")
        with self._lock:
            if sku not in self._stock:
                raise UnknownSku(sku)
            self._stock[sku] += qty
            self._log.append(Movement(sku, qty, reason))

    def remove(self, sku: str, qty: int, reason: str = "shipment") -> None:
        """Take ``qty`` units of ``sku`` out of stock."""
        if qty <= 0:
            raise ValueError(f"qty must be positive, got {qty}")
        with self._lock:
            if sku not in self._stock:
                raise UnknownSku(sku)
            have = self._stock[sku]
            if qty > have:
                raise InsufficientStock(sku, qty, have)
            self._stock[sku] = have - qty
            self._log.append(Movement(sku, -qty, reason))

    def reserve(self, sku: str, qty: int) -> None:
        """Hold ``qty`` units for an open order."""
        with self._lock:
            free = self._stock.get(sku, 0) - self._reserved.get(sku, 0)
            if sku not in self._stock:
                raise UnknownSku(sku)
            if qty > free:
                raise InsufficientStock(sku, qty, free)
            self._reserved[sku] += qty

    def release(self, sku: str, qty: int) -> None:
        with self._lock:
            self._reserved[sku] = max(0, self._reserved.get(sku, 0) - qty)

    def history(self, sku: str | None = None) -> list[Movement]:
        return [m for m in self._log if sku is None or m.sku == sku]

    @classmethod
    def replay(cls, warehouse: str, movements: list[Movement]) -> Inventory:
        inv = cls(warehouse)
        for m in movements:
            inv.register(m.sku)
            inv._stock[m.sku] += m.delta
            inv._log.append(m)
        return inv
