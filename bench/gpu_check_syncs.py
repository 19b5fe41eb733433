"""Host syncs of a decode run, counted exactly and attributed to the prefill or the steps.

Contract: ``with SyncCounter() as sc: ...`` counts every point where the host waits for the
device inside the block:

  * explicit: calls of ``torch.cuda.synchronize``, ``torch.cuda.Stream.synchronize`` and
    ``torch.cuda.Event.synchronize`` (patched for the block; sync-debug mode is switched off
    inside them, so they are not counted twice), and of any ``extra`` callables given (the
    CPU rehearsal passes ``TorchTarget.readback``, the step's one read-back, which on the
    CPU needs no sync call but stands where the CUDA one is);
  * implicit, seen by a ``TorchDispatchMode`` on any device: ``aten._local_scalar_dense``
    (``.item()``, ``int(t)``, ``bool(t)``, indexing by a 0-dim tensor), ops with
    data-dependent output shapes (``nonzero``, ``masked_select``, ``unique``...) and
    device-to-host copies that are not ``non_blocking``;
  * implicit on CUDA, also from ``torch.cuda.set_sync_debug_mode("warn")`` warnings: the
    implicit figure is the larger of the two sources (they see the same events).

``CountingVerifier(verifier, counter)`` wraps an ``engine.verifier`` verifier so that syncs
inside ``fill``/``prefill``/``first_token`` are charged to the prefill and the rest of the run
(``verify_block`` and the loop around it) to the steps: ``per_step = (total - prefill) /
steps``, with ``steps`` the ``verify_block`` calls. No subtraction of a guessed constant.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_SCALAR = "aten::_local_scalar_dense"
_DYNAMIC = (
    "aten::nonzero",
    "aten::masked_select",
    "aten::unique",
    "aten::_unique",
    "aten::_unique2",
    "aten::unique_consecutive",
    "aten::unique_dim",
    "aten::repeat_interleave",  # with a tensor of repeats and no output_size
    "aten::equal",
    "aten::is_nonzero",
)


def _name(func) -> str:
    return func._schema.name if hasattr(func, "_schema") else str(func)


class _Implicit(TorchDispatchMode):
    def __init__(self, counter: SyncCounter) -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _name(func)
        if name == _SCALAR or name in _DYNAMIC:
            if name != "aten::repeat_interleave" or kwargs.get("output_size") is None:
                self.counter._implicit(name)
        elif name in ("aten::_to_copy", "aten::copy_"):
            src = args[1] if name == "aten::copy_" else args[0]
            dst_cpu = (
                args[0].device.type == "cpu"
                if name == "aten::copy_"
                else str(kwargs.get("device", "")).startswith("cpu")
            )
            if (
                isinstance(src, torch.Tensor)
                and src.device.type == "cuda"
                and dst_cpu
                and not kwargs.get("non_blocking", False)
                and not (len(args) > 2 and args[2])
            ):
                self.counter._implicit(name)
        return func(*args, **kwargs)


class SyncCounter:
    """Counts host syncs inside a ``with`` block (module docstring)."""

    def __init__(self, extra: tuple[tuple[object, str], ...] = ()) -> None:
        self.extra = extra  # (owner, attribute name) pairs counted as explicit syncs
        self.explicit = 0
        self.implicit_dispatch = 0
        self.implicit_debug = 0
        self.by_op: Counter[str] = Counter()
        self.phase = "run"
        self.by_phase: Counter[str] = Counter()

    # ---- counting ---------------------------------------------------------------------
    def _implicit(self, name: str) -> None:
        self.implicit_dispatch += 1
        self.by_op[name] += 1
        self.by_phase[self.phase] += 1

    def _explicit(self, name: str) -> None:
        self.explicit += 1
        self.by_op[name] += 1
        self.by_phase[self.phase] += 1

    @property
    def total(self) -> int:
        return self.explicit + max(self.implicit_dispatch, self.implicit_debug)

    @contextlib.contextmanager
    def charge(self, phase: str):
        """Charge the syncs of the block to ``phase`` (then back to the outer phase)."""
        outer, self.phase = self.phase, phase
        try:
            yield
        finally:
            self.phase = outer

    # ---- patching ---------------------------------------------------------------------
    def _wrap(self, owner, attr: str, label: str):
        orig = getattr(owner, attr)
        counter = self

        def counted(*args, **kwargs):
            counter._explicit(label)
            if not torch.cuda.is_available():
                return orig(*args, **kwargs)
            mode = torch.cuda.get_sync_debug_mode()
            torch.cuda.set_sync_debug_mode(0)  # counted here, not again as a warning
            try:
                return orig(*args, **kwargs)
            finally:
                torch.cuda.set_sync_debug_mode(mode)

        setattr(owner, attr, counted)
        self._restore.append((owner, attr, orig))

    def __enter__(self) -> SyncCounter:
        self._restore: list = []
        self._wrap(torch.cuda, "synchronize", "cuda.synchronize")
        self._wrap(torch.cuda.Stream, "synchronize", "Stream.synchronize")
        self._wrap(torch.cuda.Event, "synchronize", "Event.synchronize")
        for owner, attr in self.extra:
            self._wrap(owner, attr, f"{getattr(owner, '__name__', type(owner).__name__)}.{attr}")
        self._mode = _Implicit(self)
        self._mode.__enter__()
        self._cuda = torch.cuda.is_available()
        if self._cuda:
            self._w = warnings.catch_warnings(record=True)
            self._caught = self._w.__enter__()
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
        return self

    def __exit__(self, *exc) -> None:
        if self._cuda:
            torch.cuda.set_sync_debug_mode(0)
            self._w.__exit__(*exc)
            self.implicit_debug = sum("synchroniz" in str(w.message).lower() for w in self._caught)
        self._mode.__exit__(*exc)
        for owner, attr, orig in reversed(self._restore):
            setattr(owner, attr, orig)

    def record(self) -> dict:
        return {
            "total": self.total,
            "explicit": self.explicit,
            "implicit_dispatch": self.implicit_dispatch,
            "implicit_debug_warnings": self.implicit_debug,
            "by_op": dict(self.by_op),
            "by_phase": dict(self.by_phase),
        }


class CountingVerifier:
    """A verifier whose prefill-side syncs are charged to ``prefill`` and steps counted."""

    def __init__(self, inner, counter: SyncCounter) -> None:
        self.inner, self.counter = inner, counter
        self.name = inner.name
        self.steps = 0

    def fill(self, target, tokens, pos):
        with self.counter.charge("prefill"):
            return self.inner.fill(target, tokens, pos)

    def prefill(self, target, tokens, pos):
        with self.counter.charge("prefill"):
            return self.inner.prefill(target, tokens, pos)

    def first_token(self, logits, sampling, n_out=0):
        with self.counter.charge("prefill"):
            return self.inner.first_token(logits, sampling, n_out)

    def verify_block(self, target, block, pos, draft, cfg, n_out, m):
        self.steps += 1
        with self.counter.charge("step"):
            return self.inner.verify_block(target, block, pos, draft, cfg, n_out, m)


def syncs_per_step(counter: SyncCounter, verifier: CountingVerifier) -> dict:
    """The record of a counted run: totals, the prefill's share, and syncs per step."""
    prefill = counter.by_phase.get("prefill", 0)
    rec = counter.record()
    rec.update(
        prefill=prefill,
        steps=verifier.steps,
        per_step=round((counter.total - prefill) / max(verifier.steps, 1), 3),
    )
    return rec
