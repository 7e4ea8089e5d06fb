#!/usr/bin/env bash
# CPU emulation of blackwell.cu against an fp64 reference (no GPU needed).
#
#   bash tests/blackwell_emu/run.sh [FILTER] [--shard=I/N] [--plant=NAME] [-DNAME=VALUE ...]
#
# Builds blackwell.cu with emulated PTX (tensor memory, tcgen05.mma with
# its descriptors, tcgen05.commit, tcgen05.ld / st / wait, TMA 4-D boxes
# with zero fill, mbarriers with transaction bytes, setmaxnreg) and runs
# each shape of emu_main.cc twice: asynchronous work completing at issue
# ("eager") and only when it must ("lazy"). FILTER keeps the shapes whose
# name contains it, --shard=I/N the I-th of every N of those; -D flags set
# blackwell.cu's switches and --plant one of transform.py's planted bugs.
# BLACKWELL_CU names another kernel file. The build makes the
# configurations the tests run as build/bin/blackwell_emu_*
# (tests/blackwell_emu/CMakeLists.txt); this script is for any other. Exit
# status 0 when all pass. The emulation is not the hardware.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${EMU_BUILD_DIR:-$(mktemp -d)}"
transform_args=()
run_args=()
for arg in "$@"; do
  case $arg in
    -D*|--plant=*) transform_args+=("$arg") ;;
    *) run_args+=("$arg") ;;
  esac
done
python3 "$here/transform.py" "${BLACKWELL_CU:-$root/kernels/flash_attention_fwd/blackwell.cu}" \
  "$here/emu_tcgen05.inc" "$build/blackwell_emu.inc" "${transform_args[@]}"
# -U_FORTIFY_SOURCE: the fibers switch stacks with _longjmp (emu.h).
g++ -std=c++17 -O2 -w -Wno-psabi -U_FORTIFY_SOURCE -I "$here" -I "$root/tests/hopper_emu" -I "$build" \
  -I "$root/harness/include" -o "$build/emu_test" "$here/emu_main.cc"
"$build/emu_test" "${run_args[@]}"
