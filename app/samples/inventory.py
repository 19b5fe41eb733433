"""A small inventory module: the sample file `make demo` rewrites."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    price: float
    quantity: int = 0

    def value(self) -> float:
        return self.price * self.quantity


@dataclass
class Inventory:
    items: dict[str, Item] = field(default_factory=dict)

    def add(self, item: Item) -> None:
        if item.sku in self.items:
            self.items[item.sku].quantity += item.quantity
        else:
            self.items[item.sku] = item

    def remove(self, sku: str, quantity: int) -> None:
        item = self.items[sku]
        if quantity > item.quantity:
            raise ValueError(f"only {item.quantity} of {sku} in stock")
        item.quantity -= quantity
        if item.quantity == 0:
            del self.items[sku]

    def total_value(self) -> float:
        return sum(item.value() for item in self.items.values())

    def low_stock(self, threshold: int = 5) -> list[Item]:
        return [item for item in self.items.values() if item.quantity < threshold]


def load_inventory(rows: list[dict[str, str]]) -> Inventory:
    inventory = Inventory()
    for row in rows:
        inventory.add(
            Item(
                sku=row["sku"],
                name=row["name"],
                price=float(row["price"]),
                quantity=int(row["quantity"]),
            )
        )
    return inventory


if __name__ == "__main__":
    stock = load_inventory(
        [
            {"sku": "A1", "name": "bolt", "price": "0.10", "quantity": "500"},
            {"sku": "B2", "name": "nut", "price": "0.05", "quantity": "3"},
        ]
    )
    print(f"total value: {stock.total_value():.2f}")
    print("low stock:", [item.name for item in stock.low_stock()])
