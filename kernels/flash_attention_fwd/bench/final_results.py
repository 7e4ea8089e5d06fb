#!/usr/bin/env python3
"""A final run's results file (bench/results/hopper_*_<gpu>.txt) from its $OUT.

final.sh (and the plans that wrap it: final_v4a.sh, final_v4b.sh) leave in
their $OUT final.log (the run's summary), anchor.log (the anchor's whole
table), pad_sweep.log and the streams_check outputs (streams*.txt) and,
from final_v4b.sh, v4a_*.txt. This prints, in the order of the earlier
results files: the given header lines (each as a "# " comment), the GPU
named by anchor.log's first line, final.log up to the anchor's JSON,
"== anchor table" and anchor.log, "== pad sweep" and pad_sweep.log, where
the run measured the GPU's ceilings (ceilings.txt, bench/ceilings.py)
"== against the matmul" (the grid's s16384 rows as % of the bf16
matmul's median), then each other .txt file under "== NAME"; Python's
warnings (and the source line each prints after it) left out.

  python3 bench/final_results.py /work/.device/4 \\
      --header "v4b: hopper.cu at abc1234 on all 312 scenarios ..." \\
      --header "One call: bash kernels/flash_attention_fwd/bench/plans/final_v4b.sh" \\
      > bench/results/hopper_v4b_h200.txt
"""

import argparse
import os
import re
import sys

# A warning line, and the indented source line Python prints after it.
WARNING = re.compile(r"(Warning|warnings\.warn|_warn_once\()")


def clean(lines):
    out, skip_next = [], False
    for line in lines:
        if skip_next and line.startswith("  "):
            skip_next = False
            continue
        skip_next = False
        if WARNING.search(line):
            skip_next = True
            continue
        out.append(line)
    return out


def read(path):
    with open(path, errors="replace") as f:
        return f.read().splitlines()


MATMUL = re.compile(r"bf16 matmul \S+ random ([0-9.]+) TFLOP/s median, ([0-9.]+) best")


def against_matmul(ceilings, anchor):
    """The grid's s16384 rows of the anchor's first table (candidate, FA3,
    cuDNN) as % of the bf16 matmul's median that ceilings.py measured
    around the run (the mean of its medians; the best of its bests)."""
    found = [MATMUL.search(l) for l in ceilings]
    found = [m for m in found if m]
    if not found:
        return ["no bf16 matmul figure in ceilings.txt"]
    median = sum(float(m.group(1)) for m in found) / len(found)
    best = max(float(m.group(2)) for m in found)
    start = next((i for i, l in enumerate(anchor)
                  if l.startswith("scenario ") and " FA3 " in l and " cand " in l), None)
    out = [f"bf16 matmul {median:.1f} TFLOP/s (mean of {len(found)} medians; best {best:.1f}); "
           "the grid's s16384 rows as % of it"]
    if start is None:
        return out + ["no table with cand and FA3 columns in anchor.log"]
    cols = {name: i for i, name in enumerate(anchor[start].split())}
    out.append(f"{'scenario':<34} {'cand':>8} {'FA3':>8} {'cuDNN':>8}   (TFLOP/s, then %)")
    for l in anchor[start + 1:]:
        f = l.split()
        if not f:
            break  # the table's end
        if not f[0].startswith("grid_") or "_s16384_" not in f[0]:
            continue
        try:
            vals = [float(f[cols[c]]) for c in ("cand", "FA3", "cuDNN")]
        except (KeyError, IndexError, ValueError):
            continue
        pct = "  ".join(f"{100 * v / median:5.1f}%" for v in vals)
        out.append(f"{f[0]:<34} " + " ".join(f"{v:8.1f}" for v in vals) + f"   {pct}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", help="the final run's $OUT (as fetched from the device)")
    ap.add_argument("--header", action="append", default=[],
                    help="a line for the file's head (what ran, where, the command); repeatable")
    a = ap.parse_args()
    need = ["final.log", "anchor.log", "pad_sweep.log"]
    missing = [n for n in need if not os.path.isfile(os.path.join(a.out_dir, n))]
    if missing:
        sys.exit(f"final_results.py: {a.out_dir} has no {', '.join(missing)} "
                 "(not a final run's $OUT?)")
    anchor = read(os.path.join(a.out_dir, "anchor.log"))
    device = anchor[0].split(";")[0] if anchor and anchor[0].startswith("device ") else None
    lines = [f"# {h}" for h in a.header]
    lines.append(f"# {device}" if device else "# device: not named in anchor.log")
    lines.append("# First the run's summary, then the anchor's table and the pad sweep's, "
                 "then the other outputs (Python's warnings left out).")
    final = clean(read(os.path.join(a.out_dir, "final.log")))
    end = next((i for i, l in enumerate(final) if l.startswith("wrote ") and "anchor.json" in l),
               len(final) - 1)
    lines += final[:end + 1]
    lines.append("== anchor table")
    lines += clean(anchor)
    lines.append("== pad sweep")
    lines += clean(read(os.path.join(a.out_dir, "pad_sweep.log")))
    ceilings = os.path.join(a.out_dir, "ceilings.txt")
    if os.path.isfile(ceilings):
        lines.append("== against the matmul")
        lines += against_matmul(read(ceilings), anchor)
    for name in sorted(os.listdir(a.out_dir)):
        if name.endswith(".txt") and name not in ("summary.txt",):
            lines.append(f"== {name[:-4]}")
            lines += clean(read(os.path.join(a.out_dir, name)))
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
