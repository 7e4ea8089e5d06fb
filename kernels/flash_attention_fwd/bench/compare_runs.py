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
every run count. --json prints the same figures as one JSON object.

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
import signal
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
    """{scenario: (candidate TFLOP/s, cuDNN TFLOP/s or None, FA3 TFLOP/s or
    None)}."""
    with open(path) as f:
        text = f.read()
    if path.endswith(".json"):
        rows = json.loads(text)["scenarios"]
        return {r["name"]: (r.get("candidate_tflops"), r.get("cudnn_tflops"),
                            number(str(r.get("fa3_tflops"))))
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
            fa3 = (number(words[fa3_col])
                   if fa3_col is not None and len(words) > fa3_col else None)
            out[words[0]] = (number(words[1]), number(words[2]), fa3)
    if not out:
        raise SystemExit(f"compare_runs.py: no anchor table in {path}")
    return out


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped to head
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
    ap.add_argument("--json", action="store_true", help="the same figures "
                    "as one JSON object on stdout, for scripts")
    args = ap.parse_args()
    if args.moved is not None and args.moved < 1:
        raise SystemExit("compare_runs.py: --moved wants a count of 1 or more")

    runs = {}
    for spec in args.runs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"compare_runs.py: want NAME=PATH, got {spec!r}")
        if name in runs:
            raise SystemExit(f"compare_runs.py: run name {name!r} given twice")
        runs[name] = load(path)
    if args.moved is not None and len(runs) < 2:
        raise SystemExit("compare_runs.py: --moved wants two runs or more")
    current = (args.current.split(",") if args.current else [list(runs)[-1]])
    for c in current:
        if c not in runs:
            raise SystemExit(f"compare_runs.py: --current {c}: no such run")
    result = compare(runs, current, args.lowest)
    if args.moved is not None:
        result["moved"] = moved(runs, result["common"], args.moved)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        render(result)
    return 0


def compare(runs, current, lowest):
    """Each run's geomeans against the first run and against the fastest
    cuDNN of all runs per scenario, as a dict (render prints it)."""
    first = list(runs)[0]
    common = [n for n in runs[first]
              if all(n in r and r[n][1] for r in runs.values())]
    sets = {"grid": [n for n in common if n.startswith("grid_")],
            "all": common}
    out = {"first": first, "common": common,
           "grid_scenarios": len(sets["grid"]), "runs": [],
           "against_fastest_cudnn": []}
    for name, r in runs.items():
        for label, names in sets.items():
            out["runs"].append({
                "run": name, "set": label,
                "cand_over_cudnn": geomean([r[n][0] / r[n][1] for n in names]),
                "cand_over_first": geomean([r[n][0] / runs[first][n][0] for n in names]),
                "cudnn_over_first": geomean([r[n][1] / runs[first][n][1] for n in names])})
    best = {n: max(r[n][1] for r in runs.values()) for n in common}
    rows = [(name, {n: r[n][0] for n in common}) for name, r in runs.items()]
    rows.append((f"median({','.join(current)})",
                 {n: statistics.median(runs[c][n][0] for c in current)
                  for n in common}))
    for name, cand in rows:
        for label, names in sets.items():
            ratios = sorted((cand[n] / best[n], n) for n in names)
            out["against_fastest_cudnn"].append({
                "run": name, "set": label,
                "geomean": geomean([x for x, _ in ratios]),
                "below_0_8": sum(1 for x, _ in ratios if x < 0.8),
                "lowest": [{"scenario": n, "ratio": x} for x, n in ratios[:lowest]]})
    return out


def moved(runs, common, count):
    """The last run against the first, row by row (see the docstring)."""
    (old, r0), (new, r1) = list(runs.items())[0], list(runs.items())[-1]
    rows = []
    for n in common:
        cand, cudnn = r1[n][0] / r0[n][0], r1[n][1] / r0[n][1]
        fa = r1[n][2] / r0[n][2] if r0[n][2] and r1[n][2] else None
        refs = geomean([cudnn, fa] if fa else [cudnn])
        rows.append((cand / refs, n, cand, cudnn, fa))
    rows.sort()

    def entries(picked):
        return [{"scenario": n, "cand_over_refs": x, "cand": cand,
                 "cudnn": cudnn, "fa3": fa} for x, n, cand, cudnn, fa in picked]

    with_fa3 = [r[4] for r in rows if r[4]]
    return {
        "old": old, "new": new, "count": count, "scenarios": len(rows),
        "with_fa3": len(with_fa3),
        "geomean": {"cand": geomean([r[2] for r in rows]),
                    "cudnn": geomean([r[3] for r in rows]),
                    "fa3": geomean(with_fa3) if with_fa3 else None},
        "lower": entries([r for r in rows[:count] if r[0] < 1]),
        "higher": entries([r for r in reversed(rows[-count:]) if r[0] > 1]),
        "outliers": entries([r for r in rows
                             if max(r[3], 1 / r[3]) >= OUTLIER
                             or (r[4] and max(r[4], 1 / r[4]) >= OUTLIER)])}


# A reference that alone moved by this factor either way is an outlier.
OUTLIER = 1.5


def render(result):
    first = result["first"]
    print(f"{len(result['common'])} scenarios in every run with a cuDNN time "
          f"({result['grid_scenarios']} of the FA3 grid)")
    print(f"\n{'run':8s} {'set':5s} {'cand/cuDNN':>10s} "
          f"{'cand/' + first:>10s} {'cuDNN/' + first:>11s}")
    for r in result["runs"]:
        print(f"{r['run']:8s} {r['set']:5s} {r['cand_over_cudnn']:10.3f} "
              f"{r['cand_over_first']:10.3f} {r['cudnn_over_first']:11.3f}")
    print("\nagainst the fastest cuDNN of all runs, per scenario:")
    for r in result["against_fastest_cudnn"]:
        low = ", ".join(f"{x['scenario']} {x['ratio']:.3f}" for x in r["lowest"])
        print(f"{r['run']:14s} {r['set']:5s} {r['geomean']:6.3f}  below 0.8x: "
              f"{r['below_0_8']}  lowest: {low}")
    m = result.get("moved")
    if not m:
        return
    count = m["count"]
    print(f"\n{m['new']} against {m['old']}, row by row ({m['scenarios']} "
          f"scenarios, {m['with_fa3']} with FA3 in both): the candidate's "
          f"ratio over the references' (geomean of cuDNN's and FA3's)")
    g = m["geomean"]
    print(f"geomean: candidate {g['cand']:.3f}, cuDNN {g['cudnn']:.3f}"
          + (f", FA3 {g['fa3']:.3f}" if g["fa3"] else ""))
    head = (f"{'scenario':50s} {'cand/refs':>9s} {'cand':>7s} {'cuDNN':>7s} "
            f"{'FA3':>7s}")

    def show(title, picked):
        print(f"\n{title}\n{head}")
        for e in picked:
            fa_text = f"{e['fa3']:7.3f}" if e["fa3"] else f"{'-':>7s}"
            print(f"{e['scenario']:50s} {e['cand_over_refs']:9.3f} "
                  f"{e['cand']:7.3f} {e['cudnn']:7.3f} {fa_text}")

    show(f"the candidate lower than the references' move, lowest {count}:",
         m["lower"])
    show(f"the candidate higher, highest {count}:", m["higher"])
    show(f"a reference alone moved by {OUTLIER}x or more (its outlier):"
         if m["outliers"] else
         f"no reference moved by {OUTLIER}x or more on any row", m["outliers"])


if __name__ == "__main__":
    sys.exit(main())
