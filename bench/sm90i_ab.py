# Same-process A/B of up to five builds of the flashattn Python package (bench/sm90i_run.sh:
# base, new, var, var2, var3) beside SDPA's cuDNN backend, forward, bf16, d 64, on the rows of
# the standard grid (16k tokens per batch, hidden 2048) that the two-consumer d 64 kernel serves
# (non-causal below 4096 queries, causal below 16384) plus 16k causal (three consumers: the same
# code in every build, a control of the noise). The measurement of bench/sm90_ab.py: each row's
# timings one after the other on the same inputs, triton's do_bench (median, L2 flushed), every
# row twice (forward, then reverse order), the mean of both.
#   PYTHONPATH=<dir with flashattn/, flashattn_base/, ...> python3 bench/sm90i_ab.py
import importlib
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

ROWS = [(False, 512), (False, 1024), (False, 2048), (True, 512), (True, 1024), (True, 2048), (True, 4096),
        (True, 8192), (True, 16384)]


def main():
    impls = {}
    for name in ("base", "new", "var", "var2", "var3"):
        try:
            module = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name)
        except ImportError:
            continue
        impls[name] = module.flash_attn_func
    print(json.dumps({"device": torch.cuda.get_device_properties(0).name, "impls": list(impls)}), flush=True)

    def sdpa(q, k, v, causal):
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

    d = 64
    with torch.no_grad():
        for causal, s in ROWS:
            b, h = max(1, 16384 // s), 2048 // d
            torch.manual_seed(s + d)
            q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
            k, v = torch.randn_like(q), torch.randn_like(q)
            flop = 4 * b * h * s * s * d / (2 if causal else 1)
            row = {"hdim": d, "causal": causal, "seqlen": s}
            fns = {name: (lambda f=f: f(q, k, v, causal=causal)) for name, f in impls.items()}
            fns["cudnn"] = lambda: sdpa(q, k, v, causal)
            ref = fns["cudnn"]().transpose(1, 2).float()
            outs = {}
            for name, fn in fns.items():
                if name != "cudnn":
                    outs[name] = fn().float()
                    row[name + "_err"] = float((outs[name] - ref).abs().max())
            if "base" in outs:  # the pipelined builds are exact: same outputs as base, bit for bit
                row["same_as_base"] = [n for n in outs if n != "base" and torch.equal(outs[n], outs["base"])]
            ms = {name: [] for name in fns}
            for order in (list(fns), list(fns)[::-1]):
                for name in order:
                    ms[name].append(do_bench(fns[name], warmup=25, rep=100, return_mode="median"))
            for name in fns:
                row[name] = round(flop / (sum(ms[name]) / len(ms[name])) / 1e9, 1)
            for name in impls:
                row[name + "/cudnn"] = round(row[name] / row["cudnn"], 3)
                if name != "base" and "base" in row:
                    row[name + "/base"] = round(row[name] / row["base"], 3)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
