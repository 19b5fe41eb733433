"""The status bar: live decoding figures from the engine's Metrics object.

Contract: :meth:`StatusBar.show` takes a ``Metrics`` (the single source of every figure;
nothing here computes a rate of its own) plus the app state and model name, and renders
two lines: state, decode tokens/s with a ``Sparkline`` of its recent history, acceptance,
tokens per target call and k; then where drafts came from, whether speculation is on and
the run exact, and the model. It is called by a UI timer a few times a second, never from the engine thread.
Reading a Metrics that the engine is mutating can fail (a dict changing size); such a
tick is skipped.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Label, Sparkline

from ....engine.metrics import Metrics

log = logging.getLogger(__name__)

_SOURCE_NAMES = {"file": "file", "context": "ctx", "output": "out", "model": "model"}
_AUTO_WIDTH = frozenset({"st-flags", "st-model"})  # the others have fixed or 1fr widths


def format_figures(snap: dict) -> str:
    """Acceptance, tokens per target call and k from ``Metrics.snapshot()``."""
    return f"acc {snap['acceptance']:.0%} · {snap['tokens_per_call']:.2f} tok/call · k {snap['k']}"


def format_flags(speculation: bool, exact: bool, paused: bool = False) -> str:
    """Whether speculation is on (or paused by the policy) and whether the run is exact."""
    spec = "paused" if speculation and paused else ("on" if speculation else "off")
    return f"spec {spec} · exact {'yes' if exact else 'no'}"


def format_sources(snap: dict) -> str:
    """Share of drafted tokens per source, with each source's acceptance."""
    drafted: dict[str, int] = snap["drafted_by_source"]
    total = sum(drafted.values())
    if not total:
        return "drafts: none yet"
    parts = []
    for src, n in sorted(drafted.items(), key=lambda kv: -kv[1]):
        acc = snap["acceptance_by_source"].get(src, 0.0)
        parts.append(f"{_SOURCE_NAMES.get(src, src)} {n / total:.0%} (acc {acc:.0%})")
    return "drafts: " + " · ".join(parts)


class StatusBar(Widget):
    """Two lines of live figures; see the module docstring."""

    DEFAULT_CSS = """
    StatusBar { height: 2; }
    StatusBar Horizontal { height: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.history: deque[float] = deque([0.0] * 24, maxlen=24)
        self._texts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with Horizontal(id="status-top"):
            yield Label("idle", id="st-state")
            yield Label("", id="st-tps")
            yield Sparkline(list(self.history), id="st-spark")
            yield Label("", id="st-figures")
        with Horizontal(id="status-bottom"):
            yield Label("", id="st-sources")
            yield Label("", id="st-flags")
            yield Label("no model", id="st-model")

    def set_text(self, label_id: str, text: str) -> None:
        """Update a label only when its text changes; relayout only for auto-width ones."""
        if self._texts.get(label_id) != text:
            self._texts[label_id] = text
            label = self.query_one(f"#{label_id}", Label)
            label.update(text, layout=label_id in _AUTO_WIDTH)

    def sample(self, metrics: Metrics) -> None:
        """Append the current tokens/s to the sparkline history (timer tick)."""
        try:
            self.history.append(metrics.recent_tps())
        except RuntimeError:  # the engine thread mutated the deque meanwhile
            log.debug("metrics busy; skipping a sample")

    def show(
        self,
        metrics: Metrics | None,
        *,
        state: str,
        model: str,
        history: Sequence[float] | None = None,
        flags: tuple[bool, bool] = (True, False),
    ) -> None:
        """Render ``metrics``; with None (no run yet) show ``flags`` (speculation, exact)."""
        self.set_text("st-state", state)
        self.set_text("st-model", model)
        if history is not None:
            self.history = deque(history, maxlen=self.history.maxlen)
        self.query_one("#st-spark", Sparkline).data = list(self.history)
        if metrics is None:
            self.set_text("st-tps", "– tok/s")
            self.set_text("st-figures", "")
            self.set_text("st-sources", "")
            self.set_text("st-flags", format_flags(*flags))
            return
        try:
            snap = metrics.snapshot()
            tps = metrics.recent_tps() if state == "generating" else metrics.decode_tps
        except RuntimeError:
            return
        self.set_text("st-tps", f"{tps:6.1f} tok/s")
        self.set_text("st-figures", format_figures(snap))
        self.set_text("st-sources", format_sources(snap))
        flags_text = format_flags(snap["speculation"], snap["exact"], bool(snap["off_reason"]))
        self.set_text("st-flags", flags_text)
