#!/usr/bin/env bash
# Deploy the shopfront web app to one environment.
#
# Usage: deploy.sh ENVIRONMENT [VERSION]
#   ENVIRONMENT  staging or production
#   VERSION      git tag or commit to deploy (default: HEAD)
#
# Needs git, npm, rsync and ssh. DEPLOY_USER, DEPLOY_ROOT and BUILD_LOG may be
# set in the environment.

set -euo pipefail

APP_NAME="shopfront"
DEPLOY_USER="${DEPLOY_USER:-deploy}"
DEPLOY_ROOT="${DEPLOY_ROOT:-/srv/apps}"
BUILD_LOG="${BUILD_LOG:-build.log}"
KEEP_RELEASES=5

log() {
  printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

die() {
  log "error: $*" >&2
  exit 1
}

usage() {
  sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'
}

hosts_for() {
  case "$1" in
    staging) echo "stage-web-01.internal" ;;
    production) echo "web-01.internal web-02.internal" ;;
    *) return 1 ;;
  esac
}

check_clean_tree() {
  if [ -n "$(git status --porcelain)" ]; then
    die "the working tree has uncommitted changes"
  fi
}

build() {
  log "installing dependencies"
  npm ci --no-audit --no-fund
  log "building $APP_NAME"
  npm run build 2>&1 | tee "$BUILD_LOG"
}

upload() {
  local host="$1" release_dir="$2"
  log "uploading to $host:$release_dir"
  rsync -az --delete dist/ "$DEPLOY_USER@$host:$release_dir/"
}

activate() {
  local host="$1" release_dir="$2"
  log "activating $release_dir on $host"
  ssh "$DEPLOY_USER@$host" "ln -sfn '$release_dir' '$DEPLOY_ROOT/$APP_NAME/current' && sudo systemctl reload $APP_NAME"
}

prune_releases() {
  local host="$1"
  ssh "$DEPLOY_USER@$host" "cd '$DEPLOY_ROOT/$APP_NAME/releases' && ls -1t | tail -n +$((KEEP_RELEASES + 1)) | xargs -r rm -rf"
}

main() {
  local environment="${1:-}"
  local version="${2:-HEAD}"
  if [ -z "$environment" ]; then
    usage >&2
    exit 2
  fi
  local hosts
  hosts="$(hosts_for "$environment")" || die "unknown environment: $environment"

  check_clean_tree
  local release
  release="$(git rev-parse --short "$version")"
  local release_dir="$DEPLOY_ROOT/$APP_NAME/releases/$release"

  build
  for host in $hosts; do
    upload "$host" "$release_dir"
    activate "$host" "$release_dir"
    prune_releases "$host"
  done
  log "deployed $APP_NAME $release to $environment"
}

main "$@"
