"""The editor screen's instruction side: what the next rewrite covers and asks for.

Contract: Enter in the instruction line starts a rewrite of the editor's text
(``EditorScreen.start_rewrite``) and adds the instruction to the history (Up walks it;
``app.tui.config`` keeps it). While the model loads, Enter queues the instruction
instead; it runs when the model is ready, is dropped with a message if the load fails,
and Esc drops it. ``f`` after a result asks what was wrong with it: Enter then re-runs
the last instruction with the previous output and that note in the prompt
(``RewriteOptions.feedback``). F3 (region mode) limits rewrites to the definition at
the cursor, or the selection; with neither it says so and uses the file. F4 adds context
files, F5 toggles speculation. The first keystroke of an instruction warms the model up
on the file (``app.edit.rewrite.warm``, once per version of the text and context), so the
rewrite, which interrupts it, prefills only the rest. F6 makes Enter ask a question
instead (``AskOps``; no warm-up then).
"""

from __future__ import annotations

import logging
import threading

from textual import work
from textual.widgets import Input, Label, TextArea

from ....engine.backend import UserError
from ...code.syntax import enclosing_definition, enclosing_node_range
from ...edit.rewrite import warm
from ...runtime.loaded_model import LoadedModel
from ...store.files import SourceFile
from ..config import append_history
from ..widgets.history_input import HistoryInput
from .editor_state import EditorState, spec_app

log = logging.getLogger(__name__)


