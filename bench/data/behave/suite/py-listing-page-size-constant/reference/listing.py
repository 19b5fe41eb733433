"""Paged, filtered listings for the admin pages.

The admin pages show long tables (orders, customers, audit events) one page at
a time; these helpers slice the rows, count the pages and build the little
"1 2 3 ... 9" navigation.
"""

import math
from urllib.parse import urlencode

MAX_PAGE = 10_000
PAGE_SIZE = 25
NAV_WINDOW = 2


class Page:
    """One page of rows, with what the template needs to draw the navigation."""

    def __init__(self, rows, number, count, total):
        self.rows = rows
        self.number = number
        self.count = count
        self.total = total

    @property
    def has_previous(self):
        return self.number > 1

    @property
    def has_next(self):
        return self.number < self.count


def clamp_page(number, count):
    """A valid page number: ``number`` forced between 1 and ``count``."""
    try:
        number = int(number)
    except (TypeError, ValueError):
        number = 1
    return max(1, min(number, count, MAX_PAGE))


def page_count(total, per_page=PAGE_SIZE):
    """How many pages ``total`` rows take (at least 1, for the empty table)."""
    return max(1, math.ceil(total / per_page))


def paginate(rows, number=1, per_page=PAGE_SIZE):
    """The ``Page`` number ``number`` of ``rows``."""
    count = page_count(len(rows), per_page)
    number = clamp_page(number, count)
    start = (number - 1) * per_page
    return Page(rows[start : start + per_page], number, count, len(rows))


def nav_numbers(page):
    """Page numbers to show around the current one; None marks a gap ('...')."""
    shown = {1, page.count}
    shown.update(range(page.number - NAV_WINDOW, page.number + NAV_WINDOW + 1))
    out, last = [], 0
    for n in sorted(x for x in shown if 1 <= x <= page.count):
        if n > last + 1:
            out.append(None)
        out.append(n)
        last = n
    return out


def page_url(base, number, **filters):
    params = {k: v for k, v in sorted(filters.items()) if v not in (None, "")}
    if number != 1:
        params["page"] = number
    return f"{base}?{urlencode(params)}" if params else base


def short_title(title):
    """The title cut to 25 characters for the narrow column."""
    return title if len(title) <= 25 else title[:24] + "…"
