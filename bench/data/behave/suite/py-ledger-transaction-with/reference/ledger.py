"""A double-entry ledger kept in memory, for the billing simulator.

Every change goes through a ``Transaction``: postings are staged, and only
``commit`` applies them, after checking that they balance.
"""

from collections import defaultdict
from decimal import Decimal


class UnbalancedError(ValueError):
    """The postings of a transaction do not sum to zero."""


class TransactionClosed(RuntimeError):
    """The transaction was already committed or rolled back."""


class Ledger:
    def __init__(self):
        self.balances = defaultdict(Decimal)
        self.journal = []

    def balance(self, account):
        return self.balances[account]

    def transaction(self, memo=""):
        return Transaction(self, memo)

    def _apply(self, memo, postings):
        for account, amount in postings:
            self.balances[account] += amount
        self.journal.append((memo, tuple(postings)))


class Transaction:
    """Staged postings; ``commit`` applies them all or none."""

    def __init__(self, ledger, memo=""):
        self.ledger = ledger
        self.memo = memo
        self.postings = []
        self.closed = False

    def _check_open(self):
        if self.closed:
            raise TransactionClosed(self.memo or "transaction")

    def post(self, account, amount):
        self._check_open()
        self.postings.append((account, Decimal(str(amount))))
        return self

    def transfer(self, source, target, amount):
        """Move ``amount`` from ``source`` to ``target``."""
        return self.post(source, -Decimal(str(amount))).post(target, amount)

    def total(self):
        return sum((amount for _a, amount in self.postings), Decimal(0))

    def commit(self):
        self._check_open()
        if self.total() != 0:
            raise UnbalancedError(f"{self.memo or 'transaction'} is off by {self.total()}")
        self.ledger._apply(self.memo, self.postings)
        self.closed = True

    def rollback(self):
        self._check_open()
        self.postings.clear()
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        elif not self.closed:
            self.rollback()
        return False


def trial_balance(ledger):
    """Accounts with a non-zero balance, sorted, and whether they sum to zero."""
    rows = sorted((a, b) for a, b in ledger.balances.items() if b)
    return rows, sum((b for _a, b in rows), Decimal(0)) == 0
