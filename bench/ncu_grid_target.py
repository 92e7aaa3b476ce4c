# ncu target: one forward call of each named flashattn build (and, with --cudnn, SDPA's cuDNN backend) per
# standard-grid row (bf16, 16k tokens per batch, hidden 2048, h = 2048 / d), inside cudaProfilerStart / Stop
# after two warm-up calls each, so that `ncu --profile-from-start off` sees exactly those kernels in the order
# rows x builds (+ cuDNN).
#   PYTHONPATH=<packages> ncu ... python3 bench/ncu_grid_target.py --rows 256:1:16384,256:0:8192 --builds base
import argparse
import importlib

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from ncu_profiled import profile

ap = argparse.ArgumentParser()
ap.add_argument("--rows", required=True, help="comma-separated d:causal:seqlen[:batch:heads] (default the grid's)")
ap.add_argument("--builds", default="base")
ap.add_argument("--cudnn", action="store_true")
args = ap.parse_args()
mods = [importlib.import_module("flashattn" if n == "new" else "flashattn_" + n) for n in args.builds.split(",")]

with torch.no_grad():
    calls = []
    for row in args.rows.split(","):
        d, causal, s, *shape = (int(x) for x in row.split(":"))
        b, h = shape if shape else (16384 // s, 2048 // d)
        torch.manual_seed(s + d)
        q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        for m in mods:
            calls.append(lambda m=m, q=q, k=k, v=v, c=bool(causal): m.flash_attn_func(q, k, v, causal=c))
        if args.cudnn:
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

            def cudnn(qt=qt, kt=kt, vt=vt, c=bool(causal)):
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=c)
            calls.append(cudnn)
    profile(calls)
