#!/usr/bin/env bash
# One device call (about 200 s): KSEEK_FA_CHAIN (the next item's first S
# issued with an item's last P V, where two Q buffers and two consumers
# are) beside the default build: alone (head_dim 64 with two consumers,
# 128 with short key tiles), and at head_dim 128 with 128-key tiles and two
# Q buffers (the only way the chain reaches head_dim 128 without causal
# masking, whose 176-key tiles leave room for one Q buffer), with and
# without the chain; on the 72 grid scenarios, many-short and the GQA/MQA
# head_dim 64 and 128 ones. NOTES.md v3j, "Device plan".
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/chain.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
q2="-DKSEEK_FA_HD128_FULL_BLOCK_N=128 -DKSEEK_FA_HD128_Q_BUFFERS=2"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-400}"
run_plan "a=$cu;chain=$cu -DKSEEK_FA_CHAIN=7;q2=$cu $q2;q2chain=$cu $q2 -DKSEEK_FA_CHAIN=7" \
  'grid_*' 'many_short_*' 'gqa*hd64*' 'gqa*hd128*' 'mqa*hd64*' 'mqa*hd128*'
