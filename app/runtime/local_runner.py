"""The engine in this process: the proposers, the stop, the caches, around ``engine.decode``.

Contract: ``LocalRunner().run(loaded, prompt, opts, max_tokens, sink, ...)`` (a ``Runner``,
``app.runtime.runner``) generates from ``prompt`` on ``loaded.target`` with the proposers
``opts.draft`` names (``proposers``: prompt lookup over the prompt's spans and the output, a
draft model, both, or none) and the sampling and exactness of ``opts`` (``gen_config``),
feeding ``sink`` and stopping when it says so; ``cancel`` is honoured between target calls.
The loaded model's lock serialises runs. The KV cache's shared prefix is reused only where it
was evaluated in a cold run's batches (``engine.prefill``; ``cold=True`` starts empty); with
``opts.prompt_cache`` the prompt's ``prefix_end`` is restored from and saved to disk
(``app.runtime.prompt_cache``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...engine import prefill
from ...engine.backend import ModelError, TargetModel
from ...engine.combined import CombinedDrafter
from ...engine.constraint import Constraint
from ...engine.decode import GenConfig, generate
from ...engine.draft import Drafter
from ...engine.draft_model import ModelDrafter
from ...engine.lookup import LookupDrafter
from ...engine.metrics import Metrics, StopReason
from ...engine.policy import AdaptivePolicy, PolicyConfig
from ...engine.prediction import BesideDrafter
from ...engine.suffix import SuffixDrafter
from . import prompt_cache
from .runner import RunResult, TextSink
from .stream import StreamDecoder

if TYPE_CHECKING:
    from ..options import RewriteOptions
    from .loaded_model import LoadedModel
    from .prompt import Prompt, Span


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


class LocalRunner:
    """The ``Runner`` of a model loaded in this process (module docstring)."""

    local = True
    where = "local"

    def run(
        self,
        loaded: LoadedModel,
        prompt: Prompt,
        opts: RewriteOptions,
        max_tokens: int,
        sink: TextSink,
        *,
        cancel: threading.Event | None = None,
        metrics: Metrics | None = None,
        cold: bool = False,
        prediction: Sequence[int] = (),
        constraint: Constraint | None = None,
    ) -> RunResult:
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
            if disk and res.metrics.stop_reason != StopReason.CANCELLED and keep:
                # only a prefix evaluated in the batches ``adopt`` records is worth a file
                if prefill.reusable(target, ids, (keep,), keep) == keep:
                    prompt_cache.store(target, ids, keep, key)
        text = sink.finish(dec.flush())
        return RunResult(text, res.tokens, res.metrics, sink.fenced)
