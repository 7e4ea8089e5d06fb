#!/usr/bin/env python3
"""Each backend's kernels on the GPU's own timeline, per call.

variants.py and anchor.py time a call with CUDA events around it: one
number for everything the call launched. Where a call is more than one
kernel (the attention kernel and the combine after split keys, or a
tail grid launched as a programmatic dependent) that number does not say
which kernel grew, nor whether the second waited for the first or ran
beside it. This script times like kseek_abi.Timer (per sample an L2
flush, a GPU spin of --pad-us, then one call; backends interleaved, the
order rotating) under torch.profiler, which records every kernel of the
process with its start and end on the GPU, and prints per scenario and
backend the medians over the samples of:

  span     from the call's first kernel's start to its last kernel's end
  wait     from the pad's end to the first kernel's start (the host's
           launch work not hidden by the pad shows here)
  and per kernel of the call, in order: its name (the part before any
  template arguments), its duration, and its gap, from the end of the
  kernel before it to its start (negative: the two ran at once, as a
  programmatic dependent may).

  python3 timeline.py --lib def=/tmp/a.so [--lib x=/tmp/b.so] [--fa3 DIR] \\
      --scenarios prefill_q256_k16384_hd256_full_bf16,... [--samples 20] \\
      [--save-traces DIR]
  python3 timeline.py --parse DIR/SCENARIO.json [--json -]   (a saved
      trace, no GPU)
  python3 timeline.py --summary TIMELINE.json   (a --json file's span
      summary, no GPU)

At the end of a run, and with --summary, a span summary: per build (every
backend but cuDNN and FA3) the geomean over the scenarios of cuDNN's,
FA3's (the faster of num_splits 1 and 0) and the best's span over the
build's, and its lowest scenarios against the best: the GPU-time
counterpart of the events' geomeans of anchor.py and variants.py.

--json FILE also writes the rows for scripts: {"rows": [{"scenario",
"backend", "span_us", "wait_us", "samples", "tflops", "kernels": [{"name",
"dur_us", "gap_us"}]}]} (gap_us null for a call's first kernel; a row
whose backend launched no kernel has "kernels": [] and no times).

Run on the GPU (run_variants.sh's FA_TIMELINE); the kernel names come from
CUPTI through torch.profiler, which needs no other tool. --save-traces
keeps each scenario's trace (Chrome's JSON, with the order the backends
ran in under "kseek_order"); --parse prints a saved one's table again.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile

SPIN = re.compile(r"spin_kernel")
# The L2 flush's kernel (flush_buf.zero_(): PyTorch's fill).
FLUSH = re.compile(r"FillFunctor")


def short_name(name):
    """A kernel's name without its namespace prefix and template arguments."""
    name = re.sub(r"^void\s+", "", name).replace("(anonymous namespace)::", "")
    name = re.split(r"[<(]", name, maxsplit=1)[0]
    return name.rsplit("::", 1)[-1] or name


def kernels_of(trace):
    """The GPU kernels [(start us, end us, name)], by start, of a loaded
    Chrome trace."""
    events = trace.get("traceEvents", trace) if isinstance(trace, dict) else trace
    out = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0.0)), e.get("name", "?"))
           for e in events if e.get("cat") == "kernel" and "ts" in e]
    return sorted(out)


def split_samples(kernels):
    """Per sample, (the pad's end, the call's kernels): the kernels after
    each spin up to the next spin, less the next sample's flush just
    before it (a fill kernel; the last sample has none after it)."""
    spins = [i for i, k in enumerate(kernels) if SPIN.search(k[2])]
    samples = []
    for n, i in enumerate(spins):
        last = spins[n + 1] if n + 1 < len(spins) else len(kernels)
        if n + 1 < len(spins) and last > i + 1 and FLUSH.search(kernels[last - 1][2]):
            last -= 1
        samples.append((kernels[i][1], kernels[i + 1:last]))
    return samples


def by_backend(kernels, order_run):
    """{name: [(pad end, [(start, end, name)...]) per sample]} of a trace's
    kernels, the backends having run in order_run (one name per sample)."""
    per_sample = split_samples(kernels)
    if len(per_sample) != len(order_run):
        raise RuntimeError(f"the trace holds {len(per_sample)} samples, "
                           f"{len(order_run)} were run (a spin kernel missing "
                           "from the trace?)")
    got = {n: [] for n in dict.fromkeys(order_run)}
    for name, sample in zip(order_run, per_sample):
        got[name].append(sample)
    return got


