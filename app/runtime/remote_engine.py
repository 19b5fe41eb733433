"""``--engine openai:URL``: the target model runs on an OpenAI-compatible server.

Contract:
* :func:`parse_engine` reads ``openai:http://host:port/v1`` (``https`` too; ``openai-chat:``
  for a chat-only server); a key comes from ``$SPECEDIT_ENGINE_KEY``, else ``$OPENAI_API_KEY``.
* :func:`load_remote` picks the server's model (``GET /models``: the local model's name, else
  the only one) and returns a :class:`RemoteEngine` and a ``VocabTarget`` (``models.vocab_only``:
  prompts built as a local run's); ``load_model`` makes them a ``LoadedModel``.
* ``RemoteEngine`` is a ``Runner`` (``app.runtime.runner``): ``run`` streams the prompt from ``POST /completions`` (chat-only, or a 404
  there: its messages from ``/chat/completions``, the reply's opening fence dropped) into the
  run's ``TextSink``, closing the stream once the sink has what it needs or ``cancel`` is set;
  ``Prompt.part`` goes as ``prediction`` where the server takes it. Stats are measured here,
  client-side (``backend`` ``remote``), with a specedit server's own figures copied in.
* Errors are one-line ``ModelError`` messages (unreachable, HTTP error, a stream cut short);
  a remote engine refuses ``--exact`` and a draft model.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.backend import ModelError
from ...engine.metrics import Metrics, StopReason
from ...models.catalog import CATALOG, check_once, resolve_model
from ...models.vocab_only import VocabTarget
from .runner import RunResult, TextSink

if TYPE_CHECKING:
    from ...engine.constraint import Constraint
    from ..options import LoadConfig, RewriteOptions
    from .loaded_model import LoadedModel
    from .prompt import Prompt

log = logging.getLogger(__name__)

KEY_ENV = ("SPECEDIT_ENGINE_KEY", "OPENAI_API_KEY")
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 600.0
"""The longest silence a stream may keep (a long prompt read on a slow server)."""


APIS = {"openai": "auto", "openai-chat": "chat"}
"""``--engine`` schemes and the API each speaks: ``auto`` (``/completions``, or the chat
API when the server has none) or ``chat`` (``/chat/completions`` only)."""

PREDICTION_HOSTS = ("api.openai.com", "api.mistral.ai")
"""Chat APIs that take ``prediction`` (OpenAI's Predicted Outputs, Mistral's)."""


def parse_engine(spec: str) -> tuple[str, str]:
    """(the base URL, no trailing slash; the API: ``APIS``) of ``openai:URL`` or
    ``openai-chat:URL``; ``ModelError`` otherwise."""
    scheme, sep, url = spec.partition(":")
    u = urllib.parse.urlsplit(url)
    if scheme not in APIS or not sep or u.scheme not in ("http", "https") or not u.hostname:
        raise ModelError(
            f"--engine takes openai:http://HOST:PORT/v1 (or openai-chat:URL), not {spec!r}"
        )
    return url.rstrip("/"), APIS[scheme]


def api_key() -> str | None:
    return next((os.environ[k] for k in KEY_ENV if os.environ.get(k)), None)


@dataclass
class RemoteEngine:
    """An OpenAI-compatible server that runs the target: a ``Runner`` (module docstring)."""

    local = False
    """Not the engine in this process: no constraint, warm-up or cache of ours applies."""

    url: str
    """The API's base URL, e.g. ``http://127.0.0.1:8000/v1``."""
    model: str
    """The server's id of the model."""
    key: str | None = None
    prediction: bool = False
    """The server takes ``prediction`` (specedit's own API does; others are not sent it)."""
    server: str = "openai-compatible"
    """What the server said it is: ``specedit`` or the model card's ``owned_by``."""
    device: str = ""
    """Where the server said the model runs (specedit's own server says so)."""
    api: str = "auto"
    """``completions`` (a raw prompt), ``chat`` (messages: ``Prompt.chat``) or ``auto``
    (``completions`` until the server answers that it has none)."""

    @property
    def where(self) -> str:
        """The server's base URL (``Runner.where``)."""
        return self.url

    # ---- HTTP ------------------------------------------------------------------------
    def _connect(self) -> tuple[http.client.HTTPConnection, str]:
        u = urllib.parse.urlsplit(self.url)
        cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
        conn = cls(u.hostname, u.port, timeout=CONNECT_TIMEOUT_S)
        return conn, u.path.rstrip("/")

    def _headers(self, body: bool) -> dict[str, str]:
        h = {"Accept": "application/json, text/event-stream"}
        if body:
            h["Content-Type"] = "application/json"
        if self.key:
            h["Authorization"] = f"Bearer {self.key}"
        return h

    def _request(
        self, method: str, path: str, body: dict | None = None, cancel=None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse, threading.Event]:
        """Send a request; the connection, its response (status 200) and an event to set
        when done with them. A ``cancel`` set meanwhile shuts the connection, so a read
        blocked on a silent server (reading a long prompt) returns at once."""
        conn, base = self._connect()
        data = json.dumps(body).encode("utf-8") if body is not None else None
        done = threading.Event()
        try:
            conn.connect()
        except OSError as e:
            conn.close()
            raise ModelError(f"cannot reach the engine at {self.url}: {e}") from None
        assert conn.sock is not None
        conn.sock.settimeout(READ_TIMEOUT_S)  # the server may read a long prompt first

        def watch() -> None:
            while not done.wait(0.05):
                if cancel is not None and cancel.is_set():
                    _shut(conn)
                    return

        if cancel is not None:
            threading.Thread(target=watch, name="specedit-remote-cancel", daemon=True).start()
        try:
            conn.request(method, base + path, body=data, headers=self._headers(data is not None))
            resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            done.set()
            conn.close()
            if cancel is not None and cancel.is_set():
                raise _Cancelled from None
            raise ModelError(f"the engine at {self.url} did not answer: {e}") from None
        if resp.status != 200:
            msg = _error_message(resp.read(65536))
            done.set()
            conn.close()
            raise _Status(resp.status, f"the engine at {self.url} answered {resp.status}: {msg}")
        return conn, resp, done

    def models(self) -> list[dict[str, Any]]:
        conn, resp, done = self._request("GET", "/models")
        try:
            data = json.loads(resp.read(1 << 20))
        except (ValueError, OSError, http.client.HTTPException):
            raise ModelError(f"the engine at {self.url} sent no model list (GET /models)") from None
        finally:
            done.set()
            conn.close()
        cards = data.get("data") if isinstance(data, dict) else None
        if not isinstance(cards, list) or not cards:
            raise ModelError(f"the engine at {self.url} lists no models (GET /models)")
        return [c for c in cards if isinstance(c, dict) and isinstance(c.get("id"), str)]

    # ---- one prompt ------------------------------------------------------------------
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
        """Generate ``prompt`` on the server (module docstring); the server keeps its own
        cache (``cold`` is not sent), and ``prediction`` and ``constraint`` apply to a
        local loop only: a remote run is unconstrained."""
        if opts.exact:
            raise ModelError("--exact needs a local model: a remote engine's numerics are its own")
        if opts.draft not in ("lookup", "none", "auto"):
            raise ModelError("a draft model runs locally only: use --draft lookup with --engine")
        target = loaded.target
        m = metrics if metrics is not None else Metrics()
        m.backend, m.device = "remote", self.device or f"the engine at {self.url}"
        m.exact, m.speculation, m.verifier = False, opts.draft != "none", self.server
        m.prompt_tokens = m.read_total = len(prompt)
        s = opts.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": target.text_of(prompt.ids),
            "max_tokens": max_tokens,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "seed": s.seed & 0x7FFFFFFF,  # some servers take 32-bit seeds only
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if s.top_k:
            body["top_k"] = s.top_k
        if self.server != "specedit":
            # llama.cpp's Python server penalises repeats (1.1) unless told: a copy is repeats
            body["repeat_penalty"] = 1.0
        if self.prediction and prompt.part and opts.draft != "none":
            body["prediction"] = {"type": "content", "content": prompt.part}
        t0 = time.perf_counter()
        with loaded.lock:
            if self.api != "chat":
                try:
                    finish, usage, extra = self._stream(body, sink, cancel, m, t0)
                except _Status as e:
                    if self.api != "auto" or e.status not in (404, 405):
                        raise
                    log.info("%s has no /completions: the chat API from now on", self.url)
                    self.api = "chat"
            if self.api == "chat":
                finish, usage, extra = self._chat(body, prompt, sink, cancel, m, t0)
        text = sink.finish()
        tokens = target.tokenize(text, special=False)
        n = (usage or {}).get("completion_tokens")
        m.generated_tokens = n if isinstance(n, int) and finish != "client" else len(tokens)
        m.emitted_tokens = m.generated_tokens
        _copy_server_stats(m, extra, self.url)
        copy_prediction_usage(m, usage)
        m.stop_reason = {
            "length": StopReason.MAX_TOKENS,
            "client": StopReason.STOP,
            "cancelled": StopReason.CANCELLED,
        }.get(finish, StopReason.EOS)
        if m.stop_reason == StopReason.STOP and sink.fenced is not None and sink.fenced.closed:
            m.stop_reason = StopReason.EOS  # the block closed: as a local run would say
        return RunResult(text, tokens, m, sink.fenced)

    def _chat(self, body: dict, prompt: Prompt, sink: TextSink, cancel, m: Metrics, t0: float):
        """The request as messages (``Prompt.chat``), to ``/chat/completions``: the model
        writes the assistant turn's opening itself there (``_Opening`` drops it). Only
        OpenAI's own fields go (a hosted API refuses others)."""
        if prompt.chat is None:
            raise ModelError(f"the engine at {self.url} takes only chat messages; this has none")
        body = {k: v for k, v in body.items() if k not in ("prompt", "repeat_penalty", "top_k")}
        body["messages"] = [{"role": r, "content": c} for r, c in prompt.chat.messages]
        host = urllib.parse.urlsplit(self.url).hostname or ""
        if host in PREDICTION_HOSTS and prompt.part and m.speculation:
            body["prediction"] = {"type": "content", "content": prompt.part}
        opening = _Opening(sink, prompt.chat.opening)
        try:
            return self._stream(body, opening, cancel, m, t0, "/chat/completions")
        finally:
            opening.flush()

    def _stream(self, body, sink, cancel, m: Metrics, t0: float, path: str = "/completions"):
        """Read the server-sent events into ``sink`` (anything with ``feed``); (finish,
        usage, specedit extra)."""
        try:
            conn, resp, done = self._request("POST", path, body, cancel)
        except _Cancelled:
            return "cancelled", None, None
        finish, usage, extra, ended = "", None, None, False
        try:
            while True:
                try:
                    line = resp.readline(1 << 20)
                except (OSError, http.client.HTTPException, ValueError) as e:
                    if cancel is not None and cancel.is_set():
                        return "cancelled", usage, extra
                    raise ModelError(
                        f"the engine at {self.url} broke off the stream: {e}"
                    ) from None
                if not line:
                    break
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    ended = True
                    break
                try:
                    ev = json.loads(data.decode("utf-8"))
                except ValueError:
                    raise ModelError(f"the engine at {self.url} sent a malformed event") from None
                if not isinstance(ev, dict):
                    continue
                if "error" in ev:
                    raise ModelError(f"the engine at {self.url} failed: {_error_message(data)}")
                usage = ev.get("usage") or usage
                extra = ev.get("specedit") or extra
                for ch in ev.get("choices") or ():
                    piece = ch.get("text") or (ch.get("delta") or {}).get("content") or ""
                    if piece and m.decode_start is None:
                        m.prefill_s = time.perf_counter() - t0  # the wait for the first token
                        m.read_tokens = m.read_total
                        m.start_decoding()
                    if piece:
                        m.generated_tokens += 1  # pieces, until the real count arrives
                        m.recent.append((time.perf_counter(), 1))
                    if m.decode_start is not None:
                        m.decode_s = time.perf_counter() - m.decode_start
                    if piece and not sink.feed(piece):
                        return "client", usage, extra
                    finish = ch.get("finish_reason") or finish
                if cancel is not None and cancel.is_set():
                    return "cancelled", usage, extra
        finally:
            done.set()
            conn.close()
        if not ended and not finish:
            raise ModelError(
                f"the engine at {self.url} closed the stream before the answer ended "
                "(did the server stop?); nothing changed"
            )
        return finish or "stop", usage, extra


