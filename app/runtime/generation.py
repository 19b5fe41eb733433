"""Run one prompt on a loaded model: the proposers, the stop, the caches. The one door.

Contract: ``run_prompt(loaded, prompt, opts, max_tokens, ...)`` generates from a ``Prompt``
(``app.runtime.prompt``) on ``loaded`` (``app.runtime.loaded_model.LoadedModel``) with the proposers ``opts.draft``
names (prompt lookup over the prompt's spans and the output, a draft model, both, or none) and
the sampling and exactness of ``opts``, and returns a ``RunResult`` (text, tokens, ``Metrics``,
whether the block closed). It stops at the prompt's closing fence (``app.runtime.stream.FencedText``),
when ``stop_when(text so far)`` says so (checked as each line ends) or ``stop_now(text so far)``
does (after every piece), and honours ``cancel`` between target calls; ``on_text`` gets the
decoded text as it streams. The loaded model's lock serialises runs. The KV cache's shared prefix
is reused only where it was evaluated in a cold run's batches (``engine.prefill``; ``cold=True``
starts empty); with ``opts.prompt_cache`` the prompt's ``prefix_end`` is restored from and saved
to disk (``app.runtime.prompt_cache``). ``rewrite``, ``answer`` and every benchmark run through here.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...engine import prefill
from ...engine.backend import ModelError, TargetModel
from ...engine.combined import CombinedDrafter
from ...engine.constraint import Constraint
from ...engine.decode import GenConfig, generate
from ...engine.draft import Drafter
from ...engine.draft_model import ModelDrafter
from ...engine.lookup import LookupDrafter
from ...engine.metrics import Metrics
from ...engine.policy import AdaptivePolicy, PolicyConfig
from ...engine.prediction import BesideDrafter
from ...engine.suffix import SuffixDrafter
from ..options import RewriteOptions
from . import prompt_cache
from .loaded_model import LoadedModel
from .prompt import Prompt, Span
from .stream import FencedText, StreamDecoder

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    text: str
    """The decoded output, cut after the closing fence line when there is one."""
    tokens: list[int]
    """The generated token ids (EOS excluded; a block accepted past the fence included)."""
    metrics: Metrics
    fenced: FencedText | None
    """The fenced block read from the output (None for a prompt without a fence)."""

    @property
    def closed(self) -> bool:
        """True when the output reached its closing fence."""
        return self.fenced is not None and self.fenced.closed


def _newline_ids(target: TargetModel) -> list[int]:
    return sorted(
        {t for s in ("\n", "\n\n", "\n    ", "\n        ") for t in target.tokenize(s)[-1:]}
    )


def lookup_drafter(target: TargetModel, spans: tuple[Span, ...], prompt_len: int) -> LookupDrafter:
    """The prompt-lookup drafter over ``target``'s vocabulary (byte pieces for resync)."""

    def encode(b: bytes) -> list[int]:
        try:
            return target.tokenize(b.decode("utf-8"), special=False)
        except UnicodeDecodeError:  # the tail of a split character: no clean re-encoding
            return []

    return LookupDrafter(
        spans=list(spans),
        prompt_len=prompt_len,
        newline_ids=_newline_ids(target),
        piece=lambda t: target.detokenize([t]),
        encode=encode,
    )


def suffix_drafter(target: TargetModel, spans: tuple[Span, ...], prompt_len: int) -> SuffixDrafter:
    """The suffix-tree drafter (``engine.suffix``; token ids only, ``target`` unused)."""
    return SuffixDrafter(spans=list(spans), prompt_len=prompt_len)


def proposers(
    loaded: LoadedModel,
    opts: RewriteOptions,
    prompt: Prompt,
    policy: AdaptivePolicy,
    prediction: Sequence[int] = (),
) -> Drafter | None:
    """The proposer ``opts.draft`` asks for (None for plain decoding); ``prediction``
    (token ids the output is expected to copy, e.g. an API request's predicted output) is
    one more lookup source, beside the prompt (``engine.prediction``)."""
    if opts.draft == "none":
        return None
    copier = suffix_drafter if opts.draft == "suffix" else lookup_drafter
    n = len(prediction)
    if n:
        spans = ((0, n, "prediction"), *((a + n, b + n, lab) for a, b, lab in prompt.spans))
        inner = copier(loaded.target, spans, n + len(prompt))
        lookup: Drafter = BesideDrafter(inner, prediction)
    else:
        lookup = copier(loaded.target, prompt.spans, len(prompt))
    if opts.draft in ("lookup", "suffix") or (opts.draft == "auto" and loaded.draft is None):
        return lookup
    if loaded.draft is None:
        raise ModelError("--draft model needs a draft model: --draft model:NAME|PATH")
    model = ModelDrafter(
        loaded.draft,
        opts.sampling,
        target=loaded.target,
        policy=policy,
        costs=loaded.draft_costs,
    )
    return model if opts.draft == "model" else CombinedDrafter(lookup, model, policy)


