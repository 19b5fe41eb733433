"""A language's own tools, asked whether a change made the file worse.

Contract: ``new_errors(old, new, path) -> list[Diagnostic]`` lists the errors a tool reports
on ``new`` that it does not report on ``old`` (compared by tool and message, not by line, so
an error the original already had, such as a crate that is not at hand, never counts), first
by line. Only tools that read code without running any of it:

  * Python: ``compile()`` in this process (``IndentationError``, ``'return' outside function``:
    what a tree-sitter parse lets through);
  * Rust: ``rustc --emit=metadata --crate-type=lib`` on a private copy (names and types:
    ``error[E0308]: mismatched types``; no ``--extern`` is passed, so no procedural macro runs);
  * shell: ``bash -n``.

A tool that is not installed, fails to start or takes longer than ``TIMEOUT_S`` reports
nothing (logged); so does a language without one here. Results are cached by text.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from .syntax import language_name

log = logging.getLogger(__name__)

TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Diagnostic:
    """One error a tool reported: which tool, the 1-based line (0: none given), its words."""

    tool: str
    line: int
    message: str

    def key(self) -> tuple[str, str]:
        return self.tool, self.message

    def describe(self) -> str:
        at = f"line {self.line}: " if self.line else ""
        return f"{self.tool} reports {at}{self.message}"


def _python(text: str) -> list[Diagnostic]:
    try:
        compile(text, "<file>", "exec", dont_inherit=True)
    except SyntaxError as e:
        return [Diagnostic("python", e.lineno or 0, f"{type(e).__name__}: {e.msg}")]
    except ValueError as e:  # a NUL byte in the source
        return [Diagnostic("python", 0, str(e))]
    return []


def _run_on_copy(text: str, name: str, argv_of) -> subprocess.CompletedProcess | None:
    """Run ``argv_of(path, folder)`` on a private copy of ``text`` named ``name``; None when
    the tool did not answer in ``TIMEOUT_S``."""
    with tempfile.TemporaryDirectory(prefix="specedit-check-") as tmp:
        src = os.path.join(tmp, name)
        with open(src, "w", encoding="utf-8") as f:
            f.write(text)
        argv = argv_of(src, tmp)
        try:
            return subprocess.run(
                argv, cwd=tmp, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            log.info("%s did not answer: %s", argv[0], e)
            return None


def _rust(text: str) -> list[Diagnostic]:
    rustc = shutil.which("rustc")
    if rustc is None:
        return []
    done = _run_on_copy(
        text,
        "file.rs",
        lambda src, tmp: (
            [rustc, "--edition=2021", "--crate-type=lib", "--emit=metadata"]
            + ["--error-format=json", "-o", os.path.join(tmp, "out.rmeta"), src]
        ),
    )
    if done is None:
        return []
    out = []
    for line in done.stderr.splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if not isinstance(d, dict) or d.get("level") != "error" or not d.get("code"):
            continue  # warnings, and "aborting due to N previous errors"
        spans = [s for s in d.get("spans", []) if s.get("is_primary")]
        code = d["code"].get("code", "")
        line_no = spans[0].get("line_start", 0) if spans else 0
        out.append(Diagnostic("rustc", line_no, f"error[{code}]: {d.get('message', '')}"))
    return out


_BASH_LINE = re.compile(r"^[^:]*: line (\d+): (.*)$")


def _shell(text: str) -> list[Diagnostic]:
    bash = shutil.which("bash")
    if bash is None:
        return []
    done = _run_on_copy(text, "file.sh", lambda src, _tmp: [bash, "-n", src])
    if done is None or done.returncode == 0:
        return []
    out = []
    for line in done.stderr.splitlines():
        m = _BASH_LINE.match(line)
        if m:
            out.append(Diagnostic("bash -n", int(m.group(1)), m.group(2).strip()))
    return out


_TOOLS = {"python": _python, "rust": _rust, "bash": _shell}


@lru_cache(maxsize=64)
def errors(text: str, lang: str) -> tuple[Diagnostic, ...]:
    """The errors ``lang``'s tool reports on ``text`` (none without a tool)."""
    tool = _TOOLS.get(lang)
    return tuple(tool(text)) if tool else ()


def new_errors(old: str, new: str, path: str | None) -> list[Diagnostic]:
    """The errors on ``new`` that ``old`` does not have (module docstring)."""
    lang = language_name(path)
    if lang not in _TOOLS or old == new:
        return []
    before = Counter(d.key() for d in errors(old, lang))
    out = []
    for d in errors(new, lang):
        if before[d.key()] > 0:
            before[d.key()] -= 1
        else:
            out.append(d)
    return sorted(out, key=lambda d: d.line)
