"""The editor screen's review side: show a finished rewrite, walk and decide its hunks.

Contract: :meth:`ReviewOps.show_result` takes a ``RewriteResult``: with changes it opens
hunk-by-hunk review (a :class:`~..review.Review`) in the diff view and reports the
tree-sitter validation (``app.syntax.syntax_warning``) and any conflict in the banner;
cancelled or empty results keep the partial output visible in a stopped preview. The
review actions (next, previous, accept, reject, accept all) only change the ``Review`` and
re-render; writing is :class:`~.file_ops.FileOps`' job.
"""

from __future__ import annotations

from textual.widgets import Label

from ...rewrite import RewriteResult
from ...syntax import syntax_warning
from ..live import LiveRun
from ..review import Review, diff_rows, first_row_of


class ReviewOps:
    """Mixin for :class:`~.editor.EditorScreen` (uses its widgets and state)."""

    def show_result(self, res: RewriteResult) -> None:
        """Show a finished rewrite: review for changes, the partial output otherwise."""
        if self.live is None or self.live.metrics is not res.metrics:
            self.live = LiveRun(res.original, self.last_region, metrics=res.metrics)
            self.live.append(res.raw)
        if res.status != "ok" or not res.hunks:
            self._render_live()
            self.mode = "stopped"
            text = f"{res.message or 'no changes'}. Esc returns to the editor."
            if self.conflict is not None or self.conflict_gone:
                text = f"{self.conflict_note()} · {text}"
            self.set_banner(text)
            self.notify(text, severity="warning")
            return
        self.review = Review(res.original, res.hunks)
        self.mode = "review"
        self.render_review(scroll=True)
        notes = [
            n for n in (res.message, syntax_warning(res.original, res.new_text, self.lang)) if n
        ]
        if self.conflict is not None or self.conflict_gone:
            notes.insert(0, self.conflict_note())
        self.set_banner(" · ".join(notes))

    def render_review(self, scroll: bool = False) -> None:
        review = self.review
        if review is None:
            return
        rows = diff_rows(review.original, review.hunks)
        self.diff.set_rows(rows, current=review.current, decisions=list(review.decisions))
        if scroll:
            self.diff.scroll_to_row(first_row_of(rows, review.current))
        self.query_one("#scope", Label).update(review.summary())

    def action_next_hunk(self) -> None:
        if self.review is not None:
            self.review.next()
            self.render_review(scroll=True)

    def action_prev_hunk(self) -> None:
        if self.review is not None:
            self.review.prev()
            self.render_review(scroll=True)

    def action_accept(self) -> None:
        if self.review is not None:
            self.review.accept()
            self.render_review(scroll=True)

    def action_reject(self) -> None:
        if self.review is not None:
            self.review.reject()
            self.render_review(scroll=True)

    def action_accept_all(self) -> None:
        if self.review is not None:
            self.review.accept_all()
            self.render_review()
