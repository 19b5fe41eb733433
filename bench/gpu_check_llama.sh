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
# any failure. Run by `bash bench/gpu_check.sh llama` (call 2 of the GPU check): then
# GPU_CHECK_JSONL is set and every step (wheels, configure, build, install, doctor,
# model_0.5b, model_1.5b) is recorded there as it ends, the measurements' figures as they are
# made, each step under `timeout` with its box from GPU_CHECK_PLAN ("name box optional"
# lines, bench/gpu_check_results.py); the 1.5B runs only when its box still fits the budget.
# Knobs (defaults for the GPU run): SPECEDIT_GPU=cuda, GPU_CHECK_LAYERS=all,
# GPU_CHECK_SIZES=1-128, GPU_CHECK_TOKENS=512, GPU_CHECK_BUILD_S (the build's box; default
# from the plan, else 420), GPU_CHECK_BUDGET_S (seconds of the whole run, default 290),
# GPU_CHECK_MODELS, GPU_CHECK_JOBS, GPU_CHECK_THREADS, GPU_CHECK_CMAKE_ARGS (added to the
# build's flags), GPU_CHECK_WORK (default build/gpu_check_llama: gitignored, so a run on a
# machine still warm from the last one resumes its build).
# The CPU rehearsal: SPECEDIT_GPU_CHECK_CPU=1 (via bench/gpu_check.sh) measures tiny random
# models (`random_gguf rehearsal`) with the llama_cpp already installed (the CPU build of the
# trimmed tree takes 30 minutes on 2 cores: GPU_CHECK_PREBUILT=0 builds it anyway), CPU
# settings: SPECEDIT_GPU=cpu GPU_CHECK_LAYERS=auto GPU_CHECK_SIZES=1-32 GPU_CHECK_TOKENS=16
# GPU_CHECK_THREADS=1 (bench/README.md).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEST=${OUT:-$ROOT/bench/results}/gpu_check_llama
# build/ is gitignored: on a machine that is still warm, a second run resumes the build
WORK=${GPU_CHECK_WORK:-$ROOT/build/gpu_check_llama}
mkdir -p "$DEST" "$WORK"
REHEARSAL=${SPECEDIT_GPU_CHECK_CPU:-0}
if [ "$REHEARSAL" = 1 ]; then
  export SPECEDIT_GPU=${SPECEDIT_GPU:-cpu}
  LAYERS=${GPU_CHECK_LAYERS:-auto} SIZES=${GPU_CHECK_SIZES:-1-32} TOKENS=${GPU_CHECK_TOKENS:-16}
  GPU_CHECK_THREADS=${GPU_CHECK_THREADS:-1} PREBUILT=${GPU_CHECK_PREBUILT:-1}
else
  export SPECEDIT_GPU=${SPECEDIT_GPU:-cuda}
  LAYERS=${GPU_CHECK_LAYERS:-all} SIZES=${GPU_CHECK_SIZES:-1-128} TOKENS=${GPU_CHECK_TOKENS:-512}
  PREBUILT=${GPU_CHECK_PREBUILT:-0}
fi
PLAN=${GPU_CHECK_PLAN:-}
box() { # box STEP DEFAULT: the step's time box from the plan
  local b
  b=$(echo "$PLAN" | awk -v s="$1" '$1 == s {print $2}')
  echo "${b:-$2}"
}
BUILD_S=${GPU_CHECK_BUILD_S:-$(box build 420)}
BUDGET_S=${GPU_CHECK_BUDGET_S:-290}
MODELS=${GPU_CHECK_MODELS:-qwen2.5-coder-0.5b qwen2.5-coder-1.5b}
JOBS=${GPU_CHECK_JOBS:-$(nproc)}
PY=${PYTHON:-python3}
export SPECEDIT_STATE_DIR=$WORK/state HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
T0=$(date +%s)
TIMES=""   # "step seconds" lines
BUILD="{}" # the build record, JSON

