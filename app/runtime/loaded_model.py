"""A loaded model ready for speculative rewrites: shared by the CLI, the TUI and the server.

Contract: ``load_model(LoadConfig | model, ...)`` resolves the backend (``resolve_backend``:
``auto`` is torch on a CUDA machine, llama.cpp otherwise) and the model (a catalog name, GGUF path
or store name, ``models.stores``; a catalog model's file is checked once against its pinned
sha256, ``model_hashes.check_once``, remembered in ``model_hash_record()``), loads it, runs the
batch-exactness self-check and calibrates the adaptive policy's block-cost curve. The exactness
check and the curve's shape are cached on disk per model file, backend, device and offload, build
and thread count (``model_checks_file()``: ``$SPECEDIT_MODEL_CHECKS``, else the state dir's
``model_checks.json``); the curve's level is re-measured at every load. ``on_stage(stage,
detail)`` is told ``weights`` (the backend), ``draft``, ``exactness`` (first load only) and
``calibration`` (``"<backend> on <device>"``). ``LoadedModel.lock`` serialises generations (a
single-user latency tool); a backend with ``cache_tokens`` lets the next prompt that shares a
prefix skip re-evaluating it. ``LoadedModel.runner`` runs its prompts: ``LocalRunner``, or with
``--engine`` the server's ``RemoteEngine`` (``remote_engine.load_remote``; only the tokenizer here).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...engine.backend import Describes, ModelError, TargetModel
from ...engine.policy import AdaptivePolicy, PolicyConfig
from ...engine.verifier import calibration_target, choose_verifier
from ...models.catalog import CATALOG, resolve_model
from ...models.model_hashes import check_once
from ...models.stores import is_store_name
from ..options import LoadConfig, with_env
from ..store.state import state_dir, state_subdir, write_private
from .local_runner import LocalRunner
from .runner import Runner

log = logging.getLogger(__name__)

# a probe for the self-check: ordinary code, long enough for a 32-token block
_PROBE = (
    "def merge_intervals(intervals):\n"
    "    intervals = sorted(intervals, key=lambda iv: iv[0])\n"
    "    merged = []\n"
    "    for start, end in intervals:\n"
    "        if merged and start <= merged[-1][1]:\n"
    "            merged[-1][1] = max(merged[-1][1], end)\n"
    "        else:\n"
    "            merged.append([start, end])\n"
    "    return merged\n\n\n"
    "class Stack:\n"
    "    def __init__(self):\n"
    "        self.items = []\n\n"
    "    def push(self, item):\n"
    "        self.items.append(item)\n"
)


@dataclass
class LoadedModel:
    """A target model plus what the engine learned about it at load time."""

    target: TargetModel
    model_name: str
    model_path: Path
    exact_block: int
    exact_deltas: dict[int, float]
    costs: dict[int, float]
    load_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    draft: TargetModel | None = None
    """A draft model (same backend, same vocabulary) for ``--draft model:``/``auto``."""
    draft_costs: tuple[float, float] | None = None
    """The draft's measured (step, per-token block) seconds: ``measure_draft``."""
    cache_key: str = ""
    """Identifies the model file, backend, build, device and offload: keys the on-disk
    caches (exactness, cost curve, prompt cache), so a curve measured on the CPU is never
    reused on a GPU."""
    config: LoadConfig = field(default_factory=LoadConfig)
    """What was asked for when it was loaded."""
    runner: Runner = field(default_factory=LocalRunner)
    """Where each prompt runs (``app.runtime.runner``): the engine in this process, or an
    OpenAI-compatible server (``--engine``, ``app.runtime.remote_engine``), where ``target``
    only tokenizes and renders the chat template."""

    @property
    def batch_exact(self) -> bool:
        """True when blocks of every tested size match 1-token evaluation bit for bit."""
        return all(d == 0.0 for d in self.exact_deltas.values())

    def policy(self, cfg: PolicyConfig) -> AdaptivePolicy:
        return AdaptivePolicy(cfg, costs=self.costs)

    def describe(self) -> dict:
        extra = self.target.describe() if isinstance(self.target, Describes) else {}
        return {
            **extra,
            "model": self.model_name,
            "path": str(self.model_path),
            "backend": self.target.backend,
            "device": self.target.device_name,
            "n_ctx": self.target.n_ctx,
            "exact_block": self.exact_block,
            "batch_exact": self.batch_exact,
            "max_batch_logit_delta": max(self.exact_deltas.values(), default=0.0),
            "load_s": round(self.load_s, 3),
            "draft": getattr(self.draft, "name", None),
        }


