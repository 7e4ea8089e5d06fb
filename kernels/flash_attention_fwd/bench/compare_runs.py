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

With --moved N, the last run against the first row by row: the N
scenarios where the candidate moved most against the references
(the candidate's ratio over the geomean of cuDNN's and FA3's, where the
tables have them), both ways, and every scenario where a reference alone
moved by 1.5x or more (an outlier of that backend, which moves a class's
geomean by itself). A candidate's own change shows as rows where it moved
and the references did not; a faster or slower machine moves all three.

  python3 compare_runs.py C=results/hopper_v3b_h200.txt \\
      D=results/hopper_v3c_h200.txt a1=/tmp/a1/anchor.json --current D,a1
  python3 compare_runs.py v4h=results/hopper_v4h_h100.txt \\
      v4i=results/hopper_v4i_h100.txt --moved 10
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


def load(path, fa3=None):
    """{scenario: (candidate TFLOP/s, cuDNN TFLOP/s or None)}; with a dict
    as fa3, also {scenario: FA3 TFLOP/s} into it where the run has FA3."""
    fa3 = {} if fa3 is None else fa3
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        rows = json.loads(text)["scenarios"]
        for r in rows:
            if r.get("candidate_tflops") and number(str(r.get("fa3_tflops"))):
                fa3[r["name"]] = r["fa3_tflops"]
        return {r["name"]: (r.get("candidate_tflops"), r.get("cudnn_tflops"))
                for r in rows if r.get("candidate_tflops")}
    # anchor.py's table: "scenario cand cuDNN FA2 ...", up to the geomean
    # line after it (a harness comparison in ms may follow). A results file
    # may open with the run's summary (its geomeans, the lowest scenarios'
    # "scenario cand best ..." table) before the anchor table.
    out, in_table, fa3_col = {}, False, None
    for line in text.splitlines():
        if line.startswith("scenario "):
            header = line.split()
            in_table = header[1:3] == ["cand", "cuDNN"] and not out
            if in_table:
                fa3_col = header.index("FA3") if "FA3" in header else None
            continue
        if line.startswith("geomean") and out:
            break
        words = line.split()
        if in_table and len(words) >= 3 and number(words[1]):
            out[words[0]] = (number(words[1]), number(words[2]))
            if fa3_col is not None and len(words) > fa3_col and number(words[fa3_col]):
                fa3[words[0]] = number(words[fa3_col])
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
    ap.add_argument("--moved", type=int, metavar="N", help="the last run "
                    "against the first row by row: the N scenarios where "
                    "the candidate moved most against cuDNN and FA3, each "
                    "way, and the references' outliers")
    args = ap.parse_args()
    if args.moved is not None and args.moved < 1:
        raise SystemExit("compare_runs.py: --moved wants a count of 1 or more")

    runs, fa3 = {}, {}
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"compare_runs.py: want NAME=PATH, got {spec!r}")
        if name in runs:
            raise SystemExit(f"compare_runs.py: run name {name!r} given twice")
        fa3[name] = {}
        runs[name] = load(path, fa3[name])
    if args.moved is not None and len(runs) < 2:
        raise SystemExit("compare_runs.py: --moved wants two runs or more")
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
    if args.moved is not None:
        moved(runs, fa3, common, args.moved)
    return 0


def moved(runs, fa3, common, count):
    """The last run against the first, row by row (see the docstring)."""
    (old, r0), (new, r1) = list(runs.items())[0], list(runs.items())[-1]
    f0, f1 = fa3[old], fa3[new]
    rows = []
    for n in common:
        cand, cudnn = r1[n][0] / r0[n][0], r1[n][1] / r0[n][1]
        fa = f1[n] / f0[n] if n in f0 and n in f1 else None
        refs = geomean([cudnn, fa] if fa else [cudnn])
        rows.append((cand / refs, n, cand, cudnn, fa))
    with_fa3 = sum(1 for r in rows if r[4])
    print(f"\n{new} against {old}, row by row ({len(rows)} scenarios, "
          f"{with_fa3} with FA3 in both): the candidate's ratio over the "
          f"references' (geomean of cuDNN's and FA3's)")
    print(f"geomean: candidate {geomean([r[2] for r in rows]):.3f}, cuDNN "
          f"{geomean([r[3] for r in rows]):.3f}"
          + (f", FA3 {geomean([r[4] for r in rows if r[4]]):.3f}"
             if with_fa3 else ""))
    head = (f"{'scenario':50s} {'cand/refs':>9s} {'cand':>7s} {'cuDNN':>7s} "
            f"{'FA3':>7s}")

    def show(title, picked):
        print(f"\n{title}\n{head}")
        for x, n, cand, cudnn, fa in picked:
            fa_text = f"{fa:7.3f}" if fa else f"{'-':>7s}"
            print(f"{n:50s} {x:9.3f} {cand:7.3f} {cudnn:7.3f} {fa_text}")

    rows.sort()
    show(f"the candidate lower than the references' move, lowest {count}:",
         [r for r in rows[:count] if r[0] < 1])
    show(f"the candidate higher, highest {count}:",
         [r for r in reversed(rows[-count:]) if r[0] > 1])
    outliers = [r for r in rows
                if max(r[3], 1 / r[3]) >= 1.5
                or (r[4] and max(r[4], 1 / r[4]) >= 1.5)]
    show("a reference alone moved by 1.5x or more (its outlier):"
         if outliers else "no reference moved by 1.5x or more on any row",
         outliers)


if __name__ == "__main__":
    sys.exit(main())