now() { echo $(($(date +%s) - T0)); }
record() { # record STEP STATUS SECONDS [WHY]: a step record for bench/gpu_check.sh's verdict
  [ -n "${GPU_CHECK_JSONL:-}" ] || return 0
  local why=${4:-}
  why=${why//\"/\'}
  printf '{"kind": "step", "step": "%s", "t": %s, "status": "%s", "seconds": %s, "rc": %s, "why": "%s"}\n' \
    "$1" "$(date +%s)" "$2" "$3" "${5:-null}" "$why" >>"$GPU_CHECK_JSONL"
}
CHILD=""
bounded() { # bounded BOX CMD...: under timeout, in the background, so a TERM to this script
  # reaches it at once (the trap below passes it on; timeout runs in a group of its own)
  timeout -k 5 "$@" &
  CHILD=$!
  wait "$CHILD"
  local rc=$?
  CHILD=""
  return $rc
}
timed() { # timed STEP BOX CMD...: run under timeout, log to $DEST/STEP.log, record it
  local step=$1 box=$2 t=$(date +%s) rc status
  shift 2
  bounded "$box" "$@" >"$DEST/$step.log" 2>&1
  rc=$?
  local secs=$(($(date +%s) - t))
  TIMES+="$step $secs"$'\n'
  case $rc in
  0) status=ok ;;
  124 | 137) status=timeout ;;
  *) status=failed ;;
  esac
  record "$step" "$status" "$secs" "$([ $status = timeout ] && echo "still running after its ${box}s box")" "$rc"
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
# bench/gpu_check.sh ends the run: the running step goes too; those not recorded did not run
trap '[ -n "$CHILD" ] && kill -TERM "$CHILD" 2>/dev/null; exit 143' TERM

echo "== gpu_check_llama: $(uname -m), $(nproc) cores, SPECEDIT_GPU=$SPECEDIT_GPU, work in $WORK"
command -v nvidia-smi >/dev/null && nvidia-smi -L
"$PY" -c "import sys; assert sys.version_info >= (3, 11)" || fail "$PY is not Python 3.11+"
missing=$("$PY" -c "
import importlib.util as u
need = ['numpy', 'jinja2', 'typing_extensions', 'yaml']
print(' '.join(m for m in need if u.find_spec(m) is None))")
[ -z "$missing" ] || fail "$PY lacks $missing (installs nothing from the network)"
SHAPES_ARG=()
if [ "$REHEARSAL" = 1 ]; then # tiny models under the catalog names, from the repository alone
  "$PY" -m specedit.bench.random_gguf rehearsal --out "$WORK/rehearsal" >/dev/null 2>&1 ||
    fail "$PY -m specedit.bench.random_gguf rehearsal failed (is specedit installed for $PY?)"
  VOCAB=$WORK/rehearsal/vocab.json.gz SHAPES_ARG=(--shapes "$WORK/rehearsal/shapes.json")
else
  ls .whl/*.whl >/dev/null 2>&1 || fail "no .whl/*.whl: run bench/gpu_check_llama_carry.sh and carry .whl"
  VOCAB=.whl/qwen2.5-vocab.json.gz
  [ -f "$VOCAB" ] || fail "no $VOCAB (bench/gpu_check_llama_carry.sh)"
fi
if [ "$PREBUILT" != 1 ]; then
  SDIST=$(ls .whl/llama-cpp-python-*.tar.gz 2>/dev/null | head -1)
  [ -n "$SDIST" ] || fail "no .whl/llama-cpp-python-*.tar.gz (bench/gpu_check_llama_carry.sh)"
fi

echo "== 1/5 carried wheels"
# pure-Python wheels are zip files: unpacking one into a path entry installs it, no pip needed
timed wheels "$(box wheels 30)" "$PY" -c "
import sys, zipfile
for w in sys.argv[2:]:
    zipfile.ZipFile(w).extractall(sys.argv[1])
    print(w)" "$WORK/site" $(ls .whl/*.whl 2>/dev/null) || fail "could not unpack the carried wheels (wheels.log)"

if [ "$PREBUILT" = 1 ]; then
  echo "== 2/5 llama-cpp-python: the one installed for $PY (GPU_CHECK_PREBUILT=1), no build"
  for step in configure build install; do record "$step" ok 0 "prebuilt: the installed llama_cpp (rehearsal)" 0; done
  SRC="" BUILD="{\"backend\": \"prebuilt\", \"finished\": true}"
else
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
timed configure "$(box configure 60)" cmake -S "$SRC" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DLLAVA_BUILD=OFF -DCMAKE_INSTALL_PREFIX="$WORK/prefix" -DSKBUILD_PLATLIB_DIR="$WORK/platlib" \
  $ARGS || fail "CMake configure failed (see configure.log)"
t=$(date +%s)
bounded "$BUILD_S" cmake --build "$WORK/build" -j "$JOBS" >"$DEST/build.log" 2>&1
rc=$?
secs=$(($(date +%s) - t))
TIMES+="build $secs"$'\n'
progress=$(grep -o '^\[[0-9]*/[0-9]*\]' "$DEST/build.log" | tail -1 | tr -d '[]')
BUILD="{\"backend\": \"$CHOICE\", \"seconds\": $secs, \"jobs\": $JOBS, \"steps\": \"${progress:-?}\", \"finished\": $([ $rc = 0 ] && echo true || echo false)}"
echo "build: $BUILD"
[ -n "${GPU_CHECK_JSONL:-}" ] &&
  echo "{\"kind\": \"figure\", \"step\": \"build\", \"t\": $(date +%s), \"name\": \"build\", \"value\": $BUILD}" >>"$GPU_CHECK_JSONL"
