"""The socket server's protocol on the numpy toy model: methods, queue, cancel, warm-ups,
security, bad input, load. What the model writes does not matter here (the toy's output never
closes its fence: results are ``truncated``); ``test_server_model.py`` runs the 0.5B end to end.
Where a test must act while the model works, the toy holds one call until it is released
(``tests/toy_server.py``), and the test counts calls, never seconds."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest
from rpc_client import Closed, RpcClient
from toy_server import CachingToy, ServerToy, toy_loaded

from specedit.app.server import Server, ServerThread
from specedit.app.server.paths import AlreadyRunning, ServerSetupError, claim, peer_uid
from specedit.engine.prefill import CHUNK as PREFILL_CHUNK

pytestmark = pytest.mark.timeout(300)

C = PREFILL_CHUNK
TEXT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
RENAME = {"instruction": "Rename the function add to plus", "range": {"startLine": 0, "endLine": 2}}
LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(60))  # ~1,600 tokens


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def toy() -> ServerToy:
    return ServerToy()


@pytest.fixture(scope="module")
def server(toy, tmp_path_factory, monkeypatch_module):
    d = tmp_path_factory.mktemp("srv")
    monkeypatch_module.setenv("SPECEDIT_STATE_DIR", str(d / "state"))
    with ServerThread(toy_loaded(toy), d / "run" / "rpc.sock") as st:
        yield st


@pytest.fixture
def client(server):
    c = RpcClient.unix(server.socket_path)
    c.call("initialize", {"client": "pytest", "version": "1"})
    yield c
    c.close()


def _start(c: RpcClient, **kw) -> str:
    """A rewrite; whole-file (the toy never writes blocks, so ``auto`` would run two stages)
    unless ``options`` says otherwise."""
    params = {"text": TEXT, "path": "m.py", **RENAME, "options": {"maxTokens": 24}}
    params.update(kw)
    params["options"] = {"edit": "whole", **params["options"]}
    return c.call("rewrite/start", params)["sessionId"]


def _long(c: RpcClient, **kw) -> str:
    """A rewrite of LONG: its prefill takes 13 chunks."""
    return _start(c, text=LONG, range=None, instruction="Add docstrings", **kw)


def _done(c: RpcClient, sid: str, timeout: float = 120) -> dict:
    return c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid, timeout)


def _held(toy: ServerToy) -> int:
    """Wait until the toy holds its call; the number of calls made before it."""
    assert toy.holding.wait(60), "the model never reached the held call"
    return len(toy.evals)


def _until(pred, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def test_files_and_initialize(server, client):
    sock = server.socket_path
    assert stat.S_IMODE(os.stat(sock.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    disc = sock.with_suffix(".json")
    assert stat.S_IMODE(os.stat(disc).st_mode) == 0o600
    info = json.loads(disc.read_text())
    assert info["socket"] == str(sock) and info["pid"] == os.getpid()
    assert info["protocolVersion"] == 1 and info["model"] == "toy" and "tcp" not in info
    res = client.call("initialize", {"client": "x", "version": "2"})
    assert res["server"] == "specedit" and res["protocolVersion"] == 1
    assert res["backend"] == "toy" and res["model"] == "toy"


def test_rewrite_streams_reading_progress_and_previews(server, client, toy, tmp_path):
    toy.hold(C)  # the second chunk of the prefill
    sid = _long(client, options={"maxTokens": 40})
    _held(toy)
    reading = client.wait_notification(
        "rewrite/progress", lambda p: p["sessionId"] == sid and p.get("readTokens") == C
    )
    assert reading["phase"] == "reading" and reading["promptTokens"] > 12 * C
    toy.release.set()
    done = _done(client, sid)
    assert done["status"] == "truncated" and done["output"] is None  # the toy never closes
    assert "maxTokens" in done["message"]
    stats = done["stats"]
    assert stats["generated_tokens"] == 40 and stats["prompt_tokens"] == reading["promptTokens"]
    progress = client.notifications("rewrite/progress")
    assert all(p["sessionId"] == sid for p in progress)
    assert {"tokPerSec", "acceptance", "tokensPerStep", "elapsedMs", "queuePosition"} <= set(
        progress[-1]
    )
    assert progress[-1]["phase"] == "generating"
    previews = client.notifications("rewrite/preview")
    assert [p["seq"] for p in previews] == list(range(1, len(previews) + 1))
    # a truncated result is never applied
    f = tmp_path / "m.py"
    f.write_text(LONG)
    err = client.request("rewrite/apply", {"sessionId": sid, "path": str(f)})["error"]
    assert err["code"] == -32803 and "cut short" in err["message"] and f.read_text() == LONG
    e = client.request("rewrite/apply", {"sessionId": "nope", "path": str(f)})
    assert e["error"]["code"] == -32602
    e = client.request("rewrite/apply", {"sessionId": sid, "path": "m.py"})
    assert e["error"]["code"] == -32602  # relative paths are refused


def test_queue_positions_and_cancel(server, client, toy):
    other = RpcClient.unix(server.socket_path)
    try:
        toy.hold(C)
        first = _long(client)
        _held(toy)  # running, in its prefill
        second = _start(other)
        third = _start(other)
        p2 = other.wait_notification("rewrite/progress", lambda p: p["sessionId"] == second)
        p3 = other.wait_notification("rewrite/progress", lambda p: p["sessionId"] == third)
        assert (p2["state"], p2["queuePosition"]) == ("queued", 1)
        assert (p3["state"], p3["queuePosition"]) == ("queued", 2)
        # cancelling a queued request moves the next one up
        assert other.call("rewrite/cancel", {"sessionId": second}) == {"cancelled": True}
        d2 = _done(other, second)
        assert d2["status"] == "cancelled" and d2["output"] is None
        p3 = other.wait_notification(
            "rewrite/progress", lambda p: p["sessionId"] == third and p["queuePosition"] == 1
        )
        # the running one is cancelled with $/cancelRequest on its rewrite/start id
        client.notify("$/cancelRequest", {"id": client.next_id - 1})
        client.call("initialize", {})  # requests are handled in order: the cancel was seen
        toy.release.set()
        d1 = _done(client, first)
        assert d1["status"] == "cancelled"
        d3 = _done(other, third)
        assert d3["status"] == "truncated"
        again = other.call("rewrite/cancel", {"sessionId": third})
        assert again == {"cancelled": False}
    finally:
        other.close()


@pytest.mark.parametrize("how", ["rewrite/cancel", "$/cancelRequest", "disconnect"])
def test_a_cancel_waits_for_the_chunk_in_flight_only(server, toy, how):
    """Issue 12 item 12: cancel, $/cancelRequest and a vanished client stop a rewrite in its
    prefill after the call in flight: not one more chunk of the 13 is read."""
    c = RpcClient.unix(server.socket_path)
    c.call("initialize", {})
    toy.hold(C)
    sid = _long(c)
    before = _held(toy)  # the second chunk is in flight
    job = server.server.scheduler.get(sid)
    if how == "rewrite/cancel":
        assert c.call("rewrite/cancel", {"sessionId": sid}) == {"cancelled": True}
    elif how == "$/cancelRequest":
        c.notify("$/cancelRequest", {"id": c.next_id - 1})
        c.call("initialize", {})
    else:
        c.close()
    _until(job.cancel.is_set, "the server saw the cancel")
    toy.release.set()
    _until(lambda: job.state == "done", "the job ended")
    assert job.done["status"] == "cancelled"
    assert toy.evals[before:] == [(C, C)]  # the chunk in flight, then nothing
    assert job.done["stats"]["prompt_tokens"] == 2 * C < job.metrics.read_total
    if how != "disconnect":
        assert _done(c, sid)["status"] == "cancelled"
        c.close()


def test_a_start_sent_as_a_notification_has_no_request_id(server, client, toy):
    """Issue 12 item 14: $/cancelRequest of an earlier request must not cancel a rewrite/start
    that came as a notification (it has no id of its own)."""
    client.call("initialize", {})
    init_id = client.next_id - 1
    toy.hold(C)
    client.notify("rewrite/start", {"text": LONG, "instruction": "x", "options": {"maxTokens": 4}})
    _held(toy)
    job = server.server.scheduler.running
    assert job is not None and job.request_id is None
    client.notify("$/cancelRequest", {"id": init_id})
    client.call("initialize", {})  # handled in order: the cancel request was seen
    assert not job.cancel.is_set()
    toy.release.set()
    assert _done(client, job.id)["status"] == "truncated"


def _warm(c: RpcClient, text: str, path: str, **kw) -> int:
    return c.call("rewrite/warm", {"text": text, "path": path, **kw})["warmId"]


def _warmed(c: RpcClient, wid: int, timeout: float = 120) -> dict:
    return c.wait_notification("rewrite/warmed", lambda p: p["warmId"] == wid, timeout)


@pytest.fixture(scope="module")
def caching(tmp_path_factory):
    """A server over a toy whose prefix cache is visible, as llama.cpp's is."""
    toy = CachingToy()
    with ServerThread(toy_loaded(toy), tmp_path_factory.mktemp("warm") / "rpc.sock") as st:
        c = RpcClient.unix(st.socket_path)
        c.call("initialize", {})
        yield st, toy, c
        c.close()


