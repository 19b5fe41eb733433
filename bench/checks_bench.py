"""``specedit bench checks``: the checks' false alarms on right answers, with no model.

Contract: every task of a set (``bench.behave_tasks``) is a right answer (its reference)
to each of its instructions; ``alarms(set_name)`` returns, per (task, phrasing), the
verdicts ``app.check.checks.vouch`` gives that right answer; ``main(argv)`` prints how many of
them each check flags, per phrasing and in all, and the share of right answers flagged
(issue 45's bar: at most 5%). With ``--record`` (a ``specedit bench edits`` record), the
recorded results (the original with each row's diff applied) are judged again by today's
checks (``rejudge``): what a change of the checks alone would flag, with no model call, on
the answers as they were (a repair round the new verdicts start is not run). Deterministic:
no model, no timing.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections import Counter

from specedit.app.check.checks import vouch
from specedit.app.check.intent import read_intent
from specedit.app.code.source import Change, Source

from .behave_tasks import PHRASINGS, SETS, load

log = logging.getLogger(__name__)


def alarms(set_name: str = "suite") -> dict[tuple[str, str], list[str]]:
    """(task, phrasing) -> the reasons of the verdicts on the task's reference."""
    out = {}
    for task in load(set_name):
        old, ref = task.source(), task.reference()
        for phrasing in PHRASINGS:
            instruction = task.instructions[phrasing]
            intent = read_intent(instruction, Source(old, task.file))
            out[(task.name, phrasing)] = [
                v.reason for v in vouch(Change.of(old, ref, task.file), intent)
            ]
    return out


def report(found: dict[tuple[str, str], list[str]], names: bool = False) -> str:
    """The table ``main`` prints: flagged right answers per phrasing, in all, per check."""
    lines = []
    for phrasing in PHRASINGS:
        rows = [v for k, v in found.items() if k[1] == phrasing]
        lines.append(
            f"{phrasing:>6}: {sum(bool(v) for v in rows)}/{len(rows)} right answers flagged"
        )
    flagged = sum(bool(v) for v in found.values())
    share = flagged / max(1, len(found))
    lines.append(f"   all: {flagged}/{len(found)} right answers flagged ({share:.1%})")
    by_check = Counter(r for v in found.values() for r in set(v))
    lines += [f"  {reason:>14}: {n}" for reason, n in by_check.most_common()]
    if names:
        lines += [f"  {t} [{ph}]: {', '.join(v)}" for (t, ph), v in sorted(found.items()) if v]
    return "\n".join(lines) + "\n"


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def apply_diff(old: str, diff: str) -> str:
    """``old`` with a unified diff of it applied (the record's ``diff``: exact, no fuzz)."""
    lines = old.splitlines(keepends=True)
    out, at = [], 0
    body = diff.splitlines(keepends=True)
    i = 0
    while i < len(body):
        m = _HUNK.match(body[i])
        i += 1
        if not m:
            continue
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out += lines[at:start]
        at = start
        while i < len(body) and not body[i].startswith("@@"):
            line = body[i]
            i += 1
            if line.startswith("\\"):  # "\ No newline at end of file"
                if out and out[-1].endswith("\n") and body[i - 2][:1] in "+ ":
                    out[-1] = out[-1][:-1]
                continue
            if line[:1] in " -":
                if lines[at].rstrip("\n") != line[1:].rstrip("\n"):
                    raise ValueError(f"the diff does not apply at line {at + 1}")
                at += 1
            if line[:1] in " +":
                out.append(line[1:] if line.endswith("\n") else line[1:] + "\n")
    return "".join(out + lines[at:])


def rejudge(record: dict) -> list[dict]:
    """Each row of a ``bench edits`` record (its first model's) with ``now``: the reasons
    of today's verdicts on the recorded result."""
    tasks = {t.name: t for t in load(record.get("set", "suite"))}
    rows = []
    for row in record["models"][0]["runs"]:
        task = tasks.get(row["task"])
        if task is None:
            continue
        if row.get("status") != "ok":  # cut, no answer or an error: flagged as it was
            rows.append({**row, "now": [row.get("flagged") or row.get("status") or "error"]})
            continue
        old = task.source()
        new = apply_diff(old, row.get("diff") or "")
        intent = read_intent(task.instructions[row["phrasing"]], Source(old, task.file))
        rows.append(
            {**row, "now": [v.reason for v in vouch(Change.of(old, new, task.file), intent)]}
        )
    return rows


def rejudge_report(rows: list[dict]) -> str:
    """Per phrasing: wrong and not flagged then and now, false alarms then and now."""
    lines = [f"{'phrasing':>8} {'runs':>5} {'wrong unflagged then':>21} {'now':>4} "
             f"{'false alarms then':>18} {'now':>4}"]  # fmt: skip
    for phrasing in [*PHRASINGS, "all"]:
        rs = [r for r in rows if phrasing in ("all", r["phrasing"])]
        if not rs:
            continue
        wrong = [r for r in rs if not r["right"]]
        right = [r for r in rs if r["right"]]
        lines.append(
            f"{phrasing:>8} {len(rs):>5} {sum(not r['flagged'] for r in wrong):>21} "
            f"{sum(not r['now'] for r in wrong):>4} {sum(bool(r['flagged']) for r in right):>18} "
            f"{sum(bool(r['now']) for r in right):>4}"
        )
    caught = Counter(r["now"][0] for r in rows if not r["right"] and not r["flagged"] and r["now"])
    lines += [f"  newly flagged by {reason}: {n}" for reason, n in caught.most_common()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="specedit bench checks", description=__doc__)
    p.add_argument("--set", default="suite", choices=SETS)
    p.add_argument("--names", action="store_true", help="list each flagged (task, phrasing)")
    p.add_argument("--record", help="a bench edits record: judge its results again")
    a = p.parse_args(argv)
    if a.record:
        with open(a.record, encoding="utf-8") as f:
            sys.stdout.write(rejudge_report(rejudge(json.load(f))))
        return 0
    sys.stdout.write(report(alarms(a.set), a.names))
    return 0
