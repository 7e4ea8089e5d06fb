#!/usr/bin/env python3
"""Writes the "scenarios" array of task.json (flash_attention_fwd).

Every scenario is explicit data in task.json; this script is how the list
was made and how it is changed. Run it from anywhere:

    python3 kernels/flash_attention_fwd/gen_scenarios.py          # rewrite
    python3 kernels/flash_attention_fwd/gen_scenarios.py --check  # compare

It prints the number of scenarios per family and the suite's FLOPs. Only
the Python standard library is used.
"""

import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TASK = os.path.join(HERE, "task.json")

HEAD_DIMS = (64, 128, 256)  # the FA3 grid's
# The task's rule (task.json, params.head_dim): a multiple of 8 from 64 to
# 256, the head dims models use; the scenarios add these others.
OTHER_HEAD_DIMS = (80, 96, 160, 192)
DTYPES = ("bf16", "f16")
# Largest tensor a scenario may allocate, in bytes (keeps the device sane).
MAX_TENSOR_BYTES = 512 << 20


def scenario(family, name, batch, seqlen_q, seqlen_k, heads_q, heads_kv,
             head_dim, causal, dtype):
    return {
        "family": family,
        "name": name,
        "params": {
            "batch": batch,
            "seqlen_q": seqlen_q,
            "seqlen_k": seqlen_k,
            "heads_q": heads_q,
            "heads_kv": heads_kv,
            "head_dim": head_dim,
            "causal": 1 if causal else 0,
            "dtype": dtype,
        },
    }


def mask_name(causal):
    return "causal" if causal else "full"


def fa3_grid():
    # The FlashAttention-3 benchmark grid: batch * seqlen = 16384 and
    # heads * head_dim = 2048.
    for hd in HEAD_DIMS:
        for causal in (False, True):
            for s in (512, 1024, 2048, 4096, 8192, 16384):
                for dt in DTYPES:
                    yield scenario(
                        "grid", f"grid_hd{hd}_{mask_name(causal)}_s{s}_{dt}",
                        16384 // s, s, s, 2048 // hd, 2048 // hd, hd, causal,
                        dt)


