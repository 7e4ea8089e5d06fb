#!/usr/bin/env python3
"""Anchor benchmark for flash_attention_fwd: a candidate beside FA3 and SDPA.

Loads a candidate kernel library (built with the harness's flags, e.g. by
`kseek compile --target sm_90a --json KERNEL`) and, for each scenario of
task.json, runs it in this one process beside FlashAttention-3 (when
--fa3 names its unpacked hopper/ folder, see ../../../shared/anchors/fa3)
and SDPA's cuDNN and FLASH (FlashAttention-2) backends on identical inputs.
FA3 takes our BSHD tensors as they are; it is timed with num_splits=1 (its
default) and num_splits=0 (it picks split-KV itself), and the faster of the
two counts: FA3 at its best. SDPA gets strided BHSD views
(q.transpose(1, 2)); causal masking uses is_causal when seqlen_q ==
seqlen_k and causal_lower_right otherwise; GQA uses enable_gqa=True. A
backend that refuses a scenario is recorded as "n/a" with the first line of
its error. Each backend's O is compared with the candidate's (rel L2); one
that disagrees by more than 5e-2 (NaN rows included) is flagged and left
out of "best". With --fa4 (on Blackwell), FlashAttention-4 (flash_attn.cute)
takes FA3's place: its columns, its ratios and "best" (the JSON keys stay
fa3_*; "anchor" names which one ran).

Timing (kseek_abi.Timer): warm-up, then per sample an L2 flush, a GPU spin
of --pad-us (default 300 us) so that the host's launch work (20-100 us for
the Python libraries) is not timed, and CUDA events around one call; all
backends of a scenario interleaved, one sample of each per round, the order
rotating; the median. Each backend's host time per call is measured too;
where it exceeds 80% of the pad, that scenario is timed with a pad of
twice the slowest host time (the column "pad"). --pad-sweep 0,100,300,1000
times the scenarios at each pad instead and shows whether the times are
flat (the GPU's time) or fall with the pad (host time counted).

Calls of a few microseconds are where events and the GPU's own timeline
have disagreed (by up to 2.5 us: 14% on a 17 us call): last (for at most
--spans-budget-s, default 180 s),
the scenarios whose fastest call took under --spans-under-us (default 150)
are timed again on the timeline (timeline.py's method under torch.profiler:
each kernel's start and end on the GPU; a call's span from its first
kernel's start to its last one's end; 20 samples each, same flush and
pad), and a second per-class table gives the ratios by the timeline
(spans there, the events elsewhere) beside the events', the lowest
scenarios by it, and per backend how much longer its events are than its
spans. `timeline.py --anchor anchor.json` prints it again.

Prints per scenario TFLOP/s of every backend and the candidate's ratios;
then per class (the FA3 grid by head_dim and mask, gqa/mqa, ragged,
prefill, decode, qlong, many-short, long, heads1, the head dims beyond
64/128/256) the candidate's TFLOP/s geomean and its geomean ratio to FA3,
cuDNN, FA2 and the best of FA3 and cuDNN per scenario; and the ten
scenarios lowest against that best. With --harness-json (`kseek eval
--json` on the same candidate) also the harness's median beside this
script's per scenario. Writes everything as JSON to --out (default
$OUT/anchor.json).

Needs python3 with torch (and numpy, which torch brings); run on the device.
"""

import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from kseek_abi import Kernel, Timer, errors, flops, load_scenarios, \
    make_inputs, select
from timeline import anchor_sets, print_timeline_summary, profiled, \
    set_span_fields, summary as call_summary

BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("fa2", SDPBackend.FLASH_ATTENTION))
# Every timed backend in print order (fa3 only with --fa3).
ALL = ("fa3", "cudnn", "fa2")
LABEL = {"fa3": "FA3", "cudnn": "cuDNN", "fa2": "FA2", "best": "best"}
# The library in the fa3 slot: "FA3", or "FA4" with --fa4.
ANCHOR = "FA3"
WRONG_REL_L2 = 5e-2


def sdpa_callable(backend, p, q, k, v):
    """A no-argument callable running SDPA on BHSD views of our tensors."""
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    kwargs = {}
    if p["causal"]:
        if p["seqlen_q"] == p["seqlen_k"]:
            kwargs["is_causal"] = True
        else:
            from torch.nn.attention.bias import causal_lower_right
            kwargs["attn_mask"] = causal_lower_right(p["seqlen_q"],
                                                     p["seqlen_k"])
    if p["heads_q"] != p["heads_kv"]:
        kwargs["enable_gqa"] = True

    def run():
        with sdpa_kernel([backend]):
            return F.scaled_dot_product_attention(qt, kt, vt, **kwargs)

    return run


