#!/usr/bin/env bash
# Installs, builds and runs every test. GPU tests report "skipped: no CUDA
# device" on machines without one (the reasons are printed after the run);
# scripts/device/gpu_suite.sh runs them on a GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
status=0
# Two tests per core: most wait on the processes they start; those that
# keep a core busy take two slots (tests/CMakeLists.txt, CORES).
ctest --test-dir build --output-on-failure -j "${KSEEK_TEST_JOBS:-$((2 * $(nproc)))}" "$@" || status=$?
log=build/Testing/Temporary/LastTest.log
if [[ -f $log ]] && grep -q "skipped: " "$log"; then
  echo "Skipped tests and why:"
  grep -o "skipped: .*" "$log" | sort | uniq -c
fi
exit $status
