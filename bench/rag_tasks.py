"""The question set of ``specedit bench rag``: questions with known answers over real docs.

Contract: ``load_questions()`` returns the ``RagQuestion`` rows of
``bench/data/rag/questions.jsonl``, whose documents are copies vendored under
``bench/data/rag/docs/``, so the answers stay fixed as the originals move on: this
repository's own docs (README.md, docs/protocol.md, bench/README.md, the plugins'
READMEs), and in ``docs/ext/`` documents of other kinds from other projects: a
third-party README (h11's), a changelog (pytest-timeout's), an API reference (the
docstrings of CPython 3.11's ``json/__init__.py``), code comments (part of CPython
3.11's ``heapq.py``), a configuration file documented by its comments (Debian's
``login.defs``), a Markdown user guide (python-dotenv's README), a class documented in
its docstrings (part of CPython 3.11's ``textwrap.py``), a FAQ (the second half of zlib's)
and a build-system module documented in its reStructuredText comment block (part of
CMake 3.25's ``GNUInstallDirs.cmake``); the last five came in later and were held out
while the quote guard's passage ranking was built. ``docs/ext/LICENSES.md`` names each
one's source and license (the license texts lie next to it, or in
``bench/data/LICENSE-PSF.txt``).
``RagQuestion.context_files()`` is the ``(label, text)`` pairs the prompt shows (labels are the
paths under ``docs/``, as a user passes them to ``--context``); ``judge(output)`` is the
question's check: one of its ``expect`` regular expressions matches the answer's own
words (its quotes left out); ``supports(quotes)``: one of its ``evidence`` expressions matches
one of the answer's found quotes (a quote that is found but states something else does not
make a quoted answer right).
``spec_bench_questions(n)`` turns the first ``n`` Spec-Bench rag rows (``bench.tasks``)
into the same shape: their passages as one context file, their last line the question,
no known answer (``expect`` empty: ``judge`` is None).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..app.answer.quotes import prose

DATA = Path(__file__).resolve().parent / "data" / "rag"
QUESTIONS = DATA / "questions.jsonl"


@dataclass(frozen=True)
class RagQuestion:
    id: str
    question: str
    docs: tuple[str, ...]
    """Paths under ``bench/data/rag/docs`` (the context files, in this order)."""
    expect: tuple[str, ...] = ()
    """Regular expressions; a right answer matches one. Empty: no known answer."""
    texts: tuple[str, ...] | None = None
    """The documents' text when they are not files (the Spec-Bench rows)."""
    evidence: tuple[str, ...] = ()
    """Regular expressions for the passages that state the answer: a quote supports the
    answer when one of them matches it. Empty: not known."""

    def context_files(self) -> list[tuple[str, str]]:
        if self.texts is not None:
            return list(zip(self.docs, self.texts, strict=True))
        return [(d, (DATA / "docs" / d).read_text(encoding="utf-8")) for d in self.docs]

    def judge(self, output: str) -> bool | None:
        """True when the answer says what the docs say, in its own words (``app.answer.quotes.
        prose``: a quote holds the docs' words whatever the answer says; an answer that
        is only quotes is judged whole). None: no known answer."""
        if not self.expect:
            return None
        said = prose(output, self.docs) or output
        return any(re.search(e, said) for e in self.expect)

    def supports(self, quotes: list[str]) -> bool | None:
        """True when one of the answer's quotes (found ones: ``app.answer.quotes``) holds a passage
        that states the answer, False when it quotes and none does; None: no quotes, or no
        known evidence."""
        if not self.evidence or not quotes:
            return None
        return any(re.search(e, q) for e in self.evidence for q in quotes)


def load_questions(path: Path = QUESTIONS) -> list[RagQuestion]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [
        RagQuestion(
            r["id"],
            r["question"],
            tuple(r["docs"]),
            tuple(r["expect"]),
            evidence=tuple(r.get("evidence", ())),
        )
        for r in rows
    ]


def spec_bench_questions(n: int) -> list[RagQuestion]:
    """The first ``n`` Spec-Bench rag prompts: passages, then the question on the last line."""
    from .tasks import load_tasks

    out = []
    for t in load_tasks(["rag"], n) if n > 0 else []:
        passages, _, question = t.source_text.rstrip().rpartition("\n")
        if passages.strip() and question.strip():
            out.append(RagQuestion(t.name, question.strip(), ("passages.txt",), (), (passages,)))
    return out
