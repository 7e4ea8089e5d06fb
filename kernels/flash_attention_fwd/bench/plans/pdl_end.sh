#!/usr/bin/env bash
# One device call (about 250 s): after timeline_hd256.sh showed the
# dependent combine behind the D = 256 kernel ending 11-12 us after the
# attention grid (without it 8 us; FA3's 6 us), KSEEK_FA_PDL_END: the
# combine a programmatic dependent that the attention kernel never lets
# launch early (it launches as the last block exits), on the split-key
# shapes, with the timeline of the four shapes of timeline_hd256.sh:
#   def      the default
#   end4     KSEEK_FA_PDL_END=4 (head_dim 256)
#   end14    KSEEK_FA_PDL_END=14 (128, 256 and the D = 192 kernel)
#   end15    KSEEK_FA_PDL_END=15 (every WGMMA kernel)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pdl_end.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
timeline_of 'prefill_q256_k16384_hd256_*' 'prefill_q333_k4097_hd256_full_bf16' \
  'prefill_q256_k16384_hd128_full_bf16' 'prefill_q512_k16384_hd192_causal_bf16'
run_plan "def=$cu;end4=$cu -DKSEEK_FA_PDL_END=4;end14=$cu -DKSEEK_FA_PDL_END=14;end15=$cu -DKSEEK_FA_PDL_END=15" \
  'prefill_*' 'qlong_*' 'decode_q4_*' 'heads1_*' 'long_*'
