#!/usr/bin/env python3
"""Scenario names of task.json that match any of the given globs.

    python3 kernels/flash_attention_fwd/bench/pick_scenarios.py 'grid_*' 'qlong_*hd128*'

prints the matching names comma-separated, in task.json's order (each
once), for FA_SCENARIOS of run_variants.sh and --scenarios of variants.py,
placement.py and anchor.py. A glob that matches no scenario is an error
(exit 2, naming it): a typo must not shrink a device call silently.
"""
import fnmatch
import json
import os
import sys

TASK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "task.json")


def main(globs):
    if not globs:
        sys.exit("usage: pick_scenarios.py GLOB [GLOB ...]")
    with open(TASK) as f:
        names = [s["name"] for s in json.load(f)["scenarios"]]
    unmatched = [g for g in globs if not fnmatch.filter(names, g)]
    if unmatched:
        print("pick_scenarios.py: no scenario of task.json matches "
              + ", ".join(unmatched), file=sys.stderr)
        sys.exit(2)
    print(",".join(n for n in names if any(fnmatch.fnmatchcase(n, g) for g in globs)))


if __name__ == "__main__":
    main(sys.argv[1:])
