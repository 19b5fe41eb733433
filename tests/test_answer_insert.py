"""Inserted quotes (``app.answer.answer`` with ``RewriteOptions.insert_quotes``): the model
answers in its own words; where it opens a passage, or else after its answer, the program
chooses the passage and writes it.

The scripted model (``scripted.py``) writes the answers; the real models' answers are in
``test_quote_guard.py`` and ``bench rag``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from scripted import scripted_loaded  # noqa: E402
from test_quote_guard import NOTES  # noqa: E402

from specedit.app.answer.answer import answer  # noqa: E402
from specedit.app.options import RewriteOptions  # noqa: E402
from specedit.engine.metrics import Metrics  # noqa: E402

DOC = (
    "# Garden\n\nWater the tomatoes every second evening;\nin a heat wave, every evening.\n\n"
    "The shed key hangs by the door.\nThe hose is in the shed.\n"
)
FILES = [("garden.md", DOC)]
Q = "How often are the tomatoes watered?"
# the model would quote one line of the two its paragraph has, then a second passage
SAID = (
    "Every second evening, and every evening in a heat wave.\n\n[garden.md]\n```\n"
    "Water the tomatoes every second evening;\n```\n\n[garden.md]\n```\nin a heat wave\n```"
)
PARAGRAPH = "Water the tomatoes every second evening;\nin a heat wave, every evening.\n"


@pytest.mark.parametrize("draft", ["lookup", "none"])
def test_the_program_chooses_the_passage_for_the_answer_and_writes_it(draft):
    """The answer's words and the question share the most rare words with the tomatoes'
    paragraph: the program writes it as soon as the passage opens; the model writes none
    of it."""
    loaded = scripted_loaded([(Q, SAID)])
    shown: list[str] = []
    res = answer(loaded, Q, FILES, RewriteOptions(draft=draft), on_text=shown.append)
    prose = "Every second evening, and every evening in a heat wave.\n\n[garden.md]\n```\n"
    assert res.text == prose + PARAGRAPH + "```"  # the whole paragraph; the answer ends
    assert "".join(shown) == res.text  # the stream got the inserted text too
    s = res.metrics.snapshot()
    assert s["stop_reason"] == "quote_inserted"
    assert s["generated_tokens"] + s["inserted_tokens"] == len(res.text.encode())
    if draft == "none":  # (a block of drafted tokens accepted past the fence is kept)
        assert s["generated_tokens"] == len(prose)  # not a byte of the passage
    assert [c.found for c in res.citations] == [True]


NO_WORD = "Which one?"  # shares no word with the file: the model's first words choose
SAID_NO_WORD = "This one.\n\n[garden.md]\n```\ntomatoes every second evening;\n```"


@pytest.mark.parametrize("draft", ["lookup", "none"])
def test_where_the_words_cannot_choose_the_first_words_of_the_model_s_passage_do(draft):
    """The passage the model begins mid-line is written from its line's start to its
    paragraph's end, once its first words pin it to one place; the model's first bytes of
    it are held back from the stream and not counted as generated."""
    loaded = scripted_loaded([(NO_WORD, SAID_NO_WORD)])
    shown: list[str] = []
    res = answer(loaded, NO_WORD, FILES, RewriteOptions(draft=draft), on_text=shown.append)
    prose = "This one.\n\n[garden.md]\n```\n"
    assert res.text == prose + PARAGRAPH + "```"
    assert "".join(shown) == res.text
    s = res.metrics.snapshot()
    assert s["generated_tokens"] == len(prose)  # "t..." pinned it, then was replaced
    assert s["generated_tokens"] + s["inserted_tokens"] == len(res.text.encode())
    assert s["model_tokens"] == len(prose) + s["dropped_tokens"] > len(prose)  # "t..."


def test_a_copied_passage_raises_no_rate():
    """The issue's figures: 38 tokens of the model's and 59 copied in, in 2 s of decoding,
    read as 48 tok/s when the copy counted; the model's own rate is 37 / 2."""
    m = Metrics(generated_tokens=38, inserted_tokens=59, prefill_s=1.0, decode_s=2.0)
    bare = Metrics(generated_tokens=38, prefill_s=1.0, decode_s=2.0)
    assert m.decode_tps == bare.decode_tps == 37 / 2
    assert m.e2e_tps == bare.e2e_tps == 38 / 3
    s = m.snapshot()
    assert (s["decode_tps"], s["model_tokens"], s["inserted_tokens"]) == (18.5, 38, 59)


