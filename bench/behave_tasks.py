"""The behaviour-judged edit suite: tasks on real files, each judged by running the result.

Contract: a task is a folder ``bench/data/behave/<set>/<name>/`` holding
  * ``task.toml``: ``name``, ``kind`` (what the edit does: ``param``, ``guard``,
    ``exception``, ``loop``, ``call``, ``return``, ``constant``, ``log``, ``repr``,
    ``rename``, ``value``, ``config``, ``doc``...), ``semantic`` (true when no rule could
    make it), ``lang``, ``file`` (the file to edit, in the folder), ``scope`` (1-based,
    inclusive line ranges of the original that may change; a line may be inserted from
    just before a range's first line to just after its last) and ``[instructions]``
    with three phrasings written before any code was tuned on them: ``suite`` (the
    change spelled out), ``user`` (the goal or symptom in a user's words) and ``terse``
    (as typed in an editor);
  * the original file, ``reference/<file>`` (one right answer) and ``check.py``: run as
    ``python -P check.py PATH`` on a copy of an edited file (``PATH`` keeps the file's
    name, alone in a temporary folder that is the working directory; ``-P``: the task's
    folder, which holds the original, is not on ``sys.path``), it exits 0 when the code
    behaves as asked and non-zero, with one line on why (its last line of output) when
    it does not.
``judge(task, new_text)`` is a ``Verdict``: right when the check passes and every changed
line is in scope (ranges that touch are one; blank lines between a range and an inserted
line do not count against it); ``validate(task)`` says what is wrong with a task (its
name is not its folder's, a file is missing, the check passes on the original, fails on
the reference, or the reference leaves scope). ``load(set_name)``
reads a set (``suite`` or ``holdout``). ``python -m specedit.bench.behave_tasks [SET...]``
validates the sets and exits non-zero on any problem.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..app.code.diff import compute_hunks

ROOT = Path(__file__).resolve().parent / "data" / "behave"
SETS = ("suite", "holdout")
PHRASINGS = ("suite", "user", "terse")
CHECK_SECONDS = 60


@dataclass(frozen=True)
class BehaveTask:
    name: str
    kind: str
    semantic: bool
    lang: str
    file: str
    scope: tuple[tuple[int, int], ...]
    instructions: dict[str, str]
    folder: Path

    def source(self) -> str:
        return (self.folder / self.file).read_text(encoding="utf-8")

    def reference(self) -> str:
        return (self.folder / "reference" / self.file).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Verdict:
    right: bool
    runs: bool
    """The check passed (the code does what was asked)."""
    in_scope: bool
    """Every changed line is one the task allows to change."""
    why: str = ""


def read_task(folder: Path) -> BehaveTask:
    meta = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    return BehaveTask(
        name=meta["name"],
        kind=meta["kind"],
        semantic=bool(meta.get("semantic", False)),
        lang=meta["lang"],
        file=meta["file"],
        scope=tuple((int(a), int(b)) for a, b in meta["scope"]),
        instructions={k: meta["instructions"].get(k, "") for k in PHRASINGS},
        folder=folder.resolve(),
    )


@cache
def load(set_name: str = "suite") -> tuple[BehaveTask, ...]:
    """The tasks of a set (``SETS``), by name; a set with no folder is an error."""
    base = ROOT / set_name
    if not base.is_dir():
        raise FileNotFoundError(f"no task set {set_name!r} at {base}")
    return tuple(read_task(d) for d in sorted(base.iterdir()) if (d / "task.toml").is_file())


def run_check(task: BehaveTask, text: str) -> tuple[bool, str]:
    """Whether ``task``'s check passes on ``text`` (as its file), and the check's last line."""
    with tempfile.TemporaryDirectory(prefix="behave-") as tmp:
        path = Path(tmp) / task.file
        path.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run(
                [sys.executable, "-P", str(task.folder / "check.py"), str(path)],
                capture_output=True,
                text=True,
                timeout=CHECK_SECONDS,
                cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            return False, f"the check ran over {CHECK_SECONDS} s"
    lines = done.stdout.strip().splitlines() or done.stderr.strip().splitlines()
    return done.returncode == 0, lines[-1] if lines else ""


def _ranges(task: BehaveTask, old_lines: list[str]) -> list[tuple[int, int]]:
    """``task.scope`` with ranges that touch or overlap merged, each widened over the blank
    lines next to it (an insertion lands after them or before them as the diff sees it)."""
    merged: list[list[int]] = []
    for lo, hi in sorted(task.scope):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    out = []
    for lo, hi in merged:
        while lo > 1 and not old_lines[lo - 2].strip():
            lo -= 1
        while hi < len(old_lines) and not old_lines[hi].strip():
            hi += 1
        out.append((lo, hi))
    return out


def out_of_scope(task: BehaveTask, old: str, new: str) -> list[tuple[int, int]]:
    """The changed line ranges of ``old`` (1-based, inclusive; an insertion before line
    ``n`` is ``(n, n - 1)``) that no range of ``task.scope`` allows (module docstring)."""
    ranges = _ranges(task, old.splitlines())
    bad = []
    for h in compute_hunks(old, new):
        a, b = h.start_line + 1, h.end_line  # 1-based first and last old line replaced
        if a > b:  # an insertion between lines b and a
            ok = any(lo - 1 <= b and a <= hi + 1 for lo, hi in ranges)
        else:
            ok = any(lo <= a and b <= hi for lo, hi in ranges)
        if not ok:
            bad.append((a, b))
    return bad


def judge(task: BehaveTask, new_text: str | None) -> Verdict:
    if new_text is None:
        return Verdict(False, False, True, "no result")
    old = task.source()
    if new_text == old:
        return Verdict(False, False, True, "unchanged")
    runs, why = run_check(task, new_text)
    bad = out_of_scope(task, old, new_text)
    if bad:
        where = ", ".join(f"{a}-{b}" if a <= b else f"before {a}" for a, b in bad)
        why = "; ".join(filter(None, [why if not runs else "", f"lines {where} out of scope"]))
    return Verdict(runs and not bad, runs, not bad, "" if runs and not bad else why)


def validate(task: BehaveTask) -> list[str]:
    """What is wrong with ``task`` ([] when nothing is)."""
    problems = []
    if task.name != task.folder.name:
        problems.append(f"its name is not its folder's ({task.folder.name})")
    if not all(task.instructions.values()):
        problems.append("needs three instructions: " + ", ".join(PHRASINGS))
    files = (task.folder / task.file, task.folder / "reference" / task.file)
    missing = [str(f) for f in (*files, task.folder / "check.py") if not f.is_file()]
    if missing:
        return [*problems, f"missing: {', '.join(missing)}"]
    old, ref = task.source(), task.reference()
    if run_check(task, old)[0]:
        problems.append("the check passes on the original")
    ok, why = run_check(task, ref)
    if not ok:
        problems.append(f"the check fails on the reference: {why}")
    bad = out_of_scope(task, old, ref)
    if bad:
        problems.append(f"the reference changes lines out of scope: {bad}")
    return problems


def main(argv: list[str] | None = None) -> int:
    sets = (argv if argv is not None else sys.argv[1:]) or list(SETS)
    bad = 0
    for s in sets:
        tasks = load(s)
        if not tasks:
            bad += 1
            sys.stderr.write(f"{s}: no tasks\n")
        for t in tasks:
            for p in validate(t):
                bad += 1
                sys.stderr.write(f"{s}/{t.name}: {p}\n")
        sys.stderr.write(f"{s}: {len(tasks)} tasks checked\n")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
