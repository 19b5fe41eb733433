"""What the installed llama.cpp build can run on, and how many layers to offload.

Contract:
  * ``llama_build()`` (cached per process) describes the installed llama-cpp-python build: its
    version, the ggml backends compiled in, ``llama_supports_gpu_offload()``, SIMD, OpenMP,
    feature flags, and the devices llama.cpp sees (ggml's ``ggml_backend_dev_*`` through ctypes;
    where unavailable, ``device_source == "unavailable"`` and backends come from system info).
  * ``parse_gpu_layers(value)`` reads ``auto | all | N`` (the one parser for the command line,
    settings and plugin options); ``ValueError`` with one clear line otherwise.
  * ``resolve_gpu_layers(spec, build, n_layers) -> (layers, reason)``: ``auto`` offloads all
    ``n_layers`` (blocks plus output layer, ``gguf_layer_count``) when the build can offload and a
    GPU is present, else none; ``all`` or ``N > 0`` on a build that cannot raises ``ModelError``
    naming the installed build and how to get a GPU one.
  * ``device_label(build, offloaded, total)``: ``"CPU"``, ``"CUDA0 NVIDIA GeForce RTX 4090"``,
    or ``"CUDA0 ... (12/25 layers) + CPU"`` for a partial offload (it keys the model's caches).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import mmap
import struct
from dataclasses import asdict, dataclass
from pathlib import Path

from ..engine.backend import ModelError
from .gguf_meta import scan_header

log = logging.getLogger(__name__)

GPU_BACKENDS = {"CUDA": "CUDA", "MTL": "Metal", "Vulkan": "Vulkan", "HIP": "ROCm", "SYCL": "SYCL"}
"""ggml backend names of GPU backends, with the name a user knows them by."""

_NOT_SIMD = {"OPENMP", "LLAMAFILE", "REPACK", "KLEIDIAI", "ACCELERATE"}
_DEV_KINDS = {0: "cpu", 1: "gpu", 2: "igpu", 3: "accel", 4: "meta"}


@dataclass(frozen=True)
class Device:
    """One device llama.cpp sees (ggml backend device)."""

    name: str
    """ggml's name: ``CPU``, ``CUDA0``, ``MTL0``, ``Vulkan0``..."""
    description: str
    """The hardware: ``NVIDIA GeForce RTX 4090``, ``Apple M2``..."""
    kind: str
    """``cpu``, ``gpu``, ``igpu`` (integrated, host memory), ``accel`` or ``meta``."""
    memory_total: int
    """Bytes (0 when the backend does not say)."""
    memory_free: int
    """Bytes free when the build was described."""

    @property
    def label(self) -> str:
        return f"{self.name} {self.description}".strip()


@dataclass(frozen=True)
class LlamaBuild:
    """The installed llama-cpp-python build (see the module contract)."""

    version: str
    """llama-cpp-python's version."""
    backends: tuple[str, ...]
    """ggml backends compiled in, as ggml names them (``CUDA``, ``CPU``)."""
    gpu_offload: bool
    """``llama_supports_gpu_offload()``: the build has a backend that takes layers."""
    simd: tuple[str, ...]
    """The CPU backend's instruction sets (``AVX2``, ``AVX512``, ``NEON``...)."""
    openmp: bool
    """Built with OpenMP (our builds are not: see scripts/install-llama.sh)."""
    features: dict[str, dict[str, str]]
    """Every backend's feature flags, e.g. ``{"CUDA": {"ARCHS": "860"}, "CPU": {...}}``."""
    devices: tuple[Device, ...]
    """Every device llama.cpp sees, the CPU included."""
    device_source: str
    """``ggml`` (backend device API) or ``unavailable`` (devices unknown)."""
    system_info: str
    """``llama_print_system_info()`` verbatim."""

    @property
    def gpu_devices(self) -> tuple[Device, ...]:
        """The devices that take offloaded layers (dedicated and integrated GPUs)."""
        return tuple(d for d in self.devices if d.kind in ("gpu", "igpu"))

    @property
    def label(self) -> str:
        """``llama-cpp-python 0.3.36 (CUDA + CPU)``."""
        return f"llama-cpp-python {self.version} ({' + '.join(self.backends) or '?'})"

    def to_json(self) -> dict:
        """The description as JSON values (lists for tuples)."""
        d = asdict(self)
        d.update(backends=list(self.backends), simd=list(self.simd))
        d["devices"] = [asdict(x) for x in self.devices]
        d["gpu_backends"] = [GPU_BACKENDS[b] for b in self.backends if b in GPU_BACKENDS]
        return d


def parse_system_info(info: str) -> dict[str, dict[str, str]]:
    """``"CUDA : ARCHS = 860 | CPU : SSE3 = 1 | "`` -> ``{"CUDA": {"ARCHS": "860"}, ...}``."""
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for piece in info.split(" | "):
        piece = piece.strip().rstrip("|").strip()
        if not piece:
            continue
        if " : " in piece:  # a new backend: "NAME : FIRST = VALUE"
            name, _, piece = piece.partition(" : ")
            current = out.setdefault(name.strip(), {})
        if current is not None and " = " in piece:
            key, _, value = piece.partition(" = ")
            current[key.strip()] = value.strip()
    return out


