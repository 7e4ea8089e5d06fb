#!/usr/bin/env bash
# One device call (about 220 s of wall time; no carry needed). q2_lower2.sh
# (H100): two Q buffers only up to 2048 keys (q2k) +3.2% on the grid's
# head_dim 128 non-causal s4096 rows (176-key tiles pad 4096 keys 1.5% more
# than 160-key ones) but -3.8% on ragged_s3001 (4.2% more); the softmax's
# references kept until P passes 2^11 (lr11) +0.4% over 42 rows (qlong
# +1.9%, prefill +0.6%). So, beside the default:
#   lr11  KSEEK_FA_LAZY_RESCALE_LOG2=11
#   lr14  KSEEK_FA_LAZY_RESCALE_LOG2=14 (P still fits f16: at most 2^14)
#   q1k   lr11, and past 1024 keys the 176-key tiles with one Q buffer
#         where they pad at most 2% more than the 160-key tiles
#         (KSEEK_FA_HD128_FULL_Q1_FROM=1024: s4096 yes, s3001 no; s2048:
#         12 tiles of 176 keys pad 1.5% more than 13 of 160; s1024: 6
#         tiles, 6% fewer keys than 7); rows past 2048 keys tell n = 2048
# on the rows those move: head_dim 128 non-causal (grid, GQA, heads1), ragged,
# decode with 4096 keys, every causal grid row, head_dim 256 non-causal,
# causal prefill, qlong and causal GQA.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q1_rule.sh
# or, built here first (about 3 minutes on 2 cores) and .prebuilt carried,
# about 130 s on the GPU:
#   FA_BUILD_ONLY=.prebuilt bash kernels/flash_attention_fwd/bench/plans/q1_rule.sh
#   FA_PREBUILT=.prebuilt bash kernels/flash_attention_fwd/bench/plans/q1_rule.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-420}"
run_plan "def=$cu;lr11=$cu -DKSEEK_FA_LAZY_RESCALE_LOG2=11;lr14=$cu -DKSEEK_FA_LAZY_RESCALE_LOG2=14;q1k=$cu -DKSEEK_FA_LAZY_RESCALE_LOG2=11 -DKSEEK_FA_HD128_FULL_Q1_FROM=1024" \
  'grid_hd128_full_*' 'gqa*hd128_full*' 'mqa_hd128_full*' 'heads1_*hd128*' 'ragged_*hd128*bf16' 'decode_b16_k4096_*hd128*' \
  'grid_*_causal_*bf16' 'grid_hd256_full_*bf16' 'prefill_*causal*' 'qlong_*' 'gqa*causal*'
