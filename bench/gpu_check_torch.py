"""GPU check of the torch target with the verification kernel in the loop (issue 14).

Run from the repository root on a lent GPU machine (Python 3.12, torch, triton, transformers,
offline; run ``bench/gpu_wheels.sh`` here first and carry ``.whl/gpu``)::

    python bench/gpu_check_torch.py               # ~5 min on an H200; exit 1 on any failure
    python bench/gpu_check_torch.py --cpu-smoke   # every step it can run, tiny shapes, CPU

One process. Each step is timed and written to ``$OUT/gpu_check_torch.json`` (or
``bench/results/``) as it ends; a step that would start past ``--budget`` seconds is recorded
as not run. Steps:

  * ``env``: versions, the device, ``kernel_support``.
  * ``kernel``: the fused kernel vs the torch twin at V = 151,936, k = 16 (µs per call).
  * ``models``: random-weight Qwen2 models with the catalog 0.5B and 1.5B shapes
    (``bench/qwen_shapes.json``, read from their GGUF metadata) on the device:
      - fp32, CUDA graphs: greedy speculative == plain with the kernel in the loop, in
        exact mode (1-token sub-blocks: bit-identical by construction) and not; sampled
        text of the Triton verifier == the numpy verifier's (host logits) == plain sampling;
      - bf16 (and int8 / int4 weight-only): plain vs speculative tok/s on a self-copy task
        (drafts are the model's own greedy output, so acceptance is high by construction)
        with and without CUDA graphs; the verify step cost t(b) (upload + forward + kernel +
        read-back) with and without graphs; host syncs per step (sync debug mode plus
        counted ``Event.synchronize`` calls); the memory the model takes. The bf16 models
        damp their layers' output projections (x 1e-4), so the hidden state is dominated by
        the token embedding and bf16's batched-vs-1-token rounding rarely flips a greedy
        token (a random model has no margins); the compute per step is the real shapes'.
  * ``tests``: tests/test_verify_kernel.py and tests/test_verifier.py in-process; fails on
    any failure and on any CUDA case skipped.
  * ``compile``: the kernel compiled for sm_86, sm_89, sm_90 and sm_120.

The record ends with ``targets``: measured against the issue's goals side by side (kernel
< 20 µs; <= 1 host sync per step; self-copy >= 5x plain; with graphs t(32) <= 1.3 t(1)).
Missing a goal is reported, not a failure; a failed check or an exception is.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("gpu_check_torch")
_CARRIED = ("platformdirs", "jinja2", "markupsafe", "pytest", "pluggy", "iniconfig", "pygments")


def bootstrap(cpu_smoke: bool) -> None:
    """Environment, carried wheels and the ``specedit`` package mapping, before any import."""
    if cpu_smoke:
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    tmp = Path(tempfile.mkdtemp(prefix="specedit-gpu-check-"))
    missing = [m for m in _CARRIED if importlib.util.find_spec(m) is None]
    wheels = sorted((ROOT / ".whl" / "gpu").glob("*.whl"))
    if missing and wheels:
        site = tmp / "site"
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps"]
        proc = subprocess.run([*cmd, "--target", str(site), *map(str, wheels)], check=False)
        if proc.returncode != 0:  # without pip: wheels of pure Python import from the zip
            site.mkdir(parents=True, exist_ok=True)
            sys.path[:0] = [str(w) for w in wheels]
        sys.path.insert(0, str(site))
    # the package maps engine/ -> specedit.engine etc.; this tree, whatever is installed
    shim = tmp / "shim" / "specedit"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("")
    for part in ("app", "engine", "models", "bench", "kernels"):
        (shim / part).symlink_to(ROOT / part)
    sys.path.insert(0, str(shim.parent))
    sys.path.insert(0, str(ROOT / "tests"))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(shim.parent), os.environ.get("PYTHONPATH", "")])


class Record:
    """The JSON record, written after every step; failures make the exit status."""

    def __init__(self, path: Path, budget_s: float) -> None:
        self.path, self.budget_s, self.t0 = path, budget_s, time.perf_counter()
        self.data: dict = {"check": "gpu_check_torch", "steps": {}, "failures": []}

    def left(self) -> float:
        return self.budget_s - (time.perf_counter() - self.t0)

    def fail(self, msg: str) -> None:
        log.error("FAIL: %s", msg)
        self.data["failures"].append(msg)

    def step(self, name: str, fn, *args, need_s: float = 10.0):
        if self.left() < need_s:
            self.data["steps"][name] = {"not_run": f"out of time ({self.left():.0f} s left)"}
            log.warning("== %s: not run, out of time", name)
            self.save()
            return None
        log.info("== %s", name)
        t = time.perf_counter()
        try:
            out = fn(*args)
        except Exception as e:  # noqa: BLE001 - a failed step is recorded, the rest still runs
            out = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-3000:]}
            self.fail(f"{name}: {type(e).__name__}: {e}")
        out = out if isinstance(out, dict) else {"result": out}
        out["seconds"] = round(time.perf_counter() - t, 2)
        self.data["steps"][name] = out
        log.info("%s", json.dumps(_brief(out))[:2000])
        self.save()
        return out

    def save(self) -> None:
        self.data["elapsed_s"] = round(time.perf_counter() - self.t0, 1)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=1))


def _brief(d):
    return {k: v for k, v in d.items() if k not in ("traceback", "results", "variants")}


# ---- steps --------------------------------------------------------------------------------
def step_env(ctx) -> dict:
    import torch
    import transformers
    import triton

    from specedit.kernels.support import kernel_support

    dev = ctx["device"]
    ok, why = kernel_support(dev)
    out = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "triton": triton.__version__,
        "transformers": transformers.__version__,
        "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
        "kernel_support": {"ok": ok, "reason": why},
    }
    if dev == "cuda":
        out["capability"] = list(torch.cuda.get_device_capability())
    if not ok:
        ctx["rec"].fail(f"kernel_support: {why}")
    return out


def step_kernel(ctx) -> dict:
    from specedit.bench.kernel_bench import run

    if ctx["smoke"]:
        rec = run(
            vocab=512, n=4, reps=2, device="cpu", cases=("greedy", "sample-lookup"), splits=(1,)
        )
    else:
        rec = run(vocab=151936, n=16, reps=50, device="cuda", splits=(1, 4, 16))
    for r in rec["results"]:
        if not (r["agree"] and r["agree_seeded"]):
            ctx["rec"].fail(f"kernel: {r['case']}: the kernel and the torch twin disagree")
    return rec


def step_tests(ctx) -> dict:
    import pytest

    class Outcomes:
        def __init__(self) -> None:
            self.passed: list[str] = []
            self.failed: list[str] = []
            self.skipped: list[str] = []

        def pytest_runtest_logreport(self, report) -> None:
            if report.failed:
                self.failed.append(report.nodeid)
            elif report.skipped:
                self.skipped.append(report.nodeid)
            elif report.when == "call":
                self.passed.append(report.nodeid)

    files = [str(ROOT / "tests" / f) for f in ("test_verify_kernel.py", "test_verifier.py")]
    args = [*files, "-q", "--noconftest", "-p", "no:cacheprovider", "-m", "not slow and not model"]
    if ctx["smoke"]:
        args += ["-k", "philox_bits or (position_keyed and plain) or twin_writes"]
    got = Outcomes()
    code = pytest.main(args, plugins=[got])
    cuda = [t for t in got.passed if "cuda" in t or "test_verifier" in t]
    skipped_cuda = [t for t in got.skipped if "cuda" in t]
    if got.failed or code not in (0,):
        ctx["rec"].fail(f"tests: exit {code}, failed {got.failed[:10]}")
    if not ctx["smoke"] and (skipped_cuda or not cuda):
        ctx["rec"].fail(f"tests: CUDA cases skipped ({len(skipped_cuda)}) or none ran")
    return {
        "exit": int(code),
        "passed": len(got.passed),
        "passed_on_device": len(cuda),
        "failed": got.failed,
        "skipped": len(got.skipped),
        "cuda_skipped": skipped_cuda[:20],
    }


def step_compile(ctx) -> dict:
    archs = (86, 89, 90, 120)
    out: dict = {}
    if ctx["smoke"]:  # the interpreter replaces the kernel in this process: compile in another
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        cmd = [sys.executable, "-m", "specedit.bench.kernel_bench", "--compile-only", "--quick"]
        proc = subprocess.run([*cmd, "--arch", "86"], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            ctx["rec"].fail(f"compile sm_86: {proc.stderr.strip().splitlines()[-1:]}")
            return {"sm_86": proc.stderr[-2000:]}
        return {"sm_86": [v["seconds"] for v in json.loads(proc.stdout)["variants"]]}
    from specedit.bench.kernel_bench import compile_check

    for arch in archs:
        try:
            rec = compile_check(arch, quick=True)
            out[f"sm_{arch}"] = {
                "variants": len(rec["variants"]),
                "seconds": [v["seconds"] for v in rec["variants"]],
            }
        except Exception as e:  # noqa: BLE001
            out[f"sm_{arch}"] = {"error": f"{type(e).__name__}: {str(e)[:500]}"}
            ctx["rec"].fail(f"compile sm_{arch}: {type(e).__name__}: {str(e)[:200]}")
    return out


# ---- main ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny shapes on the CPU (interpreter)")
    ap.add_argument("--budget", type=float, default=330.0, help="seconds; later steps are skipped")
    ap.add_argument("--out", help="JSON path (default $OUT/gpu_check_torch.json)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    bootstrap(args.cpu_smoke)
    import torch

    out_dir = Path(os.environ.get("OUT") or ROOT / "bench" / "results")
    rec = Record(Path(args.out) if args.out else out_dir / "gpu_check_torch.json", args.budget)
    dev = "cpu" if args.cpu_smoke else "cuda"
    if dev == "cuda" and not torch.cuda.is_available():
        rec.fail("no CUDA device: run with --cpu-smoke on a machine without one")
        rec.save()
        return 1
    # tiny smoke shapes: more threads only add contention on a shared CPU
    torch.set_num_threads(1 if args.cpu_smoke else min(8, os.cpu_count() or 1))
    ctx = {"rec": rec, "device": dev, "smoke": args.cpu_smoke}
    from specedit.bench.gpu_check_models import model_checks, targets

    rec.step("env", step_env, ctx, need_s=0)
    rec.step("kernel", step_kernel, ctx, need_s=20)
    rec.step("model_0.5b", model_checks, ctx, "qwen2.5-coder-0.5b", ("none",), True, need_s=60)
    rec.step("tests", step_tests, ctx, need_s=90)
    rec.step("compile", step_compile, ctx, need_s=30)
    rec.step(
        "model_0.5b_quant",
        model_checks,
        ctx,
        "qwen2.5-coder-0.5b",
        ("int8", "int4"),
        False,
        need_s=40,
    )
    rec.step(
        "model_1.5b", model_checks, ctx, "qwen2.5-coder-1.5b", ("none", "int4"), True, need_s=50
    )
    rec.data["targets"] = targets(rec.data["steps"])
    rec.save()
    summary = {"targets": rec.data["targets"], "failures": rec.data["failures"]}
    sys.stdout.write(json.dumps(summary, indent=1) + "\n")
    log.info("wrote %s in %s s", rec.path, rec.data["elapsed_s"])
    return 1 if rec.data["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
