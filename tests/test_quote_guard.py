"""The quote guard (``app.answer.quote_guard``): inside a cited passage, only copies of the file."""

from __future__ import annotations

import numpy as np
import pytest

from specedit.app.answer.quote_guard import QuoteGuard

WORDS = [b"Water", b" the", b" tomatoes", b"```", b"```\n", b"\n```", b"\n", b" every", b"key"]
WORDS += [b"[garden", b"[other", b".\n\n[garden", b".\n\n[other"]  # citations' starts


class ByteVocab:
    """A tokenizer table: ids 0-255 are the single bytes, then a few longer pieces (so a
    copy can be made of pieces of several lengths, as a BPE vocabulary's are)."""

    n_vocab = 256 + len(WORDS)
    eos_ids = frozenset()

    def detokenize(self, ids):
        return b"".join(bytes([i]) if i < 256 else WORDS[i - 256] for i in ids)

    def ids(self, text: bytes) -> list[int]:
        return list(text)  # byte by byte


V = ByteVocab()
DOC = "# Garden\n\nWater the tomatoes every second evening.\nThe shed key hangs by the door.\n"
FILES = [("notes/garden.md", DOC), ("other.md", "Nothing about plants.\n")]


def _allowed_text(guard: QuoteGuard, text: str) -> set[bytes] | None:
    got = guard.allowed(V.ids(text.encode()))
    return None if got is None else {V.detokenize([int(i)]) for i in got}


def test_outside_a_passage_anything_goes_but_a_citation_of_no_file():
    g = QuoteGuard(V, FILES)
    everything = set(range(V.n_vocab))
    bad_start = {256 + WORDS.index(b"[garden")}  # the files are notes/garden.md and other.md
    bad_mid = {256 + WORDS.index(b".\n\n[garden")}
    for text in ("", "The tomatoes", "Every evening.\n\n", "[other.md]\nsee\n"):
        ok = g.allowed(V.ids(text.encode()))
        at_start = text == "" or text.endswith("\n")
        want = everything - bad_mid - (bad_start if at_start else set())
        assert set(np.flatnonzero(ok).tolist()) == want, text


def test_a_passage_starts_at_a_word_or_line_of_the_cited_file_only():
    g = QuoteGuard(V, FILES)
    ok = _allowed_text(g, "Every second evening.\n\n[garden.md]\n```\n")
    assert {b"W", b"Water", b"T", b"#", b"e", b" "} <= ok or {b"W", b"Water", b"T", b"#"} <= ok
    assert b"N" not in ok  # "Nothing" is in the other file
    assert b"x" not in ok and b"```" not in ok  # not in the file; no empty passage
    assert b"a" not in ok  # inside "Water": not a word's start


def test_inside_a_passage_only_the_copy_a_newline_or_the_fence():
    g = QuoteGuard(V, FILES)
    ok = _allowed_text(g, "[garden.md]\n```\nWater the")
    assert {b" ", b" tomatoes", b" t"} & ok == {b" ", b" tomatoes"}
    assert b"\n" not in ok  # two words are no evidence yet
    assert b" every" not in ok and b"```" not in ok
    three = _allowed_text(g, "[garden.md]\n```\nWater the tomatoes")
    assert b"\n" in three and b"\n```" in three  # the passage may stop mid-line
    at_line_end = _allowed_text(g, "[garden.md]\n```\nWater the tomatoes every second evening.\n")
    assert {b"T", b"```", b"```\n", b"`"} <= at_line_end
    # a newline the file does not have here: only the closing fence may follow
    off = _allowed_text(g, "[garden.md]\n```\nWater the tomatoes\n")
    assert off == {b"`", b"```", b"```\n"}  # (this vocabulary has no "``")
    assert _allowed_text(g, "[garden.md]\n```\nWater the\n``") == {b"`"}


def test_after_a_passage_more_evidence_or_the_end_and_every_block_is_a_passage():
    g = QuoteGuard(V, FILES)
    closing = "[garden.md]\n```\nThe shed key hangs by the door.\n```"
    assert _allowed_text(g, closing) == {b"\n"}  # (and an end token, where there is one)
    # a blank line, another citation of a context file, or the end: no more prose
    assert _allowed_text(g, closing + "\n") == {b"\n", b"[", b"[other"}
    # a block no citation names is a passage too, a copy of any of the files
    uncited = _allowed_text(g, "So:\n```\nNothing about plants.")
    assert uncited == {b"\n"} | ({b"\n", b"\n```"})
    # a second passage, with lines in its citation, is guarded again
    again = _allowed_text(g, closing + "\n\n[garden.md:L4]\n```\nThe shed")
    assert again is not None and b" " in again and b"x" not in again


