# Clock and power per backend at free clocks: each (row, backend) runs back to back for --seconds while
# `nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw -lms 50` samples the GPU in the background; the samples
# of each phase's second half (after the clocks settled) are averaged. Prints one JSON line per phase: the row,
# the backend, calls per second (so TFLOP/s), the mean SM clock (MHz) and power (W). The question it answers:
# at the short rows where we trail cuDNN at free clocks but not under ncu's locked clocks, does cuDNN's kernel
# run at a higher clock (power) or do the same clocks do more work per second (memory)?
#   PYTHONPATH=<packages> python3 bench/clock_phases.py --rows 128:1:512,64:1:512 --builds new --cudnn
import argparse
import importlib
import json
import subprocess
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ap = argparse.ArgumentParser()
ap.add_argument("--rows", required=True, help="comma-separated d:causal:seqlen")
ap.add_argument("--builds", default="new")
ap.add_argument("--cudnn", action="store_true")
ap.add_argument("--seconds", type=float, default=2.0)
args = ap.parse_args()
mods = {n: importlib.import_module("flashattn" if n == "new" else "flashattn_" + n) for n in args.builds.split(",")}

log = tempfile.NamedTemporaryFile("w+", suffix=".csv", delete=False)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
                        "-lms", "50"], stdout=log, stderr=subprocess.DEVNULL)
time.sleep(1.0)
phases = []
with torch.no_grad():
    for row in args.rows.split(","):
        d, causal, s = (int(x) for x in row.split(":"))
        b, h = 16384 // s, 2048 // d
        q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        fns = {n: (lambda m=m: m.flash_attn_func(q, k, v, causal=bool(causal))) for n, m in mods.items()}
        if args.cudnn:
            qt, kt, vt = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

            def cudnn():
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return F.scaled_dot_product_attention(qt, kt, vt, is_causal=bool(causal))
            fns["cudnn"] = cudnn
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        for name, fn in fns.items():
            fn()
            torch.cuda.synchronize()
            start = time.time()
            calls = 0
            while time.time() - start < args.seconds:
                for _ in range(20):
                    fn()
                calls += 20
                torch.cuda.synchronize()
            end = time.time()
            phases.append({"d": d, "causal": bool(causal), "seqlen": s, "backend": name, "start": start, "end": end,
                           "tflops": round(flops * calls / (end - start) / 1e12, 1)})
time.sleep(0.3)
smi.terminate()
smi.wait()
samples = []
for line in open(log.name):
    parts = [p.strip() for p in line.split(",")]
    try:
        t = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + parts[0].split(".")[1])
        samples.append((t, float(parts[1]), float(parts[2])))
    except (ValueError, IndexError):
        continue
for p in phases:
    mid = (p["start"] + p["end"]) / 2
    inside = [x for x in samples if mid <= x[0] <= p["end"]]
    p["mhz"] = round(sum(x[1] for x in inside) / len(inside)) if inside else None
    p["watts"] = round(sum(x[2] for x in inside) / len(inside), 1) if inside else None
    p["samples"] = len(inside)
    del p["start"], p["end"]
    print(json.dumps(p), flush=True)
