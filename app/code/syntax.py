"""Tree-sitter for the app: the one language map, a file's definitions, its syntax errors.

Contract (lines are 0-based, ranges ``[start, end)``):

* ``LANGUAGES`` is the one extension -> language map; :func:`language_name` reads it and
  :func:`language_for_path` gives the tree-sitter name (Textual's ``TextArea`` names:
  ``"python"``, ``"rust"``, …) when its grammar is installed, else ``None``.
* :func:`enclosing_node_range` / :func:`enclosing_definition`: the smallest definition holding
  some lines (decorators included), else the lines themselves / None.
* :func:`definitions` (``Definition``: qualified name, kind, lines) and
  :func:`top_level_lines`; empty for an unknown language or no grammar.
* :func:`count_errors` counts ``ERROR`` plus ``MISSING`` nodes; :func:`syntax_warning` is one
  line when a rewrite has more of them than its original.

Parsers are created per call, so every function is safe to call from any thread.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from functools import cache
from pathlib import PurePath

log = logging.getLogger(__name__)

__all__ = [
    "LANGUAGES",
    "Definition",
    "code_leaves",
    "count_errors",
    "definitions",
    "enclosing_definition",
    "enclosing_node_range",
    "language_for_path",
    "language_name",
    "syntax_warning",
]

# language name -> (module, function returning the grammar's language pointer)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "bash": ("tree_sitter_bash", "language"),
    "css": ("tree_sitter_css", "language"),
    "go": ("tree_sitter_go", "language"),
    "html": ("tree_sitter_html", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "json": ("tree_sitter_json", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
    "python": ("tree_sitter_python", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "sql": ("tree_sitter_sql", "language"),
    "toml": ("tree_sitter_toml", "language"),
    "xml": ("tree_sitter_xml", "language_xml"),
    "yaml": ("tree_sitter_yaml", "language"),
}

# The one extension -> language map: the name is the fenced block's info string in prompts
# and, where a grammar is installed (``_GRAMMARS``), the tree-sitter language.
LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".rs": "rust",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".java": "java",
    ".kt": "kotlin",
    ".swift": "swift",
    ".rb": "ruby",
    ".lua": "lua",
    ".sh": "bash",
    ".bash": "bash",
    ".json": "json",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".css": "css",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".sql": "sql",
    ".xml": "xml",
}

_NAMES: dict[str, str] = {".bashrc": "bash", ".profile": "bash", "pipfile": "toml"}

# node types that count as a "definition" for region mode, per language
_DEFINITIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition", "decorated_definition"}),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "method_definition",
        }
    ),
    "rust": frozenset(
        {"function_item", "impl_item", "struct_item", "enum_item", "trait_item", "mod_item"}
    ),
    "go": frozenset({"function_declaration", "method_declaration", "type_declaration"}),
    "java": frozenset(
        {
            "method_declaration",
            "constructor_declaration",
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
        }
    ),
    "bash": frozenset({"function_definition"}),
    "css": frozenset({"rule_set", "media_statement"}),
    "json": frozenset({"pair"}),
    "toml": frozenset({"table", "table_array_element"}),
    "yaml": frozenset({"block_mapping_pair"}),
    "html": frozenset({"element"}),
    "markdown": frozenset({"section"}),
    "xml": frozenset({"element"}),
    "sql": frozenset({"statement"}),
}


@cache
def _language(lang: str):  # -> tree_sitter.Language | None
    spec = _GRAMMARS.get(lang)
    if spec is None:
        return None
    try:
        import tree_sitter

        module = importlib.import_module(spec[0])
        return tree_sitter.Language(getattr(module, spec[1])())
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        log.info("no tree-sitter grammar for %s: %s", lang, exc)
        return None


def parse(text: str, lang: str | None):  # -> tree_sitter.Tree | None
    """``text``'s tree-sitter tree in ``lang`` (a name ``language_for_path`` gives), or None
    when there is no grammar for it."""
    language = _language(lang) if lang else None
    if language is None:
        return None
    import tree_sitter

    return tree_sitter.Parser(language).parse(text.encode("utf-8"))


def language_name(path: str | None) -> str:
    """The language of ``path`` by its name (``LANGUAGES``), or "" when unknown: the info string
    of a prompt's fenced block."""
    if not path:
        return ""
    p = PurePath(path)
    return _NAMES.get(p.name.lower()) or LANGUAGES.get(p.suffix.lower(), "")


