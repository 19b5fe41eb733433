"""Reading the fenced block from the stream, and prompt construction (no model)."""

from __future__ import annotations

import pytest
from toy import ToyModel

from specedit.app.answer.prompts import (
    QUOTE_EXAMPLE,
    SYSTEM_ANSWER,
    SYSTEM_QUOTE,
    answer_messages,
    answer_prompt,
)
from specedit.app.answer.quotes import all_found, check_citations
from specedit.app.edit import edits
from specedit.app.edit.prompts import rewrite_messages, rewrite_prompt
from specedit.app.runtime.prompt import FILE_MARK, shown_paths
from specedit.app.runtime.stream import FencedText, closing_fence_at, fence_for


def _read(raw: str, fence: str = "```", pieces: int = 1) -> FencedText:
    f = FencedText(fence)
    step = max(1, len(raw) // pieces)
    for i in range(0, len(raw), step):
        f.feed(raw[i : i + step])
    return f


def test_fence_is_longer_than_any_backtick_run():
    assert fence_for("plain") == "```"
    assert fence_for("a\n```py\nx\n```\n") == "````"
    assert fence_for("`````") == "``````"


@pytest.mark.parametrize("pieces", [1, 3, 40])  # whole, in chunks, a character at a time
def test_closed_block_with_trailing_prose(pieces):
    f = _read("x = 1\ny = 2\n```\n\nI renamed the variables as requested.\n", pieces=pieces)
    assert f.closed and f.body() == "x = 1\ny = 2\n"
    assert f.through_fence() == "x = 1\ny = 2\n```"


def test_unclosed_block_is_not_closed_and_keeps_its_text():
    f = _read("x = 1\ny = 2")
    assert not f.closed
    assert f.body() == "x = 1\ny = 2"
    assert f.partial_body() == "x = 1\n"  # only complete lines preview


@pytest.mark.parametrize("pieces", [1, 5, 30])
def test_repeated_opening_fence_with_or_without_a_tag_is_not_the_body(pieces):
    for raw in ("```python\nx = 1\n```\n", "```\nx = 1\n```\n"):
        f = _read(raw, pieces=pieces)
        assert f.closed and f.body() == "x = 1\n", raw


def test_a_fence_arriving_alone_does_not_end_the_stream_early():
    f = FencedText("```")
    assert not f.feed("```")  # it may be the repeated opening fence, a tag may follow
    assert not f.feed("python\n")
    assert not f.feed("x = 1\n")
    assert f.feed("```\n")
    assert f.body() == "x = 1\n"


def test_empty_output_is_none():
    assert _read("```\n```\n").body() is None
    assert _read("   \n").body() is None


def test_closing_fence_only_at_line_start():
    assert closing_fence_at("a = '```'\n", "```") == -1
    assert closing_fence_at("a\n```\n", "```") == 2
    assert closing_fence_at("a\n````\n", "```") == -1  # a longer run is not this fence
    f = _read("s = '''\n````\n'''\n```\n")  # a longer run inside the body does not close it
    assert f.body() == "s = '''\n````\n'''\n"


def test_rewrite_messages_mark_the_file_and_prefill_the_fence():
    msgs, prefix = rewrite_messages("print(1)\n", "add a comment", "x.py")
    assert prefix == "```python\n"
    assert FILE_MARK in msgs[1]["content"]
    assert "add a comment" in msgs[1]["content"]
    msgs, prefix = rewrite_messages("a\n", "b", "x.py", full_text="a\nb\n")
    assert "Rewrite only this part" in msgs[1]["content"]


def test_prompt_object_knows_its_parts():
    text = "a = 1\nb = 2\nc = 3\n"
    t = ToyModel(256)
    whole = rewrite_prompt(t, text, "rename a", path="x.py")
    assert whole.fence == "```" and whole.part == text and whole.region is None
    assert whole.part_tokens == len(text) and whole.prefix_end == whole.part_end
    region = rewrite_prompt(t, text, "rename a", path="x.py", region=(1, 2))
    assert region.part == "b = 2\n" and region.part_tokens == len("b = 2\n")
    # the whole file comes first: both prompts share the prefix up to its end
    assert region.ids[: region.prefix_end] == whole.ids[: whole.prefix_end]
    assert region.part_end > region.prefix_end
    with pytest.raises(Exception, match="region 3:9 is outside"):
        rewrite_prompt(t, text, "x", region=(2, 9))


def test_a_prompt_names_files_the_same_wherever_they_live(tmp_path, monkeypatch):
    """Issue 21: an absolute tmp path (pytest-114/...) in the prompt made another prompt,
    and greedy another text, in every run. Files are named relative to the working
    directory when inside it, else by the shortest tail no other file shares."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    inside = str(tmp_path / "src" / "m.py")
    names = shown_paths([inside, "/x/one/README.md", "/y/two/README.md", "/z/n.md", None])
    assert names == ["src/m.py", "one/README.md", "two/README.md", "n.md", None]
    t = ToyModel(256)
    here = rewrite_prompt(t, "a = 1\n", "rename a", path="/a/pytest-1/m.py")
    there = rewrite_prompt(t, "a = 1\n", "rename a", path="/b/pytest-114/m.py")
    assert here.ids == there.ids
    msgs = answer_messages("q?", [("/a/pytest-7/notes.md", "x\n")])
    assert "Document notes.md:" in msgs[-1]["content"] and "pytest-7" not in msgs[-1]["content"]
    # the checker still finds a quote cited by the name the prompt used
    cites = check_citations("[notes.md]\n```\nx\n```\n", [("/a/pytest-7/notes.md", "x\n")])
    assert [c.found for c in cites] == [True]


DOCS = [("README.md", "Models live in the user cache dir.\n"), ("docs/p.md", "Framing: LSP.\n")]


def test_the_quote_prompt_asks_for_cited_verbatim_passages_after_the_documents():
    msgs = answer_messages("Where are models?", DOCS)
    assert msgs[0] == {"role": "system", "content": SYSTEM_QUOTE}
    assert "[FILE]" in SYSTEM_QUOTE and "exactly" in SYSTEM_QUOTE
    # one exchange in the format comes first, and its answer passes the checker
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    ex_file, ex_text, ex_question, ex_answer = QUOTE_EXAMPLE
    assert ex_question in msgs[1]["content"] and msgs[2]["content"] == ex_answer
    assert all_found(check_citations(ex_answer, [(ex_file, ex_text)]))
    user = msgs[3]["content"]
    # the files first, in order, then the question and the format again
    assert user.index("Document README.md") < user.index("Document docs/p.md")
    assert user.index("Document docs/p.md") < user.index("Question: Where are models?")
    assert user.rstrip().endswith("each under its [file] citation.")
    # the example shares no words with the question's answer
    assert "user cache" not in repr(QUOTE_EXAMPLE)


def test_the_free_style_is_the_earlier_prompt_and_other_styles_are_refused():
    msgs = answer_messages("Where are models?", DOCS, "free")
    assert msgs[0]["content"] == SYSTEM_ANSWER
    assert msgs[1]["content"].endswith("\nWhere are models?")
    with pytest.raises(ValueError, match="unknown answer style 'terse'"):
        answer_messages("q", DOCS, "terse")


def test_answer_prompt_spans_are_the_files_and_its_prefix_ends_after_them():
    t = ToyModel(256)
    a = answer_prompt(t, "Where are models?", DOCS)
    b = answer_prompt(t, "How are messages framed?", DOCS)
    got = [(bytes(t.detokenize(a.ids[s:e])).decode(), lab) for s, e, lab in a.spans]
    assert [g for g, _ in got] == [text for _, text in DOCS]
    assert a.prefix_end == a.spans[-1][1] and a.fence is None
    # two questions about the same files share the prompt up to the files' end
    assert a.ids[: a.prefix_end] == b.ids[: b.prefix_end] and a.prefix_end == b.prefix_end
    free = answer_prompt(t, "Where are models?", DOCS, "free")
    assert free.ids != a.ids and len(free.spans) == 2


def test_room_and_fit_are_measured_in_one_place():
    """``Prompt.room``: the output left after the prompt; ``Prompt.fits``: the prompt and a
    copy of its part (or a given answer length) with ``FIT_MARGIN`` to spare."""
    from specedit.app.runtime.prompt import FIT_MARGIN, Prompt

    p = Prompt(tuple(range(100)), ((10, 40, "file"),))
    assert p.room(1000) == 899 and p.part_tokens == 30
    assert p.fits(100 + 30 + FIT_MARGIN) and not p.fits(100 + 30 + FIT_MARGIN - 1)
    assert p.fits(100 + 5 + FIT_MARGIN, out=5) and not p.fits(120, out=30)


def test_every_prompt_keeps_its_chat_form_for_a_chat_only_engine():
    """``Prompt.chat``: the messages with the user's text in place of its marks, and the
    opening the token prompt pre-fills (``app.runtime.remote_engine`` sends these to a chat API)."""
    t = ToyModel()
    text = "x = 1\n"
    p = rewrite_prompt(t, text, "Set x to 2.", path="m.py", edit="blocks")
    (sys_role, _), (user_role, user) = p.chat.messages
    assert (sys_role, user_role) == ("system", "user")
    assert text in user and "Set x to 2." in user and "\x00" not in user
    assert p.chat.opening == p.fence + "python\n" + edits.PREFILL
    # the token prompt is the same messages rendered, opened the same way
    rendered = t.chat_prompt([{"role": r, "content": c} for r, c in p.chat.messages])
    assert list(p.ids) == t.tokenize(rendered + p.chat.opening)
    q = answer_prompt(t, "Why?", [("notes.md", "Because.\n")])
    assert q.chat.opening == "" and "Because.\n" in q.chat.messages[-1][1]
