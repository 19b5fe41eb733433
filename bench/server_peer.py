"""``specedit bench peer``: specedit against llama.cpp's own ``llama-server`` and
llama-cpp-python's prompt lookup, on the same prompt, model and machine, side by side.

Contract: ``specedit bench peer [--model M] [-r R] [--configs C ...] [--pld N ...]
[--files F ...] [--no-renames] [--clients NAME ...] [--ctx N] [--threads T] [--out DIR]``.
:func:`load_tasks` builds each task's prompt once, as token ids, through the product's own
prompt path, and every mode runs those ids:

* **copy**: held-out whole-file copies: :data:`HELD_OUT`, standard-library files of the
  running Python that no other suite here uses (300-700 tokens), rewritten whole with "Output
  the file exactly as it is, unchanged." (``app.edit.prompts.rewrite_prompt``, as ``specedit rewrite
  --edit whole`` asks; the answer ends at its closing fence);
* **rename**: :data:`RENAMES`, a small rename answered with the whole file;
* **client**: a real client's recorded request (``bench/data/clients/NAME.json``, recorded
  by ``bench/client_record.py``): its exact messages through the model's chat template as
  ``serve --http`` renders them (``app.server.openai_run.request_prompt``).

Modes, interleaved within each repeat so machine noise hits them alike:

* ``specedit``: the product's one door, ``app.runtime.generation.run_prompt`` (prompt lookup, the
  copy cursor, adaptive k), from an empty cache;
* ``pldN``: llama-cpp-python's ``LlamaPromptLookupDecoding(num_pred_tokens=N)``
  (``bench.run.Peer``, decode time = its total minus its own prefill);
* ``server:CONFIG``: a fresh ``llama-server`` per run (``bench.llama_server``: its
  ``ngram-mod`` pool is shared across requests, so a server kept between runs would draft
  from the previous run's answer), the ids sent to ``/completion``, its ``timings`` read.

Every mode is greedy (temperature 0, a fixed seed). Decode tok/s is tokens after the first
over the time after the first, for all three. The reference answer is ``server:none``'s
(plain greedy decoding in llama.cpp), else the first mode's; each answer is compared with it
(text up to the closing fence) and where it differs the first differing line is reported
(batched evaluation changes llama.cpp's CPU logits slightly, README "Exactness", so a
speculative answer can part from the plain one at a near tie).

The **verify ceiling** (``bench.run.verify_ceiling_tps``: one verification call with logits at
every row, at the block sizes the policy uses, best of two) is measured on each task in each
repeat, after its modes: no decoder that checks every token against the target's logits
copies faster, so specedit's and llama-server's tok/s are also given as fractions of it.

Prints a table per task and the medians per kind: tok/s of every mode (llama-server's with
its acceptance), the ceiling, specedit over the best llama-server configuration and over
the best prompt-lookup peer, specedit and the best llama-server configuration as fractions
of the ceiling, and the agreement; saves ``<out>/peer-<time>.json`` with every run, the
machine (``lscpu``'s model name), the code's commit and ``llama-server --version``,
rewritten after each task (a run cut short keeps the tasks it finished).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from . import llama_server as ls
from .record import machine, save_record

log = logging.getLogger(__name__)

HELD_OUT = ("secrets.py", "signal.py", "email/iterators.py", "json/scanner.py", "urllib/error.py")
"""Standard-library files no other suite uses (bench/tasks.py, bench/data, the tests)."""
RENAMES = (("urllib/error.py", "Rename the class URLError to UrlError everywhere."),)
COPY_INSTRUCTION = "Output the file exactly as it is, unchanged."  # bench/tasks.py's copy
CLIENTS_DIR = Path(__file__).resolve().parent / "data" / "clients"
CLIENT_MAX_TOKENS = 1024
"""The answer's cap for a recorded request that sets none (aider sets none)."""
SERVER = "server:"


