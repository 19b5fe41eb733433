"""The llama.cpp build picks the machine's accelerator: scripts/llama-cmake-args.sh and
scripts/install-llama.sh, run on fake machines.

Each machine is a PATH holding only stub ``nvcc``/``nvidia-smi``/``uname`` executables next to
the few real tools the scripts use, a fake cpuinfo (``SPECEDIT_CPUINFO``) and a fake
``/dev/nvidia0`` (``SPECEDIT_NVIDIA_DEV``), so the answers do not depend on the machine the
tests run on. Nothing is built: install-llama.sh gets a stub pip that records its calls.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARGS = ROOT / "scripts" / "llama-cmake-args.sh"
INSTALL = ROOT / "scripts" / "install-llama.sh"
BASH = shutil.which("bash")
TOOLS = ("bash", "grep", "tr", "sort", "paste", "dirname")

# x86 flags of a desktop CPU with AVX-512 and AMX, as /proc/cpuinfo lists them
CPUINFO = (
    "processor\t: 0\nvendor_id\t: GenuineIntel\n"
    "flags\t\t: fpu sse sse2 ssse3 fma f16c avx avx2 bmi2 avx512f avx512_vnni avx_vnni "
    "amx_tile amx_int8 amx_bf16\n"
)
CPU_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF "
    "-DGGML_AMX_BF16=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_BMI2=ON -DGGML_AVX512=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX_VNNI=ON"
)


def _stub(d: Path, name: str, body: str) -> None:
    p = d / name
    p.write_text(f"#!{BASH}\n{body}\n")
    p.chmod(0o755)


class Machine:
    """A fake machine: stub tools on PATH, cpuinfo and /dev/nvidia0 stand-ins."""

    def __init__(self, root: Path, *, os_name="Linux", arch="x86_64", cpuinfo=CPUINFO) -> None:
        self.bin = root / "bin"
        self.bin.mkdir()
        for tool in TOOLS:
            os.symlink(shutil.which(tool), self.bin / tool)
        _stub(
            self.bin,
            "uname",
            f'case "$1" in -s) echo {os_name};; -m) echo {arch};; *) echo {os_name};; esac',
        )
        self.cpuinfo = root / "cpuinfo"
        self.cpuinfo.write_text(cpuinfo)
        self.dev = root / "nvidia0"  # absent until gpu_device()
        self.env = {
            "PATH": str(self.bin),
            "HOME": str(root),
            "SPECEDIT_CPUINFO": str(self.cpuinfo),
            "SPECEDIT_NVIDIA_DEV": str(self.dev),
        }

    def nvcc(self) -> Machine:
        _stub(self.bin, "nvcc", "echo 'Cuda compilation tools, release 13.0'")
        return self

    def nvidia_smi(self, *caps: str) -> Machine:
        gpus = "\n".join(f"GPU {i}: NVIDIA Card (UUID: GPU-{i})" for i in range(len(caps)))
        _stub(
            self.bin,
            "nvidia-smi",
            f'if [ "$1" = -L ]; then printf "%s\\n" "{gpus}"; [ -n "{gpus}" ]; exit; fi\n'
            f'printf "%s\\n" {" ".join(caps)}',
        )
        return self

    def gpu_device(self) -> Machine:
        self.dev.write_text("")
        return self

    def run(self, script: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [BASH, str(script), *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def args(self, **env: str) -> str:
        r = self.run(ARGS, **env)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def backend(self, **env: str) -> tuple[str, str]:
        r = self.run(ARGS, "--backend", **env)
        assert r.returncode == 0, r.stderr
        choice, why = r.stdout.rstrip("\n").split("\t")
        return choice, why


@pytest.fixture
def machine(tmp_path):
    return Machine(tmp_path)


def test_cpu_machine_gets_todays_flags(machine):
    assert machine.args() == CPU_ARGS  # AMX off although the CPU lists it; no OpenMP
    assert machine.backend() == ("cpu", "no nvcc and not Apple silicon")


def test_cpu_flags_follow_cpuinfo(tmp_path):
    m = Machine(tmp_path, cpuinfo="flags\t\t: fpu sse2 avx avx2 fma\n")
    assert m.args() == (
        "-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF "
        "-DGGML_AMX_BF16=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON"
    )


def test_nvcc_without_a_gpu_stays_on_the_cpu(machine):
    machine.nvcc()
    assert machine.args() == CPU_ARGS
    choice, why = machine.backend()
    assert choice == "cpu" and "no NVIDIA GPU is visible" in why


def test_gpu_without_nvcc_stays_on_the_cpu(machine):
    machine.nvidia_smi("8.6").gpu_device()
    assert machine.args() == CPU_ARGS
    assert machine.backend()[0] == "cpu"


def test_nvcc_and_nvidia_smi_build_cuda_for_the_card(machine):
    machine.nvcc().nvidia_smi("8.6")
    assert machine.args() == CPU_ARGS + " -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=86"
    choice, why = machine.backend()
    assert choice == "cuda 86" and "nvidia-smi lists a GPU" in why


def test_two_cards_get_both_architectures(machine):
    machine.nvcc().nvidia_smi("8.9", "8.6", "8.9")
    assert machine.args().endswith(" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=86;89")


def test_dev_nvidia0_counts_as_a_gpu_and_the_arch_is_native(machine):
    machine.nvcc().gpu_device()  # no nvidia-smi: the architecture is CMake's "native"
    assert machine.args().endswith(" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native")
    choice, why = machine.backend()
    assert choice == "cuda native" and "nvidia0 exists" in why


def test_nvcc_found_through_cudacxx_or_cuda_home(machine, tmp_path):
    home = tmp_path / "cuda"
    (home / "bin").mkdir(parents=True)
    _stub(home / "bin", "nvcc", "true")
    machine.nvidia_smi("9.0")  # no nvcc on PATH
    assert machine.backend()[0] == "cpu"
    assert machine.backend(CUDACXX=str(home / "bin" / "nvcc"))[0] == "cuda 90"
    assert machine.backend(CUDA_HOME=str(home))[0] == "cuda 90"
    assert machine.backend(CUDA_HOME=str(tmp_path))[0] == "cpu"  # no bin/nvcc there


def test_cuda_arch_override(machine):
    machine.nvcc().nvidia_smi("8.6")
    assert machine.args(SPECEDIT_CUDA_ARCH="8.9").endswith("-DCMAKE_CUDA_ARCHITECTURES=89")
    assert machine.args(SPECEDIT_CUDA_ARCH="86,120").endswith("ARCHITECTURES=86;120")
    assert machine.args(SPECEDIT_CUDA_ARCH="bogus").endswith("ARCHITECTURES=native")


def test_apple_silicon_builds_metal(tmp_path):
    m = Machine(tmp_path, os_name="Darwin", arch="arm64", cpuinfo="")
    assert (
        m.args()
        == "-DGGML_NATIVE=ON -DGGML_OPENMP=OFF -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON"
    )
    assert m.backend() == ("metal", "Apple silicon")


def test_arm_linux_keeps_native_and_no_openmp(tmp_path):
    m = Machine(tmp_path, arch="aarch64", cpuinfo="Features\t: fp asimd\n")
    assert m.args() == "-DGGML_NATIVE=ON -DGGML_OPENMP=OFF"


@pytest.mark.parametrize(
    ("gpu", "tail", "choice"),
    [
        ("cpu", "", "cpu"),
        ("vulkan", " -DGGML_VULKAN=ON", "vulkan"),
        ("metal", " -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON", "metal"),
        ("cuda", " -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=86", "cuda 86"),
    ],
)
def test_specedit_gpu_overrides_the_choice(machine, gpu, tail, choice):
    machine.nvcc().nvidia_smi("8.6")  # would be CUDA without the override
    assert machine.args(SPECEDIT_GPU=gpu) == CPU_ARGS + tail
    assert machine.backend(SPECEDIT_GPU=gpu) == (choice, f"SPECEDIT_GPU={gpu}")


def test_unknown_specedit_gpu_is_one_clear_line(machine):
    r = machine.run(ARGS, SPECEDIT_GPU="rocm")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == "SPECEDIT_GPU=rocm: use cuda, vulkan, metal or cpu"


# ---- install-llama.sh: rebuild only when the installed build is not the wanted one ----


def _venv(machine: Machine, root: Path, *, python_flags: str = "") -> Path:
    """A venv bin dir: this test's Python (with its llama_cpp) and a pip that only logs."""
    vbin = root / "venv"
    vbin.mkdir()
    _stub(vbin, "python", f'exec {sys.executable} {python_flags} "$@"')
    _stub(vbin, "pip", f'echo "$* CMAKE_ARGS=$CMAKE_ARGS" >> {root / "pip.log"}')
    return vbin


