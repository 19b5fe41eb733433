"""Why an edit result is wrong: one failure class per wrong result of the edit suite.

Contract: ``classify(task, result_text, stats) -> str`` gives a wrong result of an
``EditTask`` (``bench/edit_tasks.py``) one of ``CLASSES``, and "" for a right one.
``result_text`` is the rewrite's new text (None when nothing came back); ``stats`` is the
edits bench's row for the run, or any mapping with the result's ``status`` and
``message`` and the stats' ``edit_mode`` and ``edit_fallback`` (an ``error`` key, a mode
that could not run, counts as a status that is not ok). The result is compared with
``task.expected()`` line by line (``difflib``): the *sites* are the lines the expected
change replaces (line for line where it replaces as many lines as it has, else the
whole hunk) and each place it inserts or deletes lines. A site is *right* when its
expected lines are in the result, *untouched* when the source's lines are still there,
else *wrong*; a difference from the expected file that is at no site is an *extra
hunk*. A hunk is *cosmetic* when the lines on both sides are the same once white space
and comments are dropped. Precedence, first match wins:

  1. ``malformed answer``: nothing came back from a blocks mode (status ``no_output`` or
     ``truncated``) and no whole rewrite followed: the blocks could not be read or
     placed (the message says why);
  2. ``fallback went wrong``: blocks were given up (``edit_fallback`` is set) and the
     whole rewrite that followed is wrong, or brought nothing back;
  3. ``change not made``: nothing came back otherwise (status not ok, an error), or the
     result is the source, byte for byte;
  4. ``copied line corrupted``: the result ends early (lines of the file's tail are
     dropped);
  5. ``wrong place``: no site was touched, and a hunk that is not cosmetic changed
     lines elsewhere;
  6. ``one site of several``: some sites were touched (right or wrong), others not;
  7. ``wrong change``: every site was touched, and one is wrong beyond white space and
     comments (the expected lines were changed, but not into the expected text);
  8. ``extra changes``: every site is right (or cosmetically off), plus an extra hunk
     that is not cosmetic;
  9. ``copied line corrupted``: what is left: only cosmetic differences (a copied line
     whose white space or comment differs, a blank line added or lost).
A task judged by a check (type hints) has no expected text: the source is compared with
the result instead (``_classify_hints``).

``failure_table(rows)`` counts the classes of wrong rows per model and mode, for the
bench's report and its JSON summary.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from .edit_tasks import EditTask, _signature_lines, _strip_annotations

MALFORMED = "malformed answer"
FALLBACK = "fallback went wrong"
NOT_MADE = "change not made"
CORRUPTED = "copied line corrupted"
WRONG_PLACE = "wrong place"
ONE_SITE = "one site of several"
WRONG_CHANGE = "wrong change"
EXTRA = "extra changes"
CLASSES = (MALFORMED, FALLBACK, NOT_MADE, CORRUPTED, WRONG_PLACE, ONE_SITE, WRONG_CHANGE, EXTRA)

_HASH_COMMENTS = (".py", ".sh", ".toml", ".ini", ".cfg", ".yaml", ".yml")
_WS = re.compile(r"\s+")
_HASH = re.compile(r"(?:^|(?<=\s))#.*")


def classify(task: EditTask, result_text: str | None, stats: Mapping) -> str:
    """The failure class of a result of ``task`` ("" when it is right): module docstring."""
    if task.judge(result_text):
        return ""
    status = "error" if "error" in stats else stats.get("status", "ok")
    mode = stats.get("edit_mode") or ""
    if stats.get("edit_fallback"):
        return FALLBACK
    if result_text is None or status != "ok":
        if mode.endswith("blocks") and status in ("no_output", "truncated"):
            return MALFORMED
        return NOT_MADE
    source = task.source()
    if result_text == source:
        return NOT_MADE
    expected = task.expected()
    if expected is None:
        return _classify_hints(task, source, result_text)
    return _classify_lines(task.file, source, expected, result_text)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _kept(a: list[str], b: list[str]) -> set[int]:
    """Indices of ``a``'s lines that are in ``b``, in place (the equal blocks)."""
    return {i for tag, i1, i2, _, _ in _opcodes(a, b) if tag == "equal" for i in range(i1, i2)}


def _norm(lines: Iterable[str], file: str) -> str:
    """The lines without white space, and without comments in files that have them (a
    ``#`` at a line's start or after white space; a ``;`` line of an INI file)."""
    hash_comments = file.endswith(_HASH_COMMENTS)
    out = []
    for line in lines:
        if hash_comments:
            line = _HASH.sub("", line)
        if file.endswith(".ini") and line.lstrip().startswith(";"):
            line = ""
        out.append(_WS.sub("", line))
    return "".join(out)


def _tail_dropped(a: list[str], b: list[str]) -> bool:
    """``b`` is ``a`` with lines at its end left out (what differs before them aside)."""
    ops = _opcodes(a, b)
    if not ops:
        return False
    tag, i1, i2, j1, j2 = ops[-1]
    return tag == "delete" and i2 == len(a) and j1 == len(b) and _norm(a[i1:i2], "") != ""