def test_a_citation_that_names_no_file_lets_the_passage_copy_any_file():
    g = QuoteGuard(V, FILES)
    ok = _allowed_text(g, "[plants.md]\n```\n")
    assert {b"W", b"N"} <= ok
    assert _allowed_text(g, "[garden]\n```\nNothing about") is not None


@pytest.mark.parametrize("text", ["Water the tomatoes", "The shed key hangs"])
def test_every_token_of_a_copy_is_allowed_whichever_way_it_is_cut(text):
    g = QuoteGuard(V, FILES)
    head = b"[garden.md]\n```\n"
    for i in range(len(text)):
        ok = g.allowed(V.ids(head + text[:i].encode()))
        assert ok is not None and text.encode()[i] in ok.tolist()
    assert isinstance(g.allowed(V.ids(head)), np.ndarray)


def test_a_citation_line_names_a_context_file_as_the_prompt_shows_it():
    g = QuoteGuard(V, FILES)  # relative names, shown as given
    assert _allowed_text(g, "Yes.\n\n[") == {b"n", b"o"}
    assert _allowed_text(g, "Yes.\n\n[notes/gar") == {b"d"}
    assert _allowed_text(g, "Yes.\n\n[notes/garden.md") == {b"]"}
    assert _allowed_text(g, "Yes.\n\n[notes/garden.md]") == {b"\n", b"\n```"}
    assert _allowed_text(g, "Yes.\n\n[other.md]\n") == {b"`", b"```", b"```\n"}
    assert _allowed_text(g, "[plants") is None  # no file's name begins so: left alone
    assert 256 + WORDS.index(b"[other") in g.allowed(V.ids(b"Yes.\n\n")).nonzero()[0]
    far = QuoteGuard(V, [("/srv/x/notes/garden.md", DOC)])  # outside the working directory
    assert _allowed_text(far, "[") == {b"g"}
    mid = g.allowed(V.ids(b"See [garden.md] for"))  # not at a line's start: not a citation
    assert mid.sum() == V.n_vocab - 1  # only a token that starts a line with a wrong one


def test_a_passage_ends_after_max_lines():
    from specedit.app.answer import quote_guard

    many = "".join(f"line {i}\n" for i in range(20))
    g = QuoteGuard(V, [("log.txt", many)])
    head = "[log.txt]\n```\n" + "".join(f"line {i}\n" for i in range(quote_guard.MAX_LINES))
    assert _allowed_text(g, head) == {b"`", b"```", b"```\n"}
    one_less = head[: -len(f"line {quote_guard.MAX_LINES - 1}\n")]
    assert b"l" in _allowed_text(g, one_less)  # a line fewer: the copy may go on


def test_a_passage_never_copies_a_fence_line_of_its_file():
    readme = "Set it up:\n```lua\nrequire('x').setup()\n```\nThen restart.\n"
    g = QuoteGuard(V, [("README.md", readme)])
    start = _allowed_text(g, "[README.md]\n```\n")
    assert b"`" not in start and b"```" not in start and b"r" in start
    # at the file's fence the passage can only end
    assert _allowed_text(g, "[README.md]\n```\nSet it up:\n") == {b"`", b"```", b"```\n"}
    assert _allowed_text(g, "[README.md]\n```\nrequire('x').setup()\n") == {b"`", b"```", b"```\n"}


