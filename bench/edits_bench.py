"""The edit suite: each edit mode's correctness, wait after Enter and tokens, side by side.

Contract: ``specedit bench edits [--model M] [--modes auto whole] [--set suite|holdout]
[--tasks ...] [--kinds ...] [-r R] [--threads N] [--ctx N]`` loads one model and runs
every task of a set of ``bench/edit_tasks.py`` (``EDIT_TASKS``, the default, or the
held-out ``HOLDOUT_TASKS``, which nothing is tuned on) in every mode through the
product's own ``app.rewrite.rewrite``, warm, as an editor runs it: the cache held
another file, the file was read while the instruction was typed (``app.rewrite.warm``,
to the end), then Enter; ``wait`` is the time from Enter to the result. Modes share that
warm-up (the file's prefix is the same for every mode) and take turns going first, task
by task, so the machine's noise hits them alike. Each run records whether the result is
right (``EditTask.judge``: the exact change, every other byte as it was), the wait,
tokens generated against the file's length, the mode that produced the result
(``edit_mode``; ``edit_reason`` when ``auto`` chose a whole rewrite at once,
``edit_fallback`` when blocks were given up), the machine's load average, the diff and,
for a wrong result, what the model wrote and why it is wrong (``failure``, a class of
``bench/edit_failures.py``; after a fall-back, ``failure_after_fallback`` is the class
of the whole rewrite itself).

The record (``bench/results/edits-<time>.json``, rewritten after each task: a run cut
short keeps its rows, and says which set ran) has every run and, per mode, the number of
right results and the medians of wait and generated tokens: over all tasks, over the
few-line kinds (``FEW_LINES``), the config and doc files among them, the broad edits and
the big file, each with its wrong results counted by failure class (``failures``); the
report ends with those classes per model and mode. A mode that cannot run a task (a
whole rewrite of a file longer than the context) records it as wrong, with the error. A
plot (``.png``) shows right results and median waits by group and mode. ``--model`` may
be given twice: both models run, one after the other.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from .edit_failures import CLASSES, classify, failure_table
from .edit_tasks import FEW_LINES, KINDS, TASK_SETS, EditTask
from .record import machine, pyplot, save_record

log = logging.getLogger(__name__)

MODELS = ("qwen2.5-coder-1.5b",)
MODES = ("auto", "whole")
GROUPS = {
    "few-line": FEW_LINES,
    "conf/doc": ("config", "doc"),
    "broad": ("broad",),
    "big": ("big",),
    "all": KINDS,
}


def run_task(
    loaded, task: EditTask, modes: list[str], first: int, verbatim: bool = True
) -> list[dict]:
    """One task, warm, in each mode (starting with ``modes[first]``): one row per mode."""
    from ..app.options import RewriteOptions
    from ..app.rewrite import rewrite, warm
    from ..engine.backend import UserError

    text = task.source()
    loaded.target.rollback(0)  # the cache held another file
    w = warm(loaded, text, path=task.file)
    rows = []
    for mode in modes[first:] + modes[:first]:
        opts = RewriteOptions(instruction=task.instruction, edit=mode, verbatim=verbatim)
        load = os.getloadavg()[0]
        t = time.perf_counter()
        try:
            res = rewrite(loaded, text, opts, path=task.file)
        except UserError as e:
            rows.append(_row(task, mode, w, load, error=str(e)))
            rows[-1]["failure"] = classify(task, None, rows[-1])
            continue
        wait = time.perf_counter() - t
        s = res.stats.snapshot()
        rows.append(
            _row(
                task,
                mode,
                w,
                load,
                right=task.judge(res.new_text),
                status=res.status,
                message=res.message,
                wait_s=round(wait, 3),
                generated_tokens=s["generated_tokens"],
                file_tokens=s["file_tokens"],
                prompt_tokens=s["prompt_tokens"],
                cached_tokens=s["cached_tokens"],
                prefill_s=s["prefill_s"],
                decode_s=s["decode_s"],
                edit_mode=s["edit_mode"],
                edit_reason=s["edit_reason"],
                edit_fallback=s["edit_fallback"],
                edit_repairs=s.get("edit_repairs", []),
                flagged=res.suspect.reason if res.suspect else "",
                flag_message=res.suspect.message if res.suspect else "",
                diff=res.diff,
            )
        )
        rows[-1]["raw"] = res.raw  # what the model wrote (tests replay some)
        if not rows[-1]["right"]:
            row = rows[-1]
            row["failure"] = classify(task, res.new_text, row)
            if row["edit_fallback"]:  # and what went wrong in the whole rewrite itself
                row["failure_after_fallback"] = classify(
                    task, res.new_text, {**row, "edit_fallback": ""}
                )
        log.warning(
            "%s %s: %s in %.1f s, %d tokens (%s%s)",
            task.name,
            mode,
            "right" if rows[-1]["right"] else f"WRONG ({rows[-1]['failure']})",
            wait,
            s["generated_tokens"],
            s["edit_mode"],
            (f": {s['edit_reason']}" if s["edit_reason"] else "")
            + (f", fell back: {s['edit_fallback']}" if s["edit_fallback"] else ""),
        )
    return rows


def _row(task: EditTask, mode: str, w, load: float, **kw) -> dict:
    row = {
        "task": task.name,
        "kind": task.kind,
        "mode": mode,
        "right": False,
        "warm_tokens": w.prefix_tokens,
        "warm_s": round(w.seconds, 3),
        "load": round(load, 2),
    }
    row.update(kw)
    return row


def _median(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 3) if xs else None


def summarise(runs: list[dict], modes: list[str]) -> dict:
    """Per mode and group: right results (of tasks) and medians of wait and tokens."""
    out: dict = {}
    for mode in modes:
        out[mode] = {}
        for group, kinds in GROUPS.items():
            rs = [r for r in runs if r["mode"] == mode and r["kind"] in kinds]
            if not rs:
                continue
            done = [r for r in rs if "wait_s" in r]
            out[mode][group] = {
                "runs": len(rs),
                "right": sum(r["right"] for r in rs),
                "median_wait_s": _median(r["wait_s"] for r in done),
                "median_generated_tokens": _median(r["generated_tokens"] for r in done),
                "median_file_tokens": _median(r["file_tokens"] for r in done),
                "fell_back": sum(bool(r.get("edit_fallback")) for r in rs),
                # what the checks said: wrong results flagged, right ones flagged (false alarms)
                "wrong_flagged": sum(bool(r.get("flagged")) for r in rs if not r["right"]),
                "right_flagged": sum(bool(r.get("flagged")) for r in rs if r["right"]),
                "repairs": dict(
                    sorted(Counter(x for r in rs for x in r.get("edit_repairs", [])).items())
                ),
                "errors": sum("error" in r for r in rs),
                "failures": failure_table(rs).get(mode, {}),
            }
    return out


def run_model(model: str, a, tasks: list[EditTask], on_task=None) -> dict:
    """Every task in every mode on ``model``; ``on_task(result)`` after each task with the
    result so far (the bench saves its record then)."""
    from ..app.loaded_model import load_model

    loaded = load_model(model, n_ctx=a.n_ctx, threads=a.threads)
    runs: list[dict] = []
    out = {"model": model, "describe": loaded.describe(), "summary": {}, "runs": runs}
    try:
        for rep in range(a.repeats):
            for i, task in enumerate(tasks):
                first = (i + rep) % len(a.modes)
                runs += run_task(loaded, task, list(a.modes), first, not a.no_verbatim)
                out["summary"] = summarise(runs, list(a.modes))
                loads = [r["load"] for r in runs]
                out["load_range"] = [min(loads), max(loads)]
                if on_task is not None:
                    on_task(out)
    finally:
        loaded.target.close()
    return out


def table(rec: dict) -> str:
    """Per model: right results, waits and tokens by mode and group, then the wrong
    results by failure class (rows) and mode (columns), over all tasks."""
    lines = []
    for m in rec["models"]:
        lines.append(f"{m['model']}  (load average {m['load_range'][0]}-{m['load_range'][1]})")
        lines.append(
            f"  {'mode':<6} {'group':<9} {'right':>8} {'median wait s':>14} "
            f"{'median tokens':>14} {'file tokens':>12} {'fell back':>9}"
        )
        for mode, groups in m["summary"].items():
            for group, g in groups.items():
                lines.append(
                    f"  {mode:<6} {group:<9} {g['right']:>4}/{g['runs']:<3} "
                    f"{_fmt(g['median_wait_s']):>14} {_fmt(g['median_generated_tokens']):>14} "
                    f"{_fmt(g['median_file_tokens']):>12} {g['fell_back']:>9}"
                )
        lines += failures_table(m)
    return "\n".join(lines) + "\n"


def failures_table(m: dict) -> list[str]:
    """The lines of one model's failure classes by mode (all tasks)."""
    modes = list(m["summary"])
    counts = {md: m["summary"][md].get("all", {}).get("failures", {}) for md in modes}
    seen = [c for c in (*CLASSES, "unclassified") if any(c in counts[md] for md in modes)]
    if not seen:
        return []
    out = [f"  {'failure class (wrong results)':<30}" + "".join(f"{md:>8}" for md in modes)]
    for c in seen:
        out.append(f"  {c:<30}" + "".join(f"{counts[md].get(c, 0):>8}" for md in modes))
    return out


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.1f}"


