#!/usr/bin/env bash
# Prune the CI build cache volume: delete cached files not used for N days,
# then the folders that end up empty.
#
#   prune-cache.sh [-d DIR] [-n DAYS] [--dry-run]
#
# DIR defaults to $CACHE_DIR (the runner sets it), DAYS to 7.

set -euo pipefail

CACHE_DIR="${CACHE_DIR:-}"
MAX_DAYS=7
DRY_RUN=0

log() {
    printf '[prune-cache] %s\n' "$*" >&2
}

die() {
    log "error: $*"
    exit 1
}

usage() {
    sed -n '2,7s/^# \{0,1\}//p' "$0"
}

prune_old() {
    local dir=$1 days=$2 count=0
    while IFS= read -r -d '' f; do
        if (( DRY_RUN )); then
            log "would remove $f"
        else
            rm -f -- "$f"
        fi
        count=$((count + 1))
    done < <(find "$dir" -mindepth 1 -type f ! -name '.ci-cache' -mtime +"$days" -print0)
    log "$count file(s) older than $days day(s)"
}

remove_empty_dirs() {
    (( DRY_RUN )) && return 0
    find "$1" -mindepth 1 -type d -empty -delete
}

main() {
    while (( $# )); do
        case $1 in
            -d) CACHE_DIR=${2:?-d needs a folder}; shift 2 ;;
            -n) MAX_DAYS=${2:?-n needs a number}; shift 2 ;;
            --dry-run) DRY_RUN=1; shift ;;
            -h|--help) usage; exit 0 ;;
            *) usage >&2; exit 2 ;;
        esac
    done

    [[ -n $CACHE_DIR ]] || die "no cache folder: set CACHE_DIR or pass -d"
    [[ -d $CACHE_DIR ]] || die "$CACHE_DIR is not a folder"
    [[ $MAX_DAYS =~ ^[0-9]+$ ]] || die "DAYS must be a whole number, got $MAX_DAYS"

    log "pruning $CACHE_DIR (older than $MAX_DAYS days)"
    prune_old "$CACHE_DIR" "$MAX_DAYS"
    remove_empty_dirs "$CACHE_DIR"
}

main "$@"
