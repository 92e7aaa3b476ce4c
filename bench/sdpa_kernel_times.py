#!/usr/bin/env python3
"""Which kernels PyTorch SDPA's backward launches and how long each takes (torch.profiler's CUDA activity, the
GPU's own clocks): per row and SDPA backend, every kernel name of a backward call with its mean time over
--calls calls, one JSON line a row. Shows how a peer splits its backward (a preprocess, an fp32 dQ accumulator
zeroed or not, a conversion) beside ours (bench/backward_aux_times.py).

    python3 bench/sdpa_kernel_times.py --backends cudnn,flash --hdims 64,128 --seqlens 512,2048

Rows: the standard grid's (16k tokens, hidden 2048), causal and not, bf16.
"""

import argparse
import collections
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="cudnn,flash")
    parser.add_argument("--hdims", default="64,128")
    parser.add_argument("--seqlens", default="512,2048")
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    for name in args.backends.split(","):
        for d in (int(x) for x in args.hdims.split(",")):
            for s in (int(x) for x in args.seqlens.split(",")):
                for causal in (False, True):
                    b, h = max(1, 16384 // s), 2048 // d
                    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                               for _ in range(3))
                    dout = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                    with sdpa_kernel([BACKENDS[name]]):
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                        def run():
                            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
                        for _ in range(3):
                            run()
                        torch.cuda.synchronize()
                        with profile(activities=[ProfilerActivity.CUDA]) as prof:
                            for _ in range(args.calls):
                                run()
                            torch.cuda.synchronize()
                    totals = collections.defaultdict(float)
                    for event in prof.events():
                        if event.device_type == torch.autograd.DeviceType.CUDA:
                            totals[event.name[:120]] += event.time_range.elapsed_us()
                    row = {"backend": name, "d": d, "seqlen": s, "causal": causal,
                           "kernels_us": {k: round(v / args.calls, 2) for k, v in
                                          sorted(totals.items(), key=lambda kv: -kv[1])}}
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
