"""The load-time self-check of exact mode: do k-token blocks give the 1-token logits?

Contract: ``check_batch_exactness(target, probe, sizes)`` returns the largest block
size (among ``sizes``, 1 if none) whose logits equal 1-token evaluation bit for bit,
and the max |delta logit| per size; the target's cache is left empty. ``GenConfig``'s
``exact_block`` takes the first figure, so greedy speculative output equals plain.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from .backend import TargetModel

log = logging.getLogger(__name__)


def check_batch_exactness(
    target: TargetModel, probe: Sequence[int], sizes: Sequence[int] = (2, 4, 8, 16, 32)
) -> tuple[int, dict[int, float]]:
    """Compare k-token block logits with 1-token evaluation on ``probe`` tokens.

    Returns ``(exact_block, deltas)``: the largest block size whose logits equal
    the 1-token path bit for bit (1 if none does), and max |delta logit| per size.
    The cache is left empty.
    """
    n_max = max(sizes)
    assert len(probe) >= n_max + 4, "probe too short"
    base = list(probe[: len(probe) - n_max])
    tail = list(probe[len(probe) - n_max :])
    target.rollback(0)
    target.eval(base, 0, [len(base) - 1])
    ref = []
    for i, t in enumerate(tail):
        ref.append(np.array(target.eval([t], len(base) + i, [0])[0]))
    ref = np.stack(ref)
    deltas: dict[int, float] = {}
    exact, still_exact = 1, True
    for b in sorted(sizes):
        got = np.array(target.eval(tail[:b], len(base), range(b)))
        d = float(np.max(np.abs(got - ref[:b])))
        deltas[b] = d
        still_exact = still_exact and d == 0.0
        if still_exact:
            exact = b
    target.rollback(0)
    log.info("batch exactness: deltas %s -> exact block %d", deltas, exact)
    return exact, deltas
