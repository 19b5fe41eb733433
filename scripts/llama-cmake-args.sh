#!/usr/bin/env bash
# CMake flags for building llama-cpp-python on this machine: the accelerator backend it has,
# plus the CPU backend (always built: it runs whatever is not offloaded) with this CPU's SIMD.
#
# Usage: scripts/llama-cmake-args.sh            the CMAKE_ARGS, on one line
#        scripts/llama-cmake-args.sh --backend  "cpu", "metal", "vulkan" or "cuda ARCHS",
#                                               then a tab and why
#
# Backend: CUDA when nvcc is found (PATH, $CUDACXX, $CUDA_HOME/bin) AND an NVIDIA GPU is
# visible (`nvidia-smi -L` lists one, or /dev/nvidia0 exists); Metal on Apple silicon; else
# the CPU. SPECEDIT_GPU=cuda|vulkan|metal|cpu overrides the choice. A CUDA build compiles
# its kernels for the card's architecture only (`nvidia-smi --query-gpu=compute_cap`:
# 8.6 -> 86; SPECEDIT_CUDA_ARCH=86 or "86;89" overrides; "native" when neither says), so it
# takes minutes instead of the hour llama.cpp's default list of architectures takes.
#
# x86 CPU flags: GGML_NATIVE is off on purpose: -march=native also enables Intel AMX code
# paths, which crash (SIGSEGV in llama_decode) where the kernel or hypervisor does not grant
# AMX tile state, as on our sandboxes. We enable the SIMD sets the CPU has instead. On other
# CPUs (Apple silicon, arm64 Linux) GGML_NATIVE stays on: there is no AMX there.
# GGML_OPENMP is off everywhere: see install-llama.sh (worker-thread decoding ran 1.5x slower).
#
# For tests: SPECEDIT_CPUINFO (default /proc/cpuinfo) and SPECEDIT_NVIDIA_DEV (default
# /dev/nvidia0) stand in for the machine's files; nvcc, nvidia-smi and uname come from PATH.
set -euo pipefail

cpuinfo=${SPECEDIT_CPUINFO:-/proc/cpuinfo}
nvidia_dev=${SPECEDIT_NVIDIA_DEV:-/dev/nvidia0}
os=$(uname -s 2>/dev/null || echo unknown)
arch=$(uname -m 2>/dev/null || echo unknown)

find_nvcc() {
  local c
  for c in "${CUDACXX:-}" "$(command -v nvcc 2>/dev/null || true)" \
    "${CUDA_HOME:+$CUDA_HOME/bin/nvcc}"; do
    if [[ -n "$c" && -x "$c" ]]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

nvidia_gpu() {  # prints how the GPU was seen; fails when none is
  local listed=""  # read it whole first: grep -q closing the pipe early fails it (pipefail)
  command -v nvidia-smi >/dev/null 2>&1 && listed=$(nvidia-smi -L 2>/dev/null || true)
  if grep -q '^GPU ' <<<"$listed"; then
    echo "nvidia-smi lists a GPU"
  elif [[ -e "$nvidia_dev" ]]; then
    echo "$nvidia_dev exists"
  else
    return 1
  fi
}

cuda_archs() {  # "86" or "86;89" from the cards, else "native"
  local want=${SPECEDIT_CUDA_ARCH:-}
  if [[ -z "$want" ]] && command -v nvidia-smi >/dev/null 2>&1; then
    want=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
      tr -d ' .' | grep -E '^[0-9]+$' | sort -un | paste -sd ';' || true)
  fi
  want=$(echo "$want" | tr -d ' .' | tr ',' ';')
  if [[ "$want" =~ ^[0-9]+[a-z]?(\;[0-9]+[a-z]?)*$ ]]; then
    echo "$want"
  else
    echo native
  fi
}

why=""
backend=${SPECEDIT_GPU:-}
case "$backend" in
  "") ;;
  cuda | vulkan | metal | cpu) why="SPECEDIT_GPU=$backend" ;;
  *)
    echo "SPECEDIT_GPU=$backend: use cuda, vulkan, metal or cpu" >&2
    exit 2
    ;;
esac
if [[ -z "$backend" ]]; then
  if nvcc=$(find_nvcc) && seen=$(nvidia_gpu); then
    backend=cuda why="$nvcc found and $seen"
  elif [[ "$os" == Darwin && "$arch" == arm64 ]]; then
    backend=metal why="Apple silicon"
  elif nvcc=$(find_nvcc); then
    backend=cpu why="$nvcc found but no NVIDIA GPU is visible"
  else
    backend=cpu why="no nvcc and not Apple silicon"
  fi
fi

if [[ "$arch" == x86_64 || "$arch" == amd64 || "$arch" == i?86 ]]; then
  flags=$(grep -m1 '^flags' "$cpuinfo" 2>/dev/null || true)
  has() { [[ " $flags " == *" $1 "* ]]; }
  args="-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  has avx && args+=" -DGGML_AVX=ON"
  has avx2 && args+=" -DGGML_AVX2=ON"
  has fma && args+=" -DGGML_FMA=ON"
  has f16c && args+=" -DGGML_F16C=ON"
  has bmi2 && args+=" -DGGML_BMI2=ON"
  has avx512f && args+=" -DGGML_AVX512=ON"
  has avx512_vnni && args+=" -DGGML_AVX512_VNNI=ON"
  has avx_vnni && args+=" -DGGML_AVX_VNNI=ON"
else
  args="-DGGML_NATIVE=ON -DGGML_OPENMP=OFF"
fi

archs=""
case "$backend" in
  cuda)
    archs=$(cuda_archs)
    args+=" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$archs"
    ;;
  metal) args+=" -DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON" ;;
  vulkan) args+=" -DGGML_VULKAN=ON" ;;
esac
# (llama-cpp-python's own CMakeLists turns Metal on for every macOS build, even a "cpu" one)

if [[ "${1:-}" == --backend ]]; then
  printf '%s\t%s\n' "$backend${archs:+ $archs}" "$why"
else
  echo "$args"
fi
