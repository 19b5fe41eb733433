"""Side-by-side benchmark: plain decoding, specedit, and llama-cpp-python's prompt lookup.

Contract: ``run_bench(cfg)`` loads one model, builds every task's prompt with
the product's own prompt path, and runs each mode on each task ``repeats``
times, interleaving modes within a repeat so machine noise hits them alike.
It returns a JSON-able record with, per task and mode, the medians of decode
tok/s, tokens per target call and acceptance, the ratio to plain, whether
greedy outputs equal plain's, and the model's prefill tok/s on the task's
source (the physical limit for copying). ``summarise`` reduces that to medians
per task kind.

Modes:
  * ``plain``: the specedit engine with speculation off (k = 0), same code path;
  * ``specedit``: prompt lookup with the copy cursor and adaptive k;
  * ``exact``: specedit in exact mode (sub-blocks with 1-token numerics);
  * ``pld10`` / ``pld2``: ``llama_cpp.Llama(draft_model=LlamaPromptLookupDecoding(
    num_pred_tokens=N))``, the peer, with its own context (it needs
    ``logits_all``). Its decode time is its total time minus its own prefill of
    the same prompt, measured just before on the same instance.
Decode tok/s everywhere = tokens after the first / time after the first token.
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import asdict, dataclass, field

from ..app.options import RewriteOptions
from ..app.runtime.generation import run_prompt
from ..app.runtime.loaded_model import LoadedModel, load_model
from ..app.runtime.prompt import Prompt
from ..app.runtime.stream import closing_fence_at, tokens_through_fence
from .record import machine
from .spec_runs import rewrite_budget
from .tasks import Task, load_tasks

log = logging.getLogger(__name__)

ALL_MODES = ("plain", "specedit", "exact", "pld10", "pld2")


@dataclass(frozen=True)
class BenchConfig:
    """What to run; defaults give a full run of a few minutes per kind on 2 cores."""

    model: str = "qwen2.5-coder-0.5b"
    kinds: tuple[str, ...] = ("copy", "edit", "summarization", "rag", "writing", "roleplay")
    n_per_kind: int = 2
    repeats: int = 3
    modes: tuple[str, ...] = ("plain", "specedit", "exact", "pld10", "pld2")
    max_lines: int = 60
    max_tokens: int = 256
    """Cap for free-form tasks; rewrite tasks get the file's length plus a margin."""
    n_ctx: int = 8192
    threads: int | None = None
    k: int | None = None


@dataclass
class Run:
    decode_tps: float
    tokens: int
    tokens_per_call: float
    acceptance: float
    output: list[int] = field(default_factory=list)
    text: str = ""


def _body(text: str, fence: str | None) -> str:
    """The text before the closing fence line (a peer's stop string drops that line)."""
    at = closing_fence_at(text, fence) if fence else -1
    return (text[:at] if at >= 0 else text).rstrip("\n")


def _ours(loaded: LoadedModel, prompt: Prompt, mode: str, max_tokens: int, k) -> Run:
    opts = RewriteOptions(draft="none" if mode == "plain" else "lookup", k=k, exact=mode == "exact")
    r = run_prompt(loaded, prompt, opts, max_tokens, cold=True)
    m = r.metrics
    out = tokens_through_fence(loaded.target, r.tokens, prompt.fence)  # not past the fence
    return Run(m.decode_tps, len(out), m.tokens_per_call, m.acceptance, out, r.text)


