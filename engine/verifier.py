"""The verification seam: where a step's target logits are judged, on the host or on the device.

Contract: a ``Verifier`` has a ``name`` (``"numpy"``, ``"triton"``, ``"torch"``) and four methods:
``fill(target, tokens, pos)`` evaluates a prompt batch and reads nothing; ``prefill(target,
tokens, pos)`` evaluates the prompt's last batch and returns its last logits row where the verifier
works; ``first_token(logits, sampling, n_out=0)`` draws output position ``n_out`` from it;
``verify_block(target, block, pos, draft, cfg, n_out, metrics) -> VerifyResult`` evaluates
``[pending, d1 .. dk]`` at ``pos`` (sub-blocks of ``cfg.exact_block`` in exact mode) and judges it.
``HostVerifier`` (the reference and the CPU path) judges numpy rows with ``RowVerifier``;
``DeviceVerifier`` keeps logits on a ``DeviceTarget`` and judges them with the Triton kernel or
its torch twin, reading back one small ``out`` tensor per step. Both use the same rules and
position-keyed numbers (``engine.sampling``), so a seed gives the same text on either.
``choose_verifier(target, forced)``: ``forced`` (or a ``DeviceTarget``'s own ``verifier``) wins;
else logits on CUDA get Triton when ``kernels.support.kernel_support`` says it runs, else torch;
any other target the host. ``calibration_target(target, verifier)``: the step to time.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .backend import DeviceTarget
from .draft import Draft
from .metrics import Metrics
from .rejection import RowVerifier, VerifyResult
from .sampling import SamplingParams

log = logging.getLogger(__name__)

NAMES = ("numpy", "triton", "torch")


class Verifier(Protocol):
    name: str

    def fill(self, target, tokens: Sequence[int], pos: int) -> None:
        """Evaluate a prompt batch into the cache, no logits read (``engine.prefill``)."""
        ...

    def prefill(self, target, tokens: Sequence[int], pos: int) -> Any: ...

    def first_token(self, logits: Any, sampling: SamplingParams, n_out: int = 0) -> int: ...

    def verify_block(
        self, target, block: Sequence[int], pos: int, draft: Draft, cfg, n_out: int, m: Metrics
    ) -> VerifyResult: ...


def _host(a) -> np.ndarray | None:
    """A numpy array of ``a`` (a device tensor is copied to the host)."""
    if a is None or isinstance(a, np.ndarray):
        return a
    return a.detach().float().cpu().numpy()  # a torch tensor (a device drafter's q rows)


class HostVerifier:
    """Numpy verification of host logits: the reference (module docstring)."""

    name = "numpy"

    def fill(self, target, tokens: Sequence[int], pos: int) -> None:
        target.eval(tokens, pos, [])

    def prefill(self, target, tokens: Sequence[int], pos: int) -> np.ndarray:
        return np.array(target.eval(tokens, pos, [len(tokens) - 1])[0])

    def first_token(self, logits, sampling: SamplingParams, n_out: int = 0) -> int:
        rv = RowVerifier(np.empty(0, np.int64), sampling, position=n_out)
        return rv.feed(np.asarray(logits)[None]).tokens[0]

    def verify_block(self, target, block, pos, draft: Draft, cfg, n_out: int, m: Metrics):
        rv = RowVerifier(draft.tokens, cfg.sampling, _host(draft.probs), position=n_out)
        step = cfg.exact_block or len(block)
        for s in range(0, len(block), step):
            chunk = block[s : s + step]
            if s:  # each exact-mode sub-block is a target call of its own
                m.target_calls += 1
            logits = target.eval(chunk, pos + s, range(len(chunk)))
            with m.time("sample"):
                res = rv.feed(logits)
            if res is not None:
                return res
        raise AssertionError("verifier consumed every row without a decision")


class DeviceVerifier:
    """Verification on the target's device: the Triton kernel or its torch twin."""

    def __init__(self, name: str = "triton") -> None:
        if name not in ("triton", "torch"):
            raise ValueError(f"a device verifier is triton or torch, not {name!r}")
        self.name = name
        if name == "triton":
            from ..kernels.verify_launcher import verify_triton_async

            self._verify = verify_triton_async
        else:
            from ..kernels.verify_torch import verify_torch

            self._verify = verify_torch

    def _launch(self, logits, draft_ids, sampling: SamplingParams, probs, n_out: int):
        if isinstance(probs, np.ndarray):  # a host drafter's q rows
            import torch

            probs = torch.from_numpy(np.ascontiguousarray(probs, np.float32)).to(logits.device)
        return self._verify(logits, draft_ids, sampling, probs, position=n_out)

    def fill(self, target: DeviceTarget, tokens: Sequence[int], pos: int) -> None:
        target.eval_ids(target.upload(tokens), pos, tokens, last_only=True)  # stays queued

    def prefill(self, target: DeviceTarget, tokens: Sequence[int], pos: int):
        logits = target.eval_ids(target.upload(tokens), pos, tokens, last_only=True)
        target.synchronize()  # once per generation: prefill time is measured, not queued
        return logits

    def first_token(self, logits, sampling: SamplingParams, n_out: int = 0) -> int:
        import torch

        draft = torch.empty(0, dtype=torch.int64, device=logits.device)
        return int(self._launch(logits, draft, sampling, None, n_out)[1])  # a sync

    def verify_block(
        self, target: DeviceTarget, block, pos, draft: Draft, cfg, n_out: int, m: Metrics
    ):
        ids = target.upload(block)  # one small host-to-device copy
        step = cfg.exact_block or len(block)
        if step >= len(block):
            logits = target.eval_ids(ids, pos, block)
        else:  # exact mode: every sub-block, then one launch over all their rows
            import torch

            parts = []
            for s in range(0, len(block), step):
                if s:
                    m.target_calls += 1
                part = target.eval_ids(ids[s : s + step], pos + s, block[s : s + step])
                parts.append(part.clone())  # a graph's output buffer: the next replay reuses it
            logits = torch.cat(parts)
        n = len(block) - 1
        out = self._launch(logits, ids[1:], cfg.sampling, draft.probs, n_out)
        with m.time("sample"):
            host = target.readback(out)  # the step's one sync: accepted count and tokens
        j = int(host[0])
        assert 0 <= j <= n, f"device verifier returned an impossible result {host.tolist()}"
        return VerifyResult(j, [int(t) for t in host[1 : j + 2]])


