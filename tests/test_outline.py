"""A big file's outline and what a locate answer names (app.code.outline; no model)."""

from __future__ import annotations

from specedit.app.code.outline import outline, read_located, widen
from specedit.app.code.source import Source

TEXT = (
    "import os\n"
    "from sys import argv\n"
    "\n"
    '"""Not a statement worth showing."""\n'
    "LIMIT = 10\n"
    "\n"
    "\n"
    "class Formatter(object):\n"
    "    def __init__(self, prog,\n"
    "                 width=None):\n"
    "        # a comment before the body\n"
    "        self.prog = prog\n"
    "\n"
    "    @property\n"
    "    def width(self):\n"
    "        return 80\n"
    "\n"
    "\n"
    "def main():\n"
    "    return Formatter('x')\n"
)


def test_the_outline_shows_imports_assignments_and_signatures_with_their_lines():
    out = outline(Source(TEXT, "f.py"))
    assert out.text == (
        "1-1: import os\n"
        "2-2: from sys import argv\n"
        "5-5: LIMIT = 10\n"
        "8-16: class Formatter(object):\n"
        "9-12:     def __init__(self, prog, width=None):\n"  # joined on one line
        "14-16:     def width(self):\n"  # from its decorator on
        "19-20: def main():\n"
    )
    # no grammar: every OUTLINE_STRIDE-th non-blank line
    plain = outline(Source("".join(f"line {i}\n" for i in range(45)), "notes.txt"))
    assert [e.start for e in plain.entries] == [0, 20, 40]


def test_a_locate_answer_names_ranges_with_or_without_numbers():
    out = outline(Source(TEXT, "f.py"))
    assert read_located("9-12:     def __init__(self, prog, width=None):\n", out) == [(8, 12)]
    assert read_located("def main():\n", out) == [(18, 20)]  # no numbers: the text
    assert read_located("    def __init__(self, pr\n", out) == [(8, 12)]  # cut short
    assert read_located("19-20\n", out) == [(18, 20)]
    assert read_located("3-4\n", out) == [(2, 4)]  # a bare range that is no entry
    # a class and its method: the method; two named places: both, sorted
    assert read_located("8-16: class Formatter(object):\n14-16: x\n", out) == [(13, 16)]
    assert read_located("19-20: def main():\n1-1: import os\n", out) == [(0, 1), (18, 20)]
    assert read_located("nothing like it\n999-1000\n", out) == []
    # numbers that do not go with the text: the text decides
    assert read_located("14-16: def main():\n", out) == [(18, 20)]


def test_a_located_line_with_the_change_made_or_a_nested_function_names_its_definition():
    text = TEXT + (
        "\n\ndef parse(args, limit=24, strict=False):\n"
        "    def identity(x):\n"
        "        return x\n"
        "    return [identity(a) for a in args][:limit]\n"
    )
    out = outline(Source(text, "f.py"))
    # the signature copied with the new default, beside the wrong numbers: the text decides
    assert read_located("9-12: def parse(args, limit=30, strict=False):\n", out) == [(22, 26)]
    # too unlike every line: nothing (and never a guess between two alike)
    assert read_located("def something_else_entirely(q):\n", out) == []
    # a function inside a function: the outer one, whose body it is
    assert read_located("24-25:     def identity(x):\n", out) == [(22, 26)]
    # a method stays a method (a class is no function)
    assert read_located("14-16:     def width(self):\n", out) == [(13, 16)]


def test_a_window_grows_around_the_region_within_its_budget():
    lines = [f"{i}\n" for i in range(100)]
    count = len  # one token a character
    assert widen((50, 52), lines, count, budget=6 + 4 * 3) == (48, 54)
    assert widen((0, 2), lines, count, budget=4 + 5 * 2) == (0, 7)  # the top is the limit
    assert widen((10, 20), lines, count, budget=5) == (10, 20)  # the region itself is kept
