"""Repairs of a model's answer that need no model: the program does what a small model fumbles.

Each repair undoes one kind of fault, from the instruction (``app.intent``) and the file
alone, and only where the instruction did not ask for that kind of change.

Contract: ``repair(old, new, intent, path) -> (text, labels)`` runs, in order:
  * ``keep_copies`` (label ``copies``): a changed line that equals an original line but
    for white space, or (Python) but for its comment, takes the original, unless the
    instruction asks for layout or comments, or the line's change is the asked rename; in
    Python a line that starts a statement keeps the model's indentation (it says which
    block the line is in) and takes the rest of the original; a line that is 2-4 original
    lines joined, white space aside, takes those lines;
  * ``keep_blank_lines`` (``copies``): blank lines of the original that the result dropped
    where it copied or changed the lines around them (a run of blank lines deleted, or a
    changed block with as many non-blank lines and fewer blank ones) are put back, unless
    the instruction asks for layout changes or a removal;
  * ``restore_tail`` (``tail``): a result whose last hunk drops the file's tail
    (``app.checks.suspect_deletion``'s ``drops_tail``) gets the original tail back;
  * ``drop_unasked`` (``unasked``): hunks outside every definition the instruction names
    (``app.checks.unasked_hunks``; the asked rename is no stray change) are undone, when
    at least one hunk is inside one;
  * ``complete_rename`` (``rename``): a rename "A to B" the model made in part is made
    everywhere in its scope (``app.checks.rename_scope``; comments and strings too when
    the instruction says so); never when the model made none of it (B nowhere new),
    unless the instruction asks for that rename and nothing else, and says where or needs
    not (``Intent.only_rename``; ``app.checks.asked_rename_scope``: the program makes it);
    where it asks for nothing else, the model's other hunks are undone (a whole rewrite's
    reworded comment or collapsed indent);
    then ``drop_unasked`` once more: a rename the model made outside its scope (the
    first of several alike lines) is stray once the scope has it;
  * ``drop_off_value`` (``unasked``): when the instruction asks only for value changes
    (``Intent.only_values``) and a hunk made one (a line that held A holds B), the hunks
    whose old lines hold no A are undone (the like lines a widened answer changed too);
  * ``set_value`` (``value``): when the instruction asks only for value changes and the
    model made none of them (no line that held A holds B), the program makes each: on the
    one line of the named definitions (of the file when none is named) that holds A as a
    token, once (of code, in Python), or of several such lines the one holding the most of the
    instruction's other words, A becomes B, and the model's answer is set aside; nothing
    when a value has no such line;
  * ``mend_commas`` (``commas``): a JSON file that parsed and no longer does gets the comma
    a new line lacks before the next member, when that makes it parse.
It returns the repaired text and the labels of the repairs that changed something; the
text is ``new`` when none did. ``app.stages.finished`` runs it on every complete result,
then ``app.checks.vouch`` judges what is left.
"""

from __future__ import annotations

import difflib
import io
import json
import re
import tokenize

from .checks import (
    asked_rename_scope,
    rename_attributes,
    rename_scope,
    rename_words,
    suspect_deletion,
    unasked_hunks,
)
from .diff import Hunk, apply_hunks, compute_hunks, split_lines
from .intent import Intent
from .names import code_lines, rename, whole_word
from .syntax import language_for_path


def _squash(line: str) -> str:
    return re.sub(r"\s+", "", line)


def _code(line: str) -> str:
    """A Python line without its comment (a ``#`` outside quotes), squashed."""
    out, quote = [], ""
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            break
        out.append(ch)
    return _squash("".join(out))


