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
  python3 timeline.py --offsets TIMELINE.json VARIANTS.json   (one
      run_variants.sh run's files: per scenario and backend the events'
      time less the span; no GPU)
  python3 timeline.py --anchor ANCHOR.json   (anchor.py's table by the
      timeline, from an anchor.json with spans; no GPU)

At the end of a run, and with --summary, a span summary: per build (every
backend but cuDNN and FA3) the geomean over the scenarios of cuDNN's,
FA3's (the faster of num_splits 1 and 0) and the best's span over the
build's, and its lowest scenarios against the best: the GPU-time
counterpart of the events' geomeans of anchor.py and variants.py.

--json FILE also writes the rows for scripts: {"rows": [{"scenario",
"backend", "span_us", "wait_us", "samples", "tflops", "kernels": [{"name",
"dur_us", "gap_us"}]}]} (gap_us null for a call's first kernel; a row
whose backend launched no kernel has "kernels": [] and no times).

anchor.py takes spans the same way (profiled() here) for its short calls,
after its events: set_span_fields and print_timeline_summary below turn
them into its table by the timeline, which --anchor prints again.

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


# anchor.py's spans: its rows (scenarios) hold, besides the events'
# medians, the GPU span of each backend that ran where the call is short.
ANCHOR_REFS = ("fa3", "cudnn", "fa2", "best")


def set_span_fields(row, spans, wrong_rel_l2):
    """Into an anchor.py row: "span_us" ({backend: median span}) and, per
    reference, "candidate_span_over_<ref>" (the reference's span over the
    candidate's), "fa3" the faster of num_splits 1 and 0 by span and
    "best" the faster of that and cuDNN, a backend whose O disagreed with
    the candidate's by more than wrong_rel_l2 left out of best (as the
    events' figures do)."""
    row["span_us"] = dict(spans)
    mine = spans.get("candidate")
    if not mine:
        return row
    row["candidate_span_tflops"] = row.get("flops", 0) / (mine * 1e-6) / 1e12
    fa3 = [n for n in ("fa3_s1", "fa3_s0") if spans.get(n)]
    picked = {}
    if fa3:
        picked["fa3"] = min(fa3, key=lambda n: spans[n])
    if spans.get("cudnn"):
        picked["cudnn"] = "cudnn"
    if spans.get("fa2"):
        picked["fa2"] = "fa2"
    best = None
    for ref, name in picked.items():
        row[f"candidate_span_over_{ref}"] = spans[name] / mine
        rel = row.get(f"{name}_rel_l2_vs_candidate")
        if ref in ("fa3", "cudnn") and isinstance(rel, float) and rel <= wrong_rel_l2:
            best = spans[name] if best is None else min(best, spans[name])
    if best is not None:
        row["candidate_span_over_best"] = best / mine
    return row


def timeline_ratio(row, ref):
    """The candidate's speed over `ref` by the timeline: the spans' ratio
    where the row has spans, else the events' (on a long call the events'
    own offsets of a few microseconds weigh little)."""
    x = row.get(f"candidate_span_over_{ref}")
    if isinstance(x, float):
        return x
    x = row.get(f"candidate_over_{ref}")
    return x if isinstance(x, float) else None


def anchor_sets(rows):
    """anchor.py's sets of rows in its order: the FA3 grid and all (both
    even when empty), each class in the order the rows first name it, the
    head dims beyond 64/128/256 (where there are any)."""
    sets = [("fa3_grid", [r for r in rows if r["name"].startswith("grid_")]),
            ("all", list(rows))]
    classes = list(dict.fromkeys(r["class"] for r in rows if r.get("class")))
    sets += [(c, [r for r in rows if r.get("class") == c]) for c in classes]
    odd = [r for r in rows
           if r.get("params", {}).get("head_dim", 64) not in (64, 128, 256)]
    if odd:
        sets.append(("hd not 64/128/256", odd))
    return sets


