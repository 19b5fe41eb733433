"""The target's own confidence in the lines it added: a measurement for the edit bench.

Contract: ``with tapped(loaded) as tap:`` records, for every generation the local engine runs
on ``loaded``, each generated token's text and the target's probability of the top token at
its position (``p``; under greedy decoding, the probability of the token chosen), read from
the logits the engine asked for anyway (the prefill's last row, each verified block's rows).
``added_lines(tap.generations, diff)`` finds each line a diff adds in the latest generation
that wrote it and gives its lowest ``p``, its token count and the sum of ``log p``: the
bench (``--confidence``) keeps them in each row, and ``bench/README.md`` reads how well they
part right from wrong results. It changes no answer: the logits pass through untouched; a
row costs one softmax (about 0.1 ms at 151,936 entries) on the host.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Generation:
    """One generation's tokens as text, and the top token's probability at each."""

    pieces: list[str]
    p: list[float | None]


@dataclass
class Tap:
    """What ``tapped`` recorded (``top``: predicted position -> the top token's probability)."""

    top: dict[int, float] = field(default_factory=dict)
    generations: list[Generation] = field(default_factory=list)

    def clear(self) -> None:
        self.top.clear()
        self.generations.clear()


def top_probability(rows: np.ndarray) -> np.ndarray:
    """The softmax probability of each row's largest logit."""
    r = np.asarray(rows, dtype=np.float32)
    return 1.0 / np.exp(r - r.max(axis=1, keepdims=True)).sum(axis=1)


@contextlib.contextmanager
def tapped(loaded) -> Iterator[Tap]:
    """Record every local generation on ``loaded`` (see the module docstring) until exit."""
    from ..app.runtime import local_runner

    target = loaded.target
    tap = Tap()
    plain_eval = target.eval
    plain_generate = local_runner.generate

    def eval_(tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray:
        rows = plain_eval(tokens, pos, want)
        if len(rows):
            for w, p in zip(want, top_probability(rows), strict=False):
                tap.top[pos + int(w) + 1] = float(p)  # the row at pos+w predicts pos+w+1
        return rows

    def generate(t, prompt, cfg, drafter=None, **kw):
        res = plain_generate(t, prompt, cfg, drafter, **kw)
        n = len(prompt)
        pieces = [target.detokenize([tok]).decode("utf-8", "replace") for tok in res.tokens]
        tap.generations.append(Generation(pieces, [tap.top.get(n + i) for i in range(len(pieces))]))
        return res

    target.eval = eval_
    local_runner.generate = generate
    try:
        yield tap
    finally:
        local_runner.generate = plain_generate
        del target.eval  # the instance attribute; the class's method shows again


def line_scores(g: Generation) -> dict[str, tuple[float, int, float]]:
    """Each line of a generation (stripped) -> (lowest p, tokens, sum of log p) over the tokens
    that write its non-blank characters; a line written twice keeps its lowest p."""
    text = "".join(g.pieces)
    owner: list[int] = []
    for i, piece in enumerate(g.pieces):
        owner += [i] * len(piece)
    out: dict[str, tuple[float, int, float]] = {}
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        toks = sorted({owner[c] for c in range(start, end) if not text[c].isspace()})
        ps = [g.p[t] for t in toks if g.p[t] is not None]
        key = line.strip()
        if key and ps:
            score = (min(ps), len(ps), sum(math.log(max(p, 1e-12)) for p in ps))
            if key not in out or score[0] < out[key][0]:
                out[key] = score
        start = end + 1
    return out


def added_lines(generations: Sequence[Generation], diff: str) -> list[list]:
    """Each non-blank line ``diff`` adds: ``[text, lowest p, tokens, sum log p]`` from the latest
    generation that wrote it, or ``[text, None, 0, 0.0]`` when none did (the program placed it)."""
    scored = [line_scores(g) for g in reversed(generations)]
    rows = []
    for line in diff.splitlines():
        if not line.startswith("+") or line.startswith("+++"):
            continue
        key = line[1:].strip()
        if not key:
            continue
        hit = next((s[key] for s in scored if key in s), None)
        rows.append([key[:120], *(hit if hit else (None, 0, 0.0))])
    return rows
