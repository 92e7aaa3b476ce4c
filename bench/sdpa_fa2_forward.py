# PyTorch SDPA FLASH_ATTENTION (FlashAttention 2) forward TFLOP/s on the standard
# grid (16k tokens, hidden 2048, bf16), one JSON row per shape: the peer that
# `flashattn_forward_check --backend cuda_sm80 bench` (bench/forward_check.cu) is compared with, in the same run.
import json, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from triton.testing import do_bench

#   sdpa_fa2_forward.py [DIMS, e.g. 64,128,256] [DROPOUT_SEQLENS, e.g. 2048 or 512,16384; 0: none] [bf16|fp16]
# fp16 rows name their numbers "fa2_fp16_fwd" / "fa2_fp16_dropout_fwd", so both passes join in one table.
dims = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [64, 128, 256]
dropout_seqlens = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [2048]
fp16 = len(sys.argv) > 3 and sys.argv[3] == "fp16"
dtype = torch.float16 if fp16 else torch.bfloat16
name = "fa2_fp16" if fp16 else "fa2"
dev = torch.cuda.get_device_properties(0)
print("device", dev.name, "SMs", dev.multi_processor_count, "torch", torch.__version__, flush=True)
for hdim in dims:
    for causal in (False, True):
        for seqlen in (512, 1024, 2048, 4096, 8192, 16384):
            b, h = 16384 // seqlen, 2048 // hdim
            q = torch.randn(b, h, seqlen, hdim, device="cuda", dtype=dtype)
            k, v = torch.randn_like(q), torch.randn_like(q)
            flop = 4 * b * h * seqlen * seqlen * hdim // (2 if causal else 1)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                ms = do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), warmup=25, rep=100,
                              return_mode="median")
            row = {"hdim": hdim, "causal": causal, "seqlen": seqlen, name + "_fwd": round(flop / ms / 1e9)}
            if seqlen in dropout_seqlens:
                # The peer of our dropout kernel (bench/sm80_tune's "dropout" variant rows).
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    ms = do_bench(lambda: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1, is_causal=causal),
                                  warmup=25, rep=100, return_mode="median")
                row[name + "_dropout_fwd"] = round(flop / ms / 1e9)
            print(json.dumps(row), flush=True)