def grouped_query():
    # heads_q / heads_kv of 4, 8 and heads_q (multi-query).
    for hd in HEAD_DIMS:
        hq = 32
        for label, hkv in (("gqa4", hq // 4), ("gqa8", hq // 8), ("mqa", 1)):
            for causal in (False, True):
                for dt in DTYPES:
                    yield scenario(
                        "gqa",
                        f"{label}_hd{hd}_{mask_name(causal)}_s2048_{dt}",
                        2, 2048, 2048, hq, hkv, hd, causal, dt)


def ragged():
    # Lengths that are multiples of neither 64 nor 128.
    for s, batch in ((1000, 4), (3001, 2)):
        for hd in HEAD_DIMS:
            for causal in (False, True):
                for dt in DTYPES:
                    yield scenario(
                        "ragged",
                        f"ragged_s{s}_hd{hd}_{mask_name(causal)}_{dt}",
                        batch, s, s, 2048 // hd, 2048 // hd, hd, causal, dt)
    for s, batch in ((100, 16), (4097, 1)):
        for causal in (False, True):
            for dt in DTYPES:
                yield scenario(
                    "ragged", f"ragged_s{s}_hd128_{mask_name(causal)}_{dt}",
                    batch, s, s, 16, 16, 128, causal, dt)


def chunked_prefill():
    # A chunk of queries against a longer key sequence (seqlen_q < seqlen_k).
    pairs = ((256, 16384, 1), (512, 16384, 1), (2048, 16384, 1),
             (1000, 8192, 2), (333, 4097, 2))
    for sq, sk, batch in pairs:
        for hd in HEAD_DIMS:
            for causal in (False, True):
                yield scenario(
                    "prefill",
                    f"prefill_q{sq}_k{sk}_hd{hd}_{mask_name(causal)}_bf16",
                    batch, sq, sk, 2048 // hd, 2048 // hd, hd, causal, "bf16")
        yield scenario(
            "prefill", f"prefill_q{sq}_k{sk}_hd128_gqa4_causal_f16",
            batch, sq, sk, 16, 4, 128, True, "f16")


def decode():
    # 1 to 16 queries against long keys.
    for sq in (1, 2, 8, 16):
        for hd in HEAD_DIMS:
            yield scenario(
                "decode", f"decode_q{sq}_k8192_hd{hd}_causal_bf16",
                8, sq, 8192, 2048 // hd, 2048 // hd, hd, True, "bf16")
    for hd in HEAD_DIMS:
        yield scenario(
            "decode", f"decode_q1_k16384_hd{hd}_full_f16",
            4, 1, 16384, 2048 // hd, 2048 // hd, hd, False, "f16")
        yield scenario(
            "decode", f"decode_q4_k16000_hd{hd}_gqa8_causal_bf16",
            4, 4, 16000, 32, 4, hd, True, "bf16")


def queries_beyond_keys():
    # seqlen_q > seqlen_k: under causal masking the first seqlen_q - seqlen_k
    # query rows see no key (O = 0, LSE = -inf).
    for sq, sk, batch in ((1024, 512, 4), (3001, 1000, 1), (128, 1, 8)):
        for hd in HEAD_DIMS:
            yield scenario(
                "qlong", f"qlong_q{sq}_k{sk}_hd{hd}_causal_bf16",
                batch, sq, sk, 2048 // hd, 2048 // hd, hd, True, "bf16")
    for hd in HEAD_DIMS:
        yield scenario(
            "qlong", f"qlong_q1024_k512_hd{hd}_full_f16",
            4, 1024, 512, 2048 // hd, 2048 // hd, hd, False, "f16")


def extremes():
    # Many short sequences.
    for batch, s in ((512, 32), (2048, 8), (256, 65)):
        for hd in HEAD_DIMS:
            for causal in (False, True):
                dt = "bf16" if causal else "f16"
                yield scenario(
                    "many_short",
                    f"many_short_b{batch}_s{s}_hd{hd}_{mask_name(causal)}_{dt}",
                    batch, s, s, 2048 // hd, 2048 // hd, hd, causal, dt)
    # One long single-head sequence.
    for hd in HEAD_DIMS:
        for causal in (False, True):
            yield scenario(
                "long_single",
                f"long_single_s32768_h1_hd{hd}_{mask_name(causal)}_bf16",
                1, 32768, 32768, 1, 1, hd, causal, "bf16")
    yield scenario(
        "long_single", "long_single_s32768_h1_hd128_causal_f16",
        1, 32768, 32768, 1, 1, 128, True, "f16")
    # heads_q of 1 with a batch.
    for hd in HEAD_DIMS:
        for causal in (False, True):
            yield scenario(
                "heads1", f"heads1_b8_s2048_hd{hd}_{mask_name(causal)}_bf16",
                8, 2048, 2048, 1, 1, hd, causal, "bf16")


def other_head_dims():
    # The head dims beyond the FA3 grid's in several classes: a grid of
    # their own (heads 16 below head_dim 128, 8 above; batch * seqlen =
    # 16384), GQA, ragged lengths, chunked prefill and many short
    # sequences.
    for hd in OTHER_HEAD_DIMS:
        heads = 16 if hd < 128 else 8
        for causal in (False, True):
            for s in (1024, 4096, 16384):
                yield scenario(
                    "dims", f"dims_hd{hd}_{mask_name(causal)}_s{s}_bf16",
                    16384 // s, s, s, heads, heads, hd, causal, "bf16")
    for hd in OTHER_HEAD_DIMS:
        for causal in (False, True):
            dt = "f16" if causal else "bf16"
            yield scenario(
                "gqa", f"gqa4_hd{hd}_{mask_name(causal)}_s2048_{dt}",
                2, 2048, 2048, 32, 8, hd, causal, dt)
    for hd in (96, 192):
        for causal in (False, True):
            for dt in DTYPES:
                yield scenario(
                    "ragged", f"ragged_s3001_hd{hd}_{mask_name(causal)}_{dt}",
                    2, 3001, 3001, 8, 8, hd, causal, dt)
    for hd in OTHER_HEAD_DIMS:
        yield scenario(
            "prefill", f"prefill_q512_k16384_hd{hd}_causal_bf16",
            1, 512, 16384, 16 if hd < 128 else 8, 16 if hd < 128 else 8, hd,
            True, "bf16")
    for hd in (80, 160):
        yield scenario(
            "many_short", f"many_short_b512_s32_hd{hd}_full_f16",
            512, 32, 32, 16 if hd < 128 else 8, 16 if hd < 128 else 8, hd,
            False, "f16")


def decode_family():
    # One query per sequence against a KV cache: batch 1 to 1024, seqlen_k
    # 128 to 32768 (batch * seqlen_k at most 131072, i.e. 512 MB of K at
    # 16 KV heads), 16 query heads over 16, 4, 2 or 1 KV heads (GQA 1, 4,
    # 8, 16); head_dim 128, plus 64, 96 and 256 at GQA 8.
    pairs = ((1, 32768), (4, 16384), (16, 4096), (64, 2048), (256, 512),
             (1024, 128))
    for batch, sk in pairs:
        for group in (1, 4, 8, 16):
            yield scenario(
                "decode",
                f"decode_b{batch}_k{sk}_gqa{group}_hd128_bf16",
                batch, 1, sk, 16, 16 // group, 128, False, "bf16")
    for hd in (64, 96, 256):
        for batch, sk in ((1, 32768), (64, 2048)):
            yield scenario(
                "decode", f"decode_b{batch}_k{sk}_gqa8_hd{hd}_f16",
                batch, 1, sk, 16, 2, hd, False, "f16")


FAMILIES = (fa3_grid, grouped_query, ragged, chunked_prefill, decode,
            queries_beyond_keys, extremes, other_head_dims, decode_family)


def flops(p):
    sq, sk = p["seqlen_q"], p["seqlen_k"]
    if p["causal"]:
        if sq <= sk:
            pairs = sq * (sk - sq) + sq * (sq + 1) // 2
        else:
            pairs = sk * (sk + 1) // 2
    else:
        pairs = sq * sk
    return 4 * p["batch"] * p["heads_q"] * p["head_dim"] * pairs


def validate(scenarios):
    names = set()
    for s in scenarios:
        p = s["params"]
        assert s["name"] not in names, "duplicate name " + s["name"]
        names.add(s["name"])
        assert p["heads_q"] % p["heads_kv"] == 0, s["name"]
        assert p["head_dim"] % 8 == 0 and 64 <= p["head_dim"] <= 256, \
            s["name"]
        assert p["dtype"] in DTYPES, s["name"]
        for dims in ((p["batch"], p["seqlen_q"], p["heads_q"]),
                     (p["batch"], p["seqlen_k"], p["heads_kv"])):
            n = dims[0] * dims[1] * dims[2] * p["head_dim"] * 2
            assert n <= MAX_TENSOR_BYTES, s["name"]
    assert len(scenarios) >= 182, len(scenarios)


def format_task(task):
    # Two-space JSON with one scenario per line, so the list reads as a
    # table and diffs stay small.
    body = {k: v for k, v in task.items() if k != "scenarios"}
    text = json.dumps(body, indent=2)
    lines = [json.dumps(s, separators=(", ", ": "))
             for s in task["scenarios"]]
    return (text[:-2] + ',\n  "scenarios": [\n    ' +
            ",\n    ".join(lines) + "\n  ]\n}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when task.json differs from the generated list")
    args = ap.parse_args()

    generated = [s for family in FAMILIES for s in family()]
    validate(generated)
    with open(TASK) as f:
        task = json.load(f)
    task["params"]["head_dim"] = {
        "min": 64, "max": 256, "multiple_of": 8,
        "description": "a multiple of 8 from 64 to 256"}
    task["scenarios"] = [{"name": s["name"], "params": s["params"]}
                         for s in generated]
    text = format_task(task)

    counts = collections.Counter(s["family"] for s in generated)
    tflop = collections.Counter()
    for s in generated:
        tflop[s["family"]] += flops(s["params"]) / 1e12
    for fam in counts:
        print(f"{fam:12s} {counts[fam]:4d} scenarios {tflop[fam]:8.2f} TFLOP")
    print(f"{'total':12s} {len(generated):4d} scenarios "
          f"{sum(tflop.values()):8.2f} TFLOP per pass")

    with open(TASK) as f:
        current = f.read()
    if args.check:
        if current != text:
            print("task.json differs from gen_scenarios.py", file=sys.stderr)
            return 1
        return 0
    if current != text:
        with open(TASK, "w") as f:
            f.write(text)
        print("wrote", TASK)
    return 0


if __name__ == "__main__":
    sys.exit(main())
