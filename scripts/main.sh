#!/usr/bin/env bash
# The main job: install, build, then evaluate the shipped kernels of every
# task on every target this machine has (host always; sm_90a / sm_100a when
# a matching GPU is present) and print the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec build/bin/kseek eval-shipped --kernels kernels "$@"
