#!/usr/bin/env python3
"""The cuda_sm80 forward's kGeneral kernels (softcap, ALiBi) of two builds of the extension, side by side in
one process: package flashattn ("a", timed twice as the control a / a2) and flashattn_<TAG> ("b"). FA2 (SDPA)
has neither option, so this is an A/B of our own builds only. Timing as bench/compare.py (bench_ms), rounds
alternating the order a, b, a2 / a2, b, a. Session 14 (issue 4: TileShape::conditional_rescale on the
kGeneral table rows).

    PYTHONPATH=<dir with flashattn and flashattn_TAG> sm80_general_ab.py TAG ROUNDS ROWS
    ROWS: comma list of d:causal:seqlen:option with option softcap or alibi
"""
import importlib
import json
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/compare.py: bench_ms, the grid's batch and head counts)


def call(module, q, k, v, causal, option):
    heads = q.shape[2]
    alibi = (torch.tensor([2.0 ** (-8.0 * (i + 1) / heads) for i in range(heads)], device="cuda")
             if option == "alibi" else None)
    softcap = 30.0 if option == "softcap" else 0.0

    def run():
        with module.use_backend("cuda_sm80"):
            return module.flash_attn_func(q, k, v, causal=causal, softcap=softcap, alibi_slopes=alibi)
    return run


def main():
    tag, rounds = sys.argv[1], int(sys.argv[2])
    a_module = importlib.import_module("flashattn")
    b_module = importlib.import_module(f"flashattn_{tag}")
    for spec in sys.argv[3].split(","):
        hdim, causal, seqlen, option = spec.split(":")
        hdim, causal, seqlen = int(hdim), bool(int(causal)), int(seqlen)
        batch, heads = max(1, compare.TOKENS // seqlen), compare.HIDDEN // hdim
        torch.manual_seed(seqlen + hdim)
        q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        flop = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
        impls = {"a": call(a_module, q, k, v, causal, option), "b": call(b_module, q, k, v, causal, option)}
        with torch.no_grad():
            diff = (impls["a"]().float() - impls["b"]().float()).abs().max().item()
            readings = {"a": [], "b": [], "a2": []}
            order = ["a", "b", "a2"]
            for r in range(rounds):
                for name in (order if r % 2 == 0 else order[::-1]):
                    fn = impls["a" if name == "a2" else name]
                    fn()
                    torch.cuda.synchronize()
                    readings[name].append(round(flop / compare.bench_ms(fn) / 1e9, 1))
        med = {n: statistics.median(x) for n, x in readings.items()}
        print(json.dumps({"hdim": hdim, "causal": causal, "seqlen": seqlen, "option": option,
                          "max_diff_a_vs_b": round(diff, 4), "median": med,
                          "b_over_a": round(med["b"] / ((med["a"] + med["a2"]) / 2), 4),
                          "control_a2_over_a": round(med["a2"] / med["a"], 4)}), flush=True)
        del q, k, v, impls
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
