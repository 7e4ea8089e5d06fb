#!/usr/bin/env python3
"""Several builds of a candidate side by side, with SDPA's cuDNN backend.

For tuning: each --lib NAME=PATH is a build of the kernel (e.g. hopper.cu
with different -D settings, or an older version of the file). Per scenario
all builds run on the same inputs in this one process, with cuDNN, timed
as anchor.py times (warm-up, L2 flush before every sample, CUDA events, the
median) but interleaved: one sample of each per round, the order rotating,
so that clock drift during the run does not favour the first build. Prints
TFLOP/s per build, each build's ratio to cuDNN and to the first build,
and each build's O against cuDNN's (rel L2; "WRONG" past 2e-2, where the
backend ran; against the fp64 reference of measure_tolerance.py for causal
shapes with seqlen_q > seqlen_k, where SDPA's lower-right mask gives NaN
rows). Correctness of record is
`kseek eval`'s; this check only keeps a broken build from being read as
fast. Geometric means per build close the table, then each build's
against the first per scenario class, per head dim (where a switch
with a bit per head dim paid) and per band of seqlen_k (where a rule by
length paid); --out writes JSON.

A build whose first launch on a scenario does not finish in --hang-s
seconds is named ("HANG: ...", and "hung" in the JSON) and the process
exits with status 3 at once: a kernel that never ends cannot be stopped
from the host, and the GPU is lost to this process (run_variants.sh then
runs the others again without it). A scenario whose timing runs past
--hang-s + 60 seconds ends the process too (Python's faulthandler prints
where; the scenario is the one after the last row).

  python3 variants.py --lib old=/tmp/a.so --lib new=/tmp/b.so \\
      --scenarios grid_hd128_full_s16384_bf16,... [--grid-only]
"""

import argparse
import faulthandler
import json
import os
import sys
import time

import torch

from anchor import BACKENDS, first_line, geomean, scenario_class, \
    sdpa_callable
from kseek_abi import Kernel, Timer, errors, flops, load_scenarios, \
    make_inputs, select
