#!/usr/bin/env bash
# One device call (about 200 s): NOTES.md "Next (after v3k's
# measurement)" items 2 and 3, beside the default build:
#   v3k    the default build
#   notma  without the TMA stores (the fast epilogue and locate kept):
#          whether the stores pay beyond few keys
#   fl256  the items located by multiplications at head_dim 256 too (not
#          on the D = 192 kernel, which spills with them; at 256 the
#          split-loop instance then no longer spills its 24 bytes)
# on the grid, qlong hd128, GQA/MQA hd64/hd128, many-short, long (which the
# final run read at 1.026x FA3 against v3j's 1.053x, in another process)
# and the head_dim 80/96 dims, GQA, prefill and ragged shapes.
#   v3j    v3j's file, where .variants/hopper_v3j.cu is there (before the
#          call: mkdir -p .variants && git show ef7c6dd:kernels/flash_attention_fwd/hopper.cu > .variants/hopper_v3j.cu,
#          and carry .variants)
# Run from the repository root:
#   bash kernels/flash_attention_fwd/bench/plans/after_v3k.sh
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/run_plan.sh"
variants="v3k=$cu;notma=$cu -DKSEEK_FA_TMA_STORES=0;fl256=$cu -DKSEEK_FA_FAST_LOCATE=7"
[[ -f "$(dirname "${BASH_SOURCE[0]}")/../../../../.variants/hopper_v3j.cu" ]] &&
  variants="$variants;v3j=.variants/hopper_v3j.cu"
export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-500}"
run_plan "$variants" \
  'grid_*' 'qlong_*hd128*' 'gqa*hd64*' 'gqa*hd128*' 'mqa*hd64*' 'mqa*hd128*' 'many_short_*' 'long_*' 'dims_hd80*' 'dims_hd96*' 'gqa*hd80*' 'gqa*hd96*' 'prefill_*hd80*' 'prefill_*hd96*' 'ragged_*hd96*'
