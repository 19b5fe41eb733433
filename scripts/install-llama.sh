#!/usr/bin/env bash
# Install llama-cpp-python into the venv whose pip is $1, built from source for this CPU.
# Usage: scripts/install-llama.sh VENV_BIN SPEC   (e.g. .venv/bin llama-cpp-python==0.3.36)
#
# The build must not use OpenMP: with an OpenMP build, llama_decode called from a worker
# thread (the terminal app and the socket server run the engine on one) ran 1.5x slower
# than from the main thread on 2 cores; ggml's own thread pool runs at the same speed
# from any thread. pip's wheel cache does not key on CMAKE_ARGS, so a wheel cached from
# an earlier build with other flags is detected after install and rebuilt once.
set -euo pipefail
bin=$1
spec=$2
here=$(cd "$(dirname "$0")" && pwd)
args=$(bash "$here/llama-cmake-args.sh")
if ! "$bin/python" -c "import llama_cpp" 2>/dev/null; then
  CMAKE_ARGS="$args" "$bin/pip" install "$spec"
fi
if "$bin/python" -c "import llama_cpp, sys; sys.exit('OPENMP = 1' not in llama_cpp.llama_print_system_info().decode())"; then
  echo "llama-cpp-python was built with OpenMP (a cached wheel?): rebuilding without it"
  "$bin/pip" cache remove llama_cpp_python >/dev/null 2>&1 || true
  CMAKE_ARGS="$args" "$bin/pip" install --force-reinstall --no-deps "$spec"
fi
