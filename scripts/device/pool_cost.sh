#!/usr/bin/env bash
# One device command, from the repository root with the bundle in .device/
# (KSEEK_DEVICE_BINS="kseek runner_gpu_test exploits_gpu_test" bash
# scripts/device/make_bundle.sh): what a memory pool costs a sandboxed
# candidate, and the GPU tests of the sandbox.
#   1. scripts/device/probes/pool_release.cu (softmax through a scratch
#      buffer from the default pool on every call) with the pool giving its
#      memory back at each synchronization (CUDA's default) and keeping it,
#      each sandboxed and --unconfined, on two softmax scenarios: status,
#      error and the judge's clock cross-check (the candidate's excess over
#      its reported time, the baseline's, the allowance), into pool_cost.txt;
#   2. runner_gpu_test and exploits_gpu_test, whole, into gpu_tests.txt.
# Logs under $OUT (default ./pool-cost-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/pool-cost-out}
mkdir -p "$out"
source scripts/device/bundle_env.sh
bin=.device/bin
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/pool_cost.txt" 2>&1
for keep in 0 1; do
  sed "s/kKeepPoolMemory = 0;/kKeepPoolMemory = $keep;/" scripts/device/probes/pool_release.cu \
    > "$work/pool_keep$keep.cu"
  for mode in sandboxed unconfined; do
    flags=()
    [[ $mode == unconfined ]] && flags=(--unconfined)
    name=keep${keep}_$mode
    timeout 240 "$bin/kseek" eval --local --task kernels/softmax --target sm_90a --json \
      --scenarios r4096_c1000_f32,r1000_c8192_bf16 --cache-dir "$KSEEK_CACHE_DIR" "${flags[@]}" \
      "$work/pool_keep$keep.cu" > "$out/$name.json" 2> "$work/$name.err"
    echo "== pool memory kept: $keep, $mode: exit $?" >> "$out/pool_cost.txt"
    python3 - "$out/$name.json" >> "$out/pool_cost.txt" 2>&1 <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("  no verdict:", e)
    sys.exit()
for s in r.get("scenarios", []):
    c = s.get("cross_check") or {}
    t = s.get("time_ms") or {}
    print("  %-22s %-10s median %s ms; excess candidate %s, baseline %s, allowed %s ms  %s" % (
        s.get("name"), s.get("status"), t.get("median"), c.get("candidate_excess_ms"),
        c.get("baseline_excess_ms"), c.get("allowed_ms"), (s.get("error") or "")[:300]))
PY
    tail -c 400 "$work/$name.err" | sed 's/^/  stderr: /' >> "$out/pool_cost.txt"
  done
done
for t in runner_gpu_test exploits_gpu_test; do
  [[ -x $bin/$t ]] || continue
  timeout 280 "$bin/$t" > "$work/$t.log" 2>&1
  echo "== $t: exit $?" >> "$out/gpu_tests.txt"
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|error" "$work/$t.log" | head -80 >> "$out/gpu_tests.txt"
done
cat "$out/pool_cost.txt" "$out/gpu_tests.txt"
