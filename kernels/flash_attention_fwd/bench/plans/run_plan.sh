# Sourced by the plans. run_plan VARIANTS GLOB... times the builds of
# VARIANTS (bench/run_variants.sh's FA_VARIANTS) beside cuDNN on the
# scenarios that pick_scenarios.py takes for the globs, from the
# repository root, with the plans' sampling (FA_VARIANT_ARGS) and a
# timeout for variants.py (FA_VARIANTS_TIMEOUT) unless the caller set them.
# The kernel file, for the plans' FA_VARIANTS.
cu=kernels/flash_attention_fwd/hopper.cu
run_plan() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
  export FA_VARIANTS="$1"
  shift
  FA_SCENARIOS=$(python3 kernels/flash_attention_fwd/bench/pick_scenarios.py "$@") || exit 1
  export FA_SCENARIOS
  export FA_VARIANT_ARGS="${FA_VARIANT_ARGS:---samples 8 --budget-s 0.12}"
  export FA_VARIANTS_TIMEOUT="${FA_VARIANTS_TIMEOUT:-540}"
  exec bash kernels/flash_attention_fwd/bench/run_variants.sh
}

# run_profile VARIANTS NCU [FA3_SCENARIO]: Nsight Compute only (no timing
# table): bench/run_variants.sh's FA_NCU specs ("NAME SCENARIO [KERNEL]",
# ';'-separated) on the builds of VARIANTS, and FA3's forward kernel on
# FA3_SCENARIO where given (.anchors carried).
run_profile() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." || exit 1
  export FA_VARIANTS="$1" FA_NCU="$2" FA_SCENARIOS=none
  [[ -n ${3:-} ]] && export FA_NCU_FA3="$3"
  exec bash kernels/flash_attention_fwd/bench/run_variants.sh
}