def test_the_rates_count_the_tokens_the_target_decoded_kept_or_replaced():
    """A passage the model began is replaced by the program's: its bytes are decoded, then
    dropped (``dropped_tokens``), and count in the rates as the model's; the passage counts
    in none. Without a drafter every token after the first is one target call's, so the
    model's tokens are the calls' plus the first."""
    loaded = scripted_loaded([(NO_WORD, SAID_NO_WORD)])
    m = answer(loaded, NO_WORD, FILES, RewriteOptions(draft="none")).metrics
    assert m.inserted_tokens > 0 and m.dropped_tokens > 0
    assert m.model_tokens == m.generated_tokens + m.dropped_tokens == m.emitted_tokens + 1
    assert m.decode_tps == pytest.approx((m.model_tokens - 1) / m.decode_s)
    assert m.e2e_tps == pytest.approx(m.model_tokens / (m.prefill_s + m.decode_s))
    copied = m.decode_tps
    m.inserted_tokens = 0
    assert m.decode_tps == copied  # the same figure with or without the passage


def test_typed_quotes_leave_the_passages_to_the_model():
    loaded = scripted_loaded([(Q, SAID)])
    res = answer(loaded, Q, FILES, RewriteOptions(insert_quotes=False))
    assert res.text == SAID
    assert res.metrics.inserted_tokens == 0
    assert [c.found for c in res.citations] == [True, True]


def test_nothing_is_inserted_without_the_guard():
    loaded = scripted_loaded([(Q, SAID)])
    res = answer(loaded, Q, FILES, RewriteOptions(verbatim=False))
    assert res.text == SAID and res.metrics.inserted_tokens == 0


@pytest.mark.parametrize("draft", ["lookup", "none"])
def test_an_answer_that_ends_without_a_passage_gets_the_program_s_evidence(draft):
    """The model answers in its own words and stops; the program adds the paragraph that
    shares the most rare words with the question and the answer, under its citation."""
    plain = "They are watered every second evening. "
    shown: list[str] = []
    loaded = scripted_loaded([(Q, plain)])
    res = answer(loaded, Q, FILES, RewriteOptions(draft=draft), on_text=shown.append)
    assert res.text == plain + "\n\n[garden.md]\n```\n" + PARAGRAPH + "```"
    assert "".join(shown) == res.text
    s = res.metrics.snapshot()
    assert s["stop_reason"] == "quote_inserted" and s["generated_tokens"] == len(plain)
    assert s["inserted_tokens"] == len(res.text) - len(plain)
    assert [c.found for c in res.citations] == [True]
    assert "Quote them exactly" in loaded.target.prompts[0]  # the free prompt: own words


def test_of_passages_that_tie_the_evidence_is_the_first():
    """A paragraph repeated (a docstring of ``dump`` and of ``dumps``): the evidence is the
    first copy, where the model's first words would have found both alike."""
    doc = DOC + "\n" + PARAGRAPH
    plain = "Every second evening."
    res = answer(scripted_loaded([(Q, plain)]), Q, [("garden.md", doc)], RewriteOptions())
    assert res.text == plain + "\n\n[garden.md]\n```\n" + PARAGRAPH + "```"
    assert [c.located for c in res.citations] == [(3, 4)]


def test_no_evidence_where_the_program_cannot_choose_or_the_answer_was_cut():
    said = "This one."  # shares no word with the file
    res = answer(scripted_loaded([(NO_WORD, said)]), NO_WORD, FILES, RewriteOptions())
    assert res.text == said and res.metrics.inserted_tokens == 0
    assert res.metrics.stop_reason == "eos"
    plain = "They are watered every second evening."
    opts = RewriteOptions(draft="none", max_tokens=10)
    res = answer(scripted_loaded([(Q, plain)]), Q, FILES, opts)
    assert res.text == plain[:10] and res.metrics.inserted_tokens == 0


