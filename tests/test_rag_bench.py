"""The RAG suite (bench/rag_tasks.py) and its runner (``specedit bench rag``).

The questions' checks run without a model against the vendored docs; the runner's
plumbing runs one small question on the real 135M model with tiny settings (what it
records, not how right or fast it is).
"""

from __future__ import annotations

import json
import os

import pytest

from specedit.app.answer.quotes import all_found, check_citations
from specedit.app.runtime.stream import fence_for
from specedit.bench.rag_bench import passes, summarise, table
from specedit.bench.rag_tasks import DATA, load_questions, spec_bench_questions

LONG = os.environ.get("SPECEDIT_LONG") == "1"


def test_the_question_set_is_vendored_and_every_answer_is_in_its_docs():
    qs = load_questions()
    assert len(qs) >= 20 and len({q.id for q in qs}) == len(qs)
    for q in qs:
        ctx = q.context_files()
        assert ctx and all((DATA / "docs" / d).is_file() for d in q.docs), q.id
        # the known answer is in the files given (a model can quote it), and the check
        # refuses an answer that says nothing
        assert any(q.judge(text) for _, text in ctx), q.id
        assert q.judge("I do not know.") is False, q.id
        # a quote of the right passage under a wrong answer is still wrong
        right = next(text for _, text in ctx if q.judge(text))
        f = fence_for(right)
        assert q.judge(f"I do not know.\n\n[{q.docs[0]}]\n{f}\n{right}\n{f}") is False, q.id


def test_every_question_names_the_passages_that_state_its_answer():
    """``evidence`` finds a passage in the docs, and a quote of its lines supports the answer
    while a quote of the docs' first lines (a title, badges) does not."""
    import re

    for q in load_questions():
        assert q.evidence, q.id
        hits = []
        for _, text in q.context_files():
            lines = text.split("\n")
            for e in q.evidence:
                for m in re.finditer(e, text):
                    first = text.count("\n", 0, m.start())
                    last = text.count("\n", 0, m.end())
                    hits.append("\n".join(lines[first : last + 1]))
        assert hits, q.id
        assert all(len(h.split("\n")) <= 8 for h in hits), q.id  # one passage can hold it
        assert q.supports(hits[:1]) is True, q.id
        assert q.supports([]) is None, q.id
        top = q.context_files()[0][1].split("\n")[:2]
        if not any(re.search(e, "\n".join(top)) for e in q.evidence):
            assert q.supports(["\n".join(top)]) is False, q.id


def test_spec_bench_rag_prompts_become_passages_and_a_question():
    (q,) = spec_bench_questions(1)
    [(label, passages)] = q.context_files()
    assert label == "passages.txt" and len(passages) > 1000
    assert q.question.endswith("?") and q.question not in passages
    assert q.judge("anything") is None and spec_bench_questions(0) == []


def _row(qid, style, draft, tps, quoted=True, right=True, supported=None):
    return {
        "supported": supported,
        "id": qid,
        "set": "questions",
        "style": style,
        "draft": draft,
        "right": right,
        "quotes_found": quoted,
        "same_output": True,
        "decode_tps": tps,
        "generated_tokens": 50,
        "acceptance": 0.5,
    }


def test_the_summary_counts_quotes_and_answers_and_takes_the_median_ratio():
    runs = [
        _row("a", "quote", "lookup", 30.0),
        _row("a", "quote", "none", 10.0),
        _row("b", "quote", "lookup", 12.0, quoted=False, right=False),
        _row("b", "quote", "none", 12.0, quoted=False, right=False),
        _row("c", "quote", "lookup", 20.0, supported=False),  # right words, a quote off the point
        _row("c", "quote", "none", 10.0, supported=True),
    ]
    s = summarise(runs)["questions"]["quote"]
    assert s["lookup"]["quote_rate"] == round(2 / 3, 3) and s["lookup"]["right"] == 2
    assert s["lookup"]["right_supported"] == 1 and s["none"]["right_supported"] == 2
    assert (s["lookup"]["supported"], s["lookup"]["quoted_judged"]) == (0, 1)
    assert s["lookup"]["median_decode_tps"] == 20.0 and s["none"]["median_decode_tps"] == 10.0
    assert s["lookup"]["speedup"] == 2.0  # ratios 3, 1, 2
    assert s["lookup"]["speedup_over"] == "none" and "speedup" not in s["none"]
    # with plain decoding measured too, the speed-up is over it, for both other draftings
    runs += [_row(q, "quote", "plain", 5.0) for q in "abc"]
    s = summarise(runs)["questions"]["quote"]
    assert s["lookup"]["speedup"] == 4.0 and s["none"]["speedup"] == 2.0  # 6, 2.4, 4; 2, 2.4, 2
    assert s["lookup"]["speedup_over"] == "plain" and "speedup" not in s["plain"]


