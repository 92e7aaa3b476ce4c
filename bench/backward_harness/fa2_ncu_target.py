# bwd8: FA2's backward (SDPA FLASH_ATTENTION) on compare.py's layout ((b, s, h, d) tensors, SDPA given
# transposed views), one forward and `calls` backward calls per (d, s) row given on the command line,
# for ncu (-k regex:flash_bwd). usage: fa2_ncu_target.py 128:512 64:512 [--calls 2] [--causal]
import sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 2
causal = "--causal" in sys.argv
for arg in sys.argv[1:]:
    if ":" not in arg:
        continue
    d, s = (int(x) for x in arg.split(":"))
    b, h = 16384 // s, 2048 // d
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                             is_causal=causal)
    g = torch.randn_like(out)
    for _ in range(calls):
        torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
    torch.cuda.synchronize()
    print(f"fa2 d={d} s={s} causal={int(causal)} calls={calls}", flush=True)
