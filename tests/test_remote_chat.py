"""``--engine`` on a server that takes only chat messages (OpenAI's and Mistral's APIs):
``openai-chat:URL``, or ``openai:URL`` whose server has no ``/completions``.

The server is specedit's own ``serve --http`` over a scripted toy (the model does not
matter here: it writes a chat model's reply, its own opening fence included), reached
directly and through a proxy that answers 404 to ``/completions`` as a chat-only API does.
The client is the real remote engine with the 0.5B's tokenizer and chat template.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from specedit.app.answer.answer import answer
from specedit.app.answer.prompts import QUOTE_ASK
from specedit.app.edit.rewrite import rewrite
from specedit.app.options import LoadConfig, RewriteOptions
from specedit.app.runtime.loaded_model import load_model
from specedit.app.runtime.remote_engine import _Opening
from specedit.app.runtime.runner import TextSink
from specedit.app.server.http_serve import HttpThread

sys.path.insert(0, os.path.dirname(__file__))
from toy_server import ServerToy, toy_loaded  # noqa: E402

FILE = "TIMEOUT = 30\n\n\ndef fetch(url):\n    return get(url, timeout=TIMEOUT)\n"
ASK = "Change TIMEOUT from 30 to 60."
# what a chat model writes when nothing is pre-filled: a word, its own fence, the blocks
REPLY = (
    "Here is the change:\n```python\n<<<<<<< SEARCH\nTIMEOUT = 30\n=======\n"
    "TIMEOUT = 60\n>>>>>>> REPLACE\n```\n"
)


class ChatToy(ServerToy):
    """A toy that writes ``script`` byte by byte after the last ``after`` in its context
    (the end of the user's message: the toy's chat template is the messages' contents),
    then newlines."""

    def __init__(self, script: str, after: str) -> None:
        super().__init__()
        self.script, self.after = script.encode(), after.encode()

    def _row(self, upto: int) -> np.ndarray:
        ctx = bytes(t % 256 for t in self.toks[: upto + 1])
        at = ctx.rfind(self.after)
        if at < 0:
            return super()._row(upto)
        written = len(ctx) - (at + len(self.after))
        row = np.zeros(self.n_vocab, dtype=np.float32)
        row[self.script[written] if written < len(self.script) else ord("\n")] = 30.0
        return row


def _feed(opening: str, text: str, step: int) -> str:
    sink = TextSink(None, None, None)
    o = _Opening(sink, opening)
    for i in range(0, len(text), step):
        o.feed(text[i : i + step])
    o.flush()
    return sink.finish()


@pytest.mark.parametrize("step", [1, 3, 1000])
def test_a_chat_models_own_opening_is_dropped_however_the_stream_is_cut(step):
    blocks = "```python\n<<<<<<< SEARCH\n"
    assert _feed(blocks, REPLY, step) == REPLY.split("<<<<<<< SEARCH\n", 1)[1]
    # another fence, another language, no SEARCH line: only the fence line goes
    assert _feed(blocks, "~~~py\nTIMEOUT = 30\n", step) == "TIMEOUT = 30\n"
    # the whole file, fenced: the text after the fence
    assert _feed("```python\n", "```python\nx = 1\n```\n", step) == "x = 1\n```\n"
    # no fence at all: the answer is the text itself; no opening: the same
    assert _feed("```python\n", "x = 1\n", step) == "x = 1\n"
    assert _feed("", "A sentence.\n```\nquoted\n```\n", step) == "A sentence.\n```\nquoted\n```\n"


class ChatOnly(ThreadingHTTPServer):
    """A proxy to ``upstream`` that has no ``/completions`` (404, OpenAI's error shape), as
    a chat-only API; it records the paths asked for."""

    def __init__(self, upstream: str) -> None:
        self.upstream, self.paths = upstream.rsplit("/v1", 1)[0], []
        super().__init__(("127.0.0.1", 0), _Proxy)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Proxy(BaseHTTPRequestHandler):
    def log_message(self, *a) -> None:
        pass

    def _relay(self, method: str) -> None:
        self.server.paths.append((method, self.path))
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        if self.path.endswith("/v1/completions"):
            out = json.dumps({"error": {"message": "no such route", "type": "invalid"}})
            code, data, kind = 404, out.encode(), "application/json"
        else:
            req = urllib.request.Request(self.server.upstream + self.path, body, method=method)
            req.add_header("Content-Type", "application/json")
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    code, data, kind = r.status, r.read(), r.headers.get("Content-Type")
            except urllib.error.HTTPError as e:
                code, data, kind = e.code, e.read(), "application/json"
        self.send_response(code)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._relay("GET")

    def do_POST(self) -> None:
        self._relay("POST")


def _remote(path, engine: str):
    return load_model(LoadConfig(model=str(path), engine=engine, n_ctx=4096))


@pytest.mark.model
def test_a_blocks_edit_over_a_chat_only_api_is_the_right_edit(qwen05_path):
    toy = ChatToy(REPLY, "then close the code block.")
    with HttpThread(toy_loaded(toy)) as th:
        loaded = _remote(qwen05_path, f"openai-chat:{th.base_url}")
        res = rewrite(loaded, FILE, RewriteOptions(instruction=ASK, edit="blocks"), path="net.py")
        assert res.status == "ok", res.message
        assert res.new_text == FILE.replace("30", "60")
        s = res.stats.snapshot()
        assert s["backend"] == "remote" and s["edit_mode"] == "blocks"
        assert loaded.runner.api == "chat"


@pytest.mark.model
def test_openai_falls_back_to_chat_when_the_server_has_no_completions(qwen05_path):
    toy = ChatToy(REPLY, "then close the code block.")
    with HttpThread(toy_loaded(toy)) as th:
        proxy = ChatOnly(th.base_url)
        try:
            loaded = _remote(qwen05_path, f"openai:{proxy.url}")
            opts = RewriteOptions(instruction=ASK, edit="blocks")
            for _ in range(2):  # the second edit goes to the chat API at once
                res = rewrite(loaded, FILE, opts, path="net.py")
                assert res.status == "ok" and res.new_text == FILE.replace("30", "60")
            posts = [p for m, p in proxy.paths if m == "POST"]
            assert posts == ["/v1/completions", "/v1/chat/completions", "/v1/chat/completions"]
            assert loaded.runner.api == "chat"
        finally:
            proxy.shutdown()
            proxy.server_close()


@pytest.mark.model
def test_an_answer_over_a_chat_only_api_has_its_quotes_checked(qwen05_path):
    said = "Sixty seconds.\n\n[net.py]\n```\nTIMEOUT = 30\n```\n"
    toy = ChatToy(said, QUOTE_ASK)
    with HttpThread(toy_loaded(toy)) as th:
        loaded = _remote(qwen05_path, f"openai-chat:{th.base_url}")
        opts = RewriteOptions(instruction="-", max_tokens=64)
        res = answer(loaded, "What is the timeout?", [("net.py", FILE)], opts)
        assert res.text.strip() == said.strip()
        assert [c.found for c in res.citations] == [True]
