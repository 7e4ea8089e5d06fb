#!/usr/bin/env python3
"""Where an item's time goes inside hopper.cu's WGMMA kernel, from its own stamps.

A build of hopper.cu with -DKSEEK_FA_TRACE=1 (a diagnostic build, never a
candidate) has its WGMMA kernels stamp every round of every block: the first
consumer's thread 0 at the round's start, when Q has landed, when the first K
has landed, when the first S is done, when the last P V is done and when O is
stored; the producer at the round's start, when the item is located, when Q
is issued (after its buffer is free), when the first K is issued and when the
last V is issued. Each record also holds the global timer at the round's
start and end, the item's query row, key tiles, head, batch and SM
(hopper.cu, "The item trace"). This script runs one scenario's call as the
anchor times it (L2 flushed, a GPU spin of --pad-us), reads the records back
(kseek_fa_trace_read) and prints:

  - the call's span by the global timer and by CUDA events (the stamps' own
    cost: compare the events with an untraced build's time), the SM clock
    the stamps ran at (cycles over nanoseconds, all rounds together), blocks
    and rounds;
  - per phase of a consumer's round the median and 90th percentile in us and
    its share of all consumer time: wait for the item's Q (q), then for its
    first K (k), the first S (s), the remaining tiles through the last P V
    (loop; per key tile as well) and O's stores (store);
  - the same by the item's key tiles (causal items differ; at most
    --tile-rows rows, neighbouring counts pooled where there are more), and
    a least-squares fit of s + loop against the tile count over all rounds:
    the time per key tile and the item's fixed part (the masked tiles' extra
    cost, the pipeline's fill), where the rounds have two counts or more;
  - the producer's phases: to Q issued (its buffer's wait), to the first K
    issued, to the last V issued (waits for ring stages);
  - a timeline of the call in --bins bins: how many blocks' first consumer
    is waiting (q, k), computing (s, loop), storing, or has no round (idle:
    the ramp and the tail).

--calls N traces N calls and prints the one of median span. --raw DIR saves
each scenario's records as JSON; --parse FILE prints a saved one again
(no GPU needed). --json FILE writes the summaries for scripts.

  python3 item_trace.py --lib /tmp/trace.so \\
      --scenarios grid_hd256_causal_s512_bf16,grid_hd128_full_s16384_bf16
  python3 item_trace.py --parse DIR/grid_hd256_causal_s512_bf16.json
"""

import argparse
import json
import os
import statistics
import sys

# A record's words (hopper.cu "The item trace").
W_ID, W_T0, W_T1 = 0, 1, 2
CONSUMER, PRODUCER = 1, 2
CONSUMER_PHASES = ("q", "k", "s", "loop", "store")  # words 3-4, 4-5, 5-6, 6-7, 7-8
PRODUCER_PHASES = ("to_q_issued", "to_first_k", "to_last_v")  # 3-5, 5-6, 6-7


def decode(raw):
    """Records of a raw dump: {"layout": [blocks, rounds, words],
    "records": [[block, round, kind, w0, ..., w9], ...]} -> a list of dicts
    for the records that hold an item (kind set in word 0)."""
    blocks, rounds, words = raw["layout"]
    if words < 10:
        raise ValueError(f"records of {words} words; this script reads 10")
    out = []
    for r in raw["records"]:
        block, rnd, kind, w = r[0], r[1], r[2], r[3:]
        ident = w[W_ID]
        if ident >> 56 != kind or kind not in (CONSUMER, PRODUCER):
            continue  # a round past the last item, or never written
        out.append({
            "block": block, "round": rnd, "kind": kind,
            "q0": ident & 0xffffffff, "tiles": (ident >> 32) & 0xffff, "sm": (ident >> 48) & 0xff,
            "hq": w[9] & 0xffffffff, "b": w[9] >> 32,
            "t0": w[W_T0], "t1": w[W_T1], "c": w[3:9],
        })
    return out


