"""Benchmark tasks: real files and Spec-Bench prompts, turned into chat messages.

Contract: ``load_tasks(kinds, n_per_kind, max_lines)`` returns ``Task`` objects;
``task.prompt(target)`` builds its ``app.runtime.prompt.Prompt`` through the product's own
prompt path (``rewrite_prompt`` for rewrite tasks, whose prompt has a fence; ``splice``
for Spec-Bench prompts, which have none). Kinds:
  * ``copy``: identity copy of a real Python standard-library file (truncated
    to ``max_lines`` lines at a top-level boundary);
  * ``edit``: an edit instruction on a real standard-library file;
  * ``summarization``, ``rag``: copy-heavy Spec-Bench categories;
  * ``writing``, ``roleplay``: free-form Spec-Bench controls.
Spec-Bench ships with the project: ``bench/data/spec_bench/question.jsonl`` holds the
first :data:`VENDORED_PER_KIND` rows of each kind above (Apache-2.0, see the README there).
``$SPECEDIT_SPEC_BENCH`` points at another copy (the full file, for more rows). Data that
is missing, unreadable or short of rows is skipped with a warning, never an error.
"""

from __future__ import annotations

import json
import logging
import os
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from ..app.edit.prompts import rewrite_prompt
from ..app.runtime.prompt import CTX_MARK, Prompt, splice
from ..engine.backend import TargetModel

log = logging.getLogger(__name__)

COPY_FILES = ("textwrap.py", "bisect.py", "colorsys.py", "shlex.py", "heapq.py", "fnmatch.py")
EDITS = (
    ("textwrap.py", "Rename the function dedent to remove_common_indent everywhere."),
    ("colorsys.py", "Add type hints to every function signature."),
    ("fnmatch.py", "Rename the parameter pat to pattern in every function."),
    ("shlex.py", "Add a one-line docstring to every method of shlex that lacks one."),
)
SPEC_KINDS = ("summarization", "rag", "writing", "roleplay", "qa", "math_reasoning")
VENDORED_PER_KIND = 10  # rows of each SPEC_KINDS kind in bench/data/spec_bench/question.jsonl
SPEC_BENCH_FILE = Path(__file__).resolve().parent / "data" / "spec_bench" / "question.jsonl"


@dataclass
class Task:
    kind: str
    name: str
    source_text: str = ""
    """The file a rewrite task rewrites; the prompt text of a Spec-Bench task."""
    instruction: str | None = None
    """A rewrite task's instruction (None: a free-text Spec-Bench prompt)."""
    messages: list[dict[str, str]] = field(default_factory=list)
    pieces: dict[str, str] = field(default_factory=dict)

    @property
    def rewrite(self) -> bool:
        return self.instruction is not None

    def prompt(self, target: TargetModel) -> Prompt:
        """The task's prompt on ``target``'s tokenizer."""
        if self.instruction is not None:
            return rewrite_prompt(target, self.source_text, self.instruction, path=self.name)
        ids, spans = splice(target, self.messages, "", self.pieces)
        return Prompt(tuple(ids), tuple(spans))


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def truncate_lines(text: str, max_lines: int) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) <= max_lines:
        return text
    cut = max_lines
    # end at a top-level boundary so the excerpt is a well-formed file
    for i in range(max_lines, max_lines // 2, -1):
        if lines[i - 1].strip() == "" and i < len(lines) and not lines[i][:1].isspace():
            cut = i
            break
    return "".join(lines[:cut])


def _rewrite_task(kind: str, fname: str, instruction: str, max_lines: int) -> Task | None:
    path = stdlib_dir() / fname
    if not path.exists():
        log.warning("bench: %s not found, skipped", path)
        return None
    text = truncate_lines(path.read_text(encoding="utf-8"), max_lines)
    return Task(kind, fname, text, instruction)


def spec_bench_path() -> Path:
    """``$SPECEDIT_SPEC_BENCH`` if set, else the subset vendored with the project."""
    env = os.environ.get("SPECEDIT_SPEC_BENCH")
    return Path(env).expanduser() if env else SPEC_BENCH_FILE


def _spec_rows(path: Path) -> list[dict]:
    """The well-formed rows of a Spec-Bench ``question.jsonl``; [] (and a warning) if the
    file is missing or unreadable."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        log.warning("bench: cannot read Spec-Bench data at %s (%s); its kinds are skipped", path, e)
        return []
    rows = []
    for line in lines:
        try:
            row = json.loads(line) if line.strip() else None
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("turns"), list) and row["turns"]:
            rows.append(row)
    return rows


def _spec_tasks(kind: str, n: int) -> list[Task]:
    path = spec_bench_path()
    out = []
    for row in _spec_rows(path):
        if row.get("category") != kind:
            continue
        turn = str(row["turns"][0])
        out.append(
            Task(
                kind,
                f"{kind}-{row.get('question_id', len(out))}",
                turn,
                messages=[{"role": "user", "content": CTX_MARK.format(0)}],
                pieces={CTX_MARK.format(0): turn},
            )
        )
        if len(out) >= n:
            break
    if len(out) < n:
        more = " (set $SPECEDIT_SPEC_BENCH to the full file for more)" if out else ""
        log.warning("bench: %d of %d %s tasks in %s%s", len(out), n, kind, path, more)
    return out


def load_tasks(kinds: list[str], n_per_kind: int = 2, max_lines: int = 60) -> list[Task]:
    tasks: list[Task] = []
    for kind in kinds:
        if kind == "copy":
            for f in COPY_FILES[:n_per_kind]:
                t = _rewrite_task(
                    "copy", f, "Output the file exactly as it is, unchanged.", max_lines
                )
                tasks += [t] if t else []
        elif kind == "edit":
            for f, instr in EDITS[:n_per_kind]:
                t = _rewrite_task("edit", f, instr, max_lines)
                tasks += [t] if t else []
        elif kind in SPEC_KINDS:
            tasks += _spec_tasks(kind, n_per_kind)
        else:
            raise ValueError(f"unknown task kind {kind!r}")
    return tasks
