#!/usr/bin/env bash
# bench/gpu_check_llama_carry.sh: builds .whl/ (gitignored) for bench/gpu_check_llama.sh, here,
# online, with the project's venv; then checks that the working tree plus .whl/ fits in the
# 64 MiB a borrowed GPU machine takes.
#
#   .whl/*.whl                            pure-Python wheels the GPU machine lacks, for
#                                         Python 3.12, at the versions installed here
#   .whl/llama-cpp-python-V-cuda.tar.gz   llama-cpp-python's sdist trimmed to a CUDA build
#                                         (bench/trim_llama_sdist.py)
#   .whl/qwen2.5-vocab.json.gz            the Qwen2.5 tokenizer arrays (bench/random_gguf.py),
#                                         from the catalog's 0.5B (pulled if missing)
#
# Steps whose output exists are skipped (delete .whl/ to start over). PYTHON defaults to
# .venv/bin/python; it must import specedit (the venv's editable install does).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
LIMIT=$((64 << 20))
WHEELS=(gguf platformdirs diskcache rich markdown-it-py mdurl pygments)
mkdir -p .whl
t() { date +%s.%N; }
took() { "$PY" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$1" "$(t)"; }

s=$(t)
pins=$("$PY" -c "
import sys
from importlib.metadata import version
print(' '.join(f'{d}=={version(d)}' for d in sys.argv[1:]))" "${WHEELS[@]}")
"$PY" -m pip download -q --only-binary :all: --no-deps --python-version 3.12 -d .whl $pins
echo "wheels ($pins): $(took "$s")"

LLAMA=$("$PY" -c "from importlib.metadata import version; print(version('llama_cpp_python'))")
TRIM=.whl/llama-cpp-python-$LLAMA-cuda.tar.gz
if [ ! -f "$TRIM" ]; then
  tmp=$(mktemp -d)
  s=$(t)
  "$PY" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$LLAMA" -d "$tmp"
  echo "sdist download: $(took "$s") ($(du -h "$tmp"/*.tar.gz | cut -f1))"
  s=$(t)
  "$PY" -m specedit.bench.trim_llama_sdist "$tmp"/llama_cpp_python-"$LLAMA".tar.gz "$TRIM"
  echo "trimmed source tree: $(took "$s")"
  rm -rf "$tmp"
fi

VOCAB=.whl/qwen2.5-vocab.json.gz
if [ ! -f "$VOCAB" ]; then
  model=$("$PY" -c "from specedit.models.catalog import ensure_model as e; print(e('qwen2.5-coder-0.5b'))")
  s=$(t)
  "$PY" -m specedit.bench.random_gguf vocab "$model" --out "$VOCAB"
  echo "vocab: $(took "$s")"
fi

tree=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null |
  awk '{n += $1} END {print n + 0}')
carry=$(find .whl -type f -printf '%s\n' | awk '{n += $1} END {print n + 0}')
echo ".whl/: $(ls .whl | tr '\n' ' ')"
"$PY" -c "
import sys
t, c = (int(x) / 2**20 for x in sys.argv[1:])
print(f'working tree {t:.1f} MiB + .whl {c:.1f} MiB = {t + c:.1f} MiB of 64 MiB')" "$tree" "$carry"
if [ $((tree + carry)) -gt $LIMIT ]; then
  echo "too big for the GPU machine's 64 MiB" >&2
  exit 1
fi