class InstructionOps:
    """Mixin for :class:`~.editor.EditorScreen` (uses its widgets and state)."""

    state: EditorState
    instruction: HistoryInput

    PLACEHOLDER = "Instruction, e.g. add type hints to parse(); Enter rewrites, Up: history"
    FEEDBACK_PLACEHOLDER = (
        "What was wrong? e.g. no, keep the old name in comments; Enter re-runs, Esc goes back"
    )

    # ------------------------------------------------------------------ submitting
    # (handlers by name: Textual's @on registers only in the class that defines it)
    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "instruction":
            return
        text = event.value.strip()
        if self.mode == "feedback":
            self.rerun_with_feedback(text)
            return
        if not text:
            what = "a question" if self.state.asking else "an instruction"
            self.notify(f"Type {what} first.", severity="warning")
            return
        self._remember(text)
        if self.state.asking:
            self.start_ask(text)
        else:
            self.start_rewrite(text)

    def _remember(self, instruction: str) -> None:
        app = spec_app(self)
        app.history = append_history(list(getattr(app, "history", [])), instruction)
        self.instruction.history = list(app.history)

    def queue(self, instruction: str) -> None:
        """Keep ``instruction`` until the model is ready (``model_ready``)."""
        replaced = self.state.queued is not None
        self.state.queued = instruction
        self.state.last_instruction = instruction
        model = spec_app(self).settings.model
        what = "Queued, replacing the earlier one" if replaced else "Queued"
        self.notify(
            f"{what}: it runs as soon as {model} is loaded (Esc drops it).",
            title="Model loading",
        )
        self.refresh_bindings()
        self.refresh_status()

    def model_ready(self) -> None:
        """The app loaded a model: run the queued instruction, if any."""
        if self.state.queued is not None and self.mode == "edit":
            instruction, self.state.queued = self.state.queued, None
            self.start_rewrite(instruction)
        else:
            self.refresh_status()

    def model_failed(self) -> None:
        """The model did not load: a queued instruction cannot run."""
        if self.state.queued is not None:
            self.state.queued = None
            self.notify("The queued instruction was not run: no model is loaded.")
        self.refresh_bindings()
        self.refresh_status()

    # ------------------------------------------------------------------ feedback
    def action_feedback(self) -> None:
        if self.state.result is not None and self.state.last_instruction:
            self.mode = "feedback"

    def rerun_with_feedback(self, note: str) -> None:
        """Re-run the last instruction with the previous output and ``note`` in the prompt."""
        res = self.state.result
        if res is None or self.state.live is None:
            return
        previous = self.state.live.body()
        region = self.state.last_region
        self.mode = "review" if self.state.review is not None else "stopped"
        self.start_rewrite(
            self.state.last_instruction, region=region, feedback=(previous, note or "try again")
        )

    # ------------------------------------------------------------------ region
    def _region(self, text: str, quiet: bool = False) -> tuple[int, int] | None:
        """The lines the next rewrite covers: None for the whole file."""
        if not self.state.region_mode:
            return None
        sel = self.editor.selection
        (r0, c0), (r1, c1) = sorted((sel.start, sel.end))
        if (r0, c0) == (r1, c1):  # a cursor: the definition around it, else the file
            return enclosing_definition(text, self.state.lang, r0, r0 + 1)
        end = r1 + 1 if (c1 > 0 or r1 == r0) else r1
        return enclosing_node_range(text, self.state.lang, r0, end)

    def _scope_label(self) -> None:
        """What the next rewrite covers: the file or a region, plus context files."""
        ctx = f" +{len(self.state.context_files)} ctx" if self.state.context_files else ""
        region = self._region(self.editor.text)
        if self.state.asking:
            scope = "ask"
        elif region is not None:
            scope = f"L{region[0] + 1}-{region[1]}"
        else:
            scope = "file (no def)" if self.state.region_mode else "file"
        self.query_one("#scope", Label).update(scope + ctx)

    def on_input_changed(self, event: Input.Changed) -> None:
        """Warm the model up on this version of the file while the instruction is typed."""
        loaded: LoadedModel | None = getattr(self.app, "loaded", None)
        if event.input.id != "instruction" or loaded is None or self.mode != "edit":
            return
        if self.state.asking:  # the warm-up reads the rewrite's prompt, not a question's
            return
        text = self.editor.text
        key = (id(loaded), self.state.shown_path, hash(text), tuple(self.state.context_files))
        if key == self.state.warm_key or not text.strip():
            return
        self.state.warm_key = key
        if self.state.warm_stop is not None:
            self.state.warm_stop.set()
        self.state.warm_stop = threading.Event()
        self._run_warm(loaded, text, tuple(self.state.context_files), self.state.warm_stop)

    @work(thread=True, group="warm", exit_on_error=False)
    def _run_warm(self, loaded: LoadedModel, text: str, context_files: tuple, stop) -> None:
        try:
            self.state.warm_result = warm(
                loaded,
                text,
                path=self.state.shown_path,
                context_files=context_files,
                interrupt=stop,
            )
        except (UserError, ValueError) as exc:  # the rewrite will say it too
            log.info("warm-up skipped: %s", exc)
        except Exception:  # a warm-up only ever saves time
            log.exception("warm-up failed")

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        # the scope label follows the cursor, parsing at most 5 times a second
        if event.text_area.id == "editor" and self.state.region_mode and self.mode == "edit":
            if self._scope_timer is not None:
                self._scope_timer.stop()
            self._scope_timer = self.set_timer(0.2, self._scope_label)

    def action_toggle_region(self) -> None:
        self.state.region_mode = not self.state.region_mode
        self._scope_label()
        if not self.state.region_mode:
            self.notify("Rewrites now cover the file.")
        elif self._region(self.editor.text) is None:
            self.notify(
                "No enclosing definition; using the file. Move into a function or class, "
                "or select lines, to rewrite only those."
            )
        else:
            self.notify("Rewrites now cover the enclosing function/class (or the selection).")

    def action_toggle_speculation(self) -> None:
        app = spec_app(self)
        app.settings = app.settings.with_(speculation=not app.settings.speculation)
        state = "on" if app.settings.speculation else "off"
        self.notify(f"Speculation {state}; ctrl+r re-runs the last instruction to compare tok/s.")
        self.refresh_status()

    def action_add_context(self) -> None:
        from .file_ops import display_path
        from .picker import FilePickerScreen

        def add(src: SourceFile | None) -> None:
            if src is not None and src.path is not None:
                self.state.context_files.append((display_path(src.path), src.text))
                self.notify(f"Added context file {display_path(src.path)} (a draft source).")
                self._scope_label()

        self.app.push_screen(FilePickerScreen("Add a context file (Esc to go back)"), add)

    def action_clear_context(self) -> None:
        self.state.context_files.clear()
        self._scope_label()
        self.notify("Context files cleared.")