def profiled(timer, fns, samples, warmup, save=None, flop_count=0):
    """{name: [(pad end, [(start, end, name)...]) per sample]}; the trace
    also written to `save` (a path) where given, with the order the
    backends ran in and the call's FLOPs."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    names = list(fns)
    order_run = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for rnd in range(samples):
                order = names[rnd % len(names):] + names[:rnd % len(names)]
                for name in order:
                    timer.flush_buf.zero_()
                    torch.cuda._sleep(timer.pad_cycles)
                    fns[name]()
                    order_run.append(name)
            torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    if save:
        if not isinstance(trace, dict):
            trace = {"traceEvents": trace}
        trace["kseek_order"] = order_run
        trace["kseek_flops"] = flop_count
        with open(save, "w") as f:
            json.dump(trace, f)
    return by_backend(kernels_of(trace), order_run)


def summary(samples):
    """(median span, median wait, [(name, median dur, median gap)]) of one
    backend's samples; the kernels by position, as the most common count
    of kernels per call has them (other samples left out)."""
    counts = statistics.multimode(len(k) for _, k in samples)
    n = max(counts)
    use = [(pad_end, k) for pad_end, k in samples if len(k) == n and n > 0]
    if not use:
        return None
    span = statistics.median(k[-1][1] - k[0][0] for _, k in use)
    wait = statistics.median(k[0][0] - pad_end for pad_end, k in use)
    per = []
    for j in range(n):
        dur = statistics.median(k[j][1] - k[j][0] for _, k in use)
        gap = statistics.median(k[j][0] - k[j - 1][1] for _, k in use) if j else float("nan")
        per.append((short_name(use[0][1][j][2]), dur, gap))
    return span, wait, per, len(use)


def print_rows(scenario, fl, got, rows=None, table=True):
    """One line per backend of `got` (by_backend's result), unless not
    `table`; each also appended to `rows` (a list, for --json) where
    given."""
    for name, samples in got.items():
        res = summary(samples)
        if rows is not None:
            rows.append(json_row(scenario, name, fl, res))
        if not table:
            continue
        if res is None:
            print(f"{scenario:40s} {name:8s} no kernels seen", flush=True)
            continue
        span, wait, per, used = res
        tf = f" ({fl / (span * 1e-6) / 1e12:6.1f} TFLOP/s)" if fl else ""
        parts = "  ".join(
            f"{k} {d:.1f}" + ("" if j == 0 else f" (gap {g:+.1f})")
            for j, (k, d, g) in enumerate(per))
        print(f"{scenario:40s} {name:8s} span {span:8.1f}{tf} "
              f"wait {wait:6.1f}  [{used}]  {parts}", flush=True)


def json_row(scenario, backend, fl, res):
    """A backend's summary as --json writes it (times in us; a row without
    kernels has "kernels": [] and no times)."""
    row = {"scenario": scenario, "backend": backend, "kernels": []}
    if res is None:
        return row
    span, wait, per, used = res
    row.update(span_us=round(span, 3), wait_us=round(wait, 3), samples=used,
               tflops=round(fl / (span * 1e-6) / 1e12, 2) if fl and span > 0 else None)
    row["kernels"] = [{"name": k, "dur_us": round(d, 3),
                       "gap_us": None if j == 0 else round(g, 3)}
                      for j, (k, d, g) in enumerate(per)]
    return row


def write_json(path, rows, header):
    """--json: every row so far, rewritten after each scenario so that a
    run cut short keeps what it measured ("-": standard output, at the
    end)."""
    doc = dict(header, rows=rows)
    if path == "-":
        json.dump(doc, sys.stdout, indent=1)
        print()
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


REFERENCES = ("cudnn", "fa3_s1", "fa3_s0")


def span_ratios(rows):
    """Per build (every backend but cuDNN and FA3, in the order the rows
    name them): [(scenario, over cuDNN, over FA3, over the best)] where
    each ratio is the other's span over the build's (above 1: the build
    is the faster), FA3 the faster of num_splits 1 and 0 and the best the
    faster of FA3 and cuDNN; None where that backend has no span."""
    spans = {}
    builds = []
    for r in rows:
        if r.get("span_us") is None:
            continue
        spans.setdefault(r["scenario"], {})[r["backend"]] = r["span_us"]
        if r["backend"] not in REFERENCES and r["backend"] not in builds:
            builds.append(r["backend"])
    out = {}
    for b in builds:
        out[b] = []
        for scenario, got in spans.items():
            mine = got.get(b)
            if not mine:
                continue
            fa3 = [got[k] for k in ("fa3_s1", "fa3_s0") if got.get(k)]
            cudnn = got.get("cudnn")
            best = min(fa3 + ([cudnn] if cudnn else []), default=None)
            out[b].append((scenario,
                           cudnn / mine if cudnn else None,
                           min(fa3) / mine if fa3 else None,
                           best / mine if best else None))
    return out


def geomean(xs):
    xs = [x for x in xs if x is not None]
    return (math.exp(sum(math.log(x) for x in xs) / len(xs)), len(xs)) if xs else (None, 0)


def print_span_summary(rows, lowest=5):
    """The builds' spans over all scenarios against cuDNN's, FA3's and the
    best's: the GPU-time counterpart of anchor.py's and variants.py's
    geomeans (which time with CUDA events)."""
    table = span_ratios(rows)
    if not table:
        print("span summary: no build with a span")
        return
    print("span summary: geomean over the scenarios of the other backend's span "
          "over the build's (above 1: the build is faster; FA3 the faster of "
          "num_splits 1 and 0, best the faster of FA3 and cuDNN)")
    print(f"{'build':10s} {'/cuDNN':>12s} {'/FA3':>12s} {'/best':>12s}")
    for b, per in table.items():
        cells = []
        for j in (1, 2, 3):
            g, n = geomean(p[j] for p in per)
            cells.append(f"{g:6.3f} ({n:3d})" if g is not None else f"{'n/a':>12s}")
        print(f"{b:10s} " + " ".join(cells))
        low = sorted((p for p in per if p[3] is not None), key=lambda p: p[3])[:lowest]
        if low:
            print(f"{'':10s} lowest against the best: "
                  + ", ".join(f"{p[0]} {p[3]:.3f}" for p in low))


def summarise_json(path):
    """--summary: a --json file's rows, the span summary alone."""
    try:
        with open(path) as f:
            doc = json.load(f)
        rows = doc["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"timeline.py: cannot read the rows of {path}: {e}")
    print_span_summary(rows)
    return 0


def parse_saved(path, json_path=None):
    """--parse: a trace that --save-traces wrote, summarised again."""
    try:
        with open(path) as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"timeline.py: cannot read the trace {path}: {e}")
    order = trace.get("kseek_order") if isinstance(trace, dict) else None
    if not order:
        raise SystemExit(f"timeline.py: {path} has no kseek_order (not written "
                         "by --save-traces)")
    name = os.path.splitext(os.path.basename(path))[0]
    rows = []
    # With --json - the table would mix with the JSON: only the JSON.
    print_rows(name, trace.get("kseek_flops", 0), by_backend(kernels_of(trace), order), rows,
               table=json_path != "-")
    if json_path:
        write_json(json_path, rows, {"trace": path})
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    if "--summary" in sys.argv:
        ap.add_argument("--summary", required=True, metavar="FILE",
                        help="a --json file: print the span summary of its rows")
        return summarise_json(ap.parse_args().summary)
    if "--parse" in sys.argv:
        ap.add_argument("--parse", required=True, help="a trace --save-traces wrote")
        ap.add_argument("--json", metavar="FILE",
                        help="also write the rows as JSON to FILE ('-': stdout, no table)")
        a = ap.parse_args()
        return parse_saved(a.parse, a.json)
    import torch
    from kseek_abi import Timer
    from power import add_backend_arguments, each_scenario, load_backends
    add_backend_arguments(ap)
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--pad-us", type=float, default=Timer.DEFAULT_PAD_US)
    ap.add_argument("--save-traces", metavar="DIR",
                    help="keep each scenario's trace as DIR/SCENARIO.json")
    ap.add_argument("--json", metavar="FILE",
                    help="also write every row as JSON to FILE, rewritten after each scenario")
    args = ap.parse_args()
    if args.json == "-":
        ap.error("--json needs a file here (the table goes to standard output)")
    if args.pad_us <= 0:
        ap.error("--pad-us must be positive: the pad's spin marks each sample")
    if args.save_traces:
        os.makedirs(args.save_traces, exist_ok=True)
    builds, fa3 = load_backends(args)
    timer = Timer(args.samples, args.warmup, 1e9, args.pad_us)
    print(f"device {torch.cuda.get_device_name(0)}; per call (median of {args.samples} "
          f"samples after an L2 flush and a {args.pad_us:g} us spin): span from the first "
          "kernel's start to the last one's end, wait from the spin's end to the first "
          "start, then each kernel's duration and its gap after the one before (us)")
    rows = []
    header = {"device": torch.cuda.get_device_name(0), "samples": args.samples,
              "pad_us": args.pad_us}
    # FA3 at num_splits 1 and at its own choice (0).
    for s, fl, fns in each_scenario(args, builds, fa3, "fa3_s1", fa3_auto_name="fa3_s0"):
        save = (os.path.join(args.save_traces, s["name"] + ".json")
                if args.save_traces else None)
        print_rows(s["name"], fl, profiled(timer, fns, args.samples, args.warmup, save, fl), rows)
        if args.json:
            write_json(args.json, rows, header)
    print_span_summary(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
