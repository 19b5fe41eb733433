"""The help screen: every key of the app, grouped by what the user is doing."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Editing and rewriting",
        (
            ("Enter", "rewrite the file (or region); while the model loads, queue it"),
            ("Up / Down", "earlier / later instructions (kept between sessions)"),
            ("Esc", "cancel the running rewrite (its finished hunks can still be kept)"),
            ("ctrl+r", "re-run the last instruction (on the new text after a conflict)"),
            ("F3", "region mode: the function/class at the cursor, or the selection"),
            ("F4 / ctrl+l", "add a context file (a draft source) / clear them"),
            ("F5", "speculation on/off (re-run to compare tokens/s)"),
            ("ctrl+s", "save your own edits in the editor"),
            ("ctrl+b", "undo the last write (restores the backup)"),
            ("ctrl+o", "open another file"),
            ("Tab", "move between the editor and the instruction line"),
        ),
    ),
    (
        "Asking about the file",
        (
            ("F6", "questions instead of instructions in the line (F6 again: back)"),
            ("Enter", "ask about the file and the context files (F4); the file is not changed"),
            ("Esc", "cancel the answer; in the answer, Esc or any other key goes back"),
            ("↑ ↓ PgUp/Dn", "scroll the answer: ✓ a quote is in the file at the lines shown"),
        ),
    ),
    (
        "Reviewing a result",
        (
            ("n / p", "next / previous hunk"),
            ("a / x", "accept / reject the current hunk"),
            ("u", "undo the last decision (a, x, A or X)"),
            ("A / X", "accept all (not for a cut output) / reject all"),
            ("ctrl+s", "write the accepted hunks (atomic, backed up, conflict-checked)"),
            ("f", "feedback: say what is wrong, Enter re-runs with it"),
            ("Esc", "leave the review; the file is untouched"),
        ),
    ),
    (
        "Anywhere",
        (
            ("F1", "this help"),
            ("F2", "settings: model, backend, GPU layers, k, theme… (saved to config.toml)"),
            ("ctrl+q", "quit"),
        ),
    ),
)

STATUS = (
    "In review, letters are commands, never text, and none writes: ctrl+s does. The "
    "status bar shows the model load (stage, seconds), then the reading of the prompt "
    "(tokens read of all, tok/s), then the decode tokens/s (decode time only) and its "
    "recent history, acceptance (draft tokens kept / sent), tokens per target call, k, "
    "where drafts came from (the file, context files, the previous output, the output so "
    "far), whether speculation is on, whether the run is exact, and the model with the "
    "backend and device that ran it."
)


def help_table() -> Group:
    parts: list[Text | Table] = []
    for group, keys in KEYS:
        table = Table.grid(padding=(0, 2), expand=True)
        table.add_column(no_wrap=True, width=12)
        table.add_column(ratio=1)
        for key, what in keys:
            table.add_row(Text(key, style="bold yellow"), what)
        parts += [Text(group, style="bold underline"), table, Text("")]
    return Group(*parts)


class HelpScreen(ModalScreen[None]):
    """See the module docstring."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static("[b]specedit keys[/b]\n", id="help-title")
            yield Static(help_table())
            yield Static(STATUS, id="help-status")
