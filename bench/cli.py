"""``specedit bench``: run the side-by-side benchmark, print the table, save JSON and a plot.

Contract: ``main(argv)`` is ``specedit bench ...``: ``specedit bench SUITE ...`` hands
over to that suite's ``main`` (``SUITES``), anything else is the side-by-side bench.
``add_arguments(parser)`` declares the options; ``run(args)`` runs
``bench.run.run_bench``, writes ``<out>/bench-<time>.json`` and
``<out>/bench-<time>.png`` (tok/s by task kind and mode, matplotlib, when
installed) and prints one table: medians per task kind, ratios to plain, the
best peer ratio, greedy equality counts and the fraction of prefill speed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

log = logging.getLogger(__name__)


SUITES = {
    "torch": ("torch_bench", "torch backend vs transformers' prompt lookup"),
    "draft": ("draft_bench", "draft-model pair vs plain and lookup"),
    "latency": ("latency", "end-to-end latency of specedit rewrite, by part"),
    "edits": ("edits_bench", "the edit suite judged by running the code: right, flagged, wait"),
    "checks": ("checks_bench", "the checks' false alarms on right answers (no model)"),
    "review": ("review_bench", "the model review's threshold, set and tested on edits records"),
    "tui": ("tui_bench", "tokens/s inside the terminal app vs headless"),
    "kernel": ("kernel_bench", "Triton verification kernel vs torch"),
    "replay": ("replay_bench", "speculation policies replayed on recorded outputs, without noise"),
    "server": ("server_bench", "specedit serve: how fast a rewrite stops, and a soak"),
    "rag": ("rag_bench", "answers that quote: quote rate, right answers, lookup vs plain"),
    "predict": ("predict_bench", "serve --http: an edit with and without prediction, and plain"),
    "peer": ("server_peer", "specedit vs llama.cpp's llama-server n-gram speculation and pld"),
    "client": ("client_bench", "a real client's recorded request: serve --http vs llama-server"),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    from .record import add_common
    from .run import ALL_MODES, BenchConfig

    d = BenchConfig()
    add_common(p, d)
    p.add_argument("--modes", nargs="+", default=list(d.modes), choices=ALL_MODES)


def main(argv: list[str]) -> int:
    """``specedit bench [SUITE] ...`` (see the module docstring)."""
    if argv and argv[0] in SUITES:
        import importlib

        module = importlib.import_module(f"{__package__}.{SUITES[argv[0]][0]}")
        return module.main(argv[1:])
    p = argparse.ArgumentParser(
        prog="specedit bench",
        description="Side-by-side decode benchmark (llama.cpp). Other suites: "
        + ", ".join(f"`specedit bench {k} ...` ({v[1]})" for k, v in SUITES.items())
        + "; each takes --help.",
    )
    add_arguments(p)
    p.add_argument("--log-level", default="WARNING")
    a = p.parse_args(argv)
    logging.basicConfig(level=getattr(logging, a.log_level.upper(), logging.WARNING))
    return run(a)


def table(record: dict) -> Table:
    modes = record["config"]["modes"]
    t = Table(title=f"specedit bench: {record['model']['model']} (medians)")
    t.add_column("kind")
    for m in modes:
        t.add_column(f"{m} tok/s", justify="right")
    for m in modes:
        if m != "plain":
            t.add_column(f"{m}/plain", justify="right")
    t.add_column("spec/best peer", justify="right")
    t.add_column("tok/call", justify="right")
    t.add_column("accept", justify="right")
    t.add_column("equal", justify="right")
    t.add_column("prefill tok/s", justify="right")
    t.add_column("copy/prefill", justify="right")
    for kind, row in record["summary"].items():
        cells = [kind]
        cells += [f"{row[m]['decode_tps']:.1f}" for m in modes]
        cells += [_r(row[m]["ratio_to_plain"]) for m in modes if m != "plain"]
        cells.append(_r(row.get("specedit_vs_best_peer")))
        s = row.get("specedit", {})
        cells.append(f"{s.get('tokens_per_call', 0):.2f}")
        cells.append(f"{s.get('acceptance', 0):.0%}")
        eq = row.get("exact", s)
        cells.append(f"{eq.get('greedy_equal', 0)}/{eq.get('tasks', 0)}")
        cells.append(f"{row['prefill_tps']:.0f}")
        cells.append(_r(row.get("copy_fraction_of_prefill")))
        t.add_row(*cells)
    return t


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def targets(record: dict) -> list[tuple[str, float | None, str, bool | None]]:
    """The performance targets (issue 5) against this run: (what, measured, target, met)."""
    tasks = record["tasks"]

    def ratios(kinds, mode="specedit"):
        return [t["modes"][mode]["ratio_to_plain"] for t in tasks if t["kind"] in kinds]

    def vs_peer(kinds):
        out = []
        for t in tasks:
            peers = [m for m in t["modes"] if m.startswith("pld")]
            if t["kind"] in kinds and peers:
                best = max(t["modes"][p]["decode_tps"] for p in peers)
                out.append(t["modes"]["specedit"]["decode_tps"] / best if best else None)
        return out

    code = ("copy", "edit")
    rows = [
        ("code tasks: specedit / plain", _median(ratios(code)), ">= 3.0", 3.0),
        (
            "summarization+rag: specedit / plain",
            _median(ratios(("summarization", "rag"))),
            ">= 1.8",
            1.8,
        ),
        ("code tasks: specedit / best peer", _median(vs_peer(code)), ">= 2.5", 2.5),
        (
            "identity copy: decode / prefill",
            _median(t.get("copy_fraction_of_prefill") for t in tasks if t["kind"] == "copy"),
            ">= 0.6",
            0.6,
        ),
        (
            "identity copy: verify ceiling / prefill",
            _median(t.get("ceiling_fraction_of_prefill") for t in tasks if t["kind"] == "copy"),
            "(info)",
            None,
        ),
        (
            "identity copy: decode / verify ceiling",
            _median(t.get("copy_fraction_of_ceiling") for t in tasks if t["kind"] == "copy"),
            "(info)",
            None,
        ),
        (
            "writing+roleplay: specedit / plain",
            _median(ratios(("writing", "roleplay"))),
            ">= 0.95",
            0.95,
        ),
    ]
    out = [(w, m, tgt, None if m is None or thr is None else m >= thr) for w, m, tgt, thr in rows]
    for mode in ("exact", "specedit"):
        eq = [t["modes"][mode]["greedy_equal_plain"] for t in tasks if mode in t["modes"]]
        if eq:
            frac = sum(eq) / len(eq)
            if mode == "exact" or record["model"].get("batch_exact"):
                out.append((f"greedy output equal to plain ({mode})", frac, "100%", frac == 1.0))
            else:  # batched numerics differ on this backend: equality is --exact's promise
                out.append((f"greedy output equal to plain ({mode})", frac, "(info)", None))
    return out


def targets_table(record: dict) -> Table:
    t = Table(title="targets")
    for c in ("measure (medians)", "measured", "target", "met"):
        t.add_column(c)
    for what, m, tgt, ok in targets(record):
        t.add_row(what, _r(m), tgt, "-" if ok is None else ("yes" if ok else "no"))
    return t


def _r(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def plot(record: dict, path: Path) -> bool:
    from .record import pyplot

    plt = pyplot()
    if plt is None:
        return False
    modes = record["config"]["modes"]
    kinds = list(record["summary"])
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(kinds)), 4))
    w = 0.8 / len(modes)
    for i, m in enumerate(modes):
        ys = [record["summary"][k][m]["decode_tps"] for k in kinds]
        ax.bar([x + i * w for x in range(len(kinds))], ys, w, label=m)
    ax.set_xticks([x + w * (len(modes) - 1) / 2 for x in range(len(kinds))], kinds)
    ax.set_ylabel("decode tokens/s (median)")
    ax.set_title(f"{record['model']['model']}: decode speed by task and mode")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def run(a) -> int:
    from .record import config_from_args, save_record
    from .run import BenchConfig, run_bench

    cfg = config_from_args(BenchConfig, a)
    err = Console(stderr=True)
    record = run_bench(cfg, progress=lambda msg: err.print(f"[dim]{msg}[/]"))
    record["targets"] = [
        {"measure": w, "measured": m, "target": tgt, "met": ok} for w, m, tgt, ok in targets(record)
    ]
    jpath = save_record(record, a.out, "bench")
    # piped or in CI the terminal width is unknown: keep every column readable
    out = Console() if sys.stdout.isatty() else Console(width=260)
    out.print(table(record))
    out.print(targets_table(record))
    err.print(f"wrote {jpath}")
    if plot(record, jpath.with_suffix(".png")):
        err.print(f"wrote {jpath.with_suffix('.png')}")
    return 0
