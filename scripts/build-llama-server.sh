#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` from the llama.cpp source that llama-cpp-python's sdist
# vendors (the same llama.cpp specedit runs on), for `specedit bench peer` and `bench client`.
# Built once per machine and version into a cache outside the repository; prints the binary.
#
# Usage: scripts/build-llama-server.sh [PYTHON]   (PYTHON defaults to .venv/bin/python; its
#        installed llama-cpp-python names the version, else LLAMA_VERSION, else 0.3.36)
#
#   $SPECEDIT_LLAMA_SERVER_CACHE (default ~/.cache/specedit/llama-server)/<version>/llama-server
#
# CPU build: the SIMD flags of scripts/llama-cmake-args.sh (GGML_NATIVE and GGML_OPENMP off,
# see there), no accelerator backend: the peer is compared on the CPU specedit runs on.
# About 10 minutes on 2 cores. The build also checks that `--spec-type` offers the model-free
# drafters the bench compares (ngram-simple, ngram-map-k, ngram-mod); the binary is only
# moved into the cache when it does.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PY=${1:-${PYTHON:-$here/../.venv/bin/python}}
version=${LLAMA_VERSION:-}
if [[ -z "$version" ]]; then
  version=$("$PY" -c "from importlib.metadata import version; print(version('llama_cpp_python'))" \
    2>/dev/null || echo 0.3.36)
fi
cache=${SPECEDIT_LLAMA_SERVER_CACHE:-$HOME/.cache/specedit/llama-server}/$version
bin=$cache/llama-server
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
sdist=$(find "$cache" -maxdepth 1 -name "llama_cpp_python-$version.tar.gz" | head -1)
if [[ -z "$sdist" ]]; then
  echo "llama-server: downloading llama-cpp-python $version's sdist" >&2
  "$PY" -m pip download -q --no-deps --no-binary llama-cpp-python "llama-cpp-python==$version" -d "$work" >&2
  mv "$work/llama_cpp_python-$version.tar.gz" "$cache/"
  sdist=$cache/llama_cpp_python-$version.tar.gz
fi
tar -xzf "$sdist" -C "$work"
src=$work/llama_cpp_python-$version/vendor/llama.cpp
args=$(SPECEDIT_GPU=cpu bash "$here/llama-cmake-args.sh")
jobs=$(nproc 2>/dev/null || echo 2)
echo "llama-server: building llama.cpp $(cat "$src/../../llama_cpp/__init__.py" 2>/dev/null |
  grep -m1 __version__ || true) with $args on $jobs cores" >&2
# shellcheck disable=SC2086  # $args is a list of flags
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF $args >&2
cmake --build "$work/build" --target llama-server -j "$jobs" >&2
built=$work/build/bin/llama-server
help=$("$built" --help 2>&1 || true)
for t in ngram-simple ngram-map-k ngram-mod; do
  if ! grep -q -- "$t" <<<"$help"; then
    echo "llama-server: this build's --spec-type lacks $t" >&2
    exit 1
  fi
done
mv "$built" "$bin"
echo "$bin"