class _Cancelled(Exception):
    """A request cancelled before its answer began."""


class _Status(ModelError):
    """The server answered with an HTTP error ``status``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Opening:
    """Feeds ``sink`` a chat model's answer from where a token prompt's pre-filled
    ``opening`` would have ended it: up to and through the answer's first fence line
    (``` or ~~~, any language), then the opening's further lines (``edits.PREFILL``) when
    the answer has them there. An answer with no fence line in its first ``SCAN`` characters
    goes to ``sink`` whole, as does one with no opening to drop."""

    SCAN = 4000

    def __init__(self, sink: TextSink, opening: str) -> None:
        self.sink, self.buf = sink, ""
        self.rest = opening.split("\n", 1)[1] if "\n" in opening else ""
        self.state = "fence" if opening else "through"

    def feed(self, piece: str) -> bool:
        if self.state == "through":
            return self.sink.feed(piece)
        self.buf += piece
        if self.state == "fence":
            at = 0
            while (nl := self.buf.find("\n", at)) >= 0:
                if self.buf[at:nl].lstrip().startswith(("```", "~~~")):
                    self.buf, self.state = self.buf[nl + 1 :], "rest"
                    break
                at = nl + 1
            else:
                if len(self.buf) < self.SCAN:
                    return True
                self.state = "through"  # no fence: the answer is the text itself
                return self._out()
        if self.state == "rest":
            if self.rest.startswith(self.buf) and self.buf != self.rest:
                return True  # maybe the opening's next line, not yet whole
            if self.buf.startswith(self.rest):
                self.buf = self.buf[len(self.rest) :]
            self.state = "through"
        return self._out()

    def _out(self) -> bool:
        buf, self.buf = self.buf, ""
        return self.sink.feed(buf) if buf else True

    def flush(self) -> None:
        """The stream ended: what is held goes to ``sink`` (an answer with no fence)."""
        self.state = "through"
        self._out()


def _shut(conn: http.client.HTTPConnection) -> None:
    import socket

    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _error_message(raw: bytes) -> str:
    """The ``error.message`` of an OpenAI-shaped error body, else its first 300 bytes."""
    try:
        obj = json.loads(raw)
        err = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(obj, dict) and isinstance(obj.get("detail"), str):
            return obj["detail"]
    except ValueError:
        pass
    return raw[:300].decode("utf-8", "replace").strip() or "(no message)"


def _copy_server_stats(m: Metrics, extra: dict | None, url: str) -> None:
    """A specedit server's own figures (its device, acceptance, tokens per call)."""
    if not isinstance(extra, dict):
        return
    stats = extra.get("stats") or {}
    if extra.get("device"):
        m.device = f"{extra['device']} (specedit at {url})"
    for name in ("target_calls", "drafted_tokens", "accepted_tokens", "emitted_tokens"):
        if isinstance(stats.get(name), int):
            setattr(m, name, stats[name])
    for src, n in (stats.get("drafted_by_source") or {}).items():
        m.by_source[src] = n


def copy_prediction_usage(m: Metrics, usage: dict | None) -> None:
    """The acceptance of a ``prediction`` from OpenAI's predicted-output counts, when the
    server sent them and no figures of its own (``_copy_server_stats``): drafted is
    accepted plus rejected prediction tokens."""
    details = (usage or {}).get("completion_tokens_details") or {}
    acc, rej = details.get("accepted_prediction_tokens"), details.get("rejected_prediction_tokens")
    if m.drafted_tokens or not isinstance(acc, int) or not isinstance(rej, int) or acc + rej <= 0:
        return
    m.drafted_tokens, m.accepted_tokens = acc + rej, acc
    m.by_source["prediction"] += acc + rej
    m.accepted_by_source["prediction"] += acc


def load_remote(
    cfg: LoadConfig, hash_record: Path, on_stage=None
) -> tuple[RemoteEngine, VocabTarget, str, Path]:
    """The engine ``cfg.engine`` names, the local tokenizer's target, the model's name and
    path (module docstring); ``hash_record`` remembers the model file's sha256 check."""
    url, api = parse_engine(cfg.engine)
    if on_stage is not None:
        on_stage("weights", f"remote {url}")
    engine = RemoteEngine(url, model="", key=api_key(), api=api)
    cards = engine.models()
    path = resolve_model(cfg.model)
    check_once(path, hash_record)
    name = cfg.model if cfg.model in CATALOG else path.name
    ids = [c["id"] for c in cards]
    wanted = [i for i in ids if i in (name, cfg.model, path.name, path.stem, str(path))]
    if wanted:
        engine.model = wanted[0]
    elif len(ids) == 1:
        engine.model = ids[0]
    else:
        raise ModelError(
            f"the engine at {url} serves {', '.join(ids)}; name one with --model "
            "(its tokenizer must be the model's)"
        )
    card = next(c for c in cards if c["id"] == engine.model)
    own = card.get("specedit") if isinstance(card.get("specedit"), dict) else None
    engine.server = "specedit" if own is not None else str(card.get("owned_by") or "openai")
    engine.prediction = bool(own and own.get("prediction"))
    if own and own.get("device"):
        engine.device = f"{own['device']} (specedit at {url})"
    target = VocabTarget(path, n_ctx=cfg.n_ctx, name=name, device=engine.device or url)
    log.info("remote engine %s: model %s (%s)", url, engine.model, engine.server)
    return engine, target, name, path
