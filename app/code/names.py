"""Where a name is used in a text, and the text with it renamed: the one home of that reading.

Contract (lines and columns 0-based; a ``scope`` is ``[start, end)`` line ranges, None for the
whole text):
  * ``uses(text, name, path, scope, ...) -> list[(line, col)]``: the places of ``name`` as a name.
    In Python (``tokenize``) a NAME token, not an attribute nor a keyword argument (but for the
    keyword of a parameter renamed in its function); ``words``, ``attributes`` and ``mentions``
    widen it. Elsewhere, or where Python does not tokenize, a whole word on a line.
  * ``rename(text, old, new, path, scope, ...) -> str``: every use of ``old`` in ``scope`` replaced
    by ``new``, every other byte as it was; in Python also strings that name it as code, never a
    bare word of prose.
  * ``whole_word(name)``: the one pattern of "a whole word" every module uses.
  * ``code_lines(text, value, path) -> set[int] | None``: the lines where ``value`` stands as a
    token of code, not in a docstring or a comment (Python only).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence

from .diff import split_lines
from .syntax import language_for_path

Scope = Sequence[tuple[int, int]] | None


def _inside(line: int, scope: Scope) -> bool:
    return scope is None or any(a <= line < b for a, b in scope)


def whole_word(name: str) -> re.Pattern:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def _python_uses(
    text: str, name: str, words: bool, attributes: bool, scope: Scope = None, mentions: bool = False
) -> tuple[list[tuple[int, int]], set[tuple[int, int]]] | None:
    """The uses, and of them the keywords at calls of the functions ``scope`` defines with
    a parameter ``name`` (they follow the parameter wherever the call is)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    word = whole_word(name)
    sig = [t for t in toks if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)]
    own = _defs_with_parameter(sig, name, scope)
    out, keywords = _code_uses(sig, name, own, attributes)
    for t in toks if words else ():
        if t.type in (tokenize.COMMENT, tokenize.STRING):
            row, col = t.start[0] - 1, t.start[1]
            for k, piece in enumerate(t.string.split("\n")):
                base = col if k == 0 else 0
                out += [(row + k, base + m.start()) for m in word.finditer(piece)]
    for t in toks if mentions and not words else ():
        if t.type == tokenize.STRING:
            found, kw = _string_mentions(t, name, own, scope)
            out += found
            keywords |= kw
    return out, keywords


def _code_uses(
    sig: list[tokenize.TokenInfo], name: str, own: set[str], attributes: bool
) -> tuple[list[tuple[int, int]], set[tuple[int, int]]]:
    """``name``'s uses among the tokens ``sig`` (0-based rows), and of them the keywords at
    calls of ``own`` functions."""
    out, keywords = [], set()
    # per open bracket: the called name of a call's ("" for a call of something else), None
    # for a def's parameters or any other bracket
    parens: list[str | None] = []
    for i, t in enumerate(sig):
        if t.type == tokenize.OP and t.string in "([{":
            is_def = t.string == "(" and i >= 2 and sig[i - 2].string in ("def", "class")
            callee = None
            if t.string == "(" and not is_def:
                prev, dot = sig[i - 1] if i else None, i >= 2 and sig[i - 2].string == "."
                callee = prev.string if prev and prev.type == tokenize.NAME and not dot else ""
            parens.append(callee)
        elif t.type == tokenize.OP and t.string in ")]}" and parens:
            parens.pop()
        if t.type == tokenize.NAME and t.string == name:
            before = sig[i - 1].string if i else ""
            after = sig[i + 1].string if i + 1 < len(sig) else ""
            if before == "." and not attributes:
                continue
            if after == "=" and before in ("(", ",") and parens and parens[-1] is not None:
                if parens[-1] not in own:
                    continue  # a keyword argument of a call names the callee's parameter
                keywords.add((t.start[0] - 1, t.start[1]))
            out.append((t.start[0] - 1, t.start[1]))
    return out, keywords


_DOCTEST = re.compile(r"^(\s*)(?:>>>|\.\.\.) ")


def _marked(name: str) -> re.Pattern:
    """``name`` marked as code in prose: in backquotes, a reST field, a parameter's entry."""
    n = re.escape(name)
    return re.compile(
        rf"(?<=`)(?P<a>{n})(?=(?:\(\))?`)"
        rf"|:(?:param|parameter|arg|argument|key|keyword|type|raises?)\s+(?:[^:`\n]*\s)?(?P<b>{n}):"
        rf"|^\s*\*{{0,2}}(?P<c>{n})(?:\s*\([^)\n]*\))?\s*:(?:\s|$)"
    )


