"""``specedit bench checks``: the checks' false alarms on right answers, with no model.

Contract: every task of a set (``bench.behave_tasks``) is a right answer (its reference)
to each of its instructions; ``alarms(set_name)`` returns, per (task, phrasing), the
verdicts ``app.checks.vouch`` gives that right answer; ``main(argv)`` prints how many of
them each check flags, per phrasing and in all, and the share of right answers flagged
(issue 45's bar: at most 5%). Deterministic: no model, no timing.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter

from specedit.app.checks import vouch
from specedit.app.intent import read_intent

from .behave_tasks import PHRASINGS, SETS, load

log = logging.getLogger(__name__)


def alarms(set_name: str = "suite") -> dict[tuple[str, str], list[str]]:
    """(task, phrasing) -> the reasons of the verdicts on the task's reference."""
    out = {}
    for task in load(set_name):
        old, ref = task.source(), task.reference()
        for phrasing in PHRASINGS:
            instruction = task.instructions[phrasing]
            intent = read_intent(instruction, old, task.file)
            out[(task.name, phrasing)] = [v.reason for v in vouch(old, ref, intent, task.file)]
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="specedit bench checks", description=__doc__)
    p.add_argument("--set", default="suite", choices=SETS)
    p.add_argument("--names", action="store_true", help="list each flagged (task, phrasing)")
    a = p.parse_args(argv)
    sys.stdout.write(report(alarms(a.set), a.names))
    return 0
