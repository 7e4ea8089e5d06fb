#!/usr/bin/env bash
# One device call (about 250 s from cold): the split loop (the tiles that
# need no mask in a loop of their own, which keeps ptxas's wait for P V
# after the softmax) at head_dim 64 causal and 256 for shorter items.
# Since v3h it runs there only for items of at least 32 key tiles
# (KSEEK_FA_SPLIT_MASK_MIN_TILES), measured before the three consumers,
# V after S and the lazy rescale; after v3t's profile of
# grid_hd64_causal_s2048 (at most 16 tiles an item, 0.98x FA3) the
# consumers' largest wgmma wait is a WARPGROUP.DEPBAR.LE gsb0, 0x0 (2.4%
# of the samples) right before row maxima: perhaps the P V wait that the
# split loop keeps after the softmax (the profile's execution counts did
# not come back, so this is not confirmed). On the 208 WGMMA scenarios:
#   def      the default
#   m16      KSEEK_FA_SPLIT_MASK_MIN_TILES=16
#   m8       KSEEK_FA_SPLIT_MASK_MIN_TILES=8
#   m0       KSEEK_FA_SPLIT_MASK_MIN_TILES=0 (every item)
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/split_min_tiles.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
m="$cu -DKSEEK_FA_SPLIT_MASK_MIN_TILES"
run_plan "def=$cu;m16=$m=16;m8=$m=8;m0=$m=0;def2=$cu" '[!dm]*'
