"""The GPU check's results: records written as they are made, the plan, the verdict.

Contract (no torch import: the shell driver runs this on every exit, whatever broke):

  * ``Results(path, step)`` appends one JSON line per record to ``path``
    (``$OUT/gpu_check_<part>.jsonl``), flushed and fsynced at once, so a run killed at any
    moment keeps every figure made before the kill. Kinds: ``figure`` (any JSON value),
    ``check`` (a correctness verdict: ``ok`` and details), ``target`` (a measured figure
    beside its goal: ``value``, ``goal``, ``met``), ``error`` (an exception). The shell
    driver adds ``plan`` (first line: the steps, their time boxes, optional ones) and
    ``step`` (one per step: ``ok``, ``failed`` with its exit status, ``timeout``, or
    ``not_run`` and why).
  * ``verdict(records)`` -> ``(code, reasons)``: **1** when a check failed, an error was
    recorded, or a required step of the plan did not run to its end (not started, timed
    out, exit status not 0, no record at all); **2** when everything ran and held but a
    target was missed (or a target the plan expects was never measured); **0** otherwise.
    A skipped *optional* step (the llama part's 1.5B, when time is short) is reported, not
    failed.
  * ``summary(records)`` is the JSON written to ``$OUT/gpu_check_<part>.json``: exit code,
    verdict, reasons, steps, targets, checks and every figure by step.

CLI (used by ``bench/gpu_check.sh``)::

    python3 bench/gpu_check_results.py plan PART          # "name box_s optional" lines
    python3 bench/gpu_check_results.py budget PART        # the part's seconds
    python3 bench/gpu_check_results.py targets JSONL      # one line: the targets so far
    python3 bench/gpu_check_results.py summary JSONL OUT  # writes OUT, prints it, exits with the code
"""

from __future__ import annotations

import json
import operator
import os
import sys
import time
from pathlib import Path

# (name, time box in seconds on the GPU machine, optional). The boxes of a part sum to under
# its budget (``BUDGET_S``), so every required step fits; bench/README.md gives the estimates.
PLANS: dict[str, list[tuple[str, int, bool]]] = {
    "torch": [
        ("kernel", 45, False),  # kernel µs (GPU time) + host-inclusive step overhead
        ("figures_0.5b", 60, False),  # t(1..128), self-copy vs plain (graphs), syncs per step
        ("correctness", 40, False),  # greedy == plain at clear margins, exact, sampled
        ("tests", 50, False),  # the kernel tests on CUDA (each new variant a compile)
        ("quant_0.5b", 25, False),  # int8 and int4 timings
        ("figures_1.5b", 30, False),  # the 1.5B's figures
        ("kernels_per_token", 12, False),  # kernels per decoded token, fused vs HF modules
        ("compile", 18, False),  # the kernel compiled for sm_86, sm_89, sm_90 and sm_120
    ],
    "llama": [
        ("wheels", 10, False),
        ("configure", 15, False),
        ("build", 195, False),  # llama-cpp-python's CUDA build, the card's architecture only
        ("install", 10, False),
        ("doctor", 10, False),
        ("model_0.5b", 50, False),  # random GGUF + t(1..128) + self-copy, all layers offloaded
        ("model_1.5b", 60, True),  # only when that much time is left
    ],
}
BUDGET_S = {"torch": 290, "llama": 290}
"""Seconds of one call (the device tool allows 600; two calls must fit in 15 minutes)."""
CPU_SCALE = 3
"""The CPU rehearsal's boxes and budget are the GPU's times this (process starts and the
Triton interpreter on 2 shared cores); ``GPU_CHECK_BOX_SCALE`` overrides."""


def box_scale() -> float:
    cpu = os.environ.get("SPECEDIT_GPU_CHECK_CPU", "0") == "1"
    return float(os.environ.get("GPU_CHECK_BOX_SCALE") or (CPU_SCALE if cpu else 1))


EXPECTED_TARGETS = {
    "torch": (
        "kernel_us_greedy",
        "kernel_us_sample_lookup",
        "0.5b_syncs_per_step",
        "0.5b_self_copy_vs_plain",
        "0.5b_t32_over_t1",
    ),
    "llama": ("llama_0.5b_t32_over_t1", "llama_0.5b_self_copy_vs_plain"),
}
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


