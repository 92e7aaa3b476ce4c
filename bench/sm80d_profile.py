#!/usr/bin/env python3
"""A few plain calls of the cuda_sm80 forward (package flashattn) on bench/compare.py's layout and shapes, for
ncu beside bench/sm80v_fa2_profile.py's FA2 calls (helper sm80d, session 9).

    sm80d_profile.py D SEQLEN CAUSAL(0|1)
"""
import sys

import torch

import flashattn

d, s, causal = int(sys.argv[1]), int(sys.argv[2]), bool(int(sys.argv[3]))
b, h = max(1, 16384 // s), 2048 // d
q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
k = torch.randn_like(q)
v = torch.randn_like(q)
with flashattn.use_backend("cuda_sm80"), torch.no_grad():
    for _ in range(5):
        flashattn.flash_attn_func(q, k, v, causal=causal)
torch.cuda.synchronize()
