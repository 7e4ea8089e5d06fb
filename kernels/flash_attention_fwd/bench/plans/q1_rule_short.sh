#!/usr/bin/env bash
# One device call (about 170 s of wall time; no carry needed): q1_rule.sh
# cut to what fits a session's last 200 s of device time: def, lr11 and
# q1k (see q1_rule.sh) on the head_dim 128 rows they move most (the
# non-causal grid, GQA/MQA and heads1, ragged bf16, causal grid bf16,
# causal prefill) and qlong.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q1_rule_short.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-150}"
run_plan "def=$cu;lr11=$cu -DKSEEK_FA_LAZY_RESCALE_LOG2=11;q1k=$cu -DKSEEK_FA_LAZY_RESCALE_LOG2=11 -DKSEEK_FA_HD128_FULL_Q1_FROM=1024" \
  'grid_hd128_full_*' 'gqa*hd128_full*' 'mqa_hd128_full*' 'heads1_*hd128*' 'ragged_*hd128*bf16' \
  'grid_hd128_causal_*bf16' 'prefill_*hd128_causal*' 'qlong_*hd128*'
