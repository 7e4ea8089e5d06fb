#!/usr/bin/env bash
# One device call (about 150 s of wall time; carry .device, packed by
#   KSEEK_DEVICE_BINS="kseek runner_test runner_gpu_test" bash scripts/device/make_bundle.sh
# with .device/variants/hopper_v4a.cu):
# which CUDA allocations the harness's sandbox lets through, now that the
# judge opens the driver's device files for the host (harness/src/open_broker.h).
# runner_gpu_test's MemoryPoolsWorkUnderTheSandbox and runner_test's
# sandbox tests (this machine's kernel supervising opens), then kseek eval of
# bench/pool_probe.cu (cudaMalloc, cudaMallocAsync, cudaMemPoolCreate and
# cudaMallocFromPoolAsync; it fails on purpose so that its outcomes reach
# the verdict) in the sandbox and with --unconfined, and of v4a's file on
# one split-key scenario in the sandbox, whose refusals now carry the path.
# The error texts into $OUT/pool.txt.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pool_probe.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_pool_probe}
mkdir -p "$OUT"
fa=kernels/flash_attention_fwd
work=$(mktemp -d)
run() {  # NAME FILE SCENARIO [FLAGS...]
  local name=$1 file=$2 scenario=$3
  shift 3
  LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/usr/local/cuda/bin:$PATH \
    timeout 200 .device/bin/kseek eval --local --task $fa --target sm_90a --no-timing --json \
    --scenarios "$scenario" "$@" "$file" > "$work/$name.json" 2> "$work/$name.err"
  echo "exit $?" >> "$work/$name.err"
}
run probe_sandboxed $fa/bench/pool_probe.cu decode_b1_k32768_gqa8_hd128_bf16 &
run probe_unconfined $fa/bench/pool_probe.cu decode_b1_k32768_gqa8_hd128_bf16 --unconfined &
[[ -f .device/variants/hopper_v4a.cu ]] &&
  run v4a_sandboxed .device/variants/hopper_v4a.cu decode_b1_k32768_gqa8_hd128_bf16 &
wait
export KSEEK_SOURCE_DIR=$PWD KSEEK_BIN_DIR=$PWD/.device/bin KSEEK_INCLUDE_DIR=$PWD/.device/include
for t in runner_gpu_test:'*MemoryPools*' runner_test:'*Refused*:*Null*:*Supervised*:*Broker*:*OwnIs*'; do
  bin=${t%%:*}
  [[ -x .device/bin/$bin ]] || { echo "== $bin: not in .device" >> "$work/tests.txt"; continue; }
  echo "== $bin ${t#*:}" >> "$work/tests.txt"
  LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PATH=/usr/local/cuda/bin:$PATH \
    timeout 150 ".device/bin/$bin" --gtest_filter="${t#*:}" 2>&1 | grep -v "^\[ RUN" | tail -40 >> "$work/tests.txt"
done
cat "$work/tests.txt" > "$OUT/tests.txt"
for name in probe_sandboxed probe_unconfined v4a_sandboxed; do
  echo "== $name"
  grep -o '"error": *"[^"]*"' "$work/$name.json" 2>/dev/null | grep -v '"error": *""' | sort | uniq -c
  tail -c 600 "$work/$name.err" 2>/dev/null
done | tee "$OUT/pool.txt"
