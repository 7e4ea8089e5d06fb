#!/usr/bin/env bash
# One device call (about 250 s of wall time; no carry needed): head_dim
# 256's 80-key tiles against 64-key ones (NOTES.md v4c). 512 keys take 7
# tiles of 80 (560 keys computed, 9% more), and under causal masking each
# 128-row item's keys round up past its diagonal (12.5% more at s512), so
# 64-key tiles were predicted to win on the short rows. The builds:
#   def   the default (80-key tiles at head_dim 193-256; one 64-key tile
#         where seqlen_k <= 64, since v4c)
#   n64   64-key tiles at every head_dim 256 shape (KSEEK_FA_HD256_BLOCK_N=64)
# on the 56 head_dim 256 scenarios with whole items (grid, GQA/MQA,
# ragged, qlong, many-short, heads1), beside cuDNN.
# The run of bench/results/hopper_after_v4b_variants_h100.txt (v4b, before
# v4c) had a third build, 64-key tiles only where 80-key ones computed at
# least 5% more keys (a switch written for that run and removed with v4c;
# NOTES.md v4c says what it did), and kseek eval of that build in the
# sandbox; both lost 13% at s512.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/hd256_fit64.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
run_plan "def=$cu;n64=$cu -DKSEEK_FA_HD256_BLOCK_N=64" 'grid_hd256_*' 'gqa*hd256*' 'mqa_hd256*' \
  'ragged_*hd256*' 'qlong_*hd256*' 'many_short_*hd256*' 'heads1_*hd256*'