def plot(rec: dict, path: Path) -> bool:
    plt = pyplot()
    if plt is None:
        return False
    models = rec["models"]
    fig, axes = plt.subplots(len(models), 2, figsize=(11, 3.6 * len(models)), squeeze=False)
    for row, m in zip(axes, models, strict=True):
        modes = list(m["summary"])
        groups = [g for g in GROUPS if any(g in m["summary"][md] for md in modes)]
        w = 0.8 / max(len(modes), 1)
        for i, mode in enumerate(modes):
            xs = [x + i * w for x in range(len(groups))]
            s = m["summary"][mode]
            row[0].bar(xs, [s.get(g, {}).get("right", 0) for g in groups], w, label=mode)
            waits = [s.get(g, {}).get("median_wait_s") or 0 for g in groups]
            row[1].bar(xs, waits, w, label=mode)
        for ax, title in zip(row, ("right results", "median wait after Enter (s)"), strict=True):
            ax.set_xticks([x + w * (len(modes) - 1) / 2 for x in range(len(groups))], groups)
            ax.set_title(f"{m['model']}: {title}")
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    from ..app.options import DEFAULT_CTX, EDIT_MODES

    ap = argparse.ArgumentParser(prog="specedit bench edits", description=__doc__)
    ap.add_argument("--model", action="append", help="repeatable (default: the 1.5B)")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=EDIT_MODES)
    ap.add_argument(
        "--set",
        default="suite",
        choices=list(TASK_SETS),
        help="the suite (default) or the held-out tasks, which nothing is tuned on",
    )
    ap.add_argument("--tasks", nargs="+", default=None, help="task names (default: all)")
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("-r", "--repeats", type=int, default=1)
    ap.add_argument("--ctx", dest="n_ctx", type=int, default=DEFAULT_CTX)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--no-verbatim",
        action="store_true",
        help="let a retry's SEARCH sides be any text (by default they can only copy the "
        "file's lines)",
    )
    ap.add_argument("--out", default="bench/results")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # where a big file's change was located, and what blocks were given up, on stderr
    logging.getLogger("specedit.app.stages").setLevel(logging.INFO)
    pool = TASK_SETS[a.set]
    tasks = [t for t in pool if t.kind in a.kinds and (not a.tasks or t.name in a.tasks)]
    if not tasks:
        ap.error(f"no task of --set {a.set} matches --tasks/--kinds")
    record: dict = {
        "set": a.set,
        "verbatim": not a.no_verbatim,
        "tasks": [t.name for t in tasks],
        "modes": a.modes,
        "machine": machine(),
        "models": [],
    }
    path = None
    for model in a.model or MODELS:

        def save(m: dict, done: int = len(record["models"])) -> None:
            nonlocal path
            record["models"][done:] = [m]
            path = save_record(record, a.out, "edits", path)

        save(run_model(model, a, tasks, on_task=save))
    sys.stdout.write(table(record))
    sys.stdout.write(f"wrote {path}\n")
    if plot(record, path.with_suffix(".png")):
        sys.stdout.write(f"wrote {path.with_suffix('.png')}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
