# Same-process A/B of the flashattn Python builds of bench/sm90L_run.sh beside SDPA's cuDNN backend,
# forward, bf16, on rows of the standard grid (16k tokens per batch, hidden 2048, h = 2048 / d).
# Packages: flashattn_base (today's defaults), flashattn_ctl (the SAME .so as base under another name:
# the noise control), flashattn (new), flashattn_var, flashattn_var2 (optional variants); whichever
# import. A build that lacks a row's head dim is skipped on that row. Each row: every build and cuDNN
# timed one after the other on the same inputs with triton's do_bench (median, L2 flushed), twice
# (forward order, then reverse), the mean of both; max |out - cuDNN| per build.
#   PYTHONPATH=<pyroot> python3 bench/sm90L_ab.py [--rows d:causal:seqlen,...]
import argparse
import importlib
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

DEFAULT_ROWS = ("128:0:1024,128:0:2048,128:0:4096,128:0:8192,128:0:16384,"
                "128:1:2048,128:1:8192,128:1:16384")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=DEFAULT_ROWS)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    impls = {}
    for name in ("base", "ctl", "new", "var", "var2"):
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

    with torch.no_grad():
        for spec in args.rows.split(","):
            d, causal, s = (int(x) for x in spec.split(":"))
            causal = bool(causal)
            b, h = max(1, 16384 // s), 2048 // d
            torch.manual_seed(s + d)
            q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
            k, v = torch.randn_like(q), torch.randn_like(q)
            flop = 4 * b * h * s * s * d / (2 if causal else 1)
            row = {"hdim": d, "causal": causal, "seqlen": s}
            fns = {}
            ref = sdpa(q, k, v, causal).transpose(1, 2).float()
            for name, f in impls.items():
                try:
                    out = f(q, k, v, causal=causal).float()
                except Exception as e:  # the build lacks this head dim
                    row[name + "_skip"] = str(e)[:80]
                    continue
                row[name + "_err"] = float((out - ref).abs().max())
                fns[name] = lambda f=f: f(q, k, v, causal=causal)
            fns["cudnn"] = lambda: sdpa(q, k, v, causal)
            ms = {name: [] for name in fns}
            orders = [list(fns), list(fns)[::-1]]
            for p in range(args.passes):
                for name in orders[p % 2]:
                    ms[name].append(do_bench(fns[name], warmup=25, rep=100, return_mode="median"))
            for name in fns:
                row[name] = round(flop / (sum(ms[name]) / len(ms[name])) / 1e9, 1)
            for name in fns:
                if name != "cudnn":
                    row[name + "/cudnn"] = round(row[name] / row["cudnn"], 3)
                    if name != "base" and "base" in fns:
                        row[name + "/base"] = round(row[name] / row["base"], 3)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
