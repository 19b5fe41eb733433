"""``--engine openai:URL``: the target on a real OpenAI-compatible server on loopback:
specedit's own ``serve --http`` (in this process) and llama.cpp's server
(``llama_cpp.server``, a subprocess), both with the 0.5B.

What is asserted holds whatever the servers' block sizes were and whatever the 0.5B
wrote: the stages that ran on the engine, the stats, and that only the right edit is
ever written (a correct blocks edit needs the 1.5B: README "A remote engine").
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from specedit.app.edit.rewrite import rewrite, warm
from specedit.app.options import LoadConfig, RewriteOptions
from specedit.app.runtime.loaded_model import load_model
from specedit.app.runtime.remote_engine import parse_engine
from specedit.app.server.http_serve import HttpThread
from specedit.engine.backend import ModelError

sys.path.insert(0, os.path.dirname(__file__))
from toy_server import ScriptedToy, toy_loaded  # noqa: E402

FILE = "TIMEOUT = 30\n\n\ndef fetch(url):\n    return get(url, timeout=TIMEOUT)\n"
ASK = "Make TIMEOUT 60 seconds instead of 30."
"""The instruction every test here sends."""


def remote(path, url: str):
    return load_model(LoadConfig(model=str(path), engine=f"openai:{url}", n_ctx=4096))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def own_api(qwen05):
    with HttpThread(qwen05) as th:
        yield th


@pytest.fixture(scope="module")
def llama_server(qwen05_path, tmp_path_factory):
    """llama.cpp's OpenAI-compatible server on loopback (stops with the module)."""
    pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python[server]")
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(qwen05_path)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2"]
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with open(log, "wb") as out:  # a file, not a pipe: nobody reads its log while it runs
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(3000):  # bounded: the 0.5B loads in seconds, on a busy machine in minutes
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("llama_cpp.server did not come up")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def auto_edit(loaded):
    """``--edit auto``: blocks first. The 0.5B's blocks are mostly malformed (bench/README,
    the edit suite), so it may fall back to the whole file; either way both stages ran on
    the engine, and the result is checked."""
    return rewrite(loaded, FILE, RewriteOptions(instruction=ASK), path="net.py")


def check_auto(s: dict) -> None:
    """The blocks stage ran first: it applied, or it was given up with its reason."""
    assert s["edit_mode"] == "blocks" or (s["edit_mode"] == "whole" and s["edit_fallback"])


def test_engine_specs():
    assert parse_engine("openai:http://127.0.0.1:8000/v1/") == ("http://127.0.0.1:8000/v1", "auto")
    assert parse_engine("openai-chat:https://api.openai.com/v1") == (
        "https://api.openai.com/v1",
        "chat",
    )
    for bad in ("http://x/v1", "openai:ftp://x", "vllm:http://x", "openai:"):
        with pytest.raises(ModelError, match="openai:http"):
            parse_engine(bad)


def test_predicted_output_counts_are_the_acceptance_of_the_prediction():
    """A server that reports OpenAI's predicted-output counts (and no figures of its own):
    they are the stats' acceptance, under the ``prediction`` source."""
    from specedit.app.runtime.remote_engine import copy_prediction_usage
    from specedit.engine.metrics import Metrics

    usage = {
        "completion_tokens": 40,
        "completion_tokens_details": {
            "accepted_prediction_tokens": 30,
            "rejected_prediction_tokens": 10,
        },
    }
    m = Metrics()
    copy_prediction_usage(m, usage)
    s = m.snapshot()
    assert s["drafted_tokens"] == 40 and s["accepted_tokens"] == 30 and s["acceptance"] == 0.75
    assert s["acceptance_by_source"] == {"prediction": 0.75}
    # a server's own figures win; no counts, or zero of both, say nothing
    own = Metrics(drafted_tokens=12, accepted_tokens=6)
    copy_prediction_usage(own, usage)
    assert (own.drafted_tokens, own.accepted_tokens) == (12, 6)
    for u in (
        None,
        {"completion_tokens": 5},
        {
            "completion_tokens_details": {
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            }
        },
    ):
        bare = Metrics()
        copy_prediction_usage(bare, u)
        assert bare.drafted_tokens == 0 and not bare.by_source


@pytest.mark.model
def test_an_edit_through_specedits_own_api(qwen05_path, own_api):
    loaded = remote(qwen05_path, own_api.base_url)
    assert loaded.runner.server == "specedit" and loaded.runner.prediction
    # a warm-up (the editor sends one while the user types) reads nothing here
    w = warm(loaded, FILE, path="net.py")
    assert w.status == "remote" and w.evaluated_tokens == 0 and w.prefix_tokens > 0
    res = auto_edit(loaded)
    assert res.status == "ok", res.message
    # right, or flagged by the checks (never written without --force)
    assert res.new_text == FILE.replace("30", "60") or res.suspect is not None, res.raw
    s = res.stats.snapshot()
    check_auto(s)
    assert s["backend"] == "remote" and "specedit at http://127.0.0.1" in s["device"]
    assert s["generated_tokens"] > 0 and s["decode_s"] >= 0 and s["prefill_s"] > 0


