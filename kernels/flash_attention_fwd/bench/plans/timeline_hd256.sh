#!/usr/bin/env bash
# One device call (about 120 s; carry .anchors): each kernel of a call on
# the GPU's timeline (bench/timeline.py through run_variants.sh's
# FA_TIMELINE), for the shape where the dependent combine behind the
# D = 256 kernel costs 5-6% (prefill_q256_k16384_hd256: 8 splits, one
# item a block; NOTES.md "After v3v") beside one where it gains
# (prefill_q333_k4097_hd256), and FA3's kernels on the same inputs (its
# split count shows as a combine kernel or none). Builds:
#   def      the default
#   p15      KSEEK_FA_PDL=15 (the dependent combine at D = 256 too)
#   late10   KSEEK_FA_PDL_LATE=10
# No timing table (FA_SCENARIOS=none); a 1000 us pad so that FA3's host
# work (up to 434 us a call) is hidden.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/timeline_hd256.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export FA_VARIANTS="def=$cu;p15=$cu -DKSEEK_FA_PDL=15;late10=$cu -DKSEEK_FA_PDL_LATE=10"
export FA_SCENARIOS=none
FA_TIMELINE=$(python3 kernels/flash_attention_fwd/bench/pick_scenarios.py \
  'prefill_q256_k16384_hd256_*' 'prefill_q333_k4097_hd256_full_bf16' \
  'prefill_q256_k16384_hd128_full_bf16' 'prefill_q512_k16384_hd192_causal_bf16') || exit 1
export FA_TIMELINE
export FA_TIMELINE_ARGS="${FA_TIMELINE_ARGS:---samples 20 --pad-us 1000}"
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
