"""Plain-text receipts for the point-of-sale printer (42 columns wide).

An item is a dict with ``name``, ``qty``, ``unit_price`` (a Decimal) and
optionally ``discount`` (a fraction such as Decimal("0.10")).
"""

from decimal import ROUND_HALF_UP, Decimal

WIDTH = 42
CENT = Decimal("0.01")
VAT_RATE = Decimal("0.20")


def money(amount):
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def line_amount(item):
    gross = item["unit_price"] * item["qty"]
    return money(gross * (1 - item.get("discount", Decimal(0))))


def pad(left, right, width=WIDTH):
    """``left`` and ``right`` on one line, with dots between them."""
    dots = width - len(left) - len(right) - 2
    if dots < 1:
        left = left[: max(0, len(left) + dots - 1)]
        dots = 1
    return f"{left} {'.' * dots} {right}"


def format_item(item):
    """The receipt lines of one item: name and amount, then the details."""
    line_total = line_amount(item)
    lines = [pad(item["name"], f"{line_total}")]
    detail = f"  {item['qty']} x {money(item['unit_price'])}"
    if item.get("discount"):
        detail += f" -{int(item['discount'] * 100)}%"
    lines.append(f"{detail}  (subtotal: {line_total})")
    return lines


def totals(items):
    """(net, vat, gross) of the whole receipt; prices include VAT."""
    gross = sum((line_amount(i) for i in items), Decimal(0))
    net = money(gross / (1 + VAT_RATE))
    return net, gross - net, gross


def render(items, shop="CORNER SHOP"):
    out = [shop.center(WIDTH), "-" * WIDTH]
    for item in items:
        out.extend(format_item(item))
    net, vat, gross = totals(items)
    out.append("-" * WIDTH)
    out.append(pad("NET", str(net)))
    out.append(pad(f"VAT {int(VAT_RATE * 100)}%", str(vat)))
    out.append(pad("TOTAL", str(gross)))
    return "\n".join(out)
