#!/usr/bin/env bash
# The main job: install, build, start the evaluation service on this
# machine (kseek up: a coordinator, a host worker and a worker per local
# sm_90a / sm_100a GPU), evaluate the shipped kernels of every task through
# it on every target it serves, print the tables, and stop the service.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
kseek=build/bin/kseek
# Stop the service however the job ends.
trap '"$kseek" down >/dev/null 2>&1 || true' EXIT
"$kseek" up --detach >&2
"$kseek" eval-shipped --kernels kernels "$@"
