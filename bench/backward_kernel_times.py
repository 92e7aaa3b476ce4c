#!/usr/bin/env python3
"""One flashattn backward call per row inside an NVTX range "bwd_<row>", for a profiler to time its kernels.

    ncu --nvtx --nvtx-include "regex:bwd_.*/" --metrics gpu__time_duration.sum --csv \
        python3 bench/backward_kernel_times.py > times.csv

Rows: the standard grid's (16k tokens, hidden 2048) at the given head dims (D or DxDV, e.g. 192x128) and lengths,
--causal 0,1 (both, by default), bf16. --variants plain,general,dropout: each row also (or only) as the general
kernel with nothing to modify (ALiBi slopes of 0: the general path's own cost) and with dropout 0.1; the range
name ends in the variant.
"""

import argparse

import torch

from flashattn import _ops


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hdims", default="64,128")
    parser.add_argument("--seqlens", default="512,2048")
    parser.add_argument("--causal", default="0,1")
    parser.add_argument("--variants", default="plain")
    args = parser.parse_args()
    for dims in args.hdims.split(","):
        d, dv = (int(x) for x in (dims.split("x") if "x" in dims else (dims, dims)))
        for s in (int(x) for x in args.seqlens.split(",")):
            for causal in (bool(int(x)) for x in args.causal.split(",")):
                b, h = max(1, 16384 // s), 2048 // d
                q, k = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
                v, dout = (torch.randn(b, s, h, dv, device="cuda", dtype=torch.bfloat16) for _ in range(2))
                for variant in args.variants.split(","):
                    alibi = torch.zeros(h, device="cuda") if variant == "general" else None
                    p = 0.1 if variant == "dropout" else 0.0
                    out, lse, rng = _ops.fwd(q, k, v, None, causal, -1, -1, 0.0, alibi, p, None, False, 0)
                    torch.cuda.synchronize()
                    tag = "" if variant == "plain" else f"_{variant}"
                    with torch.cuda.nvtx.range(f"bwd_d{dims}_s{s}_{'causal' if causal else 'full'}{tag}"):
                        _ops.bwd(dout, q, k, v, out, lse, None, causal, -1, -1, 0.0, alibi, p, rng, None, False)
                    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
