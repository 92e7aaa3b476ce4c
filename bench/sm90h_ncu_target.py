# ncu target of bench/sm90h_run.sh: one forward call each, d 64, bf16, non-causal (16k tokens
# per batch, 32 heads: bench/sm90_ab.py's grid), base build (flashattn_base) then new build
# (flashattn) at 2048 keys (the two-consumer kernel) and 8192 (three consumers), so that
# `ncu -k regex:forward_kernel --launch-count 4` profiles exactly: base 2048, new 2048,
# base 8192, new 8192. (bench/sm90x_ncu_target.py, kept separate so each run script names its own.)
import torch

import flashattn
import flashattn_base

with torch.no_grad():
    for s in (2048, 8192):
        torch.manual_seed(s)
        q = torch.randn(16384 // s, s, 32, 64, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        for module in (flashattn_base, flashattn):
            module.flash_attn_func(q, k, v)
    torch.cuda.synchronize()