class Results:
    """Appends records of one step to the JSON-lines file (module docstring)."""

    def __init__(self, path: str | os.PathLike, step: str) -> None:
        self.path, self.step = Path(path), step
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, kind: str, **fields) -> dict:
        rec = {"kind": kind, "step": self.step, "t": round(time.time(), 3), **fields}
        line = json.dumps(rec, default=_jsonable)
        with open(self.path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
        return rec

    def figure(self, name: str, value) -> None:
        self.write("figure", name=name, value=value)

    def check(self, name: str, ok: bool, **detail) -> bool:
        self.write("check", name=name, ok=bool(ok), detail=detail)
        return bool(ok)

    def target(self, name: str, value, goal: str) -> None:
        """``goal`` is an operator and a number (``"< 20"``); None: not measurable here."""
        op, num = goal.split()
        met = None if value is None else bool(_OPS[op](value, float(num)))
        self.write("target", name=name, value=value, goal=goal, met=met)

    def error(self, msg: str, tb: str = "") -> None:
        self.write("error", error=msg, traceback=tb[-3000:])


def _jsonable(x):
    if hasattr(x, "item"):
        return x.item()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def read(path: str | os.PathLike) -> list[dict]:
    """Every whole record of the file (a line cut by a kill is dropped)."""
    out = []
    try:
        text = Path(path).read_text()
    except OSError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _plan(records: list[dict]) -> dict:
    return next((r for r in records if r.get("kind") == "plan"), {})


def verdict(records: list[dict]) -> tuple[int, list[str]]:
    """(exit code, reasons): 1 failure or incomplete, 2 a target missed, 0 all met."""
    plan = _plan(records)
    fails: list[str] = []
    if not plan:
        fails.append("no plan record: the driver did not start")
    steps = {r["step"]: r for r in records if r.get("kind") == "step"}
    for s in plan.get("steps", []):
        name, optional = s["name"], s.get("optional", False)
        r = steps.get(name)
        if r is None:
            fails.append(f"step {name}: did not run (no record: the run was killed before it)")
        elif r["status"] == "not_run" and optional:
            continue
        elif r["status"] != "ok":
            why = r.get("why") or f"exit status {r.get('rc')}"
            fails.append(f"step {name}: {r['status']} ({why})")
    for r in records:
        if r.get("kind") == "check" and not r.get("ok"):
            fails.append(
                f"check {r['step']}/{r['name']} failed: {json.dumps(r.get('detail'))[:300]}"
            )
        elif r.get("kind") == "error":
            fails.append(f"error in {r['step']}: {r.get('error', '')[:300]}")
    if fails:
        return 1, fails
    targets = _targets(records)
    missed = [
        f"target {k}: {v['value']} (goal {v['goal']})"
        for k, v in targets.items()
        if v["met"] is False
    ]
    for name in EXPECTED_TARGETS.get(plan.get("part", ""), ()):
        if name not in targets or targets[name]["met"] is None:
            missed.append(f"target {name}: not measured")
    return (2, missed) if missed else (0, [])


def _targets(records: list[dict]) -> dict:
    return {
        r["name"]: {"value": r["value"], "goal": r["goal"], "met": r["met"], "step": r["step"]}
        for r in records
        if r.get("kind") == "target"
    }


def summary(records: list[dict]) -> dict:
    code, reasons = verdict(records)
    plan = _plan(records)
    figures: dict = {}
    for r in records:
        if r.get("kind") == "figure":
            figures.setdefault(r["step"], {})[r["name"]] = r["value"]
    steps = {
        r["step"]: {k: r.get(k) for k in ("status", "rc", "seconds", "why")}
        for r in records
        if r.get("kind") == "step"
    }
    times = [r["t"] for r in records if "t" in r]
    return {
        "part": plan.get("part"),
        "cpu_rehearsal": plan.get("cpu", False),
        "exit": code,
        "verdict": {0: "pass", 1: "fail", 2: "targets missed"}[code],
        "reasons": reasons,
        "elapsed_s": round(times[-1] - times[0], 1) if times else None,
        "steps": steps,
        "targets": _targets(records),
        "checks": {
            f"{r['step']}/{r['name']}": r["ok"] for r in records if r.get("kind") == "check"
        },
        "errors": [r for r in records if r.get("kind") == "error"],
        "figures": figures,
    }


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else ""
    if cmd == "plan":
        part = argv[1]
        steps = PLANS[part]
        wanted = os.environ.get("GPU_CHECK_STEPS", "").strip()
        if wanted:  # "name[:box],...": a subset (a rerun of what failed, the tests)
            boxes = {n: (b, o) for n, b, o in steps}
            steps = []
            for item in wanted.split(","):
                name, _, box = item.partition(":")
                b, o = boxes.get(name, (60, False))
                steps.append((name, int(box) if box else b, o))
        scale = box_scale()
        for name, box, optional in steps:
            sys.stdout.write(f"{name} {round(box * scale)} {int(optional)}\n")
        return 0
    if cmd == "budget":
        sys.stdout.write(f"{round(BUDGET_S[argv[1]] * box_scale())}\n")
        return 0
    if cmd == "targets":
        t = _targets(read(argv[1]))
        line = {k: [v["value"], v["goal"], v["met"]] for k, v in t.items()}
        sys.stdout.write(json.dumps({"gpu_check_targets": line}, separators=(",", ":")) + "\n")
        return 0
    if cmd == "summary":
        rec = summary(read(argv[1]))
        Path(argv[2]).write_text(json.dumps(rec, indent=1) + "\n")
        brief = {k: rec[k] for k in ("part", "exit", "verdict", "reasons", "elapsed_s")}
        brief["steps"] = {k: v["status"] for k, v in rec["steps"].items()}
        sys.stdout.write(json.dumps(brief) + "\n")
        return rec["exit"]
    sys.stderr.write(__doc__ or "")
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