def load_fa3(path):
    """flash_attn_func from an unpacked FA3 hopper/ folder, or None."""
    if not path:
        return None
    sys.path.insert(0, path)
    sys.path.insert(1, os.path.join(path, "flash_attn_3"))
    from flash_attn_interface import flash_attn_func
    return flash_attn_func


def load_fa4():
    """FlashAttention-4's flash_attn_func (flash_attn.cute) behind FA3's
    signature, or None when it cannot be imported. It returns (out, lse):
    out is kept. num_splits is passed where the interface takes it."""
    try:
        from flash_attn.cute import flash_attn_func
    except ImportError:
        try:
            from flash_attn.cute.interface import flash_attn_func
        except ImportError:
            return None

    def run(q, k, v, causal, num_splits):
        try:
            out = flash_attn_func(q, k, v, causal=causal,
                                  num_splits=max(num_splits, 1))
        except TypeError:
            out = flash_attn_func(q, k, v, causal=causal)
        return out[0] if isinstance(out, tuple) else out

    return run


def fa3_callable(func, p, q, k, v, num_splits):
    causal = bool(p["causal"])

    def run():
        return func(q, k, v, causal=causal, num_splits=num_splits)

    return run


def first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec="8.2f"):
    return format(x, spec) if isinstance(x, (int, float)) else f"{'n/a':>8s}"


def scenario_class(s):
    """The class a scenario is summarised in (see the module docstring)."""
    name, p = s["name"], s["params"]
    if name.startswith("grid_"):
        return f"grid hd{p['head_dim']} {'causal' if p['causal'] else 'full'}"
    for prefix, label in (("gqa", "gqa/mqa"), ("mqa", "gqa/mqa"),
                          ("ragged", "ragged"), ("prefill", "prefill"),
                          ("decode", "decode"), ("qlong", "qlong"),
                          ("many_short", "many-short"), ("long", "long"),
                          ("heads1", "heads1")):
        if name.startswith(prefix):
            return label
    return name.split("_")[0]


def callables(cand, fa3, s, tensors):
    """{backend: callable} of every backend to time on scenario s, and
    {backend: error} of those that refused (first call raised)."""
    p = s["params"]
    q, k, v = tensors[:3]
    fns = {"candidate": cand.bind(p, tensors)}
    if fa3 is not None:
        fns["fa3_s1"] = fa3_callable(fa3, p, q, k, v, 1)
        fns["fa3_s0"] = fa3_callable(fa3, p, q, k, v, 0)
    for name, backend in BACKENDS:
        fns[name] = sdpa_callable(backend, p, q, k, v)
    return fns


def bench_scenario(cand, fa3, s, timer, seed, auto_pad=True):
    p = s["params"]
    fl = flops(p)
    tensors = make_inputs(p, seed)
    o = tensors[3]
    row = {"name": s["name"], "class": scenario_class(s), "params": p,
           "flops": fl}
    fns = callables(cand, fa3, s, tensors)
    ok = {}
    for name, fn in fns.items():
        try:
            out = fn()
            torch.cuda.synchronize()
        except Exception as e:  # a refusal is a result, not a crash
            row[f"{name}_error"] = first_line(e)
            if name == "candidate":
                return row
            continue
        if name != "candidate":
            out_bshd = out if name.startswith("fa3") else out.transpose(1, 2)
            rel, _ = errors(out_bshd.float(), o.float())  # NaN: inf
            row[f"{name}_rel_l2_vs_candidate"] = rel
        ok[name] = fn
        del out
    host = {name: timer.host_us(fn) for name, fn in ok.items()}
    row["host_us"] = host
    pad = timer.pad_us
    if auto_pad and pad > 0 and max(host.values()) > 0.8 * pad:
        pad = 2 * max(host.values())
    row["pad_us"] = pad
    saved = timer.pad_us
    timer.set_pad_us(pad)
    medians, n = timer.medians_ms(list(ok.values()))
    timer.set_pad_us(saved)
    ms = dict(zip(ok, medians))
    row["samples"] = n
    for name, t in ms.items():
        row[f"{name}_ms"] = t
    if "fa3_s1" in ms or "fa3_s0" in ms:
        pick = min((x for x in ("fa3_s1", "fa3_s0") if x in ms),
                   key=lambda x: ms[x])
        ms["fa3"] = ms[pick]
        row["fa3_ms"] = ms[pick]
        row["fa3_num_splits"] = 1 if pick == "fa3_s1" else 0
        row["fa3_rel_l2_vs_candidate"] = row[f"{pick}_rel_l2_vs_candidate"]
    c = ms["candidate"]
    row["candidate_tflops"] = fl / (c * 1e-3) / 1e12
    best = None
    for name in ALL:
        if name not in ms:
            if f"{name}_error" not in row and not (
                    name == "fa3" and "fa3_s1_error" in row):
                continue
            row[f"{name}_ms"] = "n/a"
            continue
        row[f"{name}_tflops"] = fl / (ms[name] * 1e-3) / 1e12
        row[f"candidate_over_{name}"] = ms[name] / c
        wrong = not row[f"{name}_rel_l2_vs_candidate"] <= WRONG_REL_L2
        row[f"{name}_wrong"] = wrong
        if name in ("fa3", "cudnn") and not wrong:
            best = ms[name] if best is None else min(best, ms[name])
    if best is not None:
        row["best_ms"] = best
        row["candidate_over_best"] = best / c
    if "fa3_s1_error" in row and "fa3_s0_error" in row:
        row["fa3_error"] = row["fa3_s1_error"]
    del tensors
    return row


