#!/usr/bin/env bash
# One device call (about 110 s): the final run of v3l read head_dim 128
# non-causal at 0.96x FA3 from s1024 to s4096 (two Q buffers on 128-key
# tiles) and at 0.99-1.00x from s8192 (176-key tiles); so the rule's other
# side, beside the default:
#   v3l    two Q buffers up to 4096 keys (non-causal)
#   q2k    up to 2048 (176-key tiles at 4096 where they pad by at most 5%)
#   q1k    up to 1024
#   q0     none (176-key tiles wherever WideKeyTiles takes them)
# on the non-causal head_dim 128 grid, GQA/MQA, ragged, heads1 and qlong
# scenarios (and a few causal ones as a check that nothing else moves).
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q2_lower.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "v3l=$cu;q2k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=2048;q1k=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=1024;q0=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=0" \
  'grid_hd128_full_*' 'gqa*hd128_full*' 'mqa_hd128_full*' 'ragged_*hd128_full*' 'heads1_*hd128*' 'qlong_*hd128*' 'grid_hd128_causal_s1024*' 'dims_hd96_full*'
