"""What every front end asks for: which model to load and how, and what to rewrite how.

Contract: two frozen dataclasses hold the one set of defaults the CLI, the terminal
app, the socket server and the benchmarks share (their flags and settings are built
from these defaults, never written again):
  * ``LoadConfig``: the model, its backend, device and offload, the context length,
    threads and an optional draft model; ``app.runtime.loaded_model.load_model`` takes it, with
    the environment's switches (``ENV_SWITCHES``) read once there by ``with_env``.
  * ``RewriteOptions``: the instruction, the proposers, k, sampling, exactness, the
    output cap, context files, a region, the edit mode and the disk prompt cache;
    ``app.edit.rewrite.rewrite`` and ``app.runtime.generation.run_prompt`` take it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..engine.sampling import SamplingParams
from ..models.catalog import DEFAULT_MODEL

DEFAULT_CTX = 16384
"""Context length a model is loaded with (tokens): a 200-line file and its rewrite fit
several times over."""

BACKENDS = ("auto", "llama.cpp", "torch")
DRAFT_MODES = ("lookup", "none", "model", "auto", "suffix")
"""``RewriteOptions.draft``: who proposes drafts (``app.runtime.local_runner.proposers``); the CLI
spells ``model`` as ``model:NAME|PATH``."""
EDIT_MODES = ("auto", "blocks", "whole")
REVIEWS = ("auto", "on", "off")
"""When the model reviews a finished change (``RewriteOptions.review``)."""
FIRST_ANSWERS = ("blocks", "guarded", "region", "plan", "numbered", "early")
"""The ways ``auto`` may ask for a few-line change first (``RewriteOptions.first``)."""
"""``RewriteOptions.edit``: how the model writes its answer (``app.edit.rewrite.edit_mode``)."""
ANSWER_STYLES = ("quote", "free")
"""How ``generate --context`` answers (``app.answer.prompts.answer_messages``): quoting the files, or not."""


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
    verifier: str = ""
    """``numpy``, ``triton`` or ``torch`` forces where the logits are judged
    (``engine.verifier.choose_verifier``); empty: by where they live. ``load_model``
    takes it from ``SPECEDIT_VERIFIER`` when it is empty."""
    fallback_device: str = ""
    """The torch device when ``device`` is None; empty: CUDA when present
    (``SPECEDIT_TORCH_DEVICE``)."""
    torch_cache: bool = True
    """Keep a GGUF converted for the torch backend under ``<models dir>/torch/``
    (``SPECEDIT_TORCH_CACHE=0`` turns it off)."""
    n_ctx: int = DEFAULT_CTX
    """Context length in tokens."""
    threads: int | None = None
    """CPU threads; None uses every core."""
    draft_model: str | None = None
    """A small model sharing the target's tokenizer, for ``--draft model``/``auto``."""
    engine: str = ""
    """``openai:URL`` (or ``openai-chat:URL``, a chat-only API): run the target on that
    OpenAI-compatible server (``--engine``, ``app.runtime.remote_engine``; ``model`` then gives
    only the tokenizer and chat template). Empty: run it here."""