class Peer:
    """llama-cpp-python's own prompt-lookup decoding on the same GGUF file."""

    def __init__(self, loaded: LoadedModel, n_ctx: int, threads: int | None):
        import llama_cpp
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

        self._draft_cls = LlamaPromptLookupDecoding
        self.llm = llama_cpp.Llama(
            model_path=str(loaded.model_path),
            n_ctx=n_ctx,
            n_batch=512,
            n_threads=threads or loaded.target.threads,
            logits_all=True,
            verbose=False,
            draft_model=LlamaPromptLookupDecoding(num_pred_tokens=10),
        )

    def run(self, prompt: list[int], n_pred: int, max_tokens: int, fence: str | None) -> Run:
        self.llm.draft_model = self._draft_cls(num_pred_tokens=n_pred)
        # its own prefill time on the same prompt, then a full run from an empty cache
        self.llm.reset()
        t = time.perf_counter()
        self.llm.eval(prompt)
        prefill = time.perf_counter() - t
        self.llm.reset()
        t = time.perf_counter()
        res = self.llm.create_completion(
            prompt=prompt,
            max_tokens=max_tokens,
            temperature=0.0,
            top_k=1,
            stop=[f"\n{fence}"] if fence else [],
        )
        total = time.perf_counter() - t
        n = res["usage"]["completion_tokens"]
        dt = max(total - prefill, 1e-9)
        return Run(max(n - 1, 0) / dt, n, 0.0, 0.0, [], res["choices"][0]["text"])


def _prefill_tps(loaded: LoadedModel, ids: list[int]) -> float:
    target = loaded.target
    best = 0.0
    for _ in range(2):
        target.rollback(0)
        t = time.perf_counter()
        target.eval(ids, 0, [len(ids) - 1])
        best = max(best, len(ids) / (time.perf_counter() - t))
    target.rollback(0)
    return best


CEILING_BLOCKS = (32, 48, 64, 96, 128)
"""Block sizes the verify ceiling tries: the policy's (multiples of 8 up to ``k_max + 1``)
from where a block's fixed cost stops mattering."""