def language_for_path(path: str | None) -> str | None:
    """The tree-sitter language name for ``path``, or None if unknown or not installed."""
    lang = language_name(path)
    if not lang or _language(lang) is None:
        return None
    return lang


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def enclosing_node_range(
    text: str, lang: str | None, start_line: int, end_line: int
) -> tuple[int, int]:
    """0-based ``[start, end)`` lines of the smallest function / class / definition node that
    contains lines ``[start_line, end_line)`` (an empty range means the single line
    ``start_line``, i.e. a cursor); a Python definition's decorators are included.

    Falls back to the given range (at least one line, clamped to the text) when the language
    is unknown, the input does not parse or no definition node contains it.
    """
    found = enclosing_definition(text, lang, start_line, end_line)
    return found if found is not None else _clamp(text, start_line, end_line)


def _clamp(text: str, start_line: int, end_line: int) -> tuple[int, int]:
    """The given range clamped to the text, an empty one widened to one line."""
    n_lines = max(_line_count(text), 1)
    start = min(max(start_line, 0), n_lines - 1)
    return start, min(max(end_line, start + 1), n_lines)


def enclosing_definition(
    text: str, lang: str | None, start_line: int, end_line: int
) -> tuple[int, int] | None:
    """0-based ``[start, end)`` lines of the smallest definition containing the given lines,
    or None when there is none (or the language is unknown, or nothing parses)."""
    start, end = _clamp(text, start_line, end_line)
    tree = parse(text, lang)
    kinds = _DEFINITIONS.get(lang or "", frozenset())
    if tree is None or not kinds:
        return None
    last = end - 1  # last line of the range, inclusive
    node = tree.root_node
    best = None
    # descend towards the range: each step picks the child that spans every line of it
    while True:
        child = next(
            (c for c in node.named_children if c.start_point.row <= start and _last_row(c) >= last),
            None,
        )
        if child is None:
            break
        node = child
        if node.type in kinds:
            best = node
    if best is None:
        return None
    parent = best.parent
    if parent is not None and parent.type == "decorated_definition":
        best = parent
    return best.start_point.row, _last_row(best) + 1


def _last_row(node) -> int:
    """The last line a node occupies (a node ending at column 0 ends on the line before)."""
    row, col = node.end_point.row, node.end_point.column
    return row - 1 if col == 0 and row > node.start_point.row else row


@dataclass(frozen=True)
class Definition:
    """A function, class or other definition node (``_DEFINITIONS``) of a file."""

    name: str
    """Qualified by the definitions it sits in: ``HelpFormatter.__init__``."""
    kind: str
    """The node type (``function_definition``, ``class_definition``, ...)."""
    start: int
    """0-based first line (a Python decorator's line)."""
    line: int
    """0-based line where the definition itself starts (after its decorators)."""
    end: int
    """0-based line after the last one."""
    header_end: int
    """0-based line after the signature (where the body starts; ``start + 1`` at least)."""
    depth: int
    """0 at the top level, 1 inside one definition, ..."""


def _name_of(node) -> str:
    """A definition's name; a Rust ``impl`` takes its type's (``impl<T> fmt::Display for
    Config<T>`` is ``Config``), so its methods read ``Config.port``; "?" when none."""
    name_node = node.child_by_field_name("name")
    if name_node is None and node.type == "impl_item":
        name_node = node.child_by_field_name("type")
        if name_node is not None and name_node.type == "generic_type":
            name_node = name_node.child_by_field_name("type")
        if name_node is not None and name_node.type == "scoped_type_identifier":
            name_node = name_node.child_by_field_name("name")
    return name_node.text.decode("utf-8", "replace") if name_node is not None else "?"


