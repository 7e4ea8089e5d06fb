#!/usr/bin/env bash
# The evaluation service from the relocatable bundle on a GPU machine, run
# from the repository root with the bundle in dist/kernelseek-bundle
# (deploy/bundle.sh made it on a build machine; nothing else of ours is
# installed here, and LD_LIBRARY_PATH is cleared so the bundle must find its
# own libraries):
#   1. kseek up --detach in a fresh state folder: a coordinator, a host
#      worker and one worker per sm_90a / sm_100a GPU, on loopback;
#   2. kseek workers;
#   3. the CUDA softmax fast kernel evaluated through the coordinator (the
#      table the user sees), then SERVICE_PARALLEL (default 4) evaluations
#      submitted at once (alternating fast.cu and baseline.cu, --json) so
#      that a machine with two GPUs spreads them over both workers;
#   4. kseek evals, and which worker ran each evaluation; kseek down.
# Logs of the daemons land in $OUT.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=${KSEEK_BUNDLE:-$root/dist/kernelseek-bundle}
out=${OUT:-$root/service-out}
mkdir -p "$out"
unset LD_LIBRARY_PATH KSEEK_INCLUDE_DIR KSEEK_BIN_DIR
export PATH=/usr/local/cuda/bin:$PATH
kseek=$bundle/bin/kseek
state=$(mktemp -d)
cd "$state"
trap '"$kseek" down >/dev/null 2>&1; cp -r "$state/.kernelseek/logs" "$out/" 2>/dev/null; cp "$state"/.kernelseek/*.log "$out/" 2>/dev/null' EXIT

nvidia-smi --query-gpu=index,name,compute_cap --format=csv,noheader
echo "== kseek up --detach"
"$kseek" up --detach || exit 1
echo "== kseek workers"
"$kseek" workers
target=${KSEEK_GPU_TARGET:-sm_90a}
echo "== kseek eval --task kernels/softmax --target $target kernels/softmax/fast.cu (through the coordinator)"
start=$(date +%s.%N)
"$kseek" eval --task "$root/kernels/softmax" --target "$target" "$root/kernels/softmax/fast.cu"
echo "exit $? after $(python3 -c "import time; print(round(time.time() - $start, 1))") s"

n=${SERVICE_PARALLEL:-4}
echo "== $n evaluations submitted at once"
pids=()
for i in $(seq 1 "$n"); do
  k=fast.cu; (( i % 2 == 0 )) && k=baseline.cu
  "$kseek" eval --task "$root/kernels/softmax" --target "$target" --json --max-seconds 0.3 \
    "$root/kernels/softmax/$k" > "$out/parallel_$i.json" 2> "$out/parallel_$i.err" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"; echo "evaluation $((i + 1)): exit $?"
done
echo "== kseek evals"
"$kseek" evals
echo "== worker of each evaluation"
"$kseek" evals --json | python3 -c '
import collections, json, sys
evals = json.load(sys.stdin)
evals = evals.get("evaluations", evals) if isinstance(evals, dict) else evals
by = collections.Counter(e.get("worker_id", "?") + " " + e.get("target", "") for e in evals)
for k, v in sorted(by.items()): print(f"  {v} evaluation(s) on {k}")'
echo "== kseek workers"
"$kseek" workers
