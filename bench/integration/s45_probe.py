"""Session 45: one small decode for ncu's detailed sections (s45_probe.sh): dense flash_attn_func over 1024 keys
and a KV-cache decode over 4096 keys (GQA 32/8, d128, bf16, batch 1), each called three times."""

import torch

import flashattn

q = torch.randn(1, 1, 32, 128, device="cuda", dtype=torch.bfloat16)
with torch.no_grad():
    for cache in (1024, 4096):
        k = torch.randn(1, cache, 8, 128, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        seqlens = torch.full((1,), cache, device="cuda", dtype=torch.int32)
        for _ in range(3):
            if cache == 1024:
                flashattn.flash_attn_func(q, k, v)
            else:
                flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens)
        torch.cuda.synchronize()
