# ncu target of bench/sm90m_run.sh (helper sm90m, session 8): instruction counts of the causal s 512
# forward with each score-mask form (src/cuda/sm90/score_mask.h FLASHATTN_SM90_MASK_FORM) beside cuDNN.
# Inputs are made first; only the calls of interest run between cudaProfilerStart / Stop (ncu
# --profile-from-start off), one forward call each, bf16, causal, s 512 on the standard grid (16k tokens,
# hidden 2048: d64 b32 h32, d128 b32 h16), (b, s, h, d) as bench/sm90s_ab.py passes them:
#   ours: each argument NAME = build flashattn_NAME ("new" = flashattn) at d64 then d128;
#   then cuDNN (SDPA's cuDNN backend) at d64 and d128 (a warm-up call of each outside the range).
# The profiled order is printed (one line per kernel) so the ncu report's IDs can be named.
import importlib
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SEQLEN = 512
DIMS = (64, 128)
inputs = {}
for d in DIMS:
    torch.manual_seed(d)
    q = torch.randn(16384 // SEQLEN, SEQLEN, 2048 // d, d, device="cuda", dtype=torch.bfloat16)
    inputs[d] = (q, torch.randn_like(q), torch.randn_like(q))
calls = []
for name in sys.argv[1:]:
    module = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name)
    for d in DIMS:
        q, k, v = inputs[d]
        call = lambda m=module, q=q, k=k, v=v: m.flash_attn_func(q, k, v, causal=True)  # noqa: E731
        calls.append((f"{name} d{d}", call))


def cudnn(q, k, v):
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        return F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )


for d in DIMS:
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
