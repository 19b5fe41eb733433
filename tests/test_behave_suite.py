"""The behaviour-judged edit suite (bench/behave_tasks.py) and its runner
(``specedit bench edits``).

Every task of both sets is checked without a model: its check fails on the original and
passes on the reference, which stays in scope, and it has three phrasings. The judge's
scope reading is checked on a constructed case; the runner's plumbing runs one task on
the real 0.5B (what it records, not how right it is).
"""

from __future__ import annotations

import json
import shutil

import pytest

from specedit.bench.behave_tasks import (
    PHRASINGS,
    BehaveTask,
    judge,
    load,
    out_of_scope,
    validate,
)

SUITE, HOLDOUT = load("suite"), load("holdout")
NEEDS = {"javascript": "node", "rust": "rustc"}


def test_the_suite_is_big_and_varied_and_the_held_out_set_apart():
    assert len(SUITE) >= 60 and len(HOLDOUT) >= 15
    assert sum(t.semantic for t in SUITE) >= len(SUITE) / 2
    langs = {t.lang for t in SUITE}
    assert {"python", "javascript", "rust", "shell", "json", "toml", "yaml", "markdown"} <= langs
    names = [t.name for t in SUITE + HOLDOUT]
    assert len(set(names)) == len(names)
    assert all(t.name == t.folder.name for t in SUITE + HOLDOUT)
    for t in SUITE + HOLDOUT:
        assert set(t.instructions) == set(PHRASINGS) and len(set(t.instructions.values())) == 3


@pytest.mark.parametrize("task", SUITE + HOLDOUT, ids=lambda t: t.name)
def test_each_task_fails_on_the_original_and_passes_on_its_reference(task):
    tool = NEEDS.get(task.lang)
    if tool and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    assert validate(task) == []
    assert judge(task, task.reference()).right
    assert not judge(task, task.source()).right and not judge(task, None).right


def test_scope_allows_lines_in_range_and_insertions_at_its_edges(tmp_path):
    old = "".join(f"line {i}\n" for i in range(1, 11))
    task = BehaveTask("t", "k", False, "text", "f.txt", ((4, 6),), {}, tmp_path)
    assert out_of_scope(task, old, old.replace("line 5\n", "line five\n")) == []
    assert out_of_scope(task, old, old.replace("line 4\n", "new\nline 4\n")) == []
    assert out_of_scope(task, old, old.replace("line 6\n", "line 6\nnew\n")) == []
    assert out_of_scope(task, old, old.replace("line 8\n", "line eight\n")) == [(8, 8)]
    assert out_of_scope(task, old, old.replace("line 1\n", "")) == [(1, 1)]
    both = old.replace("line 3\n", "three\n").replace("line 4\n", "four\n")
    assert out_of_scope(task, old, both) == [(3, 4)]


@pytest.mark.model
def test_the_runner_records_each_phrasing(qwen05_path, tmp_path, capsys, monkeypatch):
    from specedit.bench.edits_bench import main

    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    task = min(
        (t for t in SUITE if t.lang in ("toml", "json", "yaml")),
        key=lambda t: len(t.source()),
    )
    # the blocks mode alone: a short answer (the plumbing, not the model, is tested)
    argv = ["--model", str(qwen05_path), "--tasks", task.name, "--modes", "blocks"]
    argv += ["--phrasings", "terse", "suite", "--threads", "2", "--ctx", "4096"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "wrong unflagged" in out and "median wait s" in out
    rec = json.loads(next(tmp_path.glob("edits-*.json")).read_text())
    assert rec["set"] == "suite" and rec["phrasings"] == ["terse", "suite"]
    (m,) = rec["models"]
    assert [r["phrasing"] for r in m["runs"]] == ["terse", "suite"]
    for r in m["runs"]:
        assert r["task"] == task.name and r["mode"] == "blocks" and r["wait_s"] > 0
        assert isinstance(r["right"], bool) and isinstance(r["first_right"], bool)
        assert r["right"] or r["why"] or r["flagged"]  # a wrong result says why
    s = m["summary"]["blocks"]
    assert s["all"]["all"]["runs"] == 2 and s["terse"]["all"]["runs"] == 1
    t = s["all"]["all"]
    assert t["right"] + t["wrong_flagged"] + t["wrong_unflagged"] == 2
