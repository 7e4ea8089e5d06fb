#!/usr/bin/env bash
# One device call (about 120 s from cold; carry .anchors): the 32-row GQA
# decode groups at head_dim 128 (decode_q4_k16000_hd128_gqa8_causal, 0.903x
# FA3 in v3p) on the decode kernel with two row tiles per warp and its long
# splits, instead of version 1's 128-row blocks with two of eight warps
# holding rows; on the decode scenarios:
#   def     the default
#   t3m2    KSEEK_FA_DECODE_TWO_TILES=3 (64 and 128) with
#           KSEEK_FA_DECODE2_GQA_MIN_SPLITS=2 (the long splits from 2)
#   t3m2b2  the same, the long splits planned for two blocks per SM
#           (KSEEK_FA_DECODE2_LONG_BLOCKS=2)
#   m2b2    KSEEK_FA_DECODE2_GQA_MIN_SPLITS=2, two blocks per SM (the
#           two-tile groups at head_dim 64 only)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/decode_two_tiles_128.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
t3m2="$cu -DKSEEK_FA_DECODE_TWO_TILES=3 -DKSEEK_FA_DECODE2_GQA_MIN_SPLITS=2"
decode_plan "def=$cu;t3m2=$t3m2;t3m2b2=$t3m2 -DKSEEK_FA_DECODE2_LONG_BLOCKS=2;m2b2=$cu -DKSEEK_FA_DECODE2_GQA_MIN_SPLITS=2 -DKSEEK_FA_DECODE2_LONG_BLOCKS=2"