def test_warm_up_then_rewrite(caching):
    _, _, client = caching
    w = _warmed(client, _warm(client, LONG, "w.py"))
    assert w["status"] == "done" and w["path"] == "w.py"
    assert w["cachedTokens"] == 0 and w["prefixTokens"] == w["evaluatedTokens"] > 10 * C
    assert _warmed(client, _warm(client, LONG, "w.py"))["status"] == "cached"
    sid = _start(client, text=LONG, path="w.py", range={"startLine": 0, "endLine": 2})
    done = _done(client, sid)
    assert done["status"] == "truncated"
    # the whole file was prefilled already: only the region and the instruction were left
    assert done["stats"]["cached_tokens"] >= w["prefixTokens"]
    assert done["stats"]["prompt_tokens"] < 200
    # given the range too, the warm-up leaves only the instruction
    rng = {"startLine": 3, "endLine": 5}
    w = _warmed(client, _warm(client, LONG, "w.py", range=rng))
    assert w["status"] == "done"
    done = _done(client, _start(client, text=LONG, path="w.py", range=rng))
    assert done["stats"]["cached_tokens"] >= w["prefixTokens"]
    assert done["stats"]["prompt_tokens"] < 120
    bad = {"text": LONG, "range": {"startLine": 9, "endLine": 2}}
    assert client.request("rewrite/warm", bad)["error"]["code"] == -32602
    # a file whose whole rewrite does not fit the context: its outline is what is read
    too_long = _warmed(client, _warm(client, "x = 1\n" * 3000, "long.py"))
    # (the outline may take OUTLINE_SHARE of the context; the file itself is 18,000 bytes)
    assert too_long["status"] == "done" and too_long["prefixTokens"] < 8192
    assert client.request("rewrite/warm", {"text": " "})["error"]["code"] == -32602
    assert client.request("rewrite/warm", {"text": "x", "path": 3})["error"]["code"] == -32602


