"""The search guard (``app.edit.search_guard``): inside a SEARCH side, only copies of the file."""

from __future__ import annotations

import numpy as np
import pytest

from specedit.app.edit import search_guard
from specedit.app.edit.search_guard import SearchGuard, search_sides

WORDS = [b"    return", b" x", b"=======", b"=======\n", b"\n=======\n", b"\n", b"def", b"quiet"]


class ByteVocab:
    """Ids 0-255 are the single bytes, then a few longer pieces (a copy can be cut in
    pieces of several lengths, as a BPE vocabulary's are)."""

    n_vocab = 256 + len(WORDS)
    eos_ids = frozenset()

    def detokenize(self, ids):
        return b"".join(bytes([i]) if i < 256 else WORDS[i - 256] for i in ids)


V = ByteVocab()
FILE = "def f(x, quiet=False):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n"


def allowed(guard: SearchGuard, text: str) -> set[bytes] | None:
    got = guard.allowed(list(text.encode()))
    return None if got is None else {V.detokenize([int(i)]) for i in got}


def test_a_side_starts_at_a_line_of_the_file_with_or_without_its_indent():
    ok = allowed(SearchGuard(V, FILE), "")
    assert {b"d", b"def", b" ", b"    return", b"r", b"\n"} <= ok
    assert b"q" not in ok and b"quiet" not in ok and b"x" not in ok  # mid-line: not a start
    assert b"z" not in ok and b"=======" not in ok  # not in the file; no empty side


def test_inside_a_side_only_the_copy_and_after_a_whole_line_the_divider():
    g = SearchGuard(V, FILE)
    assert allowed(g, "def g(x):\n    return x ") == {b"*"}  # whole lines: no stop mid-line
    ok = allowed(g, "def g(x):\n")
    assert {b" ", b"    return", b"=", b"=======", b"=======\n"} <= ok
    assert b"d" not in ok and b"\n=======\n" not in ok
    # the side's last line ends and the divider starts, in one token
    assert {b"\n", b"\n=======\n"} <= allowed(g, "def g(x):")
    assert allowed(g, "def g(x):\n===") == {b"="}  # the rest of the divider, no more
    # a side cannot stop where its line goes on
    assert b"\n=======\n" not in allowed(g, "def g(x")


def test_a_side_begun_past_its_indent_copies_the_next_lines_as_far_left():
    """getopt-isinstance: the 1.5B began its side at ``if`` (the file has it 4 columns in)
    and wrote the REPLACE side in that frame; its next search lines must be in it too (the
    guard that forced the file's indent on them had the new lines land 4 columns short)."""
    text = "def f(a):\n    if a:\n        a = [a]\n    else:\n        a = list(a)\n    return a\n"
    g = SearchGuard(V, text)
    assert allowed(g, "if a:\n") >= {b" ", b"="} and allowed(g, "if a:\n   ") == {b" "}
    assert allowed(g, "if a:\n    a = [a]\n") >= {b"e", b"="}
    assert allowed(g, "if a:\n    a = [a]\n") & {b" "} == set()  # not the file's 4 columns
    assert allowed(g, "    if a:\n    ") == {b" "}  # begun at the file's indent: as the file
    # a line indented less than the shift ends the copy there
    assert allowed(g, "a = [a]\n") == {b"=", b"=======", b"=======\n"}


def test_a_big_files_sides_start_in_its_windows():
    g = SearchGuard(V, FILE, within=[(4, 6)])  # def g and its body
    ok = allowed(g, "")
    assert b"def" in ok and b"r" in ok
    assert allowed(g, "def ") == {b"g"}  # "def f(" starts outside the windows


@pytest.mark.parametrize(
    "side", ["    return x * 2\n", "def f(x, quiet=False):\n    return x", "return x + 1\n"]
)
def test_every_cut_of_a_copy_is_allowed(side):
    g = SearchGuard(V, FILE)
    for n in range(len(side)):
        assert side.encode()[n : n + 1] in allowed(g, side[:n]), (side, n)


def test_the_replace_side_and_what_follows_are_free_and_the_next_side_is_guarded_again():
    g = SearchGuard(V, FILE)
    block = "def g(x):\n=======\ndef g(y):\n"
    assert g.allowed(list(block.encode())) is None
    done = block + ">>>>>>> REPLACE\n"
    assert g.allowed(list(done.encode())) is None
    again = done + "<<<<<<< SEARCH\n"
    assert b"z" not in allowed(g, again) and b"d" in allowed(g, again)


def test_a_side_ends_after_max_lines(monkeypatch):
    monkeypatch.setattr(search_guard, "MAX_LINES", 2)
    g = SearchGuard(V, FILE)
    assert allowed(g, "def f(x, quiet=False):\n    return x + 1\n") == {
        b"=",
        b"=======",
        b"=======\n",
    }


def test_allowed_is_a_pure_function_of_the_output():
    g = SearchGuard(V, FILE)
    a = g.allowed(list(b"def g(x):\n    re"))
    g.allowed(list(b"quiet"))
    b = g.allowed(list(b"def g(x):\n    re"))
    assert isinstance(a, np.ndarray) and np.array_equal(a, b)