def summarize(rows):
    """Geomeans per set (timeline.anchor_sets): the FA3 grid, all, and
    every class."""
    out = {}
    for label, part in anchor_sets(rows):
        sm = {"n": len(part),
              "candidate_tflops": geomean([r.get("candidate_tflops")
                                           for r in part])}
        for name in ALL + ("best",):
            ratios = [r.get(f"candidate_over_{name}") for r in part]
            ratios = [x for x in ratios if isinstance(x, float)]
            sm[f"candidate_over_{name}"] = geomean(ratios)
            sm[f"n_{name}"] = len(ratios)
            if name != "best":
                sm[f"{name}_tflops"] = geomean([r.get(f"{name}_tflops")
                                                for r in part])
        out[label] = sm
    return out


def print_summary(summary, rows, lowest):
    print()
    for label in ("fa3_grid", "all"):
        sm = summary[label]
        for name in ALL:
            g = sm[f"candidate_over_{name}"]
            if sm[f"n_{name}"]:
                shown = ANCHOR.lower() if name == "fa3" else name
                print(f"geomean candidate/{shown} over {label}: "
                      f"{'n/a' if g is None else format(g, '.3f')} "
                      f"({sm['n_' + name]} of {sm['n']} scenarios)")
    print("\nper class: candidate TFLOP/s geomean, and candidate speed over "
          "each backend's (geomean of time ratios; best = the faster of FA3 "
          "and cuDNN per scenario, a backend with a wrong O left out)")
    print(f"{'class':22s} {'n':>4s} {'cand':>7s} {ANCHOR:>7s} {'cuDNN':>7s} "
          f"{'/' + ANCHOR:>7s} {'/cuDNN':>7s} {'/FA2':>7s} {'/best':>7s}")
    for label, sm in summary.items():
        print(f"{label:22s} {sm['n']:4d} {fmt(sm['candidate_tflops'], '7.1f')} "
              f"{fmt(sm['fa3_tflops'], '7.1f')} {fmt(sm['cudnn_tflops'], '7.1f')} "
              + " ".join(fmt(sm[f"candidate_over_{n}"], "7.3f")
                         for n in ("fa3", "cudnn", "fa2", "best")))
    ranked = sorted((r for r in rows
                     if isinstance(r.get("candidate_over_best"), float)),
                    key=lambda r: r["candidate_over_best"])
    print(f"\nthe {lowest} scenarios lowest against the best of {ANCHOR} and cuDNN")
    print(f"{'scenario':52s} {'cand':>8s} {'best':>8s} {'c/best':>7s} "
          f"{'c/' + ANCHOR:>7s} {'c/cuDNN':>7s}")
    for r in ranked[:lowest]:
        best_tf = r["flops"] / (r["best_ms"] * 1e-3) / 1e12
        print(f"{r['name']:52s} {fmt(r['candidate_tflops'])} {fmt(best_tf)} "
              f"{fmt(r['candidate_over_best'], '7.3f')} "
              f"{fmt(r.get('candidate_over_fa3'), '7.3f')} "
              f"{fmt(r.get('candidate_over_cudnn'), '7.3f')}")


