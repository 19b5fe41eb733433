"""``specedit bench review RECORD...``: set and test the model review's threshold from records.

Contract: reads edits records (``specedit bench edits --review on``: each unflagged change
carries the model's review score) and, per model, considers the runs the checks did not
flag whose change was reviewed. ``choose(rows, share)`` is the threshold that flags at most
``share`` (default ``ALARMS``, issue 45's 5%) of the right ones: the largest score ``t`` with
at most that many right runs scoring below it. ``effect(rows, t)`` counts, for a threshold,
right runs flagged (false alarms) and wrong runs flagged (caught) and left. ``main`` prints
both for each record and model; with ``--threshold`` it tests a given threshold (one chosen
on another record: the held-out test) instead of choosing one. No model runs here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ALARMS = 0.05


def reviewed(record: dict, model: str) -> list[dict]:
    """The runs of ``model`` the checks did not flag and the model reviewed."""
    out = []
    for m in record["models"]:
        if m["model"] == model:
            out += [r for r in m["runs"] if not r.get("flagged") and r.get("review")]
    return out


def choose(rows: list[dict], allowed: int) -> float:
    """The largest threshold that flags at most ``allowed`` of the right runs."""
    right = sorted(r["review"]["score"] for r in rows if r["right"])
    if not right or allowed < 0:
        return float("-inf")
    return right[allowed] if allowed < len(right) else float("inf")


def budget(record_rows: list[dict], share: float = ALARMS) -> int:
    """The false alarms the review may add: ``share`` of the right runs, less those the
    checks already flag."""
    right = [r for r in record_rows if r.get("right")]
    return int(share * len(right)) - sum(bool(r.get("flagged")) for r in right)


def effect(rows: list[dict], t: float) -> dict:
    """What flagging scores below ``t`` does to ``rows``."""
    right = [r for r in rows if r["right"]]
    wrong = [r for r in rows if not r["right"]]
    alarms = sum(r["review"]["score"] < t for r in right)
    caught = sum(r["review"]["score"] < t for r in wrong)
    return {
        "threshold": round(t, 3),
        "right": len(right),
        "false_alarms": alarms,
        "wrong": len(wrong),
        "caught": caught,
        "left": len(wrong) - caught,
    }


def _auc(rows: list[dict]) -> float | None:
    right = [r["review"]["score"] for r in rows if r["right"]]
    wrong = [r["review"]["score"] for r in rows if not r["right"]]
    if not right or not wrong:
        return None
    wins = sum((a > b) + 0.5 * (a == b) for a in right for b in wrong)
    return wins / (len(right) * len(wrong))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="specedit bench review", description=__doc__)
    p.add_argument("records", nargs="+", type=Path)
    p.add_argument("--threshold", type=float, default=None, help="test this threshold")
    p.add_argument("--share", type=float, default=ALARMS, help="false alarms allowed")
    a = p.parse_args(argv)
    rows_by_model: dict[str, list[dict]] = {}
    all_by_model: dict[str, list[dict]] = {}
    for path in a.records:
        record = json.loads(path.read_text(encoding="utf-8"))
        for m in record["models"]:
            rows_by_model.setdefault(m["model"], []).extend(reviewed(record, m["model"]))
            all_by_model.setdefault(m["model"], []).extend(m["runs"])
    for model, rows in rows_by_model.items():
        allowed = budget(all_by_model[model], a.share)
        t = a.threshold if a.threshold is not None else choose(rows, allowed)
        e = effect(rows, t)
        auc = _auc(rows)
        how = (
            "given"
            if a.threshold is not None
            else f"chosen: {allowed} more alarms keep all verdicts within {a.share:.0%}"
        )
        sys.stdout.write(
            f"{model}: {len(rows)} unflagged reviewed runs, AUC "
            f"{'-' if auc is None else f'{auc:.2f}'}; threshold {e['threshold']} ({how}): "
            f"false alarms {e['false_alarms']}/{e['right']}, wrong caught "
            f"{e['caught']}/{e['wrong']}, wrong left {e['left']}\n"
        )
    return 0
