"""A yes/no question in a modal: dismisses with True (the yes key, or the Yes button) or
False (n, Esc, or Enter, which starts on No).

Contract: ``yes_key`` is ``y`` by default; a question whose yes writes a file takes a
modifier (``ctrl+s``), so letters typed by someone who believes they are in a text field
can never answer it.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """See the module docstring."""

    BINDINGS = [Binding("n,escape", "answer(False)", "No")]

    def __init__(
        self, question: str, yes: str = "Yes", no: str = "No", *, yes_key: str = "y"
    ) -> None:
        super().__init__()
        self.question = question
        self.labels = (yes, no)
        self.yes_key = yes_key
        self._bindings.bind(yes_key, "answer(True)", yes)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.question, id="question")
            with Horizontal(id="buttons"):
                yield Button(f"{self.labels[0]} ({self.yes_key})", variant="warning", id="yes")
                yield Button(f"{self.labels[1]} (Esc)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