def pad_sweep(cand, fa3, scenarios, timer, seed, pads):
    """Each scenario timed at every pad: TFLOP/s per backend and pad."""
    names = ["candidate"] + (["fa3_s1", "fa3_s0"] if fa3 is not None else []) \
        + [n for n, _ in BACKENDS]
    print("\npad sweep: TFLOP/s per backend at each GPU spin (us) after the "
          "L2 flush; flat = the GPU's time")
    print(f"{'scenario':44s} {'backend':>10s} " +
          " ".join(f"{p:>8g}" for p in pads) + f" {'host us':>8s}")
    table = []
    for s in scenarios:
        p = s["params"]
        fl = flops(p)
        tensors = make_inputs(p, seed)
        fns = callables(cand, fa3, s, tensors)
        ok = {}
        for name in names:
            try:
                fns[name]()
                torch.cuda.synchronize()
                ok[name] = fns[name]
            except Exception:
                pass
        host = {name: timer.host_us(fn) for name, fn in ok.items()}
        per_pad = {}
        for pad in pads:
            timer.set_pad_us(pad)
            medians, _ = timer.medians_ms(list(ok.values()))
            per_pad[pad] = dict(zip(ok, medians))
        for name in ok:
            tf = [fl / (per_pad[pad][name] * 1e-3) / 1e12 for pad in pads]
            print(f"{s['name'][:44]:44s} {name:>10s} " +
                  " ".join(f"{x:8.1f}" for x in tf) + f" {host[name]:8.1f}")
            table.append({"name": s["name"], "backend": name,
                          "host_us": host[name],
                          "ms": {str(pad): per_pad[pad][name] for pad in pads}})
        del tensors
        torch.cuda.empty_cache()
    print(f"\n{'geomean TFLOP/s':44s} {'backend':>10s} " +
          " ".join(f"{p:>8g}" for p in pads))
    for name in names:
        rows = [t for t in table if t["backend"] == name]
        if not rows:
            continue
        g = [geomean([fl_of(scenarios, t["name"]) / (t["ms"][str(pad)] * 1e-3)
                      / 1e12 for t in rows]) for pad in pads]
        print(f"{'':44s} {name:>10s} " + " ".join(f"{x:8.1f}" for x in g))
    timer.set_pad_us(Timer.DEFAULT_PAD_US)
    return table


def short_call(row, under_us):
    """Whether the fastest backend of an anchor row took under under_us by
    events (its spans are then taken)."""
    times = [row.get(f"{n}_ms") for n in ("candidate", "fa3_s1", "fa3_s0", "cudnn", "fa2")]
    times = [t for t in times if isinstance(t, float)]
    return bool(times) and isinstance(row.get("candidate_ms"), float) and \
        min(times) * 1e3 < under_us


def measure_spans(rows, cand, fa3, scenarios, timer, seed, under_us, samples,
                  budget_s=float("inf")):
    """A second pass, after every scenario's events: the short calls'
    (short_call) backends on the GPU's timeline (timeline.py's profiled:
    per sample the L2 flush, the row's pad, one call; the order rotating),
    each backend's median span into the row (timeline.set_span_fields).
    After the events, so that the profiler's presence cannot touch them;
    a scenario the profiler fails on keeps its events and says why
    ("span_error"). Past budget_s seconds the rest go without spans, and
    it says so."""
    by_name = {s["name"]: s for s in scenarios}
    short = [r for r in rows if short_call(r, under_us)]
    print(f"\nspans: {len(short)} scenarios whose fastest call took under "
          f"{under_us:g} us, on the GPU's timeline ({samples} samples each)",
          flush=True)
    saved = timer.pad_us
    t0 = time.time()
    for i, r in enumerate(short):
        if time.time() - t0 > budget_s:
            print(f"spans: stopped after {i} of {len(short)} scenarios: the "
                  f"budget of {budget_s:g} s (--spans-budget-s) is spent", flush=True)
            break
        s = by_name[r["name"]]
        tensors = make_inputs(s["params"], seed)
        fns = {n: f for n, f in callables(cand, fa3, s, tensors).items()
               if isinstance(r.get(f"{n}_ms"), float)}
        timer.set_pad_us(max(r.get("pad_us") or 0.0, Timer.DEFAULT_PAD_US))
        try:
            got = profiled(timer, fns, samples, timer.warmup)
            spans = {}
            for name, per_sample in got.items():
                res = call_summary(per_sample)
                if res is not None:
                    spans[name] = res[0]
            set_span_fields(r, spans, WRONG_REL_L2)
        except Exception as e:  # the events stand; the row says why
            r["span_error"] = first_line(e)
            print(f"{r['name']}: no spans: {r['span_error']}", flush=True)
        del tensors, fns
        torch.cuda.empty_cache()
        if (i + 1) % 20 == 0:
            print(f"spans: {i + 1} of {len(short)} in {time.time() - t0:.0f} s",
                  flush=True)
    timer.set_pad_us(saved)
    done = sum(1 for r in short if "span_us" in r)
    print(f"spans: {done} of {len(short)} scenarios in {time.time() - t0:.0f} s",
          flush=True)


