"""The project ships what its bench and tests read: a fresh clone needs nothing beside it.

The Spec-Bench subset in ``bench/data/spec_bench/`` is read by default; data that is
missing or broken is skipped with a warning, never an error.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from specedit.bench import tasks
from specedit.bench.tasks import SPEC_BENCH_FILE, SPEC_KINDS, VENDORED_PER_KIND, load_tasks

ROOT = Path(__file__).resolve().parent.parent


def test_vendored_subset_license_and_source() -> None:
    rows = [json.loads(line) for line in SPEC_BENCH_FILE.read_text().splitlines()]
    kinds = [r["category"] for r in rows]
    assert {k: kinds.count(k) for k in SPEC_KINDS} == dict.fromkeys(SPEC_KINDS, VENDORED_PER_KIND)
    assert len(rows) == len(SPEC_KINDS) * VENDORED_PER_KIND
    assert all(isinstance(r["question_id"], int) and r["turns"] for r in rows)
    assert SPEC_BENCH_FILE.stat().st_size < 300_000
    folder = SPEC_BENCH_FILE.parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    readme = (folder / "README.md").read_text()
    assert "hemingkx/Spec-Bench" in readme and "fd2c1cd" in readme


def test_bench_reads_the_vendored_file_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPECEDIT_SPEC_BENCH", raising=False)
    assert tasks.spec_bench_path() == SPEC_BENCH_FILE
    got = load_tasks(["writing", "summarization", "rag"], 2)
    assert [t.kind for t in got] == ["writing"] * 2 + ["summarization"] * 2 + ["rag"] * 2
    assert all(t.source_text for t in got)


def test_missing_data_is_skipped_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SPECEDIT_SPEC_BENCH", str(tmp_path / "nowhere.jsonl"))
    with caplog.at_level(logging.WARNING, logger="specedit.bench.tasks"):
        got = load_tasks(["copy", "writing"], 1)
    assert [t.kind for t in got] == ["copy"]
    assert "nowhere.jsonl" in caplog.text


def test_broken_rows_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "q.jsonl"
    good = {"question_id": 1, "category": "rag", "turns": ["the passage"]}
    f.write_text("\n".join(["{not json", json.dumps({"category": "rag"}), json.dumps(good)]))
    monkeypatch.setenv("SPECEDIT_SPEC_BENCH", str(f))
    got = load_tasks(["rag"], 3)  # asks for more than there are: a warning, not an error
    assert [t.name for t in got] == ["rag-1"]


def test_nothing_reads_a_sibling_shared_folder() -> None:
    """A user's clone has no ``../shared``: no code or test may read it."""
    offenders = []
    for sub in ("app", "bench", "engine", "kernels", "models", "tests", "scripts"):
        for p in (ROOT / sub).rglob("*"):
            if p.suffix in (".py", ".sh", ".lua", ".ts", ".js") and p != Path(__file__):
                if "node_modules" in p.parts:
                    continue
                text = p.read_text(errors="replace")
                if "../shared" in text or '"shared" / "data"' in text:
                    offenders.append(str(p.relative_to(ROOT)))
    assert offenders == []
