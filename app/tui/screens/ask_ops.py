"""The editor screen's question side: ask about the file and the context files, show the answer.

Contract: F6 switches the instruction line between rewriting and asking (``state.asking``; the
scope label says ``ask``). Asking, Enter sends the line to ``app.answer.answer`` in a thread
worker, as ``specedit generate --context F -p QUESTION`` does: the context is the open file
(its shown name and the editor's current text) and the F4 context files, in the ``quote``
style (its guard keeps quotes verbatim), under the app's settings. The answer streams into a
:class:`~..live.LiveRun` that the screen's timer renders in the answer view (mode
``answering``); the status bar follows its ``Metrics`` live, as for a rewrite; Esc
cancels. The finished answer (mode ``answer``) shows its quotes highlighted, each with ✓ or
✗ and the reason, and a summary line (``app.tui.answer``); Esc or any key that is no active
binding returns to the instruction line, still asking. Nothing here changes the editor's text
or the file.
"""

from __future__ import annotations

import logging
import time

from textual import events, work

from ....engine.backend import UserError
from ....engine.metrics import StopReason
from ...answer.answer import answer
from ...answer.quotes import all_found
from ...runtime.loaded_model import LoadedModel
from ..answer import answer_rows, summary
from ..live import LiveRun
from ..messages import AnswerFailed, AnswerFinished
from ..widgets.answer_view import AnswerView
from ..widgets.history_input import HistoryInput
from ..widgets.status import StatusBar
from .editor_state import EditorState, spec_app

log = logging.getLogger(__name__)


class AskOps:
    """Mixin for :class:`~.editor.EditorScreen` (uses its widgets and state)."""

    state: EditorState
    instruction: HistoryInput

    ASK_PLACEHOLDER = "Question about the file and context files; Enter asks, F6: back to rewrites"

    @property
    def answer_view(self) -> AnswerView:
        return self.query_one("#answer", AnswerView)

    def action_ask(self) -> None:
        """F6: questions instead of rewrites in the instruction line, or back."""
        self.state.asking = not self.state.asking
        self.instruction.placeholder = (
            self.ASK_PLACEHOLDER if self.state.asking else self.PLACEHOLDER
        )
        self._scope_label()
        if self.state.asking:
            self.notify(
                "Enter asks about the file and the context files (F4 adds them); "
                "the file is not changed. F6 goes back to rewrites."
            )
        self.instruction.focus()

    def context_for_answer(self) -> list[tuple[str, str]]:
        """The open file as shown (its name, the editor's text), then the F4 context files."""
        files = [(self.state.shown_path, self.editor.text)]
        return files + [f for f in self.state.context_files if f[0] != self.state.shown_path]

    def start_ask(self, question: str) -> bool:
        """Ask ``question``; False (with a message) if it cannot start."""
        if self.mode in ("generating", "answering"):
            self.notify("A run is going on; Esc cancels it.", severity="warning")
            return False
        loaded: LoadedModel | None = getattr(self.app, "loaded", None)
        if loaded is None:
            if getattr(self.app, "load", None) is not None:
                self.notify("The model is still loading; ask again when it is ready.")
            else:
                spec_app(self).no_model_help()
            return False
        opts = spec_app(self).settings.options(question)
        self.state.question = question
        self.state.answer = None
        self.state.live = LiveRun("")
        self.state.shown = None
        self.set_banner("")
        self.answer_view.show_stream(question, "")
        self.query_one(StatusBar).history.clear()
        self.state.run_started = time.monotonic()
        self.mode = "answering"
        if self.state.warm_stop is not None:
            self.state.warm_stop.set()
        self._run_answer(loaded, question, self.context_for_answer(), opts, self.state.live)
        return True

    @work(thread=True, group="answer", exit_on_error=False)
    def _run_answer(self, loaded: LoadedModel, question: str, files, opts, live: LiveRun) -> None:
        """Thread worker: run the engine; talk to the UI only through messages."""
        try:
            res = answer(
                loaded,
                question,
                files,
                opts,
                on_text=live.append,
                cancel=live.cancel,
                style="quote",
                metrics=live.metrics,
            )
        except (UserError, ValueError) as exc:
            self.post_message(AnswerFailed(str(exc)))
            return
        except Exception as exc:  # a bug must not take the user's work down with it
            log.exception("answer failed")
            self.post_message(AnswerFailed(f"internal error: {exc!r} (see the log)"))
            return
        self.post_message(AnswerFinished(question, res))

    def render_answer_stream(self) -> None:
        """Timer tick while answering: the text so far, when more arrived."""
        assert self.state.live is not None
        text = self.state.live.text()
        if text != self.state.shown:
            self.state.shown = text
            self.answer_view.show_stream(self.state.question, text)

    def on_answer_failed(self, message: AnswerFailed) -> None:
        self.mode = "edit"
        self.instruction.focus()
        self.notify(message.error, title="Answer failed", severity="error", timeout=10)

    def on_answer_finished(self, message: AnswerFinished) -> None:
        res = message.result
        self.state.answer = res
        if self.state.live is None or self.state.live.metrics is not res.metrics:
            self.state.live = LiveRun("", metrics=res.metrics)
        stop = res.metrics.stop_reason
        note = ""
        if stop == StopReason.CANCELLED:
            note = "Cancelled (Esc): the answer so far, its quotes checked as they stand."
        elif stop.at_limit:
            note = f"The answer stopped at the token limit ({res.metrics.generated_tokens})."
        rows = answer_rows(res.text, res.citations)
        self.answer_view.show_answer(
            message.question, rows, summary(res.citations), all_found(res.citations), note
        )
        self.mode = "answer"

    def on_key(self, event: events.Key) -> None:
        """In the answer, a key that is no active binding (scrolling, Esc, F1...) returns
        to the instruction line."""
        if self.mode != "answer" or event.key == "escape":
            return
        bound = self.active_bindings.get(event.key)
        if bound is not None and bound.enabled:
            return
        event.stop()
        self.leave_answer()

    def leave_answer(self) -> None:
        self.mode = "edit"
        self._scope_label()
        self.set_banner(self.conflict_note() if self.state.conflict else "")
        self.instruction.focus()
