"""Session 45: where a small decode's time goes (GPU, run under ncu by s45_split_kv.sh).

One KV-cache decode (GQA 32/8, d128, bf16, the automatic choice: cuda_sm90 split-KV) and one SDPA cuDNN call per
shape, each after a synchronisation; ncu's gpu__time_duration of every kernel, in launch order, tells the prepare
kernel's and the forward kernel's durations apart from the launch gaps that graph replays add.
"""

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashattn

for cache, batch in ((1024, 1), (4096, 1), (16384, 1), (4096, 4)):
    q = torch.randn(batch, 1, 32, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, cache, 8, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    seqlens = torch.full((batch,), cache, device="cuda", dtype=torch.int32)
    with torch.no_grad():
        for _ in range(2):
            torch.cuda.synchronize()
            flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens)
            torch.cuda.synchronize()
            flashattn.flash_attn_func(q, k, v)
            torch.cuda.synchronize()
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), enable_gqa=True)
            torch.cuda.synchronize()
    print(f"shape {cache} {batch} done", flush=True)
