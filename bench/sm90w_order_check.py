# Does a kernel's reading depend on what ran just before it? (helper sm90w, session 7; not yet run.)
# The H200 forward at d128 is power-limited, and compare.py times each row's backends in a fixed order
# (flashattn first, right after the previous row's cuDNN backward; cuDNN last, after flashattn_sm80 and
# FA2, two ~350 TFLOP/s kernels). Same-process A/Bs with the order alternating (bench/sm90L_ab.py) read
# cuDNN's d128 forward at 577-584 TFLOP/s at 8k/16k where compare.py read 604-684. This times flashattn
# and cuDNN on the standard-grid rows after each of three preludes, each prelude run for PRELUDE_MS
# immediately before the timing (no synchronisation gap beyond do_bench's own):
#   idle:   1 s of sleep (the GPU cools and its clock recovers)
#   fa2:    SDPA's FLASH_ATTENTION backend (a low-power kernel)
#   cudnn_bwd / self: cuDNN's backward (the heaviest), or the timed kernel itself
# and prints one JSON line per (row, prelude, kernel): TFLOP/s (do_bench median, 50 ms) and the SM clock
# NVML reports after it. ~25 s of GPU time with the default rows.
#   PYTHONPATH=<flashattn build> python3 bench/sm90w_order_check.py [--rows d:causal:seqlen,...]
import argparse
import json
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

import flashattn

PRELUDE_MS = 200


def run_for(fn, ms):
    """Runs fn back to back for about ms milliseconds (no synchronisation at the end)."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end), 1e-3)
    for _ in range(max(1, int(ms / once))):
        fn()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default="128:0:8192,128:0:16384,128:1:16384")
    args = parser.parse_args()
    for spec in args.rows.split(","):
        d, causal, s = (int(x) for x in spec.split(":"))
        causal = bool(causal)
        b, h = max(1, 16384 // s), 2048 // d
        torch.manual_seed(s + d)
        q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        qg, kg, vg = (x.detach().clone().requires_grad_(True) for x in (qt, kt, vt))
        flop = 4 * b * h * s * s * d / (2 if causal else 1)

        def sdpa(backend, q_=qt, k_=kt, v_=vt):
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(q_, k_, v_, is_causal=causal)

        out = sdpa(SDPBackend.CUDNN_ATTENTION, qg, kg, vg)
        grad = torch.randn_like(out)
        kernels = {
            "flashattn": lambda: flashattn.flash_attn_func(q, k, v, causal=causal),
            "cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION),
        }
        preludes = {
            "idle": None,
            "fa2": lambda: sdpa(SDPBackend.FLASH_ATTENTION),
            "cudnn_bwd": lambda: torch.autograd.grad(out, (qg, kg, vg), grad, retain_graph=True),
        }
        with torch.no_grad():
            for fn in kernels.values():
                fn()
        for pname, prelude in list(preludes.items()) + [("self", "self")]:
            for kname, fn in kernels.items():
                torch.cuda.synchronize()
                if prelude is None:
                    time.sleep(1.0)
                elif prelude == "self":
                    with torch.no_grad():
                        run_for(fn, PRELUDE_MS)
                elif pname == "cudnn_bwd":
                    run_for(prelude, PRELUDE_MS)
                else:
                    with torch.no_grad():
                        run_for(prelude, PRELUDE_MS)
                with torch.no_grad():
                    ms = do_bench(fn, warmup=5, rep=50, return_mode="median")
                row = {"hdim": d, "causal": causal, "seqlen": s, "prelude": pname, "kernel": kname,
                       "tflops": round(flop / ms / 1e9, 1)}
                try:
                    row["mhz"] = torch.cuda.clock_rate()
                except Exception:  # no NVML
                    pass
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
