"""Torch-backend benchmark: specedit vs transformers' prompt lookup vs plain, same model.

Contract: ``run_torch_bench(cfg)`` loads one model on the torch backend through
``app.runtime.loaded_model.load_model(backend="torch")`` (the product's path: batch
exactness check and cost calibration included), builds every task's prompt with
``app.edit.rewrite.build_prompt`` and runs, interleaved within each repeat:

  * ``plain``: the specedit engine with speculation off;
  * ``specedit``: prompt lookup (copy cursor) with the adaptive policy;
  * ``hf_pld``: ``model.generate(prompt_lookup_num_tokens=N, do_sample=False)``
    on the same ``nn.Module`` (transformers' own cache and loop), the peer;
  * ``hf`` (optional): ``model.generate`` greedy without lookup.

The specedit modes verify where ``engine.verifier.choose_verifier`` says (the Triton
kernel on CUDA); the record names it and the target's quantization and memory.
Every mode stops at the task's closing fence (a ``StoppingCriteria`` for
transformers) or after the same token cap. It returns a JSON-able record:
per task and mode the medians of decode tok/s, ratio to plain, greedy
equality with plain (outputs cut at the fence), and per kind the medians plus
``specedit_vs_hf_pld``. Run: ``python -m specedit.bench.torch_bench --help``.
"""

from __future__ import annotations

import argparse
import logging
import time
from dataclasses import asdict, dataclass

from ..app.options import RewriteOptions
from ..app.runtime.loaded_model import load_model
from ..app.runtime.stream import FencedText, StreamDecoder
from ..engine.verifier import choose_verifier
from .record import add_common, config_from_args, machine, save_and_log
from .spec_runs import Run, engine_run, rewrite_budget, summarise, task_record
from .tasks import load_tasks

log = logging.getLogger(__name__)

MODES = ("plain", "specedit", "hf_pld", "hf")


@dataclass(frozen=True)
class TorchBenchConfig:
    """What to run; the defaults are a short CPU run (minutes on 2 cores)."""

    model: str = "qwen2.5-coder-0.5b"
    """Catalog name, GGUF path or transformers checkpoint directory."""
    kinds: tuple[str, ...] = ("copy",)
    n_per_kind: int = 2
    repeats: int = 1
    modes: tuple[str, ...] = ("plain", "specedit", "hf_pld")
    max_lines: int = 20
    max_tokens: int = 160
    """Cap on generated tokens for every mode (rewrite tasks: min(cap, source * 1.3 + 64))."""
    pld_tokens: int = 10
    """transformers' ``prompt_lookup_num_tokens``."""
    n_ctx: int = 4096
    threads: int | None = None


def hf_run(target, prompt: list[int], max_tokens: int, fence: str | None, pld: int) -> Run:
    """transformers ``generate`` on the target's module; ``pld`` = 0 is plain greedy."""
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    class FenceStop(StoppingCriteria):
        def __init__(self) -> None:
            self.dec, self.seen = StreamDecoder(target), len(prompt)
            self.fenced = FencedText(fence) if fence is not None else None

        def __call__(self, input_ids, scores, **kw):
            new = input_ids[0, self.seen :].tolist()
            self.seen += len(new)
            piece = self.dec.feed(new)
            done = self.fenced is not None and self.fenced.feed(piece)
            return torch.tensor([done], device=input_ids.device)

    class Clock:  # generate() puts the prompt first, then every accepted batch
        def __init__(self) -> None:
            self.times: list[float] = []

        def put(self, value) -> None:
            self.times.append(time.perf_counter())

        def end(self) -> None:
            pass

    ids = torch.tensor([prompt], device=target.device)
    clock = Clock()
    kw = {"prompt_lookup_num_tokens": pld} if pld else {}
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = target.model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            eos_token_id=sorted(target.eos_ids),
            pad_token_id=min(target.eos_ids),
            stopping_criteria=StoppingCriteriaList([FenceStop()]),
            streamer=clock,
            **kw,
        )
    t_end = time.perf_counter()
    toks = [int(t) for t in out[0, len(prompt) :].tolist()]
    while toks and toks[-1] in target.eos_ids:
        toks.pop()
    n = len(toks)
    first = clock.times[1] if len(clock.times) > 1 else t_end
    return Run(
        decode_tps=max(n - 1, 0) / (t_end - first) if t_end > first else 0.0,
        e2e_tps=n / (t_end - t0),
        tokens=n,
        output=toks,
    )


def run_torch_bench(cfg: TorchBenchConfig, progress=None) -> dict:
    loaded = load_model(cfg.model, n_ctx=cfg.n_ctx, threads=cfg.threads, backend="torch")
    target = loaded.target
    tasks = load_tasks(list(cfg.kinds), cfg.n_per_kind, cfg.max_lines)
    results = []
    for ti, task in enumerate(tasks):
        prompt = task.prompt(target)
        max_tokens = cfg.max_tokens
        if prompt.fence is not None:
            max_tokens = min(max_tokens, rewrite_budget(prompt))
        runs: dict[str, list[Run]] = {m: [] for m in cfg.modes}
        for rep in range(cfg.repeats):
            for mode in cfg.modes:
                if progress:
                    progress(f"[{ti + 1}/{len(tasks)}] {task.name} {mode} #{rep + 1}")
                if mode.startswith("hf"):
                    pld = cfg.pld_tokens if mode == "hf_pld" else 0
                    r = hf_run(target, list(prompt.ids), max_tokens, prompt.fence, pld)
                else:
                    opts = RewriteOptions(draft="lookup" if mode == "specedit" else "none")
                    r = engine_run(loaded, prompt, opts, max_tokens)
                runs[mode].append(r)
        results.append(task_record(target, task.kind, task.name, prompt, runs))
    import torch
    import transformers

    return {
        "bench": "torch_backend",
        "config": asdict(cfg),
        "model": loaded.describe(),
        "device": str(target.device),
        "dtype": str(target.dtype),
        "target": target.describe(),  # quantization, KV cache kind, CUDA graphs, memory
        "verifier": choose_verifier(target).name,
        "machine": machine(
            {
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "torch_threads": torch.get_num_threads(),
                "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
            }
        ),
        "tasks": results,
        "summary": summarise(results, cfg.modes, pairs=[("specedit", "hf_pld")]),
    }


def main(argv: list[str] | None = None) -> int:
    d = TorchBenchConfig()
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_common(p, d)
    p.add_argument("--modes", nargs="+", default=list(d.modes), choices=MODES)
    p.add_argument("--pld-tokens", type=int, default=d.pld_tokens)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    cfg = config_from_args(TorchBenchConfig, a)
    record = run_torch_bench(cfg, progress=log.info)
    return save_and_log(record, a.out, "torch-bench")


if __name__ == "__main__":
    raise SystemExit(main())