def timeline_summary(rows):
    """Per set: n, how many rows have spans, and per reference the geomean
    of the events' ratios and of the timeline's (timeline_ratio)."""
    out = {}
    for label, part in anchor_sets(rows):
        if not part:
            continue
        sm = {"n": len(part),
              "n_span": sum(1 for r in part if r.get("candidate_span_over_fa3")
                            or r.get("candidate_span_over_cudnn"))}
        for ref in ANCHOR_REFS:
            ev = [r.get(f"candidate_over_{ref}") for r in part]
            sm[f"events_over_{ref}"] = geomean(x for x in ev if isinstance(x, float))[0]
            sm[f"tl_over_{ref}"] = geomean(timeline_ratio(r, ref) for r in part)[0]
        out[label] = sm
    return out


def print_timeline_summary(rows, under_us, samples, lowest=10, anchor="FA3"):
    """The per-class table by the timeline beside the events', the rows
    lowest against the best by it, and per backend how much longer its
    events are than its spans (stream time outside its kernels: the event
    records, and whatever a call puts in the stream besides kernels)."""
    summary = timeline_summary(rows)
    n_span = summary["all"]["n_span"] if "all" in summary else 0
    print(f"\nby the timeline: for the {n_span} scenarios whose fastest call "
          f"took under {under_us:g} us by events, each backend's span on the GPU's "
          f"timeline (first kernel's start to last kernel's end, median of "
          f"{samples} samples), the events elsewhere (tl); ev: the events' "
          "geomean over the same scenarios")
    head = "".join(f" {'ev/' + (anchor if r == 'fa3' else LABELS[r]):>9s}"
                   f" {'tl/' + (anchor if r == 'fa3' else LABELS[r]):>10s}"
                   for r in ANCHOR_REFS)
    print(f"{'class':22s} {'n':>4s} {'span':>5s}" + head)
    for label, sm in summary.items():
        cells = "".join(f" {cell(sm[f'events_over_{r}'], 9)} {cell(sm[f'tl_over_{r}'], 10)}"
                        for r in ANCHOR_REFS)
        print(f"{label:22s} {sm['n']:4d} {sm['n_span']:5d}" + cells)
    ranked = sorted((r for r in rows if timeline_ratio(r, "best") is not None),
                    key=lambda r: timeline_ratio(r, "best"))
    print(f"\nthe {lowest} scenarios lowest against the best of {anchor} and cuDNN "
          "by the timeline (by: span where spans were taken, else events)")
    print(f"{'scenario':52s} {'by':>6s} {'c/best':>7s} {'c/' + anchor:>7s} {'c/cuDNN':>7s}")
    for r in ranked[:lowest]:
        by = "span" if isinstance(r.get("candidate_span_over_best"), float) else "events"
        print(f"{r['name']:52s} {by:>6s} {cell(timeline_ratio(r, 'best'), 7)} "
              f"{cell(timeline_ratio(r, 'fa3'), 7)} {cell(timeline_ratio(r, 'cudnn'), 7)}")
    offsets = anchor_offsets(rows)
    if offsets:
        print("\nevents minus span per call (us; median, and the range over the "
              "scenarios with both): " + "; ".join(
                  f"{b} {med:.1f} ({lo:.1f} to {hi:.1f}, {n})"
                  for b, (med, lo, hi, n) in offsets.items()))
    summary["events_minus_span_us"] = {b: {"median": v[0], "min": v[1], "max": v[2], "n": v[3]}
                                       for b, v in offsets.items()}
    return summary


def anchor_offsets(rows):
    """{backend: (median, min, max, n)} of a call's event time less its
    span, in us, over the rows that have both."""
    per = {}
    for r in rows:
        spans = r.get("span_us")
        if not isinstance(spans, dict):
            continue
        for b, span in spans.items():
            ms = r.get(f"{b}_ms")
            if isinstance(ms, float) and span:
                per.setdefault(b, []).append(ms * 1e3 - span)
    return {b: (statistics.median(v), min(v), max(v), len(v)) for b, v in per.items()}


