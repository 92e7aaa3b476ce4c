# FA2 (SDPA FLASH_ATTENTION) forward time for a fixed query length and growing key lengths, on the
# standard grid's shapes (b = 16384 / sq, h = 2048 / d, bf16, non-causal): the intercept of time
# vs keys is the per-query-tile fixed cost (prologue, epilogue, launch), which
# `SM80_TABLE_ONLY=1 SM80_CAUSAL=0 SM80_SEQLEN_K=n sm80_tune SQ` measures for cuda_sm80.
#   sm80_fa2_fixed_cost.py [DIMS 64,128,256] [SQ 512] [KEYS 64,128,256,512]
# With FA2_PROFILE=1: one (the first) shape, a few plain calls (for ncu, no do_bench).
import json, os, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

dims = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [64, 128, 256]
sq = int(sys.argv[2]) if len(sys.argv) > 2 else 512
keys = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [64, 128, 256, 512]
profile = os.environ.get("FA2_PROFILE") is not None
for d in dims:
    for sk in keys:
        b, h = 16384 // sq, 2048 // d
        # (b, s, h, d) memory, as ours and bench/compare.py use, seen by SDPA as (b, h, s, d).
        q = torch.randn(b, sq, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        k = torch.randn(b, sk, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        v = torch.randn(b, sk, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            if profile:
                for _ in range(5):
                    F.scaled_dot_product_attention(q, k, v)
                torch.cuda.synchronize()
                sys.exit(0)
            from triton.testing import do_bench
            ms = do_bench(lambda: F.scaled_dot_product_attention(q, k, v), warmup=25, rep=100, return_mode="median")
        flop = 4 * b * h * sq * sk * d
        print(json.dumps({"hdim": d, "seqlen": sq, "seqlen_k": sk, "fa2_us": round(ms * 1e3, 1),
                          "fa2_tflops": round(flop / ms / 1e9, 1)}), flush=True)
