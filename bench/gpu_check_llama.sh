#!/usr/bin/env bash
# bench/gpu_check_llama.sh: the llama.cpp GPU check of issue 13, in one run on a bare,
# offline GPU machine (Python 3.12 with a CUDA torch, nvcc, CMake, ninja; no pip index, no
# model files; at most 64 MiB of working tree). Prepare its files here first:
#
#   bash bench/gpu_check_llama_carry.sh     # builds .whl/ (wheels, trimmed llama.cpp, vocab)
#
# then run, with .whl carried:   bash bench/gpu_check_llama.sh
#
#   1. unpacks the carried pure-Python wheels (gguf, platformdirs, diskcache, rich...) into
#      a scratch dir, nothing system-wide
#   2. builds llama-cpp-python from the trimmed source tree with the CMake flags
#      scripts/llama-cmake-args.sh picks (CUDA for the card's architecture only); when the
#      build does not finish in GPU_CHECK_BUILD_S seconds it reports how far it got and
#      fails. cuBLAS and libcuda are taken from torch's CUDA wheels / the driver when the
#      toolkit lacks them
#   3. `specedit doctor --json` with that build
#   4. writes random-weight GGUFs of the catalog's 0.5B (and 1.5B while time allows) with
#      their real shapes and tokenizer (bench/random_gguf.py)
#   5. measures, all layers offloaded: the cost curve t(1..128), and plain vs speculative
#      tok/s on a self-copy task (bench/gpu_check_llama.py)
#
# Writes $OUT/gpu_check_llama/ (or bench/results/gpu_check_llama/): MODEL/gpu_check_llama.json
# per model, summary.json (step times, the build), doctor.json and each step's log. Exits non-zero on
# any failure. Knobs (defaults for the GPU run): SPECEDIT_GPU=cuda, GPU_CHECK_LAYERS=all,
# GPU_CHECK_SIZES=1-128, GPU_CHECK_TOKENS=512, GPU_CHECK_BUILD_S=420, GPU_CHECK_DEADLINE_S=540
# (no 1.5B after that many seconds), GPU_CHECK_MODELS, GPU_CHECK_JOBS, GPU_CHECK_THREADS,
# GPU_CHECK_CMAKE_ARGS (added to the build's flags), GPU_CHECK_WAIT_FOR (a file to wait for
# between the build and the measurements: bench/gpu_check.sh builds while the torch check has
# the GPU), GPU_CHECK_WORK (default build/gpu_check_llama:
# gitignored, so a run on a machine still warm from the last one resumes its build).
# A CPU rehearsal of the whole script: SPECEDIT_GPU=cpu GPU_CHECK_LAYERS=auto
# GPU_CHECK_SIZES=1-4 GPU_CHECK_TOKENS=16 GPU_CHECK_THREADS=1 (bench/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEST=${OUT:-$ROOT/bench/results}/gpu_check_llama
# build/ is gitignored: on a machine that is still warm, a second run resumes the build
WORK=${GPU_CHECK_WORK:-$ROOT/build/gpu_check_llama}
mkdir -p "$DEST" "$WORK"
export SPECEDIT_GPU=${SPECEDIT_GPU:-cuda}
LAYERS=${GPU_CHECK_LAYERS:-all}
SIZES=${GPU_CHECK_SIZES:-1-128}
TOKENS=${GPU_CHECK_TOKENS:-512}
BUILD_S=${GPU_CHECK_BUILD_S:-420}
DEADLINE_S=${GPU_CHECK_DEADLINE_S:-540}
MODELS=${GPU_CHECK_MODELS:-qwen2.5-coder-0.5b qwen2.5-coder-1.5b}
JOBS=${GPU_CHECK_JOBS:-$(nproc)}
PY=${PYTHON:-python3}
export SPECEDIT_STATE_DIR=$WORK/state HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
T0=$(date +%s)
TIMES=""   # "step seconds" lines
BUILD="{}" # the build record, JSON

now() { echo $(($(date +%s) - T0)); }
timed() { # timed STEP CMD...: run, log to $DEST/STEP.log, record its seconds
  local step=$1 t=$(date +%s) rc
  shift
  "$@" >"$DEST/$step.log" 2>&1
  rc=$?
  TIMES+="$step $(($(date +%s) - t))"$'\n'
  return $rc
}
summary() { # summary RC [FAILURE]
  "$PY" - "$DEST/summary.json" "$1" "${2:-}" "$(now)" "$BUILD" "$TIMES" <<'EOF'
import json, sys
path, rc, failure, total, build, times = sys.argv[1:]
steps = {s: int(t) for s, t in (ln.split() for ln in times.splitlines() if ln.strip())}
rec = {"rc": int(rc), "failure": failure or None, "seconds": int(total), "steps_s": steps,
       "build": json.loads(build)}
json.dump(rec, open(path, "w"), indent=1)
print(json.dumps(rec))
EOF
}
fail() {
  echo "gpu_check_llama: FAILED: $*"
  summary 1 "$*"
  exit 1
}