def _string_mentions(
    t: tokenize.TokenInfo, name: str, own: set[str], scope: Scope
) -> tuple[list[tuple[int, int]], set[tuple[int, int]]]:
    """Where the string ``t`` names ``name`` as code (``rename``'s mentions), and of them
    the doctest keywords (they follow the parameter wherever they are)."""
    out, keywords = [], set()
    marked = _marked(name)
    row, col = t.start[0] - 1, t.start[1]
    for k, piece in enumerate(t.string.split("\n")):
        base = col if k == 0 else 0
        prompt = _DOCTEST.match(piece)
        if prompt:
            code = piece[prompt.end() :]
            sig = [
                x
                for x in _tokens(code)
                if x.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
            ]
            _, kw = _code_uses(sig, name, own, False)
            at = {(row + k, base + prompt.end() + c) for _, c in kw}
            out += at
            keywords |= at
        elif _inside(row + k, scope):
            out += [
                (row + k, base + m.start(m.lastgroup))
                for m in marked.finditer(piece)
                if m.lastgroup
            ]
    return out, keywords


def _tokens(code: str) -> list[tokenize.TokenInfo]:
    """The tokens of one line of code, as far as they go (a doctest's line may open a
    bracket the next closes)."""
    got = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            got.append(tok)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return got


def _defs_with_parameter(sig: list[tokenize.TokenInfo], name: str, scope: Scope) -> set[str]:
    """The functions the text defines with a parameter ``name`` inside ``scope`` (a rename
    renames it): at a call of one of them by its bare name, ``name=`` is that parameter
    (``iglob(p, dir_fd=dir_fd)``)."""
    found, depth, func = set(), 0, None
    for i, t in enumerate(sig):
        if func is None:
            if t.string == "(" and i >= 2 and sig[i - 2].string == "def":
                func, depth = sig[i - 1].string, 1
            continue
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
            func = None if depth == 0 else func
        elif depth == 1 and t.string == name and sig[i - 1].string in ("(", ",", "*", "**"):
            if _inside(t.start[0] - 1, scope):
                found.add(func)
    return found


def uses(
    text: str,
    name: str,
    path: str | None,
    scope: Scope = None,
    words: bool = False,
    attributes: bool = False,
    mentions: bool = False,
) -> list[tuple[int, int]]:
    """The 0-based ``(line, col)`` places of ``name`` as a name in ``text``, within ``scope``.

    In Python (``tokenize``) a use is a NAME token, not an attribute (``x.name``) and not a
    keyword argument (``f(name=…)``), which name other things, unless ``f`` is a function the
    text defines, inside ``scope``, with a parameter ``name`` (then it is the renamed parameter,
    at every such call, inside ``scope`` or not: a parameter renamed in its function is renamed
    at its callers' keywords). With ``words``, whole words inside comments and strings count
    too (a rename "comments and docstrings included"); with ``attributes``, ``x.name`` counts
    (the name is a method or an attribute, and its uses are reached through objects); with
    ``mentions``, the places ``rename`` reads in strings. Elsewhere, or where Python does not
    tokenize, a use is a whole word on a line.
    """
    python = None
    if language_for_path(path) == "python":
        python = _python_uses(text, name, words, attributes, scope, mentions)
    if python is None:
        word = whole_word(name)
        found = [
            (i, m.start()) for i, line in enumerate(split_lines(text)) for m in word.finditer(line)
        ]
        keywords: set[tuple[int, int]] = set()
    else:
        found, keywords = python
    return sorted({p for p in found if _inside(p[0], scope) or p in keywords})


def rename(
    text: str,
    old: str,
    new: str,
    path: str | None,
    scope: Scope = None,
    words: bool = False,
    attributes: bool = False,
) -> str:
    """``text`` with every use of ``old`` in ``scope`` (``uses``) replaced by ``new``.

    Every other byte stays as it was. In Python, strings are read too where they name it as code
    (``mentions``): in ``scope``, the name marked as code in prose (````old````, ```old```,
    ``:param old:``, a parameter's entry ``old (int): …`` / ``old : int``), and, anywhere, a
    doctest's keyword ``old=`` at a call of the file's function whose parameter is renamed
    (``>>> f(x, old=2)``); a bare word of prose stays ("the data are grouped").
    """
    places = uses(text, old, path, scope, words, attributes, mentions=True)
    if not places:
        return text
    lines = split_lines(text)
    for row, col in sorted(places, reverse=True):
        line = lines[row]
        if line[col : col + len(old)] == old:
            lines[row] = line[:col] + new + line[col + len(old) :]
    return "".join(lines)


def code_lines(text: str, value: str, path: str | None) -> set[int] | None:
    """The 0-based lines where ``value`` (one Python token: ``76``, ``"single"``, ``None``) stands
    as a token of code, not inside a docstring or a comment; None outside Python, for a value of
    several tokens, or where Python does not tokenize."""
    if language_for_path(path) != "python":
        return None
    try:
        want = [
            t.string
            for t in tokenize.generate_tokens(io.StringIO(value).readline)
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)
        ]
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if len(want) != 1:
        return None
    return {t.start[0] - 1 for t in toks if t.string == want[0] and t.type != tokenize.COMMENT}
