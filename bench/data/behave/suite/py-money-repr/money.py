"""Amounts of money for the invoicing code.

``Money`` holds a ``Decimal`` amount rounded to the currency's minor unit and
an ISO 4217 currency code.  Arithmetic between different currencies is an
error; conversion goes through ``convert`` with an explicit rate.
"""

from decimal import ROUND_HALF_EVEN, Decimal

MINOR_UNITS = {"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "JPY": 0, "KWD": 3}


class CurrencyMismatch(ValueError):
    """An operation mixed two currencies."""


def quantum(currency):
    digits = MINOR_UNITS.get(currency, 2)
    return Decimal(1).scaleb(-digits)


class Money:
    __slots__ = ("amount", "currency")

    def __init__(self, amount, currency):
        currency = currency.upper()
        if len(currency) != 3 or not currency.isalpha():
            raise ValueError(f"not a currency code: {currency!r}")
        self.currency = currency
        self.amount = Decimal(str(amount)).quantize(quantum(currency), rounding=ROUND_HALF_EVEN)

    def _same(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        if other.currency != self.currency:
            raise CurrencyMismatch(f"{self.currency} and {other.currency}")
        return other

    def __str__(self):
        return f"{self.amount} {self.currency}"

    def __eq__(self, other):
        if not isinstance(other, Money):
            return NotImplemented
        return self.currency == other.currency and self.amount == other.amount

    def __hash__(self):
        return hash((self.amount, self.currency))

    def __add__(self, other):
        other = self._same(other)
        if other is NotImplemented:
            return other
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other):
        other = self._same(other)
        if other is NotImplemented:
            return other
        return Money(self.amount - other.amount, self.currency)

    def __mul__(self, factor):
        if isinstance(factor, Money):
            return NotImplemented
        return Money(self.amount * Decimal(str(factor)), self.currency)

    __rmul__ = __mul__

    def __neg__(self):
        return Money(-self.amount, self.currency)

    def is_zero(self):
        return self.amount == 0


def total(amounts, currency):
    """The sum of ``amounts`` (all in ``currency``); zero for no amounts."""
    result = Money(0, currency)
    for m in amounts:
        result = result + m
    return result


def allocate(money, ratios):
    """Split ``money`` by ``ratios`` without losing a cent: the remainder goes to
    the first shares, one minor unit each."""
    unit = quantum(money.currency)
    whole = sum(ratios)
    shares = [Money((money.amount * r / whole).quantize(unit, rounding="ROUND_DOWN"), money.currency) for r in ratios]
    left = money - total(shares, money.currency)
    i = 0
    while left.amount > 0:
        shares[i] = shares[i] + Money(unit, money.currency)
        left = left - Money(unit, money.currency)
        i += 1
    return shares


def convert(money, currency, rate):
    return Money(money.amount * Decimal(str(rate)), currency)
