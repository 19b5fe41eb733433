"""The OpenAI wire format of ``specedit serve --http``: requests in, responses and errors out.

Contract:

* :func:`parse_request` checks the JSON body of ``POST /v1/chat/completions`` (``kind="chat"``)
  or ``POST /v1/completions`` (``kind="completion"``) and returns an :class:`ApiRequest`, or
  raises :class:`ApiError` (400 naming the offending ``param``; 404 for a model not served).
  Options that would change the answer's meaning and are not supported are refused by name;
  other unknown fields are ignored, as OpenAI-compatible servers do.
* :func:`completion_body`, :func:`chunk_body` and :func:`usage_body` build the response objects
  (``chat.completion`` / ``text_completion``, their stream chunks, ``usage``) in OpenAI's shape;
  specedit's own figures ride in a top-level ``specedit`` field. :func:`sse_event` frames one
  stream chunk; :data:`SSE_DONE` ends a stream.
* :class:`StopText` cuts a stream at the first ``stop`` string; no part of one is ever sent.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from ...engine.sampling import SamplingParams

MAX_STOPS = 4
OPENAI_DEFAULT_TEMPERATURE = 1.0
"""OpenAI's default; send ``temperature: 0`` for greedy (and exact, repeatable) output."""
_UNSUPPORTED = {
    "tools": "tool calls are not supported",
    "functions": "function calls are not supported",
    "logprobs": "logprobs are not supported",
    "top_logprobs": "logprobs are not supported",
    "suffix": "suffix (fill in the middle) is not supported",
    "audio": "audio output is not supported",
}
_ROLES = {"system", "developer", "user", "assistant", "tool"}


