"""The ``specedit`` command line: bad inputs fail clearly, real rewrites write safely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from specedit.app.cli.main import main

SAMPLE = Path(__file__).resolve().parent.parent / "app" / "samples" / "inventory.py"


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))


def _err(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_missing_path(capsys, tmp_path):
    assert main(["rewrite", str(tmp_path / "nope.py"), "-i", "x"]) == 1
    assert "nope.py" in _err(capsys)


def test_binary_file_untouched(capsys, tmp_path):
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\x7fELF\x00\x01\x02")
    assert main(["rewrite", str(f), "-i", "x", "--write"]) == 1
    assert "binary" in _err(capsys)
    assert f.read_bytes() == b"\x7fELF\x00\x01\x02"


def test_non_utf8_file_untouched(capsys, tmp_path):
    f = tmp_path / "latin1.txt"
    f.write_bytes("café\n".encode("latin-1"))
    assert main(["rewrite", str(f), "-i", "x", "--write"]) == 1
    assert "UTF-8" in _err(capsys)
    assert f.read_bytes() == "café\n".encode("latin-1")


def test_unknown_model(capsys, tmp_path):
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    assert main(["rewrite", str(f), "-i", "x", "--model", "gpt-9"]) == 1
    msg = _err(capsys)
    assert "gpt-9" in msg and "qwen2.5-coder-0.5b" in msg


def test_corrupt_model_file(capsys, tmp_path):
    f = tmp_path / "a.py"
    f.write_text("x = 1\n")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all" * 10)
    assert main(["rewrite", str(f), "-i", "x", "--model", str(bad)]) == 1
    assert "bad.gguf" in _err(capsys)


def test_models_list(capsys):
    assert main(["models", "list"]) == 0
    text = capsys.readouterr().out
    for name in ("smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
        assert name in text


@pytest.mark.model
def test_too_long_for_context(capsys, tmp_path, qwen05_path):
    f = tmp_path / "big.py"
    f.write_text("".join(f"value_{i} = {i} * {i}\n" for i in range(1500)))
    before = f.read_bytes()
    argv = ["rewrite", str(f), "-i", "x", "--model", str(qwen05_path), "--ctx", "2048"]
    # a whole rewrite cannot fit: the error says how long the file is and what to do
    assert main([*argv, "--edit", "whole"]) == 1
    msg = _err(capsys)
    assert "big.py is" in msg and "tokens" in msg and "2,048-token context" in msg
    assert "--edit auto" in msg and "--lines" in msg
    # a region too long for the context: its own size, not the file's
    assert main([*argv, "--lines", "1:1000"]) == 1
    msg = _err(capsys)
    assert "lines 1:1000 of" in msg and "2,048-token context" in msg and "smaller region" in msg
    assert f.read_bytes() == before


@pytest.mark.model
def test_rewrite_json_write_and_undo(tmp_path, qwen05_path):
    f = tmp_path / "inventory.py"
    original = SAMPLE.read_text().replace("\n", "\r\n")  # CRLF must survive the rewrite
    f.write_bytes(original.encode())
    os.chmod(f, 0o640)
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(tmp_path / "state")}
    # The file is named relative to its folder: the prompt shows the path as given, so an
    # absolute tmp path (pytest-114/..., another number each run) made another prompt and,
    # greedy, another text in every run. One path, one prompt: the --exact text is fixed.
    cmd = [
        sys.executable,
        "-m",
        "specedit.app.cli",
        "rewrite",
        f.name,
        "--model",
        str(qwen05_path),
    ]
    r = subprocess.run(
        [
            *cmd,
            "-i",
            "Rename the method low_stock to items_below.",
            "--json",
            "--write",
            "--ctx",
            "4096",
            "--k",
            "15",
            # the whole file written out: what this test's figures are about
            "--edit",
            "whole",
            # greedy output equal to plain decoding whatever the speed guard does on a loaded
            # machine (it may turn speculation off, and block sizes move inexact logits)
            "--exact",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    obj = json.loads(r.stdout)
    assert obj["written"] is True
    stats = obj["stats"]
    for key in (
        "generated_tokens",
        "prompt_tokens",
        "target_calls",
        "drafted_tokens",
        "accepted_tokens",
        "acceptance",
        "tokens_per_call",
        "acceptance_by_position",
        "prefill_tps",
        "decode_tps",
        "time_split_s",
        "exact",
        "timing_s",
    ):
        assert key in stats, key
    # exact mode on this build verifies in sub-blocks of 1, each a call: drafts are still
    # accepted, the calls are what exactness costs
    assert stats["exact"] and stats["accepted_tokens"] > 0
    new = f.read_bytes().decode()
    # the result as written: its own text, with the file's CRLF line ends kept
    assert new.replace("\r\n", "\n") == obj["output"]
    assert "def items_below(" in new and "low_stock" not in new
    assert "\r\n" in new and "\n" not in new.replace("\r\n", "")
    assert oct(f.stat().st_mode & 0o777) == oct(0o640)
    assert obj["diff"].count("\n-") >= 1
    u = subprocess.run(
        [sys.executable, "-m", "specedit.app.cli", "undo", f.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert u.returncode == 0, u.stderr
    assert f.read_bytes().decode() == original


@pytest.mark.model
def test_generate_quotes_context(tmp_path, qwen05_path, capsys):
    """``generate --json``: the answer, and its quotes checked against the context file."""
    from specedit.app.answer.quotes import check_citations

    doc = tmp_path / "notes.md"
    text = (
        "# Team notes\n\n"
        "The build uses CMake 3.28.\n"
        "Releases are cut every second Tuesday.\n"
        "The on-call rotation changes on Mondays at 09:00 UTC.\n"
    )
    doc.write_text(text)
    rc = main(
        [
            "generate",
            "--context",
            str(doc),
            "-p",
            "When does the on-call rotation change? Quote the line that says it.",
            "--model",
            str(qwen05_path),
            "--ctx",
            "2048",
            "--json",
            "--max-tokens",
            "80",
            "--exact",  # the model's words are asserted: an exact run
        ]
    )
    assert rc == 0
    obj = json.loads(capsys.readouterr().out)
    assert "Monday" in obj["output"]
    s = obj["stats"]
    assert s["model_tokens"] >= s["generated_tokens"] > 0
    # every rate is the model's tokens over its time; a passage copied in is beside it
    assert s["decode_tps"] == pytest.approx((s["model_tokens"] - 1) / s["decode_s"], rel=0.01)
    assert {"model_load", "prefill", "decode", "total"} <= set(s["timing_s"])  # the wall
    # the record is the checker's verdict on the answer: every quote, found or marked
    cites = obj["citations"]
    for c in cites:
        assert {"file", "lines", "quote", "found"} <= set(c)
        assert isinstance(c["found"], bool) and c["quote"]
    want = [c.to_json() for c in check_citations(obj["output"], [(str(doc), text)])]
    assert cites == want
    # an answer that quotes nothing is not a quoting answer
    assert obj["quotes_found"] is (bool(cites) and all(c["found"] for c in cites))
    # what it marks found is in the file, at the lines it gives
    for c in cites:
        if c["found"]:
            assert " ".join(c["quote"].split()) in " ".join(text.split())
            first, last = c["located"]
            assert 3 <= first <= last <= 6


SHORT = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"


@pytest.mark.model
def test_a_cut_generation_is_never_written(capsys, tmp_path, qwen05_path):
    """Issue 12: output that stopped at --max-tokens before its closing fence is truncated:
    nothing is written, the command fails and says how to raise the limit."""
    f = tmp_path / "m.py"
    f.write_text(SHORT)
    args = ["rewrite", str(f), "-i", "Add a docstring to sub.", "--write", "--exact"]
    rc = main([*args, "--model", str(qwen05_path), "--ctx", "2048", "--max-tokens", "6"])
    assert rc == 1
    msg = _err(capsys)
    assert "6-token output limit" in msg and "--max-tokens" in msg and "nothing was written" in msg
    assert f.read_text() == SHORT


@pytest.mark.model
def test_a_result_that_drops_the_last_function_is_flagged_and_not_written(
    capsys, tmp_path, qwen05_path
):
    """Issues 12, 22, then 45: the 0.5B, asked to rename add to plus in this file, closes
    its block after the first function. The program does not put the dropped function
    back (it cannot know it was not asked): the check says which lines are gone and
    --write refuses the result, the file untouched."""
    f = tmp_path / "m.py"
    f.write_text(SHORT)
    args = ["rewrite", str(f), "-i", "Rename the function add to plus.", "--write", "--exact"]
    args += ["--model", str(qwen05_path), "--ctx", "2048", "--no-prompt-cache", "--edit", "whole"]
    assert main(args) == 1
    assert f.read_text() == SHORT
    err = _err(capsys)
    assert "the end of the file, are deleted" in err and "--force" in err


def test_write_refuses_a_flagged_result_unless_forced(capsys, tmp_path, monkeypatch):
    """Issue 22: a result a check flags (here: the rename left undone, which no repair
    finishes because the model began none of it) is shown with the reason and written only
    with --force."""
    from scripted import scripted_loaded

    from specedit.app.cli import main as cli

    text = "def add(a, b):\n    return a + b\n\n\ndef twice(x):\n    return add(x, x)\n"
    wrong = text.replace("return a + b", "return b + a")  # the model renamed nothing
    answer = "```python\n" + wrong + "```\n"
    monkeypatch.setattr(cli, "_load", lambda a: scripted_loaded([("Instruction:", answer)]))
    f = tmp_path / "m.py"
    f.write_text(text)
    args = ["rewrite", str(f), "-i", "Rename the function add to plus and fix its return."]
    args += ["--write"]
    assert main([*args, "--edit", "whole"]) == 1
    msg = _err(capsys)
    assert "add is still used on lines 1 and 6 after the rename to plus" in msg
    assert "--force" in msg and f.read_text() == text
    assert main([*args, "--edit", "whole", "--force"]) == 0
    assert f.read_text() == wrong
