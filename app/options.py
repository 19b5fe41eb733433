"""What every front end asks for: which model to load and how, and what to rewrite how.

Contract: two frozen dataclasses hold the one set of defaults the CLI, the terminal
app, the socket server and the benchmarks share (their flags and settings are built
from these defaults, never written again):
  * ``LoadConfig``: the model, its backend, device and offload, the context length,
    threads and an optional draft model; ``app.loaded_model.load_model`` takes it.
  * ``RewriteOptions``: the instruction, the proposers, k, sampling, exactness, the
    output cap, context files, a region, the edit mode and the disk prompt cache;
    ``app.rewrite.rewrite`` and ``app.generation.run_prompt`` take it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.sampling import SamplingParams
from ..models.catalog import DEFAULT_MODEL

DEFAULT_CTX = 16384
"""Context length a model is loaded with (tokens): a 200-line file and its rewrite fit
several times over."""

BACKENDS = ("auto", "llama.cpp", "torch")
EDIT_MODES = ("auto", "blocks", "whole")
"""``RewriteOptions.edit``: how the model writes its answer (``app.rewrite.edit_mode``)."""
ANSWER_STYLES = ("quote", "free")
"""How ``generate --context`` answers (``app.prompt.answer_messages``): quoting the files, or not."""


@dataclass(frozen=True)
class LoadConfig:
    """How to load the target (and draft) model."""

    model: str = DEFAULT_MODEL
    """Catalog name or GGUF path (a checkpoint directory on the torch backend)."""
    backend: str = "auto"
    """``llama.cpp``, ``torch`` or ``auto``: torch with the Triton verifier on a CUDA
    machine where it runs, llama.cpp otherwise."""
    device: str | None = None
    """Torch device (``cuda``, ``cuda:1``, ``cpu``); None picks CUDA when present."""
    gpu_layers: int | str = "auto"
    """llama.cpp layers to offload: a number, ``all`` or ``auto`` (all layers when the
    build supports offload and a GPU is present, else none)."""
    quant: str | None = None
    """Torch weight quantization (``int4``, ``int8``, ``none``); None follows the GGUF."""
    n_ctx: int = DEFAULT_CTX
    """Context length in tokens."""
    threads: int | None = None
    """CPU threads; None uses every core."""
    draft_model: str | None = None
    """A small model sharing the target's tokenizer, for ``--draft model``/``auto``."""


@dataclass(frozen=True)
class RewriteOptions:
    """What to do and how to decode; one place for the defaults of every front end."""

    instruction: str = ""
    """The edit to make, in the user's words."""
    draft: str = "lookup"
    """'lookup' (prompt lookup from file, context and output), 'none' (plain decoding),
    'model' (the session's draft model) or 'auto' (lookup, plus the draft model if loaded)."""
    k: int | None = None
    """Draft length; None adapts k to measured cost and acceptance."""
    sampling: SamplingParams = field(default_factory=SamplingParams)
    """Temperature (0 = greedy), top-k, top-p, seed."""
    exact: bool = False
    """Verify in sub-blocks whose numerics equal 1-token decoding."""
    max_tokens: int | None = None
    """Cap on generated tokens; None allows the file's length plus a margin."""
    context: tuple[tuple[str, str], ...] = ()
    """(name, text) of context files: shown to the model and used as draft sources."""
    region: tuple[int, int] | None = None
    """0-based [start, end) lines to rewrite; the rest stays byte-identical."""
    feedback: tuple[str, str] | None = None
    """A re-run with feedback: (the previous output, the user's note on it); both go into
    the prompt after the file (``app.prompt.rewrite_prompt``)."""
    edit: str = "auto"
    """How the model writes the change: ``blocks`` (only the lines that change, as
    search/replace blocks), ``whole`` (the whole text or region, today's rewrite) or
    ``auto`` (blocks, falling back to whole when they do not apply; whole for a region)."""
    prompt_cache: bool = False
    """Keep the KV state of the prompt's file prefix on disk for the next process
    (``app.prompt_cache``); for one-shot front ends such as ``specedit rewrite``."""
