#!/usr/bin/env bash
# One device call (about 380 s): the v3k candidates for an item's ends,
# each build adding one to the one before (NOTES.md v3k, "Next (after
# v3k)"), beside the default build:
#   tma       O by TMA stores from 2 KB per consumer warp (head_dim 64 and
#             128 with two consumers, where it fits: 176-key tiles, short
#             tiles, two Q buffers; KSEEK_FA_TMA_STORES=3)
#   tmafe     and the epilogue's reciprocal and log2 on the MUFU unit
#   tmafefl   and the item located by multiplications (KSEEK_FA_FAST_LOCATE)
#   q2tmafefl and 128-key tiles with 2 Q buffers at head_dim 128 where the
#             keys are few (non-causal seqlen_k <= 2048, causal <= 512)
#   c2tmafefl tmafefl with 2 K/V stages on the 128-key, one-Q-buffer kernel
#             (causal head_dim 128), which makes room for the TMA stores
# on the 72 grid scenarios, qlong, the GQA/MQA and many-short head_dim 64
# and 128 ones, and the dims shapes at head_dim 80 and 96.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/epilogue.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
tma="-DKSEEK_FA_TMA_STORES=3"
fe="-DKSEEK_FA_FAST_EPILOGUE=1"
q2="-DKSEEK_FA_HD128_FULL_Q2_UPTO=2048 -DKSEEK_FA_HD128_CAUSAL_Q2_UPTO=512"
fl="-DKSEEK_FA_FAST_LOCATE=3"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-560}"
run_plan "a=$cu;tma=$cu $tma;tmafe=$cu $tma $fe;tmafefl=$cu $tma $fe $fl;q2tmafefl=$cu $q2 $tma $fe $fl;c2tmafefl=$cu -DKSEEK_FA_HD128_STAGES=2 $tma $fe $fl" \
  'grid_*' 'qlong_*hd128*' 'gqa*hd64*' 'gqa*hd128*' 'mqa*hd64*' 'mqa*hd128*' 'many_short_*hd64*' 'many_short_*hd128*' 'dims_hd80*' 'dims_hd96*'
