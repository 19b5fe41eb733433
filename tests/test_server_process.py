"""``specedit serve`` as a real process (the CLI, its signal handlers and its log file) over the
numpy toy model (``tests/toy_server.py``): a rewrite cancelled, abandoned by its client or
stopped by SIGTERM in its prefill ends after the call in flight; at the descriptor limit new
clients are refused cleanly; a short soak. Progress is counted in the model's calls, which
the toy logs, never in seconds."""

from __future__ import annotations

import re
import signal
import time

import pytest
from rpc_client import Closed, RpcClient
from toy_server import ServeProcess, serve_process

from specedit.bench.server_bench import ACTIONS, soak
from specedit.engine.prefill import CHUNK as PREFILL_CHUNK

pytestmark = pytest.mark.timeout(300)

C = PREFILL_CHUNK
LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(60))  # 13 chunks


def _start(c: RpcClient, text: str = LONG) -> str:
    params = {"text": text, "path": "m.py", "instruction": "Add docstrings"}
    return c.call("rewrite/start", {**params, "options": {"maxTokens": 8}})["sessionId"]


def _logged(sp: ServeProcess, needle: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while needle not in sp.log_text():
        assert time.monotonic() < deadline, f"never logged: {needle}"
        time.sleep(0.01)


def _calls_after_the_cancel(sp: ServeProcess, sid: str) -> tuple[int, int, int]:
    """(toy calls logged between the session's cancel and its end, prompt tokens read when it
    was cancelled, prompt tokens read in all), from the server's log. The server logs a
    session's end right after it notifies ``rewrite/done``: wait for that line."""
    _logged(sp, f"session {sid}: cancelled")
    lines = sp.log_text().splitlines()
    a = next(i for i, x in enumerate(lines) if f"session {sid}: cancelling" in x)
    b = next(i for i, x in enumerate(lines) if f"session {sid}: cancelled" in x)
    calls = sum("toy eval at" in x for x in lines[a:b])
    read_then = int(re.search(r"(\d+) of \d+ prompt tokens read", lines[a]).group(1))
    read_all = int(re.search(r"\((\d+) of \d+ prompt tokens read", lines[b]).group(1))
    return calls, read_then, read_all


def test_cancel_disconnect_and_sigterm_end_a_prefill_within_one_chunk(tmp_path):
    """Issue 12 item 12 on a real server: each way ends the rewrite once the chunk in flight
    (the second of 13, held until the server has seen the cancel) is done: no call after it."""
    sp = serve_process(tmp_path, hold_at=C)
    try:
        c = sp.client()
        sid = _start(c)  # 1: rewrite/cancel
        sp.held(1)
        assert c.call("rewrite/cancel", {"sessionId": sid}) == {"cancelled": True}
        sp.release(1)
        done = c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid)
        assert done["status"] == "cancelled" and done["stats"]["prompt_tokens"] == 2 * C
        assert _calls_after_the_cancel(sp, sid) == (0, C, 2 * C)

        gone = sp.client()  # 2: the client vanishes
        sid = _start(gone)
        sp.held(2)
        gone.close()
        _logged(sp, f"session {sid}: cancelling")
        sp.release(2)
        _logged(sp, f"session {sid}: cancelled")
        assert _calls_after_the_cancel(sp, sid) == (0, C, 2 * C)

        sid = _start(c)  # 3: SIGTERM to the server
        sp.held(3)
        sp.proc.send_signal(signal.SIGTERM)
        _logged(sp, f"session {sid}: cancelling")
        sp.release(3)
        done = c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid)
        assert done["status"] == "cancelled"  # its client is told before the server goes
        assert _calls_after_the_cancel(sp, sid) == (0, C, 2 * C)
        assert sp.proc.wait(60) == 0
        assert not sp.socket.exists() and not sp.socket.with_suffix(".json").exists()
        assert "SIGTERM: stopping" in sp.log_text()
        c.close()
    finally:
        sp.stop()


def test_at_the_descriptor_limit_new_clients_are_refused_cleanly(tmp_path):
    """Issue 12 item 13: with 64 descriptors, clients past what is left get -32803 and are
    closed at once (none hangs); asyncio prints nothing to stderr; the server recovers."""
    sp = serve_process(tmp_path, nofile=64)
    clients, refused = [], 0
    try:
        for _ in range(60):
            c = RpcClient.unix(sp.socket, timeout=30)
            try:
                c.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
            except OSError:
                pass  # refused and closed already: the error is still there to read
            msg = c.read()
            if "error" in msg:
                assert msg["id"] is None and msg["error"]["code"] == -32803, msg
                assert "connections" in msg["error"]["message"]
                refused += 1
                with pytest.raises((Closed, OSError)):
                    c.read()
                c.close()
            else:
                assert msg["result"]["server"] == "specedit"
                clients.append(c)
        assert clients and refused and len(clients) + refused == 60
        for c in clients:
            c.close()
        deadline = time.monotonic() + 60
        while True:  # the closed ones free their descriptors: new clients are served again
            c = RpcClient.unix(sp.socket, timeout=30)
            c.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
            msg = c.read()
            c.close()
            if "result" in msg:
                break
            assert time.monotonic() < deadline, msg
            time.sleep(0.1)
        sp.proc.send_signal(signal.SIGTERM)
        assert sp.proc.wait(60) == 0
        err = sp.stderr()
        assert "Traceback" not in err and "Error" not in err, err[-2000:]
        assert "refusing more" in sp.log_text()
    finally:
        for c in clients:
            c.close()
        sp.stop()


def test_short_soak(tmp_path):
    """Issue 12: clients connect, start, cancel and vanish at random for a few seconds; the
    server answers after, holds no more descriptors than before, and its memory settles."""
    import json

    sp = serve_process(tmp_path, "--tcp")
    try:
        info = json.loads(sp.socket.with_suffix(".json").read_text())
        tcp = (info["tcp"]["port"], info["tcp"]["token"])
        rep = soak(sp.socket, sp.proc.pid, seconds=8, clients=6, text=LONG, seed=3, tcp=tcp)
        print(f"\nsoak: {rep.to_json()}")
        assert not rep.errors, rep.errors[:5]
        assert rep.answers_after and rep.connections > 20
        assert set(rep.actions) == set(ACTIONS)  # every kind of client came
        assert rep.fds_after <= rep.fds_before
        assert rep.rss_kb_after < rep.rss_kb_before + 32 * 1024  # settles: no per-client growth
    finally:
        sp.stop()
