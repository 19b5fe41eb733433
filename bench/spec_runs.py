"""Shared pieces of the torch-backend and draft-model benchmarks: one run, medians, summary.

Contract: ``rewrite_budget(prompt)`` is the output cap of a rewrite task;
``engine_run(loaded, prompt, opts, max_tokens)`` runs the product's one door
(``app.runtime.generation.run_prompt``) once from an empty cache and returns a ``Run``;
``task_record`` reduces several runs per mode to medians, ratios to ``plain`` and
greedy equality (outputs cut at the closing fence, so a block accepted past the
fence does not count as a difference); ``summarise`` gives medians per task kind.

Figures come from the run's ``Metrics`` (the one source): decode tok/s counts the
time after the first token; end-to-end tok/s = tokens / (prefill + decode), which
also charges a draft model's own prefill (it runs at the first draft step).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..app.options import RewriteOptions
from ..app.runtime.generation import run_prompt
from ..app.runtime.loaded_model import LoadedModel
from ..app.runtime.prompt import Prompt
from ..app.runtime.stream import tokens_through_fence


@dataclass
class Run:
    decode_tps: float
    e2e_tps: float
    tokens: int
    tokens_per_call: float = 0.0
    acceptance: float = 0.0
    by_source: dict = field(default_factory=dict)
    output: list[int] = field(default_factory=list)


def rewrite_budget(prompt: Prompt) -> int:
    """Output tokens a rewrite task may take: 1.3 times its source's tokens, plus 64."""
    return int(prompt.part_tokens * 1.3) + 64


def engine_run(loaded: LoadedModel, prompt: Prompt, opts: RewriteOptions, max_tokens: int) -> Run:
    """One run of ``prompt`` from an empty cache through the product's door."""
    r = run_prompt(loaded, prompt, opts, max_tokens, cold=True)
    m = r.metrics
    return Run(
        decode_tps=m.decode_tps,
        e2e_tps=m.e2e_tps,
        tokens=len(r.tokens),
        tokens_per_call=m.tokens_per_call,
        acceptance=m.acceptance,
        by_source=m.snapshot()["acceptance_by_source"],
        output=r.tokens,
    )


def task_record(target, kind: str, name: str, prompt: Prompt, runs: dict[str, list[Run]]) -> dict:
    fence = prompt.fence
    plain = runs.get("plain")
    base = statistics.median(r.decode_tps for r in plain) if plain else None
    base_e2e = statistics.median(r.e2e_tps for r in plain) if plain else None
    ref = tokens_through_fence(target, plain[0].output, fence) if plain else None
    rec: dict = {"kind": kind, "name": name, "prompt_tokens": len(prompt), "modes": {}}
    for mode, rs in runs.items():
        tps = statistics.median(r.decode_tps for r in rs)
        e2e = statistics.median(r.e2e_tps for r in rs)
        out = tokens_through_fence(target, rs[0].output, fence)
        n = min(len(out), len(ref)) if ref is not None else 0
        rec["modes"][mode] = {
            "decode_tps": round(tps, 2),
            "decode_tps_runs": [round(r.decode_tps, 2) for r in rs],
            "e2e_tps": round(e2e, 2),
            "tokens": rs[0].tokens,
            "tokens_per_call": round(statistics.median(r.tokens_per_call for r in rs), 3),
            "acceptance": round(statistics.median(r.acceptance for r in rs), 4),
            "acceptance_by_source": rs[0].by_source,
            "ratio_to_plain": round(tps / base, 3) if base else None,
            "e2e_ratio_to_plain": round(e2e / base_e2e, 3) if base_e2e else None,
            "greedy_equal_plain": ref is not None and out == ref,
            "equal_prefix_tokens": next((i for i in range(n) if out[i] != ref[i]), n),
        }
    return rec


def summarise(results: list[dict], modes: Sequence[str], pairs=()) -> dict:
    """Medians per kind and mode; ``pairs`` adds median ratios ``a/b`` of decode tok/s."""
    out: dict = {}
    for kind in dict.fromkeys(r["kind"] for r in results):
        rs = [r for r in results if r["kind"] == kind]
        row: dict = {}
        for mode in modes:
            ms = [r["modes"][mode] for r in rs if mode in r["modes"]]
            if not ms:
                continue
            ratios = [m["ratio_to_plain"] for m in ms if m["ratio_to_plain"]]
            row[mode] = {
                "decode_tps": round(statistics.median(m["decode_tps"] for m in ms), 2),
                "e2e_tps": round(statistics.median(m["e2e_tps"] for m in ms), 2),
                "ratio_to_plain": round(statistics.median(ratios), 3) if ratios else None,
                "tokens_per_call": round(statistics.median(m["tokens_per_call"] for m in ms), 3),
                "acceptance": round(statistics.median(m["acceptance"] for m in ms), 4),
                "greedy_equal": sum(m["greedy_equal_plain"] for m in ms),
                "tasks": len(ms),
            }
        for a, b in pairs:
            both = [r for r in rs if a in r["modes"] and b in r["modes"]]
            vals = [
                r["modes"][a]["decode_tps"] / r["modes"][b]["decode_tps"]
                for r in both
                if r["modes"][b]["decode_tps"]
            ]
            if vals:
                row[f"{a}_vs_{b}"] = round(statistics.median(vals), 3)
        out[kind] = row
    return out
