#!/usr/bin/env bash
# CMake flags for building llama-cpp-python's CPU backend on this machine.
# GGML_NATIVE is off on purpose: -march=native also enables Intel AMX code paths,
# which crash (SIGSEGV in llama_decode) where the kernel or hypervisor does not
# grant AMX tile state, as on our sandboxes. We enable the SIMD sets the CPU has.
# GGML_OPENMP is off: see install-llama.sh (worker-thread decoding ran 1.5x slower).
set -euo pipefail
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
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
echo "$args"