echo "== gpu_check_llama: $(uname -m), $(nproc) cores, SPECEDIT_GPU=$SPECEDIT_GPU, work in $WORK"
command -v nvidia-smi >/dev/null && nvidia-smi -L
"$PY" -c "import sys; assert sys.version_info >= (3, 11)" || fail "$PY is not Python 3.11+"
missing=$("$PY" -c "
import importlib.util as u
need = ['numpy', 'jinja2', 'typing_extensions', 'yaml']
print(' '.join(m for m in need if u.find_spec(m) is None))")
[ -z "$missing" ] || fail "$PY lacks $missing (installs nothing from the network)"
ls .whl/*.whl >/dev/null 2>&1 || fail "no .whl/*.whl: run bench/gpu_check_llama_carry.sh and carry .whl"
SDIST=$(ls .whl/llama-cpp-python-*.tar.gz 2>/dev/null | head -1)
[ -n "$SDIST" ] || fail "no .whl/llama-cpp-python-*.tar.gz (bench/gpu_check_llama_carry.sh)"
VOCAB=.whl/qwen2.5-vocab.json.gz
[ -f "$VOCAB" ] || fail "no $VOCAB (bench/gpu_check_llama_carry.sh)"

echo "== 1/5 carried wheels"
# pure-Python wheels are zip files: unpacking one into a path entry installs it, no pip needed
timed wheels "$PY" -c "
import sys, zipfile
for w in sys.argv[2:]:
    zipfile.ZipFile(w).extractall(sys.argv[1])
    print(w)" "$WORK/site" .whl/*.whl || fail "could not unpack the carried wheels (wheels.log)"

echo "== 2/5 llama-cpp-python from $SDIST for $SPECEDIT_GPU"
SRC=$(ls -d "$WORK"/llama_cpp_python-*/ 2>/dev/null | head -1)
if [ -z "$SRC" ]; then # unpacked once: again would touch every file and rebuild them all
  tar xzf "$SDIST" -C "$WORK" || fail "cannot unpack $SDIST"
  SRC=$(ls -d "$WORK"/llama_cpp_python-*/ | head -1)
fi
SRC=${SRC%/}
ARGS=$(bash scripts/llama-cmake-args.sh) || fail "scripts/llama-cmake-args.sh failed"
ARGS+=" ${GPU_CHECK_CMAKE_ARGS:-}" # e.g. -DGGML_CUDA_FA=OFF: a shorter build, no FlashAttention
IFS=$'\t' read -r CHOICE WHY < <(bash scripts/llama-cmake-args.sh --backend)
echo "backend: $CHOICE ($WHY)"
LIBPATH=""
if [ "$SPECEDIT_GPU" = cuda ]; then
  # the toolkit may ship nvcc and cudart only: cuBLAS then comes from torch's CUDA wheels,
  # libcuda from the driver; both found here and handed to CMake and the loader
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  NVCC=$(command -v nvcc) || fail "no nvcc on PATH nor in /usr/local/cuda/bin"
  CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
  LIBPATH=$CUDA_ROOT/lib64
  if [ ! -e "$CUDA_ROOT/lib64/libcublas.so" ]; then
    read -r CUBLAS CUBLASLT CUBLAS_INC < <("$PY" - <<'EOF'
import glob, os
import importlib.util as u
spec = u.find_spec("nvidia")
roots = list(spec.submodule_search_locations) if spec else []
def first(pattern):
    for r in roots:
        hits = sorted(glob.glob(os.path.join(r, "**", pattern), recursive=True))
        if hits:
            return hits[0]
    return "-"
inc = first("cublas_v2.h")
print(first("libcublas.so*"), first("libcublasLt.so*"), os.path.dirname(inc) if inc != "-" else "-")
EOF
    )
    [ "$CUBLAS" != - ] && [ "$CUBLAS_INC" != - ] ||
      fail "no cuBLAS: neither $CUDA_ROOT/lib64 nor torch's nvidia wheels have it"
    echo "cuBLAS from $CUBLAS"
    ARGS+=" -DCUDA_cublas_LIBRARY=$CUBLAS -DCUDA_cublasLt_LIBRARY=$CUBLASLT"
    ARGS+=" -DCMAKE_CUDA_FLAGS=-I$CUBLAS_INC -DCMAKE_CXX_FLAGS=-I$CUBLAS_INC"
    LIBPATH+=:$(dirname "$CUBLAS")
  fi
  if [ ! -e "$CUDA_ROOT/lib64/stubs/libcuda.so" ] && ! ldconfig -p | grep -q 'libcuda\.so '; then
    DRIVER=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
    if [ -n "$DRIVER" ]; then
      ARGS+=" -DCUDA_cuda_driver_LIBRARY=$DRIVER"
    else
      ARGS+=" -DGGML_CUDA_NO_VMM=ON"
    fi
  fi
