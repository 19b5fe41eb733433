"""Import newsletter contacts from a CSV export.

The first row of the file names the columns; they may come in any order and in
any letter case.  Each following row becomes a :class:`Contact`, and rows that
fail validation are collected as :class:`RowError` rather than stopping the run.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Dict, Iterable, List, Optional, TextIO

REQUIRED = ("email", "name")
OPTIONAL = ("company", "subscribed", "joined")

_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_TRUE = {"yes", "y", "true", "1"}
_FALSE = {"no", "n", "false", "0"}


@dataclass
class Contact:
    email: str
    name: str
    company: Optional[str] = None
    subscribed: bool = True
    joined: Optional[date] = None


@dataclass
class RowError(Exception):
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class ImportResult:
    contacts: List[Contact] = field(default_factory=list)
    errors: List[RowError] = field(default_factory=list)

    def summary(self) -> str:
        return f"{len(self.contacts)} imported, {len(self.errors)} rejected"


def _parse_bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected yes or no, got {text!r}")


class ContactImporter:
    """Turns CSV rows into contacts, remembering where each column is."""

    def __init__(self, default_subscribed: bool = True) -> None:
        self.default_subscribed = default_subscribed
        self.columns: Dict[str, int] = {}

    def header_map(self, header: List[str]) -> Dict[str, int]:
        """Map each known column name (lower case) to its index in ``header``."""
        columns: Dict[str, int] = {}
        for index, title in enumerate(header):
            key = title.strip().lower()
            if key in REQUIRED or key in OPTIONAL:
                columns.setdefault(key, index)
        missing = [name for name in REQUIRED if name not in columns]
        if missing:
            raise ValueError(f"missing column: {', '.join(missing)}")
        self.columns = columns
        return columns

    def parse_row(self, row: List[str], line: int) -> Contact:
        """Build a :class:`Contact` from one data row, or raise :class:`RowError`."""
        values: Dict[str, str] = {}
        for key, index in self.columns.items():
            values[key] = row[index].strip() if index < len(row) else ""
        email = values["email"].lower()
        if not _EMAIL_RE.match(email):
            raise RowError(line, f"invalid email {values['email']!r}")
        if not values["name"]:
            raise RowError(line, "name is empty")
        contact = Contact(email=email, name=values["name"], subscribed=self.default_subscribed)
        contact.company = values.get("company") or None
        try:
            if values.get("subscribed"):
                contact.subscribed = _parse_bool(values["subscribed"])
            if values.get("joined"):
                contact.joined = date.fromisoformat(values["joined"])
        except ValueError as exc:
            raise RowError(line, str(exc)) from None
        return contact

    def import_rows(self, rows: Iterable[List[str]]) -> ImportResult:
        """Import already-split rows; the first one is the header."""
        result = ImportResult()
        iterator = iter(rows)
        header = next(iterator, None)
        if header is None:
            raise ValueError("the file is empty")
        self.header_map(header)
        for line, row in enumerate(iterator, start=2):
            if not any(cell.strip() for cell in row):
                continue
            try:
                result.contacts.append(self.parse_row(row, line))
            except RowError as err:
                result.errors.append(err)
        return result

    def import_file(self, stream: TextIO, delimiter: str = ",") -> ImportResult:
        return self.import_rows(csv.reader(stream, delimiter=delimiter))
