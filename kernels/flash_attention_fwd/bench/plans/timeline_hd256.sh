#!/usr/bin/env bash
# One device call (about 120 s; carry .anchors): each kernel of a call on
# the GPU's timeline (bench/timeline.py through run_variants.sh's
# FA_TIMELINE), for the shape where the dependent combine behind the
# D = 256 kernel costs 5-6% (prefill_q256_k16384_hd256: 8 splits, one
# item a block; NOTES.md "After v3v") beside one where it gains
# (prefill_q333_k4097_hd256), and FA3's kernels on the same inputs (its
# split count shows as a combine kernel or none). Builds:
#   def      the default
#   p15      KSEEK_FA_PDL=15 (the dependent combine at D = 256 too;
#            KSEEK_FA_PDL_END=0 since v3x, whose default keeps D = 256
#            from launching its dependents early)
#   nolate   KSEEK_FA_PDL_LATE=0 (the dependent launch at the blocks' start)
#   p15l     KSEEK_FA_PDL=15 with KSEEK_FA_PDL_LATE=14 (D = 256 late;
#            KSEEK_FA_PDL_END=0 too)
# No timing table (FA_SCENARIOS=none); a 1000 us pad so that FA3's host
# work (up to 434 us a call) is hidden.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/timeline_hd256.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_plan "def=$cu;p15=$cu -DKSEEK_FA_PDL=15 -DKSEEK_FA_PDL_END=0;nolate=$cu -DKSEEK_FA_PDL_LATE=0;p15l=$cu -DKSEEK_FA_PDL=15 -DKSEEK_FA_PDL_LATE=14 -DKSEEK_FA_PDL_END=0" \
  'prefill_q256_k16384_hd256_*' 'prefill_q333_k4097_hd256_full_bf16' \
  'prefill_q256_k16384_hd128_full_bf16' 'prefill_q512_k16384_hd192_causal_bf16'
