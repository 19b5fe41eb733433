#!/usr/bin/env bash
# bench/gpu_check.sh: the GPU checks of issue 6 in one run, under 5 minutes on a lent GPU.
#
#   1. the verification-kernel tests on CUDA     (pytest tests/test_verify_kernel.py)
#   2. kernel vs torch reference, us per call     (bench/kernel_bench.py, V=151936, n=16)
#   3. end-to-end tok/s on the torch backend: plain, specedit, transformers'
#      prompt_lookup_num_tokens, on the copy-heavy tasks (bench/torch_bench.py)
#
# Installs nothing (the GPU machine has no network): it uses the first python that has a
# CUDA torch ($PYTHON, .venv/bin/python, python3), prints what is missing and exits 0 when
# it cannot run. The model for step 3 is $SPECEDIT_GPU_MODEL (a transformers checkpoint
# directory or a GGUF), else the catalog's qwen2.5-coder-0.5b GGUF, else a Qwen2.5
# 0.5B/1.5B snapshot in the local Hugging Face cache; with none, step 3 is skipped.
# Writes $OUT/gpu_check/ (or bench/results/gpu_check/): gpu_check.json plus each step's log.
# Time limits: 100 s + 45 s + 150 s (a GGUF is dequantized on first load: prefer a checkpoint dir).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
DEST=${OUT:-$ROOT/bench/results}/gpu_check
mkdir -p "$DEST"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export SPECEDIT_STATE_DIR=${SPECEDIT_STATE_DIR:-$DEST/state}
unset TRITON_INTERPRET

PY=""
for c in ${PYTHON:-} .venv/bin/python python3 python; do
  if command -v "$c" >/dev/null 2>&1 &&
     "$c" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    PY=$c
    break
  fi
done
if [ -z "$PY" ]; then
  echo "gpu_check: no python with a CUDA-enabled torch (tried: ${PYTHON:-} .venv/bin/python python3 python); nothing run"
  exit 0
fi
missing=$("$PY" - <<'EOF'
import importlib.util
need = ["torch", "triton", "numpy", "pytest", "platformdirs", "jinja2", "transformers"]
print(" ".join(m for m in need if importlib.util.find_spec(m) is None))
EOF
)
if [ -n "$missing" ]; then
  echo "gpu_check: $PY lacks: $missing (install them; this script installs nothing); nothing run"
  exit 0
fi

# the package maps engine/ -> specedit.engine etc.; without an install, a symlink shim does it
if ! "$PY" -c "import specedit.engine.verify" 2>/dev/null; then
  SHIM=$(mktemp -d)
  mkdir "$SHIM/specedit" && : >"$SHIM/specedit/__init__.py"
  for p in app engine models bench kernels; do ln -s "$ROOT/$p" "$SHIM/specedit/$p"; done
  export PYTHONPATH="$SHIM${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" -c "import torch; print('gpu_check:', torch.cuda.get_device_name(), 'torch', torch.__version__)"

echo "== 1/3 kernel tests on CUDA"
timeout 100 "$PY" -m pytest -q -p no:cacheprovider tests/test_verify_kernel.py >"$DEST/kernel_tests.log" 2>&1
echo $? >"$DEST/kernel_tests.rc"
tail -3 "$DEST/kernel_tests.log"

echo "== 2/3 kernel vs torch reference (V=151936, n=16)"
timeout 45 "$PY" -m specedit.bench.kernel_bench --vocab 151936 -n 16 \
  --out "$DEST/kernel_bench.json" >/dev/null 2>"$DEST/kernel_bench.log"
echo $? >"$DEST/kernel_bench.rc"
tail -3 "$DEST/kernel_bench.log"

echo "== 3/3 end-to-end tok/s on the torch backend"
MODEL=${SPECEDIT_GPU_MODEL:-}
if [ -z "$MODEL" ]; then
  MODEL=$("$PY" -c "from specedit.models.catalog import model_path as m; p = m('qwen2.5-coder-0.5b'); print(p if p.is_file() else '')" 2>/dev/null)
fi
if [ -z "$MODEL" ]; then
  for d in "${HF_HOME:-$HOME/.cache/huggingface}"/hub/models--Qwen--Qwen2.5*-{0.5B,1.5B}*/snapshots/*/; do
    [ -f "$d/config.json" ] && MODEL=${d%/} && break
  done
fi
if [ -n "$MODEL" ] && [ -f "$MODEL" ] &&
   ! "$PY" -c "import gguf, accelerate" 2>/dev/null; then
  echo "$MODEL is a GGUF but $PY lacks gguf/accelerate: end-to-end skipped" | tee "$DEST/e2e.log"
  echo skipped >"$DEST/e2e.rc"
elif [ -z "$MODEL" ]; then
  echo "no model found (set SPECEDIT_GPU_MODEL to a checkpoint dir or GGUF): end-to-end skipped" |
    tee "$DEST/e2e.log"
  echo skipped >"$DEST/e2e.rc"
else
  echo "model: $MODEL"
  rm -f "$DEST"/torch-bench-*.json
  timeout 150 "$PY" -m specedit.bench.torch_bench --model "$MODEL" --kinds copy -n 2 \
    --max-lines 40 --max-tokens 320 --modes plain specedit hf_pld --out "$DEST" >"$DEST/e2e.log" 2>&1
  echo $? >"$DEST/e2e.rc"
  tail -3 "$DEST/e2e.log"
fi

"$PY" - "$DEST" <<'EOF'
import glob, json, os, sys, torch
d = sys.argv[1]
def read(name):
    try:
        return open(os.path.join(d, name)).read().strip()
    except OSError:
        return None
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError, TypeError):
        return None
tests = (read("kernel_tests.log") or "").splitlines()
e2e = sorted(glob.glob(os.path.join(d, "torch-bench-*.json")))
rec = {
    "gpu": torch.cuda.get_device_name(),
    "torch": torch.__version__,
    "kernel_tests": {"rc": read("kernel_tests.rc"), "summary": tests[-1] if tests else None},
    "kernel_bench": {"rc": read("kernel_bench.rc"), "record": load(os.path.join(d, "kernel_bench.json"))},
    "e2e": {"rc": read("e2e.rc"), "summary": (load(e2e[-1]) or {}).get("summary") if e2e else None},
}
json.dump(rec, open(os.path.join(d, "gpu_check.json"), "w"), indent=1)
print(json.dumps({k: v for k, v in rec.items() if k != "kernel_bench"}, indent=1))
print("wrote", os.path.join(d, "gpu_check.json"))
EOF
exit 0
