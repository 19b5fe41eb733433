#!/usr/bin/env bash
# rotate-logs.sh - rotate the kiosk app's log files without logrotate.
#
# usage: rotate-logs.sh [-s MIN_SIZE_KB] [-k KEEP] LOGFILE...
#
# Each LOGFILE bigger than MIN_SIZE_KB (default 512) becomes LOGFILE.1, the older
# LOGFILE.1 becomes LOGFILE.2, and so on; the oldest copies beyond KEEP (default 5) are
# deleted. The live file is truncated in place so that the app keeps its handle.

set -eu

KEEP=5
MIN_SIZE_KB=512

usage() {
    echo "usage: ${0##*/} [-s MIN_SIZE_KB] [-k KEEP] LOGFILE..." >&2
    exit 2
}

size_kb() {
    local bytes
    bytes=$(wc -c < "$1")
    echo $(( (bytes + 1023) / 1024 ))
}

# rotate FILE: shift FILE.(n-1) -> FILE.n down to FILE -> FILE.1
rotate() {
    local file=$1 i
    rm -f -- "$file.$KEEP"
    for (( i = KEEP - 1; i >= 1; i-- )); do
        if [ -e "$file.$i" ]; then
            mv -f -- "$file.$i" "$file.$(( i + 1 ))"
        fi
    done
    cp -p -- "$file" "$file.1"
    : > "$file"
}

# drop copies beyond KEEP left over from an earlier, larger setting
drop_extra() {
    local file=$1 n
    for old in "$file".[0-9]*; do
        [ -e "$old" ] || continue
        n=${old##*.}
        case $n in *[!0-9]*) continue ;; esac
        if [ "$n" -gt "$KEEP" ]; then
            rm -f -- "$old"
        fi
    done
}

while getopts ":s:k:h" opt; do
    case $opt in
        s) MIN_SIZE_KB=$OPTARG ;;
        k) KEEP=$OPTARG ;;
        h) usage ;;
        *) usage ;;
    esac
done
shift $(( OPTIND - 1 ))
[ $# -gt 0 ] || usage

status=0
for log in "$@"; do
    if [ ! -f "$log" ]; then
        echo "skip: $log is not a file" >&2
        status=1
        continue
    fi
    if [ "$(size_kb "$log")" -lt "$MIN_SIZE_KB" ]; then
        continue
    fi
    rotate "$log"
    drop_extra "$log"
    echo "rotated $log (keeping $KEEP)"
done
exit $status