LABELS = {"fa3": "FA3", "cudnn": "cuDNN", "fa2": "FA2", "best": "best"}


def cell(x, width):
    return f"{x:{width}.3f}" if x is not None else f"{'n/a':>{width}s}"


def summarise_anchor(path, lowest=10):
    """--anchor: the table by the timeline of a saved anchor.json."""
    try:
        with open(path) as f:
            doc = json.load(f)
        rows = doc["scenarios"]
        timing = doc.get("timing", {})
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"timeline.py: cannot read the scenarios of {path}: {e}")
    if not timing.get("spans_under_us"):
        raise SystemExit(f"timeline.py: {path} has no spans (anchor.py ran "
                         "without --spans-under-us)")
    for r in rows:  # the ratios again from the spans kept
        if isinstance(r.get("span_us"), dict):
            set_span_fields(r, r["span_us"], doc.get("wrong_rel_l2", 5e-2))
    print_timeline_summary(rows, timing["spans_under_us"], timing.get("span_samples", 0),
                           lowest, doc.get("anchor", "FA3"))
    return 0


def run_offsets(timeline_rows, variants_rows):
    """{scenario: {backend: (events us, span us)}} of a call where
    variants.py timed it by events (its builds, and cuDNN through each
    build's over_cudnn) and this script on the timeline, in one run."""
    spans = {(r["scenario"], r["backend"]): r["span_us"]
             for r in timeline_rows if r.get("span_us")}
    out = {}
    for v in variants_rows:
        events = {}
        for b, got in (v.get("builds") or {}).items():
            if isinstance(got.get("ms"), (int, float)):
                events[b] = got["ms"] * 1e3
                if isinstance(got.get("over_cudnn"), (int, float)) and "cudnn" not in events:
                    events["cudnn"] = got["ms"] * got["over_cudnn"] * 1e3
        both = {b: (ev, spans[(v["name"], b)]) for b, ev in events.items()
                if (v["name"], b) in spans}
        if both:
            out[v["name"]] = both
    return out


def print_offsets(timeline_path, variants_path):
    """--offsets: per scenario and backend the events' time less the span
    (us), then each backend's median: the stream time a call holds outside
    its kernels, as the events see it."""
    try:
        with open(timeline_path) as f:
            trows = json.load(f)["rows"]
        with open(variants_path) as f:
            vrows = json.load(f)["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"timeline.py: cannot read the rows of {timeline_path} and "
                         f"{variants_path}: {e}")
    table = run_offsets(trows, vrows)
    if not table:
        raise SystemExit("timeline.py: no scenario and backend with both an event "
                         "time and a span")
    backends = [b for b in dict.fromkeys(b for per in table.values() for b in per)
                if b != "cudnn"]
    backends += ["cudnn"] if any("cudnn" in per for per in table.values()) else []
    print("events less span per call (us): variants.py's median by CUDA events "
          "less this script's median span, same run")
    print(f"{'scenario':44s}" + "".join(f" {b:>8s}" for b in backends))
    for name, per in table.items():
        print(f"{name[:44]:44s}" + "".join(
            f" {per[b][0] - per[b][1]:8.2f}" if b in per else f" {'-':>8s}"
            for b in backends))
    print(f"{'median':44s}" + "".join(
        f" {statistics.median(per[b][0] - per[b][1] for per in table.values() if b in per):8.2f}"
        for b in backends))
    return 0


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
    if "--offsets" in sys.argv:
        ap.add_argument("--offsets", required=True, nargs=2,
                        metavar=("TIMELINE_JSON", "VARIANTS_JSON"),
                        help="events less span per call, from one run_variants.sh run's files")
        a = ap.parse_args()
        return print_offsets(*a.offsets)
    if "--anchor" in sys.argv:
        ap.add_argument("--anchor", required=True, metavar="FILE",
                        help="an anchor.json with spans: print its table by the timeline")
        ap.add_argument("--lowest", type=int, default=10)
        a = ap.parse_args()
        return summarise_anchor(a.anchor, a.lowest)
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