def gen_config(loaded: LoadedModel, opts: RewriteOptions, max_tokens: int) -> GenConfig:
    """The engine's settings for ``opts`` on ``loaded`` (exact mode's block size is the
    loaded model's measured one)."""
    return GenConfig(
        max_tokens=max_tokens,
        sampling=opts.sampling,
        policy=PolicyConfig(fixed_k=opts.k),
        speculate=opts.draft != "none",
        exact_block=loaded.exact_block if opts.exact else None,
    )


class TextSink:
    """The text of one run as it streams in: sent to ``on_text``, read for the closing
    fence (``fence``: the prompt's, or None), checked with ``stop_when`` as lines end and
    with ``stop_now`` after every piece. Every engine feeds it (the local decode loop,
    ``app.runtime.remote_engine``)."""

    def __init__(
        self,
        fence: str | None,
        on_text: Callable[[str], None] | None = None,
        stop_when: Callable[[str], bool] | None = None,
        stop_now: Callable[[str], bool] | None = None,
    ) -> None:
        self.parts: list[str] = []
        self.fenced = FencedText(fence) if fence else None
        self.on_text = on_text
        self.stop_when = stop_when
        self.stop_now = stop_now

    def feed(self, piece: str) -> bool:
        """Take ``piece``; False when the output must stop (fence closed, or stop_when)."""
        if not piece:
            return True
        self.parts.append(piece)
        if self.on_text is not None:
            self.on_text(piece)
        if self.fenced is not None and self.fenced.feed(piece):
            return False  # the block is closed
        if self.stop_now is not None and self.stop_now("".join(self.parts)):
            return False
        stop = self.stop_when
        return stop is None or "\n" not in piece or not stop("".join(self.parts))

    def finish(self, tail: str = "") -> str:
        """The output's text, cut after the closing fence when there is one."""
        self.parts.append(tail)
        if self.fenced is not None:
            self.fenced.feed(tail)
        # tokens past the closing fence arrive in the same accepted batch: not part of the text
        return self.fenced.through_fence() if self.fenced is not None else "".join(self.parts)


def run_prompt(
    loaded: LoadedModel,
    prompt: Prompt,
    opts: RewriteOptions,
    max_tokens: int,
    *,
    on_text: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    metrics: Metrics | None = None,
    cold: bool = False,
    stop_when: Callable[[str], bool] | None = None,
    prediction: Sequence[int] = (),
    constraint: Constraint | None = None,
    stop_now: Callable[[str], bool] | None = None,
) -> RunResult:
    """Generate from ``prompt`` (see the module docstring); ``prediction`` is one more
    lookup source (``proposers``); ``constraint`` restricts the tokens in the loop
    (``engine.constraint``; an answer's quotes: ``app.answer.quote_guard``). A model on a remote
    engine runs it there (``app.runtime.remote_engine``), unconstrained."""
    sink = TextSink(prompt.fence, on_text, stop_when, stop_now)
    if loaded.remote is not None:
        return loaded.remote.run_prompt(
            loaded, prompt, opts, max_tokens, sink, cancel=cancel, metrics=metrics
        )
    target = loaded.target
    cfg = gen_config(loaded, opts, max_tokens)
    dec = StreamDecoder(target)

    def on_tokens(toks: list[int]) -> bool:
        return sink.feed(dec.feed(toks))

    ids = list(prompt.ids)
    with loaded.lock:
        if cold:
            target.rollback(0)
        # the engine reuses what the cache holds of the prompt, evaluated in the batches a
        # cold run uses (engine.prefill); the disk cache can only add such a prefix
        disk = opts.prompt_cache and bool(loaded.cache_key)
        key = f"{loaded.cache_key}|{prefill.SCHEME}"
        if disk:
            have = prefill.reusable(target, ids, prompt.marks)
            if (got := prompt_cache.restore(target, ids, key, have=have)) > have:
                prefill.adopt(target, got)  # saved below from a run whose first mark it was
        policy = loaded.policy(cfg.policy)
        drafter = proposers(loaded, opts, prompt, policy, prediction)  # owns the draft's cache
        res = generate(
            target,
            ids,
            cfg,
            drafter,
            on_tokens=on_tokens,
            cancel=cancel,
            metrics=metrics,
            policy=policy,
            cached_prefix=len(ids),
            prefix_marks=prompt.marks,
            constraint=constraint,
        )
        keep = prompt.prefix_end
        if disk and res.metrics.stop_reason != "cancelled" and keep:
            # only a prefix evaluated in the batches ``adopt`` records is worth a file
            if prefill.reusable(target, ids, (keep,), keep) == keep:
                prompt_cache.store(target, ids, keep, key)
    text = sink.finish(dec.flush())
    return RunResult(text, res.tokens, res.metrics, sink.fenced)
