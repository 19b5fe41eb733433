#!/usr/bin/env bash
# bench/gpu_check.sh: every GPU check of issues 13 and 14 in one call on a lent GPU machine.
#
# Prepare here (no GPU needed), then carry .whl (7-8 MiB with the working tree):
#   bash bench/gpu_wheels.sh && bash bench/gpu_check_llama_carry.sh
# Run there:  bash bench/gpu_check.sh        (about 9 minutes on an H200 with 16 cores)
#
# The two checks share the call's 10 minutes by overlapping: llama-cpp-python's CUDA build
# (bench/gpu_check_llama.sh, CPU-bound, niced, all but two cores) runs while the torch check
# (bench/gpu_check_torch.py: the kernel, the torch target with the kernel in the loop, CUDA
# graphs, syncs per step, the kernel tests on CUDA) has the GPU; the llama.cpp measurements
# (cost curve with all layers offloaded, plain vs speculative on a self-copy) start when the
# torch check is done, so the two never time each other's work.
# $OUT gets at most a few files (the device tool returns 8): gpu_check.json (both records and
# each part's exit status), gpu_check_logs.tar.gz (every log) and this script's output.
# Exits non-zero when either part fails.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/bench/results}
WORK=$(mktemp -d)
FLAG=$WORK/torch-done
mkdir -p "$OUT"
echo "== gpu_check: $(nproc) cores; work in $WORK"
(
  export OUT=$WORK GPU_CHECK_WAIT_FOR=$FLAG GPU_CHECK_JOBS=$(($(nproc) > 4 ? $(nproc) - 2 : 2))
  nice -n 10 bash bench/gpu_check_llama.sh >"$WORK/gpu_check_llama.out" 2>&1
  echo $? >"$WORK/gpu_check_llama.rc"
) &
LLAMA=$!
OUT=$WORK python3 bench/gpu_check_torch.py --budget "${GPU_CHECK_TORCH_S:-330}" \
  >"$WORK/gpu_check_torch.out" 2>&1
TORCH_RC=$?
touch "$FLAG"
echo "torch check: exit $TORCH_RC"
tail -5 "$WORK/gpu_check_torch.out"
wait $LLAMA
LLAMA_RC=$(cat "$WORK/gpu_check_llama.rc" 2>/dev/null || echo 1)
echo "llama.cpp check: exit $LLAMA_RC"
tail -5 "$WORK/gpu_check_llama.out"
python3 - "$WORK" "$OUT/gpu_check.json" "$TORCH_RC" "$LLAMA_RC" <<'PY'
import glob, json, os, sys
work, dest, torch_rc, llama_rc = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None
rec = {
    "torch": {"rc": torch_rc, "record": load(os.path.join(work, "gpu_check_torch.json"))},
    "llama": {
        "rc": llama_rc,
        "summary": load(os.path.join(work, "gpu_check_llama", "summary.json")),
        "models": {
            os.path.basename(os.path.dirname(p)): load(p)
            for p in glob.glob(os.path.join(work, "gpu_check_llama", "*", "gpu_check_llama.json"))
        },
    },
}
json.dump(rec, open(dest, "w"), indent=1)
print("wrote", dest)
PY
tar czf "$OUT/gpu_check_logs.tar.gz" -C "$WORK" . 2>/dev/null
[ "$TORCH_RC" = 0 ] && [ "$LLAMA_RC" = 0 ]
