#!/usr/bin/env bash
# Build, test and package inventory-api as a container image.
#
# Usage: scripts/build.sh [--skip-tests] [--push] [--tag TAG]
#
# Environment:
#   REGISTRY      where --push sends the image (default: registry.example.com/inventory)
#   PYTHON        the interpreter used for the virtual environment (default: python3.11)
#   BUILD_JOBS    parallel jobs for the test run (default: the number of CPUs)
#
# The script stops at the first failing step. Every step logs what it runs, so a CI log
# shows where a build went wrong.

set -eu

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
VENV="$ROOT/.venv-build"
DIST="$ROOT/dist"
REGISTRY="${REGISTRY:-registry.example.com/inventory}"
PYTHON="${PYTHON:-python3.11}"
BUILD_JOBS="${BUILD_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
IMAGE_NAME="inventory-api"
BASE_IMAGE="python:3.11-slim-bookworm"
COVERAGE_MIN=85

SKIP_TESTS=0
PUSH=0
TAG=""

log() {
    printf '[build %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
}

die() {
    log "error: $*"
    exit 1
}

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --skip-tests) SKIP_TESTS=1 ;;
        --push) PUSH=1 ;;
        --tag)
            [ $# -ge 2 ] || die "--tag needs a value"
            TAG="$2"
            shift
            ;;
        -h|--help) usage 0 ;;
        *) log "unknown option: $1"; usage 2 ;;
    esac
    shift
done

cd "$ROOT"

if [ -z "$TAG" ]; then
    if git describe --tags --exact-match >/dev/null 2>&1; then
        TAG="$(git describe --tags --exact-match)"
    else
        TAG="$(git rev-parse --short=12 HEAD)"
    fi
fi
log "building $IMAGE_NAME:$TAG"

command -v "$PYTHON" >/dev/null || die "$PYTHON not found; set PYTHON"
command -v docker >/dev/null || die "docker not found"

# A fresh environment for every build: a stale one hides missing dependencies.
log "creating $VENV with $PYTHON"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip wheel build
"$VENV/bin/pip" install --quiet -e ".[test]"

log "lint"
"$VENV/bin/ruff" check inventory tests
"$VENV/bin/ruff" format --check inventory tests
"$VENV/bin/mypy" --strict inventory

if [ "$SKIP_TESTS" -eq 0 ]; then
    log "unit tests ($BUILD_JOBS jobs)"
    "$VENV/bin/pytest" -q -n "$BUILD_JOBS" \
        --cov=inventory --cov-report=term-missing:skip-covered \
        --cov-fail-under="$COVERAGE_MIN" \
        tests/unit
else
    log "tests skipped (--skip-tests)"
fi

log "building the wheel"
rm -rf "$DIST"
"$VENV/bin/python" -m build --wheel --outdir "$DIST" .
WHEEL="$(ls "$DIST"/*.whl | head -n 1)"
[ -n "$WHEEL" ] || die "no wheel in $DIST"
log "wheel: $(basename "$WHEEL")"

log "building the image from $BASE_IMAGE"
docker build \
    --pull \
    --build-arg BASE_IMAGE="$BASE_IMAGE" \
    --build-arg WHEEL="dist/$(basename "$WHEEL")" \
    --label org.opencontainers.image.revision="$(git rev-parse HEAD)" \
    --label org.opencontainers.image.version="$TAG" \
    -t "$IMAGE_NAME:$TAG" \
    -f docker/Dockerfile .

log "smoke test"
docker run --rm "$IMAGE_NAME:$TAG" inventory-api --version

if [ "$PUSH" -eq 1 ]; then
    log "pushing to $REGISTRY"
    docker tag "$IMAGE_NAME:$TAG" "$REGISTRY/$IMAGE_NAME:$TAG"
    docker push "$REGISTRY/$IMAGE_NAME:$TAG"
    if [ "$(git rev-parse --abbrev-ref HEAD)" = "main" ]; then
        docker tag "$IMAGE_NAME:$TAG" "$REGISTRY/$IMAGE_NAME:latest"
        docker push "$REGISTRY/$IMAGE_NAME:latest"
    fi
fi

log "done: $IMAGE_NAME:$TAG"
