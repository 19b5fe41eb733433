"""The protocols the engine asks of a model backend, and the errors a user can act on.

``models/`` implements them (llama.cpp, torch), as does the tests' numpy toy model; checks are
``isinstance`` against these runtime-checkable protocols, never ``hasattr``.
  * ``TargetModel``: ``eval(tokens, pos, want)`` drops cache entries ``>= pos``, appends ``tokens``
    and returns logits ``[len(want), n_vocab]`` for the block offsets ``want`` (maybe a view,
    valid until the next ``eval``/``rollback``); ``rollback(pos)`` drops entries ``>= pos``;
    ``tokenize(text, special)``, ``detokenize(tokens) -> bytes``, ``chat_prompt(messages)`` (up
    to the reply); ``name``, ``n_vocab``, ``n_ctx``, ``eos_ids``, ``backend``, ``device_name``.
  * ``PrefixCache.cache_tokens``: the cached ids by position; ``StatefulCache`` adds
    ``save_state(path)`` and ``load_state(path, max_tokens) -> ids`` (``[]`` when it does not
    fit); ``Describes``: ``describe() -> dict``; ``DeviceTarget``: logits stay on its ``device``
    (``upload``, ``eval_ids``, ``readback``: one sync, ``synchronize``, ``verifier``).
``UserError`` is the base of every problem a user can fix (``str(err)`` is one clear line);
``ModelError``: a model that cannot be found, read or loaded (``app.store.files.FileError``: a file).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np


class UserError(Exception):
    """A problem the user can fix; the message is one user-facing line."""


class ModelError(UserError, RuntimeError):
    """A model could not be found, read or loaded. The message is user-facing."""


@runtime_checkable
class TargetModel(Protocol):
    name: str
    n_vocab: int
    n_ctx: int
    eos_ids: frozenset[int]
    backend: str
    device_name: str

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]) -> np.ndarray: ...

    def rollback(self, pos: int) -> None: ...

    def tokenize(self, text: str, special: bool = False) -> list[int]: ...

    def detokenize(self, tokens: Sequence[int]) -> bytes: ...

    def chat_prompt(self, messages: list[dict[str, str]]) -> str: ...


@runtime_checkable
class PrefixCache(Protocol):
    cache_tokens: list[int]
    """Token ids in the KV cache, by position."""


@runtime_checkable
class BatchLog(PrefixCache, Protocol):
    cache_batches: list[int]
    """Where each batch of the cached entries began (``engine.prefill``: a backend whose
    kernels compute a position differently by batch says how its cache was evaluated;
    a restored state's list is empty until the caller records it)."""


@runtime_checkable
class StatefulCache(PrefixCache, Protocol):
    def save_state(self, path: str | Path) -> int: ...

    def load_state(self, path: str | Path, max_tokens: int | None = None) -> list[int]: ...


@runtime_checkable
class Describes(Protocol):
    def describe(self) -> dict:
        """Where and how the model runs (device, dtype, quantization, memory): for the
        stats and ``specedit doctor``."""
        ...


@runtime_checkable
class DeviceTarget(TargetModel, Protocol):
    device: Any
    """Where the logits live (a ``torch.device``)."""
    verifier: str
    """The verifier the load forced (``numpy``, ``triton``, ``torch``); empty: by device."""

    def upload(self, tokens: Sequence[int]) -> Any:
        """Token ids as a device int64 tensor ``[n]``, valid until the next ``upload``."""
        ...

    def eval_ids(
        self, ids: Any, pos: int, tokens: Sequence[int] | None = None, last_only: bool = False
    ) -> Any:
        """``eval`` of device ids: logits ``[n, V]`` (``[1, V]`` with ``last_only``) left
        on the device; ``tokens`` are their host values, for ``cache_tokens``."""
        ...

    def readback(self, t: Any) -> np.ndarray:
        """A small device tensor's values on the host: one copy, one sync."""
        ...

    def synchronize(self) -> None:
        """Wait for the device's queued work."""
        ...


def cached_tokens(target: object) -> list[int]:
    """The token ids ``target`` holds in its KV cache (``[]`` when it cannot tell)."""
    return target.cache_tokens if isinstance(target, PrefixCache) else []


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the common prefix of two token sequences."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    x = np.asarray(a[:n], dtype=np.int64)
    y = np.asarray(b[:n], dtype=np.int64)
    diff = np.flatnonzero(x != y)
    return int(diff[0]) if diff.size else n
