#!/usr/bin/env python3
"""A few plain FA2 (SDPA FLASH_ATTENTION) forward calls on bench/compare.py's layout and shapes, for ncu
(session 7, helper sm80v; sm80_fa2_fixed_cost.py's FA2_PROFILE mode is non-causal only).

    sm80v_fa2_profile.py D SEQLEN CAUSAL(0|1)
"""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

d, s, causal = int(sys.argv[1]), int(sys.argv[2]), bool(int(sys.argv[3]))
b, h = max(1, 16384 // s), 2048 // d
# (b, s, h, d) memory as compare.py allocates it, seen by SDPA as (b, h, s, d).
q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
k = torch.randn_like(q)
v = torch.randn_like(q)
with sdpa_kernel([SDPBackend.FLASH_ATTENTION]), torch.no_grad():
    for _ in range(5):
        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
torch.cuda.synchronize()
