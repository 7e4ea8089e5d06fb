#!/usr/bin/env bash
# One device call (about 170 s from cold; carry .anchors): whether the
# default runs at a lower SM clock than FA3 for the same work. In every
# Nsight Compute pair so far ours ran 0.6-1.9% below FA3's clock (v3n's
# call 1: 1.65 / 1.66 and 1.62 / 1.65 GHz; the session after: 1.61 / 1.64
# and 1.59 / 1.62), about half the gap at grid_hd128_full_s1024. power.py
# runs each backend back to back under nvidia-smi:
#   def   the default (two Q buffers and 128-key tiles at s1024)
#   one   FA3's configuration in ours (one Q buffer, 176-key tiles:
#         KSEEK_FA_HD128_FULL_Q2_UPTO=0)
# beside FA3 and cuDNN, on the two grid shapes furthest under FA3 and
# head_dim 128 s16384 (at parity) for reference.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/power.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
export FA_VARIANTS="def=$cu;one=$cu -DKSEEK_FA_HD128_FULL_Q2_UPTO=0" FA_SCENARIOS=none
export FA_POWER=grid_hd128_full_s1024_bf16,grid_hd256_full_s512_bf16,grid_hd128_full_s16384_bf16
exec bash kernels/flash_attention_fwd/bench/run_variants.sh
