"""Can the fused verification kernel run here, and if not, why not.

Contract: ``kernel_support(device="cuda") -> Support(ok, reason)`` checks, in order, that
torch imports, that the device exists (a CUDA device, or a CPU tensor when
``TRITON_INTERPRET=1`` was set before triton was imported), that triton imports, and that the
kernel compiles and gives the known answer on a 4-token case. ``reason`` is one user-facing
line either way (what runs, or the first thing missing). The result is cached per device, so
``--backend auto``, ``doctor`` and ``choose_verifier`` pay for the compile once per process.
Importing this module imports neither torch nor triton.
"""

from __future__ import annotations

import functools
import os
from typing import NamedTuple


class Support(NamedTuple):
    ok: bool
    """True when the Triton verifier can run on the device."""
    reason: str
    """One line: what runs, or the first thing that is missing."""


@functools.cache
def kernel_support(device: str = "cuda") -> Support:
    """Whether the Triton verification kernel runs on ``device`` (module docstring)."""
    try:
        import torch
    except ImportError as e:
        return Support(False, f"torch is not installed ({e})")
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        return Support(False, f"unknown device {device!r}: {e}")
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            return Support(False, "no CUDA device (torch.cuda.is_available() is False)")
        where = torch.cuda.get_device_name(dev)
    elif dev.type == "cpu" and interpret:
        where = "the CPU (Triton interpreter)"
    else:
        return Support(False, f"the Triton kernel runs on CUDA devices, not on {dev}")
    try:
        import triton
    except ImportError as e:
        return Support(False, f"triton is not importable: {e}")
    try:
        from ..engine.sampling import SamplingParams
        from .verify_launcher import verify_triton

        logits = torch.tensor(
            [[0.0, 3.0, 1.0, 2.0], [5.0, 0.0, 1.0, 2.0], [0.0, 0.0, 9.0, 2.0]], device=dev
        )
        draft = torch.tensor([1, 3], device=dev)
        j, toks = verify_triton(logits, draft, SamplingParams())
        if (j, toks.tolist()) != (1, [1, 0]):
            return Support(False, f"the Triton kernel gave a wrong answer on {where}")
    except Exception as e:  # noqa: BLE001 - any compiler or driver failure means "no"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return Support(False, f"the Triton kernel did not compile or run on {where}: {first}")
    return Support(True, f"Triton {triton.__version__} verification kernel on {where}")