def keep_copies(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` with mis-copied lines put back (module docstring)."""
    if intent.layout:
        return new
    python = language_for_path(path) == "python"
    comments = not intent.comments and python
    a, b = split_lines(old), split_lines(new)
    sq = [_squash(x) for x in a]
    starts: set[int] | None = None if python else set()

    def start(i: int) -> bool:  # tokenized once, and only when an indent differs
        nonlocal starts
        if starts is None:
            starts = _statement_starts(old)
        return i in starts

    out = list(b)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag != "replace":
            continue
        for norm in (_squash, _code) if comments else (_squash,):
            sub = difflib.SequenceMatcher(
                None, [norm(x) for x in a[i1:i2]], [norm(x) for x in out[j1:j2]], autojunk=False
            )
            for t, x1, x2, y1, _y2 in sub.get_opcodes():
                if t != "equal":
                    continue
                for k in range(x2 - x1):
                    was, got = a[i1 + x1 + k], out[j1 + y1 + k]
                    if got == was or _renamed(was, got, intent, path):
                        continue
                    if _lead(got) != _lead(was) and start(i1 + x1 + k):
                        was = _lead(got) + was.lstrip(" \t")  # the model's block, the copy
                    out[j1 + y1 + k] = was
        joins = _joins(sq, i1, i2)
        for j in range(j1, j2):
            got = _squash(out[j])
            k = joins.get(got) if got and out[j].count("\n") <= 1 else None
            if k is not None and not (_lead(out[j]) != _lead(a[k[0]]) and start(k[0])):
                out[j] = "".join(a[k[0] : k[1]])
    return "".join(out)


def keep_blank_lines(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` with the blank lines it dropped from copied text put back (module docstring)."""
    if intent.layout or intent.removal:
        return new
    a, b = split_lines(old), split_lines(new)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        got = b[j1:j2]
        was = a[i1:i2]
        if tag == "delete" and all(not x.strip() for x in was):
            got = was  # only blank lines went: a copy lost them
        elif tag == "replace":
            full = [x for x in was if x.strip()]
            kept = [x for x in got if x.strip()]
            if len(full) == len(kept) and len(got) - len(kept) < len(was) - len(full):
                it = iter(kept)  # the model's lines, in the original's blank-line layout
                got = [x if not x.strip() else next(it) for x in was]
        out += got
    return "".join(out)


def _joins(sq: list[str], i1: int, i2: int) -> dict[str, tuple[int, int]]:
    """The original lines ``a[k:m]`` (2 to 4 of ``a[i1:i2]``) joined on one, white space
    aside (``sq``: the lines squashed), by that text: what a copy the model reflowed reads
    as; the first ``(k, m)`` where two read alike."""
    joins: dict[str, tuple[int, int]] = {}
    for k in range(i1, i2 - 1):
        for m in range(k + 2, min(k + 4, i2) + 1):
            joins.setdefault("".join(sq[k:m]), (k, m))
    return joins


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _statement_starts(text: str) -> set[int]:
    """0-based numbers of the lines of Python ``text`` that start a statement (their indent
    says which block they are in; a continuation line's does not); every line when the
    text does not tokenize."""
    starts: set[int] = set()
    skip = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE}
    at_start = True
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                at_start = True
            elif at_start and tok.type not in skip and tok.type != tokenize.ENDMARKER:
                starts.add(tok.start[0] - 1)
                at_start = False
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set(range(text.count("\n") + 1))
    return starts


def _renamed(was: str, got: str, intent: Intent, path: str | None) -> bool:
    if intent.rename is None:
        return False
    return rename(was, *intent.rename, path, None, True, True) == got


def restore_tail(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` with its dropped tail put back (module docstring)."""
    suspect = suspect_deletion(old, new, intent.instruction)
    if suspect is None or suspect.reason != "drops_tail":
        return new
    hunks = compute_hunks(old, new)
    return apply_hunks(old, hunks[:-1])


def complete_rename(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` with the asked rename made everywhere in its scope (module docstring)."""
    if intent.rename is None:
        return new
    a, b = intent.rename
    made = whole_word(b)
    if not any(
        len(made.findall(h.new_text)) > len(made.findall(h.old_text))
        for h in compute_hunks(old, new)
    ) and not (intent.only_rename and asked_rename_scope(old, intent, path)[0]):
        return new  # the model made none of it: what it did is not a rename to finish
    scope = rename_scope(old, new, intent, path)
    if scope == []:
        return new
    words, attrs = rename_words(intent), rename_attributes(old, intent, path)
    # rename in the original and carry the model's other changes over: line numbers
    # of the scope are the original's
    want = rename(old, a, b, path, scope, words, attrs)
    if intent.only_rename:
        return want  # nothing else was asked: the model's other hunks are stray
    other = [h for h in compute_hunks(old, new) if not _covers(h, compute_hunks(old, want))]
    if not other:
        return want
    merged = _merge(old, want, other)
    return merged if merged is not None else new


def _covers(h: Hunk, hunks: list[Hunk]) -> bool:
    """True when the model's hunk ``h`` is one of the rename's own (the same lines, the same
    new text, or the rename's change of those lines)."""
    return any(
        g.start_line <= h.start_line and h.end_line <= g.end_line and h.new_text in g.new_text
        for g in hunks
    )


def _merge(old: str, want: str, other: list[Hunk]) -> str | None:
    """``want`` (``old`` renamed) with the model's ``other`` hunks made too, where they do
    not touch a renamed line; None where they do."""
    renamed = compute_hunks(old, want)
    for h in other:
        if any(
            g.start_line < max(h.end_line, h.start_line + 1) and h.start_line < g.end_line
            for g in renamed
        ):
            return None
    hunks = sorted([*renamed, *other], key=lambda h: (h.start_line, h.end_line))
    return apply_hunks(
        old,
        [Hunk(i, h.start_line, h.end_line, h.old_text, h.new_text) for i, h in enumerate(hunks)],
    )


def drop_unasked(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` without its hunks outside the named definitions (module docstring)."""
    stray = unasked_hunks(old, new, intent, path)
    hunks = compute_hunks(old, new)
    if not stray or len(stray) == len(hunks):
        return new
    keep = [h for h in hunks if h not in stray]
    return apply_hunks(old, keep)


def drop_off_value(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` without the hunks that take no part in the asked value change (module
    docstring)."""
    pairs = [(a, b) for a, b in intent.values if a in old]
    if not intent.only_values or not pairs:
        return new
    hunks = compute_hunks(old, new)
    if not any(a in h.old_text and b in h.new_text for h in hunks for a, b in pairs):
        return new
    keep = [h for h in hunks if any(a in h.old_text for a, _ in pairs)]
    return new if len(keep) == len(hunks) else apply_hunks(old, keep)


def set_value(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``old`` with the asked value changes made by the program, when the model made none of
    them (module docstring)."""
    pairs = [(a, b) for a, b in intent.values if a in old]
    if not intent.only_values or not pairs:
        return new
    if any(a in h.old_text and b in h.new_text for h in compute_hunks(old, new) for a, b in pairs):
        return new
    lines = split_lines(old)
    scope = [(d.start, d.end) for d in intent.named] or [(0, len(lines))]
    out = list(lines)
    for a, b in pairs:
        code = code_lines(old, a, path)
        got = _bound_value(lines, scope, a, intent.instruction, code)
        if got is None:
            at = _value_line(lines, scope, a, b, intent.instruction, code)
            if at is None:
                return new
            got = at, _token(a).search(lines[at]).start()
        at, col = got
        out[at] = out[at][:col] + b + out[at][col + len(a) :]
    return "".join(out)


def _bound_value(lines, scope, a: str, instruction: str, code: set[int] | None):
    """(line, column) of the one place in ``scope`` (of code, where ``code`` says) where a
    name the instruction says is bound to ``a``: ``backupCount=0``, ``width: int = 70``,
    ``"timeout": 30`` for "change the default of backupCount from 0 to 5"; None when no
    place, or several, are."""
    words = sorted(set(re.findall(r"[A-Za-z_]\w*", instruction)) - {a, "a", "A", "I"})
    if not words:
        return None
    name = r"(?<![\w.])[\"']?(?:" + "|".join(map(re.escape, words)) + r")[\"']?"
    bound = re.compile(name + r"\s*(?::[^=\n]*?=|[:=])\s*(?=" + _token(a).pattern + ")")
    hits = [
        (k, m.end())
        for lo, hi in scope
        for k in range(lo, hi)
        if code is None or k in code
        for m in bound.finditer(lines[k])
        if _token(a).match(lines[k], m.end())
    ]
    return hits[0] if len(hits) == 1 else None


def _token(value: str) -> re.Pattern:
    """``value`` where it is a whole token (a word's edge is not inside another word)."""
    head = r"(?<!\w)" if re.match(r"\w", value) else ""
    tail = r"(?!\w)" if re.search(r"\w$", value) else ""
    return re.compile(head + re.escape(value) + tail)


def _value_line(lines, scope, a: str, b: str, instruction: str, code: set[int] | None):
    """The one line of ``scope`` (line ranges) that holds ``a`` as a token, once (of code,
    where ``code`` says which lines have it so), or of those the one that holds the most of the
    instruction's other words (``max_help_position`` in "change the default of
    max_help_position from 24 to 30"); None when no line, or no one line, is it."""
    token = _token(a)
    held = sorted(
        {k for lo, hi in scope for k in range(lo, hi) if token.search(lines[k])}
        & (set(range(len(lines))) if code is None else code)
    )
    held = [k for k in held if len(token.findall(lines[k])) == 1]  # twice on a line: which?
    if len(held) <= 1:
        return held[0] if held else None
    words = set(re.findall(r"[A-Za-z_]\w*", instruction)) - {a, b, "a", "A", "I"}
    score = {k: sum(bool(whole_word(w).search(lines[k])) for w in words) for k in held}
    best = max(score.values())
    top = [k for k in held if score[k] == best]
    return top[0] if best and len(top) == 1 else None


def mend_commas(old: str, new: str, intent: Intent, path: str | None) -> str:
    """``new`` with the commas its new JSON lines lack (module docstring)."""
    if language_for_path(path) != "json" or not _parses(old) or _parses(new):
        return new
    lines, had = split_lines(new), set(split_lines(old))
    want = []
    for i, line in enumerate(lines):
        body = line.rstrip()
        if line in had or not body or body[-1] in ",{[":
            continue
        after = next((x.strip() for x in lines[i + 1 :] if x.strip()), "")
        if after[:1] in ('"', "{", "["):
            want.append(i)
    for picks in (want, *([i] for i in want)):
        fixed = list(lines)
        for i in picks:
            body = fixed[i].rstrip("\r\n")
            fixed[i] = body + "," + fixed[i][len(body) :]
        if picks and _parses("".join(fixed)):
            return "".join(fixed)
    return new


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


REPAIRS = (
    ("copies", keep_copies),
    ("copies", keep_blank_lines),
    ("tail", restore_tail),
    ("unasked", drop_unasked),
    ("rename", complete_rename),
    ("unasked", drop_unasked),  # a rename made in the wrong place is stray once completed
    ("unasked", drop_off_value),
    ("value", set_value),
    ("commas", mend_commas),
)


def repair(old: str, new: str, intent: Intent, path: str | None) -> tuple[str, list[str]]:
    """``new`` with every repair that applies made (module docstring), and their labels."""
    labels: list[str] = []
    for label, fix in REPAIRS:
        fixed = fix(old, new, intent, path)
        if fixed != new:
            labels += [] if label in labels else [label]
            new = fixed
    return new, labels