def _cache_key(path: Path, target: TargetModel, threads: int) -> str:
    st = path.stat() if path.is_file() else path.joinpath("config.json").stat()
    try:
        import llama_cpp

        # the version and the build's features (SIMD sets, OpenMP): a rebuild re-checks
        build = llama_cpp.__version__ + " " + llama_cpp.llama_print_system_info().decode()
    except Exception:  # pragma: no cover
        build = "?"
    # the device name says what is offloaded; a torch model's quantization changes its costs
    quant = target.describe().get("quant", "") if isinstance(target, Describes) else ""
    where = f"{target.backend}|{target.device_name}|{quant}"
    # the file itself (device and inode), not its name: an Ollama blob hard-linked to a
    # catalog file, or a file reached by another path, shares its checks and prompt cache
    file = f"{st.st_dev}:{st.st_ino}|{st.st_size}|{int(st.st_mtime)}"
    return f"{file}|{where}|{build}|{threads}"


def model_hash_record() -> Path:
    """Where the sha256 checks of catalog model files are remembered (``check_once``):
    beside the model checks (``model_checks_file``), so a shared file of checks shares
    these too."""
    return model_checks_file().with_name("model_hashes.json")


CHECKS_ENV = "SPECEDIT_MODEL_CHECKS"


def model_checks_file() -> Path:
    """Where the model checks are remembered: ``$SPECEDIT_MODEL_CHECKS`` (a file that
    several state dirs share: a test session, a container's), else the state dir's
    ``model_checks.json``."""
    env = os.environ.get(CHECKS_ENV)
    return Path(env) if env else state_dir() / "model_checks.json"


def _load_cache() -> dict:
    try:
        return json.loads(model_checks_file().read_text())
    except (OSError, ValueError):
        return {}


def _save_cache(data: dict) -> None:
    try:  # private: the state dir 0700, the file 0600
        f = model_checks_file()
        if os.environ.get(CHECKS_ENV):
            f.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        else:
            f = state_subdir() / f.name
        write_private(f, json.dumps(data, indent=1).encode())
    except OSError as e:  # a cache is optional
        log.warning("could not save model checks: %s", e)


_SIZES = (1, 4, 16, 32, 64, 128)


def _calibrate(target, entry: dict, save) -> dict[int, float]:
    """The block-cost curve: its shape is measured once (warmed up, fastest of two calls
    per size, kept only if plausible) and cached with the exactness check; its level
    (the machine's load right now) is re-measured at every load as the fastest of three
    1-token calls, and calls during generation keep refining both."""
    probe = (target.tokenize(_PROBE) * 8)[: _SIZES[-1]]
    pol = AdaptivePolicy(PolicyConfig())
    shape = {int(k): float(v) for k, v in entry.get("costs", {}).items()}
    if not (set(_SIZES) <= set(shape) and AdaptivePolicy.plausible(shape)):
        for _ in range(2):  # a curve measured while the machine was busy can be bent
            pol.calibrate(target, probe, 0, sizes=_SIZES)
            if AdaptivePolicy.plausible(pol.costs):
                entry["costs"] = {str(k): v for k, v in pol.costs.items()}
                save()
                break
        return pol.costs
    pol.calibrate(target, probe, 0, sizes=(1,), repeats=3)
    return {k: v * pol.costs[1] / shape[1] for k, v in shape.items()}


