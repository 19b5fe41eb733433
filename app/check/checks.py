"""Checks on a finished rewrite before it may be written: verdicts that need no answer key.

A check reads only the instruction, without a model (``app.check.intent``), the file's own
structure (``app.code.syntax``) and what the language's tools say of it without running it
(``app.check.compilers``). ``vouch(change, intent)`` returns every verdict on one ``Change``,
each a ``Suspect`` (``app.check.verdict``), in this order: ``suspect_deletion`` (lines dropped
that nothing asked to remove), then ``CHECKS``: ``no_change``, ``rename_left`` (a rename "A to
B" leaves A in its scope), ``sites_missed`` (a definition joined by "and" left unchanged),
``value_missed`` ("from a to b" not made), ``place_missed`` and ``name_missing``
(``app.check.asked``), ``outside_named`` (a hunk in no named definition, nor the asked rename),
``names_unbound``, ``param_unused``, ``param_dropped`` and ``definition_gone``
(``app.check.lost``), ``set_unread`` (``app.check.unread``), ``code_unchanged`` (only comments
or layout changed), ``keys_removed``, ``section_other`` (``app.check.asked``), ``entry_gone``
(``app.check.entry``), ``syntax_worse``, ``compile_worse``. Rules: ``docs/notes.md``.
Front ends write or apply a flagged result only when forced; a cut one (``truncated``) never.
"""

from __future__ import annotations

import re

from ..code.diff import Hunk, nonblank, split_lines
from ..code.names import code_lines, rename, uses, whole_word
from ..code.source import Change, Source, touches
from ..code.syntax import errors_warning
from .asked import name_missing, place_missed, section_other
from .bindings import kept_functions, unbound, unbound_reads
from .compilers import new_errors
from .config_keys import removed_keys
from .entry import entry_gone
from .intent import Intent
from .lost import definition_gone, param_dropped
from .nearby import NAME, called, code_names, comments_only
from .unread import set_unread
from .verdict import Suspect, Verdict, lines_said

TAIL_LINES = 3
TAIL_SHARE = 0.2
SHARE = 0.3
MIN_SHARE_LINES = 5


def suspect_deletion(c: Change, intent: Intent) -> Suspect | None:
    """The ``Suspect`` for a result that drops lines the instruction did not ask to remove."""
    if intent.removal:
        return None
    hunks = c.hunks
    if not hunks:
        return None
    n_old, total = len(c.old.lines), nonblank(c.old.text)
    last = hunks[-1]
    tail = nonblank(last.old_text) - nonblank(last.new_text)
    if last.end_line == n_old and tail > 0 and (tail >= TAIL_LINES or tail >= TAIL_SHARE * total):
        return Suspect(
            Verdict.DROPS_TAIL,
            tail,
            f"lines {last.start_line + 1}-{n_old}, the end of the file, are deleted ({tail} "
            "non-blank lines); the instruction asks to remove nothing",
        )
    lost = sum(nonblank(h.old_text) - nonblank(h.new_text) for h in hunks)
    if lost >= MIN_SHARE_LINES and total and lost >= SHARE * total:
        return Suspect(
            Verdict.DROPS_SHARE,
            lost,
            f"{lost} of the file's {total} non-blank lines are deleted ({lost / total:.0%}); "
            "the instruction asks to remove nothing",
        )
    if lost > 0 and intent.only_adds:
        at = next(h for h in hunks if nonblank(h.old_text) > nonblank(h.new_text))
        return Suspect(
            Verdict.DROPS_ON_ADD,
            lost,
            f"the result has {lost} fewer non-blank lines than the file (from line "
            f"{at.start_line + 1}), though the instruction only adds",
        )
    return None


# ---- what changed against what was asked ---------------------------------------------------


def _lines_list(lines: list[int]) -> str:
    """``line 3``, ``lines 3 and 7``, ``lines 3, 7, 9, 12, 15 and 4 more`` (1-based)."""
    shown = [str(n + 1) for n in lines[:5]]
    if len(lines) > 5:
        return f"lines {', '.join(shown)} and {len(lines) - 5} more"
    if len(shown) == 1:
        return f"line {shown[0]}"
    return f"lines {', '.join(shown[:-1])} and {shown[-1]}"


