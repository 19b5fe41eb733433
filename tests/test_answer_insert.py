"""Inserted quotes (``app.rewrite.answer`` with ``RewriteOptions.insert_quotes``): once the
model's first words of a passage pin it to one place, the program writes the rest of it.

The scripted model (``scripted.py``) writes the answers; the real models' answers are in
``test_quote_guard.py`` and ``bench rag``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from scripted import scripted_loaded  # noqa: E402

from specedit.app.options import RewriteOptions  # noqa: E402
from specedit.app.rewrite import answer  # noqa: E402

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
def test_the_program_writes_the_passage_the_first_words_pin_down(draft):
    loaded = scripted_loaded([(Q, SAID)])
    shown: list[str] = []
    res = answer(loaded, Q, FILES, RewriteOptions(draft=draft), on_text=shown.append)
    prose = "Every second evening, and every evening in a heat wave.\n\n[garden.md]\n```\n"
    assert res.text == prose + PARAGRAPH + "```"  # the whole paragraph; the answer ends
    assert "".join(shown) == res.text  # the stream got the inserted text too
    s = res.metrics.snapshot()
    assert s["stop_reason"] == "quote_inserted"
    # the model wrote the prose, the citation and some of the passage (one byte pins it; an
    # accepted block of drafted tokens may carry the copy further), the program the rest
    assert s["generated_tokens"] + s["inserted_tokens"] == len(res.text.encode())
    assert s["inserted_tokens"] > 0
    if draft == "none":
        assert s["generated_tokens"] == len(prose) + 1
    assert [c.found for c in res.citations] == [True]


def test_a_passage_begun_mid_line_is_quoted_from_the_line_s_start_and_streamed_whole():
    said = SAID.replace("Water the tomatoes", "tomatoes", 1)  # the model starts at a word
    loaded = scripted_loaded([(Q, said)])
    shown: list[str] = []
    res = answer(loaded, Q, FILES, RewriteOptions(draft="none"), on_text=shown.append)
    prose = "Every second evening, and every evening in a heat wave.\n\n[garden.md]\n```\n"
    assert res.text == prose + PARAGRAPH + "```"
    assert "".join(shown) == res.text  # the model's "t" was held back, never shown
    s = res.metrics.snapshot()
    # the model's first byte of the passage is not in the output: not counted as generated
    assert s["generated_tokens"] == len(prose)
    assert s["generated_tokens"] + s["inserted_tokens"] == len(res.text.encode())


def test_typed_quotes_leave_the_passages_to_the_model():
    loaded = scripted_loaded([(Q, SAID)])
    res = answer(loaded, Q, FILES, RewriteOptions(insert_quotes=False))
    assert res.text == SAID
    assert res.metrics.inserted_tokens == 0
    assert [c.found for c in res.citations] == [True, True]


def test_nothing_is_inserted_without_the_guard_or_a_passage():
    loaded = scripted_loaded([(Q, SAID)])
    res = answer(loaded, Q, FILES, RewriteOptions(verbatim=False))
    assert res.text == SAID and res.metrics.inserted_tokens == 0
    plain = "They are watered every second evening."
    res = answer(scripted_loaded([(Q, plain)]), Q, FILES, RewriteOptions())
    assert res.text == plain and res.metrics.inserted_tokens == 0
    assert res.metrics.stop_reason == "eos"


NOTES = (
    "# Release notes\n\n"
    "## 2.1.0\n\n"
    "- The cache now lives in the user cache dir; SPECEDIT_CACHE moves it.\n"
    "- Dropped Python 3.8.\n\n"
    "## 2.0.0\n\n"
    "- The server listens on a Unix socket (mode 0600) instead of a TCP port.\n"
    "- Backups: five per file, the oldest removed first.\n"
)


@pytest.mark.model
def test_the_05b_chooses_the_passage_and_the_program_writes_it(qwen05):
    """An exact run, inserted against typed: the same prose and the same first line of the
    passage (the model's choices), then whole lines of the file to the paragraph's end and
    the end of the answer; fewer tokens generated."""
    import re

    from specedit.app.quotes import check_citations

    question = "Where does the cache live? Quote the line that says it."
    files = [("docs/NOTES.md", NOTES)]
    typed = answer(qwen05, question, files, RewriteOptions(exact=True, insert_quotes=False))
    got = answer(qwen05, question, files, RewriteOptions(exact=True))
    fence = re.compile(r"^```[^\n]*\n", re.M)
    m = fence.search(got.text)
    assert m is not None  # (in this exact run the 0.5B quotes)
    assert got.text[: m.end()] == typed.text[: m.end()]  # the same prose and citation
    passage = got.text[m.end() :]
    assert passage.endswith("\n```") and passage.count("```") == 1  # one passage, the end
    body = passage[: -len("```")]
    assert body in NOTES and (NOTES.index(body) == 0 or NOTES[NOTES.index(body) - 1] == "\n")
    first_typed = typed.text[m.end() :].split("\n", 1)[0]
    assert first_typed and first_typed in body.split("\n", 1)[0]  # where the model began
    assert [c.found for c in check_citations(got.text, files)] == [True]
    s, t = got.metrics.snapshot(), typed.metrics.snapshot()
    assert s["inserted_tokens"] > 0 and s["generated_tokens"] < t["generated_tokens"]


def test_a_token_limit_after_the_pin_still_gets_the_passage_and_one_before_does_not():
    prose = "Every second evening, and every evening in a heat wave.\n\n[garden.md]\n```\n"
    loaded = scripted_loaded([(Q, SAID)])
    opts = RewriteOptions(draft="none", max_tokens=len(prose) + 1)  # the pin is the last
    res = answer(loaded, Q, FILES, opts)
    assert res.text == prose + PARAGRAPH + "```"
    res = answer(loaded, Q, FILES, RewriteOptions(draft="none", max_tokens=20))
    assert res.text == prose[:20] and res.metrics.inserted_tokens == 0
    assert res.metrics.stop_reason == "max_tokens"