if [ $rc = 124 ] || [ $rc = 137 ]; then
  record build timeout "$secs" "not finished in its ${BUILD_S}s box: ${progress:-?} ninja steps done; run again while the machine is warm to resume" "$rc"
  fail "the build did not finish in ${BUILD_S}s: ${progress:-?} steps done (build.log)"
elif [ $rc != 0 ]; then
  record build failed "$secs" "see build.log" "$rc"
  tail -20 "$DEST/build.log"
  fail "the build failed (build.log)"
fi
record build ok "$secs" "" 0
timed install "$(box install 30)" cmake --install "$WORK/build" || fail "cmake --install failed (install.log)"
fi

# the package maps engine/ -> specedit.engine etc.; without an install, a symlink shim does it
mkdir -p "$WORK/shim/specedit" && : >"$WORK/shim/specedit/__init__.py"
for p in app engine models bench kernels; do ln -sfn "$ROOT/$p" "$WORK/shim/specedit/$p"; done
export PYTHONPATH=$WORK/shim${SRC:+:$SRC}:$WORK/site${PYTHONPATH:+:$PYTHONPATH}
"$PY" -c "import llama_cpp, specedit.models.llama_build as b; print(b.llama_build().label)" ||
  fail "the built llama_cpp does not import"

echo "== 3/5 specedit doctor"
timed doctor "$(box doctor 30)" bash -c '"$1" -m specedit.app.cli doctor --json >"$2"' _ "$PY" \
  "$DEST/doctor.json" || fail "specedit doctor failed (doctor.log)"

echo "== 4/5 random-weight GGUFs and 5/5 measurements"
GGUFS=()
for m in $MODELS; do
  step=model_${m##*-} # qwen2.5-coder-0.5b -> model_0.5b, the plan's name
  want=$(box "$step" 60)
  optional=$(echo "$PLAN" | awk -v s="$step" '$1 == s {print $3}')
  if [ "$optional" = 1 ] && [ $(($(now) + want)) -gt "$BUDGET_S" ]; then
    echo "skipping $m: $(now)s used, its ${want}s box does not fit the ${BUDGET_S}s budget"
    record "$step" not_run 0 "$(now)s used: its ${want}s box does not fit the ${BUDGET_S}s budget"
    continue
  fi
  # one box for the model: the random GGUF, then the measurements in what is left of it
  t=$(date +%s)
  bounded "$want" "$PY" -m specedit.bench.random_gguf write "$m" --vocab "$VOCAB" \
    --out "$WORK/$m.gguf" "${SHAPES_ARG[@]}" >"$DEST/gguf-$m.log" 2>&1 || {
    record "$step" failed $(($(date +%s) - t)) "could not write the random GGUF (gguf-$m.log)"
    fail "could not write the random $m GGUF (gguf-$m.log)"
  }
  left=$((want - ($(date +%s) - t)))
  ARGV=(--gguf "$WORK/$m.gguf" --out "$DEST/$m" --gpu-layers "$LAYERS" --sizes "$SIZES"
    --tokens "$TOKENS")
  [ -n "${GPU_CHECK_THREADS:-}" ] && ARGV+=(--threads "$GPU_CHECK_THREADS")
  [ -n "${GPU_CHECK_JSONL:-}" ] && ARGV+=(--jsonl "$GPU_CHECK_JSONL")
  timed "$step" "$((left > 5 ? left : 5))" "$PY" -m specedit.bench.gpu_check_llama "${ARGV[@]}"
  rc=$?
  cat "$DEST/$step.log"
  [ $rc = 0 ] || fail "measurements on $m failed ($step.log)"
  GGUFS+=("$m")
  rm -f "$WORK/$m.gguf"
done
summary 0 || exit 1
echo "gpu_check_llama: ok in $(now)s; figures in $DEST"