def asked_rename_scope(old: Source, intent: Intent) -> tuple[bool, list[tuple[int, int]] | None]:
    """``(known, scope)``: whether the instruction and the file alone fix where the asked
    rename applies, and that scope (``rename_scope``): across the file when it says so or A
    is a definition of the file, the named definitions (and A's own signature) when it
    names some; not known when it names no place for a name the file does not define."""
    if intent.rename is None:
        return True, []
    a = intent.rename[0]
    if intent.everywhere:
        return True, None
    defs = old.definitions
    own = [] if intent.rename_variable else [d for d in defs if d.name.rsplit(".", 1)[-1] == a]
    if intent.named:  # the named definitions, and the renamed one's own signature
        return True, [(d.start, d.end) for d in intent.named] + [
            (d.start, d.header_end) for d in own
        ]
    if own:
        return True, None  # a definition of the file: every use of it
    return False, None


def rename_scope(c: Change, intent: Intent) -> list[tuple[int, int]] | None:
    """Where the asked rename applies (module docstring), in ``c.old``'s lines; None for the
    whole file, [] when there is no rename."""
    known, scope = asked_rename_scope(c.old, intent)
    if known:
        return scope
    b = intent.rename[1]
    made = [d for d in c.old.definitions if any(touches(h, d) and b in h.new_text for h in c.hunks)]
    # the innermost definitions the model made the rename in
    inner = [
        d
        for d in made
        if not any(e is not d and d.start <= e.start and e.end <= d.end for e in made)
    ]
    return [(d.start, d.end) for d in inner] or None


def map_scope(c: Change, scope: list[tuple[int, int]] | None):
    """``scope`` (``c.old``'s lines) in ``c.new``'s line numbers (via the change's hunks)."""
    if scope is None:
        return None

    def at(line: int) -> int:
        shift = 0
        for h in c.hunks:
            if h.end_line <= line:
                shift += len(split_lines(h.new_text)) - (h.end_line - h.start_line)
        return line + shift

    return [(at(a), at(b)) for a, b in scope]


def rename_words(intent: Intent) -> bool:
    """True when the rename reaches comments and strings too (it says so)."""
    return intent.everywhere or intent.comments


def rename_attributes(old: Source, intent: Intent) -> bool:
    """True when the renamed name is reached as an attribute: it is a method of the file
    (a definition inside a class) or the instruction says method or attribute."""
    if intent.rename is None:
        return False
    if intent.rename_member:
        return True
    a = intent.rename[0]
    return not intent.rename_variable and any(
        d.depth > 0 and d.name.rsplit(".", 1)[-1] == a and "class" not in d.kind
        for d in old.definitions
    )