def fl_of(scenarios, name):
    return next(flops(s["params"]) for s in scenarios if s["name"] == name)


def compare_harness(rows, path):
    with open(path) as f:
        verdict = json.load(f)
    harness = {}
    for s in verdict.get("scenarios", []):
        t = s.get("time_ms") or {}
        if isinstance(t, dict) and t.get("median"):
            harness[s["name"]] = t["median"]
    print("\nharness (kseek eval) median vs this script's median, candidate")
    print(f"{'scenario':52s} {'harness ms':>11s} {'script ms':>11s} "
          f"{'ratio':>7s}")
    ratios = []
    per = []
    for r in rows:
        h = harness.get(r["name"])
        c = r.get("candidate_ms")
        if h is None or not isinstance(c, float):
            continue
        ratio = h / c
        ratios.append(ratio)
        per.append({"name": r["name"], "harness_ms": h, "script_ms": c,
                    "ratio": ratio})
        print(f"{r['name']:52s} {h:11.4f} {c:11.4f} {ratio:7.3f}")
    summary = {"per_scenario": per, "n": len(ratios),
               "geomean_ratio": geomean(ratios),
               "max_deviation": (max(abs(x - 1) for x in ratios)
                                 if ratios else None)}
    if ratios:
        print(f"harness/script: geomean {summary['geomean_ratio']:.3f}, "
              f"largest deviation {summary['max_deviation'] * 100:.1f}% "
              f"over {len(ratios)} scenarios")
    else:
        print("no scenario with a harness median to compare")
    return summary


def print_row(r):
    notes = []
    for n in ("candidate", "fa3", "cudnn", "fa2"):
        if n + "_error" in r:
            notes.append(f"{n}: {r[n + '_error']}")
    for n in ALL:
        if r.get(f"{n}_wrong"):
            notes.append(f"{n} rel_l2 vs candidate "
                         f"{r[n + '_rel_l2_vs_candidate']:.2e}")
    if r.get("pad_us", 0) > Timer.DEFAULT_PAD_US:
        notes.append(f"pad {r['pad_us']:.0f} us")
    if "fa3_num_splits" in r:
        notes.append(f"fa3 num_splits={r['fa3_num_splits']}")
    print(f"{r['name']:52s} {fmt(r.get('candidate_tflops'))} "
          f"{fmt(r.get('cudnn_tflops'))} {fmt(r.get('fa2_tflops'))} "
          f"{fmt(r.get('fa3_tflops'))} "
          f"{fmt(r.get('candidate_over_cudnn'), '8.3f')} "
          f"{fmt(r.get('candidate_over_fa2'), '8.3f')} "
          f"{fmt(r.get('candidate_over_fa3'), '8.3f')} "
          f"{fmt(r.get('candidate_over_best'), '8.3f')}"
          + ("   " + "; ".join(notes) if notes else ""), flush=True)


