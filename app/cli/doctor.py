"""``specedit doctor [--json] [--verify]``: one report a user pastes into a bug report.

Contract: ``collect(verify=False)`` returns a dict of sections, each a dict of JSON values;
``--json`` prints exactly that, the human output the same data section by section (``render``).
Sections and their keys are fixed (tests snapshot them): ``versions`` (Python, platform, specedit,
llama-cpp-python), ``llama_cpp`` (the build: ``models.llama_build.llama_build``), ``torch``
(version, CUDA, devices), ``triton`` (version, and where the verification kernel runs:
``kernels.support.kernel_support``), ``runs_on`` (what ``rewrite``, ``serve`` and the terminal app
would run on with their default ``LoadConfig``: ``plan(cfg)``), ``models`` (the catalog's models:
installed, size, sha256 status, ``model_hashes.recorded_check``), ``stores`` (per store the folders
searched and the models found, ``models.stores.scan``), ``server`` (the socket and discovery file
of ``specedit serve``) and ``state`` (the state and models dirs, with their sizes).
torch and triton are imported only here, lazily (a missing one: ``installed: false``). Nothing is
loaded: ``plan`` reads the GGUF header. Model files are hashed only with ``--verify``. The
discovery file's TCP token is never shown.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from ...engine.backend import ModelError
from ...models.catalog import CATALOG, DEFAULT_MODEL
from ..options import LoadConfig

SECTIONS = {
    "versions": "Versions",
    "llama_cpp": "llama.cpp build",
    "torch": "torch",
    "triton": "Triton",
    "runs_on": "What would run where",
    "models": "Models",
    "stores": "Models in Ollama, LM Studio and the Hugging Face cache",
    "server": "Server",
    "state": "State",
}
ENTRY_POINTS = {"rewrite": ["rewrite", "FILE", "-i", "x"], "serve": ["serve"], "tui": ["tui"]}


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def versions() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpus": os.cpu_count() or 0,
        "specedit": _version("specedit"),
        "llama_cpp_python": _version("llama_cpp_python"),
    }


def llama_section() -> dict[str, Any]:
    from ...models.llama_build import llama_build

    try:
        b = llama_build()
    except (ImportError, OSError) as e:
        return {"installed": False, "error": f"{type(e).__name__}: {e}"}
    d = b.to_json()
    del d["system_info"]  # the same facts as ``features``
    return {"installed": True, "label": b.label, **d}


def torch_section() -> dict[str, Any]:
    try:
        import torch
    except ImportError:
        return {"installed": False}
    cuda = torch.cuda.is_available()
    devices = []
    for i in range(torch.cuda.device_count() if cuda else 0):
        p = torch.cuda.get_device_properties(i)
        devices.append(
            {
                "index": i,
                "name": p.name,
                "capability": f"{p.major}.{p.minor}",
                "memory_total": int(p.total_memory),
            }
        )
    return {
        "installed": True,
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_available": cuda,
        "devices": devices,
        "threads": torch.get_num_threads(),
    }


def triton_section(torch_info: dict[str, Any]) -> dict[str, Any]:
    try:
        import triton
    except ImportError:
        return {"installed": False}
    from ...kernels.support import kernel_support

    ok, why = kernel_support("cuda" if torch_info.get("cuda_available") else "cpu")
    return {"installed": True, "version": triton.__version__, "kernel_runs": ok, "kernel": why}


def plan(cfg: LoadConfig | None = None) -> dict[str, Any]:
    """What loading with ``cfg`` (default: ``LoadConfig()``, what every entry point uses
    without options) would run on: backend, device, layers offloaded, threads, and why.
    Nothing is loaded; a problem a load would hit is reported under ``error``."""
    from ...models.catalog import resolve_model
    from ...models.llama_build import device_label, gguf_layer_count, llama_build, parse_gpu_layers
    from ...models.llama_build import resolve_gpu_layers as resolve
    from ..runtime.loaded_model import resolve_backend

    cfg = cfg or LoadConfig()
    threads = cfg.threads or max(1, os.cpu_count() or 1)
    out: dict[str, Any] = {"model": cfg.model, "backend": cfg.backend, "n_ctx": cfg.n_ctx}
    try:
        out["backend"] = resolve_backend(cfg)
    except ModelError as e:
        return {**out, "error": str(e)}
    if out["backend"] == "torch":
        t = torch_section()
        if not t["installed"]:
            return {**out, "error": "the torch backend needs the 'torch' extra"}
        cuda = t["cuda_available"] and not (cfg.device or "cuda").startswith("cpu")
        dev = f"CUDA0 {t['devices'][0]['name']}" if cuda else "cpu"
        why = f"--device {cfg.device}" if cfg.device else "backend auto: CUDA with Triton"
        return {**out, "device": dev, "gpu_layers": "n/a", "threads": threads, "reason": why}
    try:
        build = llama_build()
        try:
            n_layers = gguf_layer_count(resolve_model(cfg.model))
        except ModelError as e:  # not installed: say where it would run all the same
            out["error"], n_layers = str(e), None
        n, why = resolve(cfg.gpu_layers, build, n_layers or 1)
    except (ModelError, ValueError, ImportError, OSError) as e:
        return {**out, "error": str(e)}
    if n_layers:
        layers = f"{n}/{n_layers}"
    else:
        layers = "0" if n == 0 else str(parse_gpu_layers(cfg.gpu_layers)).replace("auto", "all")
    return {
        **out,
        "device": device_label(build, n, n_layers or 1),
        "gpu_layers": layers,
        "threads": threads,
        "reason": why,
    }


def entry_configs() -> dict[str, LoadConfig]:
    """The ``LoadConfig`` each entry point builds when given no options: from its parser,
    and for the terminal app laid over its config file and ``$SPECEDIT_MODEL``."""
    from ..tui.config import load_settings
    from .flags import build_parser, load_config

    parser = build_parser()
    configs = {name: load_config(parser.parse_args(argv)) for name, argv in ENTRY_POINTS.items()}
    configs["tui"] = load_settings(configs["tui"])[0].load_config()
    return configs


def models_section(verify: bool) -> dict[str, Any]:
    from ...models import catalog, model_hashes
    from ..runtime.loaded_model import model_hash_record

    out: dict[str, Any] = {"dir": str(catalog.models_dir()), "default": DEFAULT_MODEL}
    for name, entry in CATALOG.items():
        path = catalog.model_path(name)
        size = path.stat().st_size if path.is_file() else None
        installed = size == entry.size_bytes
        if not installed:
            sha = "not installed" if size is None else "wrong size"
        elif not verify:  # hashing 1 GB on every run is not a doctor's job
            seen = model_hashes.recorded_check(path, model_hash_record())
            sha = {True: "ok (checked, file unchanged since)", False: "MISMATCH (checked)"}.get(
                seen, "not checked yet (--verify hashes it)"
            )
        else:
            try:
                model_hashes.verify(name, record=model_hash_record())
                sha = "ok"
            except ModelError as e:
                sha = f"mismatch: {e}"
        out[name] = {"installed": installed, "size": size, "sha256": sha}
    return out


def stores_section() -> dict[str, Any]:
    """What the other apps' stores hold; nothing is hashed, only GGUF headers are read."""
    from ...models import stores

    out: dict[str, Any] = {}
    for store, found in stores.scan().items():
        models = []
        for m in found:
            size, quant, path = m.size, m.quantization, str(m.path)
            entry = {"name": m.name, "size": size, "quantization": quant, "path": path}
            models.append({**entry, "problem": m.problem} if m.problem else entry)
        out[store] = {"dirs": [str(d) for d in stores.roots(store)[0]], "models": models}
    return out