def definitions(text: str, lang: str | None, tree=None) -> list[Definition]:
    """The definitions of ``text`` in file order: qualified name, kind, ``[start, end)`` lines
    with decorators, ``line`` (where the definition itself starts), ``header_end`` (where its
    body starts) and ``depth``; [] for an unknown language or no grammar. ``tree``: its
    parse, when the caller has it (``app.code.source.Source``)."""
    tree = tree if tree is not None else parse(text, lang)
    kinds = _DEFINITIONS.get(lang or "", frozenset()) - {"decorated_definition"}
    if tree is None or not kinds:
        return []
    out: list[Definition] = []

    def walk(node, prefix: str, depth: int) -> None:
        for child in node.named_children:
            if child.type not in kinds:
                walk(child, prefix, depth)
                continue
            name = _name_of(child)
            start = child.start_point.row
            if child.parent is not None and child.parent.type == "decorated_definition":
                start = child.parent.start_point.row
            body = child.child_by_field_name("body")
            header_end = child.start_point.row + 1
            if body is not None and body.start_point.row > child.start_point.row:
                header_end = body.start_point.row
            qual = f"{prefix}{name}"
            out.append(
                Definition(
                    qual,
                    child.type,
                    start,
                    child.start_point.row,
                    _last_row(child) + 1,
                    header_end,
                    depth,
                )
            )
            walk(child, qual + ".", depth + 1)

    walk(tree.root_node, "", 0)
    return out


_TOP_LEVEL = frozenset(
    {"import_statement", "import_from_statement", "expression_statement", "future_import_statement"}
)


def top_level_lines(text: str, lang: str | None, tree=None) -> list[tuple[int, int, str]]:
    """``(start, end, type)`` 0-based lines of the top-level statements that are not
    definitions (imports, assignments; Python only; ``[]`` otherwise)."""
    if lang != "python":
        return []
    tree = tree if tree is not None else parse(text, lang)
    if tree is None:
        return []
    return [
        (c.start_point.row, _last_row(c) + 1, c.type)
        for c in tree.root_node.named_children
        if c.type in _TOP_LEVEL
    ]


_CODE = frozenset(("bash", "go", "java", "javascript", "python", "rust"))
"""Languages whose comments say nothing to the machine (``code_leaves``)."""
_STRINGS = frozenset(("string", "template_string", "raw_string_literal", "string_literal"))


def code_leaves(text: str, lang: str | None, tree=None) -> list[tuple[int, str]] | None:
    """``text``'s tokens less its comments (and Python's docstrings: a statement that is a
    string alone), strings kept whole, each with its depth in the tree (so a statement moved
    into or out of a block differs); None for a language that is not code (``_CODE``) or
    without a grammar. Two texts with the same leaves differ only in comments and layout."""
    if lang not in _CODE:
        return None
    tree = tree if tree is not None else parse(text, lang)
    if tree is None:
        return None
    out: list[tuple[int, str]] = []
    stack = [(tree.root_node, 0)]
    while stack:
        node, depth = stack.pop()
        if "comment" in node.type:
            continue
        if (
            lang == "python"
            and node.type == "expression_statement"
            and node.named_child_count == 1
            and node.named_children[0].type in ("string", "concatenated_string")
        ):
            continue
        if node.child_count == 0 or node.type in _STRINGS:
            out.append((depth, node.text.decode("utf-8", "replace")))
            continue
        stack.extend((child, depth + 1) for child in reversed(node.children))
    return out


def count_errors(text: str, lang: str | None, tree=None) -> int:
    """Number of ``ERROR`` and ``MISSING`` nodes in ``text``'s parse tree (0 if unknown)."""
    tree = tree if tree is not None else parse(text, lang)
    if tree is None or not tree.root_node.has_error:
        return 0
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
        if node.has_error:  # only subtrees with errors can contain more
            stack.extend(node.children)
    return count


def syntax_warning(original: str, new: str, lang: str | None) -> str | None:
    """A one-line warning when ``new`` parses with more errors than ``original``, else None."""
    if lang is None:
        return None
    return errors_warning(count_errors(original, lang), count_errors(new, lang), lang)


def errors_warning(before: int, after: int, lang: str) -> str | None:
    """``syntax_warning`` of two error counts (``count_errors``) already made."""
    if after <= before:
        return None
    return (
        f"the result has {after} {lang} syntax error node(s) (ERROR/MISSING); "
        f"the original had {before}"
    )
