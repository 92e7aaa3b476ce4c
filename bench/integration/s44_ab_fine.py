"""Session 44: host time per call of two builds (flashattn_base, flashattn) in one process, finely interleaved (GPU).

s43_ab.py's readings (best of 5 rounds of 2000 calls, four rounds) drifted by up to 1.5x within s44_ws.sh's process,
its controls as much as the case under test. Here each case alternates the two builds every `calls` calls, 101
pairs, the order flipped every pair; the ratio is new / base within each pair (adjacent in time, so slow drift
cancels), reported as its median and quartiles beside each build's median time per call. Controls: calls the change
under test does not touch.
"""

import json
import statistics
import time

import torch

import flashattn
import flashattn_base


def per_call_us(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    return elapsed / calls * 1e6


def main():
    dt = torch.bfloat16
    q = torch.randn(1, 1, 8, 128, device="cuda", dtype=dt)
    k = torch.randn(1, 64, 8, 128, device="cuda", dtype=dt)
    v = torch.randn_like(k)
    k_cache = torch.randn(1, 256, 8, 128, device="cuda", dtype=dt)
    v_cache = torch.randn_like(k_cache)
    seqlens = torch.tensor([100], device="cuda", dtype=torch.int32)
    k_new, v_new = k[:, :1].contiguous(), v[:, :1].contiguous()

    def cases(pkg):
        return {
            "forward, no grad": lambda: pkg.flash_attn_func(q, k, v),
            # Not a control, as it turned out (s44_fine.jsonl keeps this label): with one query row, bottom-right
            # causal masks nothing, and validate.cpp drops such a mask, so the call runs the static schedule too.
            "forward, no grad, causal (control)": lambda: pkg.flash_attn_func(q, k, v, causal=True),
            "KV cache with append (control)": lambda: pkg.flash_attn_with_kvcache(
                q, k_cache, v_cache, k_new, v_new, cache_seqlens=seqlens),
        }

    builds = {"base": cases(flashattn_base), "new": cases(flashattn)}
    calls, pairs = 300, 101
    with torch.no_grad():
        for name in builds["new"]:
            fns = {b: builds[b][name] for b in builds}
            for fn in fns.values():
                for _ in range(200):
                    fn()
            torch.cuda.synchronize()
            times = {"base": [], "new": []}
            ratios = []
            for pair in range(pairs):
                order = ("base", "new") if pair % 2 == 0 else ("new", "base")
                reading = {}
                for b in order:
                    reading[b] = per_call_us(fns[b], calls)
                    torch.cuda.synchronize()
                    times[b].append(reading[b])
                ratios.append(reading["new"] / reading["base"])
            q1, median, q3 = statistics.quantiles(ratios, n=4)
            print(json.dumps({"case": name, "base_us": round(statistics.median(times["base"]), 2),
                              "new_us": round(statistics.median(times["new"]), 2),
                              "new/base median": round(median, 3), "quartiles": [round(q1, 3), round(q3, 3)],
                              "pairs": pairs, "calls": calls}), flush=True)


if __name__ == "__main__":
    main()
