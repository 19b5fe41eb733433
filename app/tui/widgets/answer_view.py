"""The answer view: a read-only panel with the question and its answer, streamed then checked.

Contract: :meth:`AnswerView.show_stream` shows the question and the answer so far as plain
text, following its end (the editor screen's timer calls it a few times a second while the
answer streams). :meth:`AnswerView.show_answer` shows the finished answer laid out by
``app.tui.answer.answer_rows``: each quoted passage highlighted with a bar in the colour of
its verdict, and under it ``✓ file:L12-L14`` or ``✗ label: problem``; a quoted string in the
prose is highlighted too, its verdict under its line. The summary line (``3 quotes, all
found``) stands under the question; ``note`` (cancelled, cut at the token limit) under it.
The text is never parsed as markup. :attr:`AnswerView.plain` is what it shows, as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..answer import Row

_QUESTION = Style(bold=True)
_CITE = Style(color="#5fafff", bold=True)
_QUOTE = Style(color="#e4e4e4", bgcolor="#1c2b3a")
_MARK = Style(color="#e4e4e4", bgcolor="#1c2b3a", underline=True)
_FOUND = Style(color="#5fd75f", bold=True)
_MISSING = Style(color="#ff5f5f", bold=True)
_PENDING = Style(color="#8a8a8a")
_NOTE = Style(color="#ffd75f")


def _ok_style(ok: bool | None) -> Style:
    return _PENDING if ok is None else (_FOUND if ok else _MISSING)


def render_rows(rows: Sequence[Row]) -> Text:
    """The answer's rows as one styled text (see the module docstring)."""
    out = Text()
    for row in rows:
        if row.kind == "quote":
            out.append("▌ ", _ok_style(row.ok))
            out.append(row.text, _QUOTE)
        elif row.kind == "verdict":
            out.append("  " + row.text, _ok_style(row.ok))
        elif row.kind == "cite":
            out.append(row.text, _CITE)
        elif row.mark is not None:
            a, b = row.mark
            out.append(row.text[:a])
            out.append(row.text[a:b], _MARK)
            out.append(row.text[b:])
        else:
            out.append(row.text)
        out.append("\n")
    return out


class AnswerView(VerticalScroll, can_focus=True):
    """See the module docstring."""

    DEFAULT_CSS = """
    AnswerView { background: $surface; padding: 0 1; }
    AnswerView > Static { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.plain = ""

    def compose(self) -> ComposeResult:
        yield Static("", id="answer-body")

    def _show(self, text: Text) -> None:
        self.plain = text.plain
        self.query_one("#answer-body", Static).update(text)

    def _head(self, question: str, line: str = "", ok: bool | None = None) -> Text:
        head = Text("Q: ", _QUESTION)
        head.append(question, _QUESTION)
        head.append("\n")
        if line:
            head.append(line + "\n", _ok_style(ok))
        head.append("\n")
        return head

    def show_stream(self, question: str, text: str) -> None:
        """The answer so far, unchecked."""
        body = self._head(question, "answering…")
        body.append(text)
        self._show(body)
        self.scroll_end(animate=False, immediate=True)

    def show_answer(
        self, question: str, rows: Sequence[Row], summary: str, ok: bool, note: str = ""
    ) -> None:
        """The finished answer: its quotes highlighted with their verdicts."""
        body = self._head(question, summary, ok)
        if note:
            body.append(note + "\n\n", _NOTE)
        body.append_text(render_rows(rows))
        self._show(body)
        self.scroll_home(animate=False, immediate=True)
