#!/usr/bin/env bash
# One device call (about 420 s of wall time; carry .device, packed by
#   KSEEK_DEVICE_BINS="kseek" bash scripts/device/make_bundle.sh):
# head_dim 256's 80-key tiles against 64-key ones where the 80-key tiles
# pad the keys (NOTES.md "v4c"): 512 keys take 7 tiles of 80 (560 keys
# computed, 9% more), and under causal masking each 128-row item's keys
# round up past its diagonal (12.5% more at s512). The builds:
#   v4b   the default (80-key tiles at head_dim 193-256)
#   n64   64-key tiles everywhere at head_dim 256 (KSEEK_FA_HD256_BLOCK_N=64)
#   f5    64-key tiles where 80-key ones compute at least 5% more keys
#         (KSEEK_FA_HD256_FIT64_PCT=5: grid s512 full and causal, causal
#         s1024, ragged s1000 causal, qlong q1024_k512, many_short s32)
#         The switch existed for this run only (NOTES.md v4c says what it
#         did): v4c removed it, so today the script stops at its check
#         ("no switch to set"); bench/results/hopper_after_v4b_variants_h100.txt
#         holds the run.
# on the 56 head_dim 256 scenarios with whole items (grid, GQA/MQA,
# ragged, qlong, many-short, heads1), beside cuDNN. First kseek eval
# --no-timing of f5's file (hopper.cu with the switch's default set to 5)
# on those scenarios and the extra ones in the harness's sandbox, its
# compile overlapping the builds' ($OUT/f5_eval.txt).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd256_fit64.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export OUT=${OUT:-/tmp/fa_hd256_fit64}
mkdir -p "$OUT"
fa=kernels/flash_attention_fwd
cu=$fa/hopper.cu
work=$(mktemp -d)
sed 's/^#define KSEEK_FA_HD256_FIT64_PCT 0$/#define KSEEK_FA_HD256_FIT64_PCT 5/' $cu > "$work/hopper_f5.cu"
grep -q "^#define KSEEK_FA_HD256_FIT64_PCT 5$" "$work/hopper_f5.cu" || { echo "no switch to set" >&2; exit 2; }
scenarios=$(python3 $fa/bench/pick_scenarios.py 'grid_hd256_*' 'gqa*hd256*' 'mqa_hd256*' \
  'ragged_*hd256*' 'qlong_*hd256*' 'many_short_*hd256*' 'heads1_*hd256*') || exit 2
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
cache=$(mktemp -d)
# The harness's compile of f5 beside the builds (the cache keeps it).
.device/bin/kseek compile --target sm_90a --task $fa --cache-dir "$cache" "$work/hopper_f5.cu" \
  > "$work/f5_compile.txt" 2>&1 &
compile_pid=$!
export FA_VARIANTS="v4b=$cu;n64=$cu -DKSEEK_FA_HD256_BLOCK_N=64;f5=$cu -DKSEEK_FA_HD256_FIT64_PCT=5"
export FA_SCENARIOS=$scenarios
export FA_VARIANT_ARGS="--samples 8 --budget-s 0.12" FA_VARIANTS_TIMEOUT=330
wait $compile_pid
echo "== kseek compile f5: exit $?"; tail -2 "$work/f5_compile.txt"
bash $fa/bench/run_variants.sh
{
  for set in task extra; do
    flags=(--scenarios "$scenarios")
    [[ $set == extra ]] && flags=(--scenarios $fa/extra_scenarios.json)
    start=$(date +%s)
    timeout 200 .device/bin/kseek eval --local --task $fa --target sm_90a --no-timing \
      --scenario-timeout 10 --cache-dir "$cache" "${flags[@]}" "$work/hopper_f5.cu" \
      > "$work/f5_$set.txt" 2>&1
    echo "== kseek eval f5 ($set scenarios): exit $? in $(( $(date +%s) - start )) s"
    tail -30 "$work/f5_$set.txt"
  done
} > "$OUT/f5_eval.txt" 2>&1
cat "$OUT/f5_eval.txt"
