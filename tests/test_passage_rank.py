"""Finding the passage first (``app.answer.passage_rank``): which lines may hold an answer."""

from __future__ import annotations

from specedit.app.answer.passage_rank import relevant_lines, stem, terms

DOC = "\n".join(
    [
        "# Kitchen notes",  # 0
        "",
        "The kettle is blue and the kettle is old.",  # 2
        "Pens are in the drawer by the kettle.",
        "Milk goes in the fridge.",  # 4
        "Socks dry on the line.",
        "The cat eats at six; the cat sleeps at nine.",  # 6
        "Bread is in the tin.",
        "The kettle boils in a minute.",  # 8
        "Spoons are in the drawer.",
        "The dog eats at seven.",  # 10
    ]
)


def test_words_match_by_stem_without_function_words():
    assert stem("Raising") == stem("raises") == stem("raise") == "rais"
    assert stem("Serialization") == stem("serialize")[:6]
    assert terms("What does the cat eat?") == ["cat", "eat"]


def test_the_window_with_the_rare_words_comes_first_with_the_line_before_it():
    got = relevant_lines(DOC, "When does the cat eat?", top=1)
    assert got == [5, 6, 7, 8]  # the window from the cat's line, and the line before
    # "eat" is on two lines, "cat" on one: the cat's window wins over the dog's
    two = relevant_lines(DOC, "When does the cat eat?", top=2)
    assert {6, 10} <= set(two)


def test_kept_windows_do_not_overlap_and_come_in_file_order():
    got = relevant_lines(DOC, "Where is the kettle?", top=3)
    assert got == sorted(set(got))
    assert {2, 3, 8} <= set(got)  # every kettle line, not three windows around one


def test_a_query_that_shares_no_word_with_the_file_finds_nothing():
    assert relevant_lines(DOC, "Zebra?") == [] and relevant_lines("", "cat") == []


def test_the_best_window_starts_at_words_and_a_tie_is_no_choice():
    from specedit.app.answer.passage_rank import best_window

    doc = "# Notes\n\n\nThe kettle is blue.\nThe cat eats at six.\n\nBread is in the tin.\n"
    score, line = best_window(doc, "When does the cat eat?")
    assert line == 4 and score > 0  # "The cat eats at six."
    assert best_window(doc, "Zebra?") is None  # no word shared
    twice = "The cat eats at six.\n\n\n\nThe cat eats at six.\n"
    assert best_window(twice, "When does the cat eat?") is None  # two windows alike
    # evidence after an answer has no first words of the model's to choose: the first
    assert best_window(twice, "When does the cat eat?", first_of_ties=True)[1] == 0
    assert best_window("\n\nThe kettle is blue.\n", "kettle")[1] == 2  # not the blank line


def test_a_name_of_code_is_one_word_not_an_english_stem():
    """``SPECEDIT_MODELS_DIR`` is not ``specedit`` (the first six letters of a stem):
    the answer "set `$SPECEDIT_MODELS_DIR`" finds the line that names it, not every line
    that says specedit."""
    assert stem("SPECEDIT_MODELS_DIR") == "specedit_models_dir" != stem("specedit")
    assert stem("maxBytes") == "maxbytes" and stem("utf8") == "utf8"
    assert stem("Settings") == stem("setting")  # English words are still stemmed
    doc = "specedit reads files.\nspecedit writes files.\nSet SPECEDIT_MODELS_DIR to move them.\n"
    from specedit.app.answer.passage_rank import best_window

    assert best_window(doc, "Which variable? SPECEDIT_MODELS_DIR", span=1)[1] == 2


def test_windows_of_several_files_are_weighed_by_one_rarity():
    """A word's weight counts its lines in every file compared (``corpus``): a long file's
    windows do not outscore a short one's for being long."""
    from specedit.app.answer.passage_rank import best_window

    short = "The cache holds 8 files.\n"
    long_ = "\n".join(["The cache is a folder."] + [f"line {i} of notes" for i in range(200)])
    q = "How many files does the cache hold?"
    alone = best_window(long_, q)[0], best_window(short, q)[0]
    assert alone[0] > alone[1]  # each weighed alone, the long file's "cache" weighs more
    both = [short, long_]
    assert best_window(short, q, corpus=both)[0] > best_window(long_, q, corpus=both)[0]


def test_a_window_about_the_question_wins_over_one_with_more_of_the_answers_words():
    """``about``: the answer's own words may come from another paragraph (recorded: the 1.5B
    said models sit under ``$XDG_CACHE_HOME``, the socket's paragraph); the window must
    hold a word of the question, where one does, and None where none does."""
    from specedit.app.answer.passage_rank import best_window

    doc = "\n".join(
        [
            "Models live in the user cache dir.",  # 0
            "",
            "",
            "The socket sits in XDG_RUNTIME_DIR, else XDG_CACHE_HOME, else ~/.cache.",  # 3
        ]
    )
    q = "Where are the models stored?"
    query = q + "\nUnder XDG_RUNTIME_DIR or XDG_CACHE_HOME, else ~/.cache."
    assert best_window(doc, query, span=1)[1] == 3  # the answer's words alone
    assert best_window(doc, query, span=1, about=q)[1] == 0
    assert best_window(doc, "XDG_CACHE_HOME", span=1, about="What about pens?") is None


def test_the_best_window_starts_where_its_sentence_starts():
    """A window whose first line goes on with the sentence of the line before it (lower case,
    after a line that ends no sentence) starts at that line: a quote of the framing rule
    starts at ``* **Framing:**``, not at ``  of UTF-8 JSON.``; at most ``span - 1`` back."""
    from specedit.app.answer.passage_rank import best_window

    doc = "\n".join(
        [
            "Sockets are private.",  # 0
            "* **Framing:** LSP framing, a header followed by N bytes",  # 1
            "  of UTF-8 JSON. Other headers are ignored.",  # 2
            "Limits: a header is at most 8 KiB.",  # 3
        ]
    )
    assert best_window(doc, "UTF-8 JSON headers ignored", span=1)[1] == 2  # none back
    got = best_window(doc, "UTF-8 JSON headers ignored", span=2)
    assert got is not None and got[1] == 1
    assert best_window(doc, "8 KiB limits", span=2)[1] == 3  # after a sentence's end
