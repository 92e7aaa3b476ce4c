"""Host time per eager call of the PyTorch interface, beside SDPA (GPU).

Tiny problems, so every call is bound by its host work: the wall time of N back-to-back calls
(then one synchronize) over N. Prints one JSON row per case.
Run: python3 bench/python_overhead.py [--calls 2000]
"""

import argparse
import json
import time

import torch
import torch.nn.functional as F

import flashattn


def host_us(fn, calls):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device=dev, dtype=dt)
    k = torch.randn(1, 64, 8, 128, device=dev, dtype=dt)
    v = torch.randn_like(k)
    k_cache = torch.randn(1, 256, 8, 128, device=dev, dtype=dt)
    v_cache = torch.randn_like(k_cache)
    seqlens = torch.tensor([100], device=dev, dtype=torch.int32)
    k_new, v_new = k[:, :1].contiguous(), v[:, :1].contiguous()
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    qg = q.clone().requires_grad_()
    cases = {
        "flash_attn_func": lambda: flashattn.flash_attn_func(q, k, v),
        "flash_attn_func (requires_grad: through the op)": lambda: flashattn.flash_attn_func(qg, k, v),
        "flash_attn_with_kvcache (append)": lambda: flashattn.flash_attn_with_kvcache(
            q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens),
        "sdpa (default backend choice)": lambda: F.scaled_dot_product_attention(qt, kt, vt),
    }
    with torch.no_grad():
        for name, fn in cases.items():
            if "requires_grad" in name:
                with torch.enable_grad():
                    us = host_us(fn, args.calls)
            else:
                us = host_us(fn, args.calls)
            print(json.dumps({"case": name, "host_us_per_call": round(us, 1)}), flush=True)


if __name__ == "__main__":
    main()
