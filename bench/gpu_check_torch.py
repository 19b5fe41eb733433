"""One step of the torch GPU check: ``python bench/gpu_check_torch.py --step NAME``.

Run by ``bench/gpu_check.sh torch`` (each step in its own process, under ``timeout``, in the
order and time boxes of ``gpu_check_results.PLANS["torch"]``) on a lent GPU machine (Python
3.12, torch, triton, transformers, offline; ``bench/gpu_wheels.sh`` fills ``.whl/gpu`` here
with what it lacks). ``SPECEDIT_GPU_CHECK_CPU=1`` runs the same code on the CPU with tiny
shapes (the Triton interpreter, the torch twin for timings): the rehearsal.

Every record goes to ``$GPU_CHECK_JSONL`` (default ``$OUT/gpu_check_torch.jsonl``) as it is
made; an exception is recorded as an ``error`` and the step exits 1. Steps:

  * ``kernel``: versions and ``kernel_support``; the kernel vs its torch twin at
    V = 151,936, k = 16 for greedy, sample-lookup and top-k + top-p with draft
    probabilities: GPU time from CUDA-graph replays, pipelined launches, host-inclusive
    calls (``bench/kernel_bench.py``); kernel == twin on the same numbers. Targets: GPU
    µs < 20 for each case.
  * ``figures_0.5b``: ``gpu_check_figures.timings`` on the 0.5B's shapes, bf16, graphs
    (the CPU: fp32, eager): targets t(32)/t(1) <= 1.3, self-copy >= 5x plain, syncs per
    step <= 1.
  * ``correctness``: ``gpu_check_models.correctness`` on the 0.5B's shapes, fp32.
  * ``tests``: tests/test_verify_kernel.py (its CUDA cases for bf16 and fp32 at aligned
    vocabularies, the kernel's compiled variants shared with ``kernel``) and
    tests/test_verifier.py in-process; fails on any failure, on any CUDA case skipped, and
    when no test ran on the device (a test counts as on the device only if it ran there).
  * ``quant_0.5b``: int8 and int4 figures (graphs), no targets.
  * ``figures_1.5b``: the 1.5B's figures, targets under its own names.
  * ``kernels_per_token``: kernels of a 1-token forward, model modules vs the fused step.
  * ``compile``: the kernel compiled for sm_86, sm_89, sm_90 and sm_120.
"""

from __future__ import annotations

import argparse
import importlib.util
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
_CARRIED = {
    "platformdirs": "platformdirs",
    "jinja2": "jinja2",
    "markupsafe": "MarkupSafe",
    "pytest": "pytest",
    "pluggy": "pluggy",
    "iniconfig": "iniconfig",
    "pygments": "Pygments",
    "packaging": "packaging",
}
"""Module -> wheel distribution name of what ``.whl/gpu`` may carry."""


def bootstrap(cpu: bool) -> None:
    """Environment, carried wheels and the ``specedit`` package mapping, before any import.

    Only the wheels of modules the machine lacks are unpacked, and their folder goes at the
    end of ``sys.path``: a carried pytest or pluggy never shadows the machine's own (whose
    plugins would then load against the wrong pluggy)."""
    if cpu:
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported
    else:
        os.environ.pop("TRITON_INTERPRET", None)
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        os.environ.setdefault(k, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    work = Path(os.environ.get("GPU_CHECK_WORK") or ROOT / "build" / "gpu_check_torch")
    missing = [m for m in _CARRIED if importlib.util.find_spec(m) is None]
    site = work / "site"
    if missing:
        wheels = [
            w
            for w in sorted(
                Path(os.environ.get("GPU_CHECK_WHEELS") or ROOT / ".whl/gpu").glob("*.whl")
            )
            if w.name.split("-")[0].lower() in {_CARRIED[m].lower() for m in missing}
        ]
        import zipfile

        for w in wheels:  # pure-Python wheels are zip files: unpacking one installs it
            marker = site / f".{w.name}"
            if not marker.exists():
                zipfile.ZipFile(w).extractall(site)
                marker.touch()
        if wheels:
            sys.path.append(str(site))
            os.environ["PYTHONPATH"] = os.pathsep.join(
                p for p in (os.environ.get("PYTHONPATH", ""), str(site)) if p
            )
    # the package maps engine/ -> specedit.engine etc.; this tree, whatever is installed
    shim = Path(tempfile.mkdtemp(prefix="specedit-gpu-check-")) / "specedit"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("")
    for part in ("app", "engine", "models", "bench", "kernels"):
        (shim / part).symlink_to(ROOT / part)
    sys.path.insert(0, str(shim.parent))
    sys.path.insert(0, str(ROOT / "tests"))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(shim.parent), os.environ.get("PYTHONPATH", "")) if p
    )