def choose_verifier(target, forced: str | None = None) -> Verifier:
    """The verifier for ``target``: ``forced`` (None: the target's own ``verifier``), else the
    one where its logits live."""
    on_device = isinstance(target, DeviceTarget)
    if forced is None:
        forced = target.verifier if on_device else ""
    forced = forced.strip().lower()
    if forced:
        if forced not in NAMES:
            raise ValueError(f"SPECEDIT_VERIFIER={forced!r}: use one of {', '.join(NAMES)}")
        if forced == "numpy":
            return HostVerifier()
        if not on_device:
            raise ValueError(
                f"SPECEDIT_VERIFIER={forced} needs a target whose logits stay on a device "
                f"(the torch backend), not {getattr(target, 'backend', type(target).__name__)}"
            )
        if forced == "triton":
            from ..kernels.support import kernel_support

            ok, why = kernel_support(str(target.device))
            if not ok:
                raise ValueError(f"SPECEDIT_VERIFIER=triton: {why}")
        return DeviceVerifier(forced)
    if on_device and target.device.type == "cuda":
        from ..kernels.support import kernel_support

        ok, why = kernel_support(str(target.device))
        if ok:
            return DeviceVerifier("triton")
        log.warning("verifying with torch ops on %s: %s", target.device, why)
        return DeviceVerifier("torch")
    return HostVerifier()


class _DeviceStepTarget:
    """A target whose ``eval`` is the device verifier's step: upload, forward, verify, sync."""

    def __init__(self, target, verifier: DeviceVerifier) -> None:
        self._target, self._verifier = target, verifier

    def __getattr__(self, name):
        return getattr(self._target, name)

    def eval(self, tokens: Sequence[int], pos: int, want) -> np.ndarray:
        t = self._target
        ids = t.upload(tokens)
        logits = t.eval_ids(ids, pos, tokens)
        sampling = SamplingParams()  # greedy: the kernel's cheapest mode costs what a step costs
        out = self._verifier._launch(logits, ids[1:], sampling, None, 0)
        return t.readback(out)


def calibration_target(target, verifier: Verifier | None = None):
    """What ``AdaptivePolicy.calibrate`` should time for ``target``: the path that runs.

    For a device verifier that is upload + forward + verification + one sync (never a copy
    of the logits to the host); for the host verifier it is ``target`` itself.
    """
    v = verifier or choose_verifier(target)
    return _DeviceStepTarget(target, v) if isinstance(v, DeviceVerifier) else target