def test_a_rewrite_interrupts_a_warm_up_and_a_newer_one_supersedes(caching):
    st, toy, client = caching
    st.server.loaded.target.rollback(0)
    toy.hold(C)
    wid = _warm(client, LONG + "# big\n", "big.py")
    _held(toy)  # the warm-up runs (the model was idle): its second chunk is in flight
    sid = _start(client)
    toy.release.set()
    w = _warmed(client, wid)
    assert w["status"] == "interrupted", w
    assert w["evaluatedTokens"] == 2 * C < w["prefixTokens"]  # it stopped after that chunk
    assert _done(client, sid)["status"] == "truncated"
    # while a rewrite runs, warm-ups wait; only the newest one runs after it
    toy.hold(C)
    st.server.loaded.target.rollback(0)
    sid = _long(client)
    _held(toy)
    older, newer = _warm(client, LONG, "big.py"), _warm(client, TEXT, "m.py")
    assert _warmed(client, older)["status"] == "superseded"
    toy.release.set()
    assert _done(client, sid)["status"] == "truncated"
    assert _warmed(client, newer)["status"] == "done"


def _frames_error(c: RpcClient, data: bytes) -> dict:
    c.send_raw(data)
    return c.read()


def test_bad_input(server, client):
    assert _frames_error(client, b"Content-Length: 5\r\n\r\n{nope")["error"]["code"] == -32700
    assert _frames_error(client, b"Content-Length: 2\r\n\r\n\xff\xfe")["error"]["code"] == -32700
    assert _frames_error(client, b"X-Junk: 1\r\n\r\n")["error"]["code"] == -32700
    assert _frames_error(client, b"garbage\r\n\r\n")["error"]["code"] == -32700
    assert client.request("no/such")["error"]["code"] == -32601
    assert client.request("rewrite/start", {"text": 1})["error"]["code"] == -32602
    assert client.request("rewrite/start", [1, 2])["error"]["code"] == -32602
    bad_range = {"text": TEXT, "instruction": "x", "range": {"startLine": 5, "endLine": 2}}
    assert client.request("rewrite/start", bad_range)["error"]["code"] == -32602
    bad_opt = {"text": TEXT, "instruction": "x", "options": {"temperature": -1}}
    assert client.request("rewrite/start", bad_opt)["error"]["code"] == -32602
    client.send({"jsonrpc": "1.0", "id": 7, "method": "initialize"})
    assert client.read()["error"]["code"] == -32600
    client.send([])
    assert client.read()["error"]["code"] == -32600
    client.send([{"jsonrpc": "2.0", "id": 8, "method": "initialize"}, 5])
    batch = client.read()
    assert batch[0]["id"] == 8 and batch[1]["error"]["code"] == -32600
    client.send({"jsonrpc": "2.0", "method": "$/setTrace", "params": {}})  # ignored
    assert client.call("initialize", {"client": "still here"})["server"] == "specedit"
    # oversized Content-Length: an error, then the connection is closed
    big = RpcClient.unix(server.socket_path)
    err = _frames_error(big, b"Content-Length: 999999999\r\n\r\n")
    assert err["error"]["code"] == -32600
    with pytest.raises((Closed, OSError)):
        big.read()
    big.close()
    # a client that vanishes mid-frame
    half = RpcClient.unix(server.socket_path)
    half.send_raw(b"Content-Length: 100\r\n\r\n{")
    half.close()
    assert client.call("initialize", {})["server"] == "specedit"


