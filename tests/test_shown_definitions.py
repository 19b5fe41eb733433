"""``RewriteOptions.first = "numbered"`` (app/edit/rewrite.py ``shown_definitions``, the blocks
prompt of app/edit/prompts.py): the definitions the instruction names are shown again after it
with their line numbers, in the first blocks prompt only; the file's prefix is shared, the
numbers are never part of an answer's placement, and nothing is shown for a definition too long
or an instruction that names none."""

from __future__ import annotations

from scripted import scripted_loaded
from test_edit_modes import BLOCKS, block, blocks_answer
from toy import ToyModel

from specedit.app.edit.prompts import numbered, rewrite_prompt
from specedit.app.edit.rewrite import SHOWN_TOKENS, rewrite
from specedit.app.options import RewriteOptions

TEXT = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))
SHOWN = "The lines of `f7` in m.py, each after its line number"


def run(rules, instruction, text=TEXT):
    loaded = scripted_loaded(rules)
    opts = RewriteOptions(instruction=instruction, verbatim=False, first="numbered")
    return rewrite(loaded, text, opts, path="m.py"), loaded.target.prompts


def test_numbered_lines_are_one_based_and_keep_the_lines_as_they_are():
    lines = TEXT.splitlines(keepends=True)
    assert numbered(lines, 28, 30) == "29: def f7(x):\n30:     return x + 7\n"


def test_the_shown_lines_come_after_the_instruction_and_share_the_files_prefix():
    t = ToyModel(256)
    plain = rewrite_prompt(t, TEXT, "In f7, multiply.", path="m.py", edit="blocks")
    shown = rewrite_prompt(
        t, TEXT, "In f7, multiply.", path="m.py", edit="blocks", shown=[("f7", 28, 30)]
    )
    assert shown.prefix_end == plain.prefix_end > 0
    assert shown.ids[: shown.prefix_end] == plain.ids[: plain.prefix_end]
    user = shown.chat.messages[-1][1]
    assert user.index("Instruction: In f7") < user.index(SHOWN) < user.index(BLOCKS)
    assert "29: def f7(x):\n30:     return x + 7\n" in user
    assert ("shown" in {lab for _, _, lab in shown.spans}) and shown.part == plain.part


def test_the_named_definition_is_shown_in_the_first_prompt_and_the_answer_places():
    want = TEXT.replace("return x + 7\n", "return x * 7\n")
    rules = [(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))]
    res, prompts = run(rules, "In f7, multiply instead of adding.")
    assert res.status == "ok" and res.new_text == want and res.suspect is None
    assert len(prompts) == 1 and SHOWN in prompts[0] and "29: def f7(x):" in prompts[0]


def test_nothing_is_shown_when_nothing_is_named_or_it_is_too_long():
    rules = [(BLOCKS, blocks_answer(block("    return x + 7\n", "    return x * 7\n")))]
    _, prompts = run(rules, "Multiply instead of adding where seven is added.")
    assert "each after its line number" not in prompts[0]
    body = "".join(f"    y{i} = x + {i}\n" for i in range(SHOWN_TOKENS))
    long = TEXT.replace("def f7(x):\n", "def f7(x):\n" + body)
    _, prompts = run(rules, "In f7, multiply instead of adding.", text=long)
    assert "each after its line number" not in prompts[0]


def test_a_class_is_not_shown_its_method_is():
    text = (
        "class C:\n    def f7(self, x):\n        return x + 7\n\n    def g(self):\n        pass\n"
    )
    rules = [(BLOCKS, blocks_answer(block("        return x + 7\n", "        return x * 7\n")))]
    _, prompts = run(rules, "In C, multiply instead of adding.", text=text)
    assert "each after its line number" not in prompts[0]
    res, prompts = run(rules, "In C.f7, multiply instead of adding.", text=text)
    assert "The lines of `C.f7` in m.py" in prompts[0] and "2:     def f7(self, x):" in prompts[0]
    assert res.new_text == text.replace("x + 7", "x * 7")