def test_a_begun_closing_fence_finishes_one_backtick_at_a_time_or_at_once():
    """A vocabulary that writes backticks one by one can close a passage too (the scripted
    model does; a begun fence once offered only its whole rest)."""
    g = QuoteGuard(V, FILES)
    head = "[notes/garden.md]\n```\nWater the tomatoes every second evening.\n"
    assert _allowed_text(g, head + "`") == {b"`"}  # no "``" piece in this vocabulary
    assert _allowed_text(g, head + "``") == {b"`"}
    assert _allowed_text(g, head + "```") is not None  # closed: its line ends or the answer


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
@pytest.mark.parametrize(
    "qid",
    [
        "notes",  # a short document: the default suite (a few seconds of prefill)
        pytest.param("heapq-author", marks=pytest.mark.long),  # 12 KB: ~40 s on 2 cores
        pytest.param("chg-python2", marks=pytest.mark.long),
    ],
)
def test_every_passage_the_05b_writes_is_a_copy_of_the_file_it_cites(qwen05, qid):
    """Whatever the model chooses to say: each closed fenced block of a guarded answer is
    verbatim text of the context file its citation line names (of some context file when
    none does), and every citation line names a context file."""
    import re

    from specedit.app.answer.answer import answer
    from specedit.app.answer.quotes import _resolve
    from specedit.app.options import RewriteOptions
    from specedit.bench.rag_tasks import load_questions

    if qid == "notes":
        question = "Where does the cache live? Quote the line that says it."
        files = {"docs/NOTES.md": NOTES}
    else:
        q = next(x for x in load_questions() if x.id == qid)
        question, files = q.question, dict(q.context_files())
    opts = RewriteOptions(exact=True, max_tokens=96)
    res = answer(qwen05, question, list(files.items()), opts, style="quote")
    blocks = re.findall(r"(?:^\[([^\]\n]+)\]\n)?^```[^\n]*\n(.*?)^```$", res.text, re.M | re.S)
    assert blocks  # (in these exact runs the 0.5B quotes)
    for cite, body in blocks:
        label = _resolve(cite, list(files)) if cite else None
        assert (not cite) or label is not None, cite
        sources = [files[label]] if label else list(files.values())
        assert any(body in text for text in sources), body
    outside = re.sub(r"^```[^\n]*\n.*?^```$", "", res.text, flags=re.M | re.S)  # the prose
    for line in re.findall(r"^\[([^\]\n]+)\]$", outside, re.M):
        assert _resolve(line, list(files)) is not None, line


def test_a_passage_may_start_at_a_name_inside_its_markup():
    doc = "Call ``default(obj)`` to convert; see (shed) too.\nx``y\n"
    g = QuoteGuard(V, [("api.md", doc)])
    ok = _allowed_text(g, "[api.md]\n```\n")
    assert {b"d", b"s", b"`", b"(", b"C"} <= ok  # after `` or ( as well as at the marks
    assert b"y" not in ok  # x``y: the marks follow no space, so y starts no word
    assert _allowed_text(g, "[api.md]\n```\ndefault(obj)`` to convert;") >= {b"\n"}


def test_with_a_question_a_passage_starts_on_the_lines_that_answer_it():
    doc = (
        "# Notes\n\nThe kettle is blue.\nPens are in the drawer.\nMilk goes in the fridge.\n"
        "Socks dry on the line.\nThe cat eats at six.\nBread is in the tin.\n"
    )
    files = [("notes.md", doc)]
    free = _allowed_text(QuoteGuard(V, files), "[notes.md]\n```\n")
    asked = QuoteGuard(V, files, "When does the cat eat?")
    ok = _allowed_text(asked, "[notes.md]\n```\n")
    assert {b"#", b"T", b"P", b"M"} <= free
    assert b"T" in ok and b"c" in ok  # "The cat eats at six." and its words
    assert not {b"#", b"P", b"M"} & ok  # the title, lines far from the cat's
    assert _allowed_text(asked, "[notes.md]\n```\nThe ") == {b"c"}  # not "The kettle"
    nothing = QuoteGuard(V, files, "Zebra?")  # no word shared with the file: anywhere
    assert _allowed_text(nothing, "[notes.md]\n```\n") == free


def test_a_passage_ends_with_its_paragraph():
    doc = "Intro line.\n\nFirst fact, part one\ncontinues here.\n\nAnother paragraph.\n"
    g = QuoteGuard(V, [("f.md", doc)])
    head = "[f.md]\n```\nFirst fact, part one\ncontinues here.\n"
    assert _allowed_text(g, head) == {b"`", b"```", b"```\n"}  # the blank line ends it
    assert b"c" in _allowed_text(g, "[f.md]\n```\nFirst fact, part one\n")


INSERT_DOC = (
    "# Garden\n\nWater the tomatoes every second evening;\nin a heat wave, every evening.\n\n"
    "The shed key hangs by the door.\nThe hose is in the shed.\n"
)


