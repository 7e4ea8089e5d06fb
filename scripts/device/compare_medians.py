#!/usr/bin/env python3
"""Compares the candidate medians of two `kseek eval --json` verdicts of the
same kernel, scenario by scenario: the timing repeatability of the harness."""
import json
import sys


def main():
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    rows = {s["name"]: s for s in a["scenarios"]}
    worst = 0.0
    print(f"{'scenario':34} {'median 1':>12} {'median 2':>12} {'diff':>8}")
    for s in b["scenarios"]:
        r = rows.get(s["name"])
        if not r or not r.get("time_ms") or not s.get("time_ms"):
            print(f"{s['name']:34} {'-':>12} {'-':>12}   (not timed: {s['status']})")
            continue
        m1, m2 = r["time_ms"]["median"], s["time_ms"]["median"]
        d = abs(m2 - m1) / m1
        worst = max(worst, d)
        print(f"{s['name']:34} {m1:12.4f} {m2:12.4f} {100 * d:7.2f}%")
    print(f"largest per-scenario difference of medians: {100 * worst:.2f}%")


if __name__ == "__main__":
    main()
