#!/usr/bin/env bash
# One device call (about 220 s): the split loop's fewest key tiles per
# item per head dim. split_min_tiles.sh (after v3u, one count for head_dim
# 64 causal, 256 and the D = 192 kernel) found: 16 or 8 gain at 64
# causal (s1024 +2%, s2048 +4.4%; 8 for s1024's 8 tiles), and at the
# D = 192 kernel (gqa4 and ragged hd160/192 +1.5-3.5%), lose at 256
# (s1024 -3% at 8, s2048 -1% at 16). Now a count each
# (KSEEK_FA_HD64_SPLIT_MASK_MIN_TILES, KSEEK_FA_HD192_SPLIT_MASK_MIN_TILES;
# head_dim 256 keeps KSEEK_FA_SPLIT_MASK_MIN_TILES=32), on the WGMMA
# scenarios at head_dim 64, 136-192 (dims_ included) and 256:
#   def      the default
#   a        64: 8, 192: 0
#   b        64: 8, 192: 8
#   c        64: 16, 192: 16
#   def2     the default again
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/split_min_dims.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
m64="-DKSEEK_FA_HD64_SPLIT_MASK_MIN_TILES" m192="-DKSEEK_FA_HD192_SPLIT_MASK_MIN_TILES"
run_plan "def=$cu;a=$cu $m64=8 $m192=0;b=$cu $m64=8 $m192=8;c=$cu $m64=16 $m192=16;def2=$cu" \
  '[!dm]*hd64*' '[!dm]*hd1[4-9]?_*' 'dims_hd1[4-9]?_*' '[!dm]*hd256*'