def pct(xs, q):
    """The q-quantile of xs (nearest rank), or None."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * (len(xs) - 1)))))]


def tile_fit(rows):
    """s + loop against the key tiles over the rounds `rows` ((record,
    phases) pairs) by least squares: {per_tile_us, fixed_us}; None with
    fewer than two tile counts."""
    xs = [r["tiles"] for r, _ in rows]
    ys = [p[2] + p[3] for _, p in rows]
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
             sum((x - mx) ** 2 for x in xs))
    return {"per_tile_us": slope, "fixed_us": my - slope * mx}


def tile_groups(by, most):
    """The rounds' phases `by` key-tile count ({count: [phases, ...]}) in at
    most `most` rows: neighbouring counts pooled into equal runs where there
    are more. Each row: [first count, last count, rounds, median of each
    consumer phase]."""
    counts = sorted(by)
    per = max(1, -(-len(counts) // max(1, most)))  # counts per row, rounded up
    out = []
    for i in range(0, len(counts), per):
        run_ = counts[i:i + per]
        ps = [p for t in run_ for p in by[t]]
        out.append([run_[0], run_[-1], len(ps)] +
                   [statistics.median(p[k] for p in ps) for k in range(len(CONSUMER_PHASES))])
    return out


def summarize(records, bins=20, events_us=None, tile_rows=16):
    """The summary of one call's decoded records (see the module's text)."""
    cons = [r for r in records if r["kind"] == CONSUMER and r["t1"] and r["c"][5]]
    prod = [r for r in records if r["kind"] == PRODUCER and r["t1"] and r["c"][4]]
    if not cons:
        raise ValueError("no complete consumer round in the records")
    # The clock: every complete round's cycles over its nanoseconds.
    cycles = sum(r["c"][5] - r["c"][0] for r in cons)
    ns = sum(r["t1"] - r["t0"] for r in cons)
    if ns <= 0 or cycles <= 0:
        raise ValueError("the rounds' timer or clock did not advance")
    per_us = cycles / ns * 1e3  # cycles per microsecond (MHz)
    start = min(r["t0"] for r in cons + prod)
    end = max(r["t1"] for r in cons + prod)
    s = {
        "span_us": (end - start) / 1e3,
        "events_us": events_us,
        "clock_mhz": per_us,
        "blocks": len({r["block"] for r in cons}),
        "rounds": len(cons),
        "max_rounds_per_block": max(
            sum(1 for r in cons if r["block"] == b) for b in {r["block"] for r in cons}),
    }

    def phases(r):
        c = r["c"]
        if r["tiles"] == 0:
            return None
        return [(c[i + 1] - c[i]) / per_us for i in range(5)]

    rows = [(r, phases(r)) for r in cons]
    rows = [(r, p) for r, p in rows if p is not None]
    total = sum(sum(p) for _, p in rows) or 1.0
    s["consumer"] = {
        name: {"median_us": pct([p[i] for _, p in rows], 0.5),
               "p90_us": pct([p[i] for _, p in rows], 0.9),
               "share": sum(p[i] for _, p in rows) / total}
        for i, name in enumerate(CONSUMER_PHASES)}
    s["per_tile_us"] = pct([(p[2] + p[3]) / r["tiles"] for r, p in rows], 0.5)
    by_tiles = {}
    for r, p in rows:
        by_tiles.setdefault(r["tiles"], []).append(p)
    s["by_tiles"] = {
        str(t): {"rounds": len(ps),
                 **{name: statistics.median(p[i] for p in ps)
                    for i, name in enumerate(CONSUMER_PHASES)}}
        for t, ps in sorted(by_tiles.items())}
    s["tile_fit"] = tile_fit(rows)
    s["tile_groups"] = tile_groups(by_tiles, tile_rows)
    if prod:
        pp = [[(r["c"][2] - r["c"][0]) / per_us, (r["c"][3] - r["c"][2]) / per_us,
               (r["c"][4] - r["c"][3]) / per_us] for r in prod if r["tiles"] > 0]
        s["producer"] = {name: {"median_us": pct([p[i] for p in pp], 0.5),
                                "p90_us": pct([p[i] for p in pp], 0.9)}
                         for i, name in enumerate(PRODUCER_PHASES)}
    # The timeline: each consumer round's points on the global timer (its
    # start plus cycles at the common clock), then per bin the share of
    # each state among the blocks.
    width = (end - start) / bins if bins > 0 else 0
    states = ("wait", "compute", "store", "idle")
    timeline = []
    if width > 0:
        blocks = sorted({r["block"] for r in cons})
        busy = [[0.0] * 3 for _ in range(bins)]  # ns per state per bin, all blocks
        for r, p in rows:
            at = [r["t0"] + (r["c"][i] - r["c"][0]) / per_us * 1e3 for i in range(6)]
            spans = [(at[0], at[2], 0), (at[2], at[4], 1), (at[4], at[5], 2)]
            for a, b2, k in spans:
                for i in range(bins):
                    lo, hi = start + i * width, start + (i + 1) * width
                    busy[i][k] += max(0.0, min(b2, hi) - max(a, lo))
        for i in range(bins):
            shares = [busy[i][k] / (width * len(blocks)) for k in range(3)]
            timeline.append({"from_us": i * width / 1e3,
                             **{states[k]: shares[k] for k in range(3)},
                             "idle": max(0.0, 1.0 - sum(shares))})
    s["timeline"] = timeline
    # The ramp and the tail per block: from the call's start to the block's
    # first round, from its last round's end to the call's end.
    firsts, lasts = {}, {}
    for r in cons:
        firsts[r["block"]] = min(firsts.get(r["block"], r["t0"]), r["t0"])
        lasts[r["block"]] = max(lasts.get(r["block"], r["t1"]), r["t1"])
    tails = [(end - t) / 1e3 for t in lasts.values()]
    s["tail_us"] = {"median": pct(tails, 0.5), "max": max(tails)}
    s["ramp_us"] = {"median": pct([(t - start) / 1e3 for t in firsts.values()], 0.5),
                    "max": max((t - start) / 1e3 for t in firsts.values())}
    return s


def fmt(x, spec="7.2f"):
    return format(x, spec) if isinstance(x, (int, float)) else "      -"


def print_summary(name, s):
    ev = f", events {s['events_us']:.1f} us" if s.get("events_us") else ""
    print(f"== {name}: span {s['span_us']:.1f} us by the global timer{ev}; "
          f"clock {s['clock_mhz']:.0f} MHz; {s['blocks']} blocks, {s['rounds']} rounds "
          f"(at most {s['max_rounds_per_block']} per block); ramp median "
          f"{s['ramp_us']['median']:.2f} / max {s['ramp_us']['max']:.2f} us, tail median "
          f"{s['tail_us']['median']:.2f} / max {s['tail_us']['max']:.2f} us")
    print(f"  consumer 0 per round (us)       median      p90   share")
    for name_, v in s["consumer"].items():
        print(f"  {name_:<28} {fmt(v['median_us'], '8.2f')} {fmt(v['p90_us'], '8.2f')}"
              f"   {100 * v['share']:5.1f}%")
    print(f"  per key tile (s + loop over tiles): {fmt(s['per_tile_us'], '.3f')} us")
    fit = s.get("tile_fit")
    if fit:
        print(f"  s + loop fitted to the key tiles: {fit['per_tile_us']:.3f} us per tile, "
              f"plus {fit['fixed_us']:.2f} us per item")
    else:
        print("  s + loop fitted to the key tiles: no fit (one tile count)")
    print("  by key tiles: rounds, then median us of " + " / ".join(CONSUMER_PHASES))
    for g in s["tile_groups"]:
        tiles = str(g[0]) if g[0] == g[1] else f"{g[0]}-{g[1]}"
        print(f"  {tiles:>9} tiles {g[2]:6d}   " +
              " / ".join(fmt(v, '.2f').strip() for v in g[3:]))
    if "producer" in s:
        print("  producer per round (us)          median      p90")
        for name_, v in s["producer"].items():
            print(f"  {name_:<28} {fmt(v['median_us'], '8.2f')} {fmt(v['p90_us'], '8.2f')}")
    if s["timeline"]:
        print("  timeline: from (us), then % of blocks waiting / computing / storing / idle")
        for b in s["timeline"]:
            print(f"  {b['from_us']:8.1f}   {100 * b['wait']:5.1f} {100 * b['compute']:5.1f} "
                  f"{100 * b['store']:5.1f} {100 * b['idle']:5.1f}")


def run(a):
    import ctypes

    import torch

    from kseek_abi import Kernel, Timer, load_scenarios, make_inputs, select

    kernel = Kernel(a.lib)
    lib = kernel.lib
    if not hasattr(lib, "kseek_fa_trace_layout"):
        sys.exit(f"item_trace.py: {a.lib} has no kseek_fa_trace_layout: build hopper.cu "
                 "with -DKSEEK_FA_TRACE=1")
    blocks, rounds, words = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    lib.kseek_fa_trace_layout(ctypes.byref(blocks), ctypes.byref(rounds), ctypes.byref(words))
    n_words = blocks.value * rounds.value * 2 * words.value
    buf = (ctypes.c_ulonglong * n_words)()
    timer = Timer(samples=1, warmup=2, pad_us=a.pad_us)
    out = {}
    for sc in select(load_scenarios(), a.scenarios):
        p = sc["params"]
        tensors = make_inputs(p, seed=1)
        fn = kernel.bind(p, tensors)
        for _ in range(2):
            fn()
        torch.cuda.synchronize()
        calls = []
        for _ in range(a.calls):
            rc = lib.kseek_fa_trace_reset()
            if rc != 0:
                sys.exit(f"item_trace.py: kseek_fa_trace_reset: CUDA error {rc}")
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            timer._flush()
            start.record()
            fn()
            end.record()
            end.synchronize()
            rc = lib.kseek_fa_trace_read(buf)
            if rc != 0:
                sys.exit(f"item_trace.py: kseek_fa_trace_read: CUDA error {rc}")
            recs = []
            for i in range(blocks.value * rounds.value * 2):
                w = buf[i * words.value:(i + 1) * words.value]
                if w[0] == 0 and w[1] == 0:
                    continue
                blk, rest = divmod(i, rounds.value * 2)
                recs.append([blk, rest // 2, rest % 2 + 1] + list(w))
            raw = {"scenario": sc["name"], "layout": [blocks.value, rounds.value, words.value],
                   "events_us": start.elapsed_time(end) * 1e3, "records": recs}
            calls.append((summarize(decode(raw), a.bins, raw["events_us"], a.tile_rows), raw))
        calls.sort(key=lambda c: c[0]["span_us"])
        summary, raw = calls[len(calls) // 2]
        print_summary(sc["name"], summary)
        out[sc["name"]] = summary
        if a.raw:
            os.makedirs(a.raw, exist_ok=True)
            with open(os.path.join(a.raw, sc["name"] + ".json"), "w") as f:
                json.dump(raw, f)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parse", help="a raw record file that --raw wrote: print it again")
    ap.add_argument("--lib", help="hopper.cu built with -DKSEEK_FA_TRACE=1")
    ap.add_argument("--scenarios", help="scenario names, comma-separated")
    ap.add_argument("--calls", type=int, default=3,
                    help="traced calls per scenario; the one of median span is shown (default 3)")
    ap.add_argument("--pad-us", type=float, default=300.0,
                    help="GPU spin after the L2 flush before each call (default 300)")
    ap.add_argument("--bins", type=int, default=20, help="timeline bins (default 20; 0: none)")
    ap.add_argument("--tile-rows", type=int, default=16,
                    help="rows of the by-key-tiles table at most (default 16)")
    ap.add_argument("--raw", help="a folder for each scenario's records (JSON)")
    ap.add_argument("--json", help="the summaries as JSON into this file ('-': stdout)")
    a = ap.parse_args()
    if a.tile_rows < 1:
        ap.error("--tile-rows must be at least 1")
    if a.parse:
        try:
            with open(a.parse) as f:
                raw = json.load(f)
            summary = summarize(decode(raw), a.bins, raw.get("events_us"), a.tile_rows)
        except (OSError, ValueError, KeyError, TypeError) as e:
            sys.exit(f"item_trace.py: cannot read the records of {a.parse}: {e}")
        out = {raw.get("scenario", a.parse): summary}
        if a.json != "-":
            print_summary(raw.get("scenario", a.parse), summary)
    else:
        if not a.lib or not a.scenarios:
            ap.error("--lib and --scenarios (or --parse FILE)")
        if a.calls < 1:
            ap.error("--calls must be at least 1")
        out = run(a)
    if a.json == "-":
        json.dump(out, sys.stdout, indent=1)
        print()
    elif a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
