#!/usr/bin/env python3
"""Measures the errors that set flash_attention_fwd's tolerances.

For each selected scenario and seed it runs, on identical inputs:
  - the task's reference (reference.cu, fp32 accumulation): what the harness
    compares candidates with;
  - attention in fp64 (torch, on the GPU);
  - the baseline (baseline.cu, fp32 softmax and P V on CUDA cores);
  - PyTorch SDPA's FLASH (FlashAttention-2) and cuDNN backends: careful
    tensor-core kernels that round P to 16 bits before P V. Their LSE comes
    from aten's flash op where it applies (heads_q == heads_kv and no
    bottom-right shift, i.e. not causal or seqlen_q == seqlen_k).
and records each kernel's error against the reference and against fp64,
the way the harness measures it (relative L2 over finite elements, largest
absolute error). It prints the worst value per kernel, output and dtype,
and the suggested tolerance: 4x the worst error against the reference over
the baseline, FA2 and cuDNN, rounded up to 1, 2 or 5 times a power of ten.

Libraries are built with the harness's flags, e.g.
    kseek compile --target sm_90a --json kernels/flash_attention_fwd/reference.cu
Usage (on the device):
    python3 measure_tolerance.py --reference REF.so --baseline BASE.so \
        [--seeds 3] [--max-tflop 0.25] [--scenarios a,b] [--out FILE]
"""

import argparse
import collections
import json
import math
import os
import sys
import time

import torch
from torch.nn.attention import sdpa_kernel

from anchor import BACKENDS, sdpa_callable
from kseek_abi import Kernel, errors, flops, load_scenarios, make_inputs, \
    select


