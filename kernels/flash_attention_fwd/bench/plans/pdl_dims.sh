#!/usr/bin/env bash
# One device call (about 200 s; the first of the session after v3m): the
# defaults chosen after v3m's final run, beside the builds they compose:
#   pdl0   no programmatic launch at all (v3l's plain combine launch)
#   def    the default KSEEK_FA_PDL=11 (the combine a programmatic
#          dependent behind every kernel but D = 256's; v3m's final run
#          had it behind those too, and pdl.sh measured
#          prefill_q256_k16384_hd256 4-5% slower with it there)
#   dr1t   and GQA decode groups of at most 16 rows on the decode
#          kernel's long splits from 2 splits of version 1
#          (KSEEK_FA_DECODE_GQA_MIN_SPLITS=2; v3m's decode_route.sh: the
#          six such shapes it moved +2-19%)
# on the prefill scenarios (split keys in the WGMMA kernel) and the decode
# ones.
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/pdl_dims.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-200}"
run_plan "pdl0=$cu -DKSEEK_FA_PDL=0;def=$cu;dr1t=$cu -DKSEEK_FA_DECODE_GQA_MIN_SPLITS=2" 'prefill_*' 'decode_*'
