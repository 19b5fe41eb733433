#!/usr/bin/env bash
# bench/gpu_wheels.sh: the wheels the offline GPU machine lacks for bench/gpu_check_torch.py.
#
# The lent machine has Python 3.12, torch, triton and transformers, and no package index.
# This fetches, here, the pure-Python (or cp312 manylinux) wheels the check imports beyond
# those: platformdirs (specedit.models.catalog), jinja2 + markupsafe (chat templates, imported
# by tests/torch_tiny.py), pytest + pluggy + iniconfig + pygments + packaging (the kernel
# tests run in-process).
# They land in .whl/gpu/ (git-ignored, well under 64 MiB); carry ".whl" to the device run
# (bench/gpu_check.sh torch), and each step of gpu_check_torch.py unpacks the wheels of the
# modules the machine lacks, only those, into build/gpu_check_torch/site, appended to the END
# of sys.path: a carried pytest or pluggy never shadows the machine's own.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.whl/gpu
mkdir -p "$DEST"
PIP=${PIP:-.venv/bin/pip}
"$PIP" download --dest "$DEST" --only-binary=:all: --no-deps \
  --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform any \
  platformdirs jinja2 markupsafe pytest pluggy iniconfig pygments packaging
du -sh "$DEST"
ls "$DEST"