def load_model(
    config: LoadConfig | str,
    *,
    recheck: bool = False,
    on_stage: Callable[[str, str], None] | None = None,
    **changes: object,
) -> LoadedModel:
    """Load the model of ``config`` (a ``LoadConfig``, or a model name/path with
    ``LoadConfig`` fields as keywords) and its draft model, if any, on the same backend,
    and prepare them for speculative decoding (see the module docstring)."""
    from ...engine.exactness import check_batch_exactness

    cfg = LoadConfig(model=config, **changes) if isinstance(config, str) else config
    if changes and not isinstance(config, str):
        cfg = replace(cfg, **changes)
    if cfg.engine:  # the target runs on a server: only its tokenizer is loaded here
        from .remote_engine import load_remote

        t = time.perf_counter()
        engine, vocab, name, path = load_remote(cfg, model_hash_record(), on_stage)
        return LoadedModel(
            target=vocab,  # type: ignore[arg-type]
            model_name=name,
            model_path=path,
            exact_block=1,
            exact_deltas={},
            costs={},
            load_s=time.perf_counter() - t,
            config=cfg,
            runner=engine,
        )
    threads = cfg.threads or max(1, os.cpu_count() or 1)
    stage = on_stage or (lambda _stage, _detail: None)
    backend = resolve_backend(cfg)
    cfg = with_env(cfg)  # the environment's switches, read once here
    t = time.perf_counter()
    stage("weights", backend)
    path, name, target = _load_target(cfg.model, backend, cfg, threads)
    where = f"{target.backend} on {target.device_name}"
    draft, draft_costs = None, None
    if cfg.draft_model:
        from ...engine.draft_model import check_vocab, measure_draft

        stage("draft", where)
        _, _, draft = _load_target(cfg.draft_model, backend, cfg, threads)
        check_vocab(draft, target)
        draft_costs = measure_draft(draft)
    key = _cache_key(path, target, threads)
    cache = _load_cache()
    entry = None if recheck else cache.get(key)
    first = entry is None
    if entry is None:
        stage("exactness", where)
        probe = target.tokenize(_PROBE)
        exact_block, deltas = check_batch_exactness(target, probe)
        entry = {"exact_block": exact_block, "deltas": deltas}
        cache[key] = entry
        _save_cache(cache)
    deltas = {int(k): float(v) for k, v in entry["deltas"].items()}
    stage("calibration", where)
    # the cost curve times the step that really runs (on a GPU: never a host copy of logits)
    view = calibration_target(target, choose_verifier(target, cfg.verifier))
    costs = _calibrate(view, entry, lambda: _save_cache(cache))
    loaded = LoadedModel(
        target=target,
        model_name=name,
        model_path=path,
        exact_block=int(entry["exact_block"]),
        exact_deltas=deltas,
        costs=costs,
        load_s=time.perf_counter() - t,
        draft=draft,
        draft_costs=draft_costs,
        cache_key=key,
        config=cfg,
    )
    if not loaded.batch_exact:  # a warning at the first load of this model and build
        (log.warning if first else log.info)(
            "%s: batched evaluation changes logits (max |delta| %.3g); "
            "exact mode verifies in blocks of %d",
            name,
            max(deltas.values()),
            loaded.exact_block,
        )
    return loaded


def _nvidia_present() -> bool:
    """An NVIDIA GPU is visible (checked without importing torch, which takes seconds)."""
    import shutil

    return Path("/dev/nvidia0").exists() or (
        os.environ.get("CUDA_VISIBLE_DEVICES", "x") != "" and shutil.which("nvidia-smi") is not None
    )


def resolve_backend(cfg: LoadConfig) -> str:
    """The backend ``cfg.backend`` means here: ``auto`` is torch with the Triton verifier
    on a CUDA machine where it runs, llama.cpp otherwise."""
    if cfg.backend != "auto":
        if cfg.backend not in ("llama.cpp", "torch"):
            raise ModelError(f"unknown backend {cfg.backend!r}; use llama.cpp, torch or auto")
        return cfg.backend
    if not _nvidia_present():
        return "llama.cpp"
    from ...kernels.support import kernel_support

    ok, why = kernel_support(cfg.device or "cuda")
    if not ok:
        log.info("backend auto: llama.cpp (%s)", why)
    return "torch" if ok else "llama.cpp"


def _load_target(model: str, backend: str, cfg: LoadConfig, threads: int):
    """(path, display name, loaded target) of a catalog name, GGUF path or torch checkpoint."""
    if backend == "torch" and Path(model).expanduser().is_dir():
        path = Path(model).expanduser()
    else:
        path = resolve_model(model)
        check_once(path, model_hash_record())  # a catalog model's sha256, once per version
    name = model if model in CATALOG or is_store_name(model) else path.name
    if backend == "llama.cpp":
        from ...models.llama_build import gguf_layer_count, llama_build, resolve_gpu_layers
        from ...models.llama_cpp_backend import LlamaTarget

        layers, why = resolve_gpu_layers(cfg.gpu_layers, llama_build(), gguf_layer_count(path))
        log.info("%s: %s", name, why)
        target = LlamaTarget(
            path, n_ctx=cfg.n_ctx, n_threads=threads, name=name, n_gpu_layers=layers
        )
        return path, name, target
    if backend == "torch":
        try:
            from ...models.torch_backend import TorchTarget
        except ImportError as e:
            raise ModelError(f"the torch backend needs the 'torch' extra: {e}") from e
        target = TorchTarget.from_gguf_or_dir(
            path,
            n_ctx=cfg.n_ctx,
            name=name,
            n_threads=threads,
            device=cfg.device or cfg.fallback_device or None,
            quant=cfg.quant,
            verifier=cfg.verifier,
            cache=cfg.torch_cache,
        )
        return path, name, target
    raise ModelError(f"unknown backend {backend!r}; use llama.cpp, torch or auto")
