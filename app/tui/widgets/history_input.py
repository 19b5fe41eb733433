"""The instruction line: an ``Input`` whose Up and Down walk through earlier instructions.

Contract: :attr:`HistoryInput.history` is the list of earlier instructions, oldest first
(the screen sets it). Up shows the previous one, Down the next; going down past the
newest brings back what was being typed before Up was first pressed. Typing, or
setting the value, starts the walk afresh from the newest entry.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input


class HistoryInput(Input):
    """See the module docstring."""

    BINDINGS = [
        Binding("up", "history(-1)", "Earlier instruction", show=False),
        Binding("down", "history(1)", "Later instruction", show=False),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.history: list[str] = []
        self._at: int | None = None  # index into history while walking it
        self._draft = ""
        self._walking = False

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._at is None:
            if step > 0:
                return
            self._draft = self.value
            at = len(self.history) - 1
        else:
            at = self._at + step
        if at < 0:
            return
        self._walking = True
        if at >= len(self.history):
            self._at = None
            self.value = self._draft
        else:
            self._at = at
            self.value = self.history[at]
        self._walking = False
        self.cursor_position = len(self.value)

    def _watch_value(self, value: str) -> None:
        super()._watch_value(value)
        if not self._walking:
            self._at = None
