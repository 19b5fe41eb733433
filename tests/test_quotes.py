"""The citation checker (``app.answer.quotes``): what an answer quotes, and whether it is there."""

from __future__ import annotations

from specedit.app.answer.quotes import all_found, check_citations, prose

README = (
    "# tool\n"  # 1
    "\n"  # 2
    "Models live in the user cache dir (`$TOOL_MODELS_DIR` overrides it). A catalog\n"  # 3
    "model's sha256 is checked at its first use.\n"  # 4
    "\n"  # 5
    "```bash\n"  # 6
    "tool pull NAME\n"  # 7
    "```\n"  # 8
    "The socket is 0600 in a 0700 directory.\n"  # 9
)
PROTOCOL = "# protocol\n\nEvery message is JSON-RPC 2.0 with LSP framing.\n"
FILES = [("README.md", README), ("docs/protocol.md", PROTOCOL)]


def test_a_cited_block_found_at_its_lines():
    answer = (
        "They live in the user cache dir.\n\n"
        "[README.md:L3-L4]\n"
        "```\n"
        "Models live in the user cache dir (`$TOOL_MODELS_DIR` overrides it). A catalog\n"
        "model's sha256 is checked at its first use.\n"
        "```\n"
    )
    [c] = check_citations(answer, FILES)
    assert c.found and c.file == "README.md" and c.lines == (3, 4) and c.located == (3, 4)
    assert c.quote.startswith("Models live") and c.problem == ""
    assert c.label() == "README.md:L3-L4"
    assert c.to_json() == {
        "file": "README.md",
        "lines": [3, 4],
        "quote": c.quote,
        "found": True,
        "located": [3, 4],
        "source": "README.md",
        "problem": "",
    }
    assert all_found([c])


def test_a_quote_that_starts_mid_line_and_rewraps_is_found():
    # the source breaks the line after "A catalog"; the quote joins the two lines
    answer = "[README.md:L3-L4]\n```\nA catalog model's sha256 is checked at its first use.\n```"
    [c] = check_citations(answer, FILES)
    assert c.found and c.located == (3, 4)


def test_a_paraphrase_is_marked_not_found():
    answer = "[README.md:L3]\n```\nModels are stored in $XDG_RUNTIME_DIR/specedit/models.\n```\n"
    [c] = check_citations(answer, FILES)
    assert not c.found and c.located is None and c.problem == "not in README.md"
    assert not all_found([c])


def test_a_quote_at_other_lines_than_cited_says_where_it_is():
    answer = "[README.md:L7-L8]\n```\nThe socket is 0600 in a 0700 directory.\n```\n"
    [c] = check_citations(answer, FILES)
    assert not c.found and c.located == (9, 9)
    assert c.problem == "in README.md at L9, not at the cited lines"
    assert c.label() == "README.md:L7-L8"  # as cited: the mark says where it really is


def test_without_lines_the_checker_gives_them():
    answer = "Over JSON-RPC.\n\n[docs/protocol.md]\n> Every message is JSON-RPC 2.0\n> with LSP framing.\n"
    [c] = check_citations(answer, FILES)
    assert c.found and c.lines is None and c.located == (3, 3)
    assert c.label() == "docs/protocol.md:L3"


def test_file_names_resolve_by_path_tail_and_base_name():
    quote = "```\nEvery message is JSON-RPC 2.0 with LSP framing.\n```\n"
    files = [("/home/u/proj/docs/protocol.md", PROTOCOL), ("README.md", README)]
    for name in ("protocol.md", "docs/protocol.md", "/home/u/proj/docs/protocol.md"):
        [c] = check_citations(f"[{name}:L3]\n{quote}", files)
        assert c.found and c.source == "/home/u/proj/docs/protocol.md", name
    [c] = check_citations(f"[notes.md:L3]\n{quote}", files)
    assert not c.found and c.problem == "notes.md is not a context file"


