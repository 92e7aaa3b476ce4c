# ncu target of bench/sm90e_run.sh: one forward call each, d 128, bf16, non-causal, of the
# base build (flashattn_base) and the new one (flashattn) at seqlen 512 and of the base at
# 8192 (16k tokens per batch, 16 heads: bench/sm90_ab.py's grid), so that
# `ncu -k regex:forward_kernel` profiles exactly three kernels: base 512, new 512, base 8192.
import torch

import flashattn
import flashattn_base

with torch.no_grad():
    for module, s in ((flashattn_base, 512), (flashattn, 512), (flashattn_base, 8192)):
        torch.manual_seed(s)
        q = torch.randn(16384 // s, s, 16, 128, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        module.flash_attn_func(q, k, v)
    torch.cuda.synchronize()
