"""The edit suite judged by behaviour: right, wrong and flagged, wrong and not flagged, wait.

Contract: ``specedit bench edits [--model M]... [--modes auto whole] [--set suite|holdout]
[--phrasings suite user terse] [--first blocks guarded region] [--review auto|on|off]
[--tasks ...] [--threads N] [--ctx N] [--confidence]`` loads each model
once and runs every task of a set (``bench/behave_tasks.py``: real files, each with a
check that runs the edited code, and a scope) in every phrasing and mode through the
product's own ``app.edit.rewrite.rewrite``, warm, as an editor runs it: the cache held another
file, the file was read while the instruction was typed (``app.edit.rewrite.warm``), then
Enter; ``wait_s`` is the time from Enter to the result. A task's phrasings and modes share
that warm-up and take turns going first, task by task.

Each run records the verdict (``behave_tasks.judge``: the check passes and no line out of
scope changed), whether the product flagged the result (its first verdict, or a status
other than ``ok``: nothing to write), the same judge on the model's first answer placed as
it is (``RewriteResult.first_answer``: no repair, no round, the baseline the product must
not fall below), the edit mode, fallback, repairs and rounds, tokens, the diff and the
model's review of the change when one ran (``app.edit.review``; ``--review on`` records it for
every unflagged change, so a threshold can be set from the record). Per model, mode and
phrasing (and per kind: semantic or not, and by language) the summary counts right, wrong
and flagged, wrong and not flagged, the first answer's right results, false alarms (right
and flagged) and the median wait. The record (``bench/results/edits-<time>.json``) is
rewritten after each task, so a run cut short keeps its rows.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time

from .behave_tasks import PHRASINGS, SETS, BehaveTask, judge, load
from .confidence import added_lines, tapped
from .record import machine, save_record

log = logging.getLogger(__name__)

MODELS = ("qwen2.5-coder-1.5b",)
MODES = ("auto",)


def run_task(
    loaded,
    task: BehaveTask,
    plan: list[tuple[str, str, str]],
    verbatim: bool = True,
    review: str = "auto",
    tap=None,
) -> list[dict]:
    """One task, warm, for each ``(phrasing, mode, first)`` of ``plan`` in that order (``first``:
    ``RewriteOptions.first``): a row each. With ``tap`` (``bench.confidence.tapped``), each row
    keeps the target's confidence in the lines its diff adds."""
    from ..app.edit.rewrite import rewrite, warm
    from ..app.options import RewriteOptions
    from ..engine.backend import UserError

    text = task.source()
    loaded.target.rollback(0)  # the cache held another file
    w = warm(loaded, text, path=task.file, first=plan[0][2])  # as the first arm asks
    rows = []
    for phrasing, mode, first_ask in plan:
        instruction = task.instructions[phrasing]
        opts = RewriteOptions(
            instruction=instruction, edit=mode, verbatim=verbatim, first=first_ask, review=review
        )
        row = {
            "task": task.name,
            "kind": task.kind,
            "semantic": task.semantic,
            "lang": task.lang,
            "phrasing": phrasing,
            "mode": mode if mode != "auto" or first_ask == "blocks" else f"auto/{first_ask}",
            "warm_s": round(w.seconds, 3),
            "load": round(os.getloadavg()[0], 2),
        }
        if tap is not None:
            tap.clear()
        t = time.perf_counter()
        try:
            res = rewrite(loaded, text, opts, path=task.file)
        except (UserError, OSError) as e:  # FileError is an OSError: a file too long
            row.update(right=False, flagged="error", why=str(e), first_right=False)
            rows.append(row)
            continue
        row["wait_s"] = round(time.perf_counter() - t, 3)
        v = judge(task, res.new_text if res.status == "ok" else None)
        first = judge(task, res.first_answer)
        s = res.stats.snapshot()
        row.update(
            right=v.right,
            runs=v.runs,
            in_scope=v.in_scope,
            why=v.why,
            status=res.status,
            flagged=res.suspect.reason
            if res.suspect
            else ("" if res.status == "ok" else res.status),
            flag_message=res.message if (res.suspect or res.status != "ok") else "",
            first_right=first.right,
            generated_tokens=s["generated_tokens"],
            prefill_s=s["prefill_s"],
            decode_s=s["decode_s"],
            **wait_shares(s, row["wait_s"]),
            edit_mode=s["edit_mode"],
            edit_reason=s["edit_reason"],
            edit_fallback=s["edit_fallback"],
            edit_repairs=s["edit_repairs"],
            plan_note=s["plan_note"],
            diff=res.diff,
            raw=res.raw,
            review=None if res.review is None else res.review.to_json(),
        )
        if tap is not None:
            row["confidence"] = added_lines(tap.generations, res.diff)
            row["generations"] = len(tap.generations)
        rows.append(row)
        log.warning(
            "%s [%s] %s: %s%s in %.1f s (%s%s)",
            task.name,
            phrasing,
            row["mode"],
            "right" if v.right else f"WRONG ({v.why})",
            f", flagged {row['flagged']}" if row["flagged"] else "",
            row["wait_s"],
            s["edit_mode"],
            f", repairs {','.join(s['edit_repairs'])}" if s["edit_repairs"] else "",
        )
    return rows


