# ncu target of bench/sm90o_run.sh (helper sm90o, session 8): DRAM bytes and kernel time of the d256 s 512
# forward (standard grid: b 32, h 8, (b, s, h, d) bf16, as bench/sm90s_ab.py passes them), one call of each
# build named on the command line (flashattn_NAME; "new" = flashattn), then SDPA's cuDNN backend. Only those
# calls run between cudaProfilerStart / Stop (ncu --profile-from-start off); the profiled order is printed.
# SM90O_CAUSAL=1: the same calls causal.
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SEQLEN, D = 512, 256
CAUSAL = os.environ.get("SM90O_CAUSAL", "0") == "1"
torch.manual_seed(D)
q = torch.randn(16384 // SEQLEN, SEQLEN, 2048 // D, D, device="cuda", dtype=torch.bfloat16)
k, v = torch.randn_like(q), torch.randn_like(q)
calls = []
for name in sys.argv[1:]:
    module = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name)
    calls.append((name, lambda m=module: m.flash_attn_func(q, k, v, causal=CAUSAL)))


def cudnn():
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        return F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=CAUSAL
        )


calls.append(("cudnn", cudnn))
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
    print(f"profiled {i}: {label} d{D} s{SEQLEN} causal={int(CAUSAL)}", flush=True)