def _installed_backends() -> str:
    import llama_cpp

    return llama_cpp.llama_print_system_info().decode()


def test_install_keeps_a_build_that_matches(machine, tmp_path):
    if "CUDA :" in _installed_backends() or "OPENMP = 1" in _installed_backends():
        pytest.skip("this test needs the CPU build CI and our machines get")
    vbin = _venv(machine, tmp_path)
    r = machine.run(INSTALL, str(vbin), "llama-cpp-python==0.3.36")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wanted backend: cpu (no nvcc and not Apple silicon)" in r.stdout
    assert "installed build: CPU, llama-cpp-python" in r.stdout
    assert not (tmp_path / "pip.log").exists()  # nothing rebuilt


def test_install_rebuilds_a_cpu_build_for_cuda(machine, tmp_path):
    if "CUDA :" in _installed_backends():
        pytest.skip("this test needs a build without CUDA")
    machine.nvcc().nvidia_smi("8.6")
    vbin = _venv(machine, tmp_path)
    r = machine.run(INSTALL, str(vbin), "llama-cpp-python==0.3.36")
    # the stub pip builds nothing, so the check after the "build" still fails: exit 1
    assert r.returncode == 1
    assert "wanted backend: cuda 86" in r.stdout
    assert "installed build is CPU, wanted CUDA" in r.stdout
    assert "the build is still not the wanted one" in r.stderr
    remove, call = (tmp_path / "pip.log").read_text().splitlines()
    assert remove.startswith("cache remove llama_cpp_python")  # the stale wheel goes
    assert call.startswith("install --force-reinstall --no-deps --no-cache-dir llama-cpp-python")
    assert call.endswith(CPU_ARGS + " -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=86")


def test_install_without_llama_cpp_builds_then_retries_uncached(machine, tmp_path):
    vbin = _venv(machine, tmp_path, python_flags="-S")  # -S: no site-packages, no llama_cpp
    r = machine.run(INSTALL, str(vbin), "llama-cpp-python==0.3.36")
    assert r.returncode == 1
    assert "not installed (ModuleNotFoundError" in r.stdout
    calls = (tmp_path / "pip.log").read_text().splitlines()
    assert calls == [
        f"install llama-cpp-python==0.3.36 CMAKE_ARGS={CPU_ARGS}",
        "cache remove llama_cpp_python CMAKE_ARGS=",
        f"install --force-reinstall --no-deps --no-cache-dir llama-cpp-python==0.3.36 "
        f"CMAKE_ARGS={CPU_ARGS}",
    ]