@pytest.mark.model
def test_the_05b_answers_in_its_own_words_and_the_program_adds_the_passage(qwen05):
    """An exact run, inserted against the free style: the same words (the model's, from the
    same prompt), then the program's passage: whole lines of the file, one paragraph, under
    its citation, found; no token of it generated."""
    from specedit.app.answer.quotes import check_citations, prose

    question = "Where does the cache live? Quote the line that says it."
    files = [("docs/NOTES.md", NOTES)]
    free = answer(qwen05, question, files, RewriteOptions(exact=True), style="free")
    got = answer(qwen05, question, files, RewriteOptions(exact=True))
    assert "```" not in free.text  # (in this exact run the 0.5B answers in a sentence)
    head = free.text + "\n\n[docs/NOTES.md]\n```\n"
    assert got.text.startswith(head) and got.text.endswith("\n```")
    body = got.text[len(head) : -len("```")]
    assert body in NOTES and (NOTES.index(body) == 0 or NOTES[NOTES.index(body) - 1] == "\n")
    assert "\n\n" not in body and "cache" in body  # one paragraph, the one about the cache
    assert prose(got.text) == prose(free.text)
    assert [c.found for c in check_citations(got.text, files)] == [True]
    s, f = got.metrics.snapshot(), free.metrics.snapshot()
    assert s["generated_tokens"] == f["generated_tokens"] and s["inserted_tokens"] > 0


def test_a_token_limit_after_the_pin_still_gets_the_passage_and_one_before_does_not():
    prose = "Every second evening, and every evening in a heat wave.\n\n[garden.md]\n```\n"
    loaded = scripted_loaded([(Q, SAID)])
    opts = RewriteOptions(draft="none", max_tokens=len(prose) + 1)  # the pin is the last
    res = answer(loaded, Q, FILES, opts)
    assert res.text == prose + PARAGRAPH + "```"
    res = answer(loaded, Q, FILES, RewriteOptions(draft="none", max_tokens=20))
    assert res.text == prose[:20] and res.metrics.inserted_tokens == 0
    assert res.metrics.stop_reason == "max_tokens"


def test_a_passage_that_starts_on_a_lead_in_goes_on_into_its_paragraph():
    """random.py's "General notes on the underlying Mersenne Twister core generator:" stands
    alone before a blank line; the period is in the list after it. The evidence goes on
    over that blank line; the garden's evidence, which starts on no lead-in, is as before."""
    doc = (
        "Random variable generators.\n\nGeneral notes on the core generator:\n\n"
        "* The period is 2**19937-1.\n* It is well tested.\n\nOther notes.\n"
    )
    q = "What is the period of the core generator?"
    plain = "The period is 2^19937-1."
    res = answer(scripted_loaded([(q, plain)]), q, [("random.py", doc)], RewriteOptions())
    lead = "General notes on the core generator:\n\n* The period is 2**19937-1.\n"
    assert res.text == plain + "\n\n[random.py]\n```\n" + lead + "* It is well tested.\n```"
    assert [c.found for c in res.citations] == [True]
    res = answer(scripted_loaded([(Q, "Every second evening.")]), Q, FILES, RewriteOptions())
    assert res.text.endswith("```\n" + PARAGRAPH + "```")  # "# Garden" is not chosen


OWN = "Every second evening, with the hose:\n```\nwater(tomatoes, every=2)\n```"


@pytest.mark.parametrize("draft", ["lookup", "none"])
def test_a_block_the_model_opens_itself_stays_its_own_and_the_evidence_follows(draft):
    """Asked in its own words, the model shows a path or a call in a block with no
    citation: those are its words (platformdirs' Linux log path was one), so the program
    neither guards nor replaces them, and adds the evidence after the answer; the check
    then lists the model's block too, found or not. Under a citation the program writes
    the passage as before."""
    res = answer(scripted_loaded([(Q, OWN)]), Q, FILES, RewriteOptions(draft=draft))
    assert res.text == OWN + "\n\n[garden.md]\n```\n" + PARAGRAPH + "```"
    assert [(c.file, c.found) for c in res.citations] == [(None, False), ("garden.md", True)]
    cited = OWN.replace("hose:\n", "hose.\n\n[garden.md]\n")
    res = answer(scripted_loaded([(Q, cited)]), Q, FILES, RewriteOptions(draft=draft))
    assert res.text == cited[: cited.index("```") + 4] + PARAGRAPH + "```"
