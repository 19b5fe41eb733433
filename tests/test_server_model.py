"""The socket server end to end on the real 0.5B model: a rewrite that comes back ``ok`` and
is applied, and ``rewrite/apply`` of a real ``specedit serve`` process SIGKILLed at random
points (the file holds its old or its new content, the backup intact). The protocol itself
is tested on the toy model (``test_server.py``, ``test_server_process.py``)."""

from __future__ import annotations

import hashlib
import os
import random
import sys
import threading
import time
from pathlib import Path

import pytest
from inject import check_whole, run_and_kill
from rpc_client import RpcClient

from specedit.app.server import ServerThread
from specedit.app.store.files import list_backups

pytestmark = [pytest.mark.model, pytest.mark.timeout(900)]

TEXT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
RENAME = {"instruction": "Rename the function add to plus", "range": {"startLine": 0, "endLine": 2}}


def _done(c: RpcClient, sid: str, timeout: float = 600) -> dict:
    return c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid, timeout)


def test_rewrite_range_streams_and_apply(qwen05, tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    f = tmp_path / "m.py"
    f.write_text(TEXT)
    sha = hashlib.sha256(TEXT.encode()).hexdigest()
    with ServerThread(qwen05, tmp_path / "run" / "rpc.sock") as st:
        client = RpcClient.unix(st.socket_path, timeout=600)
        client.call("initialize", {"client": "pytest"})
        # exact: the model's text is asserted
        params = {
            "text": TEXT,
            "path": "m.py",
            **RENAME,
            "options": {"maxTokens": 24, "exact": True},
        }
        sid = client.call("rewrite/start", {**params, "baseSha256": sha})["sessionId"]
        done = _done(client, sid)
        assert done["status"] == "ok", done
        assert done["output"].startswith("def plus(a, b):\n")
        assert done["output"].endswith("def sub(a, b):\n    return a - b\n")  # outside the range
        assert done["hunks"][0]["startLine"] == 0 and "plus" in done["hunks"][0]["newText"]
        assert done["validation"] == {
            "language": "python",
            "errorsBefore": 0,
            "errorsAfter": 0,
            "ok": True,
        }
        assert done["stats"]["generated_tokens"] > 0 and done["stats"]["backend"] == "llama.cpp"
        progress = client.notifications("rewrite/progress")
        assert progress and all(p["sessionId"] == sid for p in progress)
        e = client.request("rewrite/apply", {"sessionId": sid, "path": str(f), "hunkIds": [99]})
        assert e["error"]["code"] == -32602
        e = client.request("rewrite/apply", {"sessionId": sid, "path": str(tmp_path / "gone.py")})
        assert e["error"]["code"] == -32803
        res = client.call("rewrite/apply", {"sessionId": sid, "path": str(f), "hunkIds": []})
        assert res["appliedHunks"] == [] and f.read_text() == TEXT
        res = client.call("rewrite/apply", {"sessionId": sid, "path": str(f)})
        assert f.read_text() == done["output"]
        assert res["appliedHunks"] == [h["id"] for h in done["hunks"]]
        assert Path(res["backup"]).read_text() == TEXT and list_backups(f)
        # the file no longer matches baseSha256: ContentModified
        err = client.request("rewrite/apply", {"sessionId": sid, "path": str(f)})["error"]
        assert err["code"] == -32801
        client.close()


# ----------------------------------------------------------------------------- SIGKILL

SMALL = b"def add(a, b):\n    return a + b\n"


def _client_applies(sock: Path, path: Path, box: dict) -> None:
    """Wait for the server, rewrite ``path`` and apply the result (in a thread)."""
    try:
        deadline = time.monotonic() + 600
        while True:  # until this run's server listens (the test removed the last one's files)
            try:
                c = RpcClient.unix(sock, timeout=600)
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never listened"
                time.sleep(0.1)
        c.call("initialize", {"client": "kill-test"})
        text = path.read_text()
        params = {
            "text": text,
            "path": str(path),
            "instruction": "Rename the function add to plus.",
        }
        opts = {"maxTokens": 100, "exact": True}  # the text is asserted: an exact run
        sid = c.call("rewrite/start", {**params, "options": opts})["sessionId"]
        box["done"] = _done(c, sid)
        if box["done"]["status"] != "ok":  # no apply: stop the server, the test fails
            c.call("shutdown")
            c.notify("exit")
            return
        box["apply"] = c.request("rewrite/apply", {"sessionId": sid, "path": str(path)})
        c.close()
    except Exception as e:  # the server was killed: the file must still be whole
        box["error"] = repr(e)


def test_sigkill_during_rewrite_apply(tmp_path, qwen05_path, monkeypatch):
    """Issue 12: a real ``specedit serve`` SIGKILLed at random points just after it begins
    ``rewrite/apply``: the file is always whole, old or new, and its backup intact."""
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(state))  # where the server keeps backups
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(state)}
    sock, p = tmp_path / "run" / "rpc.sock", tmp_path / "m.py"
    cmd = [sys.executable, "-m", "specedit.app.cli", "--log-level", "INFO", "serve"]
    cmd += ["--socket", str(sock), "--model", str(qwen05_path), "--ctx", "2048"]

    def run(delay: float) -> tuple[dict, object]:
        p.write_bytes(SMALL)
        for f in (sock, sock.with_suffix(".json")):  # what the last, killed server left
            f.unlink(missing_ok=True)
        box: dict = {}
        client = threading.Thread(target=_client_applies, args=(sock, p, box), daemon=True)
        client.start()
        kill = run_and_kill(cmd, delay_s=delay, trigger="apply session", env=env)
        client.join(60)
        return box, kill

    box, whole = run(2.0)  # not killed: the apply succeeds and the server stays up
    assert whole.killed and box["done"]["status"] == "ok", box
    assert "result" in box["apply"], box
    assert check_whole(p, SMALL) == "new" and b"def plus(" in p.read_bytes()
    rng = random.Random(11)
    outcomes = []
    for _ in range(3):
        box, kill = run(rng.uniform(0, 0.03))
        assert kill.killed and box.get("done", {}).get("status") == "ok", (box, kill.output[-5:])
        outcomes.append(check_whole(p, SMALL))
    print(f"\n3 kills during rewrite/apply: {outcomes}")
