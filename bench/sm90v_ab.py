# Same-process A/B of several builds of the flashattn Python package beside SDPA's cuDNN
# backend (helper sm90v, session 9: bench/sm90s_ab.py plus a settle period before each timing and
# the causal flags / row list as arguments), forward, bf16, on the standard grid (16k tokens per batch,
# hidden 2048, h = 2048 / d): each row's timings taken one after the other on the same inputs
# (torch.randn, (b, s, h, d)) with triton.testing.do_bench (median, L2 flushed between calls:
# bench/compare.py's measurement), twice (forward then reverse order, the order rotated from row
# to row), mean of the two.
#   PYTHONPATH=<dir with the packages> python3 bench/sm90v_ab.py --builds base,kr,kr64,ctrl --settle-ms 200
# Build NAME is imported as package flashattn_NAME ("new" as flashattn): bench/sm90_device_common.sh's
# sm90_build_py installs them so. A control ("ctrl") is base's extension installed a second time
# under another name ("newc": new's): identical kernels, their ratio is the noise floor of the run.
import argparse
import importlib
import json
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench


def settle(fn, ms):
    """Runs fn back to back for ms milliseconds (then waits for it), so the clock settles on its load."""
    if ms <= 0:
        return
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        for _ in range(4):
            fn()
        torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default="base,new")
    ap.add_argument("--hdims", default="64,128,256")
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--causal", default="0,1")
    ap.add_argument("--rep", type=int, default=60)
    # Each column runs back to back for this long before it is timed (the H200 is power-limited: a kernel
    # timed right after a low-power one reads high; bench/compare.py --settle-ms does the same).
    ap.add_argument("--settle-ms", type=float, default=200.0)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    impls = {}
    for name in args.builds.split(","):
        module = importlib.import_module("flashattn" if name == "new" else "flashattn_" + name)
        impls[name] = module.flash_attn_func
    dev = torch.cuda.get_device_properties(0)
    print(json.dumps({"device": dev.name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                      "builds": list(impls)}), flush=True)

    def sdpa(q, k, v, causal):
        qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

    row_index = 0
    with torch.no_grad():
        for d in (int(x) for x in args.hdims.split(",")):
            for causal in (c == "1" for c in args.causal.split(",")):
                for s in (int(x) for x in args.seqlens.split(",")):
                    b, h = max(1, 16384 // s), 2048 // d
                    torch.manual_seed(s + d)
                    q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                    k, v = torch.randn_like(q), torch.randn_like(q)
                    flop = 4 * b * h * s * s * d / (2 if causal else 1)
                    row = {"tag": args.tag, "hdim": d, "causal": causal, "seqlen": s}
                    fns = {name: (lambda f=f: f(q, k, v, causal=causal)) for name, f in impls.items()}
                    fns["cudnn"] = lambda: sdpa(q, k, v, causal)
                    ref = fns["cudnn"]().transpose(1, 2).float()
                    errs = {name: float((fn().float() - ref).abs().max()) for name, fn in fns.items() if name != "cudnn"}
                    row["err"] = errs
                    ms = {name: [] for name in fns}
                    # The order rotates from row to row (then runs reversed), so that no build keeps
                    # the first / last places (run 1 of sm90s: those read up to 8% low).
                    names = list(fns)
                    shift = row_index % len(names)
                    names = names[shift:] + names[:shift]
                    row_index += 1
                    for order in (names, names[::-1]):
                        for name in order:
                            settle(fns[name], args.settle_ms)
                            ms[name].append(do_bench(fns[name], warmup=15, rep=args.rep, return_mode="median"))
                    for name in fns:
                        row[name] = round(flop / (sum(ms[name]) / len(ms[name])) / 1e9, 1)
                    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
