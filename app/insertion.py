"""An addition the instruction states in full, made by the program: the text and where it goes.

Contract: ``read_addition(instruction) -> Addition | None`` reads an instruction that asks
for one addition and nothing else, in one of two shapes (an optional lead "In SECTION,"):
  * "add [the item|line|option|key|entry …] TEXT [to the … command,] [right] after ANCHOR"
    ("In [target.cache], add ttl_s = 900 after key_prefix."; "Add the option
    --no-privileges to the pg_dump command, right after --no-owner.");
  * "add [the item] TEXT at the end of the list in SECTION" / "… at the end of the
    SECTION list|checklist" ("Add the item "…" at the end of the pull request checklist.").
TEXT is as written, or the inside of its quotes when it is one quoted string.
``insert(text, addition, path) -> str | None``: ``text`` with the addition made, or None
when the file does not say one place for it:
  * SECTION (Markdown heading, TOML/INI ``[table]``, a JSON member holding an object or
    array) must name exactly one; the search is then inside it;
  * after ANCHOR: the one line whose key is ANCHOR (``key_prefix = …``, ``"lint": …``,
    a list item that starts with it) gets a line after it, indented as it is, with its
    list marker; in JSON the member commas follow (the anchor's own comma, or one added
    to the anchor when it was the last member). With no such line, the one place ANCHOR
    stands as a word inside a line gets `` TEXT`` right after it (a command's option);
  * at the end of a list: after the first list of the section (its items and their
    continuation lines), with the last item's marker (a number goes up by one);
  * a JSON, TOML or Python file that parsed must still parse.
Pure, deterministic, no model: ``app.stages.run_insert`` makes it under ``auto``.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import dataclass

from .diff import split_lines


@dataclass(frozen=True)
class Addition:
    text: str
    """What to add, as written (quotes of a lone quoted string removed)."""
    anchor: str | None
    """After what; None: at the end of the list."""
    section: str | None
    """The section it goes in (a heading, a table, a JSON member), or None."""
    list_words: str | None = None
    """For "at the end of the X list": the words X naming its section."""


_LEAD = (
    r"^\s*(?:in\s+(?:the\s+)?(?P<sec>\"[^\"]+\"|'[^']+'|`[^`]+`|\[[^\]]+\]|[\w.]+)"
    r"(?:\s+(?:section|table|object|block|list))?,?\s+)?"
)
_KIND = (
    r"(?:(?:the|a|an)\s+)?(?:new\s+)?(?:(?:item|line|entry|option|flag|key|setting|member|"
    r"bullet|step|row)\s+)?"
)
_AFTER = re.compile(
    _LEAD + r"add\s+" + _KIND + r"(?P<text>.+?)(?:\s+to\s+the\s+[^,]+?)?,?\s+"
    r"(?:(?:right|just|directly|immediately)\s+)?after\s+(?P<anchor>\"[^\"]*\"(?:\s*:\s*[^\s,]+)?|"
    r"'[^']*'|`[^`]*`|[^\s,\"'`]+(?:\s+[^\s,\"'`]+){0,3})\s*\.?\s*$",
    re.I,
)
_END = re.compile(
    _LEAD + r"add\s+" + _KIND + r"(?P<text>.+?)\s+at\s+the\s+end\s+of\s+(?:the\s+)?"
    r"(?:(?:list|checklist)\s+(?:in|under)\s+(?P<listsec>\S.*?)|(?P<words>[\w\s-]+?)\s+"
    r"(?:list|checklist))\s*\.?\s*$",
    re.I,
)
_QUOTED = re.compile(r"^(?:\"([^\"]*)\"|'([^']*)'|`([^`]*)`)$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])(\s+)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _unquote(s: str) -> str:
    m = _QUOTED.match(s.strip())
    return next(g for g in m.groups() if g is not None) if m else s.strip()


def read_addition(instruction: str) -> Addition | None:
    """The addition ``instruction`` asks for and nothing else (module docstring), or None."""
    one = instruction.strip()
    if "\n" in one:
        return None
    m = _END.match(one)
    if m:
        sec = m.group("listsec") or m.group("sec")
        return Addition(
            _unquote(m.group("text")), None, _unquote(sec) if sec else None, m.group("words")
        )
    m = _AFTER.match(one)
    if m:
        sec = m.group("sec")
        anchor = re.sub(r"\.$", "", m.group("anchor"))  # the sentence's full stop
        return Addition(_unquote(m.group("text")), anchor, _unquote(sec) if sec else None)
    return None


def insert(text: str, add: Addition, path: str | None) -> str | None:
    """``text`` with ``add`` made (module docstring), or None."""
    lines = split_lines(text)
    if not lines or not add.text or "\n" in add.text:
        return None
    lo, hi = 0, len(lines)
    if add.section or add.list_words:
        span = _section(lines, add.section or add.list_words)
        if span is None:
            return None
        lo, hi = span
    out = _at_end(lines, lo, hi, add) if add.anchor is None else _after(lines, lo, hi, add, path)
    if out is None:
        return None
    new = "".join(out)
    return new if _still_parses(text, new, path) else None


def _section(lines: list[str], name: str):
    """[lo, hi) of the one section called ``name`` (module docstring), or None."""
    want = name.strip().strip("[]").lower()
    found = []
    for i, line in enumerate(lines):
        s = line.strip()
        h = _HEADING.match(s)
        if h:
            if want in h.group(2).lower():
                level = len(h.group(1))
                end = next(
                    (
                        j
                        for j in range(i + 1, len(lines))
                        if (g := _HEADING.match(lines[j].strip())) and len(g.group(1)) <= level
                    ),
                    len(lines),
                )
                found.append((i + 1, end, h.group(2).lower()))
        elif s.startswith("[") and s.endswith("]") and s.strip("[] ").lower() == want:
            end = next(
                (j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("[")),
                len(lines),
            )
            found.append((i + 1, end, want))
        elif re.match(r'"' + re.escape(want) + r'"\s*:\s*[\[{]\s*$', s, re.I):
            found.append((i + 1, _closing(lines, i), want))
    if len(found) > 1:  # "Deploy" names the heading "Deploy", not "Deploying"
        found = [f for f in found if f[2] == want]
    return found[0][:2] if len(found) == 1 and found[0][1] is not None else None


def _closing(lines: list[str], i: int) -> int | None:
    """The line of the bracket that closes the one ``lines[i]`` opens (JSON, no strings with
    brackets in them)."""
    depth = 0
    for j in range(i, len(lines)):
        for ch in re.sub(r'"(?:\\.|[^"\\])*"', '""', lines[j]):
            depth += ch in "[{"
            depth -= ch in "]}"
        if depth == 0:
            return j
    return None


def _key_lines(lines: list[str], lo: int, hi: int, anchor: str) -> list[int]:
    """The lines of [lo, hi) whose key (after any list marker) is ``anchor``."""
    forms = {anchor, _unquote(anchor)}
    out = []
    for k in range(lo, hi):
        s = _ITEM.sub("", lines[k]).strip() if _ITEM.match(lines[k]) else lines[k].strip()
        for f in forms:
            if not f or not s.startswith(f):
                continue
            rest = s[len(f) :]
            if _ITEM.match(lines[k]) or re.match(r"^[\"']?\s*(?:[:=,]|$|\s)", rest):
                out.append(k)
                break
    return out


def _after(lines: list[str], lo: int, hi: int, add: Addition, path: str | None):
    keys = _key_lines(lines, lo, hi, add.anchor)
    if len(keys) == 1:
        k = keys[0]
        out = list(lines)
        anchor = lines[k]
        nl = "\n" if anchor.endswith("\n") else ""
        item = _ITEM.match(anchor)
        lead = item.group(0) if item else anchor[: len(anchor) - len(anchor.lstrip(" \t"))]
        body = add.text
        if (path or "").endswith(".json"):
            if anchor.rstrip().endswith(","):
                body += ","
            elif anchor.rstrip()[-1:] not in "[{":
                out[k] = anchor.rstrip("\r\n") + "," + nl
        out.insert(k + 1, lead + body + (nl or "\n"))
        if not nl:
            out[k] = out[k] + "\n"
        return out
    if keys:
        return None
    word = re.compile(r"(?<![\w-])" + re.escape(_unquote(add.anchor)) + r"(?![\w-])")
    hits = [(k, m.end()) for k in range(lo, hi) for m in word.finditer(lines[k])]
    if len(hits) != 1:
        return None
    k, end = hits[0]
    out = list(lines)
    out[k] = lines[k][:end] + " " + add.text + lines[k][end:]
    return out


def _at_end(lines: list[str], lo: int, hi: int, add: Addition):
    start = next((k for k in range(lo, hi) if _ITEM.match(lines[k])), None)
    if start is None:
        return None
    indent = len(_ITEM.match(lines[start]).group(1))
    last = end = start
    for k in range(start, hi):
        m = _ITEM.match(lines[k])
        if m and len(m.group(1)) == indent:
            last, end = k, k + 1
        elif lines[k].strip() and len(lines[k]) - len(lines[k].lstrip()) > indent:
            end = k + 1  # an item's continuation line
        else:
            break
    m = _ITEM.match(lines[last])
    marker = m.group(2)
    if marker[0].isdigit():
        marker = f"{int(marker[:-1]) + 1}{marker[-1]}"
    nl = "\n"
    out = list(lines)
    if not out[end - 1].endswith("\n"):
        out[end - 1] += nl
    out.insert(end, m.group(1) + marker + m.group(3) + add.text + nl)
    return out


def _still_parses(old: str, new: str, path: str | None) -> bool:
    """A JSON, TOML or Python file that parsed still does."""
    p = (path or "").lower()
    loads = {".json": json.loads, ".toml": tomllib.loads, ".py": ast.parse}
    load = next((f for ext, f in loads.items() if p.endswith(ext)), None)
    if load is None:
        return True
    try:
        load(old)
    except (ValueError, SyntaxError):
        return True
    try:
        load(new)
    except (ValueError, SyntaxError):
        return False
    return True
