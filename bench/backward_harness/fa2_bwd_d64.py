# bwd9: FA2's backward (SDPA FLASH_ATTENTION) on compare.py's layout ((b, s, h, d) tensors, SDPA given
# transposed views), timed like compare.py (median of triton.testing.do_bench, warmup 25 ms, rep 100 ms,
# torch.autograd.grad of one forward's output). usage: fa2_bwd_d64.py [d] [seqlens] [causal list]
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from triton.testing import do_bench

d = int(sys.argv[1]) if len(sys.argv) > 1 else 64
seqs = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "512,1024,2048,4096,8192,16384").split(",")]
masks = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "0,1").split(",")]
for causal in masks:
    for s in seqs:
        b, h = 16384 // s, 2048 // d
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                 is_causal=bool(causal))
        g = torch.randn_like(out)
        ms = do_bench(lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True), warmup=25, rep=100,
                      return_mode="median")
        flops = 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)
        print(f"fa2 bwd d={d} causal={causal} s={s} ms={ms:.3f} TFLOPs={flops / ms / 1e9:.1f}", flush=True)
        del q, k, v, out, g