# ---- steps --------------------------------------------------------------------------------
def step_kernel(ctx) -> None:
    import torch
    import transformers
    import triton

    from specedit.bench.kernel_bench import run
    from specedit.kernels.support import kernel_support

    res, dev = ctx["res"], ctx["device"]
    ok, why = kernel_support(dev)
    env = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "triton": triton.__version__,
        "transformers": transformers.__version__,
        "device": torch.cuda.get_device_name() if dev == "cuda" else "cpu",
        "capability": list(torch.cuda.get_device_capability()) if dev == "cuda" else None,
        "cores": os.cpu_count(),
    }
    res.figure("env", env)
    if not res.check("kernel_support", ok, reason=why):
        return
    names = {
        "greedy": "greedy",
        "sample-lookup": "sample_lookup",
        "top-k-top-p-probs": "top_k_top_p",
    }

    def on_result(r) -> None:
        res.figure(r["case"], r)
        res.check(
            f"{r['case']}_agrees",
            r["agree"] and r["agree_seeded"],
            explicit=r["agree"],
            seeded=r["agree_seeded"],
        )
        res.target(f"kernel_us_{names[r['case']]}", r["triton"]["gpu_us"], "< 20")

    if ctx["cpu"]:
        run(
            vocab=512,
            n=4,
            reps=2,
            device="cpu",
            cases=tuple(names),
            splits=(1,),
            on_result=on_result,
        )
    else:
        run(
            vocab=151936,
            n=16,
            reps=50,
            device="cuda",
            cases=tuple(names),
            splits=(1, 4, 16),
            on_result=on_result,
        )


def step_figures(ctx, name: str, prefix: str) -> None:
    from specedit.bench.gpu_check_figures import timings

    timings(ctx, name, "none", not ctx["cpu"], targets=prefix)


def step_quant(ctx) -> None:
    from specedit.bench.gpu_check_figures import timings

    for quant in ("int8", "int4"):
        timings(ctx, "qwen2.5-coder-0.5b", quant, not ctx["cpu"])


def step_correctness(ctx) -> None:
    from specedit.bench.gpu_check_models import correctness

    correctness(ctx, "qwen2.5-coder-0.5b")


def step_kernels_per_token(ctx) -> None:
    from specedit.bench.gpu_check_figures import kernels_per_token

    kernels_per_token(ctx, "qwen2.5-coder-0.5b")


# the kernel tests on CUDA in the box: every test function, bf16 and fp32, aligned
# vocabularies and 16-token drafts where those are parameters (the kernel step compiled those
# variants: every other one is a fresh compile of a few seconds)
TESTS_K = "cuda and not torch.float16 and not 111 and not 4096-1- and not 4096-4-"
TESTS_K_CPU = "philox_bits or (position_keyed and plain) or twin_writes"


