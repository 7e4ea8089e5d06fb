#!/usr/bin/env bash
# Installs, builds and runs every test. GPU tests report "skipped: no CUDA
# device" on machines without one; scripts/device/gpu_suite.sh runs them on a
# GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j "${KSEEK_TEST_JOBS:-2}" "$@"