def test_a_retry_guards_its_search_sides_and_a_first_answer_does_not(monkeypatch):
    """The first blocks answer is taken as the model writes it (placement reads a near copy:
    measured, a guarded first answer derailed where the model meant a line it misremembered);
    when its blocks cannot be placed, the retry (``app.edit.rounds.retry_blocks``) is guarded,
    over the file's text, unless ``verbatim`` is off (``--no-verbatim``)."""
    from scripted import scripted_loaded
    from test_edit_modes import BLOCKS, TEXT, block, blocks_answer

    from specedit.app.edit import stages
    from specedit.app.edit.rewrite import rewrite
    from specedit.app.options import RewriteOptions

    made = []

    class Recording(SearchGuard):
        def __init__(self, target, text, within=None):
            super().__init__(target, text, within)
            made.append((text, within))

    monkeypatch.setattr(stages, "SearchGuard", Recording)
    added = "GREETING = 'hello, world'\n"
    last = "def f11(x):\n    return x + 11\n"
    rules = [
        ("Your blocks could not be applied", blocks_answer(block(last, last + "\n\n" + added))),
        (BLOCKS, blocks_answer(block(added, "\n" + added))),  # the new line on both sides
    ]
    for verbatim, guards in ((True, 1), (False, 0)):
        made.clear()
        loaded = scripted_loaded(rules)
        opts = RewriteOptions(instruction="Add a constant GREETING at the end.", verbatim=verbatim)
        res = rewrite(loaded, TEXT, opts, path="m.py")
        want = TEXT.replace(last, last + "\n\n" + added)
        assert res.new_text == want  # the retry's side is a copy: the guard lets it through
        assert res.stats.snapshot()["edit_repairs"] == ["retry"]
        assert made == [(TEXT, None)] * guards


def test_a_first_answer_is_guarded_when_asked(monkeypatch):
    """``RewriteOptions.first = "guarded"``: the first blocks answer's SEARCH sides can only
    copy the file's lines, as a retry's can."""
    from scripted import scripted_loaded
    from test_edit_modes import BLOCKS, TEXT, block, blocks_answer

    from specedit.app.edit import stages
    from specedit.app.edit.rewrite import rewrite
    from specedit.app.options import RewriteOptions

    made = []

    class Recording(SearchGuard):
        def __init__(self, target, text, within=None):
            super().__init__(target, text, within)
            made.append(text)

    monkeypatch.setattr(stages, "SearchGuard", Recording)
    rules = [(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))]
    for first, guards in (("guarded", 1), ("blocks", 0)):
        made.clear()
        opts = RewriteOptions(instruction="Make f7 multiply.", first=first)
        res = rewrite(scripted_loaded(rules), TEXT, opts, path="m.py")
        assert res.new_text == TEXT.replace("return x + 7\n", "return x * 7\n")
        assert made == [TEXT] * guards


@pytest.mark.model
@pytest.mark.parametrize(
    "name",
    [
        "hmac-blocksize",  # the default suite: one file (about 20 s on 2 cores)
        pytest.param("sh-pipefail", marks=pytest.mark.long),
        pytest.param("toml-cache-ttl", marks=pytest.mark.long),
    ],
)
def test_every_search_side_the_05b_writes_under_the_guard_is_lines_of_the_file(qwen05, name):
    """Whatever the model changes, and whether or not its answer parses: under the guard each
    SEARCH side it closes is whole lines of the file, copied as they are or all moved left by
    the first line's indent."""
    from specedit.app.edit.prompts import rewrite_prompt
    from specedit.app.options import RewriteOptions
    from specedit.app.runtime.generation import run_prompt
    from specedit.bench.edit_tasks import EDIT_TASKS

    task = next(t for t in EDIT_TASKS if t.name == name)
    text = task.source()
    prompt = rewrite_prompt(qwen05.target, text, task.instruction, path=task.file, edit="blocks")
    opts = RewriteOptions(instruction=task.instruction, exact=True)
    gen = run_prompt(qwen05, prompt, opts, 256, constraint=SearchGuard(qwen05.target, text))
    closed, _ = search_sides(gen.text.encode())
    assert closed, gen.text[:300]  # at most MAX_LINES lines, then only the divider is allowed
    lines = text.splitlines(keepends=True)
    for got in closed:
        side = got.decode().splitlines(keepends=True)
        shift = [len(x) - len(x.lstrip(" \t")) for x in lines]
        found = False
        for k in range(len(lines)):
            for d in {0, shift[k]}:
                moved = [x[d:] if x.strip() else x.lstrip(" \t") for x in lines[k : k + len(side)]]
                found = found or moved == side
        assert found, got


def test_search_sides_reads_closed_and_open_sides_as_the_guard_does():
    answer = (
        "x = 1\n=======\nx = 2\n=======\ny\n>>>>>>> REPLACE\n\nprose\n"
        "<<<<<<< SEARCH\n  z = 3\n=======\n\n>>>>>>> REPLACE\n<<<<<<< SEARCH\nw"
    )
    closed, open_side = search_sides(answer.encode())
    assert closed == [b"x = 1\n", b"  z = 3\n"]  # a second divider is in the REPLACE side
    assert open_side == b"w"
    assert search_sides(answer[: answer.index("prose")].encode())[1] is None