def _sites(source: list[str], expected: list[str]) -> list[tuple[range, range]]:
    """The expected change's sites: (source lines, expected lines), module docstring."""
    sites = []
    for tag, i1, i2, j1, j2 in _opcodes(source, expected):
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            sites += [
                (range(i, i + 1), range(j, j + 1))
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
        else:
            sites.append((range(i1, i2), range(j1, j2)))
    return sites


def _hunks_at(ops: list, lo: int, hi: int) -> list:
    """The hunks of ``ops`` whose first side meets lines ``[lo, hi)`` (a position when
    empty)."""
    hi = max(hi, lo + 1)
    return [op for op in ops if op[1] < hi and max(op[2], op[1] + 1) > lo]


def _classify_lines(file: str, source: str, expected: str, result: str) -> str:
    src, exp, res = _lines(source), _lines(expected), _lines(result)
    if _tail_dropped(exp, res):
        return CORRUPTED
    sites = _sites(src, exp)
    src_kept, exp_kept = _kept(src, res), _kept(exp, res)
    # a site inserts (no source line) or deletes (no expected line): it is untouched or
    # right when the lines around it are in place and the diff has no hunk there
    errors = [op for op in _opcodes(exp, res) if op[0] != "equal"]
    made = [op for op in _opcodes(src, res) if op[0] != "equal"]

    state = []
    for s, e in sites:
        if (e and all(j in exp_kept for j in e)) or (
            not e and not _hunks_at(errors, e.start, e.stop)
        ):
            state.append("right")
        elif (s and all(i in src_kept for i in s)) or (
            not s and not _hunks_at(made, s.start, s.stop)
        ):
            state.append("untouched")
        else:
            state.append("wrong")
    at_site = set()
    for _, e in sites:
        at_site.update(range(e.start, max(e.stop, e.start + 1)))
    real_extra = any(
        not (set(range(j1, max(j2, j1 + 1))) & at_site)
        and _norm(exp[j1:j2], file) != _norm(res[k1:k2], file)
        for _, j1, j2, k1, k2 in errors
    )
    n_untouched = state.count("untouched")
    if n_untouched == len(sites):
        return WRONG_PLACE if real_extra else CORRUPTED
    if n_untouched:
        return ONE_SITE
    wrong_sites = [e for (_, e), st in zip(sites, state, strict=True) if st == "wrong"]
    for e in wrong_sites:
        for _, j1, j2, k1, k2 in _hunks_at(errors, e.start, e.stop):
            if _norm(exp[j1:j2], file) != _norm(res[k1:k2], file):
                return WRONG_CHANGE
    return EXTRA if real_extra else CORRUPTED


def _classify_hints(task: EditTask, source: str, result: str) -> str:
    """A type-hints task (``edit_tasks.type_hints_ok``): what can be told without an
    expected text. Code changed beyond the annotations: extra changes (wrong place when
    no annotation was added); some signatures left bare: one site of several; else the
    lines that changed outside the signatures: cosmetic or not."""
    src, res = _lines(source), _lines(result)
    if _tail_dropped(src, res):
        return CORRUPTED
    try:
        old_tree, new_tree = ast.parse(source), ast.parse(result)
    except SyntaxError:
        return CORRUPTED if _norm(src, task.file) == _norm(res, task.file) else WRONG_CHANGE
    hinted, bare = 0, 0
    for node in ast.walk(new_tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            named = [p for p in params if p is not None and p.arg not in ("self", "cls")]
            done = node.returns is not None and all(p.annotation is not None for p in named)
            hinted, bare = hinted + done, bare + (not done)
    if _strip_annotations(old_tree) != _strip_annotations(ast.parse(result)):
        return EXTRA if hinted else WRONG_PLACE
    if bare:
        return ONE_SITE if hinted else NOT_MADE
    sig_old, sig_new = _signature_lines(old_tree), _signature_lines(new_tree)
    for tag, i1, i2, j1, j2 in _opcodes(src, res):
        inside = set(range(i1, i2)) <= sig_old and set(range(j1, j2)) <= sig_new
        if (
            tag != "equal"
            and not inside
            and _norm(src[i1:i2], task.file) != _norm(res[j1:j2], task.file)
        ):
            return EXTRA
    return CORRUPTED


def failure_table(rows: Iterable[Mapping]) -> dict[str, dict[str, int]]:
    """Per mode, how many wrong rows fell in each class (``row["failure"]``), in the order
    of ``CLASSES``; a wrong row without a class counts as ``unclassified``."""
    counts: dict[str, Counter] = {}
    for r in rows:
        c = counts.setdefault(r["mode"], Counter())
        if not r.get("right"):
            c[r.get("failure") or "unclassified"] += 1
    order = (*CLASSES, "unclassified")
    return {mode: {k: c[k] for k in order if c[k]} for mode, c in counts.items()}
