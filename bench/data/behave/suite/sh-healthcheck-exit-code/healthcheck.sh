#!/usr/bin/env bash
# Probe the shopfront endpoints after a deploy and print one status line each.
#
# Usage: healthcheck.sh [-t SECONDS] [-r TRIES] [ENDPOINTS_FILE]
#   -t SECONDS  time limit of one request (default 5)
#   -r TRIES    requests per endpoint before it counts as down (default 2)
#
# ENDPOINTS_FILE holds one "name url" pair a line; '#' starts a comment.
# It defaults to /etc/shopfront/endpoints.txt.

set -uo pipefail

TIMEOUT=5
TRIES=2
ENDPOINTS_FILE="/etc/shopfront/endpoints.txt"

usage() {
  sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//' >&2
}

# Print the HTTP status code of one GET ("000" when nothing came back).
probe() {
  local url="$1" code
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time "$TIMEOUT" "$url")" || code="000"
  echo "${code:-000}"
}

check_endpoint() {
  local name="$1" url="$2"
  local attempt code="000"
  for attempt in $(seq 1 "$TRIES"); do
    code="$(probe "$url")"
    if [ "$code" -ge 200 ] && [ "$code" -lt 400 ]; then
      printf 'OK    %-14s %s\n' "$name" "$code"
      return 0
    fi
  done
  printf 'FAIL  %-14s %s (%s tries)\n' "$name" "$code" "$TRIES"
  return 1
}

main() {
  local opt
  while getopts ":t:r:" opt; do
    case "$opt" in
      t) TIMEOUT="$OPTARG" ;;
      r) TRIES="$OPTARG" ;;
      *)
        usage
        exit 2
        ;;
    esac
  done
  shift $((OPTIND - 1))
  ENDPOINTS_FILE="${1:-$ENDPOINTS_FILE}"

  if [ ! -r "$ENDPOINTS_FILE" ]; then
    echo "healthcheck: cannot read $ENDPOINTS_FILE" >&2
    exit 2
  fi

  local total=0 failed=0 name url
  while read -r name url; do
    case "$name" in
      '' | '#'*) continue ;;
    esac
    total=$((total + 1))
    if ! check_endpoint "$name" "$url"; then
      failed=$((failed + 1))
    fi
  done <"$ENDPOINTS_FILE"

  echo "$((total - failed))/$total endpoints healthy"
}

main "$@"
