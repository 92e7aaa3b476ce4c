"""Session 43: the Python interface's host time per call, before (flashattn_base) and after (flashattn) the
session's wrapper changes, in one process, rounds interleaved (GPU).

Both packages load the same extension build; only their Python differs (base: the tree before the patch that
the calling script reverses). The KV-cache case was added after s43_ab.sh's run (s43_ab2.sh has it). Each case: host_us of bench/python_overhead.py (best of 5 rounds of N back-to-back calls); four rounds
of every case, base and new alternating, first one then the other. Prints a row per reading and a summary
row per case with the medians and new / base.
"""

import json
import os
import statistics
import sys

import torch
import torch.nn.functional as F

import flashattn
import flashattn_base

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from python_overhead import host_us  # noqa: E402  (bench/)


def main():
    dt = torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device="cuda", dtype=dt)
    k = torch.randn(1, 64, 8, 128, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    qg = q.clone().requires_grad_()
    dout = torch.randn_like(q)
    qgt = qg.detach().transpose(1, 2).requires_grad_()
    kt, vt = k.transpose(1, 2), v.transpose(1, 2)
    kg, vg = k.clone().requires_grad_(), v.clone().requires_grad_()
    k_cache = torch.randn(1, 256, 8, 128, device="cuda", dtype=dt)
    v_cache = torch.randn_like(k_cache)
    seqlens = torch.tensor([100], device="cuda", dtype=torch.int32)
    k_new, v_new = k[:, :1].contiguous(), v[:, :1].contiguous()

    def cases(pkg):
        return {
            "forward, no grad": (False, lambda: pkg.flash_attn_func(q, k, v)),
            "forward, q requires grad": (True, lambda: pkg.flash_attn_func(qg, k, v)),
            "step .backward(dout)": (True, lambda: pkg.flash_attn_func(qg, k, v).backward(dout)),
            "step .sum().backward()": (True, lambda: pkg.flash_attn_func(qg, k, v).sum().backward()),
            "step q, k, v require grad": (True, lambda: pkg.flash_attn_func(qg, kg, vg).backward(dout)),
            "KV cache with append (decode)": (False, lambda: pkg.flash_attn_with_kvcache(
                q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens)),
        }

    sdpa = {
        "forward, no grad": (False, lambda: F.scaled_dot_product_attention(qgt.detach(), kt, vt)),
        "forward, q requires grad": (True, lambda: F.scaled_dot_product_attention(qgt, kt, vt)),
        "step .backward(dout)": (True, lambda: F.scaled_dot_product_attention(qgt, kt, vt).backward(
            dout.transpose(1, 2))),
        "step .sum().backward()": (True, lambda: F.scaled_dot_product_attention(qgt, kt, vt).sum().backward()),
    }
    builds = {"base": cases(flashattn_base), "new": cases(flashattn)}
    readings = {}
    for round_ in range(4):
        order = ("base", "new") if round_ % 2 == 0 else ("new", "base")
        for name in builds["new"]:
            for build in order + ("sdpa",):
                table = sdpa if build == "sdpa" else builds[build]
                if name not in table:
                    continue
                grad, fn = table[name]
                calls = 500 if "step" in name else 2000
                with torch.set_grad_enabled(grad):
                    us = host_us(fn, calls)
                readings.setdefault((name, build), []).append(us)
                print(json.dumps({"round": round_, "case": name, "build": build, "host_us": round(us, 1)}),
                      flush=True)
    for name in builds["new"]:
        row = {"case": name}
        for build in ("base", "new", "sdpa"):
            if (name, build) in readings:
                row[build] = round(statistics.median(readings[(name, build)]), 1)
        row["new/base"] = round(row["new"] / row["base"], 3)
        ratios = [n / b for n, b in zip(readings[(name, "new")], readings[(name, "base")])]
        row["new/base per round"] = [round(r, 3) for r in ratios]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
