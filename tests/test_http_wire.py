"""``specedit serve --http`` on its HTTP stack (Starlette on uvicorn), over the numpy toy.

What the API promised before it was served by a library, checked on the wire with raw
sockets, ``http.client`` and h11 as the client's parser: keep-alive, chunked bodies,
``Expect: 100-continue``, the bounds (413/411/408/503, the idle close, the header block),
the one-at-a-time queue (429), a client that leaves while queued or running, the bearer
token, and errors in OpenAI's shape. The toy's calls are counted and held
(``toy_server.ServerToy.hold``), never timed.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest
from http_wire import get, is_api_error, post, raw, read_all, responses
from toy_server import ServerToy, toy_loaded

from specedit.app.server import http_generation
from specedit.app.server.http_serve import HttpThread
from specedit.app.server.rpc import MAX_CONTENT_LENGTH, MAX_HEADER_BYTES, Limits

pytestmark = pytest.mark.timeout(120)

CHAT = "/v1/chat/completions"
DONE_STATES = ("stop", "length")
PLAIN = {"draft": "none"}
"""Plain decoding: one call a position, so a held position is a call's."""


def chat(max_tokens: int = 4, **kw) -> dict:
    body = {"model": "toy", "messages": [{"role": "user", "content": "hi"}]}
    return {**body, "max_tokens": max_tokens, "temperature": 0, **kw}


@pytest.fixture(scope="module")
def server():
    with HttpThread(toy_loaded()) as th:
        yield th


def port(th) -> int:
    return th.api.port


def wait_until(cond, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def in_thread(fn, *args, **kw) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run():
        try:
            out["reply"] = fn(*args, **kw)
        except Exception as e:  # the test reads it
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


# ---- routes, errors, keep-alive ------------------------------------------------------------


def test_routes_answer_and_errors_are_openai_shaped(server):
    p = port(server)
    assert get(p, "/health").json() == {"status": "ok", "model": "toy"}
    assert [m["id"] for m in get(p, "/v1/models").json()["data"]] == ["toy"]
    assert get(p, "/v1/models/toy").json()["owned_by"] == "specedit"
    r = get(p, "/v1/models/gpt-4o")
    assert is_api_error(r, 404) and r.json()["error"]["code"] == "model_not_found"
    assert is_api_error(post(p, "/v1/models", {}), 405)
    assert is_api_error(get(p, CHAT), 405)
    r = get(p, "/v2/nothing")
    assert is_api_error(r, 404) and r.json()["error"]["code"] == "not_found"
    r = post(p, CHAT, chat(temperature=5))
    assert is_api_error(r, 400) and r.json()["error"]["param"] == "temperature"
    r = post(p, CHAT, b"{not json")
    assert is_api_error(r, 400) and "not valid JSON" in r.json()["error"]["message"]


def test_one_connection_serves_request_after_request(server):
    c = http.client.HTTPConnection("127.0.0.1", port(server), timeout=60)
    try:
        first = post(port(server), CHAT, chat(), conn=c)
        sock = c.sock
        bad = post(port(server), CHAT, b"[", conn=c)  # a 400 keeps the connection
        again = post(port(server), "/v1/completions", {**chat(), "prompt": "x"}, conn=c)
        assert c.sock is sock  # no reconnect happened
        assert first.status == 200 and is_api_error(bad, 400) and again.status == 200
        assert first.json()["choices"][0]["finish_reason"] in DONE_STATES
    finally:
        c.close()


def test_a_stream_is_events_ending_with_done_and_the_usage_chunk(server):
    r = post(port(server), CHAT, chat(stream=True, stream_options={"include_usage": True}))
    assert r.status == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = r.events()
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-2]["choices"][0]["finish_reason"] in DONE_STATES
    assert "specedit" in chunks[-2]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 4


