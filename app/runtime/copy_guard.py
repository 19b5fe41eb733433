"""What a guard that lets the decoder only copy needs of the model: each token's bytes.

Contract: ``pieces(target)`` is ``(table, index)``: ``table[i]`` the bytes of token ``i``
(``target.detokenize([i])``) and ``index`` the ids of each byte string of at most ``MAX_PIECE``
bytes, end-of-text tokens left out; built once per target and kept while it lives. A guard
matches tokens by these bytes, so any tokenization of a copy is allowed, not only the one the
tokenizer would pick. ``remembered(memo, key, make)`` keeps a guard's answer for an output
(a guard is asked again for the same output as drafts are verified). The copy-only guards are
``app.answer.quote_guard`` (quoted passages) and ``app.edit.search_guard`` (SEARCH sides).
"""

from __future__ import annotations

import weakref

import numpy as np

MAX_PIECE = 48
"""The longest token (bytes) a copy may be made with (longer ones are rare runs)."""

_PIECES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pieces(target) -> tuple[list[bytes], dict[bytes, list[int]]]:
    """Every token's bytes, and the ids of each byte string (one table per target)."""
    try:
        return _PIECES[target]
    except (KeyError, TypeError):
        pass
    table = [bytes(target.detokenize([i])) for i in range(target.n_vocab)]
    index: dict[bytes, list[int]] = {}
    for i, b in enumerate(table):
        if b and len(b) <= MAX_PIECE and i not in target.eos_ids:
            index.setdefault(b, []).append(i)
    try:
        _PIECES[target] = (table, index)
    except TypeError:  # a target that cannot be weakly referenced: built each time
        pass
    return table, index


def remembered(memo: dict, key: tuple[int, ...], make) -> np.ndarray | None:
    """``make()``, the allowed ids after output ``key``, kept in ``memo`` (a guard is asked
    again for the same output as drafts are verified; cleared past 256 entries)."""
    if key in memo:
        return memo[key]
    if len(memo) > 256:
        memo.clear()
    memo[key] = got = make()
    return got