@pytest.mark.model
def test_cli_edit_through_llama_cpp_server(tmp_path, qwen05_path, llama_server):
    f = tmp_path / "net.py"
    f.write_text(FILE)
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(tmp_path / "state")}
    cmd = [sys.executable, "-m", "specedit.app.cli", "rewrite", str(f), "-i", ASK]
    cmd += ["--model", str(qwen05_path), "--engine", f"openai:{llama_server}"]
    cmd += ["--write", "--json", "--ctx", "4096"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    obj = json.loads(r.stdout)
    # the 0.5B's answer is not always right (its blocks are mostly malformed, and the
    # checks may refuse its whole rewrite): a result is written only when it is the edit
    if obj["written"]:
        assert f.read_text() == FILE.replace("30", "60"), r.stdout[-3000:]
    else:
        assert f.read_text() == FILE and (
            obj["status"] != "ok" or obj["suspect"] or not obj["hunks"]
        )
    s = obj["stats"]
    assert s["backend"] == "remote"
    check_auto(s)
    assert llama_server in s["device"] and s["generated_tokens"] > 0


class HeldToy(ScriptedToy):
    """The scripted toy (``tests/toy_server.py``; the model does not matter here) whose
    ``hold_call``-th call that returns logits waits until ``go`` is set."""

    def __init__(self, script: str, hold_call: int) -> None:
        super().__init__(script)
        self.hold_call, self.rows_calls = hold_call, 0
        self.go = threading.Event()

    def eval(self, tokens, pos, want):
        if len(want):
            self.rows_calls += 1
            if self.rows_calls == self.hold_call and not self.go.wait(120):
                raise RuntimeError("the test never released the held call")
        return super().eval(tokens, pos, want)


@pytest.mark.model
def test_a_server_that_dies_mid_stream_is_an_error_and_nothing_changes(qwen05_path):
    # the prefill's last call, then 3 decode steps stream; the 4th waits while the server
    # stops (its request cancelled first), so the stream ends before the answer did
    toy = HeldToy("```python\n" + FILE.replace("30", "60") + "```\n", hold_call=5)
    th = HttpThread(toy_loaded(toy)).start()
    try:
        loaded = remote(qwen05_path, th.base_url)
        pieces: list[str] = []

        def on_text(piece: str) -> None:
            pieces.append(piece)
            if len(pieces) == 1:
                asyncio.run_coroutine_threadsafe(th.api.close(), th.loop)
                for _ in range(1000):  # bounded: the close begins at once
                    if th.api._closing:
                        break
                    time.sleep(0.01)
                toy.go.set()

        opts = RewriteOptions(instruction=ASK, edit="whole")
        with pytest.raises(ModelError, match="stream"):
            rewrite(loaded, FILE, opts, path="net.py", on_text=on_text)
        assert pieces and th.api.cancelled == 1
    finally:
        toy.go.set()
        th.stop()


@pytest.mark.model
def test_engine_errors_are_one_line_and_nothing_is_written(
    tmp_path, monkeypatch, qwen05, qwen05_path
):
    port = free_port()  # nothing listens there
    with pytest.raises(ModelError, match="cannot reach the engine"):
        remote(qwen05_path, f"http://127.0.0.1:{port}/v1")
    with HttpThread(qwen05, token="s3cret") as th:
        with pytest.raises(ModelError, match="401"):
            remote(qwen05_path, th.base_url)
        monkeypatch.setenv("SPECEDIT_ENGINE_KEY", "s3cret")
        loaded = remote(qwen05_path, th.base_url)
        monkeypatch.delenv("SPECEDIT_ENGINE_KEY")
        with pytest.raises(ModelError, match="--exact needs a local model"):
            rewrite(loaded, FILE, RewriteOptions(instruction=ASK, exact=True), path="net.py")
    f = tmp_path / "net.py"
    f.write_text(FILE)
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(tmp_path / "state")}
    cmd = [
        sys.executable,
        "-m",
        "specedit.app.cli",
        "rewrite",
        str(f),
        "-i",
        ASK,
        "--write",
    ]
    cmd += ["--model", str(qwen05_path), "--engine", f"openai:http://127.0.0.1:{port}/v1"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "cannot reach the engine" in r.stderr
    assert f.read_text() == FILE
