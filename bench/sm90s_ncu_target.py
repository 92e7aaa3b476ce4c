# ncu target of bench/sm90s_run.sh (helper sm90s): inputs are made first, then only the calls of
# interest run between cudaProfilerStart / Stop (ncu --profile-from-start off):
#   ours: one forward call, d 128, bf16, non-causal, s 512 (b 32, h 16) of each build named in
#         argv (flashattn_NAME, "new" = flashattn);
#   cuDNN (SDPA's cuDNN backend): d 64 / 128 / 256 at s 512, non-causal and causal, one call each,
#         after a warm-up call outside the profiled range (its kernels are built on first use).
import importlib
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

mode = sys.argv[1]
with torch.no_grad():
    if mode == "ours":
        torch.manual_seed(0)
        q = torch.randn(32, 512, 16, 128, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        mods = [importlib.import_module("flashattn" if n == "new" else "flashattn_" + n) for n in sys.argv[2:]]
        for m in mods:
            m.flash_attn_func(q, k, v)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for m in mods:
            m.flash_attn_func(q, k, v)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    else:
        cases = []
        for d in (64, 128, 256):
            torch.manual_seed(d)
            # (b, s, h, d) seen as (b, h, s, d), as bench/sm90s_ab.py passes them
            q = torch.randn(32, 512, 2048 // d, d, device="cuda", dtype=torch.bfloat16)
            cases.append((q.transpose(1, 2), torch.randn_like(q).transpose(1, 2), torch.randn_like(q).transpose(1, 2)))
        for causal in (False, True):
            for q, k, v in cases:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for causal in (False, True):
            for q, k, v in cases:
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
