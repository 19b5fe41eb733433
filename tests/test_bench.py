"""The benchmark harnesses run end to end on the real 0.5B model (tiny settings; make
test-long runs every mode and case of each).

These check that the harness measures and reports what it says (every mode, the
ratios, greedy equality, the prefill fraction, the targets, the JSON, the plot),
not how fast anything is: speed is measured by running the benchmarks.
"""

from __future__ import annotations

import argparse
import json
import os

from specedit.app.cli.main import main
from specedit.bench import cli as bench_cli

LONG = os.environ.get("SPECEDIT_LONG") == "1"
# the side-by-side run: plain and specedit; make test-long adds the exact mode (its greedy
# equality is test_llama's in the default suite) and the peer (pld2)
MODES = ["plain", "specedit", "exact", "pld2"] if LONG else ["plain", "specedit"]


def test_specedit_bench_side_by_side(qwen05_path, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    p = argparse.ArgumentParser()
    bench_cli.add_arguments(p)
    args = p.parse_args(
        [
            "--model", str(qwen05_path), "--kinds", "copy", "-n", "1", "-r", "1",
            "--max-lines", "12", "--max-tokens", "16", "--ctx", "2048", "--out", str(tmp_path),
            "--modes", *MODES,
        ]
    )  # fmt: skip
    assert bench_cli.run(args) == 0
    out = capsys.readouterr().out
    assert "targets" in out and "identity copy: decode / prefill" in out
    rec = json.loads(next(tmp_path.glob("bench-*.json")).read_text())
    assert (tmp_path / next(tmp_path.glob("bench-*.json")).with_suffix(".png").name).exists()
    copy = next(t for t in rec["tasks"] if t["kind"] == "copy")
    for mode in MODES:
        r = copy["modes"][mode]
        assert r["decode_tps"] > 0 and r["tokens"] > 0
    assert copy["modes"]["plain"]["ratio_to_plain"] == 1.0
    if LONG:
        assert copy["modes"]["exact"]["greedy_equal_plain"] is True  # --exact's promise
    assert copy["modes"]["specedit"]["tokens_per_call"] > 1.0  # a copy is drafted
    assert 0 < copy["copy_fraction_of_prefill"] < 2
    # the physical ceiling of a copy (all-row-logits verification calls) is measured too
    assert copy["verify_ceiling_tps"] > 0
    assert copy["copy_fraction_of_ceiling"] == round(
        copy["modes"]["specedit"]["decode_tps"] / copy["verify_ceiling_tps"], 3
    )
    want = {"code tasks: specedit / plain", "identity copy: verify ceiling / prefill"}
    if LONG:
        want |= {"code tasks: specedit / best peer", "greedy output equal to plain (exact)"}
    assert {t["measure"] for t in rec["targets"]} >= want
    assert rec["summary"]["copy"]["plain"]["tasks"] == 1


def test_latency_bench_reports_each_part(qwen05_path, tmp_path, capsys):
    """The editor case (a loaded model warmed up while the user types); make test-long runs
    the cold and warm ones too, each a fresh ``specedit rewrite`` process (a minute and a
    half more on 2 cores; test_cli and test_prompt_cache cover those paths)."""
    cases = ["cold", "warm", "editor"] if LONG else ["editor"]
    rc = main(  # through the command line, as a user runs it
        ["bench", "latency", "--model", str(qwen05_path), "--lines", "40", "-r", "1"]
        # a fixed k: the same text every time (the blocks do not follow the timing)
        + ["--typing", "1", "--out", str(tmp_path), "--k", "8", "--cases", *cases]
    )
    assert rc == 0
    rec = json.loads(next(tmp_path.glob("latency-*.json")).read_text())
    assert sorted(rec["medians"]) == sorted(cases)
    for case in cases:
        for part in ("wall", "model_load", "prefill", "decode", "rest", "process"):
            assert rec["medians"][case][part] >= 0
    if LONG:
        cold, warm = rec["medians"]["cold"], rec["medians"]["warm"]
        assert cold["cached_tokens"] == 0
        assert warm["cached_tokens"] > 0  # the file's prefix came from the prompt cache
        assert warm["prompt_tokens"] < cold["prompt_tokens"]
    # one second of warm-up read part of the file before the rewrite started
    editor = rec["medians"]["editor"]
    assert editor["warm_tokens"] > 0 and editor["cached_tokens"] >= editor["warm_tokens"]
    assert "prefill" in capsys.readouterr().out


def test_policy_replay_reproduces_outputs_within_bounds(qwen05_path, tmp_path, capsys):
    """``specedit bench replay`` records a real copy and measures a cost table, then replays
    policies on it. The measured table is machine noise (a call can take seconds on a busy
    machine), so its figures are checked for shape only; the bounds are checked on a replay
    of the same record under a fixed CPU-shaped table (a call costs 40 ms plus 3.5 ms a
    token): every replay re-emits the recorded output, speculation beats plain on a copy,
    nothing beats the oracle (the output drafting itself in 128-token blocks), and k fixed
    at 0 is plain decoding to the last float."""
    rc = main(
        ["bench", "replay", "--model", str(qwen05_path), "--kinds", "copy", "-n", "1"]
        + ["--max-lines", "12", "--ctx", "2048", "--out", str(tmp_path / "measured")]
        + ["--policy", "off:fixed_k=0", "--policy", "k7:fixed_k=7,growth=None"]
    )
    assert rc == 0
    out = capsys.readouterr().out
    assert "median copy" in out and "oracle" in out
    measured = json.loads(next((tmp_path / "measured").glob("replay-*.json")).read_text())
    assert measured["tasks"][0]["kind"] == "copy" and len(measured["tasks"][0]["output"]) > 1
    sizes = {int(b) for costs in measured["cost_table"].values() for b in costs}
    assert measured["cost_table"] and {1, 8, 128} <= sizes
    assert all(t > 0 for costs in measured["cost_table"].values() for t in costs.values())
    assert measured["results"]["tasks"][0]["off"]["ratio_to_plain"] == 1.0

    fixed = {p: {str(b): 0.040 + 0.0035 * b for b in sorted(sizes)} for p in measured["cost_table"]}
    record = dict(measured, cost_table=fixed)
    record.pop("results", None)
    path = tmp_path / "fixed.json"
    path.write_text(json.dumps(record))
    args = ["bench", "replay", "--from", str(path), "--table-costs"]
    args += ["--policy", "off:fixed_k=0", "--policy", "k7:fixed_k=7,growth=None"]
    assert main(args + ["--out", str(tmp_path / "fixed")]) == 0
    rec = json.loads(next((tmp_path / "fixed").glob("replay-*.json")).read_text())
    row = rec["results"]["tasks"][0]
    assert row["off"]["ratio_to_plain"] == 1.0
    for name in ("default", "no-growth-cap", "k7"):
        assert 1.0 < row[name]["ratio_to_plain"], name
        assert row[name]["fraction_of_oracle"] <= 1.0 + 1e-9, name
    assert row["k7"]["calls"] < row["off"]["calls"]
    assert rec["policies"]["k7"]["fixed_k"] == 7 and rec["policies"]["k7"]["growth"] is None
    # the saved record replays again, to the same figures
    again_args = ["bench", "replay", "--from", str(next((tmp_path / "fixed").glob("*.json")))]
    assert main(again_args + ["--table-costs", "--out", str(tmp_path / "again")]) == 0
    again = json.loads(next((tmp_path / "again").glob("replay-*.json")).read_text())
    assert again["results"]["tasks"][0]["default"] == row["default"]


def test_cost_table_interpolates_in_size_and_position():
    from specedit.bench.replay_bench import CostTable

    t = CostTable({"500": {"1": 0.04, "8": 0.10}, "1000": {"1": 0.06, "8": 0.14}})
    assert t.at(8, 500) == 0.10 and t.at(8, 2000) == 0.14 and t.at(1, 100) == 0.04
    assert abs(t.at(4, 750) - (0.04 + 0.06 * 3 / 7 + 0.06 + 0.08 * 3 / 7) / 2) < 1e-12


def test_bench_configs_come_from_arguments_of_the_same_names():
    from specedit.bench.record import config_from_args
    from specedit.bench.run import BenchConfig

    p = argparse.ArgumentParser()
    bench_cli.add_arguments(p)
    cfg = config_from_args(
        BenchConfig, p.parse_args(["--kinds", "rag", "--ctx", "4096", "--k", "5"])
    )
    assert cfg.kinds == ("rag",) and cfg.n_ctx == 4096 and cfg.k == 5
    assert cfg.modes == BenchConfig().modes and cfg.repeats == BenchConfig().repeats


def test_a_record_names_the_cpu_it_was_measured_on():
    """Ratios from two CPUs do not compare (batched calls cost differently on AVX2 and AMX),
    so every record's ``machine`` carries the model name ``lscpu`` shows."""
    import shutil
    import subprocess

    from specedit.bench.record import machine

    m = machine({"threads": 2})
    assert m["threads"] == 2 and m["cpu_count"] >= 1 and m["cpu"]
    if shutil.which("lscpu") and os.path.exists("/proc/cpuinfo"):
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        names = [ln.split(":", 1)[1].strip() for ln in out.splitlines() if "Model name" in ln]
        if names:
            assert m["cpu"] == names[0]