def attention_fp64(p, q, k, v):
    """O [b, sq, hq, d] and LSE [b, hq, sq] in float64."""
    b, sq, sk = p["batch"], p["seqlen_q"], p["seqlen_k"]
    hq, hkv, d = p["heads_q"], p["heads_kv"], p["head_dim"]
    group = hq // hkv
    o = torch.empty(b, sq, hq, d, dtype=torch.float64, device=q.device)
    lse = torch.empty(b, hq, sq, dtype=torch.float64, device=q.device)
    # seen[i, j]: query row i sees key j (bottom-right causal alignment).
    i = torch.arange(sq, device=q.device).view(sq, 1)
    j = torch.arange(sk, device=q.device).view(1, sk)
    seen = j <= i + (sk - sq) if p["causal"] else \
        torch.ones(sq, sk, dtype=torch.bool, device=q.device)
    # Heads per step so that the score matrix stays under ~1 GB.
    step = max(1, min(hq, (1 << 27) // (sq * sk)))
    for bi in range(b):
        for h0 in range(0, hq, step):
            hs = torch.arange(h0, min(hq, h0 + step), device=q.device)
            qh = q[bi, :, hs].double().permute(1, 0, 2)          # [h, sq, d]
            kh = k[bi, :, hs // group].double().permute(1, 0, 2)  # [h, sk, d]
            vh = v[bi, :, hs // group].double().permute(1, 0, 2)
            s = torch.matmul(qh, kh.transpose(1, 2)) / math.sqrt(d)
            s = s.masked_fill(~seen, -math.inf)
            m = s.amax(dim=2, keepdim=True)
            m_safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
            e = torch.exp(s - m_safe)
            l = e.sum(dim=2, keepdim=True)
            oh = torch.matmul(e, vh) / torch.where(l > 0, l,
                                                   torch.ones_like(l))
            o[bi, :, hs] = oh.permute(1, 0, 2)
            lse[bi, hs] = (m_safe + torch.log(l)).squeeze(2)
    return o, lse


def flash_lse(p, q, k, v):
    """LSE from aten's flash op, or None where it does not apply."""
    if p["heads_q"] != p["heads_kv"] or (
            p["causal"] and p["seqlen_q"] != p["seqlen_k"]):
        return None
    out = torch.ops.aten._scaled_dot_product_flash_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
        0.0, bool(p["causal"]))
    return out[1]


def nice_ceiling(x):
    """x rounded up to 1, 2 or 5 times a power of ten."""
    if not x or not math.isfinite(x):
        return x
    e = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * 10 ** e >= x:
            return float(f"{m * 10 ** e:.0e}")
    return x


def main():
    ap = argparse.ArgumentParser(description="measure attention error sizes")
    ap.add_argument("--reference", required=True, help="reference.cu library")
    ap.add_argument("--baseline", required=True, help="baseline.cu library")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-tflop", type=float, default=0.25,
                    help="skip scenarios above this many TFLOP per call")
    ap.add_argument("--scenarios", help="comma-separated scenario names")
    ap.add_argument("--out", help="JSON output (default $OUT/tolerance.json)")
    args = ap.parse_args()

    out_path = args.out or os.path.join(os.environ.get("OUT", "."),
                                        "tolerance.json")
    scenarios = [s for s in select(load_scenarios(), args.scenarios)
                 if args.scenarios or flops(s["params"]) <= args.max_tflop * 1e12]
    ref_k, base_k = Kernel(args.reference), Kernel(args.baseline)
    # worst[(kernel, against, tensor, dtype)] = [rel_l2, max_abs, where]
    worst = collections.defaultdict(lambda: [0.0, 0.0, ""])
    skipped = collections.Counter()
    t0 = time.time()
    print(f"{len(scenarios)} scenarios x {args.seeds} seeds on "
          f"{torch.cuda.get_device_name(0)}", flush=True)

    def record(kernel, against, tensor, dtype, out, ref, where):
        rel, mx = errors(out, ref)
        w = worst[(kernel, against, tensor, dtype)]
        if rel > w[0]:
            w[0], w[2] = rel, where
        w[1] = max(w[1], mx)

    for s in scenarios:
        p = s["params"]
        dt = p["dtype"]
        for seed in range(args.seeds):
            where = f"{s['name']} seed {seed}"
            q, k, v, o_ref, lse_ref = make_inputs(p, 1000 + seed)
            ref_k.bind(p, (q, k, v, o_ref, lse_ref))()
            o64, lse64 = attention_fp64(p, q, k, v)
            record("reference", "fp64", "o", dt, o_ref, o64, where)
            record("reference", "fp64", "lse", "f32", lse_ref, lse64, where)
            o_b, lse_b = torch.empty_like(o_ref), torch.empty_like(lse_ref)
            base_k.bind(p, (q, k, v, o_b, lse_b))()
            for against, (ro, rl) in (("reference", (o_ref, lse_ref)),
                                      ("fp64", (o64, lse64))):
                record("baseline", against, "o", dt, o_b, ro, where)
                record("baseline", against, "lse", "f32", lse_b, rl, where)
            for name, backend in BACKENDS:
                try:
                    out = sdpa_callable(backend, p, q, k, v)().transpose(1, 2)
                except Exception:
                    skipped[name] += 1
                    continue
                # SDPA leaves rows that see no key undefined; the task says 0.
                out = torch.where(torch.isfinite(lse_ref)[..., None]
                                  .permute(0, 2, 1, 3), out,
                                  torch.zeros_like(out))
                record(name, "reference", "o", dt, out, o_ref, where)
                record(name, "fp64", "o", dt, out, o64, where)
            try:
                with sdpa_kernel([BACKENDS[1][1]]):
                    lse_f = flash_lse(p, q, k, v)
            except Exception:
                lse_f = None
            if lse_f is not None:
                record("fa2", "reference", "lse", "f32", lse_f, lse_ref, where)
                record("fa2", "fp64", "lse", "f32", lse_f, lse64, where)
            del q, k, v, o_ref, lse_ref, o64, lse64, o_b, lse_b
        torch.cuda.empty_cache()
        print(f"  {s['name']} done ({time.time() - t0:.0f} s)", flush=True)

    print(f"\n{'kernel':10s} {'against':10s} {'tensor':6s} {'dtype':5s} "
          f"{'rel_l2':>10s} {'max_abs':>10s}  worst rel_l2 at")
    for (kern, against, tensor, dtype), (rel, mx, where) in sorted(
            worst.items()):
        print(f"{kern:10s} {against:10s} {tensor:6s} {dtype:5s} "
              f"{rel:10.3e} {mx:10.3e}  {where}")
    suggestion = {}
    for tensor, dtype in sorted({(t, d) for (_, _, t, d) in worst}):
        cands = [worst[(kern, "reference", tensor, dtype)]
                 for kern in ("baseline", "cudnn", "fa2")
                 if (kern, "reference", tensor, dtype) in worst]
        rel = max(c[0] for c in cands)
        mx = max(c[1] for c in cands)
        suggestion[f"{tensor}/{dtype}"] = {"rel_l2": nice_ceiling(4 * rel),
                                           "max_abs": nice_ceiling(4 * mx)}
    print("\nsuggested tolerance (4x worst vs reference over baseline, "
          "cuDNN, FA2):")
    for key, tol in suggestion.items():
        print(f"  {key}: rel_l2 {tol['rel_l2']:.0e}  max_abs "
              f"{tol['max_abs']:.0e}")
    if skipped:
        print("SDPA refusals:", dict(skipped))
    result = {"device": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "seeds": args.seeds,
              "scenarios": [s["name"] for s in scenarios],
              "worst": [{"kernel": k_, "against": a, "tensor": t, "dtype": d,
                         "rel_l2": w[0], "max_abs": w[1], "worst_at": w[2]}
                        for (k_, a, t, d), w in sorted(worst.items())],
              "suggested_tolerance": suggestion, "sdpa_refusals": skipped,
              "seconds": time.time() - t0}
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
