#!/usr/bin/env bash
# The candidate-isolation checks on a Hopper GPU, as one device command, from
# the repository root with the bundle in .device/ (scripts/device/make_bundle.sh):
#   1. one CUDA softmax scenario, sandboxed and --unconfined (what the sandbox
#      costs, and which system calls it refused, if any),
#   2. the full flash_attention_fwd verification with default flags, compile
#      included, timed (FA_TASK picks the task folder, FA_SCENARIOS a subset:
#      names separated by commas, or every:N for every Nth scenario), with the
#      judge's time by phase,
#   3. runner_gpu_test and exploits_gpu_test (every CUDA exploit's verdict),
#   4. the softmax baseline twice in one run (timing repeatability).
# Logs under $OUT (default ./trust-out); a summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$PWD/trust-out}
mkdir -p "$out"
source scripts/device/bundle_env.sh
bin=.device/bin
summary=()
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/gpu.txt" 2>&1
ls -l /dev/nvidia* > "$out/devices.txt" 2>&1

# SANITY=0, GPU_TESTS="" or REPEAT=0 skip steps 1, 3 or 4.
for mode in $([[ ${SANITY:-1} == 1 ]] && echo sandboxed unconfined); do
  flags=(); [[ $mode == unconfined ]] && flags=(--unconfined)
  start=$(date +%s.%N)
  "$bin/kseek" eval --local --task kernels/softmax --target sm_90a --json --scenarios r4096_c1000_bf16 \
    --cache-dir "$KSEEK_CACHE_DIR" "${flags[@]}" kernels/softmax/fast.cu > "$out/sanity_$mode.json" 2> "$out/sanity_$mode.err"
  rc=$?
  summary+=("softmax fast.cu one scenario, $mode: exit $rc, $(python3 -c "import sys;print(round($(date +%s.%N)-$start,1))") s, $(grep -o '"status": "[a-z_]*"' "$out/sanity_$mode.json" | tail -1)")
done

fa=${FA_TASK:-kernels/flash_attention_fwd}
subset=()
if [[ ${FA_SCENARIOS:-} == every:* ]]; then
  subset=(--scenarios "$(python3 -c "
import json; s=json.load(open('$fa/task.json'))['scenarios']
print(','.join(x['name'] for x in s[::${FA_SCENARIOS#every:}]))")")
elif [[ -n ${FA_SCENARIOS:-} ]]; then
  subset=(--scenarios "$FA_SCENARIOS")
fi
start=$(date +%s.%N)
timeout "${FA_TIMEOUT:-330}" "$bin/kseek" eval --local --task "$fa" --target sm_90a --json --progress lines \
  --cache-dir "$(mktemp -d)" "${subset[@]}" "$fa/hopper.cu" > "$out/fa_verify.json" 2> "$out/fa_verify.err"
rc=$?
secs=$(python3 -c "print(round($(date +%s.%N)-$start,1))")
summary+=("flash_attention_fwd verification (default flags, compile included): exit $rc in $secs s; $(python3 -c "
import json,collections
v=json.load(open('$out/fa_verify.json'))
c=collections.Counter(s['status'] for s in v['scenarios'])
ph=collections.Counter()
for s in v['scenarios']: ph.update(s.get('phase_seconds', {}))
bad=[(s['name'], s['error'][:300]) for s in v['scenarios'] if s['status'] != 'ok']
over=sorted(x['cross_check']['candidate_excess_ms'] - max(0, x['cross_check']['baseline_excess_ms'])
           for x in v['scenarios'] if x.get('cross_check'))
q=lambda f: round(over[min(len(over) - 1, int(f * len(over)))], 4) if over else None
print(dict(c), 'geomean', v.get('geomean_speedup'), 'compile', v['compile'].get('seconds'),
      'phases', {k: round(x, 1) for k, x in ph.most_common()},
      'excess over the baseline ms: p50', q(0.5), 'p90', q(0.9), 'p99', q(0.99), 'max', q(1),
      'not ok', bad)" 2>&1 | tail -1)")

# GPU_TESTS: the test executables to run; GTEST_FILTER picks their cases.
for t in ${GPU_TESTS-runner_gpu_test exploits_gpu_test}; do
  timeout "${TEST_TIMEOUT:-300}" "$bin/$t" > "$out/$t.log" 2>&1
  rc=$?
  summary+=("$t: exit $rc  $(grep -E "^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test" "$out/$t.log" | tr '\n' ' ')")
done

if [[ ${REPEAT:-1} == 1 ]]; then
  "$bin/kseek" eval --local --task kernels/softmax --target sm_90a --json --seed 11 kernels/softmax/baseline.cu \
    > "$out/softmax_baseline_1.json" 2>/dev/null
  "$bin/kseek" eval --local --task kernels/softmax --target sm_90a --json --seed 12 kernels/softmax/baseline.cu \
    > "$out/softmax_baseline_2.json" 2>/dev/null
  python3 scripts/device/compare_medians.py "$out/softmax_baseline_1.json" "$out/softmax_baseline_2.json" \
    > "$out/repeatability.txt" 2>&1
  cat "$out/repeatability.txt"
fi
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
