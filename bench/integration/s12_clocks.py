#!/usr/bin/env python3
"""Session 12: SM clock and board power while each build runs one problem back to back (no L2 flush), beside
its TFLOP/s over the same window: separates "fewer clocks per block" from "more clocks per second".

    PYTHONPATH=<pyroot> s12_clocks.py --builds base,nosoft --hdim 128 --causal 0 --seqlen 16384 --seconds 2

One JSON line per (build, round): tflops, median SM MHz and W over the window (nvidia-smi sampled every
20 ms), the throttle reasons seen, and tflops_per_ghz = tflops / (MHz / 1000)."""
import argparse
import importlib
import json
import statistics
import subprocess
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default="base")
    ap.add_argument("--hdim", type=int, default=128)
    ap.add_argument("--causal", type=int, default=0)
    ap.add_argument("--seqlen", type=int, default=16384)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    d, s, causal = args.hdim, args.seqlen, bool(args.causal)
    b, h = max(1, 16384 // s), 2048 // d
    torch.manual_seed(s + d)
    q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    flop = 4 * b * h * s * s * d / (2 if causal else 1)
    fns = {}
    for name in args.builds.split(","):
        if name == "cudnn":
            def fn():
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                          is_causal=causal)
            fns[name] = fn
        else:
            f = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name).flash_attn_func
            fns[name] = lambda f=f: f(q, k, v, causal=causal)
    with torch.no_grad():
        for rnd in range(args.rounds):
            names = list(fns) if rnd % 2 == 0 else list(fns)[::-1]
            for name in names:
                fn = fns[name]
                fn()
                torch.cuda.synchronize()
                t = time.time()
                while time.time() - t < 0.7:  # reach the power limit's steady state first
                    for _ in range(10):
                        fn()
                    torch.cuda.synchronize()
                log = tempfile.NamedTemporaryFile(mode="w+", suffix=".csv")
                smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
                                        "--format=csv,noheader,nounits", "-lms", "20"], stdout=log)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                calls = 0
                start.record()
                t = time.time()
                while time.time() - t < args.seconds:
                    for _ in range(10):
                        fn()
                    calls += 10
                    torch.cuda.synchronize()
                end.record()
                end.synchronize()
                smi.terminate()
                smi.wait()
                log.seek(0)
                rows = [line.split(",") for line in log.read().splitlines() if line.strip()]
                mhz = [float(r[0]) for r in rows if len(r) >= 3 and r[0].strip().replace(".", "").isdigit()]
                watts = [float(r[1]) for r in rows if len(r) >= 3 and r[1].strip().replace(".", "").isdigit()]
                reasons = sorted({r[2].strip() for r in rows if len(r) >= 3})
                ms = start.elapsed_time(end) / calls
                tflops = flop / ms / 1e9
                mhz_med = statistics.median(mhz) if mhz else float("nan")
                print(json.dumps({"round": rnd, "build": name, "d": d, "causal": causal, "seqlen": s,
                                  "tflops": round(tflops, 1), "mhz": mhz_med,
                                  "watts": statistics.median(watts) if watts else None, "samples": len(mhz),
                                  "reasons": reasons, "tflops_per_ghz": round(tflops / (mhz_med / 1000), 1)}),
                      flush=True)


if __name__ == "__main__":
    main()