@dataclass(frozen=True)
class RewriteOptions:
    """What to do and how to decode; one place for the defaults of every front end."""

    instruction: str = ""
    """The edit to make, in the user's words."""
    draft: str = "lookup"
    """One of ``DRAFT_MODES``: 'lookup' (prompt lookup from file, context and output),
    'none' (plain decoding), 'model' (the loaded model's draft model), 'auto' (lookup, plus
    the draft model if loaded) or 'suffix' (the suffix tree, ``engine.suffix``)."""
    k: int | None = None
    """Draft length; None adapts k to measured cost and acceptance."""
    sampling: SamplingParams = field(default_factory=SamplingParams)
    """Temperature (0 = greedy), top-k, top-p, seed."""
    exact: bool = False
    """Verify in sub-blocks whose numerics equal 1-token decoding."""
    max_tokens: int | None = None
    """Cap on generated tokens; None allows the file's length plus a margin."""
    context_files: tuple[tuple[str, str], ...] = ()
    """(name, text) of context files: shown to the model and used as draft sources."""
    region: tuple[int, int] | None = None
    """0-based [start, end) lines to rewrite; the rest stays byte-identical."""
    feedback: tuple[str, str] | None = None
    """A re-run with feedback: (the previous output, the user's note on it); both go into
    the prompt after the file (``app.edit.prompts.rewrite_prompt``)."""
    edit: str = "auto"
    """How the model writes the change: ``blocks`` (only the lines that change, as
    search/replace blocks), ``whole`` (the whole text or region, today's rewrite) or
    ``auto`` (blocks, falling back to whole when they do not apply; whole for a region)."""
    first: str = "blocks"
    """How ``auto`` asks for a few-line change first (``FIRST_ANSWERS``): ``blocks``
    (search/replace blocks), ``guarded`` (blocks whose SEARCH sides can only copy the
    file's lines, ``app.edit.search_guard``, with ``verbatim``), ``region`` (each definition
    the instruction names rewritten whole as a region, blocks when it names none) or ``plan``
    (the model first says in a sentence or two what must change, ``app.edit.plan_note``;
    its note goes into every prompt of the rewrite beside the instruction, then blocks) or
    ``numbered`` (blocks, the definitions the instruction names shown again after it with
    their line numbers, ``app.edit.rewrite.shown_definitions``) or ``early`` (blocks, the
    format's text before the instruction, so the file's warm-up takes it in)."""
    review: str = "auto"
    """The model reviews a finished, unflagged change (``app.edit.review``; ``REVIEWS``):
    ``auto`` when the model has a review threshold (none has one yet: ``docs/notes.md``),
    ``on`` always (a model without one gets its score recorded, never a
    verdict), ``off`` never."""
    prompt_cache: bool = False
    """Keep the KV state of the prompt's file prefix on disk for the next process
    (``app.runtime.prompt_cache``); for one-shot front ends such as ``specedit rewrite``."""
    verbatim: bool = True
    """Where an answer must copy, it can only copy: inside a quoted passage of a ``quote``
    answer, its files (``app.answer.quote_guard``); in the SEARCH sides of blocks asked again after
    blocks that could not be placed, the file's lines (``app.edit.search_guard``). False lets the
    model write what it likes there."""
    insert_quotes: bool = True
    """With ``verbatim``, a ``quote`` answer is the model's answer in its own words, then a
    passage chosen and written by the program (the lines that share the most rare words with
    the question and the answer; the model's first words of it where those cannot choose):
    whole lines, to the end of that paragraph, where the answer opens one or after its end,
    and the answer ends there (``app.answer.quote_insert``). False: the quote prompt, and the model
    types its passages out and may go on to quote more."""


ENV_SWITCHES = {
    "verifier": "SPECEDIT_VERIFIER",
    "fallback_device": "SPECEDIT_TORCH_DEVICE",
    "torch_cache": "SPECEDIT_TORCH_CACHE",
}
"""The ``LoadConfig`` fields an environment variable sets (``with_env``)."""


MODEL_ENV = "SPECEDIT_MODEL"
"""The model every front end loads when no flag names one (before the catalog's default)."""


def env_model(env: Mapping[str, str] | None = None) -> str:
    """``$SPECEDIT_MODEL`` (``MODEL_ENV``), stripped; "" when unset."""
    return (os.environ if env is None else env).get(MODEL_ENV, "").strip()


def with_env(cfg: LoadConfig, env: Mapping[str, str] | None = None) -> LoadConfig:
    """``cfg`` with the fields of ``ENV_SWITCHES`` still at their defaults taken from
    ``env`` (``os.environ``): the one place the environment reaches a load."""
    env = os.environ if env is None else env
    changes: dict[str, object] = {}
    if not cfg.verifier and (v := env.get(ENV_SWITCHES["verifier"], "").strip().lower()):
        changes["verifier"] = v
    if not cfg.fallback_device and (v := env.get(ENV_SWITCHES["fallback_device"], "")):
        changes["fallback_device"] = v
    if cfg.torch_cache and env.get(ENV_SWITCHES["torch_cache"], "1") == "0":
        changes["torch_cache"] = False
    return replace(cfg, **changes) if changes else cfg
