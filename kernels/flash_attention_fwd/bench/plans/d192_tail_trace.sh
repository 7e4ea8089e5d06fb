#!/usr/bin/env bash
# One device call (about 200 s of wall time; no carry needed): why D = 192's
# kernel lost 3.5-5% with the tail's shares (KSEEK_FA_TAIL_SPLIT bit 8)
# while head_dim 128 and 256 gained (NOTES.md "v4e", call 3). The item
# trace (KSEEK_FA_TRACE, bench/item_trace.py) of D = 192's rows with and
# without the shares, beside head_dim 256's s16384 with them (a row they
# help): per round the consumers' wait for Q, the loop per key tile and
# the epilogue, so that the shares' segments (a round each) show whether
# their first segments' partial stores, the merge, or the loop itself
# (the instance's registers) costs the time.
#   tr6   -DKSEEK_FA_TRACE=1 (v4f's shares: head_dim 128 and 256)
#   tr14  -DKSEEK_FA_TRACE=1 -DKSEEK_FA_TAIL_SPLIT=14 (D = 192's too)
#   def   the default (v4f)
#   s14   -DKSEEK_FA_TAIL_SPLIT=14. Prediction, from call 3 of v4e:
#         dims_hd192 s4096 / s16384 3.5-5% slower than def, the other
#         rows unchanged; the traces tell the cause.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/d192_tail_trace.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
item_trace_of tr6,tr14 \
  dims_hd192_full_s16384_bf16,dims_hd192_full_s4096_bf16,gqa4_hd192_full_s2048_bf16,grid_hd256_full_s16384_bf16 \
  "--bins 10"
run_plan "tr6=$cu -DKSEEK_FA_TRACE=1;tr14=$cu -DKSEEK_FA_TRACE=1 -DKSEEK_FA_TAIL_SPLIT=14;def=$cu;s14=$cu -DKSEEK_FA_TAIL_SPLIT=14" \
  'dims_hd192_full_s*' 'gqa4_hd192_full_s2048_bf16' 'ragged_s3001_hd192_full_bf16' \
  'grid_hd256_full_s16384_bf16' 'grid_hd256_full_s4096_bf16'
