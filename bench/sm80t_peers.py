#!/usr/bin/env python3
"""cuda_sm80 forward beside FA2 exactly as bench/compare.py measures them (session 5, issue 4).

The same tensors (torch.manual_seed(seqlen + hdim); randn (b, s, h, d) bf16), the same timing
(compare.bench_ms: do_bench median) and the same calls (compare._flashattn_sm80: flashattn's Python
API on the cuda_sm80 backend; compare._sdpa(FLASH_ATTENTION) on the (b, s, h, d) memory seen as
(b, h, s, d)), so the ratio is the one compare.py's table reports. Two more columns explain why the
earlier harness (bench/sm80_tune + bench/sdpa_fa2_forward.py) disagreed with compare.py:
"fa2_bhsd" is FA2 on (b, h, s, d)-contiguous copies (what sdpa_fa2_forward.py timed). Every row is
measured in two passes (ours, fa2, fa2_bhsd, ours, fa2) to show the noise.

    PYTHONPATH=<dir with the flashattn package> sm80t_peers.py [DIMS 64,128,256] [SEQLENS 512,...] [CAUSAL 0,1]
"""
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/compare.py: bench_ms and the backends' calls)

from torch.nn.attention import SDPBackend  # noqa: E402

dims = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 else [64, 128, 256]
seqlens = [int(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [512, 1024, 2048, 4096, 8192, 16384]
causals = [bool(int(x)) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else [False, True]
dev = torch.cuda.get_device_properties(0)
print(json.dumps({"device": dev.name, "torch": torch.__version__}), flush=True)
for hdim in dims:
    for causal in causals:
        for seqlen in seqlens:
            batch, heads = max(1, compare.TOKENS // seqlen), compare.HIDDEN // hdim
            torch.manual_seed(seqlen + hdim)
            q = torch.randn(batch, seqlen, heads, hdim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn_like(q, requires_grad=True)
            v = torch.randn_like(q, requires_grad=True)
            flop = 4 * batch * seqlen * seqlen * heads * hdim / (2 if causal else 1)
            ours = compare._flashattn_sm80(q, k, v, causal)
            fa2 = compare._sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal)
            qh, kh, vh = (t.detach().transpose(1, 2).contiguous() for t in (q, k, v))
            # _sdpa transposes (1, 2): hand it (b, h, s, d)-contiguous memory seen as (b, s, h, d).
            fa2_bhsd = compare._sdpa(SDPBackend.FLASH_ATTENTION)(*(t.transpose(1, 2) for t in (qh, kh, vh)), causal)
            row = {"hdim": hdim, "causal": causal, "seqlen": seqlen}
            with torch.no_grad():
                # SDPA returns (b, h, s, d); ours (b, s, h, d).
                diff = (ours().float() - fa2().transpose(1, 2).float()).abs().max().item()
                for name, fn in (("ours", ours), ("fa2", fa2), ("fa2_bhsd", fa2_bhsd), ("ours2", ours), ("fa2_2", fa2)):
                    fn()
                    torch.cuda.synchronize()
                    row[name] = round(flop / compare.bench_ms(fn) / 1e9, 1)
            row["max_diff_vs_fa2"] = round(diff, 4)
            row["ratio"] = round((row["ours"] + row["ours2"]) / (row["fa2"] + row["fa2_2"]), 3)
            print(json.dumps(row), flush=True)
            del q, k, v, qh, kh, vh
