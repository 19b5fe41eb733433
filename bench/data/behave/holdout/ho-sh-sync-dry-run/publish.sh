#!/usr/bin/env bash
# publish.sh - copy a built static site into the web root.
#
# Every regular file under SRC is copied to the same relative path under DEST,
# creating directories as needed. Files that are already identical in DEST are
# left alone, so re-running after a small rebuild only touches what changed.
# Nothing is ever deleted from DEST. Editor leftovers and dotfiles are skipped,
# as are names matching any -x PATTERN (shell glob, matched on the file name).
#
# Typical use from the build job:
#   ./publish.sh -x '*.map' _site /srv/www/docs
set -euo pipefail

PROG=${0##*/}
verbose=0
excludes=('*~' '*.swp' '.*')

usage() {
  cat <<EOF
Usage: $PROG [-v] [-x PATTERN]... SRC DEST

Copy the files under SRC into DEST, keeping the directory layout.

Options:
  -v          report every file copied or skipped (on stderr)
  -x PATTERN  also skip files whose name matches PATTERN (repeatable)
  -h          show this help
EOF
}

log() {
  if ((verbose)); then
    printf '%s\n' "$*" >&2
  fi
}

die() {
  printf '%s: %s\n' "$PROG" "$*" >&2
  exit 1
}

# is_excluded NAME: true when NAME matches one of the skip patterns.
is_excluded() {
  local name=$1 pat
  for pat in "${excludes[@]}"; do
    # shellcheck disable=SC2053  # $pat is a glob on purpose
    if [[ $name == $pat ]]; then
      return 0
    fi
  done
  return 1
}

# check_dirs SRC DEST: refuse obviously dangerous targets before copying.
check_dirs() {
  local src=$1 dest=$2
  [[ -d $src ]] || die "source is not a directory: $src"
  [[ $dest != / ]] || die "refusing to publish into /"
  if [[ -e $dest && ! -d $dest ]]; then
    die "destination exists and is not a directory: $dest"
  fi
  local src_abs dest_abs
  src_abs=$(cd -- "$src" && pwd -P)
  dest_abs=$(cd -- "$(dirname -- "$dest")" 2>/dev/null && pwd -P) || dest_abs=.
  case $dest_abs/${dest##*/}/ in
    "$src_abs"/*) die "destination is inside the source tree" ;;
  esac
}

# copy_file SRC_FILE DEST_FILE: copy one file, keeping its mode and times.
copy_file() {
  local from=$1 to=$2
  mkdir -p -- "$(dirname -- "$to")"
  cp -p -- "$from" "$to"
}

# sync_tree SRC DEST: copy new and changed files, print a one-line summary.
sync_tree() {
  local src=$1 dest=$2 file rel copied=0 same=0 skipped=0
  while IFS= read -r -d '' file; do
    rel=${file#"$src"/}
    if is_excluded "${rel##*/}"; then
      log "skip $rel"
      skipped=$((skipped + 1))
      continue
    fi
    if [[ -f $dest/$rel ]] && cmp -s -- "$file" "$dest/$rel"; then
      log "same $rel"
      same=$((same + 1))
      continue
    fi
    copy_file "$file" "$dest/$rel"
    log "copy $rel"
    copied=$((copied + 1))
  done < <(find "$src" -type f -print0 | LC_ALL=C sort -z)
  printf '%s: %d copied, %d unchanged, %d skipped\n' "$PROG" "$copied" "$same" "$skipped"
}

main() {
  local opt
  while getopts ':vx:h' opt; do
    case $opt in
      v) verbose=1 ;;
      x) excludes+=("$OPTARG") ;;
      h) usage; exit 0 ;;
      :) die "option -$OPTARG needs an argument" ;;
      *) usage >&2; exit 2 ;;
    esac
  done
  shift $((OPTIND - 1))
  if (($# != 2)); then
    usage >&2
    exit 2
  fi

  local src=${1%/} dest=${2%/}
  check_dirs "$src" "${dest:-/}"
  mkdir -p -- "$dest"
  sync_tree "$src" "$dest"
}

main "$@"