def server_section() -> dict[str, Any]:
    from ..server.paths import default_socket_path, discovery_path, read_discovery, socket_alive

    sock = default_socket_path()
    disc = discovery_path(sock)
    info = read_discovery(disc)
    pid = info.get("pid") if info else None
    return {
        "socket": str(sock),
        "socket_exists": sock.exists(),
        "answering": sock.exists() and socket_alive(sock, timeout=0.5),
        "discovery_file": str(disc),
        "discovery_exists": disc.exists(),
        "pid": pid if isinstance(pid, int) else None,
        "pid_alive": isinstance(pid, int) and _alive(pid),
        "model": info.get("model") if info else None,
        "tcp": bool(info and info.get("tcp")),
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _du(path: Path) -> tuple[int, int]:
    """(bytes, files) under ``path``; a missing path is empty."""
    total = files = 0
    for root, _, names in os.walk(path):
        for n in names:
            try:
                total += os.lstat(os.path.join(root, n)).st_size
                files += 1
            except OSError:
                pass
    return total, files


def state_section() -> dict[str, Any]:
    from ...models.catalog import models_dir
    from ..store.state import state_dir

    sd, md = state_dir(), models_dir()
    size, files = _du(sd)
    parts = []
    if sd.is_dir():
        for p in sorted(sd.iterdir()):
            parts.append({"name": p.name, "size": _du(p)[0] if p.is_dir() else p.stat().st_size})
    return {
        "state_dir": str(sd),
        "state_size": size,
        "state_files": files,
        "state_parts": parts,
        "models_dir": str(md),
        "models_size": _du(md)[0],
    }


def collect(verify: bool = False) -> dict[str, dict[str, Any]]:
    """Every section of the report (see the module contract)."""
    t = torch_section()
    return {
        "versions": versions(),
        "llama_cpp": llama_section(),
        "torch": t,
        "triton": triton_section(t),
        "runs_on": {name: plan(cfg) for name, cfg in entry_configs().items()},
        "models": models_section(verify),
        "stores": stores_section(),
        "server": server_section(),
        "state": state_section(),
    }


def _human(n: int) -> str:
    size, unit = float(n), "B"
    for bigger in ("KiB", "MiB", "GiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"


def _fmt(key: str, v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return "-"
    if isinstance(v, int) and key.endswith(("size", "memory_total", "memory_free")):
        return _human(v)
    if isinstance(v, list) and all(not isinstance(x, dict) for x in v):
        return " ".join(str(x) for x in v) or "-"
    return str(v)


def _lines(d: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(f"{pad}{k}:")
            out += _lines(v, indent + 2)
        elif isinstance(v, list) and any(isinstance(x, dict) for x in v):
            out.append(f"{pad}{k}:")
            for item in v:
                out.append(f"{pad}  - " + ", ".join(f"{a}={_fmt(a, b)}" for a, b in item.items()))
        else:
            out.append(f"{pad}{k + ':':22}{_fmt(k, v)}")
    return out


def render(report: dict[str, dict[str, Any]]) -> str:
    out = ["specedit doctor"]
    for key, title in SECTIONS.items():
        out += ["", title, *_lines(report[key], 2)]
    return "\n".join(out) + "\n"


def doctor_main(args: Any) -> int:
    """The ``specedit doctor`` command: the report on stdout."""
    report = collect(verify=getattr(args, "verify", False))
    text = json.dumps(report, indent=1) + "\n" if args.json else render(report)
    sys.stdout.write(text)
    return 0
