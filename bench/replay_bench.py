"""Policy replay: compare speculation policies on recorded outputs, free of machine noise.

Contract: ``record_tasks(loaded, tasks)`` runs each task once (default settings,
greedy) and returns a record: each task's prompt, labelled spans and output tokens,
plus a cost table (fastest of three calls per block size, logits at every row, at
three context positions). ``replay(record, policies, drafter_for)`` runs the lookup
drafter and each policy against the recorded outputs: a draft token is accepted when
it equals the recorded token (greedy decoding makes acceptance a function of the
output alone) and a step costs the table's time for its block size at its position.
Each task also gets two bounds under the same costs: ``plain`` (one token per call)
and ``oracle`` (the recorded output drafting itself, split into the cheapest
blocks: no drafter can do better). A live run differs by the machine's noise and
by the rare token a batch-inexact backend flips at another block size.

CLI: ``specedit bench replay [--model M] [--kinds ...] [-n N] [--from FILE] [--policy
NAME:key=value,...] [--drafter lookup|suffix|switch ...] [--history] [--table-costs]``: records
(or loads ``--from``), replays the default policy, the policy without the growth cap and any
``--policy`` given with each ``--drafter`` (:data:`DRAFTERS`; columns ``DRAFTER/POLICY``,
the lookup drafter's named by the policy alone), and prints simulated tok/s as ratios to
plain and fractions of the oracle, with medians per kind. The kind ``heldout`` is
``bench.server_peer``'s held-out whole-file copies, prompted as there; with ``--history`` the
drafters also copy from the earlier tasks' outputs of the same kind; ``--table-costs``: see
:func:`replay`. The record (its ``results`` added) goes to ``bench/results`` and can be
replayed again with ``--from``.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import json
import logging
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ..engine.policy import AdaptivePolicy, PolicyConfig
from .record import save_record

log = logging.getLogger(__name__)

SIZES = (1, 2, 3, 4, 8, 16, 24, 32, 48, 64, 96, 128)
POSITIONS = (500, 1000, 1500)


class CostTable:
    """Seconds per call by block size and position, interpolated linearly in both."""

    def __init__(self, table: dict[str, dict[str, float]]) -> None:
        self.t = {int(p): {int(b): float(v) for b, v in row.items()} for p, row in table.items()}
        self.pos = sorted(self.t)
        self.sizes = {p: sorted(row) for p, row in self.t.items()}

    def _row(self, p: int, b: int) -> float:
        row = self.t[p]
        if b in row:
            return row[b]
        xs = self.sizes[p]
        j = min(max(bisect.bisect_left(xs, b), 1), len(xs) - 1)
        lo, hi = xs[j - 1], xs[j]
        return row[lo] + (row[hi] - row[lo]) * (b - lo) / (hi - lo)

    def at(self, b: int, pos: int) -> float:
        ps = self.pos
        if pos <= ps[0] or len(ps) == 1:
            return self._row(ps[0], b)
        if pos >= ps[-1]:
            return self._row(ps[-1], b)
        j = bisect.bisect_left(ps, pos)
        lo, hi = ps[j - 1], ps[j]
        w = (pos - lo) / (hi - lo)
        return self._row(lo, b) * (1 - w) + self._row(hi, b) * w


def measure_costs(target, tokens: Sequence[int], positions=POSITIONS, sizes=SIZES) -> dict:
    """The cost table: fastest of three calls per size at each position (cache emptied).

    Positions past the tokens at hand are dropped; with none left, the one position
    the tokens allow is used.
    """
    table: dict[str, dict[str, float]] = {}
    top = max(sizes)
    room = min(len(tokens), target.n_ctx) - top
    fit = [p for p in positions if p <= room] or ([room] if room > 0 else [])
    for pos in fit:
        target.rollback(0)
        target.eval(tokens[:pos], 0, [pos - 1])
        pol = AdaptivePolicy()  # its calibration: a warm-up, then the fastest of 3 per size
        pol.calibrate(target, tokens[pos : pos + top], pos, sizes=sizes, repeats=3)
        table[str(pos)] = {str(b): t for b, t in pol.costs.items()}
    target.rollback(0)
    if not table:
        raise ValueError(f"too few tokens ({len(tokens)}) to measure {top}-token calls")
    return table


def record_tasks(loaded, tasks) -> dict:
    """Run each task once with the default settings; keep prompts, spans and outputs."""
    from ..app.options import RewriteOptions
    from .spec_runs import engine_run, rewrite_budget

    target = loaded.target
    out = {
        "model": loaded.model_name,
        "model_path": str(loaded.model_path),
        "session_costs": loaded.costs,
        "tasks": [],
    }
    for task in tasks:
        prompt = task.prompt(target)
        budget = rewrite_budget(prompt) if prompt.fence else 256
        r = engine_run(loaded, prompt, RewriteOptions(), budget)
        out["tasks"].append(
            {
                "kind": task.kind,
                "name": task.name,
                "prompt": [int(t) for t in prompt.ids],
                "spans": [list(s) for s in prompt.spans],
                "output": [int(t) for t in r.output],
            }
        )
        log.info("recorded %s %s: %d tokens", task.kind, task.name, r.tokens)
    ids = [t for task in out["tasks"] for t in task["prompt"] + task["output"]]
    out["cost_table"] = measure_costs(target, ids)
    return out


@dataclasses.dataclass
class Replay:
    tps: float
    seconds: float
    calls: int
    tokens: list[int]


def replay_task(task: dict, policy: AdaptivePolicy, drafter, costs: CostTable) -> Replay:
    """Decode the recorded output again with ``drafter`` and ``policy`` (see module doc)."""
    prompt, output = task["prompt"], task["output"]
    out = output[:1]  # the first token comes from the prefill
    ctx = list(prompt) + out
    seconds, calls = 0.0, 0
    while len(out) < len(output):
        probe = drafter.propose(ctx, policy.cfg.fixed_k or policy.cfg.k_max) if drafter else None
        k = 0
        if probe is not None:
            k = policy.choose(len(probe) > 0, probe.match_len, anchored=probe.anchored)
            k = min(k, len(probe))
        draft = [int(t) for t in probe.tokens[:k]] if k else []
        want = output[len(out) :]
        j = 0
        while j < len(draft) and j < len(want) and draft[j] == want[j]:
            j += 1
        new = want[: j + 1]
        dt = costs.at(k + 1, len(ctx) - 1)
        seconds += dt
        calls += 1
        policy.observe(k + 1, dt, len(draft), j, len(new), probe.match_len if k else 0)
        out += new
        ctx += new
    return Replay((len(out) - 1) / seconds if seconds else 0.0, seconds, calls, out)


def oracle_tps(task: dict, costs: CostTable, max_block: int = 128) -> float:
    """The bound: the least time any drafter could take to emit the recorded output.

    Every call's draft is the output itself (fully accepted) and the block sizes are
    the cheapest split of the output, found by dynamic programming over sizes
    1..``max_block``: a call at ``i`` tokens emitted, over ``b`` tokens, costs
    ``t(b, prompt + i - 1)`` and reaches ``i + b`` tokens.
    """
    p, n = len(task["prompt"]), len(task["output"])
    best = [0.0] * (n + 1)
    for i in range(n - 1, 0, -1):
        best[i] = min(costs.at(b, p + i - 1) + best[min(n, i + b)] for b in range(1, max_block + 1))
    return (n - 1) / best[1] if n > 1 else 0.0


def replay(
    record: dict,
    policies: dict[str, PolicyConfig],
    drafter_for: Callable[[dict], object] | dict[str, Callable[[dict], object]],
    table_costs: bool = False,
) -> dict:
    """Replay every task under every policy; tok/s, ratio to plain, fraction of oracle.

    ``drafter_for`` makes a task's drafter, or is a dict of them by name: then every
    drafter runs every policy, in columns ``NAME/POLICY`` (``POLICY`` for ``lookup``).
    Each policy starts from the record's ``session_costs`` (the load-time calibration), or
    with ``table_costs`` from the cost table at its first position (where a calibration
    that ran under another job's load would mislead every policy alike)."""
    if isinstance(drafter_for, dict):
        makers = drafter_for
        cols = {_column(d, p): (cfg, d) for d in makers for p, cfg in policies.items()}
    else:
        makers = {"": drafter_for}
        cols = {p: (cfg, "") for p, cfg in policies.items()}
    costs = CostTable(record["cost_table"])
    session_costs = {int(k): float(v) for k, v in record["session_costs"].items()}
    if table_costs:
        session_costs = {b: costs.at(b, costs.pos[0]) for b in session_costs}
    rows = []
    for task in record["tasks"]:
        if len(task["output"]) < 2:
            continue
        plain = replay_task(task, AdaptivePolicy(PolicyConfig(), dict(session_costs)), None, costs)
        oracle = oracle_tps(task, costs)
        row = {"kind": task["kind"], "name": task["name"], "plain": plain.tps, "oracle": oracle}
        for name, (cfg, dname) in cols.items():
            r = replay_task(
                task, AdaptivePolicy(cfg, dict(session_costs)), makers[dname](task), costs
            )
            if r.tokens[: len(task["output"])] != task["output"]:
                raise AssertionError(f"replay of {task['name']} did not reproduce its output")
            row[name] = {
                "tps": r.tps,
                "calls": r.calls,
                "ratio_to_plain": r.tps / plain.tps,
                "fraction_of_oracle": r.tps / oracle,
            }
        rows.append(row)
    summary = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        sel = [r for r in rows if r["kind"] == kind]
        summary[kind] = {
            name: {
                m: statistics.median(r[name][m] for r in sel)
                for m in ("ratio_to_plain", "fraction_of_oracle")
            }
            for name in cols
        }
        summary[kind]["oracle_ratio_to_plain"] = statistics.median(
            r["oracle"] / r["plain"] for r in sel
        )
    return {"tasks": rows, "summary": summary}


def _column(drafter: str, policy: str) -> str:
    return policy if drafter == "lookup" else f"{drafter}/{policy}"


DRAFTERS = ("lookup", "suffix", "switch")
"""``--drafter``: prompt lookup (``engine.lookup``, the product's default), the suffix tree
(``engine.suffix``), and the two by the seed's rule (``engine.suffix.SwitchDrafter``: lookup
unless its acceptance is under 0.5 and the suffix tree's is higher, or it has nothing).
``suffix`` and ``switch`` take ``SuffixDrafter`` settings: ``suffix:max_depth=32,...``."""


def drafter_makers(
    target, specs: Sequence[str], history: Callable[[dict], list[int]] | None = None
) -> dict[str, Callable[[dict], object]]:
    """A task's drafter by its spec (:data:`DRAFTERS`), over ``target``'s vocabulary.

    ``history(task)``, when given, is token ids the drafter also copies from, as if before
    the prompt (``engine.prediction.BesideDrafter``): earlier requests' outputs."""
    import ast

    from ..app.runtime.local_runner import lookup_drafter
    from ..engine.prediction import BesideDrafter
    from ..engine.suffix import SuffixDrafter, SwitchDrafter

    def layout(task) -> tuple[list[int], list[tuple], int]:
        pre = history(task) if history is not None else []
        n = len(pre)
        spans = [(a + n, b + n, lab) for a, b, lab in task["spans"]]
        return pre, [(0, n, "history")] * bool(n) + spans, n + len(task["prompt"])

    def lookup(task):
        _, spans, plen = layout(task)
        return lookup_drafter(target, spans, plen)

    def maker(spec: str):
        name, _, body = spec.partition(":")
        if name not in DRAFTERS:
            raise ValueError(f"unknown drafter {name!r} (known: {', '.join(DRAFTERS)})")
        kw = {
            k: ast.literal_eval(v) for k, _, v in (i.partition("=") for i in body.split(",") if i)
        }

        def suffix(task):
            _, spans, plen = layout(task)
            return SuffixDrafter(spans=spans, prompt_len=plen, **kw)

        inner = {"lookup": lookup, "suffix": suffix}.get(name)
        if inner is None:
            inner = lambda task: SwitchDrafter(lookup(task), suffix(task))  # noqa: E731
        return lambda task: BesideDrafter(inner(task), layout(task)[0])

    return {s: maker(s) for s in specs}


def earlier_outputs(record: dict) -> Callable[[dict], list[int]]:
    """``history`` for :func:`drafter_makers`: the outputs of the record's tasks of the same
    kind before this one (a server's earlier answers, as SuffixDecoding's global tree)."""
    seen: dict[int, list[int]] = {}
    acc: dict[str, list[int]] = {}
    for t in record["tasks"]:
        seen[id(t)] = list(acc.get(t["kind"], []))
        acc.setdefault(t["kind"], []).extend(t["output"])
    return lambda task: seen[id(task)]


def heldout_tasks() -> list:
    """``bench.server_peer``'s held-out whole files, with its copy instruction."""
    from .server_peer import COPY_INSTRUCTION, HELD_OUT
    from .tasks import Task, stdlib_dir

    out = []
    for name in HELD_OUT:
        path = stdlib_dir() / name
        if path.exists():
            out.append(Task("heldout", name, path.read_text(), COPY_INSTRUCTION))
        else:
            log.warning("bench replay: %s not found, skipped", path)
    return out


def parse_policy(spec: str) -> tuple[str, PolicyConfig]:
    """``name:key=value,key=value`` -> a PolicyConfig (values as Python literals)."""
    import ast

    name, _, body = spec.partition(":")
    fields = {f.name for f in dataclasses.fields(PolicyConfig)}
    kw = {}
    for item in filter(None, body.split(",")):
        key, _, value = item.partition("=")
        if key not in fields:
            raise ValueError(f"unknown policy setting {key!r} (known: {', '.join(sorted(fields))})")
        kw[key] = ast.literal_eval(value)
    return name, PolicyConfig(**kw)


def main(argv: list[str] | None = None) -> int:
    from ..app.runtime.loaded_model import load_model
    from .tasks import load_tasks

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b")
    p.add_argument("--kinds", nargs="+", default=["copy", "edit", "summarization", "rag"])
    p.add_argument("-n", "--n-per-kind", type=int, default=4)
    p.add_argument("--max-lines", type=int, default=60)
    p.add_argument("--ctx", dest="n_ctx", type=int, default=8192)
    p.add_argument("--from", dest="source", default=None, help="replay this record")
    p.add_argument("--policy", action="append", default=[], help="NAME:key=value,...")
    p.add_argument(
        "--drafter", action="append", help="lookup|suffix|switch[:key=value,...] (default: lookup)"
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="drafters also copy from the earlier tasks' outputs of the same kind",
    )
    p.add_argument(
        "--table-costs",
        action="store_true",
        help="policies start from the cost table, not the record's load-time calibration",
    )
    p.add_argument("--out", default="bench/results")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if a.source:
        rec = json.loads(Path(a.source).read_text())
        a.model = rec.get("model_path") or rec["model"]
    loaded = load_model(a.model, n_ctx=a.n_ctx)
    if not a.source:
        kinds = [k for k in a.kinds if k != "heldout"]
        tasks = load_tasks(kinds, a.n_per_kind, a.max_lines)
        if "heldout" in a.kinds:
            tasks += heldout_tasks()[: a.n_per_kind]
        rec = record_tasks(loaded, tasks)
    policies = {"default": PolicyConfig(), "no-growth-cap": PolicyConfig(growth=None)}
    policies.update(parse_policy(s) for s in a.policy)
    drafters = list(dict.fromkeys(a.drafter or ["lookup"]))
    history = earlier_outputs(rec) if a.history else None
    makers = drafter_makers(loaded.target, drafters, history)
    result = replay(rec, policies, makers, table_costs=a.table_costs)
    cols = [_column(d, p) for d in drafters for p in policies]
    # the recorded tasks stay as they are, so the saved file can be replayed (--from)
    rec = {**rec, "policies": {k: dataclasses.asdict(v) for k, v in policies.items()}}
    rec["drafters"], rec["history"] = drafters, a.history
    rec["table_costs"] = a.table_costs
    rec["results"] = result
    path = save_record(rec, a.out, "replay")
    lines = [f"policy replay: {rec['model']} (simulated tok/s ratio to plain | fraction of oracle)"]
    for row in result["tasks"]:
        cells = "  ".join(
            f"{n} {row[n]['ratio_to_plain']:.2f}x|{row[n]['fraction_of_oracle']:.2f}" for n in cols
        )
        lines.append(
            f"{row['kind']:<14}{row['name']:<18}oracle {row['oracle'] / row['plain']:.2f}x  {cells}"
        )
    for kind, s in result["summary"].items():
        cells = "  ".join(
            f"{n} {s[n]['ratio_to_plain']:.2f}x|{s[n]['fraction_of_oracle']:.2f}" for n in cols
        )
        lines.append(f"median {kind:<25}oracle {s['oracle_ratio_to_plain']:.2f}x  {cells}")
    lines.append(f"record: {path}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
