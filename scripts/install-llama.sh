#!/usr/bin/env bash
# Install llama-cpp-python into the venv whose pip is $1, built from source for this machine:
# the backend scripts/llama-cmake-args.sh picks (CUDA, Metal, Vulkan or the CPU; SPECEDIT_GPU
# overrides) plus the CPU backend with this CPU's SIMD sets.
# Usage: scripts/install-llama.sh VENV_BIN SPEC   (e.g. .venv/bin llama-cpp-python==0.3.36)
#
# Run it as often as you like: it checks the installed build against the wanted one (the
# accelerator backend, CUDA's architectures, no OpenMP) and rebuilds only when they differ,
# so installing a CUDA toolkit later, or setting SPECEDIT_GPU, takes effect on the next
# `make setup`. pip's wheel cache does not key on CMAKE_ARGS, so a wheel cached from an
# earlier build with other flags is detected after install and rebuilt once, uncached.
#
# The build must not use OpenMP: with an OpenMP build, llama_decode called from a worker
# thread (the terminal app and the socket server run the engine on one) ran 1.5x slower
# than from the main thread on 2 cores; ggml's own thread pool runs at the same speed
# from any thread.
set -euo pipefail
bin=$1
spec=$2
here=$(cd "$(dirname "$0")" && pwd)
args=$(bash "$here/llama-cmake-args.sh")
IFS=$'\t' read -r want why < <(bash "$here/llama-cmake-args.sh" --backend)

# exit 0 when the installed build is the wanted one; print what it is, or why it is not
check() {
  "$bin/python" - "$want" <<'EOF'
import re
import sys

want = sys.argv[1].split()
try:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
except Exception as e:  # not installed, or a library that does not load
    sys.exit(f"not installed ({type(e).__name__}: {e})".splitlines()[0])
names = re.findall(r"(?:^|\| )(\w+) : ", info)
built = " + ".join(names) or "?"
archs = re.search(r"CUDA : ARCHS = ([\d,]+)", info)
if archs:
    built += f" (CUDA archs {archs.group(1)})"
gpu = {"cuda": "CUDA", "metal": "MTL", "vulkan": "Vulkan"}
if "OPENMP = 1" in info:
    sys.exit(f"installed build {built} uses OpenMP")
if want[0] == "cpu":
    # llama-cpp-python turns Metal on for every macOS build; a CPU build has no CUDA/Vulkan
    extra = [n for n in names if n in ("CUDA", "Vulkan")]
    if extra:
        sys.exit(f"installed build is {built}, wanted CPU only")
elif gpu[want[0]] not in names:
    sys.exit(f"installed build is {built}, wanted {gpu[want[0]]}")
if want[0] == "cuda" and len(want) > 1 and want[1] != "native" and archs:
    wanted = {int(re.sub(r"\D", "", a)) for a in want[1].split(";")}
    have = {int(a) // 10 for a in archs.group(1).split(",")}
    if not wanted <= have:
        sys.exit(f"installed build is {built}, wanted CUDA archs {want[1]}")
print(f"installed build: {built}, llama-cpp-python {llama_cpp.__version__}")
EOF
}

echo "llama-cpp-python: wanted backend: $want ($why)"
if status=$(check 2>&1); then
  echo "llama-cpp-python: $status"
  exit 0
fi
echo "llama-cpp-python: $status"
if ! "$bin/python" -c "import llama_cpp" 2>/dev/null; then
  echo "llama-cpp-python: building for $want (CMAKE_ARGS=$args); on 2 cores the CPU build takes 5 minutes"
  CMAKE_ARGS="$args" "$bin/pip" install "$spec"
  if status=$(check 2>&1); then
    echo "llama-cpp-python: built: $status"
    exit 0
  fi
  echo "llama-cpp-python: $status (a wheel cached from another build?)"
fi
echo "llama-cpp-python: rebuilding for $want, uncached (CMAKE_ARGS=$args)"
"$bin/pip" cache remove llama_cpp_python >/dev/null 2>&1 || true
CMAKE_ARGS="$args" "$bin/pip" install --force-reinstall --no-deps --no-cache-dir "$spec"
if ! status=$(check 2>&1); then
  echo "llama-cpp-python: the build is still not the wanted one: $status" >&2
  echo "llama-cpp-python: SPECEDIT_GPU=cpu builds for the CPU only" >&2
  exit 1
fi
echo "llama-cpp-python: built: $status"
