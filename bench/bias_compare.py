"""flashattn's attn_bias against PyTorch SDPA's attn_mask, forward and backward, side by side in one process.

Rows: bf16, 16k tokens a batch (b = 16384 / s), hidden 2048 (h = 2048 / d), sq = sk = s, three masks:
  keypad  a bool key-padding mask (b, 1, 1, s), each sequence's last quarter hidden;
  bool    a bool (b, 1, s, s) mask, 75% of the keys kept (drawn);
  float   an fp32 bias (1, h, s, s), normal values.
Peers: SDPA's EFFICIENT_ATTENTION and CUDNN_ATTENTION with the same attn_mask (bool: True keeps, as ours), and
flashattn without a mask (the call a user makes without one: cuda_sm90 on Hopper) and cuda_sm80's plain kernel (the
family a bias runs on, also on Hopper): what the bias costs. Each is timed with triton's do_bench (median) after a settle
period; outputs are checked against SDPA's math backend in fp32 on the first row of each mask (max abs error).
One JSON line per (row, implementation, pass), then a table of ratios on stderr.

  python bench/bias_compare.py [--seqlens 512 2048 4096] [--hdims 64 128] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import flashattn
from backward_compare import bench_ms  # the same settle-then-do_bench timing (bench/ is the script's dir)
from flashattn import _ops


def make_mask(kind, b, h, s, device):
    if kind == "keypad":
        mask = torch.ones(b, 1, 1, s, dtype=torch.bool, device=device)
        mask[..., s * 3 // 4:] = False
        return mask
    if kind == "bool":
        return torch.rand(b, 1, s, s, device=device) < 0.75
    return torch.randn(1, h, s, s, device=device, dtype=torch.float32)


def flops(b, h, s, d, backward):
    forward = 4 * b * h * s * s * d
    return forward * (2.5 if backward else 1.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seqlens", type=int, nargs="+", default=[512, 2048, 4096])
    parser.add_argument("--hdims", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--masks", nargs="+", default=["keypad", "bool", "float"])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.manual_seed(0)
    rows = []
    for d in args.hdims:
        for s in args.seqlens:
            b, h = max(1, 16384 // s), 2048 // d
            q, k, v = (torch.randn(b, s, h, d, device=device, dtype=torch.bfloat16) for _ in range(3))
            dout = torch.randn_like(q)
            for kind in args.masks:
                mask = make_mask(kind, b, h, s, device)
                qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
                sdpa_mask = mask if mask.dtype == torch.bool else mask.to(torch.bfloat16)
                def sm80_plain(q=q, k=k, v=v):
                    with flashattn.use_backend("cuda_sm80"):
                        return flashattn.flash_attn_func(q, k, v)
                impls = {
                    "flashattn": lambda: flashattn.flash_attn_func(q, k, v, attn_bias=mask),
                    "flashattn_nomask": lambda: flashattn.flash_attn_func(q, k, v),
                    # cuda_sm80's kernel without a bias, the family a bias runs on (on Hopper too): what the
                    # bias costs there.
                    "flashattn_sm80_nomask": sm80_plain,
                }
                for name, backend in (("sdpa_efficient", SDPBackend.EFFICIENT_ATTENTION),
                                      ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
                    def run(backend=backend, qt=qt, kt=kt, vt=vt, sdpa_mask=sdpa_mask):
                        with sdpa_kernel([backend]):
                            return F.scaled_dot_product_attention(qt, kt, vt, attn_mask=sdpa_mask).transpose(1, 2)
                    impls[name] = run
                reference = None
                if s == args.seqlens[0]:
                    with sdpa_kernel([SDPBackend.MATH]):
                        reference = F.scaled_dot_product_attention(
                            qt.float(), kt.float(), vt.float(),
                            attn_mask=mask if mask.dtype == torch.bool else mask).transpose(1, 2)
                    reference = torch.nan_to_num(reference)  # SDPA's math gives NaN rows where all is hidden
                for name, fn in impls.items():
                    row = {"d": d, "seqlen": s, "batch": b, "heads": h, "mask": kind, "impl": name}
                    try:
                        out = fn()
                        if reference is not None and name not in ("flashattn_nomask", "flashattn_sm80_nomask"):
                            row["max_err"] = (torch.nan_to_num(out.float()) - reference).abs().max().item()
                        fwd_ms = bench_ms(fn, 150)
                        row["fwd_ms"] = fwd_ms
                        row["fwd_tflops"] = flops(b, h, s, d, False) / fwd_ms / 1e9
                        qg, kg, vg = (t.detach().requires_grad_() for t in (q, k, v))
                        if name.startswith("flashattn"):
                            bias = mask if name == "flashattn" else None
                            backend = "cuda_sm80" if name == "flashattn_sm80_nomask" else "auto"
                            with flashattn.use_backend(backend):
                                out_g = flashattn.flash_attn_func(qg, kg, vg, attn_bias=bias)
                        else:
                            backend = SDPBackend.EFFICIENT_ATTENTION if "efficient" in name else \
                                SDPBackend.CUDNN_ATTENTION
                            with sdpa_kernel([backend]):
                                out_g = F.scaled_dot_product_attention(
                                    qg.transpose(1, 2), kg.transpose(1, 2), vg.transpose(1, 2),
                                    attn_mask=sdpa_mask).transpose(1, 2)
                        def bwd(out_g=out_g, qg=qg, kg=kg, vg=vg):
                            return torch.autograd.grad(out_g, (qg, kg, vg), dout, retain_graph=True)
                        if name == "flashattn_sm80_nomask":
                            # autograd's backward runs on its own thread, outside use_backend's (thread-local)
                            # choice: the op, called here.
                            with torch.no_grad(), flashattn.use_backend("cuda_sm80"):
                                out_f, lse, rng = _ops.fwd(q, k, v, None, False, -1, -1, 0.0, None, 0.0, None, False, 0)

                            def bwd(out_f=out_f, lse=lse, rng=rng):
                                with flashattn.use_backend("cuda_sm80"):
                                    return _ops.bwd(dout, q, k, v, out_f, lse, None, False, -1, -1, 0.0, None, 0.0,
                                                    rng, None, False)
                        bwd_ms = bench_ms(bwd, 150)
                        row["bwd_ms"] = bwd_ms
                        row["bwd_tflops"] = flops(b, h, s, d, True) / bwd_ms / 1e9
                    except Exception as error:  # a peer without this mask form: recorded, not fatal
                        row["error"] = f"{type(error).__name__}: {str(error)[:160]}"
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f)
    # Ratios: flashattn's time against each peer's (>1: flashattn faster).
    by_key = {}
    for r in rows:
        by_key.setdefault((r["d"], r["seqlen"], r["mask"]), {})[r["impl"]] = r
    print("| d | s | mask | fwd vs efficient | fwd vs cudnn | bwd vs efficient | bwd vs cudnn | fwd / bwd cost of "
          "the mask (against the plain call) | (against cuda_sm80's plain kernel) |", file=sys.stderr)
    for (d, s, kind), impls in sorted(by_key.items()):
        ours = impls.get("flashattn", {})

        def ratio(peer, key):
            theirs = impls.get(peer, {})
            if key not in ours or key not in theirs:
                return "-"
            return f"{theirs[key] / ours[key]:.2f}"
        def cost(a, b):
            if "bwd_ms" not in a or "bwd_ms" not in b:
                return "-"
            return f"{a['fwd_ms'] / b['fwd_ms']:.2f} / {a['bwd_ms'] / b['bwd_ms']:.2f}"
        plain, sm80 = impls.get("flashattn_nomask", {}), impls.get("flashattn_sm80_nomask", {})
        print(f"| {d} | {s} | {kind} | {ratio('sdpa_efficient', 'fwd_ms')} | {ratio('sdpa_cudnn', 'fwd_ms')} | "
              f"{ratio('sdpa_efficient', 'bwd_ms')} | {ratio('sdpa_cudnn', 'bwd_ms')} | {cost(ours, plain)} | "
              f"{cost(ours, sm80)} |", file=sys.stderr)


if __name__ == "__main__":
    main()
