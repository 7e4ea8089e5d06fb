#!/usr/bin/env bash
# One device call (about 480 s; .device and .anchors carried): the final
# run of hopper.cu as it is (final.sh, into $OUT), then on the 96
# non-causal WGMMA scenarios with 10 samples (into $OUT/variants):
#   def      the default (8 MB L2 sections without causal masking at the
#            D = 128 kernel: KSEEK_FA_FULL_L2_SECTION_DIMS=2)
#   f0       KSEEK_FA_FULL_L2_SECTION_DIMS=0 (16 MB everywhere, v3x)
#   f15      KSEEK_FA_FULL_L2_SECTION_DIMS=15 (8 MB without causal masking
#            at every head dim)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/full_sections.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
final_plan
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
left=$((570 - SECONDS - 110))  # the builds take about 100 s
if (( left < 60 )); then
  echo "== full_sections: ${SECONDS} s gone, no time left for the variants"
  exit 0
fi
export OUT="${OUT:-/tmp/fa_final}/variants" FA_VARIANTS_TIMEOUT=$left
export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 10 --budget-s 0.12}"
( run_plan "def=$cu;f0=$cu -DKSEEK_FA_FULL_L2_SECTION_DIMS=0;f15=$cu -DKSEEK_FA_FULL_L2_SECTION_DIMS=15;def2=$cu" \
    '[!dm]*full*' > /dev/null 2>&1 )
rm -f "$OUT/builds.tgz"
tail -40 "$OUT/variants.txt"