def verify_ceiling_tps(loaded: LoadedModel, ids: list[int], sizes=CEILING_BLOCKS) -> float:
    """The fastest a perfect copy could go: tokens per second of a verification call with
    logits at every row (what greedy checking of a fully accepted block needs), at the
    middle of the source text, for the block sizes the policy uses; best of two each."""
    target = loaded.target
    pos = max(1, min(len(ids) // 2, len(ids) - max(sizes)))
    block = (ids[pos:] * (max(sizes) // max(1, len(ids) - pos) + 1))[: max(sizes)]
    target.rollback(0)
    target.eval(ids[:pos], 0, [pos - 1])
    best = 0.0
    for b in sizes:
        for _ in range(2):
            t = time.perf_counter()
            target.eval(block[:b], pos, range(b))
            best = max(best, b / (time.perf_counter() - t))
            target.rollback(pos)
    target.rollback(0)
    return best


def run_bench(cfg: BenchConfig, progress=None) -> dict:
    loaded = load_model(cfg.model, n_ctx=cfg.n_ctx, threads=cfg.threads)
    tasks = load_tasks(list(cfg.kinds), cfg.n_per_kind, cfg.max_lines)
    peer = Peer(loaded, cfg.n_ctx, cfg.threads) if {"pld10", "pld2"} & set(cfg.modes) else None
    results = []
    for ti, task in enumerate(tasks):
        prompt = task.prompt(loaded.target)
        max_tokens = rewrite_budget(prompt) if prompt.fence is not None else cfg.max_tokens
        runs: dict[str, list[Run]] = {m: [] for m in cfg.modes}
        for rep in range(cfg.repeats):
            for mode in cfg.modes:
                if progress:
                    progress(f"[{ti + 1}/{len(tasks)}] {task.name} {mode} #{rep + 1}")
                if mode.startswith("pld"):
                    r = peer.run(list(prompt.ids), int(mode[3:]), max_tokens, prompt.fence)
                else:
                    r = _ours(loaded, prompt, mode, max_tokens, cfg.k)
                runs[mode].append(r)
        results.append(_task_record(loaded, task, prompt, runs))
    return {
        "config": asdict(cfg),
        "model": loaded.describe(),
        "machine": machine({"llama_cpp_python": _llama_cpp_version()}),
        "tasks": results,
        "summary": summarise(results, cfg.modes),
    }


def _task_record(loaded, task: Task, prompt: Prompt, runs: dict[str, list[Run]]) -> dict:
    plain = runs.get("plain", [])
    plain_out = plain[0].output if plain else None
    plain_text = plain[0].text if plain else None
    rec = {"kind": task.kind, "name": task.name, "prompt_tokens": len(prompt), "modes": {}}
    base = statistics.median(r.decode_tps for r in plain) if plain else None
    for mode, rs in runs.items():
        tps = statistics.median(r.decode_tps for r in rs)
        if mode.startswith("pld"):  # the peer's text, against plain's text up to the fence
            equal = plain_text is not None and _body(rs[0].text, prompt.fence) == _body(
                plain_text, prompt.fence
            )
        else:  # token for token, up to the closing fence
            equal = plain_out is not None and rs[0].output == plain_out
        rec["modes"][mode] = {
            "decode_tps": round(tps, 2),
            "decode_tps_runs": [round(r.decode_tps, 2) for r in rs],
            "tokens": rs[0].tokens,
            "tokens_per_call": round(statistics.median(r.tokens_per_call for r in rs), 3),
            "acceptance": round(statistics.median(r.acceptance for r in rs), 4),
            "ratio_to_plain": round(tps / base, 3) if base else None,
            "greedy_equal_plain": equal,
        }
    ids = loaded.target.tokenize(task.source_text)[: loaded.target.n_ctx - 8]
    rec["prefill_tps"] = round(_prefill_tps(loaded, ids), 1)
    if "specedit" in rec["modes"]:
        spec = rec["modes"]["specedit"]["decode_tps"]
        rec["copy_fraction_of_prefill"] = round(spec / rec["prefill_tps"], 3)
        if task.kind == "copy":
            rec["verify_ceiling_tps"] = round(verify_ceiling_tps(loaded, ids), 1)
            rec["ceiling_fraction_of_prefill"] = round(
                rec["verify_ceiling_tps"] / rec["prefill_tps"], 3
            )
            rec["copy_fraction_of_ceiling"] = round(spec / rec["verify_ceiling_tps"], 3)
    return rec


def summarise(results: list[dict], modes) -> dict:
    out: dict = {}
    kinds = sorted({r["kind"] for r in results}, key=[r["kind"] for r in results].index)
    for kind in kinds:
        rs = [r for r in results if r["kind"] == kind]
        row = {}
        for mode in modes:
            ratios = [
                r["modes"][mode]["ratio_to_plain"] for r in rs if r["modes"][mode]["ratio_to_plain"]
            ]
            row[mode] = {
                "decode_tps": round(
                    statistics.median(r["modes"][mode]["decode_tps"] for r in rs), 2
                ),
                "ratio_to_plain": round(statistics.median(ratios), 3) if ratios else None,
                "tokens_per_call": round(
                    statistics.median(r["modes"][mode]["tokens_per_call"] for r in rs), 3
                ),
                "acceptance": round(
                    statistics.median(r["modes"][mode]["acceptance"] for r in rs), 4
                ),
                "greedy_equal": sum(r["modes"][mode]["greedy_equal_plain"] for r in rs),
                "tasks": len(rs),
            }
        row["prefill_tps"] = round(statistics.median(r["prefill_tps"] for r in rs), 1)
        if "specedit" in modes:
            row["copy_fraction_of_prefill"] = round(
                statistics.median(r["copy_fraction_of_prefill"] for r in rs), 3
            )
            peers = [m for m in modes if m.startswith("pld")]
            if peers:
                best_peer = [max(r["modes"][p]["decode_tps"] for p in peers) for r in rs]
                row["specedit_vs_best_peer"] = round(
                    statistics.median(
                        r["modes"]["specedit"]["decode_tps"] / b
                        for r, b in zip(rs, best_peer, strict=True)
                        if b
                    ),
                    3,
                )
        out[kind] = row
    return out


def _llama_cpp_version() -> str:
    import llama_cpp

    return llama_cpp.__version__
