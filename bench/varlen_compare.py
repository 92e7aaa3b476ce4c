#!/usr/bin/env python3
"""Variable-length (packed, cu_seqlens) forward attention beside the peers on one GPU, in one process.

Training on packed documents calls flash_attn_varlen_func, not the batched form the standard grid
times, and its sequences are of mixed lengths: the tile scheduler's order (longest first) and the
per-sequence bounds are what this measures. Each row packs 16k tokens (hidden 2048, h = 2048 / d) into
sequences drawn with a fixed seed from one of these length mixes (the values are fresh random normals; --tokens
sets another total, the lengths then capped at it):

  equal      8 x 2048 (8 x tokens / 8; also timed as the batched call, so the varlen path's own cost shows)
  uniform    lengths uniform in [256, 4096]
  short      lengths uniform in [64, 1024]
  long_tail  one 8192-token sequence and the rest uniform in [128, 1024]

Columns: flashattn (the automatic backend; --builds adds side-by-side builds flashattn_NAME), flashattn_sm80
(the Ampere-class kernels, on a Hopper GPU), fa2 (PyTorch's FlashAttention 2 varlen kernel,
aten::_flash_attention_forward with cum_seq), cudnn (cuDNN's ragged path, aten::_cudnn_attention_forward with
cum_seq, as PyTorch's nested-tensor SDPA calls it; dropped from a row whose output differs from fa2's), and
flashattn_batched on the equal mix. A peer that cannot run a row says why. FLOPs: sum over sequences of
4 s^2 h d, halved when causal (the standard grid's rule). Timing as bench/compare.py: the median of do_bench
after 200 ms of the backend's own calls, per row the median over --rounds rounds in alternating order; with
--sustained N as the standing's stints instead (N rounds of interleaved 400 ms stints, bench/sm90r_ab.py
time_sustained), which the H200's power cap makes the trustworthy way to compare builds (do_bench readings of
one build moved 5-10% between calls here). Every row also checks each build's output against fa2's (max
|difference|; a row above --max-diff, or with a NaN / Inf, is reported as a mismatch and the script exits 1).

    python bench/varlen_compare.py --hdims 128 --out bench/results
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (bench_ms, short_reason, environment: the same method as the standard grid)
import sm90r_ab  # noqa: E402  (import_builds; time_sustained: the stints of the standing)

TOKENS, HIDDEN = 16384, 2048


def draw_lengths(mix: str, seed: int, tokens: int = TOKENS) -> list[int]:
    """Sequence lengths summing to `tokens`, reproducible per mix."""
    rng = random.Random(f"{mix}-{seed}")
    if mix == "equal":
        return [max(1, tokens // 8)] * 8
    if mix == "long_tail":
        lengths, low, high = [8192], 128, 1024
    elif mix == "uniform":
        lengths, low, high = [], 256, 4096
    elif mix == "short":
        lengths, low, high = [], 64, 1024
    else:
        raise ValueError(f"--mixes: unknown mix {mix!r} (equal, uniform, short, long_tail)")
    lengths = [min(n, tokens) for n in lengths]
    while sum(lengths) < tokens:
        lengths.append(min(rng.randint(low, high), tokens - sum(lengths)))
    rng.shuffle(lengths)
    return lengths


def forward_flop(lengths, heads, hdim, causal) -> float:
    return sum(4.0 * s * s * heads * hdim for s in lengths) / (2 if causal else 1)


def load_builds(names: str):
    """--builds (bench/sm90r_ab.py import_builds: "new" is the flashattn package, NAME the side-by-side build
    flashattn_NAME) keyed by column name: flashattn / flashattn_NAME."""
    return {("flashattn" if name == "new" else f"flashattn_{name}"): module
            for name, module in sm90r_ab.import_builds(names).items()}


def make_backends(builds, q, k, v, cu, max_len, causal, lengths, sm80):
    """name -> callable returning the packed output (total, h, d)."""
    found = {}
    for column, module in builds.items():
        def ours(module=module):
            return module.flash_attn_varlen_func(q, k, v, cu, cu, max_len, max_len, causal=causal)
        found[column] = ours
    main = next(iter(builds.values()))  # the first build also runs the sm80 and batched columns
    if main is not None:
        hopper = torch.cuda.get_device_capability()[0] == 9
        if sm80 and hopper and main.backend_compiled("cuda_sm80") and main.backend_compiled("cuda_sm90"):
            def ours_sm80():
                with main.use_backend("cuda_sm80"):
                    return main.flash_attn_varlen_func(q, k, v, cu, cu, max_len, max_len, causal=causal)
            found["flashattn_sm80"] = ours_sm80
        if len(set(lengths)) == 1:
            b, s = len(lengths), lengths[0]
            qb, kb, vb = (t.view(b, s, *t.shape[1:]) for t in (q, k, v))

            def ours_batched():
                return main.flash_attn_func(qb, kb, vb, causal=causal).view(q.shape)
            found["flashattn_batched"] = ours_batched

    def fa2():
        return torch.ops.aten._flash_attention_forward(q, k, v, cu, cu, max_len, max_len, 0.0, causal, False)[0]
    found["fa2"] = fa2

    # cuDNN's ragged (THD) path, as PyTorch's nested-tensor SDPA calls it: packed (total, h, d) tensors and the
    # cumulative offsets. Its output is checked against fa2's like ours (a wrong layout would show there).
    # The offsets' dtype differs between torch versions: the first that runs is kept (the other's error is
    # the column's reason when neither does).
    errors = []
    for offsets in (cu.to(torch.int64), cu):
        def cudnn(offsets=offsets):
            return torch.ops.aten._cudnn_attention_forward(q, k, v, None, offsets, offsets, max_len, max_len,
                                                           False, 0.0, causal, False)[0]
        try:
            with torch.no_grad():
                cudnn()
            torch.cuda.synchronize()
        except Exception as e:
            errors.append(e)
            continue
        found["cudnn"] = cudnn
        break
    else:
        def cudnn_unavailable():
            raise errors[-1]
        found["cudnn"] = cudnn_unavailable
    return found


def run_row(args, mix, hdim, causal):
    lengths = draw_lengths(mix, args.seed, args.tokens)
    heads = HIDDEN // hdim
    cu = torch.tensor([0] + [sum(lengths[:i + 1]) for i in range(len(lengths))], dtype=torch.int32, device="cuda")
    q = torch.randn(sum(lengths), heads, hdim, device="cuda", dtype=args.dtype)
    k, v = torch.randn_like(q), torch.randn_like(q)
    flop = forward_flop(lengths, heads, hdim, causal)
    row = {"mix": mix, "tokens": sum(lengths), "hdim": hdim, "causal": causal, "sequences": len(lengths),
           "max_len": max(lengths), "min_len": min(lengths)}
    impls = make_backends(args.builds, q, k, v, cu, max(lengths), causal, lengths, args.sm80)
    outputs = {}
    with torch.no_grad():
        for name, fn in list(impls.items()):
            try:
                outputs[name] = fn().float()
                torch.cuda.synchronize()
            except Exception as e:  # a backend that cannot run this row says why
                row[name] = f"n/a ({compare.short_reason(e)})"
                del impls[name]
        if "fa2" in outputs:
            for name in outputs:
                if name != "fa2":
                    diff = float((outputs[name] - outputs["fa2"]).abs().max())
                    row["max_diff_vs_fa2" if name == "flashattn" else f"{name}_max_diff_vs_fa2"] = diff
        for name in args.builds:
            if name in outputs:
                row[f"{name}_finite" if name != "flashattn" else "output_finite"] = bool(
                    torch.isfinite(outputs[name]).all())
        if row.get("cudnn_max_diff_vs_fa2", 0.0) > args.max_diff:  # not the same attention: not a peer
            row["cudnn"] = f"n/a (output differs from fa2's by {row['cudnn_max_diff_vs_fa2']:.3g})"
            impls.pop("cudnn", None)
        del outputs
        readings = {name: [] for name in impls}
        if args.sustained > 0:
            # Interleaved stints (bench/sm90r_ab.py time_sustained: each at its own sustained load, the order
            # rotated every round), the first build the reference of the speedups; cuDNN's ragged path, at
            # tens of milliseconds per call, is read once by do_bench instead.
            stinted = {name: fn for name, fn in impls.items() if name != "cudnn"}
            ms, speedup = sm90r_ab.time_sustained(stinted, run_row.index, args.sustained_ms, args.sustained,
                                                  args.sustained_calls)
            run_row.index += 1
            for name in stinted:
                readings[name].append(round(flop / ms[name] / 1e9, 1))
            row["sustained_speedup"] = {name: round(speedup[name], 4) for name in stinted}
            if "cudnn" in impls:
                readings["cudnn"].append(round(flop / compare.bench_ms(impls["cudnn"]) / 1e9, 1))
        else:
            for r in range(args.rounds):
                for name, fn in (list(impls.items()) if r % 2 == 0 else list(reversed(impls.items()))):
                    readings[name].append(round(flop / compare.bench_ms(fn) / 1e9, 1))
    for name, values in readings.items():
        row[name] = round(statistics.median(values), 1)
        if len(values) > 1:
            row[name + "_rounds"] = values
    ours = row.get(next(iter(args.builds)))  # the first build's
    peers = [row[n] for n in ("fa2", "cudnn") if isinstance(row.get(n), float)]
    if isinstance(ours, float) and peers:
        row["flashattn_over_best_peer"] = round(ours / max(peers), 3)
    print(json.dumps(row), flush=True)
    return row


run_row.index = 0  # the stints' rotation continues from row to row


def markdown(rows) -> str:
    # Our builds in --builds order (a row's keys keep the order they were set in), then the references.
    builds = [k for k in dict.fromkeys(k for r in rows for k in r) if k.startswith("flashattn") and
              (k == "flashattn" or k.count("_") == 1) and not k.endswith(("batched", "sm80"))]
    names = builds + [n for n in ("flashattn_batched", "flashattn_sm80", "fa2", "cudnn") if any(n in r for r in rows)]
    lines = ["| mix | d | causal | sequences (min-max) | " + " | ".join(names) + " | first build / best peer | "
             "its max diff vs fa2 |", "|---" * (len(names) + 6) + "|"]
    for r in rows:
        cells = [str(r.get(n, "")) for n in names]
        diff = r.get("max_diff_vs_fa2" if builds and builds[0] == "flashattn" else f"{builds[0]}_max_diff_vs_fa2")
        lines.append(f"| {r['mix']} | {r['hdim']} | {r['causal']} | {r['sequences']} ({r['min_len']}-{r['max_len']}) | "
                     + " | ".join(cells) + f" | {r.get('flashattn_over_best_peer', 'n/a')} | "
                     + (f"{diff:.3g}" if isinstance(diff, float) else "n/a") + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mixes", default="equal,uniform,short,long_tail")
    parser.add_argument("--hdims", default="64,128,256")
    parser.add_argument("--causal", default="0,1", help="comma list of 0 / 1")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--rounds", type=lambda x: max(1, int(x)), default=2)
    parser.add_argument("--builds", default="new", help="comma list: new (flashattn) or NAME (flashattn_NAME)")
    parser.add_argument("--no-sm80", dest="sm80", action="store_false", help="leave out the cuda_sm80 column")
    parser.add_argument("--sustained", type=int, default=0,
                        help="rounds of interleaved stints instead of do_bench (bench/sm90r_ab.py --sustained)")
    parser.add_argument("--sustained-ms", type=float, default=400)
    parser.add_argument("--sustained-calls", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=TOKENS, help="packed tokens per call (equal mix: 8 sequences)")
    parser.add_argument("--seed", type=int, default=0, help="the length draw's seed (the values are fresh)")
    parser.add_argument("--max-diff", type=float, default=0.05,
                        help="largest |flashattn - fa2| accepted (inputs N(0, 1), outputs in 16 bits)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--tag", default=time.strftime("%Y%m%d-%H%M%S"))
    args = parser.parse_args()
    args.dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    if not torch.cuda.is_available():
        sys.exit("bench/varlen_compare.py needs a CUDA GPU")
    args.builds = load_builds(args.builds)
    if not args.builds:
        sys.exit("bench/varlen_compare.py: no build of --builds imports (each missing one is reported above)")
    env = compare.environment()
    print(json.dumps(env), flush=True)
    rows = [run_row(args, mix, int(d), c == "1") for d in args.hdims.split(",") for c in args.causal.split(",")
            for mix in args.mixes.split(",")]
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, f"varlen-{args.tag}")
    with open(base + ".json", "w") as f:
        json.dump({"environment": env, "rows": rows, "seed": args.seed,
                   "method": "median of triton.testing.do_bench after 200 ms of the backend's own calls; per row "
                             f"the median over {args.rounds} rounds in alternating order"}, f, indent=1)
    report = markdown(rows)
    with open(base + ".md", "w") as f:
        f.write(f"# {env.get('gpu')} | driver {env.get('driver')} | torch {env.get('torch')} | cuDNN "
                f"{env.get('cudnn')}\n\nVarlen forward TFLOP/s, {args.tokens} tokens, hidden 2048, "
                f"length seed {args.seed}; "
                + (f"{args.sustained} rounds of interleaved {args.sustained_ms:g} ms stints (cuDNN: do_bench)"
                   if args.sustained > 0 else f"do_bench, median of {args.rounds} rounds") + "\n\n"
                + report + "\n")
    print(report)
    bad = [r for r in rows if any((k.endswith("finite") and v is False) or (k.endswith("max_diff_vs_fa2") and
                                                                          not k.startswith("cudnn") and
                                                                          v > args.max_diff)
                                  for k, v in r.items())]
    if bad:
        print(f"MISMATCH in {len(bad)} rows: " + "; ".join(f"{r['mix']} d{r['hdim']} causal {r['causal']}"
                                                        for r in bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
