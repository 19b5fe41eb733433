#!/usr/bin/env bash
# bench/gpu_check.sh: the GPU checks, in two calls of under 5 minutes each, each useful alone.
#
#   bash bench/gpu_check.sh torch   # call 1: the torch target and the Triton kernel
#   bash bench/gpu_check.sh llama   # call 2: llama-cpp-python's CUDA build, the 0.5B, the 1.5B
#
# Prepare here first (online; carry .whl, about 8 MiB with the working tree):
#   bash bench/gpu_wheels.sh && bash bench/gpu_check_llama_carry.sh
#
# Each part follows a plan (bench/gpu_check_results.py: the steps, each in a fixed time box
# under `timeout`, their sum under the part's budget). Every figure goes to
# $OUT/gpu_check_PART.jsonl as it is made (one JSON line per record, flushed), each step's log
# to $OUT/gpu_check_PART_logs/STEP.log as it runs, a one-line JSON of the targets measured so
# far to stdout after each step, and an EXIT trap writes the summary $OUT/gpu_check_PART.json
# whatever ended the run (a timeout, a kill, an error). Nothing of one part runs in the other.
#
# Exit status: 0 every step ran, every check held, every target was met; 1 a check failed or
# a step did not run to its end (not started for time, timed out, crashed); 2 complete and
# correct, but a target was missed. The summary says which, and why.
#
# Knobs: GPU_CHECK_BUDGET_S (seconds of the call; default per part), GPU_CHECK_STEPS
# ("name[:box],..." runs those steps only), SPECEDIT_GPU_CHECK_CPU=1 (the rehearsal: every
# step's code path on the CPU with tiny shapes, same files and verdicts, boxes and budget x3;
# GPU_CHECK_BOX_SCALE sets the factor), GPU_CHECK_RUNNER
# (the command a torch step runs, followed by its name; for tests), PYTHON (default python3).
set -uo pipefail
cd "$(dirname "$0")/.."
PART=${1:-}
case "$PART" in
torch | llama) ;;
*)
  echo "usage: bash bench/gpu_check.sh torch|llama" >&2
  exit 64
  ;;
esac
export OUT=${OUT:-$PWD/bench/results}
PY=${PYTHON:-python3}
JSONL=$OUT/gpu_check_$PART.jsonl
SUMMARY=$OUT/gpu_check_$PART.json
LOGS=$OUT/gpu_check_${PART}_logs
CPU=${SPECEDIT_GPU_CHECK_CPU:-0}
export SPECEDIT_GPU_CHECK_CPU=$CPU GPU_CHECK_JSONL=$JSONL GPU_CHECK_LOGS=$LOGS
mkdir -p "$OUT" "$LOGS"
[ -s "$JSONL" ] && mv -f "$JSONL" "$JSONL.prev" # a rerun in the same folder keeps the last one
: >"$JSONL"
T0=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET_S:-$("$PY" bench/gpu_check_results.py budget "$PART")}
STEP_PID=""

now() { echo $(($(date +%s) - T0)); }
record() { # record KIND STEP JSON-FIELDS...: one line, appended at once
  printf '{"kind": "%s", "step": "%s", "t": %s, %s}\n' "$1" "$2" "$(date +%s)" "$3" >>"$JSONL"
}
finish() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$STEP_PID" ] && kill -0 "$STEP_PID" 2>/dev/null; then
    kill -TERM "$STEP_PID" 2>/dev/null # timeout passes it on to the step
    record step "$STEP_NAME" "\"status\": \"killed\", \"rc\": null, \"seconds\": $(($(date +%s) - STEP_T)), \"why\": \"the run was ended (status $rc) while it ran\""
    sleep 1
  fi
  "$PY" bench/gpu_check_results.py targets "$JSONL"
  "$PY" bench/gpu_check_results.py summary "$JSONL" "$SUMMARY"
  local code=$?
  echo "gpu_check $PART: exit $code after $(now)s; summary $SUMMARY, figures $JSONL"
  exit $code
}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

run_step() { # run_step NAME BOX CMD...: under timeout, in the background so a signal lands now
  STEP_NAME=$1 STEP_T=$(date +%s)
  local box=$2 rc status why=""
  shift 2
  echo "== $STEP_NAME (box ${box}s, at $(now)s of ${BUDGET}s)"
  GPU_CHECK_BOX_S=$box timeout -k 5 "$box" "$@" >"$LOGS/$STEP_NAME.log" 2>&1 &
  STEP_PID=$!
  wait "$STEP_PID"
  rc=$?
  STEP_PID=""
  local secs=$(($(date +%s) - STEP_T))
  case $rc in
  0) status=ok ;;
  124 | 137) status=timeout why="\"why\": \"still running after its ${box}s box\", " ;;
  *) status=failed ;;
  esac
  record step "$STEP_NAME" "${why}\"status\": \"$status\", \"rc\": $rc, \"seconds\": $secs"
  echo "   $STEP_NAME: $status in ${secs}s"
  [ "$status" = ok ] || tail -n 4 "$LOGS/$STEP_NAME.log" | sed 's/^/   | /'
}

PLAN=$("$PY" bench/gpu_check_results.py plan "$PART") || exit 1
steps_json=$(echo "$PLAN" | awk '{printf "%s{\"name\": \"%s\", \"box_s\": %s, \"optional\": %s}", (NR > 1 ? ", " : ""), $1, $2, ($3 == 1 ? "true" : "false")}')
record plan driver "\"part\": \"$PART\", \"cpu\": $([ "$CPU" = 1 ] && echo true || echo false), \"budget_s\": $BUDGET, \"cores\": $(nproc), \"steps\": [$steps_json]"
echo "== gpu_check $PART: budget ${BUDGET}s, $(nproc) cores, CPU rehearsal: $CPU; figures in $JSONL"

if [ "$PART" = llama ]; then
  # one runner; it records its own steps (wheels, configure, build, ... model_1.5b) as it goes
  run_step llama_runner $((BUDGET - 5)) env GPU_CHECK_PLAN="$PLAN" GPU_CHECK_BUDGET_S="$BUDGET" \
    bash bench/gpu_check_llama.sh
  cat "$LOGS/llama_runner.log" | tail -n 25
  exit 0 # the EXIT trap gives the verdict
fi

RUNNER=${GPU_CHECK_RUNNER:-$PY bench/gpu_check_torch.py --step}
while read -r name box optional; do
  left=$((BUDGET - $(now)))
  if [ "$box" -gt "$left" ]; then
    if [ "$optional" = 1 ] || [ "$left" -lt 5 ]; then
      record step "$name" "\"status\": \"not_run\", \"rc\": null, \"seconds\": 0, \"why\": \"${left}s left of the ${BUDGET}s budget, its box is ${box}s\""
      echo "== $name: not run (${left}s left, box ${box}s)"
      continue
    fi
    box=$left # a required step gets what is left: its figures so far still count
  fi
  # shellcheck disable=SC2086  # RUNNER is a command line
  run_step "$name" "$box" $RUNNER "$name"
  "$PY" bench/gpu_check_results.py targets "$JSONL"
done <<<"$PLAN"
