"""The GPU check's driver and verdicts, on the CPU: figures that survive a kill, a step that
does not run fails the run, a missed target exits 2; the greedy check that a near-tie cannot
hide a bug behind; one real step of the CPU rehearsal end to end.

``bench/gpu_check.sh`` runs here with a fake step runner (``GPU_CHECK_RUNNER``, a few lines
of Python writing records the way the real steps do), so each case takes about a second.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from specedit.bench import gpu_check_results as gr
from specedit.bench.gpu_check_models import first_divergence, greedy_check

ROOT = Path(__file__).resolve().parents[1]

FAKE = """
import os, sys, time
sys.path.insert(0, {bench!r})
import gpu_check_results as gr
step = sys.argv[1]
mode = os.environ.get("FAKE_" + step.upper(), "ok")
res = gr.Results(os.environ["GPU_CHECK_JSONL"], step)
res.figure("first_figure", 1.5)
if mode == "hang":
    time.sleep(60)
res.check("holds", mode != "wrong")
if step == "a":
    for name in gr.EXPECTED_TARGETS["torch"]:
        res.target(name, 30.0 if mode == "miss" else 0.5, "< 20" if mode == "miss" else "<= 1")
sys.exit(3 if mode == "crash" else 0)
"""


def _driver(tmp_path: Path, steps: str, *, wait: bool = True, **env) -> subprocess.Popen:
    fake = tmp_path / "fake_step.py"
    fake.write_text(FAKE.format(bench=str(ROOT / "bench")))
    full = {
        **os.environ,
        "OUT": str(tmp_path / "out"),
        "PYTHON": sys.executable,
        "GPU_CHECK_STEPS": steps,
        "GPU_CHECK_RUNNER": f"{sys.executable} {fake}",
        **env,
    }
    proc = subprocess.Popen(
        ["bash", str(ROOT / "bench" / "gpu_check.sh"), "torch"],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if wait:
        proc.communicate(timeout=60)
    return proc


def _summary(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "gpu_check_torch.json").read_text())


def _records(tmp_path: Path) -> list[dict]:
    return gr.read(tmp_path / "out" / "gpu_check_torch.jsonl")


def test_complete_correct_and_on_target_exits_0(tmp_path):
    proc = _driver(tmp_path, "a:20,b:20")
    s = _summary(tmp_path)
    assert proc.returncode == 0 and s["exit"] == 0 and s["verdict"] == "pass", s["reasons"]
    assert s["steps"]["a"]["status"] == s["steps"]["b"]["status"] == "ok"
    assert s["figures"]["a"]["first_figure"] == 1.5


def test_a_missed_target_exits_2(tmp_path):
    proc = _driver(tmp_path, "a:20,b:20", FAKE_A="miss")
    s = _summary(tmp_path)
    assert proc.returncode == 2 and s["verdict"] == "targets missed"
    assert any("kernel_us_greedy" in r for r in s["reasons"])


def test_a_failed_check_or_crash_exits_1(tmp_path):
    assert _driver(tmp_path, "a:20,b:20", FAKE_B="wrong").returncode == 1
    assert any("check b/holds failed" in r for r in _summary(tmp_path)["reasons"])
    assert _driver(tmp_path, "a:20,b:20", FAKE_B="crash").returncode == 1
    assert _summary(tmp_path)["steps"]["b"] == {
        "status": "failed",
        "rc": 3,
        "seconds": _summary(tmp_path)["steps"]["b"]["seconds"],
        "why": None,
    }


def test_a_step_skipped_for_time_fails_the_run(tmp_path):
    # after a, under 5 s of the budget are left for b (a required step that does not fit
    # its box gets what is left, but not under 5 s): b is not run, and the run fails
    proc = _driver(tmp_path, "a:2,b:10", GPU_CHECK_BUDGET_S="4")
    s = _summary(tmp_path)
    assert proc.returncode == 1 and s["steps"]["b"]["status"] == "not_run"
    assert any(r.startswith("step b: not_run") for r in s["reasons"])


def test_a_step_past_its_box_times_out_and_fails(tmp_path):
    proc = _driver(tmp_path, "a:20,b:2", FAKE_B="hang")
    s = _summary(tmp_path)
    assert proc.returncode == 1 and s["steps"]["b"]["status"] == "timeout"
    assert s["figures"]["b"]["first_figure"] == 1.5  # made before the hang: kept


def test_a_killed_run_keeps_its_figures_and_writes_the_summary(tmp_path):
    proc = _driver(tmp_path, "a:20,b:30,c:20", wait=False, FAKE_B="hang")
    jsonl = tmp_path / "out" / "gpu_check_torch.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        recs = gr.read(jsonl) if jsonl.exists() else []
        if any(r.get("step") == "b" and r.get("kind") == "figure" for r in recs):
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)  # what the device tool does to a call past its limit
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1, out
    s = _summary(tmp_path)
    assert s["figures"]["a"]["first_figure"] == 1.5 and s["figures"]["b"]["first_figure"] == 1.5
    assert s["steps"]["b"]["status"] == "killed"
    assert any("step c: did not run" in r for r in s["reasons"])
    assert "gpu_check_targets" in out  # the targets line came out before the kill


def test_verdict_rules():
    plan = {
        "kind": "plan",
        "part": "llama",
        "steps": [
            {"name": "build", "box_s": 5, "optional": False},
            {"name": "model_1.5b", "box_s": 5, "optional": True},
        ],
    }
    ok = {"kind": "step", "step": "build", "status": "ok"}
    skipped = {"kind": "step", "step": "model_1.5b", "status": "not_run", "why": "time"}
    met = [
        {"kind": "target", "step": "model_0.5b", "name": n, "value": 1, "goal": "<= 9", "met": True}
        for n in gr.EXPECTED_TARGETS["llama"]
    ]
    assert gr.verdict([plan, ok, skipped, *met]) == (0, [])  # an optional step may be skipped
    code, why = gr.verdict([plan, ok, skipped])
    assert code == 2 and all("not measured" in w for w in why)  # no figures: not a pass
    code, why = gr.verdict([plan, skipped, *met])
    assert code == 1 and "step build: did not run" in why[0]
    assert gr.verdict([])[0] == 1


def test_greedy_check_fails_at_a_clear_margin_and_skips_near_ties():
    plain = list(range(100))
    margins = np.full(100, 0.5)
    margins[[10, 40]] = 1e-5  # two near-ties

    def flips_at(*where):
        def spec_from(i):
            out = plain[i:]
            for w in where:
                if w >= i:
                    return out[: w - i] + [-1] + out[w - i + 1 :]
            return out

        return spec_from

    rec = greedy_check(plain, margins, flips_at(10, 40))
    assert rec["ok"] and rec["near_ties_skipped"] == [10, 40] and rec["skipped_share"] == 0.02
    rec = greedy_check(plain, margins, flips_at(10, 41))  # 41 has a clear margin: a bug
    assert not rec["ok"] and rec["mismatch_at_clear_margin"] == 41
    many = np.full(100, 1e-5)
    rec = greedy_check(plain, many, flips_at(*range(0, 100, 2)))
    assert not rec["ok"] and rec["skipped_share"] > rec["max_skipped_share"]  # bounded
    assert greedy_check(plain, margins, lambda i: plain[i:])["ok"]
    assert not greedy_check(plain, margins, lambda i: plain[i:50])["ok"]  # a short output


def test_bf16_first_divergence_must_be_a_near_tie():
    plain, got = [1, 2, 3], [1, 2, 4]
    tops = np.array([10.0, 10.0, 10.0])  # bf16 ulp at 10 is 2^-4
    assert first_divergence(plain, got, np.array([1, 1, 0.1]), tops)["ok"]
    assert not first_divergence(plain, got, np.array([1, 1, 0.5]), tops)["ok"]
    assert first_divergence(plain, plain, None, None) == {"ok": True, "equal": True, "compared": 3}


@pytest.mark.timeout(120)
def test_cpu_rehearsal_runs_a_real_step(tmp_path):
    """SPECEDIT_GPU_CHECK_CPU=1: the real step runner, tiny shapes, the same files."""
    env = {
        **os.environ,
        "OUT": str(tmp_path),
        "PYTHON": sys.executable,
        "SPECEDIT_GPU_CHECK_CPU": "1",
        "GPU_CHECK_STEPS": "kernels_per_token:100",
        "GPU_CHECK_WORK": str(tmp_path / "work"),
    }
    proc = subprocess.run(
        ["bash", str(ROOT / "bench" / "gpu_check.sh"), "torch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    s = json.loads((tmp_path / "gpu_check_torch.json").read_text())
    assert s["cpu_rehearsal"] and s["steps"]["kernels_per_token"]["status"] == "ok", proc.stdout
    k = s["figures"]["kernels_per_token"]["qwen2.5-coder-0.5b/kernels_per_token"]
    assert k["fused"]["per_token"] < k["model_modules"]["per_token"]
    # complete and correct; the expected targets were not measured by this one step
    assert proc.returncode == 2 and s["exit"] == 2, s["reasons"]


def test_carried_wheels_never_shadow_the_machines_own(tmp_path):
    """Only the wheels of modules the machine lacks are unpacked, and they go last on
    sys.path: a carried pytest (whose plugins would load against the wrong pluggy) is not."""
    import zipfile

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for dist, mod in (("pytest", "pytest"), ("fakecarried", "fakecarried")):
        with zipfile.ZipFile(wheels / f"{dist}-0.0.1-py3-none-any.whl", "w") as z:
            z.writestr(f"{mod}/__init__.py", "CARRIED = True\n")
    code = f"""
import sys
sys.path.insert(0, {str(ROOT / "bench")!r})
import gpu_check_torch as g
g._CARRIED["fakecarried"] = "fakecarried"
g.bootstrap(cpu=True)
import fakecarried, pytest
assert fakecarried.CARRIED and not hasattr(pytest, "CARRIED"), pytest.__file__
assert sys.path[-1].endswith("site"), sys.path[-3:]
"""
    env = {**os.environ, "GPU_CHECK_WHEELS": str(wheels), "GPU_CHECK_WORK": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (tmp_path / "site" / "pytest").exists()
