"""Fenced-block extraction and prompt construction (no model)."""

from __future__ import annotations

from specedit.app.prompt import (
    FILE_MARK,
    closing_fence_at,
    extract_block,
    fence_for,
    rewrite_messages,
)


def test_fence_is_longer_than_any_backtick_run():
    assert fence_for("plain") == "```"
    assert fence_for("a\n```py\nx\n```\n") == "````"
    assert fence_for("`````") == "``````"


def test_extract_closed_block_with_trailing_prose():
    raw = "x = 1\ny = 2\n```\n\nI renamed the variables as requested.\n"
    assert extract_block(raw, "```") == "x = 1\ny = 2\n"


def test_extract_unclosed_block():
    assert extract_block("x = 1\ny = 2\n", "```") == "x = 1\ny = 2\n"


def test_extract_repeated_opening_fence_with_language_tag():
    raw = "```python\nx = 1\n```\n"
    assert extract_block(raw, "```") == "x = 1\n"


def test_extract_not_prefilled_finds_first_block():
    raw = "Sure! Here it is:\n```python\nx = 1\n```\nDone."
    assert extract_block(raw, "```", prefilled=False) == "x = 1\n"
    assert extract_block("no code at all", "```", prefilled=False) is None


def test_extract_empty_output_is_none():
    assert extract_block("```\n", "```") is None
    assert extract_block("   \n", "```") is None


def test_closing_fence_only_at_line_start():
    assert closing_fence_at("a = '```'\n", "```") == -1
    assert closing_fence_at("a\n```\n", "```") == 2
    assert closing_fence_at("a\n````\n", "```") == -1  # a longer run is not this fence


def test_rewrite_messages_mark_the_file_and_prefill_the_fence():
    msgs, prefix = rewrite_messages("print(1)\n", "add a comment", "x.py")
    assert prefix == "```python\n"
    assert FILE_MARK in msgs[1]["content"]
    assert "add a comment" in msgs[1]["content"]
    msgs, prefix = rewrite_messages("a\n", "b", "x.py", full_text="a\nb\n")
    assert "Rewrite only this part" in msgs[1]["content"]
