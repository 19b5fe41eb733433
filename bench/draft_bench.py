"""Draft-model pair benchmark: a 1.5B target with a 0.5B draft, on any backend.

Contract: ``run_draft_bench(cfg)`` loads the target and the draft through
``app.session.load_session(draft_model=...)`` (vocabulary check, exactness
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
import json
import logging
from dataclasses import asdict, dataclass

from ..app.rewrite import build_prompt, lookup_drafter
from ..app.session import load_session
from ..engine.combined import CombinedDrafter
from ..engine.decode import GenConfig
from ..engine.draft_model import ModelDrafter
from ..engine.policy import PolicyConfig
from .record import config_from_args, save_record
from .spec_runs import Run, engine_run, machine, rewrite_budget, summarise, task_record
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


def _drafter(mode: str, sess, prompt, spans, policy, sampling):
    if mode == "plain":
        return None
    lookup = lookup_drafter(sess.target, spans, len(prompt))
    if mode == "lookup":
        return lookup
    model = ModelDrafter(sess.draft, sampling, policy=policy, costs=sess.draft_costs)
    return model if mode == "model" else CombinedDrafter(lookup, model, policy)


def run_draft_bench(cfg: DraftBenchConfig, progress=None) -> dict:
    sess = load_session(
        cfg.model,
        n_ctx=cfg.n_ctx,
        threads=cfg.threads,
        backend=cfg.backend,
        draft_model=cfg.draft,
    )
    target = sess.target
    tasks = load_tasks(list(cfg.kinds), cfg.n_per_kind, cfg.max_lines)
    results, modes_seen = [], []
    for ti, task in enumerate(tasks):
        prompt, spans = build_prompt(sess, task.messages, task.prefix, task.pieces)
        free = task.fence is None
        modes = cfg.free_modes if free else cfg.copy_modes
        modes_seen += [m for m in modes if m not in modes_seen]
        max_tokens = cfg.max_tokens
        if not free:
            max_tokens = min(2 * cfg.max_tokens, rewrite_budget(spans))
        runs: dict[str, list[Run]] = {m: [] for m in modes}
        for rep in range(cfg.repeats):
            for mode in modes:
                if progress:
                    progress(f"[{ti + 1}/{len(tasks)}] {task.name} {mode} #{rep + 1}")
                gc = GenConfig(
                    max_tokens=max_tokens,
                    speculate=mode != "plain",
                    policy=PolicyConfig(fixed_k=cfg.k),
                    exact_block=sess.exact_block if cfg.exact else None,
                )
                policy = sess.policy(gc.policy)
                drafter = _drafter(mode, sess, prompt, spans, policy, gc.sampling)
                runs[mode].append(engine_run(target, prompt, gc, drafter, policy, task.fence))
        results.append(task_record(target, task.kind, task.name, prompt, task.fence, runs))
    return {
        "bench": "draft_model_pair",
        "config": asdict(cfg),
        "model": sess.describe(),
        "machine": machine(),
        "tasks": results,
        "summary": summarise(
            results, modes_seen, pairs=[("auto", "lookup"), ("model", "plain"), ("auto", "plain")]
        ),
    }


def main(argv: list[str] | None = None) -> int:
    d = DraftBenchConfig()
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--model", default=d.model)
    p.add_argument("--draft", default=d.draft)
    p.add_argument("--backend", default=d.backend, choices=["llama.cpp", "torch"])
    p.add_argument("--kinds", nargs="+", default=list(d.kinds))
    p.add_argument("-n", "--n-per-kind", type=int, default=d.n_per_kind)
    p.add_argument("-r", "--repeats", type=int, default=d.repeats)
    p.add_argument("--max-lines", type=int, default=d.max_lines)
    p.add_argument("--max-tokens", type=int, default=d.max_tokens)
    p.add_argument("--ctx", type=int, default=d.n_ctx)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--k", type=int, default=None)
    p.add_argument("--exact", action="store_true")
    p.add_argument("--out", default="bench/results", help="folder for the JSON record")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    cfg = config_from_args(DraftBenchConfig, a)
    record = run_draft_bench(cfg, progress=log.info)
    path = save_record(record, a.out, "draft-bench")
    log.info("summary %s", json.dumps(record["summary"], indent=1))
    log.info("wrote %s", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
