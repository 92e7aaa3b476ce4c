# ncu target of bench/sm90L_run.sh: d 128, bf16, non-causal, s 8192 (b 2, h 16: the standard grid's row),
# one call each of flashattn_base (today's kernel), flashattn (new build), flashattn_var and
# flashattn_var2 (if built) and SDPA's cuDNN backend, inside
# cudaProfilerStart/Stop after two warm-up calls each, so that `ncu --profile-from-start off` sees exactly
# those kernels (cuDNN's plan building and any first-call work happen before the range).
import importlib

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from ncu_profiled import profile

mods = []
for name in ("flashattn_base", "flashattn", "flashattn_var", "flashattn_var2"):
    try:
        mods.append(importlib.import_module(name))
    except ImportError:
        pass

with torch.no_grad():
    s, b, h, d = 8192, 2, 16, 128
    torch.manual_seed(s)
    q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def cudnn():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qt, kt, vt)

    fns = [lambda m=m: m.flash_attn_func(q, k, v) for m in mods] + [cudnn]
    profile(fns)