def _median(xs):
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), 2) if xs else None


def wait_shares(stats: dict, wait_s: float) -> dict:
    """Where one rewrite's wait went, from its stats: the model's plan note when one was
    asked (``first`` ``plan``, its own generation before the first answer), the first
    answer's generation (prompt prefill and decode), every further generation (rounds,
    review), reading the answers (repairs and checks) and the rest (planning, placing, the
    program's own work)."""
    stages = [st["prefill_s"] + st["decode_s"] for st in stats.get("stages") or []]
    plan = stages.pop(0) if stats.get("plan_note") and stages else 0.0
    first = stages[0] if stages else 0.0
    later = sum(stages[1:])
    checks = stats.get("checks_s", 0.0)
    return {
        "generations": len(stages) + (1 if plan else 0),
        "plan_s": round(plan, 3),
        "first_s": round(first, 3),
        "rounds_s": round(later, 3),
        "checks_s": round(checks, 3),
        "other_s": round(max(0.0, wait_s - plan - first - later - checks), 3),
    }


WAIT_SHARES = ("plan_s", "first_s", "rounds_s", "checks_s", "other_s")


def tally(rows: list[dict]) -> dict:
    """Counts of a group of runs (module docstring)."""
    wrong = [r for r in rows if not r["right"]]
    return {
        "runs": len(rows),
        "right": sum(r["right"] for r in rows),
        "wrong_flagged": sum(bool(r.get("flagged")) for r in wrong),
        "wrong_unflagged": sum(not r.get("flagged") for r in wrong),
        "false_alarms": sum(bool(r.get("flagged")) for r in rows if r["right"]),
        "first_right": sum(bool(r.get("first_right")) for r in rows),
        "median_wait_s": _median(r.get("wait_s") for r in rows),
        **{f"median_{k}": _median(r.get(k) for r in rows) for k in WAIT_SHARES},
        **{f"mean_{k}": _mean(r.get(k) for r in rows) for k in WAIT_SHARES},
    }


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.fmean(xs), 2) if xs else None


def summarise(rows: list[dict]) -> dict:
    """Per mode, per phrasing (and ``all``): the tally over all tasks, over semantic and
    other tasks, and per language."""
    out: dict = {}
    for mode in sorted({r["mode"] for r in rows}):
        out[mode] = {}
        for ph in [*PHRASINGS, "all"]:
            rs = [r for r in rows if r["mode"] == mode and ph in ("all", r["phrasing"])]
            if not rs:
                continue
            groups = {
                "all": rs,
                "semantic": [r for r in rs if r["semantic"]],
                "other": [r for r in rs if not r["semantic"]],
            }
            for lang in sorted({r["lang"] for r in rs}):
                groups[f"lang:{lang}"] = [r for r in rs if r["lang"] == lang]
            out[mode][ph] = {g: tally(x) for g, x in groups.items() if x}
    return out


