# Session 32 (issue 6): what the persistent schedule's last, partial round costs. Every row of the standard grid
# (16k tokens per batch, hidden 2048) has the same number of tiles per length: 1024 of 128 rows at d = 256, 2048 at
# d = 128, i.e. 7.76 / 15.52 rounds of 132 CTAs (or 3.88 / 7.76 rounds of causal couples), so the last round leaves
# a quarter to a half of the SMs idle: ~3% of the time if the idle SMs gave nothing back. Under the H200's power
# cap the active ones clock up in that round, so the real cost is less. This probe times the same kernel on a
# grid shape and on a shape of the same length whose tiles fill whole rounds (more heads, batch 1), in interleaved
# stints of sustained load (bench/sm90r_ab.py time_sustained), with cuDNN on the same shapes for reference.
#   PYTHONPATH=<dir with the flashattn package> python3 bench/rounds_probe.py [--build new] [--rounds 3]
# Output: one JSON line per pair of shapes: each shape's TFLOP/s, its rounds (tiles / CTAs) and the ratio
# whole / grid (1.0: the partial round costs nothing; rounds(whole) / ceil ... : it costs in full).
import argparse
import importlib
import json
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from sm90r_ab import time_sustained

# (d, causal, seqlen, grid (b, h), whole (b, h)); whole: tiles (or couples) a multiple of the 132 SMs.
PAIRS = [
    (128, False, 16384, (1, 16), (1, 33)),
    (128, False, 8192, (2, 16), (1, 33)),
    (128, False, 4096, (4, 16), (1, 66)),
    (256, False, 1024, (16, 8), (1, 132)),
    (256, False, 8192, (2, 8), (1, 33)),
    (256, True, 4096, (4, 8), (1, 33)),
    (256, True, 2048, (8, 8), (1, 66)),
    (128, True, 16384, (1, 16), (1, 33)),
]


def rounds(d, causal, s, b, h, sms):
    tiles = b * h * math.ceil(s / 128)
    return tiles / (2 * sms) if causal else tiles / sms  # causal: couples of two tiles (equal work)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="new")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stint-ms", type=float, default=300)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--sweep", default="",
                    help="instead of the pairs: groups of shapes D:CAUSAL:SEQLEN:B:H1/H2/... or D:CAUSAL:SEQLEN:B1xH1/B2xH2/... "
                         "(each BxH optionally @SEED, the inputs' seed; a token repeated is a second allocation) "
                         "separated by commas, each group one line (its shapes timed in the same interleaved "
                         "stints)")
    ap.add_argument("--log-stints", action="store_true",
                    help="one JSON line per stint: its name, wall-clock start / end and median ms (to lay beside a "
                         "clock / power log such as nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw -lms 20)")
    args = ap.parse_args()
    module = importlib.import_module("flashattn" if args.build == "new" else "flashattn_" + args.build)
    ours = module.flash_attn_func
    dev = torch.cuda.get_device_properties(0)
    print(json.dumps({"device": dev.name, "sms": dev.multi_processor_count, "torch": torch.__version__,
                      "cudnn": torch.backends.cudnn.version()}), flush=True)

    def cudnn(q, k, v, causal):
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                  is_causal=causal)

    groups = [(d, causal, s, {"grid": grid_shape, "whole": whole_shape})
              for d, causal, s, grid_shape, whole_shape in (PAIRS if not args.sweep else [])]
    for group in args.sweep.split(",") if args.sweep else []:
        fields = group.split(":")
        d, c, s = fields[:3]
        if len(fields) == 5:  # D:C:S:B:H1/H2/...
            shapes = {f"h{h}": (int(fields[3]), int(h)) for h in fields[4].split("/")}
        else:  # D:C:S:B1xH1/B2xH2/..., each optionally @SEED (a repeated token: a second allocation)
            shapes = {}
            for token in fields[3].split("/"):
                tag = "b" + token
                while tag in shapes:
                    tag += "'"
                bh, _, seed = token.partition("@")
                shapes[tag] = tuple(int(x) for x in bh.split("x")) + ((int(seed),) if seed else ())
        groups.append((int(d), c == "1", int(s), shapes))
    with torch.no_grad():
        for index, (d, causal, s, shapes) in enumerate(groups):
            fns, flops = {}, {}
            for tag, (b, h, *seed) in shapes.items():
                torch.manual_seed(seed[0] if seed else index * 7 + b * h)
                q = torch.randn(b, s, h, d, device="cuda", dtype=torch.bfloat16)
                k, v = torch.randn_like(q), torch.randn_like(q)
                flops[tag] = 4 * b * h * s * s * d / (2 if causal else 1)
                ref = cudnn(q, k, v, causal).transpose(1, 2).float()
                err = float((ours(q, k, v, causal=causal).float() - ref).abs().max())
                if not err < 0.05:
                    raise SystemExit(f"{tag} shape b{b} h{h}: max |ours - cuDNN| = {err}")
                fns["ours_" + tag] = lambda q=q, k=k, v=v: ours(q, k, v, causal=causal)
                fns["cudnn_" + tag] = lambda q=q, k=k, v=v: cudnn(q, k, v, causal)
            names = list(fns)
            log = None
            if args.log_stints:
                def log(name, r, began, ended, ms, index=index):
                    print(json.dumps({"stint": name, "group": index, "round": r, "start": began, "end": ended,
                                      "ms": ms}), flush=True)
            ms, _ = time_sustained(fns, index, args.stint_ms, args.rounds, args.calls, on_stint=log)
            tflops = {name: round(flops[name.split("_", 1)[1]] / ms[name] / 1e9, 1) for name in names}
            row = {"hdim": d, "causal": causal, "seqlen": s, "shapes": shapes,
                   "rounds": {tag: round(rounds(d, causal, s, *shape[:2], dev.multi_processor_count), 3)
                              for tag, shape in shapes.items()},
                   "tflops": tflops}
            if "grid" in shapes:
                row["ours_whole_over_grid"] = round(tflops["ours_whole"] / tflops["ours_grid"], 4)
                row["cudnn_whole_over_grid"] = round(tflops["cudnn_whole"] / tflops["cudnn_grid"], 4)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
