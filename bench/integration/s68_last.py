"""Session 68's last call: the extension built with FLASHATTN_BACKWARD=OFF (package flashattn_nobwd, d128 bf16)
imports and runs the forward, with dropout too, bitwise as the full build's (package flashattn); a dropout p
below 1 / 65536 (threshold 0: nothing dropped) gives the plain forward's output on cuda_sm90."""
import json

import torch

import flashattn
import flashattn_nobwd

torch.manual_seed(0)
q, k, v = (torch.randn(2, 1000, 8, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))


def run(package, p, seed=1234):
    torch.cuda.manual_seed(seed)
    return package.flash_attn_func(q, k, v, dropout_p=p, causal=True)


rows = {}
for p in (0.0, 0.1):
    full, nobwd = run(flashattn, p), run(flashattn_nobwd, p)
    rows[f"p{p}_max_diff_full_vs_nobwd"] = float((full.float() - nobwd.float()).abs().max())
plain, tiny = run(flashattn, 0.0), run(flashattn, 1e-6)
rows["p1e-6_max_diff_vs_plain"] = float((plain.float() - tiny.float()).abs().max())
rows["p0.1_max_diff_vs_plain"] = float((plain.float() - run(flashattn, 0.1).float()).abs().max())
print(json.dumps(rows))
assert rows["p0.0_max_diff_full_vs_nobwd"] == 0 and rows["p0.1_max_diff_full_vs_nobwd"] == 0
assert rows["p1e-6_max_diff_vs_plain"] == 0 and rows["p0.1_max_diff_vs_plain"] > 0
print("ok")
