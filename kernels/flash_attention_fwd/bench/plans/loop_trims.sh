#!/usr/bin/env bash
# One device call (about 230 s from cold): fewer instructions per key tile
# in the WGMMA consumers' loop, where ours runs 432 instructions per warp
# and 128-key tile at head_dim 64 against FA3's 421 per 128 keys
# (sass_loops.sh): the ring's stage and phase computed unsigned (a signed
# division by the stage count is five uniform instructions, twice per
# tile) and no test for a row without keys in the tiles that need no
# mask (an FSETP and an FSEL per row). On the 208 WGMMA scenarios of the
# grid, GQA, ragged, prefill, qlong, long and heads1 classes:
#   def      the default (v3s)
#   ru       KSEEK_FA_RING_UNSIGNED=1
#   runi     and KSEEK_FA_UNMASKED_NO_INF_TEST=1
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/loop_trims.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
ru="$cu -DKSEEK_FA_RING_UNSIGNED=1"
run_plan "def=$cu;ru=$ru;runi=$ru -DKSEEK_FA_UNMASKED_NO_INF_TEST=1;def2=$cu" '[!dm]*'
