"""The status bar: the model load, then live decoding figures from the engine's Metrics.

Contract: the bar is two lines. :meth:`StatusBar.show_loading` shows a model load (model, backend
and device once known, the stage, seconds so far). :meth:`StatusBar.show` takes a ``Metrics`` (the
single source of every figure; nothing here computes a rate of its own) plus the app state: while
the prompt is read (``phase == "reading"``) a progress bar, tokens read and their rate; while
generating, the decode tokens/s (``recent_tps``, else the run's ``decode_tps`` while no call has
ended in its window) with a ``Sparkline`` of its history (hidden until there is a rate),
acceptance, tokens per target call and k (inserted tokens beside the rate, never in it); then
where drafts came from, whether speculation is on and the run exact, and the model, backend,
device and verifier. It is called by a UI timer a few times a second, never from the engine
thread; a tick that reads a ``Metrics`` while the engine mutates it is skipped.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Label, ProgressBar, Sparkline

from ....engine.metrics import Metrics

log = logging.getLogger(__name__)

_SOURCE_NAMES = {
    "file": "file",
    "context": "ctx",
    "output": "out",
    "model": "model",
    "previous": "prev",
}
_AUTO_WIDTH = frozenset({"st-flags", "st-model"})  # the others have fixed or 1fr widths
LOAD_STAGES = {
    "start": "starting",
    "weights": "reading the weights",
    "draft": "loading the draft model",
    "exactness": "checking batched logits (first load of this model)",
    "calibration": "measuring call costs",
}


def format_figures(snap: dict) -> str:
    """Acceptance, tokens per target call and k from ``Metrics.snapshot()``; then the
    tokens the program copied in, when it did (in no tok/s: ``engine.metrics``)."""
    text = f"acc {snap['acceptance']:.0%} · {snap['tokens_per_call']:.2f} tok/call · k {snap['k']}"
    copied = snap.get("inserted_tokens", 0)
    return f"{text} · {copied:,} tok copied in" if copied else text


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


def format_reading(m: Metrics, seconds: float | None = None) -> str:
    """The reading phase: prompt tokens evaluated of those to evaluate, the rate, and the
    seconds so far (the prefill may report its progress only when it ends)."""
    if m.read_total <= 0:
        text = "preparing the prompt"
    else:
        text = f"file {m.read_tokens:,}/{m.read_total:,} tokens"
        if m.read_tps > 0:
            text += f", {m.read_tps:,.0f} tok/s"
        if m.cached_tokens:
            text += f" ({m.cached_tokens:,} cached)"
    return text if seconds is None else f"{text} · {seconds:.0f} s"


def live_rate(m: Metrics) -> float:
    """The decode rate to show now: the recent one, or the run's while no call has ended
    in the recent window (both are ``Metrics``' own figures)."""
    return m.recent_tps() or m.decode_tps


def format_where(backend: str, device: str, verifier: str = "") -> str:
    """Which backend and device ran the target, and which verifier judged the drafts."""
    where = f"{backend} on {device}" if backend and device else backend or device
    return f"{where} · verifier {verifier}" if verifier else where


def format_loading(stage: str, seconds: float) -> str:
    """A model load: the stage and the seconds so far (the model is on the line below)."""
    return f"{LOAD_STAGES.get(stage, stage)} · {seconds:.0f} s"


class StatusBar(Widget):
    """Two lines of live figures; see the module docstring."""

    DEFAULT_CSS = """
    StatusBar { height: 2; }
    StatusBar Horizontal { height: 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002
        super().__init__(id=id)
        self.history: deque[float] = deque(maxlen=24)
        self._texts: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with Horizontal(id="status-top"):
            yield Label("idle", id="st-state")
            yield Label("", id="st-tps")
            yield Sparkline([], id="st-spark")
            yield ProgressBar(total=1, show_eta=False, show_percentage=False, id="st-read")
            yield Label("", id="st-figures")
        with Horizontal(id="status-bottom"):
            yield Label("", id="st-sources")
            yield Label("", id="st-flags")
            yield Label("no model", id="st-model")

    def set_text(self, label_id: str, text: str) -> None:
        """Update a label only when its text changes; relayout only for auto-width ones.
        The rate's label is hidden while it has nothing to say."""
        if self._texts.get(label_id) != text:
            self._texts[label_id] = text
            label = self.query_one(f"#{label_id}", Label)
            label.update(text, layout=label_id in _AUTO_WIDTH)
            if label_id == "st-tps":
                label.display = bool(text)

    def text(self, label_id: str) -> str:
        """What a label shows now (for tests and the help)."""
        return self._texts.get(label_id, "")

    def _graph(self, kind: str) -> None:
        """Show the sparkline, the reading bar, or neither."""
        spark = self.query_one("#st-spark", Sparkline)
        spark.display = kind == "spark" and any(self.history)
        if spark.display:
            spark.data = list(self.history)
        self.query_one("#st-read", ProgressBar).display = kind == "read"

    def sample(self, metrics: Metrics) -> None:
        """Append the current decode tokens/s to the sparkline history (timer tick)."""
        if metrics.phase != "generating":
            return  # nothing decoded yet: no rate to draw
        try:
            self.history.append(live_rate(metrics))
        except RuntimeError:  # the engine thread mutated the deque meanwhile
            log.debug("metrics busy; skipping a sample")

    def show_model(self, text: str) -> None:
        self.set_text("st-model", text)

    def show_loading(self, stage: str, seconds: float, note: str = "") -> None:
        """A model load in progress (see the module docstring); ``note``: e.g. a queue.
        The model and where it loads are the model label's (``show_model``)."""
        text = format_loading(stage, seconds)
        self.set_text("st-state", "loading")
        self.set_text("st-tps", "")
        self.set_text("st-figures", f"{text} · {note}" if note else text)
        self.set_text("st-sources", "")
        self._graph("none")

    def show(
        self,
        metrics: Metrics | None,
        *,
        state: str,
        history: Sequence[float] | None = None,
        flags: tuple[bool, bool] = (True, False),
        note: str = "",
        seconds: float | None = None,
    ) -> None:
        """Render ``metrics``; with None (no run yet) show ``flags`` (speculation, exact).
        ``note`` (a queued instruction, blocks given up) follows the figures, or stands in
        their place. ``seconds``: since the run started."""
        if history is not None:
            self.history = deque(history, maxlen=self.history.maxlen)
        if metrics is None:
            self.set_text("st-state", state)
            self.set_text("st-tps", "")
            self.set_text("st-figures", note)
            self.set_text("st-sources", "")
            self.set_text("st-flags", format_flags(*flags))
            self._graph("none")
            return
        try:
            snap = metrics.snapshot()
            reading = state == "generating" and metrics.phase == "reading"
            tps = live_rate(metrics) if state == "generating" else metrics.decode_tps
        except RuntimeError:
            return
        if reading:
            self.set_text("st-state", "reading")
            self.set_text("st-tps", "")
            self.set_text("st-figures", format_reading(metrics, seconds))
            bar = self.query_one("#st-read", ProgressBar)
            bar.update(total=max(metrics.read_total, 1), progress=metrics.read_tokens)
            self._graph("read")
            self.set_text("st-sources", "")
        else:
            self.set_text("st-state", state)
            self.set_text("st-tps", f"{tps:6.1f} tok/s")
            figures = format_figures(snap)
            self.set_text("st-figures", f"{figures} · {note}" if note else figures)
            self._graph("spark")
            self.set_text("st-sources", format_sources(snap))
        flags_text = format_flags(snap["speculation"], snap["exact"], bool(snap["off_reason"]))
        self.set_text("st-flags", flags_text)