def main():
    ap = argparse.ArgumentParser(
        description="candidate vs FA3, SDPA cuDNN and FA2 on task.json "
        "scenarios")
    ap.add_argument("--lib", required=True,
                    help="candidate shared library (kseek compile --json)")
    ap.add_argument("--scenarios", help="comma-separated scenario names")
    ap.add_argument("--grid-only", action="store_true",
                    help="only the FA3 grid (grid_* scenarios)")
    ap.add_argument("--fa3", default=os.environ.get("FA3_HOPPER"),
                    help="FA3's unpacked hopper/ folder (flash_attn_"
                    "interface.py, flash_attn_3/_C.abi3.so); default "
                    "$FA3_HOPPER; without it FA3 is not timed")
    ap.add_argument("--fa4", action="store_true",
                    help="time FlashAttention-4 (flash_attn.cute) in FA3's "
                    "place (Blackwell); refused when it cannot be imported")
    Timer.add_arguments(ap, samples=30, budget_s=1.5)
    ap.add_argument("--no-auto-pad", action="store_true",
                    help="keep --pad-us even where a backend's host work "
                    "exceeds 80%% of it")
    ap.add_argument("--pad-sweep",
                    help="comma list of pads (us): time the scenarios at "
                    "each instead of the anchor table")
    ap.add_argument("--spans-under-us", type=float, default=150.0,
                    help="after the events, time every backend of the "
                    "scenarios whose fastest call took under this many us "
                    "on the GPU's timeline too (spans) and print the table "
                    "by the timeline (default %(default)g; 0: no spans)")
    ap.add_argument("--span-samples", type=int, default=20)
    ap.add_argument("--spans-budget-s", type=float, default=180.0,
                    help="stop taking spans after this many seconds (the "
                    "table then counts the scenarios that have them)")
    ap.add_argument("--lowest", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--harness-json",
                    help="kseek eval --json output on the same candidate")
    ap.add_argument("--out", help="JSON output (default $OUT/anchor.json)")
    args = ap.parse_args()

    out_path = args.out or os.path.join(os.environ.get("OUT", "."),
                                        "anchor.json")
    scenarios = select(load_scenarios(), args.scenarios, args.grid_only)
    cand = Kernel(args.lib)
    global ANCHOR
    if args.fa4:
        fa3, ANCHOR = load_fa4(), "FA4"
        if fa3 is None:
            sys.exit("anchor.py: --fa4: flash_attn.cute cannot be imported")
    else:
        fa3 = load_fa3(args.fa3)
    timer = Timer.from_args(args)
    dev = torch.cuda.get_device_name(0)
    print(f"device {dev}; torch {torch.__version__}; cuDNN "
          f"{torch.backends.cudnn.version()}; {ANCHOR} "
          f"{('flash_attn.cute' if args.fa4 else args.fa3) if fa3 is not None else 'not given'}; candidate "
          f"{args.lib}; GPU spin {args.pad_us:g} us after each L2 flush")
    torch.set_grad_enabled(False)
    result = {"device": dev, "torch": torch.__version__,
              "cudnn": torch.backends.cudnn.version(), "fa3": args.fa3,
              "anchor": ANCHOR, "wrong_rel_l2": WRONG_REL_L2,
              "candidate": args.lib, "seed": args.seed,
              "timing": {"samples_max": args.samples, "warmup": args.warmup,
                         "budget_s": args.budget_s, "statistic": "median",
                         "pad_us": args.pad_us,
                         "auto_pad": not args.no_auto_pad,
                         "interleaved": True,
                         "l2_flush_bytes": timer.flush_buf.numel(),
                         "l2_flush": timer.flush,
                         "spans_under_us": args.spans_under_us,
                         "span_samples": args.span_samples}}
    t0 = time.time()
    if args.pad_sweep:
        pads = [float(x) for x in args.pad_sweep.split(",")]
        result["pad_sweep"] = pad_sweep(cand, fa3, scenarios, timer,
                                        args.seed, pads)
    else:
        print(f"{'scenario':52s} {'cand':>8s} {'cuDNN':>8s} {'FA2':>8s} "
              f"{ANCHOR:>8s} {'c/cuDNN':>8s} {'c/FA2':>8s} {'c/' + ANCHOR:>8s} "
              f"{'c/best':>8s}   (TFLOP/s)")
        rows = []
        for s in scenarios:
            r = bench_scenario(cand, fa3, s, timer, args.seed,
                               not args.no_auto_pad)
            rows.append(r)
            print_row(r)
            torch.cuda.empty_cache()
        summary = summarize(rows)
        print_summary(summary, rows, args.lowest)
        host = {}
        for r in rows:
            for name, us in r.get("host_us", {}).items():
                host[name] = max(host.get(name, 0.0), us)
        print("\nlargest host time per call (us): " +
              ", ".join(f"{n} {us:.0f}" for n, us in host.items()) +
              f"; scenarios timed with a larger pad: "
              f"{sum(r.get('pad_us', 0) > args.pad_us for r in rows)}")
        result.update(scenarios=rows, summary=summary)
        if args.harness_json:
            result["harness_comparison"] = compare_harness(rows,
                                                           args.harness_json)
        if args.spans_under_us > 0:
            # Last: a run cut short here has printed every other table.
            measure_spans(rows, cand, fa3, scenarios, timer, args.seed,
                          args.spans_under_us, args.span_samples,
                          args.spans_budget_s)
            result["timeline_summary"] = print_timeline_summary(
                rows, args.spans_under_us, args.span_samples, args.lowest,
                ANCHOR)
    result["seconds"] = time.time() - t0
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