from measure_tolerance import attention_fp64


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", action="append", required=True,
                    help="NAME=PATH of one build (repeat)")
    ap.add_argument("--scenarios", help="comma-separated scenario names")
    ap.add_argument("--grid-only", action="store_true")
    Timer.add_arguments(ap, samples=20, budget_s=0.3)
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--hang-s", type=float, default=20.0,
                    help="seconds a build's first launch on a scenario may "
                    "take before it counts as hung (exit status 3)")
    ap.add_argument("--out", help="JSON output")
    args = ap.parse_args()

    builds = []
    for spec in args.lib:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--lib wants NAME=PATH, got {spec!r}")
        builds.append((name, Kernel(path)))
    scenarios = select(load_scenarios(), args.scenarios, args.grid_only)
    timer = Timer.from_args(args)
    cudnn = dict(BACKENDS)["cudnn"]
    first = builds[0][0]

    print(f"device {torch.cuda.get_device_name(0)}; cuDNN "
          f"{torch.backends.cudnn.version()}; builds "
          + ", ".join(n for n, _ in builds)
          + (f"; GPU spin {args.pad_us:g} us before each sample"
             if args.pad_us > 0 else "")
          + ("; L2 flushed by reads (left clean)" if timer.flush == "read"
             else ""))
    head = f"{'scenario':44s} {'cuDNN':>7s}"
    for n, _ in builds:
        head += f" {n[:9]:>9s} {'/cuDNN':>6s}"
    print(head + "   (TFLOP/s)")
    rows = []

    def write_json(extra=None):
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"rows": rows, **(extra or {})}, f, indent=1)

    def finish_or_hang(name, scenario):
        """Waits for the build's launch; a hang ends the process."""
        done = torch.cuda.Event()
        done.record()
        deadline = time.monotonic() + args.hang_s
        while not done.query():
            if time.monotonic() > deadline:
                print(f"HANG: build {name} on {scenario}: its first launch "
                      f"did not finish in {args.hang_s:g} s; stopping "
                      "(the GPU is lost to this process)", flush=True)
                write_json({"hung": name, "hung_scenario": scenario})
                os._exit(3)
            time.sleep(0.001)

    for s in scenarios:
        faulthandler.dump_traceback_later(args.hang_s + 60, exit=True)
        p = s["params"]
        fl = flops(p)
        q, k, v, o, lse = make_inputs(p, args.seed)
        # The inputs' device addresses, for shapes whose times move between
        # processes (NOTES.md v3i, "Next" item 4).
        row = {"name": s["name"], "flops": fl, "builds": {},
               "class": scenario_class(s), "head_dim": p["head_dim"],
               "seqlen_k": p["seqlen_k"],
               "addresses": {n: t.data_ptr() for n, t in
                             zip(("q", "k", "v", "o", "lse"), (q, k, v, o, lse))}}
        ref = None
        try:
            fn = sdpa_callable(cudnn, p, q, k, v)
            ref = fn().transpose(1, 2).float().nan_to_num(0.0)
            if p["causal"] and p["seqlen_q"] > p["seqlen_k"]:
                ref, _ = attention_fp64(p, q, k, v)
            timed = [("cudnn", fn)]
        except Exception as e:  # cuDNN refuses some shapes
            row["cudnn_error"] = first_line(e)
            timed = []
        notes = []
        for name, kern in builds:
            r = {}
            try:
                launch = kern.bind(p, (q, k, v, o, lse))
                o.fill_(float("nan"))
                launch()
                finish_or_hang(name, s["name"])
                if ref is not None:
                    r["rel_l2_vs_cudnn"], _ = errors(o.float(), ref)
                    if not r["rel_l2_vs_cudnn"] <= 2e-2:
                        notes.append(f"{name} WRONG (rel L2 "
                                     f"{r['rel_l2_vs_cudnn']:.2e} vs cuDNN)")
                timed.append((name, launch))
            except Exception as e:
                r["error"] = first_line(e)
                notes.append(f"{name}: {r['error']}")
            row["builds"][name] = r
        # cuDNN and the builds in turn, sample by sample.
        try:
            medians, rounds = timer.medians_ms([f for _, f in timed])
            for (name, _), ms in zip(timed, medians):
                if name == "cudnn":
                    row["cudnn_ms"] = ms
                else:
                    row["builds"][name]["ms"] = ms
                    row["builds"][name]["samples"] = rounds
        except Exception as e:
            notes.append(f"timing: {first_line(e)}")
        line = f"{s['name']:44s} "
        c_ms = row.get("cudnn_ms")
        line += f"{fl / c_ms / 1e9:7.1f}" if c_ms else f"{'n/a':>7s}"
        for name, _ in builds:
            r = row["builds"][name]
            if "ms" in r:
                r["tflops"] = fl / r["ms"] / 1e9
                if c_ms:
                    r["over_cudnn"] = c_ms / r["ms"]
                line += f" {r['tflops']:9.1f} " + (
                    f"{r['over_cudnn']:6.3f}" if c_ms else f"{'n/a':>6s}")
            else:
                line += f" {'err':>9s} {'':6s}"
        print(line + ("   " + "; ".join(notes) if notes else ""), flush=True)
        rows.append(row)
        del q, k, v, o, lse, ref
        torch.cuda.empty_cache()
        faulthandler.cancel_dump_traceback_later()

    print()
    summary = {}
    for name, _ in builds:
        vs_cudnn = [r["builds"][name].get("over_cudnn") for r in rows]
        vs_first = [r["builds"][first]["ms"] / r["builds"][name]["ms"]
                    for r in rows
                    if "ms" in r["builds"][name] and "ms" in r["builds"][first]]
        wrong = sum(1 for r in rows
                    if not r["builds"][name].get("rel_l2_vs_cudnn", 0) <= 2e-2
                    or "error" in r["builds"][name])
        g = geomean(vs_cudnn)
        gf = geomean(vs_first)
        below = sum(1 for x in vs_cudnn if x is not None and x < 0.8)
        summary[name] = {"over_cudnn": g, "over_first": gf,
                         "below_0_8": below, "wrong_or_failed": wrong}
        print(f"{name:12s} geomean /cuDNN {g if g is None else round(g, 3)}"
              f"  /{first} {gf if gf is None else round(gf, 3)}"
              f"  below 0.8x cuDNN: {below}  wrong or failed: {wrong}")
    by_class = class_table(rows, [n for n, _ in builds])
    write_json({"summary": summary, "by_class": by_class})
    return 0


def key_band(seqlen_k):
    """The band of key lengths a scenario falls in, for class_table."""
    for low, high in ((1, 256), (257, 1024), (1025, 4096), (4097, 16384)):
        if seqlen_k <= high:
            return f"seqlen_k {low}-{high}"
    return "seqlen_k 16385-"


def class_table(rows, names):
    """Prints and returns each build's geomean time ratio to the first
    build (first's time / the build's: above 1 is faster) per scenario
    class, per head dim and per band of seqlen_k, so that a switch with a
    bit per head dim, or a rule by length, can be set where it paid."""
    first = names[0]
    groups = {}
    for r in rows:
        keys = [r["class"], f"head_dim {r['head_dim']}"]
        if "seqlen_k" in r:
            keys.append(key_band(r["seqlen_k"]))
        for key in keys:
            groups.setdefault(key, []).append(r)
    if len(names) < 2 or not groups:
        return {}
    print()
    print(f"{'vs ' + first + ' (geomean, >1 faster)':34s} {'n':>3s}"
          + "".join(f" {n[:9]:>9s}" for n in names[1:]))
    table = {}
    order = lambda k: (k.startswith("seqlen_k"), k.startswith("head_dim"),
                       int(k.split()[-1].split("-")[0]) if k.startswith("seqlen_k") else 0, k)
    for key in sorted(groups, key=order):
        members = groups[key]
        line = f"{key:34s} {len(members):3d}"
        table[key] = {}
        for n in names[1:]:
            g = geomean([r["builds"][first]["ms"] / r["builds"][n]["ms"]
                         for r in members
                         if "ms" in r["builds"].get(n, {})
                         and "ms" in r["builds"].get(first, {})])
            table[key][n] = g
            line += f" {g:9.3f}" if g is not None else f" {'n/a':>9s}"
        print(line)
    return table


if __name__ == "__main__":
    sys.exit(main())
