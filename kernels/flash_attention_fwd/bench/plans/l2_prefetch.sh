#!/usr/bin/env bash
# One device call (about 300 s of wall time; no carry needed): the WGMMA
# producers' L2 prefetch (KSEEK_FA_L2_PREFETCH, written after v4c, not yet
# timed). At short sequences, flushed, the K/V tiles come from HBM; the
# ring holds two stages at head_dim 128 and 256, so a load waits for a
# stage and then for memory. Asking L2 for the tiles ahead of their loads
# (cp.async.bulk.prefetch.tensor, one per 64-column box) starts the HBM
# reads early. 64-key tiles at head_dim 256 lost 13% at s512 against
# 80-key ones while computing 9% fewer keys (NOTES.md v4c): fewer bytes
# in flight per stage cost more than the work saved, which points here.
# The builds, every head dim (bits 15):
#   v4c    the default (no prefetch)
#   pf2    two tiles ahead (the first two as an item starts)
#   pf4    four tiles ahead
#   pf8    eight tiles ahead
#   v4c2   the default again (the spread)
# on the grid's s512-s2048 rows, the long rows at s16384 (where L2
# sections already keep K/V) and a few ragged, GQA and prefill shapes.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/l2_prefetch.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
pf="$cu -DKSEEK_FA_L2_PREFETCH=15 -DKSEEK_FA_L2_PREFETCH_TILES"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-420}"
run_plan "v4c=$cu;pf2=$pf=2;pf4=$pf=4;pf8=$pf=8;v4c2=$cu" \
  'grid_*_s512_*' 'grid_*_s1024_*' 'grid_*_s2048_bf16' 'grid_*_s16384_bf16' \
  'ragged_s1000_*' 'gqa8_hd128_*_s2048_bf16' 'prefill_q2048_k16384_*'