@dataclass(frozen=True)
class PeerConfig:
    """What ``specedit bench peer`` runs."""

    model: str = "qwen2.5-coder-0.5b"
    """Catalog name or GGUF path: the same file for every mode."""
    repeats: int = 2
    configs: tuple[str, ...] = tuple(ls.CONFIGS)
    """llama-server configurations (``bench.llama_server.CONFIGS``)."""
    pld: tuple[int, ...] = (10,)
    """``num_pred_tokens`` of each llama-cpp-python prompt-lookup peer; () runs none."""
    files: tuple[str, ...] = HELD_OUT
    """Standard-library files (relative to its folder) copied whole."""
    renames: bool = True
    """Run :data:`RENAMES` too."""
    clients: tuple[str, ...] = ("aider-whole",)
    """Recorded client requests (``bench/data/clients/NAME.json``) run as tasks."""
    n_ctx: int = 8192
    threads: int | None = None
    """CPU threads for every mode; None: every core."""


@dataclass
class Task:
    kind: str
    name: str
    prompt: object
    """An ``app.runtime.prompt.Prompt``: its ``ids`` go to every mode."""
    max_tokens: int
    stop: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The task's name and kind: one file is both a copy and a rename."""
        return f"{self.name}|{self.kind}"


@dataclass
class Run:
    mode: str
    decode_tps: float
    tokens: int
    text: str
    acceptance: float | None = None
    wall_s: float | None = None


def body(text: str, fence: str | None) -> str:
    """The answer up to its closing fence line (a stop string drops that line)."""
    from ..app.runtime.stream import closing_fence_at

    at = closing_fence_at(text, fence) if fence else -1
    return (text[:at] if at >= 0 else text).rstrip("\n")


def first_difference(a: str, b: str) -> str | None:
    """None when equal; else where ``a`` parts from ``b``: the line and both versions."""
    if a == b:
        return None
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            return f"line {i + 1}: {x.strip()[:60]!r} vs {y.strip()[:60]!r}"
    n = min(len(la), len(lb))
    return f"{'longer' if len(la) > len(lb) else 'shorter'} after line {n} ({len(la)} vs {len(lb)})"


def stdlib_dir() -> Path:
    import sysconfig

    return Path(sysconfig.get_paths()["stdlib"])


def load_client(name: str) -> dict:
    """A recorded client request (``bench/data/clients/NAME.json``)."""
    return json.loads((CLIENTS_DIR / f"{name}.json").read_text())


def load_tasks(loaded, cfg: PeerConfig) -> list[Task]:
    """The tasks of ``cfg`` on ``loaded``'s tokenizer (module docstring)."""
    from ..app.edit.prompts import rewrite_prompt
    from ..app.server.openai_run import request_prompt
    from ..app.server.openai_wire import ApiRequest
    from .spec_runs import rewrite_budget

    target = loaded.target
    jobs = [("copy", f, COPY_INSTRUCTION) for f in cfg.files]
    jobs += [("rename", f, i) for f, i in RENAMES] if cfg.renames else []
    tasks = []
    for kind, name, instruction in jobs:
        path = stdlib_dir() / name
        if not path.exists():
            log.warning("bench peer: %s not found, skipped", path)
            continue
        prompt = rewrite_prompt(target, path.read_text(), instruction, path=name)
        tasks.append(Task(kind, name, prompt, rewrite_budget(prompt), [f"\n{prompt.fence}"]))
    for name in cfg.clients:
        rec = load_client(name)
        req = ApiRequest(
            kind="chat", model=loaded.model_name, messages=tuple(rec["request"]["messages"])
        )
        prompt = request_prompt(loaded, req)
        cap = rec["request"].get("max_tokens") or CLIENT_MAX_TOKENS
        tasks.append(Task("client", name, prompt, cap))
    return tasks


def run_specedit(loaded, task: Task) -> Run:
    from ..app.options import RewriteOptions
    from ..app.runtime.generation import run_prompt
    from ..engine.sampling import SamplingParams

    opts = RewriteOptions(draft="lookup", sampling=SamplingParams(temperature=0.0, seed=ls.SEED))
    r = run_prompt(loaded, task.prompt, opts, task.max_tokens, cold=True)
    m = r.metrics
    return Run("specedit", m.decode_tps, len(r.tokens), r.text, m.acceptance)


