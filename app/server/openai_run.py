"""Run one OpenAI-style request on the loaded model: the model side of ``serve --http``.

Contract: ``run_request(loaded, req, on_text, cancel)`` renders the prompt (a chat through
the model's own chat template, ``TargetModel.chat_prompt``; a completion's ``prompt`` as
is), generates with prompt lookup over the prompt, the output and the request's
``prediction`` (a lookup source beside the prompt: ``app.runtime.generation.run_prompt``), streams
the text to ``on_text`` cut at the first ``stop`` string (``StopText``), and returns an
:class:`Outcome`: the text, OpenAI's ``finish_reason`` (``stop`` | ``length``, or
``cancelled`` when ``cancel`` was set from outside), the ``usage`` with the prediction's
accepted and rejected tokens, and specedit's own stats (``Metrics.snapshot``). It blocks:
the server calls it in its one generation thread. A prompt that leaves no room in the
context raises :class:`~specedit.app.server.openai_wire.ApiError` (400,
``context_length_exceeded``), and so does one that renders to no tokens at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...engine.metrics import Metrics, StopReason
from ..options import RewriteOptions
from ..runtime.generation import run_prompt
from ..runtime.loaded_model import LoadedModel
from ..runtime.prompt import Prompt
from .openai_wire import ApiError, ApiRequest, StopText, prediction_counts, usage_body


@dataclass
class Outcome:
    text: str
    finish: str
    """``stop`` (end of the answer or a stop string), ``length`` (max_tokens or the
    context) or ``cancelled`` (the client went away, the server is stopping)."""
    usage: dict[str, Any]
    extra: dict[str, Any]
    """specedit's own figures: the ``specedit`` field of the response."""
    metrics: Metrics


def request_prompt(loaded: LoadedModel, req: ApiRequest) -> Prompt:
    """The prompt of ``req`` as token ids, the whole of it a lookup source."""
    target = loaded.target
    text = target.chat_prompt(list(req.messages)) if req.kind == "chat" else req.prompt
    ids = target.tokenize(text, special=True)
    param = "messages" if req.kind == "chat" else "prompt"
    if not ids:  # a chat template that renders empty messages as nothing
        raise ApiError(400, "the prompt is empty", param=param)
    if len(ids) + 1 >= target.n_ctx:
        raise ApiError(
            400,
            f"the prompt is {len(ids):,} tokens; this model's context is "
            f"{target.n_ctx:,} tokens (specedit serve --ctx raises it)",
            param=param,
            code="context_length_exceeded",
        )
    return Prompt(ids=tuple(ids), spans=((0, len(ids), "prompt"),))


def run_request(
    loaded: LoadedModel,
    req: ApiRequest,
    on_text: Callable[[str], None] | None,
    cancel: threading.Event,
) -> Outcome:
    """Generate the answer of ``req`` (module docstring)."""
    target = loaded.target
    prompt = request_prompt(loaded, req)
    room = prompt.room(target.n_ctx)
    max_tokens = min(req.max_tokens or room, room)
    pred = target.tokenize(req.prediction, special=False) if req.prediction else []
    stop = StopText(req.stop)
    stopped = threading.Event()  # a stop string, not the client: the answer is complete

    def piece(text: str) -> None:
        out = stop.feed(text)
        if out and on_text is not None:
            on_text(out)
        if stop.stopped:
            stopped.set()
            cancel.set()  # no more target calls: the rest would be cut anyway

    opts = RewriteOptions(draft=req.draft, sampling=req.sampling)
    m = Metrics()
    run = run_prompt(
        loaded, prompt, opts, max_tokens, on_text=piece, cancel=cancel, metrics=m, prediction=pred
    )
    if not stop.stopped:
        stop.feed(run.text[len(stop.text) :])  # what the sink got after its last piece
        rest = stop.flush()
        if rest and on_text is not None:
            on_text(rest)
    text = stop.text
    reason = m.stop_reason
    if stopped.is_set():
        finish = "stop"
    elif reason == StopReason.CANCELLED:
        finish = "cancelled"
    elif reason.at_limit:
        finish = "length"
    else:
        finish = "stop"
    accepted, rejected = prediction_counts(pred, target.tokenize(text, special=False))
    usage = usage_body(len(prompt), len(run.tokens), accepted, rejected)
    stats = m.snapshot()
    extra = {
        "model": loaded.model_name,
        "engine": loaded.runner.where,
        "backend": stats["backend"],
        "device": stats["device"],
        "tokens_per_call": stats["tokens_per_call"],
        "acceptance": stats["acceptance"],
        "decode_tps": stats["decode_tps"],
        "prefill_tps": stats["prefill_tps"],
        "prediction_tokens": len(pred),
        "stats": stats,
    }
    return Outcome(text, finish, usage, extra, m)