class ApiError(Exception):
    """An error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def to_json(self) -> dict[str, Any]:
        err = {"message": self.message, "type": self.type, "param": self.param, "code": self.code}
        return {"error": err}


def _bad(message: str, param: str | None = None) -> ApiError:
    return ApiError(400, message, param=param)


@dataclass(frozen=True)
class ApiRequest:
    """One completion request, checked."""

    kind: str
    """``chat`` or ``completion``."""
    model: str
    messages: tuple[dict[str, str], ...] = ()
    """The chat, each ``{"role", "content"}`` with text content (``kind == "chat"``)."""
    prompt: str = ""
    """The raw prompt (``kind == "completion"``): sent to the model as is, with no template."""
    stream: bool = False
    include_usage: bool = False
    """With ``stream``: a last chunk with ``usage`` (and specedit's stats)."""
    max_tokens: int | None = None
    sampling: SamplingParams = field(default_factory=SamplingParams)
    stop: tuple[str, ...] = ()
    prediction: str | None = None
    """The predicted output's text: a lookup source beside the prompt."""
    draft: str = "lookup"
    """specedit's extension ``"specedit": {"draft": "none"}``: plain decoding (benchmarks)."""


def _text_content(v: Any, param: str) -> str:
    """A string, or a list of ``{"type": "text", "text": ...}`` parts, as one string."""
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        out = []
        for i, part in enumerate(v):
            if not (isinstance(part, dict) and part.get("type") == "text"):
                raise _bad(f"{param}[{i}] must be a text part; only text is supported", param)
            if not isinstance(part.get("text"), str):
                raise _bad(f"{param}[{i}].text must be a string", param)
            out.append(part["text"])
        return "".join(out)
    if v is None:
        return ""
    raise _bad(f"{param} must be a string or a list of text parts", param)


def _number(body: dict[str, Any], key: str, lo: float, hi: float, default: float) -> float:
    v = body.get(key)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise _bad(f"{key} must be a number", key)
    if not lo <= v <= hi:
        raise _bad(f"{key} must be between {lo:g} and {hi:g}", key)
    return float(v)


def _int(body: dict[str, Any], key: str, lo: int, hi: int) -> int | None:
    v = body.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _bad(f"{key} must be an integer between {lo} and {hi}", key)
    return v


def _messages(v: Any) -> tuple[dict[str, str], ...]:
    if not isinstance(v, list) or not v:
        raise _bad("messages must be a non-empty array", "messages")
    out = []
    for i, m in enumerate(v):
        if not isinstance(m, dict) or m.get("role") not in _ROLES:
            raise _bad(f"messages[{i}] needs a role ({', '.join(sorted(_ROLES))})", "messages")
        role = "system" if m["role"] == "developer" else m["role"]
        out.append({"role": role, "content": _text_content(m.get("content"), "messages")})
    return tuple(out)


def _stop(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    stops = [v] if isinstance(v, str) else v
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise _bad("stop must be a non-empty string or an array of them", "stop")
    if len(stops) > MAX_STOPS:
        raise _bad(f"stop takes at most {MAX_STOPS} strings", "stop")
    return tuple(stops)


def _prediction(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, dict) or v.get("type") != "content":
        raise _bad('prediction must be {"type": "content", "content": ...}', "prediction")
    return _text_content(v.get("content"), "prediction")


def parse_request(kind: str, body: Any, models: Sequence[str]) -> ApiRequest:
    """The checked request; ``models`` are the ids the server serves.

    Raises :class:`ApiError`: HTTP 400, OpenAI's ``invalid_request_error`` with the offending
    ``param``; 404 ``model_not_found`` for a model the server does not serve. Understood:
    ``model``, ``messages`` (string content or a list of ``{"type": "text"}`` parts) or
    ``prompt`` (a string, or a list of one), ``stream``, ``stream_options.include_usage``,
    ``max_tokens`` / ``max_completion_tokens``, ``temperature`` (0..2; default 1 as OpenAI's),
    ``top_p``, ``stop`` (a string or up to 4), ``seed`` and ``prediction`` (``{"type":
    "content", "content": str | [text parts]}``). Options that would change the answer's meaning
    and are not supported (``n`` > 1, ``logprobs``, ``tools``, ``echo``, ``suffix``,
    ``best_of`` > 1) are refused by name; other fields are ignored, as OpenAI-compatible servers
    do. specedit's own extension: ``"specedit": {"draft": "none"}`` decodes plainly (for
    side-by-side benchmarks).
    """
    if not isinstance(body, dict):
        raise _bad("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model is required (GET /v1/models lists it)", "model")
    if model not in models:
        raise ApiError(
            404,
            f"The model {model!r} does not exist; this server serves {', '.join(models)}",
            param="model",
            code="model_not_found",
        )
    for key, why in _UNSUPPORTED.items():
        if body.get(key) not in (None, False, [], 0, ""):
            raise _bad(f"{key}: {why} by specedit", key)
    if _int(body, "n", 1, 128) not in (None, 1):
        raise _bad("n: only one choice per request is supported", "n")
    if _int(body, "best_of", 1, 128) not in (None, 1):
        raise _bad("best_of: only 1 is supported", "best_of")
    if body.get("echo"):
        raise _bad("echo is not supported", "echo")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("stream must be a boolean", "stream")
    so = body.get("stream_options") or {}
    if not isinstance(so, dict):
        raise _bad("stream_options must be an object", "stream_options")
    include_usage = bool(so.get("include_usage", False))
    max_tokens = _int(body, "max_completion_tokens", 1, 1 << 24)
    if max_tokens is None:
        max_tokens = _int(body, "max_tokens", 1, 1 << 24)
    temperature = _number(body, "temperature", 0.0, 2.0, OPENAI_DEFAULT_TEMPERATURE)
    top_p = _number(body, "top_p", 0.0, 1.0, 1.0)
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise _bad("seed must be an integer", "seed")
    sampling = SamplingParams(
        temperature=temperature,
        top_p=top_p if top_p > 0 else 1.0,
        top_k=1 if top_p == 0 else 0,  # top_p 0: only the most likely token
        seed=(seed if seed is not None else secrets.randbits(63)) & ((1 << 63) - 1),
    )
    ext = body.get("specedit") or {}
    draft = ext.get("draft", "lookup") if isinstance(ext, dict) else None
    if draft not in ("lookup", "none"):
        raise _bad('specedit.draft must be "lookup" or "none"', "specedit")
    common = dict(
        draft=draft,
        kind=kind,
        model=model,
        stream=stream,
        include_usage=include_usage,
        max_tokens=max_tokens,
        sampling=sampling,
        stop=_stop(body.get("stop")),
        prediction=_prediction(body.get("prediction")),
    )
    if kind == "chat":
        return ApiRequest(messages=_messages(body.get("messages")), **common)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str) or not prompt:
        raise _bad("prompt must be a non-empty string (one prompt per request)", "prompt")
    return ApiRequest(prompt=prompt, **common)


# ---- the answer -------------------------------------------------------------------------


def prediction_counts(prediction: Sequence[int], completion: Sequence[int]) -> tuple[int, int]:
    """``(accepted, rejected)`` prediction tokens as OpenAI counts them: the prediction's
    tokens that appear in the completion (in order: the matching blocks of the two token
    sequences) and those that do not."""
    if not prediction:
        return 0, 0
    sm = SequenceMatcher(None, list(prediction), list(completion), autojunk=False)
    accepted = sum(b.size for b in sm.get_matching_blocks())
    return accepted, len(prediction) - accepted


def usage_body(
    prompt_tokens: int, completion_tokens: int, accepted: int = 0, rejected: int = 0
) -> dict[str, Any]:
    """OpenAI's ``usage``; ``completion_tokens`` counts the tokens generated (a rejected
    prediction token costs nothing here, so it is not added). Its
    ``completion_tokens_details`` carry ``accepted_prediction_tokens`` /
    ``rejected_prediction_tokens`` with OpenAI's meaning (:func:`prediction_counts`)."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "accepted_prediction_tokens": accepted,
            "rejected_prediction_tokens": rejected,
        },
    }


def new_id(kind: str) -> str:
    return ("chatcmpl-" if kind == "chat" else "cmpl-") + secrets.token_hex(12)


def _object(kind: str, chunk: bool) -> str:
    if kind == "chat":
        return "chat.completion.chunk" if chunk else "chat.completion"
    return "text_completion"


def completion_body(
    req: ApiRequest,
    rid: str,
    created: int,
    text: str,
    finish: str,
    usage: dict[str, Any],
    extra: dict[str, Any],
) -> dict[str, Any]:
    """The whole answer of a request that did not stream."""
    if req.kind == "chat":
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text, "refusal": None},
            "logprobs": None,
            "finish_reason": finish,
        }
    else:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
    return {
        "id": rid,
        "object": _object(req.kind, False),
        "created": created,
        "model": req.model,
        "system_fingerprint": None,
        "choices": [choice],
        "usage": usage,
        "specedit": extra,
    }


def chunk_body(
    req: ApiRequest,
    rid: str,
    created: int,
    text: str | None,
    finish: str | None = None,
    *,
    first: bool = False,
    usage: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One stream chunk: a piece of text, the finish reason, or (``text`` None and no
    finish) the usage chunk, whose ``choices`` are empty as OpenAI's are."""
    body: dict[str, Any] = {
        "id": rid,
        "object": _object(req.kind, True),
        "created": created,
        "model": req.model,
        "system_fingerprint": None,
    }
    if text is None and finish is None:
        body["choices"] = []
    elif req.kind == "chat":
        delta: dict[str, Any] = {"role": "assistant"} if first else {}
        if text:
            delta["content"] = text
        body["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    else:
        body["choices"] = [
            {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish}
        ]
    if usage is not None:
        body["usage"] = usage
    if extra is not None:
        body["specedit"] = extra
    return body


def now() -> int:
    return int(time.time())


SSE_DONE = b"data: [DONE]\n\n"
"""The event that ends a stream, as OpenAI's does."""


def sse_event(obj: dict[str, Any]) -> bytes:
    """One stream chunk as a server-sent event (``data: {json}`` and a blank line)."""
    data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"data: " + data + b"\n\n"


class StopText:
    """Cut a stream at the first of ``stops``, holding back only the characters that could still
    begin one, so no part of a stop string is ever sent."""

    def __init__(self, stops: Sequence[str]) -> None:
        self.stops = tuple(stops)
        self.hold = max((len(s) for s in self.stops), default=1) - 1
        self.text = ""
        """Everything fed so far (cut at the stop once one was found)."""
        self.sent = 0
        self.stopped = False

    def feed(self, piece: str) -> str:
        """The text that may be sent now (never part of a stop string)."""
        if self.stopped:
            return ""
        start = max(0, len(self.text) - self.hold)
        self.text += piece
        cut = min((i for s in self.stops if (i := self.text.find(s, start)) >= 0), default=-1)
        if cut >= 0:
            self.text, self.stopped = self.text[:cut], True
            return self._take(len(self.text))
        return self._take(len(self.text) - self.hold)

    def flush(self) -> str:
        """The held-back rest, once the output is over."""
        return self._take(len(self.text))

    def _take(self, upto: int) -> str:
        if upto <= self.sent:
            return ""
        out, self.sent = self.text[self.sent : upto], upto
        return out