def _ggml_devices() -> tuple[Device, ...] | None:
    """The devices from ggml's backend device API, or None where it is not reachable."""
    try:
        from llama_cpp import _ggml

        lib = _ggml.libggml
        lib.ggml_backend_dev_count.restype = ctypes.c_size_t
        lib.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        lib.ggml_backend_dev_get.restype = ctypes.c_void_p
        for fn in (lib.ggml_backend_dev_name, lib.ggml_backend_dev_description):
            fn.argtypes = [ctypes.c_void_p]
            fn.restype = ctypes.c_char_p
        lib.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        lib.ggml_backend_dev_type.restype = ctypes.c_int
        mem = lib.ggml_backend_dev_memory
        size_p = ctypes.POINTER(ctypes.c_size_t)
        mem.argtypes = [ctypes.c_void_p, size_p, size_p]
        mem.restype = None
    except (ImportError, AttributeError, OSError) as e:
        log.info("ggml's device API is not reachable (%s): devices unknown", e)
        return None
    devices = []
    for i in range(lib.ggml_backend_dev_count()):
        dev = lib.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
        mem(dev, ctypes.byref(free), ctypes.byref(total))
        devices.append(
            Device(
                name=(lib.ggml_backend_dev_name(dev) or b"?").decode(errors="replace"),
                description=(lib.ggml_backend_dev_description(dev) or b"").decode(errors="replace"),
                kind=_DEV_KINDS.get(lib.ggml_backend_dev_type(dev), "?"),
                memory_total=int(total.value),
                memory_free=int(free.value),
            )
        )
    return tuple(devices)


@functools.cache
def llama_build() -> LlamaBuild:
    """Describe the installed llama-cpp-python build (cached: the build cannot change)."""
    import llama_cpp

    llama_cpp.llama_backend_init()
    info = llama_cpp.llama_print_system_info().decode(errors="replace")
    features = parse_system_info(info)
    cpu = features.get("CPU", {})
    devices = _ggml_devices()
    return LlamaBuild(
        version=llama_cpp.__version__,
        backends=tuple(features),
        gpu_offload=bool(llama_cpp.llama_supports_gpu_offload()),
        simd=tuple(k for k, v in cpu.items() if v == "1" and k not in _NOT_SIMD),
        openmp=cpu.get("OPENMP") == "1",
        features=features,
        devices=devices or (),
        device_source="ggml" if devices is not None else "unavailable",
        system_info=info,
    )


def parse_gpu_layers(value: str | int) -> str | int:
    """``"auto"``, ``"all"`` or a layer count ``>= 0`` (an int); ``ValueError`` otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        text = str(value).strip().lower()
        if text in ("auto", "all"):
            return text
        try:
            n = int(text)
        except ValueError:
            raise ValueError(f"gpu layers takes auto, all or a number, not {value!r}") from None
    if n < 0:
        raise ValueError(f"gpu layers takes auto, all or a number >= 0, not {n}")
    return n


def _cpu_only(spec: str | int, build: LlamaBuild) -> ModelError:
    return ModelError(
        f"--gpu-layers {spec} needs a GPU build of llama.cpp, but the installed one is CPU only "
        f"(llama-cpp-python {build.version}, backends: {', '.join(build.backends) or '?'}); "
        f"get one with `SPECEDIT_GPU=cuda make setup` in a specedit checkout (or vulkan, metal) "
        f'or `CMAKE_ARGS="-DGGML_CUDA=ON" pip install --force-reinstall --no-cache-dir '
        f"llama-cpp-python=={build.version}`, or use --gpu-layers 0"
    )


def resolve_gpu_layers(spec: str | int, build: LlamaBuild, n_layers: int) -> tuple[int, str]:
    """How many of ``n_layers`` to offload for ``spec``, and why (see the module contract)."""
    spec = parse_gpu_layers(spec)
    gpus = build.gpu_devices
    where = " + ".join(d.label for d in gpus) or "the GPU"
    if spec == "auto":
        if not build.gpu_offload:
            return 0, f"auto: CPU, {build.label} has no GPU backend"
        if not gpus and build.device_source == "ggml":
            return 0, f"auto: CPU, {build.label} sees no GPU device"
        return n_layers, f"auto: all {n_layers} layers on {where}"
    if spec == 0:
        return 0, "--gpu-layers 0: CPU"
    if not build.gpu_offload:
        raise _cpu_only(spec, build)
    if not gpus and build.device_source == "ggml":
        raise ModelError(
            f"--gpu-layers {spec}: {build.label} sees no GPU device (is the driver loaded? "
            "nvidia-smi should list the card); use --gpu-layers 0 for the CPU"
        )
    n = n_layers if spec == "all" else min(int(spec), n_layers)
    return n, f"--gpu-layers {spec}: {n}/{n_layers} layers on {where}"


def device_label(build: LlamaBuild, offloaded: int, total: int) -> str:
    """Where a model with ``offloaded`` of ``total`` layers on the GPU runs."""
    if offloaded <= 0:
        return "CPU"
    gpus = " + ".join(d.label for d in build.gpu_devices) or next(
        (b for b in build.backends if b in GPU_BACKENDS), "GPU"
    )
    return gpus if offloaded >= total else f"{gpus} ({offloaded}/{total} layers) + CPU"


def gguf_layer_count(path: str | Path) -> int:
    """Layers llama.cpp offloads for the GGUF at ``path``: its blocks plus the output layer."""
    path = Path(path)
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            fields = scan_header(mm).fields
    except (OSError, ValueError, struct.error) as e:
        raise ModelError(f"{path}: cannot read its GGUF header ({e})") from e
    arch = fields.get("general.architecture")
    blocks = fields.get(f"{arch}.block_count")
    if not isinstance(blocks, int):
        raise ModelError(f"{path}: GGUF metadata lacks {arch}.block_count")
    return blocks + 1
