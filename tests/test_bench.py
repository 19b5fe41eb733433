"""The benchmark harnesses run end to end on the real 0.5B model (tiny settings).

These check that the harness measures and reports what it says (every mode, the
ratios, greedy equality, the prefill fraction, the targets, the JSON, the plot),
not how fast anything is: speed is measured by running the benchmarks.
"""

from __future__ import annotations

import argparse
import json

from specedit.app.cli import main
from specedit.bench import cli as bench_cli


def test_specedit_bench_side_by_side(qwen05_path, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    p = argparse.ArgumentParser()
    bench_cli.add_arguments(p)
    args = p.parse_args(
        [
            "--model", str(qwen05_path), "--kinds", "copy", "writing", "-n", "1", "-r", "1",
            "--max-lines", "12", "--max-tokens", "16", "--ctx", "2048", "--out", str(tmp_path),
            "--modes", "plain", "specedit", "exact", "pld2",
        ]
    )  # fmt: skip
    assert bench_cli.run(args) == 0
    out = capsys.readouterr().out
    assert "targets" in out and "identity copy: decode / prefill" in out
    rec = json.loads(next(tmp_path.glob("bench-*.json")).read_text())
    assert (tmp_path / next(tmp_path.glob("bench-*.json")).with_suffix(".png").name).exists()
    copy = next(t for t in rec["tasks"] if t["kind"] == "copy")
    for mode in ("plain", "specedit", "exact", "pld2"):
        r = copy["modes"][mode]
        assert r["decode_tps"] > 0 and r["tokens"] > 0
    assert copy["modes"]["plain"]["ratio_to_plain"] == 1.0
    assert copy["modes"]["exact"]["greedy_equal_plain"] is True  # --exact's promise
    assert copy["modes"]["specedit"]["tokens_per_call"] > 1.0  # a copy is drafted
    assert 0 < copy["copy_fraction_of_prefill"] < 2
    # the physical ceiling of a copy (all-row-logits verification calls) is measured too
    assert copy["verify_ceiling_tps"] > 0
    assert copy["copy_fraction_of_ceiling"] == round(
        copy["modes"]["specedit"]["decode_tps"] / copy["verify_ceiling_tps"], 3
    )
    assert {t["measure"] for t in rec["targets"]} >= {
        "code tasks: specedit / plain",
        "code tasks: specedit / best peer",
        "greedy output equal to plain (exact)",
        "identity copy: verify ceiling / prefill",
    }
    assert rec["summary"]["writing"]["plain"]["tasks"] == 1


def test_latency_bench_reports_each_part(qwen05_path, tmp_path, capsys):
    rc = main(  # through the command line, as a user runs it
        ["bench", "latency", "--model", str(qwen05_path), "--lines", "40", "-r", "1"]
        + ["--out", str(tmp_path)]
    )
    assert rc == 0
    rec = json.loads(next(tmp_path.glob("latency-*.json")).read_text())
    cold, warm = rec["medians"]["cold"], rec["medians"]["warm"]
    for part in ("wall", "model_load", "prefill", "decode", "rest", "process"):
        assert cold[part] >= 0 and warm[part] >= 0
    assert cold["cached_tokens"] == 0
    assert warm["cached_tokens"] > 0  # the file's prefix came from the prompt cache
    assert warm["prompt_tokens"] < cold["prompt_tokens"]
    assert "prefill" in capsys.readouterr().out