def run_server(path: Path, loaded, config: str, task: Task, cfg: PeerConfig) -> Run:
    spec = ls.CONFIGS[config]
    with ls.LlamaServer(path, loaded.model_path, spec, cfg.n_ctx, cfg.threads) as srv:
        rep = srv.complete(list(task.prompt.ids), task.max_tokens, task.stop)
    t = rep.timings
    return Run(SERVER + config, t.decode_tps, t.predicted_n, rep.text, t.acceptance, rep.wall_s)


def run_bench(cfg: PeerConfig, path: Path, progress=None, checkpoint=None) -> dict:
    """Run every task in every mode (module docstring) and return the record;
    ``checkpoint(record)``, when given, gets the record of the tasks done so far after each
    task (a run cut short keeps them)."""
    from ..app.runtime.loaded_model import load_model
    from .run import Peer, verify_ceiling_tps

    loaded = load_model(cfg.model, n_ctx=cfg.n_ctx, threads=cfg.threads)
    tasks = load_tasks(loaded, cfg)
    peer = Peer(loaded, cfg.n_ctx, cfg.threads) if cfg.pld else None
    modes = [SERVER + c for c in cfg.configs] + ["specedit"] + [f"pld{n}" for n in cfg.pld]
    runs: dict[str, dict[str, list[Run]]] = {t.key: {} for t in tasks}
    ceilings: dict[str, list[float]] = {t.key: [] for t in tasks}
    head = {
        "bench": "peer",
        "config": asdict(cfg),
        "model": loaded.describe(),
        "machine": machine(
            {
                "commit": commit(),
                "llama_server": ls.version(path),
                "llama_server_path": str(path),
                "llama_cpp_python": ls._llama_cpp_python_version(),
            }
        ),
        "server_configs": {n: list(ls.CONFIGS[n].args) for n in cfg.configs},
    }

    def record() -> dict:
        done = [t for t in tasks if runs[t.key]]
        records = [task_record(t, runs[t.key], ceilings[t.key]) for t in done]
        return {**head, "tasks": records, "summary": summarise(records)}

    for rep in range(cfg.repeats):
        for ti, task in enumerate(tasks):
            for mode in modes:
                if progress:
                    progress(f"[{ti + 1}/{len(tasks)}] {task.kind} {task.name} {mode} #{rep + 1}")
                if mode == "specedit":
                    r = run_specedit(loaded, task)
                elif mode.startswith("pld"):
                    fence = getattr(task.prompt, "fence", None)
                    p = peer.run(list(task.prompt.ids), int(mode[3:]), task.max_tokens, fence)
                    r = Run(mode, p.decode_tps, p.tokens, p.text)
                else:
                    r = run_server(path, loaded, mode[len(SERVER) :], task, cfg)
                runs[task.key].setdefault(mode, []).append(r)
            if progress:
                progress(f"[{ti + 1}/{len(tasks)}] {task.kind} {task.name} ceiling #{rep + 1}")
            ceilings[task.key].append(verify_ceiling_tps(loaded, task.prompt.ids))
            if checkpoint:
                checkpoint(record())
    out = record()
    loaded.target.close()
    return out


