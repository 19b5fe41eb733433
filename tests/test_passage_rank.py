"""Finding the passage first (``app.passage_rank``): which lines may hold an answer."""

from __future__ import annotations

from specedit.app.passage_rank import relevant_lines, stem, terms

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
    from specedit.app.passage_rank import best_window

    doc = "# Notes\n\n\nThe kettle is blue.\nThe cat eats at six.\n\nBread is in the tin.\n"
    score, line = best_window(doc, "When does the cat eat?")
    assert line == 4 and score > 0  # "The cat eats at six."
    assert best_window(doc, "Zebra?") is None  # no word shared
    twice = "The cat eats at six.\n\n\n\nThe cat eats at six.\n"
    assert best_window(twice, "When does the cat eat?") is None  # two windows alike
    # evidence after an answer has no first words of the model's to choose: the first
    assert best_window(twice, "When does the cat eat?", first_of_ties=True)[1] == 0
    assert best_window("\n\nThe kettle is blue.\n", "kettle")[1] == 2  # not the blank line
