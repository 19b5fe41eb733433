#!/usr/bin/env bash
# Nightly backup of the app's data directories.
#
# Usage: backup.sh SOURCE_DIR...
#
# Each SOURCE_DIR is archived to $DEST/<name>-<timestamp>.tar.gz, and only the
# newest $KEEP archives of each name are kept. DEST comes from the environment
# and defaults to /var/backups/app.

set -euo pipefail

DEST="${DEST:-/var/backups/app}"
KEEP=7
STAMP="$(date +%Y%m%d-%H%M%S)"
LOCK_DIR="${DEST}/.backup.lock"

log() {
  echo "backup: $*" >&2
}

usage() {
  echo "usage: $(basename "$0") SOURCE_DIR..." >&2
}

take_lock() {
  if ! mkdir "${LOCK_DIR}" 2>/dev/null; then
    log "another backup is running (${LOCK_DIR} exists)"
    exit 3
  fi
  trap 'rmdir "${LOCK_DIR}"' EXIT
}

archive() {
  local src="$1"
  local name target
  name="$(basename "$src")"
  target="${DEST}/${name}-${STAMP}.tar.gz"
  tar -czf "${target}.part" -C "$(dirname "$src")" "$name"
  mv "${target}.part" "$target"
  log "wrote ${target} ($(du -h "$target" | cut -f1))"
}

# Delete all but the newest $KEEP archives of one name. The timestamp in the
# file names sorts the same way as the time it stands for.
rotate() {
  local name="$1"
  local old
  for old in $(ls -1 "${DEST}/${name}-"*.tar.gz | sort -r | tail -n +$((KEEP + 1))); do
    rm -f "$old"
    log "removed ${old}"
  done
}

main() {
  if [ "$#" -eq 0 ]; then
    usage
    exit 2
  fi
  mkdir -p "${DEST}"
  take_lock
  local status=0 src
  for src in "$@"; do
    src="${src%/}"
    if [ ! -d "$src" ]; then
      log "skipping ${src}: not a directory"
      status=1
      continue
    fi
    archive "$src"
    rotate "$(basename "$src")"
  done
  log "done, ${KEEP} archives kept per directory in ${DEST}"
  return "$status"
}

main "$@"