def test_a_repeated_content_length_does_not_stall_the_connection(server, client):
    """Issue 12 item 14: the same length twice is one frame; two different lengths leave the
    frame's end unknown: an error, then the connection is closed (never a stall)."""
    body = b'{"jsonrpc":"2.0","id":41,"method":"initialize","params":{}}'
    n = b"%d" % len(body)
    client.send_raw(b"Content-Length: " + n + b"\r\ncontent-length: " + n + b"\r\n\r\n" + body)
    assert client.read()["id"] == 41
    assert client.call("initialize", {})["server"] == "specedit"
    c = RpcClient.unix(server.socket_path, timeout=30)
    c.send_raw(b"Content-Length: 3\r\nContent-Length: " + n + b"\r\n\r\n" + body)
    assert c.read()["error"]["code"] == -32700
    with pytest.raises((Closed, OSError)):
        c.read()
    c.close()


def test_text_over_the_cli_limit_is_refused(server, client):
    from specedit.app.store.files import MAX_SOURCE_BYTES

    text = "x = 1\n" * (MAX_SOURCE_BYTES // 6 + 1)
    err = client.request("rewrite/start", {"text": text, "instruction": "x"})["error"]
    assert err["code"] == -32602 and f"{MAX_SOURCE_BYTES:,} bytes" in err["message"]
    err = client.request("rewrite/warm", {"text": "é" * (MAX_SOURCE_BYTES // 2 + 1)})["error"]
    assert err["code"] == -32602 and "bytes" in err["message"]


def test_parsing_runs_off_the_event_loop(server, client, monkeypatch):
    """Issue 12 item 13: the params of a start or warm-up (a large text, tree-sitter for
    ``expand: node``) and large bodies are parsed in a worker thread, never on the loop."""
    from specedit.app.server import core, rpc

    threads: dict[str, str] = {}

    def spy(name, fn):
        def wrapped(*a, **kw):
            if name != "_decode" or len(a[0]) >= rpc.THREAD_DECODE_BYTES:  # a large body
                threads[name] = threading.current_thread().name
            return fn(*a, **kw)

        monkeypatch.setattr(core if hasattr(core, name) else rpc, name, wrapped)

    spy("parse_start", core.parse_start)
    spy("parse_warm", core.parse_warm)
    spy("_decode", rpc._decode)
    text = TEXT * (rpc.THREAD_DECODE_BYTES // len(TEXT) + 1)  # a large body
    p = {"text": text, "path": "m.py", "instruction": "x", "options": {"expand": "node"}}
    p["range"] = {"startLine": 1, "endLine": 2}
    sid = client.call("rewrite/start", p)["sessionId"]
    client.call("rewrite/cancel", {"sessionId": sid})
    _done(client, sid)
    client.call("rewrite/warm", {"text": TEXT})
    loop_thread = server._thread.name
    assert set(threads) == {"parse_start", "parse_warm", "_decode"}
    assert loop_thread not in threads.values(), threads


def test_second_server_refused_and_stale_cleanup(server, tmp_path):
    with pytest.raises(AlreadyRunning):
        claim(server.socket_path)
    # a stale socket (its server died) is removed
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    sock = d / "rpc.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.close()
    sock.with_suffix(".json").write_text("{}")
    with ServerThread(toy_loaded(), sock) as st:
        c = RpcClient.unix(sock)
        assert c.call("initialize", {})["server"] == "specedit"
        c.close()
        assert json.loads(sock.with_suffix(".json").read_text())["socket"] == str(sock)
        assert st.server is not None
    assert not sock.exists() and not sock.with_suffix(".json").exists()
    # a directory others can write to is refused
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    with pytest.raises(ServerSetupError):
        claim(open_dir / "rpc.sock")


@contextlib.contextmanager
def _tcp_server(tmp_path: Path, **kw):
    """A toy server with TCP: (the thread, the port, the token)."""
    d = tmp_path / "run"
    with ServerThread(toy_loaded(), d / "rpc.sock", tcp=True, **kw) as st:
        info = json.loads((d / "rpc.json").read_text())
        yield st, info["tcp"]["port"], info["tcp"]["token"]


def test_tcp_needs_token(tmp_path):
    with _tcp_server(tmp_path) as (st, port, token):
        info = json.loads((tmp_path / "run" / "rpc.json").read_text())
        assert info["tcp"]["host"] == "127.0.0.1" and len(token) >= 32
        assert st.server.tcp_port == port
        c = RpcClient.tcp(port)
        assert c.request("rewrite/start", {"text": TEXT})["error"]["code"] == -32002
        c.close()
        c = RpcClient.tcp(port)
        assert c.request("initialize", {"token": "wrong"})["error"]["code"] == -32602
        with pytest.raises((Closed, OSError)):
            c.read()
        c.close()
        # issue 12 item 14: a token that is not ASCII is a wrong token, not a TypeError
        c = RpcClient.tcp(port)
        err = c.request("initialize", {"token": "jeton-é" + token[7:]})["error"]
        assert err["code"] == -32602 and "token" in err["message"]
        with pytest.raises((Closed, OSError)):
            c.read()
        c.close()
        c = RpcClient.tcp(port)
        assert c.call("initialize", {"token": token})["server"] == "specedit"
        # authenticated: the full frame limit applies
        assert c.request("rewrite/warm", {"text": "x" * 10_000, "path": 3})["error"]["code"] == (
            -32602
        )
        c.close()
        bound = {s.getsockname()[0] for srv in st.server._servers[1:] for s in srv.sockets}
        assert bound == {"127.0.0.1"}  # loopback only


def test_tcp_pre_auth_limits(tmp_path):
    """Issue 12 item 13: before its token, a TCP client may send small frames only, and must
    authenticate within ``preauth_s``; either way it gets an error and is closed."""
    from specedit.app.server.rpc import PREAUTH_MAX_CONTENT, Limits

    with _tcp_server(tmp_path, limits=Limits(preauth_s=1.0)) as (_, port, token):
        c = RpcClient.tcp(port)
        c.send_raw(b"Content-Length: %d\r\n\r\n" % (PREAUTH_MAX_CONTENT + 1))
        err = c.read()["error"]
        assert err["code"] == -32600 and str(PREAUTH_MAX_CONTENT) in err["message"]
        with pytest.raises((Closed, OSError)):
            c.read()
        c.close()
        c = RpcClient.tcp(port)  # says nothing: closed at the deadline
        err = c.read()["error"]
        assert err["code"] == -32002 and "within" in err["message"]
        with pytest.raises((Closed, OSError)):
            c.read()
        c.close()
        c = RpcClient.tcp(port)  # busy with other requests, but no token: closed all the same
        assert c.request("rewrite/cancel", {"sessionId": "x"})["error"]["code"] == -32002
        assert c.read()["error"]["code"] == -32002
        c.close()
        c = RpcClient.tcp(port)
        assert c.call("initialize", {"token": token})["server"] == "specedit"
        c.close()


def test_header_and_idle_timeouts(tmp_path):
    """Issue 12 item 13: a frame begun must be whole within ``frame_s``; a client silent for
    ``idle_s`` with nothing of its own running is closed, one whose rewrite runs is not."""
    from specedit.app.server.rpc import Limits

    toy = ServerToy()
    limits = Limits(frame_s=0.5, idle_s=0.5)
    with ServerThread(toy_loaded(toy), tmp_path / "rpc.sock", limits=limits) as st:
        c = RpcClient.unix(st.socket_path)
        c.send_raw(b"Content-Len")  # and nothing more
        err = c.read()["error"]
        assert err["code"] == -32700 and "whole within" in err["message"]
        with pytest.raises((Closed, OSError)):
            c.read()
        c.close()
        idle = RpcClient.unix(st.socket_path)
        idle.call("initialize", {})
        busy = RpcClient.unix(st.socket_path)
        busy.call("initialize", {})
        toy.hold(C)
        sid = _long(busy)
        _held(toy)
        with pytest.raises((Closed, OSError)):
            idle.read()  # closed once idle
        idle.close()
        _until(lambda: len(st.server.connections) == 1, "the idle client was closed")
        time.sleep(1.0)  # twice idle_s: the busy client stays
        assert len(st.server.connections) == 1
        toy.release.set()
        assert _done(busy, sid)["status"] == "truncated"
        assert busy.call("initialize", {})["server"] == "specedit"
        busy.close()


def test_connection_cap(tmp_path):
    """Issue 12 item 13: past the cap a client gets -32803 and is closed at once; when one
    leaves, a new one is served."""
    with ServerThread(toy_loaded(), tmp_path / "rpc.sock", max_connections=3) as st:
        clients = [RpcClient.unix(st.socket_path) for _ in range(3)]
        for c in clients:
            assert c.call("initialize", {})["server"] == "specedit"
        extra = RpcClient.unix(st.socket_path)
        err = extra.read()["error"]
        assert err["code"] == -32803 and "3 connections" in err["message"]
        with pytest.raises((Closed, OSError)):
            extra.read()
        extra.close()
        assert st.server.refused == 1
        clients.pop().close()
        _until(lambda: len(st.server.connections) == 2, "a client left")
        again = RpcClient.unix(st.socket_path)
        assert again.call("initialize", {})["server"] == "specedit"
        for c in [*clients, again]:
            c.close()


CAP_CHECK = """
import os, resource
from specedit.app.server.core import FD_RESERVE, MAX_CONNECTIONS, connection_cap
wide, soft = connection_cap(), resource.getrlimit(resource.RLIMIT_NOFILE)[0]
in_use = len(os.listdir("/proc/self/fd"))
resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + FD_RESERVE + 10, resource.RLIM_INFINITY))
print(wide, soft - in_use - FD_RESERVE - MAX_CONNECTIONS, connection_cap())
"""


def test_connection_cap_follows_the_fd_limit():
    """With 10 descriptors to spare beyond the reserve, about 10 connections (in a child
    process: the limit is the whole process's)."""
    import resource
    import subprocess
    import sys

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip("a low hard descriptor limit")
    out = subprocess.run(
        [sys.executable, "-c", CAP_CHECK.replace("resource.RLIM_INFINITY", str(hard))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    wide, room, narrow = (int(x) for x in out)
    assert 9 <= narrow <= 11  # listdir holds a descriptor or two of its own
    if room > 2:  # the usual limit leaves room for all of them: the cap is the constant
        from specedit.app.server.core import MAX_CONNECTIONS

        assert wide == MAX_CONNECTIONS


def test_peer_check(server):
    a, b = socket.socketpair(socket.AF_UNIX)
    assert peer_uid(a) == os.getuid()
    a.close()
    b.close()
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another user")
    pid = os.fork()
    if pid == 0:  # child: become nobody and try to talk to the server
        code = 1
        try:
            os.setgid(65534)
            os.setuid(65534)
            c = RpcClient.unix(server.socket_path, timeout=5)
            c.call("initialize", {})
        except (OSError, Closed):
            code = 0  # refused: no permission on the directory or closed by the peer check
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_peer_uid_is_unsigned():
    """Issue 12 item 14: uid_t is unsigned; a uid above 2**31 must not come back negative."""
    import struct

    class Sock:
        def getsockopt(self, level, opt, size):
            assert size == 12
            return struct.pack("iII", 42, 4294967294, 4294967294)

    assert peer_uid(Sock()) == 4294967294  # type: ignore[arg-type]


def _drop_log_handlers(log_path: Path, level: int) -> None:
    import logging

    logging.getLogger("specedit").setLevel(level)
    aio = logging.getLogger("asyncio")
    aio.propagate = True
    for logger in (logging.getLogger("specedit"), aio):
        for h in list(logger.handlers):
            if getattr(h, "baseFilename", None) == str(log_path):
                logger.removeHandler(h)
                h.close()


def test_log_file_and_shutdown(tmp_path):
    import logging

    from specedit.app.server.serve import _setup_logging

    level = logging.getLogger("specedit").level
    log_path = _setup_logging("DEBUG", str(tmp_path / "logs" / "server.log"), asyncio_too=True)
    sock = tmp_path / "run" / "rpc.sock"
    try:
        with ServerThread(toy_loaded(), sock):
            c = RpcClient.unix(sock)
            c.call("initialize", {"client": "logtest"})
            assert c.call("shutdown") is None
            e = c.request("rewrite/start", {"text": TEXT, **RENAME})["error"]
            assert e["code"] == -32600
            c.notify("exit")
            _until(lambda: not sock.exists(), "the socket is removed")
        logging.getLogger("asyncio").error("asyncio says %s", "hello")
    finally:
        _drop_log_handlers(log_path, level)
    text = log_path.read_text()
    assert "initialize from logtest" in text
    assert "asyncio says hello" in text  # asyncio's logger writes to the log file


def test_load_50_clients(server):
    """50 concurrent clients on the Unix socket: every one is answered."""
    n, errors, latencies = 50, [], []
    lock = threading.Lock()
    barrier = threading.Barrier(n)

    def one(i: int) -> None:
        try:
            c = RpcClient.unix(server.socket_path, timeout=30)
            barrier.wait(timeout=30)
            t = time.perf_counter()
            c.call("initialize", {"client": f"load{i}"})
            c.send_raw(b"Content-Length: 3\r\n\r\n{x}")
            assert c.read()["error"]["code"] == -32700
            sid = _start(c, options={"maxTokens": 8})
            c.call("rewrite/cancel", {"sessionId": sid})
            d = _done(c, sid, timeout=60)
            assert d["status"] in ("cancelled", "truncated")
            with lock:
                latencies.append(time.perf_counter() - t)
            c.close()
        except Exception as e:  # collected and reported below
            with lock:
                errors.append(repr(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert not errors, errors[:5]
    assert len(latencies) == n
    latencies.sort()
    print(f"\nload: {n} clients; p50 {latencies[n // 2] * 1000:.0f} ms")
    assert not server.server.scheduler.queue
    _until(lambda: not server.server.connections, "every client is gone")


def test_unused_server_object_releases_nothing(tmp_path):
    # constructing a Server does not touch the filesystem; only start() does
    Server(toy_loaded(), tmp_path / "x" / "rpc.sock")
    assert not (tmp_path / "x").exists()


def test_cli_refuses_a_second_server(server, capsys):
    import logging

    from specedit.app.cli.main import main

    loggers = [logging.getLogger("specedit"), logging.getLogger("asyncio")]
    before = [list(lg.handlers) for lg in loggers]
    try:
        rc = main(["serve", "--socket", str(server.socket_path), "--model", "no-such-model"])
    finally:
        for lg, had in zip(loggers, before, strict=True):
            for h in [h for h in lg.handlers if h not in had]:
                lg.removeHandler(h)
                h.close()
        loggers[1].propagate = True
    assert rc == 1  # refused before any model load: no such model would fail otherwise
    assert "already runs on" in capsys.readouterr().err


def test_range_expands_to_enclosing_node():
    from specedit.app.server.params import parse_start

    p = {"text": TEXT, "path": "m.py", "instruction": "x", "range": {"startLine": 1, "endLine": 2}}
    assert parse_start(p).range_json == {"startLine": 1, "endLine": 2}
    p["options"] = {"expand": "node"}
    assert parse_start(p).range_json == {"startLine": 0, "endLine": 2}
    assert parse_start(p).opts.region == (0, 2)
    p["path"] = "notes.unknown"
    assert parse_start(p).range_json == {"startLine": 1, "endLine": 2}
    p["options"] = {"expand": "node", "language": "python"}
    assert parse_start(p).range_json == {"startLine": 0, "endLine": 2}


def test_options_edit_picks_the_edit_mode():
    from specedit.app.server.params import parse_start
    from specedit.app.server.rpc import RpcError

    p = {"text": TEXT, "path": "m.py", "instruction": "x"}
    assert parse_start(p).opts.edit == "auto"  # the default: blocks, else the whole text
    for mode in ("auto", "blocks", "whole"):
        p["options"] = {"edit": mode}
        assert parse_start(p).opts.edit == mode
    p["options"] = {"edit": "diff"}
    with pytest.raises(RpcError, match="options.edit must be"):
        parse_start(p)


def test_options_verbatim_turns_the_search_guard_off():
    from specedit.app.server.params import parse_start
    from specedit.app.server.rpc import RpcError

    p = {"text": TEXT, "path": "m.py", "instruction": "x"}
    assert parse_start(p).opts.verbatim is True  # the default: SEARCH sides copy the file
    p["options"] = {"verbatim": False}
    assert parse_start(p).opts.verbatim is False
    p["options"] = {"verbatim": "no"}
    with pytest.raises(RpcError, match="options.verbatim must be a boolean"):
        parse_start(p)


def test_options_draft_takes_every_drafter_and_names_them_when_wrong():
    from specedit.app.options import DRAFT_MODES
    from specedit.app.server.params import parse_start
    from specedit.app.server.rpc import RpcError

    p = {"text": TEXT, "path": "m.py", "instruction": "x"}
    for mode in DRAFT_MODES:
        p["options"] = {"draft": mode}
        assert parse_start(p).opts.draft == mode
    p["options"] = {"draft": "ngram"}
    with pytest.raises(RpcError, match='"suffix"'):
        parse_start(p)
