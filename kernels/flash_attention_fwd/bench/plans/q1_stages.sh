#!/usr/bin/env bash
# One device call (about 300 s from cold): head_dim 128 without causal
# masking up to 4096 keys on one Q buffer with three 128-key K/V stages
# and O staged in the last V tile, in clusters (KSEEK_FA_HD128_FULL_Q1_UPTO
# with KSEEK_FA_HD128_STAGES=3 and KSEEK_FA_TMA_IN_V bit 2), in place of
# the two-Q-buffer kernel's second Q buffer: more K/V in flight per item
# (FA3 holds 2 x 176 keys), on every head_dim 128 scenario but decode and
# many-short:
#   def      the default
#   q1s3v    KSEEK_FA_HD128_FULL_Q1_UPTO=4096, KSEEK_FA_HD128_STAGES=3,
#            KSEEK_FA_TMA_IN_V=14
#   q1s3v2k  the same up to 2048 keys (s4096 on the two-Q-buffer kernel)
#   s3v      three stages and O in V only (the one-Q-buffer kernel's other
#            shapes: causal masking, short sequences)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/q1_stages.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
s3v="-DKSEEK_FA_HD128_STAGES=3 -DKSEEK_FA_TMA_IN_V=14"
run_plan "def=$cu;q1s3v=$cu -DKSEEK_FA_HD128_FULL_Q1_UPTO=4096 $s3v;q1s3v2k=$cu -DKSEEK_FA_HD128_FULL_Q1_UPTO=2048 $s3v;s3v=$cu $s3v" \
  '[!dm]*hd128*'
