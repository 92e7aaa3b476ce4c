"""Session 50: the host cost of the cluster combine's occupancy query (forward_launch.h clusters_fit: one
cudaOccupancyMaxActiveClusters per split decode launch on the narrow tile) in an eager decode loop (GPU).

Decode steps of d128 32/8 at batch 1 over 1000 keys (dense cache, bf16), not graphed: CALLS back-to-back calls
timed on the host and then synchronised, per variant, three interleaved rounds (medians, us per call). The GPU
part of a call is ~7 us, so the loop is bound by the host's work per call: num_splits 12 (more pieces than a
cluster holds: no query) against 8 (the query, then the cluster launch) and 0 (the rule: 8, the same), and 1 (no
split at all). The difference 8 - 12 bounds the query's cost from above (the launches also differ).

    python3 bench/integration/s50_eager.py
"""

import statistics
import time

import torch

import flashattn

CALLS = 2000


def main():
    torch.manual_seed(0)
    q = torch.randn(1, 1, 32, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(1, 1256, 8, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn_like(k)
    seqlens = torch.full((1,), 1000, device="cuda", dtype=torch.int32)
    times = {s: [] for s in (12, 8, 0, 1)}
    with torch.no_grad():
        for s in times:  # warm-up (workspace, first launches)
            for _ in range(50):
                flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens, num_splits=s)
        torch.cuda.synchronize()
        for _ in range(3):
            for s in times:
                start = time.perf_counter()
                for _ in range(CALLS):
                    flashattn.flash_attn_with_kvcache(q, k, v, cache_seqlens=seqlens, num_splits=s)
                torch.cuda.synchronize()
                times[s].append((time.perf_counter() - start) / CALLS * 1e6)
    for s, t in times.items():
        print(f"# eager num_splits {s}: {statistics.median(t):.2f} us per call (rounds {', '.join(f'{x:.2f}' for x in t)})")


if __name__ == "__main__":
    main()
