#!/usr/bin/env python3
"""Correctness of A/B builds before they are timed (bench/sm90r_ab.py times without checking): each build's
flash_attn_func on a few shapes against a float64 reference, by the FlashAttention rule (max error at most
twice that of PyTorch's bf16 SDPA math on the same inputs, plus 1e-3), and finite. Fresh random inputs per
shape; the builds allocate their outputs (the C++ suites are where outputs are poisoned before each launch).
One line per (build, shape), "FAIL" where the rule does not hold; exit status 1 if any failed.

    build_check.py --builds base,ctrl,alt --hdims 128 [--shapes 1000:1000:0,2048:2048:1,...]

A shape is seqlen_q:seqlen_k:causal (causal shapes square: SDPA's causal mask is top-left aligned); at most
four heads and four sequences, so that the float64 reference stays small.
"""
import argparse
import sys

import torch
import torch.nn.functional as F

from sm90r_ab import head_dims, import_builds


def reference(q, k, v, causal):
    """Attention in float64 (the tensors are batch, seqlen, heads, d), bottom-right causal alignment."""
    q64, k64, v64 = (t.double().transpose(1, 2) for t in (q, k, v))
    s = q64 @ k64.transpose(-1, -2) / q.shape[-1] ** 0.5
    if causal:
        sq, sk = q.shape[1], k.shape[1]
        rows = torch.arange(sq, device=q.device)[:, None] + (sk - sq)
        s = s.masked_fill(torch.arange(sk, device=q.device)[None, :] > rows, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v64).transpose(1, 2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--builds", required=True)
    parser.add_argument("--hdims", default="128", help="comma list of D or DxDV (e.g. 192x128)")
    parser.add_argument("--shapes", default="1000:1000:0,1024:1024:1,2048:2048:1,777:3000:0,4096:4096:0")
    args = parser.parse_args()
    impls = import_builds(args.builds, "flash_attn_func")
    failed = 0
    for d, dv in (head_dims(x) for x in args.hdims.split(",")):
        for shape in args.shapes.split(","):
            sq, sk, causal = (int(x) for x in shape.split(":"))
            heads = min(4, 2048 // d)
            batch = max(1, min(4, 16384 // max(sq, sk)))
            q = torch.randn(batch, sq, heads, d, device="cuda", dtype=torch.bfloat16)
            k = torch.randn(batch, sk, heads, d, device="cuda", dtype=torch.bfloat16)
            v = torch.randn(batch, sk, heads, dv, device="cuda", dtype=torch.bfloat16)
            if causal and sq != sk:
                raise SystemExit("causal shapes must be square here (SDPA's causal is top-left aligned)")
            ref = reference(q, k, v, bool(causal))
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
                low = F.scaled_dot_product_attention(
                    q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                    is_causal=bool(causal) and sq == sk).transpose(1, 2)
            bound = 2 * (low.double() - ref).abs().max().item() + 1e-3
            for name, fn in impls.items():
                out = fn(q, k, v, causal=bool(causal))
                err = (out.double() - ref).abs().max().item()
                ok = err <= bound and torch.isfinite(out).all().item()
                failed += not ok
                dims = f"d{d}" if dv == d else f"d{d}x{dv}"
                print(f"{'ok  ' if ok else 'FAIL'} {name} {dims} {sq}x{sk} causal={causal} "
                      f"max_err {err:.3e} bound {bound:.3e}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
