# ncu target: one KV-cache decode call of each named flashattn build (and, with --cudnn, SDPA's cuDNN backend on
# the same dense cache) per shape, inside cudaProfilerStart / Stop after two warm-up calls each, so that
# `ncu --profile-from-start off` sees exactly those launches in the order shapes x builds (+ cuDNN). Shapes are
# bench/decode_ab.py's (32 / 8 heads, d128, bf16, q length 1, dense caches).
#   PYTHONPATH=<packages> ncu ... python3 bench/ncu_decode_target.py --shapes 64:8192,16:32768 --builds new --cudnn
import argparse
import importlib

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from ncu_profiled import profile

ap = argparse.ArgumentParser()
ap.add_argument("--shapes", default="64:8192", help="comma-separated batch:cached_keys")
ap.add_argument("--builds", default="new")
ap.add_argument("--cudnn", action="store_true")
args = ap.parse_args()
mods = [importlib.import_module("flashattn" if n == "new" else "flashattn_" + n) for n in args.builds.split(",")]

with torch.no_grad():
    calls = []
    for shape in args.shapes.split(","):
        b, sk = (int(x) for x in shape.split(":"))
        hq, hk, d = 32, 8, 128
        torch.manual_seed(b + sk)
        q = torch.randn(b, 1, hq, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(b, sk, hk, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        seqlens = torch.full((b,), sk, dtype=torch.int32, device="cuda")
        for m in mods:
            calls.append(lambda m=m, q=q, k=k, v=v, s=seqlens: m.flash_attn_with_kvcache(q, k, v, cache_seqlens=s))
        if args.cudnn:
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

            def cudnn(qt=qt, kt=kt, vt=vt):
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return F.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)
            calls.append(cudnn)
    profile(calls)