def test_an_answer_is_completed_once_its_first_words_pin_a_passage_down():
    g = QuoteGuard(V, [("garden.md", INSERT_DOC)])
    answer = "Every second evening.\n\n[garden.md]\n```\n"
    shed = "The shed key hangs by the door.\nThe hose is in the shed.\n```"
    water = "Water the tomatoes every second evening;\nin a heat wave, every evening.\n```"

    def done(text: str) -> str | None:
        got = g.completed(text.encode())
        return None if got is None else got.decode()

    assert done(answer) is None  # no word of the passage yet
    assert done("Every second") is None  # no passage at all
    assert done(answer + "The") is None  # two lines start "The"
    assert done(answer + "The s") == answer + shed  # one place: the shed key's paragraph
    assert done(answer + "W") == answer + water  # the whole paragraph, two lines
    assert done(answer + "hangs") == answer + shed  # from the start of the line it starts on
    # a passage starts on the line the model started it on, not at its paragraph's start
    assert done(answer + "in a heat wave,") == answer + "in a heat wave, every evening.\n```"
    whole = answer + "Water the tomatoes every second evening;\nin a heat wave, every evening.\n"
    assert done(whole) == done(whole + "``") == done(whole + "```\nMore.") == answer + water
    # closed by the model on words that do not pin it (twice in the file): as it closed it
    g = QuoteGuard(V, [("garden.md", INSERT_DOC + "\nThe shed key is old.\n")])
    said = answer + "The shed key\n```"
    assert g.completed(said.encode()) == said.encode()
    assert g.completed((said + "\n\nand more").encode()) == said.encode()  # it ends there
    assert g.completed((answer + "The shed key").encode()) is None  # open: not yet


def test_a_passage_found_twice_with_the_same_paragraph_is_pinned():
    doc = 'def a():\n    """Return x.\n    Or y."""\n\ndef b():\n    """Return x.\n    Or y."""\n'
    g = QuoteGuard(V, [("m.py", doc)])
    answer = "It returns x.\n\n[m.py]\n```\n"
    got = g.completed((answer + '    """Ret').encode())
    assert got == (answer + '    """Return x.\n    Or y."""\n```').encode()


def test_what_an_answer_is_completed_with_does_not_depend_on_where_the_text_stops():
    """Whichever prefix of the model's copy the check sees (a block of accepted tokens ends
    anywhere), the completed answer is the same."""
    g = QuoteGuard(V, [("garden.md", INSERT_DOC)], "Where is the shed key?")
    answer = "By the door.\n\n[garden.md]\n```\nThe shed key hangs by the door.\nThe hose```"
    head = answer.index("```\n") + 4
    done = set()
    for cut in range(head, len(answer) + 1):
        got = g.completed(answer[:cut].encode())
        if got is not None:
            done.add(got.decode())
    whole = "The shed key hangs by the door.\nThe hose is in the shed.\n```"
    assert done == {answer[:head] + whole}


def test_with_a_question_the_program_chooses_the_passage_when_it_opens():
    g = QuoteGuard(V, [("garden.md", INSERT_DOC)], "Where does the shed key hang?")
    answer = "By the door.\n\n[garden.md]\n```\n"
    shed = "The shed key hangs by the door.\nThe hose is in the shed.\n```"
    assert g.completed(answer.encode()).decode() == answer + shed  # no word of it typed yet
    # whatever the model began, the choice is the program's (the same for every block size)
    assert g.completed((answer + "Water the").encode()).decode() == answer + shed
    assert g.completed(b"By the door.") is None  # no passage yet


def test_the_evidence_is_about_the_question_not_only_the_answers_words():
    """An answer whose words come from another paragraph (recorded: models "under
    ``$XDG_CACHE_HOME``", the socket's paragraph of another file) gets the passage that
    holds a word of the question; with no such window, the answer's words choose."""
    files = [
        ("README.md", "# Models\n\nModels live in the user cache dir.\n"),
        ("protocol.md", "# Socket\n\nThe socket sits under XDG_CACHE_HOME, else ~/.cache.\n"),
    ]
    answer = b"Under XDG_CACHE_HOME, else ~/.cache."
    got = QuoteGuard(V, files, "Where are the models stored?").evidence(answer)
    assert got == b"\n\n[README.md]\n```\nModels live in the user cache dir.\n```"
    got = QuoteGuard(V, files, "Where is it?").evidence(answer)  # no word of the question
    assert got.startswith(b"\n\n[protocol.md]\n```\nThe socket sits")
