#!/usr/bin/env python3
"""Several anchor runs compared: how much of a change is cuDNN's.

cuDNN's speed through SDPA moves between processes (30-60% on kernels
under 0.2 ms), so one run's candidate/cuDNN geomean says little about a
small change. Given anchor.py outputs (its --out JSON, or its printed
table as kept in results/*.txt), this prints per run: its own geomeans
(FA3 grid and all scenarios cuDNN ran), and the candidate's and cuDNN's
speed against the first run's; then the candidate of every run, and the
median of the runs given with --current, against the fastest cuDNN of all
runs per scenario (a bar cuDNN sets in its best process), with the
lowest scenarios and the count below 0.8x. Only scenarios present in
every run count.

  python3 compare_runs.py C=results/hopper_v3b_h200.txt \\
      D=results/hopper_v3c_h200.txt a1=/tmp/a1/anchor.json --current D,a1
"""

import argparse
import json
import math
import statistics
import sys


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def number(text):
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) and x > 0 else None


def load(path):
    """{scenario: (candidate TFLOP/s, cuDNN TFLOP/s or None)}."""
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        rows = json.loads(text)["scenarios"]
        return {r["name"]: (r.get("candidate_tflops"), r.get("cudnn_tflops"))
                for r in rows if r.get("candidate_tflops")}
    # anchor.py's table: "scenario cand cuDNN FA2 ...", up to the geomean
    # line after it (a harness comparison in ms may follow). A results file
    # may open with the run's summary (its geomeans, the lowest scenarios'
    # "scenario cand best ..." table) before the anchor table.
    out, in_table = {}, False
    for line in text.splitlines():
        if line.startswith("scenario "):
            in_table = line.split()[1:3] == ["cand", "cuDNN"] and not out
            continue
        if line.startswith("geomean") and out:
            break
        words = line.split()
        if in_table and len(words) >= 3 and number(words[1]):
            out[words[0]] = (number(words[1]), number(words[2]))
    if not out:
        raise SystemExit(f"compare_runs.py: no anchor table in {path}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="NAME=PATH (anchor.json or an "
                    "anchor.py table); the first is the reference")
    ap.add_argument("--current", help="comma list of runs of the kernel as "
                    "it is now (default: the last run)")
    ap.add_argument("--lowest", type=int, default=3)
    args = ap.parse_args()

    runs = {}
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"compare_runs.py: want NAME=PATH, got {spec!r}")
        runs[name] = load(path)
    current = (args.current.split(",") if args.current else [list(runs)[-1]])
    for c in current:
        if c not in runs:
            raise SystemExit(f"compare_runs.py: --current {c}: no such run")
    first = list(runs)[0]
    common = [n for n in runs[first]
              if all(n in r and r[n][1] for r in runs.values())]
    sets = {"grid": [n for n in common if n.startswith("grid_")],
            "all": common}
    print(f"{len(common)} scenarios in every run with a cuDNN time "
          f"({len(sets['grid'])} of the FA3 grid)")

    print(f"\n{'run':8s} {'set':5s} {'cand/cuDNN':>10s} "
          f"{'cand/' + first:>10s} {'cuDNN/' + first:>11s}")
    for name, r in runs.items():
        for label, names in sets.items():
            own = geomean([r[n][0] / r[n][1] for n in names])
            cand = geomean([r[n][0] / runs[first][n][0] for n in names])
            cudnn = geomean([r[n][1] / runs[first][n][1] for n in names])
            print(f"{name:8s} {label:5s} {own:10.3f} {cand:10.3f} {cudnn:11.3f}")

    best = {n: max(r[n][1] for r in runs.values()) for n in common}
    print("\nagainst the fastest cuDNN of all runs, per scenario:")
    rows = [(name, {n: r[n][0] for n in common}) for name, r in runs.items()]
    rows.append((f"median({','.join(current)})",
                 {n: statistics.median(runs[c][n][0] for c in current)
                  for n in common}))
    for name, cand in rows:
        for label, names in sets.items():
            ratios = sorted((cand[n] / best[n], n) for n in names)
            low = ", ".join(f"{n} {x:.3f}" for x, n in ratios[:args.lowest])
            below = sum(1 for x, _ in ratios if x < 0.8)
            print(f"{name:14s} {label:5s} "
                  f"{geomean([x for x, _ in ratios]):6.3f}  below 0.8x: "
                  f"{below}  lowest: {low}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
