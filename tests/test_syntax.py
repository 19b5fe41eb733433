"""app.code.syntax: language detection, enclosing definition ranges, error counts."""

from __future__ import annotations

import pytest

from specedit.app.code.syntax import (
    count_errors,
    enclosing_node_range,
    language_for_path,
    syntax_warning,
)

PY = """\
import os


@decorator
def first(a, b):
    x = a + b
    return x


class Box:
    def __init__(self):
        self.items = []

    def push(self, item):
        self.items.append(item)


top = 1
"""


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("src/foo.py", "python"),
        ("A.PY", "python"),
        ("lib.rs", "rust"),
        ("main.go", "go"),
        ("x.js", "javascript"),
        ("conf.toml", "toml"),
        ("ci.yml", "yaml"),
        ("run.sh", "bash"),
        ("Main.java", "java"),
        ("data.json", "json"),
        ("notes.txt", None),
        ("Makefile", None),
        (None, None),
        ("", None),
    ],
)
def test_language_for_path(path, lang):
    assert language_for_path(path) == lang


def test_enclosing_function_includes_decorator():
    # cursor on "x = a + b" (line 5) -> the decorated function, lines 3..6
    assert enclosing_node_range(PY, "python", 5, 5) == (3, 7)
    assert enclosing_node_range(PY, "python", 3, 4) == (3, 7)


def test_enclosing_method_then_class():
    assert enclosing_node_range(PY, "python", 11, 12) == (10, 12)  # inside __init__
    # a selection spanning two methods -> the class
    assert enclosing_node_range(PY, "python", 11, 15) == (9, 15)


def test_enclosing_falls_back_to_range():
    assert enclosing_node_range(PY, "python", 0, 1) == (0, 1)  # an import: no definition
    assert enclosing_node_range(PY, "python", 17, 17) == (17, 18)  # cursor on top-level line
    assert enclosing_node_range(PY, None, 4, 6) == (4, 6)
    assert enclosing_node_range(PY, "cobol", 4, 4) == (4, 5)
    # clamped to the text
    assert enclosing_node_range("a\nb\n", None, 5, 9) == (1, 2)
    assert enclosing_node_range("", "python", 0, 0) == (0, 1)


def test_enclosing_region_rest_is_byte_identical():
    a, b = enclosing_node_range(PY, "python", 14, 14)
    lines = PY.splitlines(keepends=True)
    assert "".join(lines[a:b]) == "    def push(self, item):\n        self.items.append(item)\n"


def test_enclosing_other_languages():
    rust = 'use std::io;\n\nfn main() {\n    let x = 1;\n    println!("{}", x);\n}\n'
    assert enclosing_node_range(rust, "rust", 3, 3) == (2, 6)
    go = "package main\n\nfunc add(a int, b int) int {\n\treturn a + b\n}\n"
    assert enclosing_node_range(go, "go", 3, 4) == (2, 5)
    js = "const a = 1;\nclass A {\n  m() {\n    return 1;\n  }\n}\n"
    assert enclosing_node_range(js, "javascript", 3, 3) == (2, 5)


def test_count_errors():
    assert count_errors(PY, "python") == 0
    assert count_errors("def f(:\n    pass\n", "python") >= 1
    assert count_errors("def f(:\n    pass\n", None) == 0
    assert count_errors('{"a": 1,, }', "json") >= 1
    assert count_errors("fn main() { let x = ; }", "rust") >= 1


def test_syntax_warning():
    broken = PY.replace("def first(a, b):", "def first(a, b:")
    msg = syntax_warning(PY, broken, "python")
    assert msg is not None and "the original had 0" in msg
    assert syntax_warning(broken, PY, "python") is None
    assert syntax_warning(PY, PY, "python") is None
    assert syntax_warning(PY, broken, None) is None
