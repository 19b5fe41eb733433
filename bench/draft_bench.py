"""Draft-model pair benchmark: a 1.5B target with a 0.5B draft, on any backend.

Contract: ``run_draft_bench(cfg)`` loads the target and the draft through
``app.runtime.loaded_model.load_model(draft_model=...)`` (vocabulary check, exactness
check and cost calibration included) and runs, interleaved within each repeat:

  * free-form Spec-Bench kinds (``writing``, ``qa``): ``plain`` vs ``model``
    (the draft model alone, adaptive k) and ``auto`` (lookup + model);
  * copy-heavy kinds (``copy``, ``edit``, ...): ``plain``, ``lookup`` (prompt
    lookup alone) and ``auto`` (lookup + model, chosen per step by expected
    gain).

The record holds per task and mode the medians of decode and end-to-end tok/s
(end-to-end charges the draft model's prefill), ratios to plain, tokens per
target call, acceptance overall and per proposer (``model`` vs the lookup's
span labels), greedy equality with plain, and per kind ``auto_vs_lookup``.
Run: ``python -m specedit.bench.draft_bench --help``.
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import asdict, dataclass

from ..app.options import RewriteOptions
from ..app.runtime.loaded_model import load_model
from .record import add_common, config_from_args, machine, save_and_log
from .spec_runs import Run, engine_run, rewrite_budget, summarise, task_record
from .tasks import load_tasks

log = logging.getLogger(__name__)

FREE_KINDS = ("writing", "qa", "roleplay", "math_reasoning")


@dataclass(frozen=True)
class DraftBenchConfig:
    """What to run; the defaults are a short CPU run."""

    model: str = "qwen2.5-coder-1.5b"
    draft: str = "qwen2.5-coder-0.5b"
    backend: str = "llama.cpp"
    kinds: tuple[str, ...] = ("writing", "qa", "copy")
    n_per_kind: int = 1
    repeats: int = 1
    free_modes: tuple[str, ...] = ("plain", "model", "auto")
    copy_modes: tuple[str, ...] = ("plain", "lookup", "auto")
    max_lines: int = 20
    max_tokens: int = 96
    """Cap for free-form tasks; rewrite tasks get min(this * 2, source * 1.3 + 64)."""
    n_ctx: int = 4096
    threads: int | None = None
    k: int | None = None
    exact: bool = False
    """Verify in bit-exact sub-blocks (greedy output then equals plain by construction)."""


_PROPOSERS = {"plain": "none", "lookup": "lookup", "model": "model", "auto": "auto"}
"""Each mode's proposers, as ``RewriteOptions.draft`` names them."""


def run_draft_bench(cfg: DraftBenchConfig, progress=None) -> dict:
    loaded = load_model(
        cfg.model,
        n_ctx=cfg.n_ctx,
        threads=cfg.threads,
        backend=cfg.backend,
        draft_model=cfg.draft,
    )
    target = loaded.target
    tasks = load_tasks(list(cfg.kinds), cfg.n_per_kind, cfg.max_lines)
    results, modes_seen = [], []
    for ti, task in enumerate(tasks):
        prompt = task.prompt(target)
        free = prompt.fence is None
        modes = cfg.free_modes if free else cfg.copy_modes
        modes_seen += [m for m in modes if m not in modes_seen]
        max_tokens = cfg.max_tokens
        if not free:
            max_tokens = min(2 * cfg.max_tokens, rewrite_budget(prompt))
        runs: dict[str, list[Run]] = {m: [] for m in modes}
        for rep in range(cfg.repeats):
            for mode in modes:
                if progress:
                    progress(f"[{ti + 1}/{len(tasks)}] {task.name} {mode} #{rep + 1}")
                opts = RewriteOptions(draft=_PROPOSERS[mode], k=cfg.k, exact=cfg.exact)
                runs[mode].append(engine_run(loaded, prompt, opts, max_tokens))
        results.append(task_record(target, task.kind, task.name, prompt, runs))
    return {
        "bench": "draft_model_pair",
        "config": asdict(cfg),
        "model": loaded.describe(),
        "machine": machine(),
        "tasks": results,
        "summary": summarise(
            results, modes_seen, pairs=[("auto", "lookup"), ("model", "plain"), ("auto", "plain")]
        ),
    }


def main(argv: list[str] | None = None) -> int:
    d = DraftBenchConfig()
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_common(p, d)
    p.add_argument("--draft", default=d.draft)
    p.add_argument("--backend", default=d.backend, choices=["llama.cpp", "torch"])
    p.add_argument("--exact", action="store_true")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    cfg = config_from_args(DraftBenchConfig, a)
    record = run_draft_bench(cfg, progress=log.info)
    return save_and_log(record, a.out, "draft-bench")


if __name__ == "__main__":
    raise SystemExit(main())
