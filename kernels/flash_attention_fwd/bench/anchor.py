#!/usr/bin/env python3
"""Anchor benchmark for flash_attention_fwd: a candidate beside PyTorch SDPA.

Loads a candidate kernel library (built with the harness's flags, e.g. by
`kseek compile --target sm_90a --json KERNEL`) and, for each scenario of
task.json, runs it in this one process beside SDPA's cuDNN and FLASH
(FlashAttention-2) backends on identical inputs. Our BSHD tensors are passed
to SDPA as strided BHSD views (q.transpose(1, 2)); causal masking uses
is_causal when seqlen_q == seqlen_k and causal_lower_right otherwise; GQA
uses enable_gqa=True. A backend that refuses a scenario is recorded as
"n/a" with the first line of its error. Each backend's O is compared with
the candidate's (rel L2) so a wrong number is visible.

Timing is the same for all three (see kseek_abi.Timer): warm-up, an L2 flush
before every sample, CUDA events around one call, the median.

Prints per scenario TFLOP/s of candidate, cuDNN and FA2 and the ratios, then
the geometric-mean ratios candidate/cuDNN and candidate/FA2 over the FA3 grid
(grid_* scenarios) and over the whole run (scenarios where the backend ran).
With --harness-json (the output of `kseek eval --json` on the same
candidate) it also prints, per scenario, the harness's median beside this
script's and their ratio. Writes everything as JSON to --out (default
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

BACKENDS = (("cudnn", SDPBackend.CUDNN_ATTENTION),
            ("fa2", SDPBackend.FLASH_ATTENTION))


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


def first_line(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


def geomean(xs):
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, spec="8.2f"):
    return format(x, spec) if isinstance(x, (int, float)) else f"{'n/a':>8s}"


def bench_scenario(cand, s, timer, seed):
    p = s["params"]
    fl = flops(p)
    q, k, v, o, lse = make_inputs(p, seed)
    row = {"name": s["name"], "params": p, "flops": fl}
    launch = cand.bind(p, (q, k, v, o, lse))
    try:
        launch()
        torch.cuda.synchronize()
        ms, n = timer.median_ms(launch)
        row.update(candidate_ms=ms, candidate_samples=n,
                   candidate_tflops=fl / (ms * 1e-3) / 1e12)
    except Exception as e:  # a failing candidate is a result, not a crash
        row.update(candidate_ms=None, candidate_error=first_line(e))
        return row
    for name, backend in BACKENDS:
        fn = sdpa_callable(backend, p, q, k, v)
        try:
            out = fn()
            torch.cuda.synchronize()
            rel, _ = errors(out.transpose(1, 2).float().nan_to_num(0.0),
                            o.float())
            ms, n = timer.median_ms(fn)
            del out
            row.update({f"{name}_ms": ms, f"{name}_samples": n,
                        f"{name}_tflops": fl / (ms * 1e-3) / 1e12,
                        f"{name}_rel_l2_vs_candidate": rel,
                        f"candidate_over_{name}": ms / row["candidate_ms"]})
        except Exception as e:
            row.update({f"{name}_ms": "n/a", f"{name}_error": first_line(e)})
    del q, k, v, o, lse
    return row


def summarize(rows):
    out = {}
    for label, pick in (("fa3_grid", lambda r: r["name"].startswith("grid_")),
                        ("all", lambda r: True)):
        part = [r for r in rows if pick(r)]
        out[label] = {}
        for name, _ in BACKENDS:
            ratios = [r.get(f"candidate_over_{name}") for r in part]
            ratios = [x for x in ratios if isinstance(x, float)]
            out[label][f"candidate_over_{name}"] = geomean(ratios)
            out[label][f"n_{name}"] = len(ratios)
        out[label]["n"] = len(part)
    return out


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


def main():
    ap = argparse.ArgumentParser(
        description="candidate vs SDPA cuDNN and FA2 on task.json scenarios")
    ap.add_argument("--lib", required=True,
                    help="candidate shared library (kseek compile --json)")
    ap.add_argument("--scenarios", help="comma-separated scenario names")
    ap.add_argument("--grid-only", action="store_true",
                    help="only the FA3 grid (grid_* scenarios)")
    Timer.add_arguments(ap, samples=30, budget_s=1.5)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--harness-json",
                    help="kseek eval --json output on the same candidate")
    ap.add_argument("--out", help="JSON output (default $OUT/anchor.json)")
    args = ap.parse_args()

    out_path = args.out or os.path.join(os.environ.get("OUT", "."),
                                        "anchor.json")
    scenarios = select(load_scenarios(), args.scenarios, args.grid_only)
    cand = Kernel(args.lib)
    timer = Timer.from_args(args)
    dev = torch.cuda.get_device_name(0)
    print(f"device {dev}; torch {torch.__version__}; cuDNN "
          f"{torch.backends.cudnn.version()}; candidate {args.lib}"
          + (f"; GPU spin {args.pad_us:g} us before each sample"
             if args.pad_us > 0 else ""))
    print(f"{'scenario':52s} {'cand':>8s} {'cuDNN':>8s} {'FA2':>8s} "
          f"{'c/cuDNN':>8s} {'c/FA2':>8s}   (TFLOP/s)")
    rows = []
    t0 = time.time()
    for s in scenarios:
        r = bench_scenario(cand, s, timer, args.seed)
        rows.append(r)
        notes = [f"{n}: {r[n + '_error']}" for n, _ in BACKENDS
                 if n + "_error" in r]
        notes += [f"{n} rel_l2 vs candidate {r[n + '_rel_l2_vs_candidate']:.2e}"
                  for n, _ in BACKENDS
                  if r.get(n + "_rel_l2_vs_candidate", 0) > 2e-2]
        if "candidate_error" in r:
            notes.append("candidate: " + r["candidate_error"])
        print(f"{s['name']:52s} {fmt(r.get('candidate_tflops'))} "
              f"{fmt(r.get('cudnn_tflops'))} {fmt(r.get('fa2_tflops'))} "
              f"{fmt(r.get('candidate_over_cudnn'), '8.3f')} "
              f"{fmt(r.get('candidate_over_fa2'), '8.3f')}"
              + ("   " + "; ".join(notes) if notes else ""), flush=True)
        torch.cuda.empty_cache()

    summary = summarize(rows)
    print()
    for label, sm in summary.items():
        for name, _ in BACKENDS:
            g = sm[f"candidate_over_{name}"]
            print(f"geomean candidate/{name} over {label}: "
                  f"{'n/a' if g is None else format(g, '.3f')} "
                  f"({sm['n_' + name]} of {sm['n']} scenarios)")
    result = {"device": dev, "torch": torch.__version__,
              "cudnn": torch.backends.cudnn.version(),
              "candidate": args.lib, "seed": args.seed,
              "timing": {"samples_max": args.samples, "warmup": args.warmup,
                         "budget_s": args.budget_s, "statistic": "median",
                         "l2_flush_bytes": timer.flush_buf.numel()},
              "seconds": time.time() - t0,
              "scenarios": rows, "summary": summary}
    if args.harness_json:
        result["harness_comparison"] = compare_harness(rows,
                                                       args.harness_json)
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