def test_ellipsis_parts_must_come_in_order():
    ok = "[README.md:L3-L4]\n```\nModels live in the user cache dir ... checked at its first use.\n```"
    [c] = check_citations(ok, FILES)
    assert c.found and c.located == (3, 4)
    bad = "[README.md]\n```\nchecked at its first use … Models live in the user cache dir\n```"
    [c] = check_citations(bad, FILES)
    assert not c.found


def test_citations_after_their_passages_and_inline_quotes():
    answer = (
        "```\ntool pull NAME\n```\n[README.md:L7]\n\n"
        "> The socket is 0600 in a 0700 directory.\n"
        "[README.md:L9]\n\n"
        'Framing is "JSON-RPC 2.0 with LSP framing" [docs/protocol.md:L3].\n'
    )
    cs = check_citations(answer, FILES)
    assert [(c.file, c.located, c.found) for c in cs] == [
        ("README.md", (7, 7), True),
        ("README.md", (9, 9), True),
        ("docs/protocol.md", (3, 3), True),
    ]
    assert cs[2].quote == "JSON-RPC 2.0 with LSP framing"


def test_uncited_passages_are_checked_against_every_file():
    answer = "Run this:\n```bash\ntool pull NAME\n```\nand this:\n```\ntool push\n```\n"
    cs = check_citations(answer, FILES)
    assert [(c.file, c.source, c.found) for c in cs] == [
        (None, "README.md", True),
        (None, None, False),
    ]
    assert cs[1].problem == "not in any context file"
    assert cs[0].label() == "README.md:L7"


def test_a_citation_that_quotes_nothing_and_an_answer_that_quotes_nothing():
    [c] = check_citations("See the README [README.md:L3] for details.\n", FILES)
    assert not c.found and c.quote == "" and c.problem == "quotes nothing"
    assert check_citations("Models live in the cache.", FILES) == []
    assert not all_found([])  # an answer without a quote is not a quoting answer


def test_markdown_links_and_checkboxes_are_not_citations():
    answer = "See [the protocol](docs/protocol.md) and [x] done."
    assert check_citations(answer, FILES) == []


def test_an_unclosed_block_at_the_end_is_still_checked():
    answer = "[README.md:L9]\n```\nThe socket is 0600 in a 0700 directory."
    [c] = check_citations(answer, FILES)
    assert c.found and c.located == (9, 9)


def test_two_occurrences_pick_the_one_at_the_cited_lines():
    text = "alpha\nbeta gamma\nalpha\nbeta gamma\n"
    [c] = check_citations("[a.txt:L3-L4]\n```\nalpha\nbeta gamma\n```", [("a.txt", text)])
    assert c.found and c.located == (3, 4)
    [c] = check_citations("[a.txt:L2-L3]\n```\nalpha\nbeta gamma\n```", [("a.txt", text)])
    assert not c.found and c.located == (1, 2)


def test_prose_is_the_answer_in_its_own_words():
    answer = (
        "They live in the user cache dir.\n\n[README.md:L3]\n```\nModels live in the user cache "
        "dir (`$TOOL_MODELS_DIR` overrides it).\n```\n> quoted too\nSee [README.md] above."
    )
    assert prose(answer) == "They live in the user cache dir.\nSee  above."
    assert prose("```\nonly a quote\n```") == ""


def test_a_bracketed_list_or_checkbox_is_the_answer_s_own_words():
    """Only a citation leaves the prose: an answer that says ``[-1, 3]`` (pluggy's toy
    example returns that list) says it in its own words, and a tag that names a context
    file with no dot or slash is a citation only where that file is given."""
    assert prose("It returns [-1, 3], as [x] marks.") == "It returns [-1, 3], as [x] marks."
    assert check_citations("It returns [-1, 3].", [("a.txt", "[-1, 3]\n")]) == []
    assert prose("See [Makefile] and [notes.md].") == "See [Makefile] and ."
    assert prose("See [Makefile] and [notes.md].", ["Makefile"]) == "See  and ."
