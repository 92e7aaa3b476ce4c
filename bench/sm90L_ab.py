# Same-process A/B of the flashattn Python builds of bench/sm90L_run.sh beside SDPA's cuDNN backend,
# forward, bf16, on rows of the standard grid (16k tokens per batch, hidden 2048, h = 2048 / d).
# Packages: flashattn_base (today's defaults), flashattn_ctl (the SAME .so as base under another name:
# the noise control), flashattn (new), flashattn_var, flashattn_var2 (optional variants); whichever
# import. A build that lacks a row's head dim is skipped on that row. Each row: every build and cuDNN
# timed one after the other on the same inputs with triton's do_bench (median, L2 flushed), --passes
# times (alternating forward and reverse order), the mean; max |out - cuDNN| per build, which builds'
# outputs equal the base's bit for bit, and the SM clock NVML reports after each timing (if any).
# Stress rows (d:causal:seqlen:1) are checked, not timed.
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
# d:causal:seqlen[:stress]; stress: key j scaled by 1 + 24 (s - j) / s, so the blocks processed
# later (keys are walked last block first) keep raising the row maxima: the softmax's rescale
# paths run on most blocks.


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", default=DEFAULT_ROWS)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--rep", type=int, default=100)
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
            fields = [int(x) for x in spec.split(":")]
            d, causal, s = fields[:3]
            stress = len(fields) > 3 and fields[3] != 0
            causal = bool(causal)
            b, h = max(1, 16384 // s), 2048 // d
            torch.manual_seed(s + d)
            q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
            k, v = torch.randn_like(q), torch.randn_like(q)
            if stress:
                ramp = 1 + 24 * (s - torch.arange(s, device="cuda", dtype=torch.float32)) / s
                k = (k.float() * ramp[None, :, None, None]).to(torch.bfloat16)
            flop = 4 * b * h * s * s * d / (2 if causal else 1)
            row = {"hdim": d, "causal": causal, "seqlen": s}
            if stress:
                row["stress"] = True
            fns = {}
            outs = {}
            ref = sdpa(q, k, v, causal).transpose(1, 2).float()
            for name, f in impls.items():
                try:
                    out = f(q, k, v, causal=causal)
                except Exception as e:  # the build lacks this head dim
                    row[name + "_skip"] = str(e)[:80]
                    continue
                outs[name] = out
                row[name + "_err"] = float((out.float() - ref).abs().max())
                fns[name] = lambda f=f: f(q, k, v, causal=causal)
            if "base" in outs:  # the variants claim bitwise the base's results
                row["bitwise_as_base"] = [n for n in outs if n != "base" and torch.equal(outs[n], outs["base"])]
            if stress:
                print(json.dumps(row), flush=True)
                continue
            fns["cudnn"] = lambda: sdpa(q, k, v, causal)
            ms = {name: [] for name in fns}
            clk = {name: [] for name in fns}
            orders = [list(fns), list(fns)[::-1]]
            for p in range(args.passes):
                for name in orders[p % 2]:
                    ms[name].append(do_bench(fns[name], warmup=25, rep=args.rep, return_mode="median"))
                    try:
                        clk[name].append(torch.cuda.clock_rate())
                    except Exception:  # no NVML
                        pass
            for name in fns:
                row[name] = round(flop / (sum(ms[name]) / len(ms[name])) / 1e9, 1)
                if clk[name]:
                    row[name + "_mhz"] = round(sum(clk[name]) / len(clk[name]))
            for name in fns:
                if name != "cudnn":
                    row[name + "/cudnn"] = round(row[name] / row["cudnn"], 3)
                    if name != "base" and "base" in fns:
                        row[name + "/base"] = round(row[name] / row["base"], 3)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
