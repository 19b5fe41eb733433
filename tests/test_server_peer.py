"""``specedit bench peer`` and ``bench client``: llama-server's command lines and timings, the
build script's cache, the recorded client request, the tables (no model, no llama-server);
then one real run of both sides, only where llama-server is already built
(``make llama-server``), marked ``model``. The benches themselves run as ``specedit bench
peer`` / ``bench client`` (bench/README.md)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from specedit.bench import client_bench, server_peer
from specedit.bench import llama_server as ls
from specedit.bench.client_record import StubServer

ROOT = Path(__file__).resolve().parent.parent


def test_the_configs_are_the_documented_ones():
    assert list(ls.CONFIGS) == [
        "none",
        "ngram-simple",
        "ngram-map-k",
        "ngram-mod",
        "ngram-mod-short",
    ]
    assert ls.CONFIGS["none"].args == ()
    mod = ls.CONFIGS["ngram-mod"].args
    # docs/speculative.md: --spec-ngram-mod-n-match 24 --spec-ngram-mod-n-min 48 --...-n-max 64
    assert mod[:2] == ("--spec-type", "ngram-mod")
    assert dict(zip(mod[2::2], mod[3::2], strict=True)) == {
        "--spec-ngram-mod-n-match": "24",
        "--spec-ngram-mod-n-min": "48",
        "--spec-ngram-mod-n-max": "64",
    }
    args = ls.CONFIGS["ngram-mod-short"].args
    short = dict(zip(args[2::2], args[3::2], strict=True))
    assert int(short["--spec-ngram-mod-n-max"]) < 64
    assert set(ls.NGRAM) == set(ls.CONFIGS) - {"none"}


def test_a_server_listens_on_loopback_with_one_slot_and_the_threads_asked():
    cmd = ls.server_args(
        Path("/b/llama-server"), Path("/m.gguf"), 4321, ls.CONFIGS["ngram-simple"], 8192, 2
    )
    flags = dict(zip(cmd[1::2], cmd[2::2], strict=False))
    assert cmd[0] == "/b/llama-server" and flags["-m"] == "/m.gguf"
    assert flags["--host"] == "127.0.0.1" and flags["--port"] == "4321"
    assert flags["-np"] == "1" and flags["-t"] == flags["-tb"] == "2" and flags["-c"] == "8192"
    assert cmd[-4:] == ["--spec-type", "ngram-simple", "--spec-draft-n-max", "64"]


def test_timings_give_decode_speed_as_specedit_counts_it_and_the_acceptance():
    t = ls.parse_timings(
        {"timings": {"prompt_n": 300, "prompt_ms": 1500.0, "predicted_n": 101, "predicted_ms": 2000.0,
                     "predicted_per_second": 50.5, "draft_n": 80, "draft_n_accepted": 60}}
    )  # fmt: skip
    assert t.decode_tps == pytest.approx(50.0)  # 100 tokens after the first in 2 s
    assert t.predicted_per_second == 50.5 and t.prompt_n == 300
    assert t.acceptance == pytest.approx(0.75)
    plain = ls.parse_timings({"timings": {"predicted_n": 1, "predicted_ms": 0.0}})
    assert plain.decode_tps == 0.0 and plain.acceptance is None
    with pytest.raises(KeyError):
        ls.parse_timings({"content": "no timings"})


def test_the_binary_is_the_env_var_or_the_build_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("SPECEDIT_LLAMA_SERVER", raising=False)
    monkeypatch.setenv("SPECEDIT_LLAMA_SERVER_CACHE", str(tmp_path / "cache"))
    assert ls.binary() is None
    built = ls.cache_dir() / "llama-server"
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\n")
    assert ls.binary() is None  # not executable
    built.chmod(0o755)
    assert ls.binary() == built
    other = tmp_path / "mine"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    monkeypatch.setenv("SPECEDIT_LLAMA_SERVER", str(other))
    assert ls.binary() == other


def test_the_build_script_prints_a_cached_binary_without_building(tmp_path):
    cached = tmp_path / "9.9.9" / "llama-server"
    cached.parent.mkdir()
    cached.write_text("#!/bin/sh\n")
    cached.chmod(0o755)
    env = {**os.environ, "SPECEDIT_LLAMA_SERVER_CACHE": str(tmp_path), "LLAMA_VERSION": "9.9.9"}
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build-llama-server.sh")],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(cached)


def test_the_stub_records_what_a_client_posts():
    stub = StubServer("the reply")
    try:
        out, _ = ls.post(
            f"{stub.url}/chat/completions",
            {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
        with urllib.request.urlopen(f"{stub.url}/models") as r:
            models = json.loads(r.read())
    finally:
        stub.close()
    assert out["choices"][0]["message"]["content"] == "the reply"
    assert stub.requests == [{"model": "m", "messages": [{"role": "user", "content": "hi"}]}]
    assert models["data"][0]["id"]


def test_the_recorded_aider_request_is_aiders_whole_format_edit():
    rec = server_peer.load_client("aider-whole")
    msgs = rec["request"]["messages"]
    assert rec["client"] == "aider" and rec["edit_format"] == "whole"
    assert {m["role"] for m in msgs} == {"system", "user", "assistant"}
    assert rec["instruction"] in msgs[-1]["content"]
    sample = (ROOT / rec["file"]).read_text()
    assert any(sample.strip() in m["content"] for m in msgs)  # the file, word for word
    body = client_bench.replay_body(rec["request"])
    assert body["temperature"] == 0 and body["seed"] == ls.SEED and body["stream"] is False
    assert body["max_tokens"] == server_peer.CLIENT_MAX_TOKENS and body["messages"] == msgs


def test_differences_name_the_first_line_that_parts():
    assert server_peer.first_difference("a\nb\n", "a\nb\n") is None
    assert server_peer.first_difference("a\nb\nc", "a\nB\nc").startswith("line 2: 'b' vs 'B'")
    assert "shorter after line 1" in server_peer.first_difference("a", "a\nb")
    assert server_peer.body("x = 1\n```\n", "```") == "x = 1"
    assert server_peer.body("x = 1\n", "```") == "x = 1"


@dataclass
class FakePrompt:
    ids: tuple[int, ...] = (1, 2, 3)
    fence: str | None = "```"


@dataclass
class FakeTask:
    kind: str
    name: str
    prompt: FakePrompt = field(default_factory=FakePrompt)


def _run(mode: str, tps: float, text: str = "x = 1\n```", acc: float | None = None):
    return server_peer.Run(mode, tps, 10, text, acc)


def test_a_task_record_compares_with_plain_llama_server_and_takes_ratios():
    runs = {
        "server:none": [_run("server:none", 30.0), _run("server:none", 32.0)],
        "server:ngram-mod": [
            _run("server:ngram-mod", 60.0, acc=0.7),
            _run("server:ngram-mod", 62.0, acc=0.8),
        ],
        "server:ngram-simple": [_run("server:ngram-simple", 50.0, acc=0.9)] * 2,
        "specedit": [_run("specedit", 90.0, "x = 2\n```"), _run("specedit", 94.0, "x = 2\n```")],
        "pld10": [_run("pld10", 45.0)] * 2,
    }
    rec = server_peer.task_record(FakeTask("copy", "f.py"), runs, [100.0, 120.0, 115.0])
    assert rec["reference"] == "server:none"
    assert rec["ceiling_tps"] == 115.0
    assert rec["specedit_of_ceiling"] == round(92.0 / 115.0, 3)
    assert rec["best_server_of_ceiling"] == round(61.0 / 115.0, 3)
    m = rec["modes"]
    assert m["server:none"]["decode_tps"] == 31.0 and m["server:ngram-mod"]["acceptance"] == 0.75
    assert m["server:none"]["differs"] is None and m["server:ngram-mod"]["differs"] is None
    assert m["specedit"]["differs"] == "line 1: 'x = 2' vs 'x = 1'"
    assert rec["best_server_config"] == "ngram-mod"
    assert rec["specedit_vs_best_server"] == round(92.0 / 61.0, 3)
    assert rec["specedit_vs_server_none"] == round(92.0 / 31.0, 3)
    assert rec["specedit_vs_best_pld"] == round(92.0 / 45.0, 3)
    other = server_peer.task_record(FakeTask("client", "aider-whole"), runs)
    s = server_peer.summarise([rec, other])
    assert list(s) == ["copy", "client", "all"] and s["all"]["tasks"] == 2
    assert s["all"]["specedit"] == 92.0 and s["all"]["agree"]["specedit"] == "0/2"
    assert other["ceiling_tps"] is None and other["specedit_of_ceiling"] is None
    assert (
        s["all"]["ceiling_tps"] == 115.0
        and s["copy"]["specedit_of_ceiling"] == rec["specedit_of_ceiling"]
    )
    record = {"model": {"model": "m"}, "tasks": [rec, other], "summary": s}
    table = server_peer.table(record)
    assert table.row_count == 2 + 3
    lines = server_peer.differences(record)
    assert lines[0].startswith("copy f.py: specedit differs from server:none: line 1")


def _client_run(mode: str, tps: float, wall: float, text: str = "ok", i: int = 0) -> dict:
    return {"request": "aider-whole", "repeat": i, "mode": mode, "decode_tps": tps, "wall_s": wall,
            "completion_tokens": 100, "prompt_tokens": 900, "acceptance": None, "text": text}  # fmt: skip


def test_the_client_summary_puts_specedit_beside_the_best_ngram_server():
    runs = [
        _client_run("specedit", 40.0, 10.0),
        _client_run("specedit", 44.0, 12.0, i=1),
        _client_run("none", 20.0, 30.0),
        _client_run("ngram-simple", 28.0, 20.0, "other"),
        _client_run("ngram-mod", 26.0, 21.0),
    ]
    s = client_bench.summarize(runs)["aider-whole"]
    assert s["specedit"]["decode_tps"] == 42.0 and s["specedit"]["wall_s"] == 11.0
    assert s["best_ngram"] == "ngram-simple"
    assert s["specedit_vs_best_tps"] == round(42.0 / 28.0, 3)
    assert s["best_vs_specedit_wall"] == round(20.0 / 11.0, 3)
    assert s["ngram-simple"]["differs_from_none"] and s["specedit"]["differs_from_none"] is None
    assert client_bench.table({"aider-whole": s}, "m").row_count == 4
    notes = client_bench.notes({"aider-whole": s})
    assert notes[0].startswith(
        "aider-whole: specedit 1.50x the decode tok/s of llama-server ngram-simple"
    )
    assert "ngram-simple differs" in notes[1]


# ---- the real thing: only where llama-server is built ----------------------------------------

needs_server = pytest.mark.skipif(
    ls.binary() is None, reason="llama-server not built: make llama-server"
)


@needs_server
@pytest.mark.model
def test_llama_server_and_specedit_copy_the_same_prompt(qwen05):
    """A short copy through both: llama-server's timings are read, its n-gram drafts are
    accepted, and both answers are the file (the 0.5B copies faithfully)."""
    from specedit.app.edit.prompts import rewrite_prompt

    text = "".join((ROOT / "app" / "samples" / "inventory.py").read_text().splitlines(True)[:16])
    prompt = rewrite_prompt(qwen05.target, text, server_peer.COPY_INSTRUCTION, path="f.py")
    task = server_peer.Task("copy", "f.py", prompt, 100, [f"\n{prompt.fence}"])
    cfg = server_peer.PeerConfig(n_ctx=4096)
    path = ls.binary()
    runs = {
        "server:none": [server_peer.run_server(path, qwen05, "none", task, cfg)],
        "server:ngram-simple": [server_peer.run_server(path, qwen05, "ngram-simple", task, cfg)],
        "specedit": [server_peer.run_specedit(qwen05, task)],
    }
    rec = server_peer.task_record(task, runs)
    for mode, v in rec["modes"].items():
        assert v["decode_tps"] > 0 and v["tokens"] > 20, (mode, rec)
    assert rec["modes"]["server:ngram-simple"]["acceptance"] > 0.5, rec
    assert server_peer.body(runs["server:none"][0].text, prompt.fence) == text.rstrip("\n")
    assert rec["best_server_config"] == "ngram-simple" and rec["specedit_vs_best_server"] > 0
