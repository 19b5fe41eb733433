"""The editor screen's review side: show a finished rewrite, walk and decide its hunks.

Contract: :meth:`ReviewOps.show_result` takes a ``RewriteResult`` and opens hunk-by-hunk review (a
:class:`~..review.Review`) in the diff view:
  * ``ok`` with changes: every hunk; a *suspect* result says so in a red banner, and accept-all
    and the write ask first.
  * ``truncated`` or ``cancelled``: only the hunks completed before the cut, in a *partial* review
    (kept one by one, no accept-all; nothing of the cut output beyond them is written).
  * anything else: the output stays visible in a stopped preview with its message.
The tree-sitter validation (``app.code.syntax.syntax_warning``) and any conflict join the banner. The
review actions (next, previous, accept, reject, undo a decision, accept all, reject all) only
change the ``Review`` and re-render; writing is :class:`~.file_ops.FileOps`' job. In review,
letters are commands: the first that is not one shows a hint that Esc returns to the instruction
line.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Label

from ...code.syntax import syntax_warning
from ...edit.result import Status
from ...edit.rewrite import RewriteResult
from ..live import LiveRun
from ..review import Review, diff_rows, first_row_of
from .editor_state import EditorState


class ReviewOps:
    """Mixin for :class:`~.editor.EditorScreen` (uses its widgets and state)."""

    state: EditorState

    def show_result(self, res: RewriteResult) -> None:
        """Show a finished rewrite (see the module docstring)."""
        self.state.result = res
        if self.state.live is None or self.state.live.metrics is not res.metrics:
            self.state.live = LiveRun(res.original, self.state.last_region, metrics=res.metrics)
            self.state.live.append(res.raw)
        self.state.shown = None
        notes: list[str] = []
        if self.state.conflict is not None or self.state.conflict_gone:
            notes.append(self.conflict_note())
        error = bool(notes)
        hunks = res.hunks
        if res.status == Status.CANCELLED:
            hunks = self.state.live.preview().hunks
        if not hunks or res.status not in (Status.OK, Status.TRUNCATED, Status.CANCELLED):
            self._render_live()
            self.state.review = None
            self.mode = "stopped"
            notes.append(f"{res.message or 'no changes'}. Esc returns to the instruction line")
            self.set_banner(" · ".join(notes), "error" if error else "warning")
            return
        partial = res.status != Status.OK
        self.state.review = Review(res.original, hunks, partial=partial)
        n = f"{len(hunks)} hunk{'s' if len(hunks) != 1 else ''}"
        if res.status == Status.TRUNCATED:
            error = True
            notes.append(
                f"TRUNCATED: {res.message}. The {n} completed before the cut can be kept "
                "one by one (a); there is no accept-all"
            )
        elif res.status == Status.CANCELLED:
            notes.append(
                f"Cancelled: the {n} completed before Esc can be kept one by one (a); "
                "Esc again discards them"
            )
        elif res.suspect is not None:
            error = True
            notes.append(f"SUSPECT: {res.suspect.message}. Accept-all and the write ask first")
        elif res.message:
            notes.append(res.message)
        if res.new_text is not None:
            warning = syntax_warning(res.original, res.new_text, self.state.lang)
            if warning:
                notes.append(warning)
        self.mode = "review"
        self.render_review(scroll=True)
        self.set_banner(" · ".join(notes), "error" if error else "warning")

    def show_review_keys(self) -> None:
        """What keys do here, in the instruction line's place."""
        if self.mode == "stopped":
            keys = "f: say what is wrong and re-run · Esc: back to the instruction line"
        elif self.mode == "answer":
            keys = "Esc or any other key: back to the question line · ↑ ↓ PgUp PgDn: scroll"
        else:
            keys = "[b]letters are commands[/] · ctrl+s writes · Esc: back"
        self.query_one("#review-keys", Label).update(keys)

    def render_review(self, scroll: bool = False) -> None:
        review = self.state.review
        if review is None:
            return
        rows = diff_rows(review.original, review.hunks)
        self.diff.set_rows(rows, current=review.current, decisions=list(review.decisions))
        if scroll:
            self.diff.scroll_to_row(first_row_of(rows, review.current))
        partial = " (partial)" if review.partial else ""
        self.query_one("#scope", Label).update(review.summary() + partial)

    def on_key(self, event: events.Key) -> None:
        """In review, the first letter that is no command says how to get back to typing."""
        if self.mode not in ("review", "stopped") or self.state.hinted:
            return
        if event.is_printable and event.key not in self._bindings.key_to_bindings:
            self.state.hinted = True
            self.notify(
                "You are reviewing: letters here are commands, not text, and none of them "
                "writes. Esc returns to the instruction line.",
                title="Review",
                severity="warning",
            )

    def action_next_hunk(self) -> None:
        if self.state.review is not None:
            self.state.review.next()
            self.render_review(scroll=True)

    def action_prev_hunk(self) -> None:
        if self.state.review is not None:
            self.state.review.prev()
            self.render_review(scroll=True)

    def action_accept(self) -> None:
        if self.state.review is not None:
            self.state.review.accept()
            self.render_review(scroll=True)

    def action_reject(self) -> None:
        if self.state.review is not None:
            self.state.review.reject()
            self.render_review(scroll=True)

    def action_undo_decision(self) -> None:
        if self.state.review is not None:
            if not self.state.review.undo():
                self.notify("Nothing to undo in this review.")
            self.render_review(scroll=True)

    def action_reject_all(self) -> None:
        if self.state.review is not None:
            self.state.review.reject_all()
            self.render_review()

    def action_accept_all(self) -> None:
        review = self.state.review
        if review is None:
            return
        if review.partial:
            self.notify("A cut output has no accept-all: keep its hunks one by one (a).")
            return
        suspect = self.state.result.suspect if self.state.result is not None else None
        if suspect is None:
            review.accept_all()
            self.render_review()
            return
        from .confirm import ConfirmScreen

        def answer(yes: bool | None) -> None:
            if yes and self.state.review is review:
                review.accept_all()
                self.render_review()

        self.app.push_screen(
            ConfirmScreen(f"Warning: {suspect.message}.\n\nAccept all {len(review)} hunks?"),
            answer,
        )