fi
export LD_LIBRARY_PATH=${LIBPATH}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# shellcheck disable=SC2086  # ARGS is a list of flags
# installs go to llama_cpp/lib in the source tree (as pip's build does) and into $WORK only
timed configure cmake -S "$SRC" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLAVA_BUILD=OFF -DCMAKE_INSTALL_PREFIX="$WORK/prefix" -DSKBUILD_PLATLIB_DIR="$WORK/platlib" \
  $ARGS || fail "CMake configure failed (see configure.log)"
t=$(date +%s)
timeout "$BUILD_S" cmake --build "$WORK/build" -j "$JOBS" >"$DEST/build.log" 2>&1
rc=$?
secs=$(($(date +%s) - t))
TIMES+="build $secs"$'\n'
progress=$(grep -o '^\[[0-9]*/[0-9]*\]' "$DEST/build.log" | tail -1 | tr -d '[]')
BUILD="{\"backend\": \"$CHOICE\", \"seconds\": $secs, \"jobs\": $JOBS, \"steps\": \"${progress:-?}\", \"finished\": $([ $rc = 0 ] && echo true || echo false)}"
echo "build: $BUILD"
if [ $rc = 124 ]; then
  fail "the build did not finish in ${BUILD_S}s: ${progress:-?} steps done (build.log)"
elif [ $rc != 0 ]; then
  tail -20 "$DEST/build.log"
  fail "the build failed (build.log)"
fi
timed install cmake --install "$WORK/build" || fail "cmake --install failed (install.log)"

# the package maps engine/ -> specedit.engine etc.; without an install, a symlink shim does it
mkdir -p "$WORK/shim/specedit" && : >"$WORK/shim/specedit/__init__.py"
for p in app engine models bench kernels; do ln -sfn "$ROOT/$p" "$WORK/shim/specedit/$p"; done
export PYTHONPATH=$WORK/shim:$SRC:$WORK/site${PYTHONPATH:+:$PYTHONPATH}
"$PY" -c "import llama_cpp, specedit.models.llama_build as b; print(b.llama_build().label)" ||
  fail "the built llama_cpp does not import"

if [ -n "${GPU_CHECK_WAIT_FOR:-}" ]; then # bench/gpu_check.sh: the GPU is the torch check's
  echo "build done at $(now)s; waiting for $GPU_CHECK_WAIT_FOR before measuring"
  while [ ! -e "$GPU_CHECK_WAIT_FOR" ]; do sleep 1; done
fi

echo "== 3/5 specedit doctor"
"$PY" -m specedit.app.cli doctor --json >"$DEST/doctor.json" 2>"$DEST/doctor.log" ||
  fail "specedit doctor failed (doctor.log)"

echo "== 4/5 random-weight GGUFs and 5/5 measurements"
GGUFS=()
for m in $MODELS; do
  if [ ${#GGUFS[@]} -gt 0 ] && [ "$(now)" -ge "$DEADLINE_S" ]; then
    echo "skipping $m: $(now)s used of the ${DEADLINE_S}s deadline"
    continue
  fi
  timed "gguf-$m" "$PY" -m specedit.bench.random_gguf write "$m" --vocab "$VOCAB" \
    --out "$WORK/$m.gguf" || fail "could not write the random $m GGUF (gguf-$m.log)"
  ARGV=(--gguf "$WORK/$m.gguf" --out "$DEST/$m" --gpu-layers "$LAYERS" --sizes "$SIZES"
    --tokens "$TOKENS")
  [ -n "${GPU_CHECK_THREADS:-}" ] && ARGV+=(--threads "$GPU_CHECK_THREADS")
  timed "measure-$m" "$PY" -m specedit.bench.gpu_check_llama "${ARGV[@]}"
  rc=$?
  cat "$DEST/measure-$m.log"
  [ $rc = 0 ] || fail "measurements on $m failed (measure-$m.log)"
  GGUFS+=("$m")
  rm -f "$WORK/$m.gguf"
done
summary 0 || exit 1
echo "gpu_check_llama: ok in $(now)s; figures in $DEST"
