# Sourced by the device scripts (gpu_suite.sh, trust_run.sh, pool_cost.sh)
# from the repository root: the environment that runs the bundle in
# .device/ (scripts/device/make_bundle.sh): where the tests find the
# sources, binaries and headers, a fresh compile cache, the bundle's shared
# libraries, and nvcc.
export KSEEK_SOURCE_DIR=$PWD
export KSEEK_BIN_DIR=$PWD/.device/bin
export KSEEK_INCLUDE_DIR=$PWD/.device/include
KSEEK_CACHE_DIR=$(mktemp -d)
export KSEEK_CACHE_DIR
export LD_LIBRARY_PATH=$PWD/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH
