"""How many layers go to the GPU, for builds with and without a GPU backend.

``resolve_gpu_layers`` is a pure function of the build's description, so the GPU builds
here are descriptions parsed from the ``llama_print_system_info`` a CUDA and a Metal
build print; the installed (CPU) build is checked for real in test_llama.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from specedit.engine.backend import ModelError
from specedit.models.llama_build import (
    Device,
    LlamaBuild,
    device_label,
    llama_build,
    parse_gpu_layers,
    parse_system_info,
    resolve_gpu_layers,
)

CUDA_INFO = (
    "CUDA : ARCHS = 860,890 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | "
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "OPENMP = 0 | LLAMAFILE = 1 | REPACK = 1 | "
)
CPU_DEV = Device("CPU", "AMD Ryzen 9 7950X", "cpu", 64 << 30, 60 << 30)
RTX = Device("CUDA0", "NVIDIA GeForce RTX 4090", "gpu", 24 << 30, 23 << 30)


def _build(info: str, devices: tuple[Device, ...], offload: bool, source="ggml") -> LlamaBuild:
    features = parse_system_info(info)
    return LlamaBuild(
        version="0.3.36",
        backends=tuple(features),
        gpu_offload=offload,
        simd=tuple(k for k, v in features["CPU"].items() if v == "1"),
        openmp=features["CPU"].get("OPENMP") == "1",
        features=features,
        devices=devices,
        device_source=source,
        system_info=info,
    )


CUDA = _build(CUDA_INFO, (RTX, CPU_DEV), offload=True)
CUDA_NO_CARD = _build(CUDA_INFO, (CPU_DEV,), offload=True)
CPU = _build("CPU : SSE3 = 1 | AVX2 = 1 | LLAMAFILE = 1 | ", (CPU_DEV,), offload=False)


def test_system_info_is_parsed_per_backend():
    f = parse_system_info(CUDA_INFO)
    assert list(f) == ["CUDA", "CPU"]
    assert f["CUDA"] == {"ARCHS": "860,890", "USE_GRAPHS": "1", "PEER_MAX_BATCH_SIZE": "128"}
    assert f["CPU"]["AVX2"] == "1" and f["CPU"]["OPENMP"] == "0"
    assert parse_system_info("") == {}


def test_installed_build_is_described():
    b = llama_build()
    assert b is llama_build()  # cached
    assert "CPU" in b.backends and b.version
    assert b.system_info and parse_system_info(b.system_info) == b.features
    assert not set(b.simd) & {"OPENMP", "LLAMAFILE", "REPACK"}
    if b.device_source == "ggml":  # the device API lists the CPU too
        assert any(d.kind == "cpu" for d in b.devices)
    json = b.to_json()
    assert json["version"] == b.version and isinstance(json["devices"], list)
    assert json["gpu_backends"] == [] or b.gpu_offload


@pytest.mark.parametrize(
    ("text", "value"),
    [("auto", "auto"), ("ALL", "all"), (" 12 ", 12), ("0", 0), (7, 7)],
)
def test_parse_gpu_layers(text, value):
    assert parse_gpu_layers(text) == value


@pytest.mark.parametrize("bad", ["-1", "some", "", "1.5", -3, True])
def test_parse_gpu_layers_rejects_with_one_line(bad):
    with pytest.raises(ValueError, match="gpu layers takes auto, all or a number") as e:
        parse_gpu_layers(bad)
    assert "\n" not in str(e.value)


def test_auto_offloads_everything_on_a_gpu_build_with_a_card():
    assert resolve_gpu_layers("auto", CUDA, 25) == (
        25,
        "auto: all 25 layers on CUDA0 NVIDIA GeForce RTX 4090",
    )


def test_auto_stays_on_the_cpu_without_a_card_or_a_gpu_build():
    n, why = resolve_gpu_layers("auto", CUDA_NO_CARD, 25)
    assert n == 0 and why == "auto: CPU, llama-cpp-python 0.3.36 (CUDA + CPU) sees no GPU device"
    n, why = resolve_gpu_layers("auto", CPU, 25)
    assert n == 0 and why == "auto: CPU, llama-cpp-python 0.3.36 (CPU) has no GPU backend"


def test_auto_trusts_the_build_when_devices_cannot_be_listed():
    blind = dataclasses.replace(CUDA_NO_CARD, devices=(), device_source="unavailable")
    assert resolve_gpu_layers("auto", blind, 29) == (29, "auto: all 29 layers on the GPU")


def test_explicit_layers_on_a_gpu_build():
    assert resolve_gpu_layers("all", CUDA, 25)[0] == 25
    assert resolve_gpu_layers(10, CUDA, 25) == (
        10,
        "--gpu-layers 10: 10/25 layers on CUDA0 NVIDIA GeForce RTX 4090",
    )
    assert resolve_gpu_layers("99", CUDA, 25)[0] == 25  # more than the model has: all
    assert resolve_gpu_layers(0, CUDA, 25) == (0, "--gpu-layers 0: CPU")


@pytest.mark.parametrize("spec", ["all", 8, "8"])
def test_explicit_offload_on_a_cpu_build_names_the_build_and_the_fix(spec):
    with pytest.raises(ModelError) as e:
        resolve_gpu_layers(spec, CPU, 25)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"--gpu-layers {spec} needs a GPU build of llama.cpp")
    assert "CPU only (llama-cpp-python 0.3.36, backends: CPU)" in msg
    assert "SPECEDIT_GPU=cuda make setup" in msg
    assert 'CMAKE_ARGS="-DGGML_CUDA=ON" pip install --force-reinstall' in msg
    assert "llama-cpp-python==0.3.36" in msg


def test_explicit_offload_without_a_card_is_refused():
    with pytest.raises(ModelError, match="sees no GPU device .* --gpu-layers 0 for the CPU"):
        resolve_gpu_layers("all", CUDA_NO_CARD, 25)
    assert resolve_gpu_layers(0, CUDA_NO_CARD, 25)[0] == 0


def test_device_label():
    assert device_label(CUDA, 0, 25) == "CPU"
    assert device_label(CUDA, 25, 25) == "CUDA0 NVIDIA GeForce RTX 4090"
    assert device_label(CUDA, 12, 25) == "CUDA0 NVIDIA GeForce RTX 4090 (12/25 layers) + CPU"
    two = dataclasses.replace(CUDA, devices=(RTX, dataclasses.replace(RTX, name="CUDA1")))
    assert device_label(two, 25, 25) == (
        "CUDA0 NVIDIA GeForce RTX 4090 + CUDA1 NVIDIA GeForce RTX 4090"
    )
    blind = dataclasses.replace(CUDA, devices=(), device_source="unavailable")
    assert device_label(blind, 25, 25) == "CUDA"