def commit() -> str:
    r = subprocess.run(
        ["git", "-C", str(ls.ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return r.stdout.strip() or "?"


def task_record(task: Task, runs: dict[str, list[Run]], ceilings: list[float] = ()) -> dict:
    """Medians per mode, agreement with the reference answer, specedit's ratios, the verify
    ceiling (median of ``ceilings``) and specedit's and llama-server's fractions of it."""
    fence = getattr(task.prompt, "fence", None)
    ref_mode = SERVER + "none" if SERVER + "none" in runs else next(iter(runs))
    ref = body(runs[ref_mode][0].text, fence)
    modes = {}
    for mode, rs in runs.items():
        accs = [r.acceptance for r in rs if r.acceptance is not None]
        walls = [r.wall_s for r in rs if r.wall_s is not None]
        modes[mode] = {
            "decode_tps": round(statistics.median(r.decode_tps for r in rs), 2),
            "decode_tps_runs": [round(r.decode_tps, 2) for r in rs],
            "tokens": rs[0].tokens,
            "acceptance": round(statistics.median(accs), 3) if accs else None,
            "wall_s": round(statistics.median(walls), 2) if walls else None,
            "differs": first_difference(body(rs[0].text, fence), ref),
            "runs_agree": len({body(r.text, fence) for r in rs}) == 1,
        }
    rec = {
        "kind": task.kind,
        "name": task.name,
        "prompt_tokens": len(task.prompt.ids),
        "reference": ref_mode,
        "modes": modes,
        "ceiling_tps": round(statistics.median(ceilings), 2) if ceilings else None,
    }
    rec.update(ratios(modes))
    rec.update(of_ceiling(modes, rec["ceiling_tps"], rec["best_server_config"]))
    return rec


def of_ceiling(modes: dict[str, dict], ceiling: float | None, best: str | None) -> dict:
    """specedit's and the best llama-server configuration's tok/s over the verify ceiling."""

    def frac(mode):
        v = modes.get(mode, {}).get("decode_tps")
        return round(v / ceiling, 3) if v and ceiling else None

    return {
        "specedit_of_ceiling": frac("specedit"),
        "best_server_of_ceiling": frac(SERVER + best) if best else None,
    }


def ratios(modes: dict[str, dict]) -> dict:
    """specedit's decode tok/s over the best llama-server configuration, over llama-server
    without speculation, and over the best prompt-lookup peer (None where absent)."""
    spec = modes.get("specedit", {}).get("decode_tps")
    servers = {m: v["decode_tps"] for m, v in modes.items() if m.startswith(SERVER)}
    ngram = {m: v for m, v in servers.items() if m != SERVER + "none"}
    pld = [v["decode_tps"] for m, v in modes.items() if m.startswith("pld")]
    best = max(ngram, key=ngram.get) if ngram else None

    def over(x):
        return round(spec / x, 3) if spec and x else None

    return {
        "best_server_config": best[len(SERVER) :] if best else None,
        "specedit_vs_best_server": over(ngram.get(best)) if best else None,
        "specedit_vs_server_none": over(servers.get(SERVER + "none")),
        "specedit_vs_best_pld": over(max(pld)) if pld else None,
    }


RATIOS = (
    "ceiling_tps",
    "specedit_vs_best_server",
    "specedit_vs_server_none",
    "specedit_vs_best_pld",
    "specedit_of_ceiling",
    "best_server_of_ceiling",
)
"""The per-task figures :func:`summarise` takes the median of, in the table's order."""
HEADS = ("ceiling", "spec/best ls", "spec/ls none", "spec/pld", "spec/ceil", "best ls/ceil")


def _median(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 3) if xs else None


def summarise(records: list[dict]) -> dict:
    """Medians per kind (and over all tasks): tok/s per mode and specedit's ratios."""
    out: dict = {}
    groups = {
        k: [r for r in records if r["kind"] == k] for k in dict.fromkeys(r["kind"] for r in records)
    }
    if len(groups) > 1:
        groups["all"] = records
    for kind, rs in groups.items():
        modes = list(dict.fromkeys(m for r in rs for m in r["modes"]))
        row: dict = {"tasks": len(rs)}
        for m in modes:
            row[m] = _median(r["modes"][m]["decode_tps"] for r in rs if m in r["modes"])
        for key in RATIOS:
            row[key] = _median(r.get(key) for r in rs)
        row["agree"] = {
            m: f"{sum(r['modes'][m]['differs'] is None for r in rs if m in r['modes'])}/{len(rs)}"
            for m in modes
        }
        out[kind] = row
    return out


def _r(x, fmt="{:.2f}") -> str:
    return "-" if x is None else fmt.format(x)


def table(record: dict) -> Table:
    """One row per task: tok/s per mode (llama-server's acceptance beside), the ratios and
    which modes' answers differ from the reference."""
    modes = list(dict.fromkeys(m for r in record["tasks"] for m in r["modes"]))
    t = Table(title=f"specedit bench peer: {record['model']['model']}, decode tok/s (medians)")
    t.add_column("task")
    for m in modes:
        t.add_column(m.replace(SERVER, "ls:"), justify="right")
    for c in HEADS:
        t.add_column(c, justify="right")
    t.add_column("differs from ref")
    for r in record["tasks"]:
        cells = [f"{r['kind']} {r['name']}"]
        for m in modes:
            v = r["modes"].get(m)
            acc = f" ({v['acceptance']:.2f})" if v and v["acceptance"] is not None else ""
            cells.append(f"{v['decode_tps']:.1f}{acc}" if v else "-")
        cells += [_r(r.get(k), "{:.1f}" if k == "ceiling_tps" else "{:.2f}") for k in RATIOS]
        diff = [f"{m.replace(SERVER, 'ls:')}" for m, v in r["modes"].items() if v["differs"]]
        cells.append(", ".join(diff) or "none")
        t.add_row(*cells)
    for kind, row in record["summary"].items():
        cells = [f"median {kind} ({row['tasks']})"]
        cells += [_r(row.get(m), "{:.1f}") for m in modes]
        cells += [_r(row.get(k), "{:.1f}" if k == "ceiling_tps" else "{:.2f}") for k in RATIOS]
        cells.append(" ".join(f"{m.replace(SERVER, 'ls:')} {a}" for m, a in row["agree"].items()))
        t.add_row(*cells, style="bold")
    return t


def differences(record: dict) -> list[str]:
    """One line per answer that differs from its task's reference."""
    out = []
    for r in record["tasks"]:
        for m, v in r["modes"].items():
            if v["differs"]:
                out.append(
                    f"{r['kind']} {r['name']}: {m} differs from {r['reference']}: {v['differs']}"
                )
            if not v["runs_agree"]:
                out.append(f"{r['kind']} {r['name']}: {m}'s repeats gave different answers")
    return out


def add_arguments(p: argparse.ArgumentParser, d: PeerConfig) -> None:
    p.add_argument("--model", default=d.model)
    p.add_argument("-r", "--repeats", type=int, default=d.repeats)
    p.add_argument("--configs", nargs="+", default=list(d.configs), choices=list(ls.CONFIGS))
    p.add_argument("--pld", nargs="*", type=int, default=list(d.pld), help="prompt-lookup peers")
    p.add_argument("--files", nargs="*", default=list(d.files), help="stdlib files to copy")
    p.add_argument("--no-renames", dest="renames", action="store_false")
    p.add_argument("--clients", nargs="*", default=list(d.clients), help="recorded requests")
    p.add_argument("--ctx", dest="n_ctx", type=int, default=d.n_ctx)
    p.add_argument("--threads", type=int, default=d.threads)
    p.add_argument("--out", default="bench/results")
    p.add_argument("--log-level", default="WARNING")


def server_binary(err: Console) -> Path:
    """The built llama-server, building it first when there is none (minutes, once)."""
    path = ls.binary()
    if path is None:
        err.print("[dim]llama-server is not built: scripts/build-llama-server.sh (~10 min)[/]")
        path = ls.build()
    return path


def main(argv: list[str]) -> int:
    d = PeerConfig()
    p = argparse.ArgumentParser(prog="specedit bench peer", description=__doc__.split("\n")[0])
    add_arguments(p, d)
    a = p.parse_args(argv)
    logging.basicConfig(level=getattr(logging, a.log_level.upper(), logging.WARNING))
    cfg = PeerConfig(
        model=a.model,
        repeats=a.repeats,
        configs=tuple(a.configs),
        pld=tuple(a.pld),
        files=tuple(a.files),
        renames=a.renames,
        clients=tuple(a.clients),
        n_ctx=a.n_ctx,
        threads=a.threads,
    )
    err = Console(stderr=True)
    path = server_binary(err)
    saved: list[Path] = []

    def checkpoint(record: dict) -> None:
        saved[:] = [save_record(record, a.out, "peer", saved[0] if saved else None)]

    record = run_bench(cfg, path, lambda msg: err.print(f"[dim]{msg}[/]"), checkpoint)
    checkpoint(record)
    out = Console() if sys.stdout.isatty() else Console(width=220)
    out.print(table(record))
    for line in differences(record):
        out.print(line)
    err.print(f"wrote {saved[0]}")
    return 0