def rename_left(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when the asked rename leaves the old name in its scope (module docstring)."""
    if intent.rename is None:
        return None
    a, b = intent.rename
    scope = rename_scope(c, intent)
    attrs = rename_attributes(c.old, intent)
    if not uses(c.old.text, a, c.path, scope, attributes=attrs):
        return None  # nothing of that name to rename there
    left = uses(c.new.text, a, c.path, map_scope(c, scope), rename_words(intent), attrs)
    if not left:
        return None
    names = [d.name for d in intent.named if scope and (d.start, d.end) in scope]
    where = f" in {', '.join(names)}" if names else ""
    return Suspect(
        Verdict.RENAME_LEFT,
        0,
        f"{a} is still used{where} on {_lines_list(sorted({r for r, _ in left}))} "
        f"after the rename to {b}",
    )


def sites_missed(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a definition the change goes to ("A and B") is left unchanged."""
    if len(intent.each) < 2:
        return None
    hunks = c.hunks
    missed = [g for g in intent.each if not any(touches(h, d) for h in hunks for d in g)]
    if not missed or len(missed) == len(intent.each):  # all or none: other checks say it
        return None
    missed = [g[0] for g in missed]
    verb = "is" if len(missed) == 1 else "are"
    return Suspect(
        Verdict.SITE_MISSED,
        0,
        f"{' and '.join(d.name for d in missed)} {verb} not changed, though the instruction "
        "asks for the change there too",
    )


def value_missed(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when "from a to b" is asked and no changed line made that change."""
    if not intent.values:
        return None
    old, hunks = c.old.text, c.hunks
    for a, b in intent.values:
        if a not in old:  # the file never says it so: nothing to check against
            continue
        head = b.split()[0] if b.split() else b  # "60 in fetch": the value is 60
        made = [h for h in hunks if a in h.old_text and (b in h.new_text or head in h.new_text)]
        if not made:
            return Suspect(Verdict.VALUE_MISSED, 0, f"no line that held {a} now holds {b}")
        code = code_lines(old, a, c.path)
        if code and not any(h.start_line <= k < h.end_line for h in made for k in code):
            # "the default symbol … from "single" to "exec"": the docstring that says so
            # changed, not the code
            return Suspect(
                Verdict.VALUE_MISSED,
                0,
                f"{a} became {b} only in a docstring or comment; the code that holds {a} "
                f"(line {min(code) + 1}) is unchanged",
            )
    return None


def _is_rename(h: Hunk, intent: Intent, scope, path: str | None, made: list[str]) -> bool:
    """True when hunk ``h`` is the asked rename: made inside its scope, or the lines the
    program's rename changes outside it (``made``: the file renamed, by line; a renamed
    parameter's keyword at a call elsewhere)."""
    if intent.rename is None:
        return False
    if scope is not None and not any(a <= h.start_line and h.end_line <= b for a, b in scope):
        return h.end_line > h.start_line and "".join(made[h.start_line : h.end_line]) == h.new_text
    a, b = intent.rename
    return rename(h.old_text, a, b, path, None, True, True) == h.new_text


def outside_named(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a hunk lies in no definition the instruction names."""
    stray = unasked_hunks(c, intent)
    if not stray:
        return None
    named = ", ".join(d.name for d in intent.named)
    return Suspect(
        Verdict.OUTSIDE_NAMED,
        0,
        f"the result also changes {_lines_list([h.start_line for h in stray])}, outside "
        f"{named}, which the instruction names",
    )


def unasked_hunks(c: Change, intent: Intent) -> list[Hunk]:
    """The hunks ``outside_named`` finds (module docstring). A change "everywhere" asks for
    nothing outside the named definitions but the rename it names, if any. A hunk outside
    them that names a name the change inside them brought in or took out of their code (the
    constant it uses, the import it needs, a caller of the parameter it added, the renamed
    name in ``__all__`` or a usage note) goes with that change and is not stray; so does one
    that changes only comments, or one in a definition a named one calls
    (``app.check.nearby``)."""
    if not intent.named or (intent.everywhere and intent.rename is None):
        return []
    old, path, hunks = c.old.text, c.path, c.hunks
    scope = rename_scope(c, intent)
    made: list[str] = []
    if intent.rename is not None:
        words, attrs = rename_words(intent), rename_attributes(c.old, intent)
        made = split_lines(rename(old, *intent.rename, path, scope, words, attrs))
    inside = [h for h in hunks if any(c.within(h, d) for d in intent.named)]
    # names of the file's code the instruction says (MAX_ATTEMPTS, port), and those the
    # change inside brought in or took out
    said = set(NAME.findall(intent.instruction)) & code_names(old)
    moved = set()
    for h in inside:
        moved |= code_names(h.old_text) ^ code_names(h.new_text)

    def goes_with(h: Hunk) -> bool:
        both = h.old_text + h.new_text
        return bool(said & code_names(both) or moved & code_names(both, strings=True))

    stray = [
        h
        for h in hunks
        if h not in inside
        and not goes_with(h)
        and not _is_rename(h, intent, scope, path, made)
        and not comments_only(h, c.old.lang)
    ]
    near = called(c.old, intent.named) if stray else []  # read the file only when needed
    return [h for h in stray if not any(c.within(h, d) for d in near)]


_COMMENT_LINE = re.compile(r"\s*(?:#|//|/\*|\*)")


def names_unbound(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when the result reads a name that nothing defines and the original did
    not read."""
    new, path = c.new.text, c.path
    before, after = unbound(c.old.text, path, c.old.tree), unbound(new, path, c.new.tree)
    if before is None or after is None:
        return None
    left = intent.rename[0] if intent.rename else None  # rename_left says that one
    fresh = after - before - {left}
    if not fresh:
        return None
    lines = split_lines(new)
    first = unbound_reads(new, path, c.new.tree) or {}
    for name in fresh - first.keys():  # Python: its first use outside a comment line
        code = [r for r, _ in uses(new, name, path) if not _COMMENT_LINE.match(lines[r])]
        first[name] = code[0] if code else len(lines)
    named = sorted(fresh, key=lambda n: (first[n], n))[:3]
    said = ", ".join(f"{n} (line {first[n] + 1})" if first[n] < len(lines) else n for n in named)
    more = f" and {len(fresh) - len(named)} more" if len(fresh) > len(named) else ""
    are = "is" if len(fresh) == 1 else "are"
    it = "it" if len(fresh) == 1 else "them"
    return Suspect(
        Verdict.UNBOUND, 0, f"{said}{more} {are} used, but nothing in the file defines {it}"
    )


_OBJECT_IT = re.compile(r"\b(?!(?:and|but|or|so|then|that|when|where|if|because)\b)[a-z]+ it\b")


def _use_said(name: str, instruction: str) -> bool:
    """True when ``instruction`` says how parameter ``name`` is used: it names it again
    ("… and open the file with encoding=encoding"), or a verb after it takes it as its
    object ("… and pass it to InteractiveConsole"; not "it defaults to None")."""
    hits = list(whole_word(name).finditer(instruction))
    if len(hits) >= 2:
        return True
    return bool(hits) and _OBJECT_IT.search(instruction.lower(), hits[0].end()) is not None


def param_unused(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a parameter the result adds is not read in its function, unless the
    instruction asks for just that parameter there: it says the parameter's name and the
    function's and nothing of how the parameter is used ("Add a parameter strict=False to
    do_shorts")."""
    for qual, was, p in kept_functions(c.old.text, c.new.text, c.path):
        for name in p.names:
            if name in was.names or name in p.reads:
                continue
            said = _use_said(name, intent.instruction)
            asked = all(intent.says(word) for word in (name, qual.split(".")[-1]))
            if asked and not said:
                continue  # "add a parameter x to f": nothing says how it is used
            why = (
                "though the instruction says how to use it"
                if said
                else f"and the instruction does not ask for it in {qual}"
            )
            return Suspect(
                Verdict.PARAM_UNUSED,
                0,
                f"the new parameter {name} of {qual} (line {p.line}) is not used in it, {why}",
            )
    return None


def syntax_worse(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when the result parses with more errors than the original."""
    lang = c.old.lang
    warning = errors_warning(c.old.errors, c.new.errors, lang) if lang else None
    return Suspect(Verdict.SYNTAX, 0, warning) if warning else None


def compile_worse(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when the language's tool reports an error the original did not have."""
    found = new_errors(c.old.text, c.new.text, c.path)
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return Suspect(
        Verdict.COMPILE, 0, f"{found[0].describe()}{more}; the original has no such report"
    )


def keys_removed(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when a config file loses keys and the instruction asks for no removal."""
    if intent.removal:
        return None
    renamed = intent.rename[0] if intent.rename else None
    removed = removed_keys(c.old.text, c.new.text, c.path)
    gone = [k for k in removed or () if k.path[-1] != renamed]
    if not gone:
        return None
    said = ", ".join(
        k.dotted() + (f" (line {k.line + 1})" if k.line is not None else "") for k in gone[:3]
    )
    more = f" and {len(gone) - 3} more" if len(gone) > 3 else ""
    return Suspect(Verdict.REMOVED, 0, f"the result no longer has {said}{more}")


def _layout_free(text: str) -> list[str]:
    """The lines that are not blank, trailing white space dropped: what is left of layout."""
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def no_change(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when the result is the original, or only its blank lines and trailing spaces
    changed: in code or a config file (not Markdown or a file with no grammar, where a blank
    line can part paragraphs), for an instruction that says nothing of layout."""
    if c.old.text == c.new.text:
        return Suspect(Verdict.UNCHANGED, 0, "the answer changes nothing in the file")
    if intent.layout or c.old.lang in (None, "markdown"):
        return None
    if _layout_free(c.old.text) != _layout_free(c.new.text):
        return None
    return Suspect(
        Verdict.UNCHANGED, 0, "the answer changes only blank lines or trailing spaces in the file"
    )


def code_unchanged(c: Change, intent: Intent) -> Suspect | None:
    """The verdict when, in code (``Source.code``), the result changes only comments,
    docstrings or layout within lines, for an instruction that says nothing of them (after
    the checks that say what is missing, which say more)."""
    if intent.comments or intent.across or intent.layout:
        return None
    if c.old.code is None or c.old.code != c.new.code or no_change(c, intent) is not None:
        return None  # no_change says an answer that changes nothing or only blank lines
    return Suspect(
        Verdict.UNCHANGED,
        0,
        f"the answer changes no code, only comments, docstrings or white space (at "
        f"{lines_said(c.hunks)}), and the instruction does not ask for that",
    )


CHECKS = (
    no_change,
    rename_left,
    sites_missed,
    value_missed,
    place_missed,
    outside_named,
    names_unbound,
    param_unused,
    param_dropped,
    definition_gone,
    set_unread,
    name_missing,
    code_unchanged,
    keys_removed,
    section_other,
    entry_gone,
    syntax_worse,
    compile_worse,
)


def vouch(c: Change, intent: Intent) -> list[Suspect]:
    """Every verdict on ``c.new`` as the change ``intent`` asks of ``c.old`` (module docstring),
    the lost lines first; every check reads the one ``Change``."""
    out = [suspect_deletion(c, intent)]
    out += [check(c, intent) for check in CHECKS]
    return [s for s in out if s is not None]