def test_answers_are_compared_by_the_model_s_tokens_and_by_wall_time():
    """The product's answer: 40 tokens of the model's and a passage of 60 copied in, in 2 s;
    plain decoding types all 100 in 10 s. The rate counts the model's tokens only (20 over
    10 tok/s: 2x); the wait is 5x shorter; the table shows both, and the copy apart."""
    runs = [
        {**_row("a", "quote", "lookup", 20.0), "model_tokens": 40, "inserted_tokens": 60},
        {**_row("a", "quote", "plain", 10.0), "model_tokens": 100, "inserted_tokens": 0},
    ]
    runs[0]["wall_s"], runs[1]["wall_s"] = 2.0, 10.0
    s = summarise(runs)["questions"]["quote"]
    assert s["lookup"]["speedup"] == 2.0 and s["lookup"]["wall_speedup"] == 5.0
    assert (s["lookup"]["median_model_tokens"], s["lookup"]["median_inserted_tokens"]) == (40, 60)
    assert s["plain"]["median_wall_s"] == 10.0 and "wall_speedup" not in s["plain"]
    text = table({"model": "m", "load_range": [0, 1], "summary": {"questions": {"quote": s}}})
    head, lookup = text.splitlines()[1:3]
    assert head.split()[-7:] == ["tokens", "copied", "wall", "s", "accept", "speed-up", "wall"]
    assert lookup.split()[-7:] == ["20.0", "40.0", "60.0", "2.0", "0.50", "2.00x", "5.00x"]
    # a record from before these were recorded: its generated tokens, no wall figures
    old = summarise([_row("a", "quote", "lookup", 20.0), _row("a", "quote", "plain", 10.0)])
    got = old["questions"]["quote"]["lookup"]
    assert got["median_model_tokens"] == 50 and got["wall_speedup"] is None


def test_a_group_of_questions_is_asked_in_one_pass_per_prompt():
    """The quote style's plain runs ask with the quote prompt, its others with the free
    one (the program writes their passages): the runs that share a prompt come in one pass,
    so the target reads the files once per prompt, not once per question and prompt."""
    assert passes(["quote", "free"], ["lookup", "plain"]) == [
        [("quote", ["lookup"]), ("free", ["lookup", "plain"])],
        [("quote", ["plain"])],
    ]
    # the styles' order is kept, and the loose style (the quote prompt, unguarded) joins
    # the quote style's plain runs
    assert passes(["free", "loose", "quote"], ["none", "plain"]) == [
        [("free", ["none", "plain"]), ("quote", ["none"])],
        [("loose", ["none", "plain"]), ("quote", ["plain"])],
    ]
    assert passes(["free"], ["lookup", "none"]) == [[("free", ["lookup", "none"])]]


@pytest.mark.model
def test_the_runner_records_each_drafting_and_rechecks(smollm_path, tmp_path, capsys, monkeypatch):
    """The runner's plumbing on the 135M model, one style (the ~2,800 prompt tokens of a
    style's first run cost a minute on one thread, half that on two; make test-long runs
    both styles): what it records holds for any model's answers."""
    from specedit.bench.rag_bench import main

    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    styles = ["quote", "free"] if LONG else ["quote"]
    argv = ["--model", str(smollm_path), "--questions", "nvim-version", "--spec-bench", "0"]
    argv += ["--max-tokens", "24", "--threads", "2", "--ctx", "4096", "--out", str(tmp_path)]
    assert main([*argv, "--styles", *styles]) == 0
    out = capsys.readouterr().out
    assert "quoted" in out and "speed-up" in out
    rec = json.loads(next(tmp_path.glob("rag-*.json")).read_text())
    assert rec["questions"] == ["nvim-version"] and rec["load_range"][0] >= 0
    runs = rec["runs"]
    # one pass per prompt: the free prompt's runs (the quote style's lookup and none, then
    # the free style's, the draftings taking turns to go first), then the quote prompt's
    want = [("quote", "lookup"), ("quote", "none")]
    if LONG:
        want += [("free", d) for d in ("none", "plain", "lookup")]
    want += [("quote", "plain")]
    assert [(r["style"], r["draft"]) for r in runs] == want
    (q,) = [q for q in load_questions() if q.id == "nvim-version"]
    for r in runs:
        assert r["generated_tokens"] > 0 and r["decode_tps"] > 0
        assert r["prompt_tokens"] + r["cached_tokens"] > 1000  # the files were shown
        assert isinstance(r["right"], bool) and r["right"] == q.judge(r["output"])
        # the citations recorded are the checker's, on the recorded answer
        cs = check_citations(r["output"], q.context_files())
        assert r["citations"] == [c.to_json() for c in cs]
        assert r["quotes_found"] == all_found(cs) and r["quotes"] == len(cs)
    # the later runs of a prompt found the files in the cache: only the question was read
    # (the quote style's plain run, last, asks with the quote prompt and reads them again)
    for later in runs[1:-1]:
        assert later["cached_tokens"] > 1000 and later["prompt_tokens"] < 100
    assert runs[-1]["prompt_tokens"] > 1000
    assert {r["same_output"] for r in runs[:2]} == {runs[0]["output"] == runs[1]["output"]}
    assert runs[-1]["same_output"] is True  # plain's passages are the model's: not compared
    # plain decoding: every output token came from the target
    assert runs[-1]["inserted_tokens"] == 0 and runs[-1]["draft"] == "plain"
    for r in runs:  # the model's tokens, those it kept and those a passage replaced
        assert r["model_tokens"] >= r["generated_tokens"] and r["wall_s"] > 0
    s = rec["summary"]["questions"]
    assert set(s) == set(styles) and s["quote"]["lookup"]["runs"] == 1
    assert s["quote"]["lookup"]["speedup"] > 0 and s["quote"]["lookup"]["speedup_over"] == "plain"
    # re-checked without the model: the same verdicts, the same summary
    path = next(tmp_path.glob("rag-*.json"))
    assert main(["--from", str(path), "--out", str(tmp_path / "again")]) == 0
    again = json.loads(next((tmp_path / "again").glob("rag-*.json")).read_text())
    assert again["runs"] == runs and again["summary"] == rec["summary"]
    assert again["rechecked_from"] == str(path)
