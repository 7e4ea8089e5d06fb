#!/usr/bin/env bash
# One device call (about 130 s): the default KSEEK_FA_PDL=11 (the combine
# a programmatic dependent behind every kernel but D = 256's) beside no
# programmatic launch at all (v3l's launch), on the prefill scenarios
# (split keys in the WGMMA kernel; pdl.sh measured prefill_q256_k16384_hd256
# 4-5% slower with it at 256) and the long decode ones.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pdl_dims.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-90}"
run_plan "v3l=$cu -DKSEEK_FA_PDL=0;pdl11=$cu" 'prefill_*' 'decode_b1_*' 'decode_b4_*'