def step_tests(ctx) -> None:
    import pytest

    box = float(os.environ.get("GPU_CHECK_BOX_S") or 0)
    stop_at = time.monotonic() + box - 10 if box else None  # time to write the records

    class Outcomes:
        def __init__(self) -> None:
            self.passed: list[str] = []
            self.failed: list[str] = []
            self.skipped: list[str] = []
            self.not_run = 0

        def pytest_runtest_protocol(self, item, nextitem):
            if stop_at is not None and time.monotonic() > stop_at:
                self.not_run += 1
                return True  # out of the box's time: not run, and said so below
            return None

        def pytest_runtest_logreport(self, report) -> None:
            if report.failed:
                self.failed.append(report.nodeid)
            elif report.skipped:
                self.skipped.append(report.nodeid)
            elif report.when == "call":
                self.passed.append(report.nodeid)

    res, cpu = ctx["res"], ctx["cpu"]
    kernel_tests = str(ROOT / "tests" / "test_verify_kernel.py")
    files = [kernel_tests, str(ROOT / "tests" / "test_verifier.py")]
    args = [*files, "-q", "--noconftest", "-p", "no:cacheprovider", "-m", "not slow and not model"]
    args += ["-k", TESTS_K_CPU if cpu else f"({TESTS_K}) or test_verifier"]
    got = Outcomes()
    code = pytest.main(args, plugins=[got])
    verifier_mod = sys.modules.get("test_verifier")
    verifier_on_device = getattr(verifier_mod, "DEVICE", "cpu") == "cuda"

    def on_device(nodeid: str) -> bool:
        if "test_verifier.py" in nodeid:
            return verifier_on_device
        return "cuda" in nodeid.split("[", 1)[-1]

    device = [t for t in got.passed if on_device(t)]
    skipped_cuda = [t for t in got.skipped if "cuda" in t.split("[", 1)[-1]]
    res.figure(
        "tests",
        {
            "exit": int(code),
            "passed": len(got.passed),
            "passed_on_device": len(device),
            "failed": got.failed,
            "skipped": len(got.skipped),
            "cuda_skipped": skipped_cuda[:20],
            "k": args[-1],
        },
    )
    res.check("tests_pass", not got.failed and code == 0, exit=int(code), failed=got.failed[:20])
    res.check("tests_all_ran", got.not_run == 0, not_run=got.not_run, box_s=box)
    if not cpu:
        res.check(
            "tests_on_device",
            bool(device) and not skipped_cuda,
            on_device=len(device),
            cuda_skipped=len(skipped_cuda),
        )


def step_compile(ctx) -> None:
    import json

    res = ctx["res"]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    archs = ["86"] if ctx["cpu"] else ["86", "89", "90", "120"]
    # one process per architecture, all at once: without the interpreter (the rehearsal's
    # process has it), and a compiler crash cannot take this step's records with it
    cmd = [sys.executable, "-m", "specedit.bench.kernel_bench", "--compile-only", "--quick"]
    procs = {
        a: subprocess.Popen(
            [*cmd, "--arch", a], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for a in archs
    }
    for arch, proc in procs.items():
        out, err = proc.communicate()
        ok = proc.returncode == 0
        if ok:
            variants = json.loads(out)["variants"]
            res.figure(
                f"sm_{arch}",
                {"variants": len(variants), "seconds": [v["seconds"] for v in variants]},
            )
        res.check(f"compile_sm_{arch}", ok, stderr="" if ok else err.strip()[-800:])


STEPS = {
    "kernel": step_kernel,
    "figures_0.5b": lambda ctx: step_figures(ctx, "qwen2.5-coder-0.5b", "0.5b"),
    "correctness": step_correctness,
    "tests": step_tests,
    "quant_0.5b": step_quant,
    "figures_1.5b": lambda ctx: step_figures(ctx, "qwen2.5-coder-1.5b", "1.5b"),
    "kernels_per_token": step_kernels_per_token,
    "compile": step_compile,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", required=True, choices=sorted(STEPS))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    cpu = os.environ.get("SPECEDIT_GPU_CHECK_CPU", "0") == "1"
    bootstrap(cpu)
    from specedit.bench.gpu_check_results import Results

    out = Path(os.environ.get("OUT") or ROOT / "bench" / "results")
    res = Results(os.environ.get("GPU_CHECK_JSONL") or out / "gpu_check_torch.jsonl", args.step)
    try:
        import torch

        if not cpu and not torch.cuda.is_available():
            res.error("no CUDA device: set SPECEDIT_GPU_CHECK_CPU=1 for the CPU rehearsal")
            return 1
        # tiny rehearsal shapes: more threads only add contention on a shared CPU
        torch.set_num_threads(1 if cpu else min(8, os.cpu_count() or 1))
        ctx = {"res": res, "device": "cpu" if cpu else "cuda", "cpu": cpu}
        STEPS[args.step](ctx)
    except Exception as e:  # noqa: BLE001 - recorded, and the step fails
        log.exception("%s failed", args.step)
        res.error(f"{type(e).__name__}: {e}", traceback.format_exc())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
