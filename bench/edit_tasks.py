"""The edit suite: instructions on real files, each with its exact right answer.

Contract: ``EDIT_TASKS`` are ``EditTask``\\ s on the files vendored in ``bench/data``
(see its README: standard-library modules, none used by the other benchmarks, and
config files and docs of our own). ``HOLDOUT_TASKS`` are tasks of the same kinds on
other files, kept out of any tuning: they check that a gain holds outside the suite
(``TASK_SETS`` names both). The first 24 tasks are written here, the rest in
``bench/edit_tasks_more.py``. ``task.source()`` is the text to edit (for a ``bug``
task, the file with the bug planted), and ``task.judge(new_text)`` says whether a
result is right: the file with exactly the expected change and every other byte as it
was (``task.expected()``), or, for a change with more than one right answer (type
hints), a check that the code is unchanged apart from the annotations and that only
signature lines changed. Kinds:
  * ``line``: a one-line change; ``local``: rename a local variable in one function;
  * ``two``: a change in two places or more (functions far apart, a method and its
    calls); ``param``: add a parameter;
  * ``bug``: fix an obvious bug (the task plants it);
  * ``config``: a few-line change to a JSON, TOML, INI or shell file (a value, a key
    added, a flag); ``doc``: a few-line change to Markdown (a sentence, a list item);
  * ``broad``: a rename used everywhere, type hints on every signature;
  * ``big``: a one-line change to a file of 2,000 lines or more (longer than the
    default context).
``FEW_LINES`` are the kinds that change a few lines.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .edit_tasks_more import HOLDOUT, MORE

DATA = Path(__file__).resolve().parent / "data"
FEW_LINES = ("line", "local", "two", "param", "bug", "config", "doc")
KINDS = (*FEW_LINES, "broad", "big")


@cache
def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class EditTask:
    name: str
    kind: str
    file: str
    instruction: str
    changes: tuple[tuple[str, str], ...] = ()
    """Exact ``(old, new)`` replacements; each ``old`` occurs once in the source."""
    rename: tuple[str, str] | None = None
    """A whole-word rename, everywhere or only inside ``scope``."""
    scope: tuple[str, str] | None = None
    """The rename applies between the first line starting with ``scope[0]`` and the next
    one starting with ``scope[1]``."""
    bug: tuple[str, str] | None = None
    """``(right, wrong)``: the source has ``wrong`` planted; the answer is the file."""
    check: str | None = None
    """A named check instead of an exact answer (``type_hints``)."""
    kept: tuple[tuple[str, str], ...] = ()
    """Exact ``(renamed, right)`` replacements made after the rename, each ``renamed``
    occurring once: where the whole-word rename reaches a word that is not the renamed name
    (``os.open(..., dir_fd=...)`` names os's own parameter)."""

    def source(self) -> str:
        text = read(self.file)
        if self.bug is not None:
            right, wrong = self.bug
            assert text.count(right) == 1, (self.name, right)
            text = text.replace(right, wrong)
        return text

    def expected(self) -> str | None:
        """The exact right answer (None for a task judged by a check)."""
        if self.check is not None:
            return None
        if self.bug is not None:
            return read(self.file)
        text = self.source()
        for old, new in self.changes:
            assert text.count(old) == 1, (self.name, old)
            text = text.replace(old, new)
        if self.rename is not None:
            old, new = self.rename
            word = re.compile(rf"\b{re.escape(old)}\b")
            if self.scope is None:
                text = word.sub(new, text)
            else:
                a = text.index("\n" + self.scope[0]) + 1
                b = text.index("\n" + self.scope[1], a) + 1
                text = text[:a] + word.sub(new, text[a:b]) + text[b:]
        for renamed, right in self.kept:
            assert text.count(renamed) == 1, (self.name, renamed)
            text = text.replace(renamed, right)
        return text

    def judge(self, new_text: str | None) -> bool:
        """True when ``new_text`` is a right answer (module docstring)."""
        if new_text is None:
            return False
        if self.check == "type_hints":
            return type_hints_ok(self.source(), new_text)
        return new_text == self.expected()


def _strip_annotations(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
            args = node.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None:
                    a.annotation = None
    return ast.dump(tree)


def _signature_lines(tree: ast.AST) -> set[int]:
    """0-based lines of every def's signature (from ``def`` to the line before its body)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines.update(range(node.lineno - 1, node.body[0].lineno - 1))
    return lines


def type_hints_ok(old: str, new: str) -> bool:
    """Every parameter (but self and cls) and every return is annotated, the code is the
    same without the annotations, and only signature lines changed."""
    try:
        old_tree, new_tree = ast.parse(old), ast.parse(new)
    except SyntaxError:
        return False
    for node in ast.walk(new_tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            named = [p for p in params if p is not None and p.arg not in ("self", "cls")]
            if node.returns is None or any(p.annotation is None for p in named):
                return False
    if _strip_annotations(ast.parse(old)) != _strip_annotations(ast.parse(new)):
        return False
    sig_old, sig_new = _signature_lines(old_tree), _signature_lines(new_tree)
    ops = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in ops.get_opcodes():
        if tag != "equal" and not (set(range(i1, i2)) <= sig_old and set(range(j1, j2)) <= sig_new):
            return False
    return True


def _t(name, kind, file, instruction, **kw) -> EditTask:
    return EditTask(name, kind, file, instruction, **kw)


_FIRST: tuple[EditTask, ...] = (
    # one line
    _t(
        "reprlib-maxstring",
        "line",
        "reprlib.py",
        "In Repr.__init__, change maxstring from 30 to 40.",
        changes=(("        self.maxstring = 30\n", "        self.maxstring = 40\n"),),
    ),
    _t(
        "sched-blocking",
        "line",
        "sched.py",
        "Give the blocking parameter of scheduler.run a default of False instead of True.",
        changes=(("    def run(self, blocking=True):", "    def run(self, blocking=False):"),),
    ),
    _t(
        "quopri-maxline",
        "line",
        "quopri.py",
        "Change MAXLINESIZE from 76 to 72.",
        changes=(("MAXLINESIZE = 76\n", "MAXLINESIZE = 72\n"),),
    ),
    _t(
        "cmd-columnize",
        "line",
        "cmd.py",
        "Change the default displaywidth of Cmd.columnize from 80 to 100.",
        changes=(
            (
                "def columnize(self, list, displaywidth=80):",
                "def columnize(self, list, displaywidth=100):",
            ),
        ),
    ),
    _t(
        "string-delimiter",
        "line",
        "string.py",
        "Change the delimiter of Template from '$' to '%'.",
        changes=(("    delimiter = '$'\n", "    delimiter = '%'\n"),),
    ),
    _t(
        "timeit-number",
        "line",
        "timeit.py",
        "Change default_number from 1000000 to 100000.",
        changes=(("default_number = 1000000\n", "default_number = 100000\n"),),
    ),
    _t(
        "codeop-symbol",
        "line",
        "codeop.py",
        'Change the default symbol of the function compile_command from "single" to "exec".',
        changes=(
            (
                'def compile_command(source, filename="<input>", symbol="single"):',
                'def compile_command(source, filename="<input>", symbol="exec"):',
            ),
        ),
    ),
    _t(
        "getopt-isinstance",
        "line",
        "getopt.py",
        "In getopt(), test longopts with isinstance(longopts, str), as gnu_getopt does.",
        changes=(('    if type(longopts) == type(""):\n', "    if isinstance(longopts, str):\n"),),
    ),
    # a local variable in one function
    _t(
        "reprlib-pieces",
        "local",
        "reprlib.py",
        "In Repr.repr_dict, rename the local variable pieces to parts.",
        rename=("pieces", "parts"),
        scope=("    def repr_dict", "    def repr_str"),
    ),
    _t(
        "graphlib-n2i",
        "local",
        "graphlib.py",
        "In TopologicalSorter.done, rename the local variable n2i to node2info.",
        rename=("n2i", "node2info"),
        scope=("    def done", "    def _find_cycle"),
    ),
    _t(
        "sched-pop",
        "local",
        "sched.py",
        "In scheduler.run, rename the local variable pop to heappop.",
        changes=(
            ("        pop = heapq.heappop\n", "        heappop = heapq.heappop\n"),
            ("                    pop(q)\n", "                    heappop(q)\n"),
        ),
    ),
    # two functions far apart
    _t(
        "queue-timeouts",
        "two",
        "queue.py",
        "Change the default timeout of Queue.put and of Queue.get from None to 5.0.",
        changes=(
            (
                "    def put(self, item, block=True, timeout=None):\n        '''Put an",
                "    def put(self, item, block=True, timeout=5.0):\n        '''Put an",
            ),
            (
                "notify()\n\n    def get(self, block=True, timeout=None):\n",
                "notify()\n\n    def get(self, block=True, timeout=5.0):\n",
            ),
        ),
    ),
    _t(
        "timeit-reindent",
        "two",
        "timeit.py",
        "Rename the function reindent to reindent_source, in its definition and where "
        "Timer.__init__ calls it.",
        changes=(
            ("def reindent(src, indent):", "def reindent_source(src, indent):"),
            ("setup = reindent(setup, 4)", "setup = reindent_source(setup, 4)"),
            ("stmt = reindent(stmt, 8)", "stmt = reindent_source(stmt, 8)"),
        ),
    ),
    _t(
        "getopt-returns",
        "two",
        "getopt.py",
        "In do_longs and in do_shorts, write the returned pair in parentheses: "
        "return (opts, args).",
        changes=(
            (
                "    opts.append(('--' + opt, optarg or ''))\n    return opts, args\n",
                "    opts.append(('--' + opt, optarg or ''))\n    return (opts, args)\n",
            ),
            (
                "        opts.append(('-' + opt, optarg))\n    return opts, args\n",
                "        opts.append(('-' + opt, optarg))\n    return (opts, args)\n",
            ),
        ),
    ),
    # a new parameter
    _t(
        "getopt-strict",
        "param",
        "getopt.py",
        "Add a parameter strict=False at the end of the parameters of do_shorts.",
        changes=(
            (
                "def do_shorts(opts, optstring, shortopts, args):",
                "def do_shorts(opts, optstring, shortopts, args, strict=False):",
            ),
        ),
    ),
    _t(
        "netrc-encoding",
        "param",
        "netrc.py",
        'Add a parameter encoding="utf-8" to netrc.__init__, after file, and open the file '
        'with encoding=encoding instead of encoding="utf-8".',
        changes=(
            (
                "    def __init__(self, file=None):",
                '    def __init__(self, file=None, encoding="utf-8"):',
            ),
            (
                '            with open(file, encoding="utf-8") as fp:',
                "            with open(file, encoding=encoding) as fp:",
            ),
        ),
    ),
    # an obvious bug, planted
    _t(
        "getopt-bug",
        "bug",
        "getopt.py",
        "Fix the bug in short_has_arg: it looks for the ':' two characters after the option "
        "letter instead of right after it.",
        bug=("return shortopts.startswith(':', i+1)", "return shortopts.startswith(':', i+2)"),
    ),
    _t(
        "graphlib-bug",
        "bug",
        "graphlib.py",
        "Fix the bug in TopologicalSorter.done: when a node is done, the number of "
        "predecessors of each successor must go down by one, not up.",
        bug=(
            "                successor_info.npredecessors -= 1\n",
            "                successor_info.npredecessors += 1\n",
        ),
    ),
    _t(
        "netrc-bug",
        "bug",
        "netrc.py",
        "Fix the bug in netrc._parse: it raises the 'missing name' error when the entry has "
        "a name, instead of when it has none.",
        bug=("            if not entryname:\n", "            if entryname:\n"),
    ),
    # broad edits
    _t(
        "chunk-rename",
        "broad",
        "chunk.py",
        "Rename the class Chunk to RiffChunk everywhere, comments and docstrings included.",
        rename=("Chunk", "RiffChunk"),
    ),
    _t(
        "glob-dirfd",
        "broad",
        "glob.py",
        "Rename the parameter dir_fd to dirfd in every function, and every use of it.",
        rename=("dir_fd", "dirfd"),
        # os.open, os.lstat and os.stat take dir_fd: dirfd= there raises TypeError
        kept=(
            ("_dir_open_flags, dirfd=dirfd)", "_dir_open_flags, dir_fd=dirfd)"),
            ("os.lstat(pathname, dirfd=dirfd)", "os.lstat(pathname, dir_fd=dirfd)"),
            ("os.stat(pathname, dirfd=dirfd)", "os.stat(pathname, dir_fd=dirfd)"),
        ),
    ),
    _t(
        "linecache-hints",
        "broad",
        "linecache.py",
        "Add type hints to every function signature.",
        check="type_hints",
    ),
    # a file longer than the context
    _t(
        "argparse-position",
        "big",
        "argparse.py",
        "In HelpFormatter.__init__, change the default of max_help_position from 24 to 30.",
        changes=(
            (
                "                 max_help_position=24,\n",
                "                 max_help_position=30,\n",
            ),
        ),
    ),
    _t(
        "argparse-abbrev",
        "big",
        "argparse.py",
        "In ArgumentParser.__init__, change the default of allow_abbrev from True to False.",
        changes=(
            ("                 allow_abbrev=True,\n", "                 allow_abbrev=False,\n"),
        ),
    ),
)


EDIT_TASKS: tuple[EditTask, ...] = _FIRST + tuple(EditTask(**kw) for kw in MORE)
HOLDOUT_TASKS: tuple[EditTask, ...] = tuple(EditTask(**kw) for kw in HOLDOUT)
TASK_SETS: dict[str, tuple[EditTask, ...]] = {"suite": EDIT_TASKS, "holdout": HOLDOUT_TASKS}
