# Forward TFLOP/s of PyTorch SDPA's CUDNN_ATTENTION and FLASH_ATTENTION backends on
# the standard grid (16k tokens per batch, hidden 2048, h = 2048/d), bf16, median of
# triton.testing.do_bench -- the same measurement as ../shared/anchors/sdpa_peers.py,
# forward only, so it fits in one device run beside `flashattn_forward_check --backend cuda_sm90 bench`
# (bench/forward_check.cu; bench/sm90_gpu_run.sh runs both).
#   python3 bench/sm90_sdpa_peers.py [dims, e.g. 64,128,256]
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

torch.manual_seed(0)
dev = torch.cuda.get_device_properties(0)
print("device", dev.name, "SMs", dev.multi_processor_count, "torch", torch.__version__, "cudnn",
      torch.backends.cudnn.version(), flush=True)
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
ms = do_bench(lambda: a @ b, warmup=50, rep=300, return_mode="median")
print(f"gemm bf16 8192^3: {2 * 8192**3 / ms / 1e9:.0f} TFLOP/s", flush=True)
del a, b
dims = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [64, 128, 256]
backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "fa2": SDPBackend.FLASH_ATTENTION}
for d in dims:
    for causal in (False, True):
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            bsz, nh = 16384 // s, 2048 // d
            q = torch.randn(bsz, nh, s, d, device="cuda", dtype=torch.bfloat16)
            k, v = torch.randn_like(q), torch.randn_like(q)
            flop = 4 * bsz * nh * s * s * d // (2 if causal else 1)
            row = {"hdim": d, "causal": causal, "seqlen": s}
            for name, be in backends.items():
                try:
                    with sdpa_kernel([be]):
                        ms = do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                      warmup=25, rep=100, return_mode="median")
                    row[name + "_fwd"] = round(flop / ms / 1e9)
                except Exception:
                    row[name + "_fwd"] = "err"
            print(json.dumps(row), flush=True)
