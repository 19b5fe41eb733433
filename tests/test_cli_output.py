"""The command line's output in pipes and logs (issue 17 items 5-6): one line per message
when stderr is not a terminal, user text never read as markup, a "did you mean" for a
mistyped model, ``--lines`` checked before any model loads, no blank first line from a
pull, and the batched-logits note said once, at the model's first load."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from tui_helpers import STATS  # the sample file the terminal app tests rewrite too

from specedit.app.cli.main import main

BATCH_NOTE = "batched evaluation changes logits"


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("SPECEDIT_MODEL", raising=False)


def test_error_lines_are_whole_in_a_pipe_and_never_markup(capsys, tmp_path):
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "[/x]" / "module_with_a_long_name.py"
    assert main(["rewrite", str(deep), "-i", "x"]) == 1
    err = capsys.readouterr().err
    assert len(err) > 120 and err.count("\n") == 1  # one line, however long
    assert str(deep) in err  # the name as it is: "[/x]" is not rich markup


def test_unknown_model_suggests_the_catalog_name(capsys, tmp_path):
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    assert main(["rewrite", str(f), "-i", "x", "--model", "qwen2.5-coder-05b"]) == 1
    err = capsys.readouterr().err
    assert "did you mean qwen2.5-coder-0.5b?" in err and err.count("\n") == 1
    assert main(["models", "path", "qwen2.5-coder-05b"]) == 1
    assert "did you mean qwen2.5-coder-0.5b?" in capsys.readouterr().err
    assert main(["rewrite", str(f), "-i", "x", "--model", "gpt-9"]) == 1
    assert "did you mean" not in capsys.readouterr().err  # nothing close: no guess


def test_lines_outside_the_file_are_refused_before_the_model_loads(capsys, tmp_path, monkeypatch):
    import specedit.app.runtime.loaded_model as loaded

    def no_load(*a, **kw):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(loaded, "load_model", no_load)
    f = tmp_path / "short.py"
    f.write_text("".join(f"x{i} = {i}\n" for i in range(167)))
    before = f.read_bytes()
    argv = ["rewrite", str(f), "-i", "x", "--lines", "500:600", "--write"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"--lines 500:600 is outside {f}, which has 167 lines" in err
    assert "499" not in err  # the numbers as the user typed them (1-based)
    assert main(["rewrite", str(f), "-i", "x", "--lines", "160:170"]) == 1
    assert "--lines 160:170 is outside" in capsys.readouterr().err
    assert f.read_bytes() == before


def test_models_pull_of_an_unknown_name_starts_with_the_error(capsys):
    assert main(["models", "pull", "qwen2.5-coder-05b"]) == 1
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err.startswith("error: unknown model 'qwen2.5-coder-05b'; did you mean")


@pytest.mark.model
def test_batched_logits_note_once_at_first_load_and_whole_lines(tmp_path, smollm_path):
    """Two runs on a fresh state dir: the note (a warning) comes with the first load's
    check only; the stats and "wrote … (backup …)" lines are one line each in a log."""
    folder = tmp_path / ("project-with-a-long-folder-name-" * 3)
    folder.mkdir()
    f = folder / "stats.py"
    f.write_text(STATS)
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "80"}
    env.pop("SPECEDIT_MODEL_CHECKS", None)  # the first load's own checks, in the state dir
    cmd = [sys.executable, "-m", "specedit.app.cli", "rewrite", str(f)]
    # --exact: the second run's lines depend on what the model wrote (a flagged result
    # adds one), so the text must not follow the timing's blocks
    cmd += ["--model", str(smollm_path), "--ctx", "4096", "--k", "8", "--exact"]

    def run(*extra: str) -> subprocess.CompletedProcess:
        r = subprocess.run(
            [*cmd, *extra], capture_output=True, text=True, env=env, timeout=900, check=False
        )
        assert r.returncode == 0, r.stderr
        return r

    # --force: this test is about the output lines, not whether the small model's edit
    # passes the check for dropped lines
    first = run("-i", "Rename the function average to mean and document it.", "--write", "--force")
    checks = json.loads((tmp_path / "state" / "model_checks.json").read_text())
    inexact = any(float(d) for e in checks.values() for d in e["deltas"].values())
    assert first.stderr.count(BATCH_NOTE) == (1 if inexact else 0)
    lines = first.stderr.splitlines()
    stats = [line for line in lines if "tokens/call" in line]
    wrote = [line for line in lines if line.startswith("wrote ")]
    assert len(stats) == 1 and "acceptance" in stats[0] and "llama.cpp on CPU" in stats[0]
    assert len(wrote) == 1 and str(f) in wrote[0] and "; undo: specedit undo " in wrote[0]
    assert len(wrote[0]) > 80  # longer than the width it used to be wrapped at
    second = run("-i", "Rename the function mean to average.")
    assert BATCH_NOTE not in second.stderr  # nowhere else, on any later run
    assert len([line for line in second.stderr.splitlines() if line.strip()]) <= 3
    assert "tok/s" in second.stderr  # every result is the model's: its figures


def test_generate_lists_each_quote_found_or_marked(capsys):
    """After the answer, ``generate`` lists its quotes as checked against the files."""
    from specedit.app.answer.quotes import check_citations
    from specedit.app.cli.main import _citations

    files = [("README.md", "# tool\nModels live in the user cache dir.\n")]
    answer = (
        "In the user cache dir.\n\n[README.md:L2]\n```\nModels live in the user cache dir.\n```\n"
        "[README.md:L1]\n```\nModels live in /tmp.\n```\n"
    )
    _citations(check_citations(answer, files))
    lines = capsys.readouterr().out.splitlines()
    assert "✓ README.md:L2" in lines and "✗ README.md:L1: not in README.md" in lines
    _citations([])
    out = capsys.readouterr().out
    assert out.strip() == "✗ no quotes: nothing in this answer is checked against the files"


def test_the_summary_gives_the_copied_passage_its_own_line(capsys):
    """The issue's figures: 38 tokens of the model's at 18.5 tok/s and 59 copied in (once
    read together as 48 tok/s); then where the wall time went."""
    from types import SimpleNamespace

    from specedit.app.cli.main import _summary, _wall
    from specedit.engine.metrics import Metrics

    m = Metrics(generated_tokens=38, inserted_tokens=59, prefill_s=1.0, decode_s=2.0)
    m.backend, m.device = "llama.cpp", "CPU"
    s = m.snapshot()
    s["timing_s"] = {"model_load": 0.5, "prefill": 1.0, "decode": 2.0, "total": 3.6}
    _summary(s, "", SimpleNamespace(model_name="qwen2.5-coder-0.5b"))
    _wall(s["timing_s"])
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("qwen2.5-coder-0.5b: 38 tokens, decode 18.5 tok/s, ")
    assert "copied" not in lines[0]
    assert lines[1] == (
        "copied from the files: 59 tokens, written by the program (no target call, in no tok/s)"
    )
    assert lines[2] == "wall 3.6 s: load 0.5 s, prefill 1.0 s, decode 2.0 s"
    _summary({**s, "inserted_tokens": 0}, "", SimpleNamespace(model_name="m"))
    assert "copied" not in capsys.readouterr().err  # nothing copied: no line
