# ncu target of bench/sm90t_run.sh (helper sm90t, session 8): the short-row profile of ours against
# cuDNN with the same sections. Inputs are made first; only the calls of interest run between
# cudaProfilerStart / Stop (ncu --profile-from-start off), one forward call each, bf16, non-causal,
# s 512 on the standard grid (16k tokens, hidden 2048: d128 b32 h16, d64 b32 h32), (b, s, h, d) as
# bench/sm90s_ab.py passes them:
#   ours: each argument NAME[:D,D...] = build flashattn_NAME ("new" = flashattn) at those head dims
#         (default 128,64), in argument order, d128 first;
#   then cuDNN (SDPA's cuDNN backend) at d128 and d64 (a warm-up call of each outside the range).
# The profiled order is printed (one line per kernel) so the ncu report's IDs can be named.
# SM90T_CAUSAL=1: the same calls causal (run 2).
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SEQLEN = 512
CAUSAL = os.environ.get("SM90T_CAUSAL", "0") == "1"
inputs = {}
for d in (128, 64):
    torch.manual_seed(d)
    q = torch.randn(16384 // SEQLEN, SEQLEN, 2048 // d, d, device="cuda", dtype=torch.bfloat16)
    inputs[d] = (q, torch.randn_like(q), torch.randn_like(q))
calls = []
for arg in sys.argv[1:]:
    name, _, dims = arg.partition(":")
    module = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name)
    for d in (int(x) for x in (dims or "128,64").split(",")):
        q, k, v = inputs[d]
        calls.append((f"{name} d{d}", lambda m=module, q=q, k=k, v=v: m.flash_attn_func(q, k, v, causal=CAUSAL)))


def cudnn(q, k, v):
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        return F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=CAUSAL
        )


for d in (128, 64):
    calls.append((f"cudnn d{d}", lambda qkv=inputs[d]: cudnn(*qkv)))
with torch.no_grad():
    for _, fn in calls:
        fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _, fn in calls:
        fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
for i, (label, _) in enumerate(calls):
    print(f"profiled {i}: {label}", flush=True)
