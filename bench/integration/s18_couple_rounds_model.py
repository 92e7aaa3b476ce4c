#!/usr/bin/env python3
"""Session 18 (issue 6): a model of how the static couples of the causal K/V multicast rows fill the GPU.

The multicast kernels (d128 causal from 8192 keys, d256 causal from 2048) run static couples: cluster g of G (66
on 132 SMs) takes couples g, g + G, ... of the plan (tile_sections.h: L2 sections of `sec` (batch, head) pairs,
inside a section couples of query units r and U - 1 - r, pairs fastest). Every couple is the same work, so the
launch takes ceil(couples / G) rounds while perfect balance is couples / G. A unit (two 128-row query blocks)
costs its key blocks + OVERHEAD. Printed per row: the sections' size, and the makespan over perfect balance for
the couples, for a snake order of single units (round k forward or backward) and for a dynamic longest-first
claim of single units, both over the kernel's section order. The H200's L2 (60 MiB) as in the section sizes.
Result (session 18): the couples lose 3.1-3.9% to rounding on every multicast row. Single units lose more
wherever sections hold several heads (a later section's longest units start late): snake 1.03-1.78, dynamic
1.05-1.16, except at 16k, where a section is one head of 64 units and the dynamic
longest-first claim reads 1.002-1.004 against the couples' 1.031-1.032: a lead for d128 / d256 causal 16k
(the multicast needs both CTAs of a cluster on the same unit, so the claim would be the cluster's, shared
through distributed shared memory). Under the power cap (docs/performance.md, session 18) idle SMs in the
last round let the others clock up, so the rounding costs less than it reads here.
    python3 bench/integration/s18_couple_rounds_model.py
"""
import heapq
import math

L2 = 60 * 2**20


def row(s, d, block_n, pairs, clusters, overhead, l2_divisor):
    units = math.ceil(s / 256)  # pairs of 128-row query blocks
    cost = [math.ceil(min((units - r) * 256, s) / block_n) + overhead for r in range(units)]  # rank r: longest first
    sec = min(pairs, max(1, (L2 // l2_divisor) // (s * 2 * d * 2)))
    order = []
    for first in range(0, pairs, sec):
        size = min(sec, pairs - first)
        order += [cost[r] for r in range(units) for _ in range(size)]
    ideal = sum(order) / clusters
    couples = []
    for first in range(0, pairs, sec):
        size = min(sec, pairs - first)
        couples += [cost[r] + cost[units - 1 - r] for r in range(units // 2) for _ in range(size)]
    load = [0] * clusters
    for i, x in enumerate(couples):
        load[i % clusters] += x
    by_couples = max(load)
    load = [0] * clusters
    for i, x in enumerate(order):
        k, j = divmod(i, clusters)
        load[j if k % 2 == 0 else clusters - 1 - j] += x
    snake = max(load)
    heap = [(0, g) for g in range(clusters)]
    for x in order:
        t, g = heapq.heappop(heap)
        heapq.heappush(heap, (t + x, g))
    dynamic = max(t for t, _ in heap)
    return sec, by_couples / ideal, snake / ideal, dynamic / ideal


def main():
    for overhead in (1, 3):
        print(f"tile overhead {overhead} key blocks: sections, couples / snake / dynamic over perfect balance")
        for s in (8192, 16384):
            sec, a, b, c = row(s, 128, 128, (16384 // s) * 16, 66, overhead, 8)
            print(f"  d128 causal {s:5d}: sec {sec:2d}  {a:.3f} / {b:.3f} / {c:.3f}")
        for s in (2048, 4096, 8192, 16384):
            sec, a, b, c = row(s, 256, 80, (16384 // s) * 8, 66, overhead, 2)
            print(f"  d256 causal {s:5d}: sec {sec:2d}  {a:.3f} / {b:.3f} / {c:.3f}")


if __name__ == "__main__":
    main()