def test_an_error_before_any_text_is_an_error_even_when_streaming():
    with HttpThread(toy_loaded(ServerToy(n_ctx=64))) as th:
        body = chat(stream=True)
        body["messages"][0]["content"] = "x" * 200  # over the toy's context
        r = post(port(th), CHAT, body)
        assert is_api_error(r, 400)
        assert r.json()["error"]["code"] == "context_length_exceeded"


# ---- bodies and bounds ---------------------------------------------------------------------


def _head(path: str, extra: str = "") -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\n{extra}".encode()


def test_a_chunked_body_is_read_and_bounded(server):
    body = json.dumps(chat()).encode()
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(b), b) for b in (body[:10], body[10:])) + b"0\r\n\r\n"
    out = raw(
        port(server),
        _head(CHAT, "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n") + chunks,
    )
    (reply,) = responses(out)
    assert reply.status == 200 and reply.json()["object"] == "chat.completion"
    big = b"x" * (1 << 20)
    over = _head(CHAT, "Transfer-Encoding: chunked\r\n\r\n")
    over += b"".join(
        b"%x\r\n%s\r\n" % (len(big), big) for _ in range(MAX_CONTENT_LENGTH // len(big) + 1)
    )
    (reply,) = responses(raw(port(server), over))
    assert is_api_error(reply, 413) and reply.headers["connection"] == "close"


def test_over_the_limits_and_without_a_length(server):
    p = port(server)
    huge = _head(CHAT, f"Content-Length: {MAX_CONTENT_LENGTH + 1}\r\n\r\n{{")
    (reply,) = responses(raw(p, huge))
    assert is_api_error(reply, 413) and reply.headers["connection"] == "close"
    (reply,) = responses(raw(p, _head(CHAT, "\r\n")))
    assert is_api_error(reply, 411) and reply.headers["connection"] == "close"
    long_head = _head(CHAT, "X-Pad: " + "a" * MAX_HEADER_BYTES + "\r\n\r\n")
    (reply,) = responses(raw(p, long_head))
    assert is_api_error(reply, 400)
    (reply,) = responses(raw(p, b"this is not HTTP\r\n\r\n"))
    assert is_api_error(reply, 400)


def test_expect_100_continue_is_answered(server):
    body = json.dumps(chat()).encode()
    head = _head(CHAT, f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n")
    with socket.create_connection(("127.0.0.1", port(server)), timeout=30) as s:
        s.sendall(head + b"Connection: close\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 100")  # before the body was sent
        s.sendall(body)
        (reply,) = responses(read_all(s, 30))
    assert reply.status == 200 and reply.json()["object"] == "chat.completion"


def test_a_slow_request_gets_408_and_a_silent_connection_is_closed():
    limits = Limits(frame_s=0.3, idle_s=0.5)
    with HttpThread(toy_loaded(), limits=limits) as th:
        p = port(th)
        with socket.create_connection(("127.0.0.1", p), timeout=30) as s:
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # no end
            (reply,) = responses(read_all(s, 10))
        assert is_api_error(reply, 408)
        with socket.create_connection(("127.0.0.1", p), timeout=30) as s:
            s.sendall(_head(CHAT, "Content-Length: 50\r\n\r\n{"))  # a body never whole
            (reply,) = responses(read_all(s, 10))
        assert is_api_error(reply, 408)
        with socket.create_connection(("127.0.0.1", p), timeout=30) as s:
            assert read_all(s, 10) == b""  # closed, nothing said
        c = http.client.HTTPConnection("127.0.0.1", p, timeout=30)  # a quick one is served
        assert get(p, "/health", conn=c).status == 200
        wait_until(lambda: th.api.connections == 0)  # and closed once idle
        c.close()


def test_one_connection_over_the_cap_gets_503():
    with HttpThread(toy_loaded(), max_connections=2) as th:
        p = port(th)
        held = [socket.create_connection(("127.0.0.1", p), timeout=30) for _ in range(2)]
        try:
            wait_until(lambda: th.api.connections == 2)
            (reply,) = responses(raw(p, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
            assert is_api_error(reply, 503) and reply.headers["connection"] == "close"
        finally:
            for s in held:
                s.close()
        wait_until(lambda: th.api.connections == 0)
        assert get(p, "/health").status == 200


# ---- the queue -----------------------------------------------------------------------------


def test_requests_wait_their_turn_and_one_too_many_gets_429(monkeypatch):
    monkeypatch.setattr(http_generation, "MAX_QUEUE", 1)
    toy = ServerToy()
    with HttpThread(toy_loaded(toy)) as th:
        p = port(th)
        toy.hold(0)  # the first request's prefill waits
        a, out_a = in_thread(post, p, CHAT, chat())
        assert toy.holding.wait(30)
        b, out_b = in_thread(post, p, CHAT, chat())
        wait_until(lambda: th.api.generations._waiting == 1)
        r = post(p, CHAT, chat())
        assert is_api_error(r, 429) and r.json()["error"]["type"] == "rate_limit"
        toy.release.set()
        a.join(30)
        b.join(30)
        assert out_a["reply"].status == 200 and out_b["reply"].status == 200
        assert th.api.served == 2 and th.api.generations._waiting == 0


def test_a_client_that_leaves_is_dropped_from_the_queue_or_cancelled_within_a_call():
    toy = ServerToy()
    with HttpThread(toy_loaded(toy)) as th:
        p = port(th)
        toy.hold(0)
        body = json.dumps(chat(max_tokens=200, stream=True, specedit=PLAIN)).encode()
        running = socket.create_connection(("127.0.0.1", p), timeout=30)
        running.sendall(_head(CHAT, f"Content-Length: {len(body)}\r\n\r\n") + body)
        assert toy.holding.wait(30)
        queued = socket.create_connection(("127.0.0.1", p), timeout=30)
        queued.sendall(_head(CHAT, f"Content-Length: {len(body)}\r\n\r\n") + body)
        wait_until(lambda: th.api.generations._waiting == 1)
        queued.close()  # leaves while it waits: never runs
        wait_until(lambda: th.api.generations._waiting == 0)
        running.close()  # leaves while its first call is held
        wait_until(lambda: all(c.cancel.is_set() for c in th.api.generations._calls))
        calls = len(toy.evals)
        toy.release.set()
        wait_until(lambda: th.api.cancelled == 1)
        assert len(toy.evals) <= calls + 2  # the held call, at most one more
        r = post(p, CHAT, chat())
        assert r.status == 200 and th.api.served == 2  # the one that left queued never ran


def test_stopping_ends_a_stream_without_done_and_answers_the_queued_503():
    toy = ServerToy()
    th = HttpThread(toy_loaded(toy)).start()
    try:
        p = port(th)
        toy.hold(40)  # a decode call, after text went out
        a, out_a = in_thread(post, p, CHAT, chat(max_tokens=200, stream=True, specedit=PLAIN))
        assert toy.holding.wait(30)
        b, out_b = in_thread(post, p, CHAT, chat())
        wait_until(lambda: th.api.generations._waiting == 1)
        stopper = threading.Thread(target=th.stop, daemon=True)
        stopper.start()
        wait_until(lambda: th.api._closing)
        toy.release.set()
        stopper.join(30)
        a.join(30)
        b.join(30)
        events = out_a["reply"].events()
        assert events and "[DONE]" not in events  # cut short: not an answer that ended
        assert is_api_error(out_b["reply"], 503)
        assert th.api.cancelled == 1
    finally:
        toy.release.set()
        th.stop()


def test_a_bearer_token_is_needed_off_loopback():
    with HttpThread(toy_loaded(), token="s3cret") as th:
        p = port(th)
        out = raw(p, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\n\r\n")
        (reply,) = responses(out)  # one answer, then the connection closed
        assert is_api_error(reply, 401) and reply.json()["error"]["code"] == "invalid_api_key"
        assert is_api_error(get(p, "/health", headers={"Authorization": "Bearer nope"}), 401)
        ok = get(p, "/v1/models", headers={"Authorization": "Bearer s3cret"})
        assert ok.status == 200