def run_model(model: str, a, tasks: list[BehaveTask], on_task=None) -> dict:
    """Every task in every phrasing and mode on ``model``; ``on_task(result)`` after each."""
    from ..app.runtime.loaded_model import load_model

    loaded = load_model(model, n_ctx=a.n_ctx, threads=a.threads)
    stack = contextlib.ExitStack()
    tap = stack.enter_context(tapped(loaded)) if a.confidence else None
    rows: list[dict] = []
    out = {"model": model, "describe": loaded.describe(), "summary": {}, "runs": rows}
    plan = [(ph, mode, "blocks") for ph in a.phrasings for mode in a.modes if mode != "auto"]
    plan += [(ph, "auto", f) for ph in a.phrasings for f in a.first if "auto" in a.modes]
    try:
        for i, task in enumerate(tasks):
            turn = i % len(plan)
            order = plan[turn:] + plan[:turn]
            rows += run_task(loaded, task, order, not a.no_verbatim, a.review, tap)
            out["summary"] = summarise(rows)
            loads = [r["load"] for r in rows]
            out["load_range"] = [min(loads), max(loads)]
            if on_task is not None:
                on_task(out)
    finally:
        stack.close()
        loaded.target.close()
    return out


def table(rec: dict) -> str:
    """Per model and mode: one line per phrasing and group."""
    head = (
        f"  {'mode':<12} {'phrasing':<8} {'group':<14} {'right':>8} {'wrong+flag':>10} "
        f"{'wrong unflagged':>15} {'first answer':>12} {'false alarms':>12} {'median wait s':>13}"
    )
    lines = []
    for m in rec["models"]:
        lo, hi = m.get("load_range", [0, 0])
        lines += [f"{m['model']}  (load average {lo}-{hi})", head]
        for mode, phs in m["summary"].items():
            for ph, groups in phs.items():
                for g, t in groups.items():
                    wait = "-" if t["median_wait_s"] is None else f"{t['median_wait_s']:.1f}"
                    lines.append(
                        f"  {mode:<12} {ph:<8} {g:<14} {t['right']:>4}/{t['runs']:<3} "
                        f"{t['wrong_flagged']:>10} {t['wrong_unflagged']:>15} "
                        f"{t['first_right']:>12} {t['false_alarms']:>12} {wait:>13}"
                    )
        lines.append("  where the wait goes, seconds (mean, then median, over every run):")
        lines.append(f"  {'mode':<12} {'phrasing':<8} " + " ".join(f"{k:>16}" for k in WAIT_SHARES))
        for mode, phs in m["summary"].items():
            for ph, groups in phs.items():
                t = groups["all"]
                if t.get("mean_first_s") is None:
                    continue  # a record from before the shares were kept
                shares = " ".join(
                    f"{t.get(f'mean_{k}') or 0.0:>8.1f} {t.get(f'median_{k}') or 0.0:>7.1f}"
                    for k in WAIT_SHARES
                )
                lines.append(f"  {mode:<12} {ph:<8} {shares}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from ..app.options import DEFAULT_CTX, EDIT_MODES, FIRST_ANSWERS, REVIEWS

    ap = argparse.ArgumentParser(prog="specedit bench edits", description=__doc__)
    ap.add_argument("--model", action="append", help="repeatable (default: the 1.5B)")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=EDIT_MODES)
    ap.add_argument("--set", default="suite", choices=SETS, help="held out: nothing tuned on it")
    ap.add_argument("--phrasings", nargs="+", default=list(PHRASINGS), choices=PHRASINGS)
    ap.add_argument(
        "--first",
        nargs="+",
        default=["blocks"],
        choices=FIRST_ANSWERS,
        help="how auto asks first (several: each is a mode of its own, auto/guarded...)",
    )
    ap.add_argument("--tasks", nargs="+", default=None, help="task names (default: all)")
    ap.add_argument("--ctx", dest="n_ctx", type=int, default=DEFAULT_CTX)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--no-verbatim",
        action="store_true",
        help="let a retry's SEARCH sides be any text (by default they can only copy the "
        "file's lines)",
    )
    ap.add_argument(
        "--review",
        default="auto",
        choices=REVIEWS,
        help="the model's review of each finished change (on: record every score)",
    )
    ap.add_argument(
        "--confidence",
        action="store_true",
        help="record the target's probability of each line the diff adds (bench/confidence.py)",
    )
    ap.add_argument("--out", default="bench/results")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    tasks = [t for t in load(a.set) if not a.tasks or t.name in a.tasks]
    if not tasks:
        ap.error(f"no task of --set {a.set} matches --tasks")
    record: dict = {
        "set": a.set,
        "verbatim": not a.no_verbatim,
        "review": a.review,
        "tasks": [t.name for t in tasks],
        "modes": a.modes,
        "phrasings": a.phrasings,
        "first": a.first,
        "confidence": a.confidence,
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
