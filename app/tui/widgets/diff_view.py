"""The live diff view: the file with changed lines highlighted, rendered line by line.

Contract: :meth:`DiffView.set_rows` replaces the rows (from ``review.diff_rows``); the
view renders only the visible lines (Textual's line API), so a refresh costs the same for
a 50-line and a 5,000-line file. ``frontier`` (a row index) marks where generation is:
rows after it are dimmed, and :meth:`follow` scrolls to keep it in view. ``current``
(a hunk index) and ``decisions`` (per hunk: None, True, False) drive the review marks.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ..review import Row

_ADD = Style(color="#c8f7c5", bgcolor="#12361b")
_DEL = Style(color="#f7c5c5", bgcolor="#3d1518")
_SAME = Style(color="#c0c0c0")
_PENDING = Style(color="#6a6a6a")
_GUTTER = Style(color="#6a6a6a")
_CURRENT = Style(color="#ffd75f", bold=True)
_ACCEPTED = Style(color="#5fd75f", bold=True)
_REJECTED = Style(color="#d75f5f", bold=True)
_REJECTED_ADD = Style(color="#5f7f5f", bgcolor="#1a221b", strike=True)


def _clean(text: str) -> str:
    text = text.expandtabs(4)
    return "".join(c if c.isprintable() else "?" for c in text) if not text.isprintable() else text


class DiffView(ScrollView, can_focus=True):
    """See the module docstring."""

    DEFAULT_CSS = """
    DiffView { background: $surface; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.rows: list[Row] = []
        self.frontier: int | None = None
        self.current: int | None = None
        self.decisions: Sequence[bool | None] = ()
        self._gutter = 4
        self._cache: dict[tuple, Strip] = {}

    def set_rows(
        self,
        rows: list[Row],
        *,
        frontier: int | None = None,
        current: int | None = None,
        decisions: Sequence[bool | None] = (),
    ) -> None:
        self.rows = rows
        self.frontier = frontier
        self.current = current
        self.decisions = decisions
        numbers = [r.old_no or r.new_no or 0 for r in rows]
        self._gutter = max(3, len(str(max(numbers, default=0))))
        width = max((len(r.text) for r in rows), default=0) + self._gutter + 4
        self.virtual_size = Size(width, len(rows))
        self.refresh()

    def scroll_to_row(self, row: int, *, center: bool = True) -> None:
        height = self.scrollable_content_region.height or self.size.height
        y = row - height // 2 if center else row
        self.scroll_to(y=max(0, y), animate=False, immediate=True)

    def follow(self) -> None:
        """Keep the generation front in view."""
        if self.frontier is not None:
            self.scroll_to_row(self.frontier)

    def _mark(self, row: Row) -> tuple[str, Style]:
        if row.hunk is None:
            return " ", _GUTTER
        decision = self._decision(row)
        if row.hunk == self.current:
            return "▶", _CURRENT
        if decision is True:
            return "✓", _ACCEPTED
        if decision is False:
            return "✗", _REJECTED
        return "│", _GUTTER

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.scrollable_content_region.width or self.size.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        pending = self.frontier is not None and index > self.frontier
        decision = self._decision(row)
        total = max(width, self.virtual_size.width)
        key = (
            row,
            pending,
            decision,
            row.hunk == self.current,
            self._gutter,
            total,
            width,
            scroll_x,
        )
        strip = self._cache.get(key)
        if strip is None:
            if len(self._cache) > 4096:
                self._cache.clear()
            strip = self._render_row(row, pending, decision, total)
            strip = strip.crop(scroll_x, scroll_x + width).apply_style(self.rich_style)
            self._cache[key] = strip
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()  # cached lines carry the old theme

    def _decision(self, row: Row) -> bool | None:
        if row.hunk is None or row.hunk >= len(self.decisions):
            return None
        return self.decisions[row.hunk]

    def _render_row(self, row: Row, pending: bool, decision: bool | None, total: int) -> Strip:
        """One row at full width: gutter, review mark, sign, text (uncropped)."""
        number = row.new_no if row.kind == "+" else row.old_no
        mark, mark_style = self._mark(row)
        if pending and row.kind == " ":
            style = _PENDING
        elif row.kind == "+":
            style = _REJECTED_ADD if decision is False else _ADD
        elif row.kind == "-":
            style = _SAME if decision is False else _DEL
        else:
            style = _SAME
        gutter = f"{number or '':>{self._gutter}} "
        segments = [
            Segment(gutter, _GUTTER),
            Segment(mark, mark_style),
            Segment(row.kind + " ", style),
            Segment(_clean(row.text), style),
        ]
        return Strip(segments).extend_cell_length(total, style if row.kind != " " else Style())
