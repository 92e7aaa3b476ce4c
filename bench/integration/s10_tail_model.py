#!/usr/bin/env python3
"""Session 10 (issue 6): a model of the sm90 dynamic schedule's tail on the standard grid's causal rows.

132 CTAs start on tiles 0..131; each claims the next index when its tile is done (the producer's atomicAdd).
A tile costs its key blocks + OVERHEAD (prologue / epilogue, in key blocks). The order is the kernel's: L2
sections of `sec` (batch, head) pairs, query blocks last-first inside a section, pairs fastest. Printed: the
makespan over perfect balance (total cost / 132) with the order before session 10 (the last section keeps the
remainder) and with the last section grown to FACTOR tiles per CTA (tile_sections.h plan_tile_sections).
Tile shapes and section sizes as forward_config.h / forward_launch.h choose them on an H200 (60 MiB of L2).
    python3 bench/integration/s10_tail_model.py
"""
import heapq
import math

SMS = 132
L2 = 60 * 1024 * 1024


def shape(d, s):  # causal: (kBlockM, kBlockN, L2 section divisor)
    if d == 64:
        if 512 <= s < 16384:
            return 256, 64, 2  # four consumers, masked instance
        return (192, 96, 2) if s >= 8192 else (128, 128, 2)
    if d == 128:
        return 128, 128, 8
    return 128, (64 if s <= 512 else 80), 2


def order(d, s, factor):
    bm, bn, div = shape(d, s)
    pairs, m = (16384 // s) * (2048 // d), math.ceil(s / bm)
    sec = min(pairs, max(1, (L2 // div) // (s * 2 * d * 2)))
    regular = (pairs - 1) // sec
    while factor and regular > 0 and (pairs - regular * sec) * m < factor * SMS:
        regular -= 1
    sizes = [sec] * regular + [pairs - regular * sec]
    tiles = []
    for size in sizes:
        for rank in range(m):
            mb = m - 1 - rank
            tiles += [(min((mb + 1) * bm, s) - 1) // bn + 1] * size
    return tiles


def makespan_over_ideal(tiles, overhead):
    heap = [(tiles[i] + overhead, i) for i in range(min(SMS, len(tiles)))]
    heapq.heapify(heap)
    nxt, end = len(heap), 0.0
    while heap:
        t, c = heapq.heappop(heap)
        end = max(end, t)
        if nxt < len(tiles):
            heapq.heappush(heap, (t + tiles[nxt] + overhead, c))
            nxt += 1
    return end / (sum(x + overhead for x in tiles) / min(SMS, len(tiles)))


if __name__ == "__main__":
    for d in (64, 128, 256):
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            cells = []
            for overhead in (0.3, 1.0, 2.0):
                before = makespan_over_ideal(order(d, s, 0), overhead)
                after = makespan_over_ideal(order(d, s, 2), overhead)
                cells.append(f"overhead {overhead}: {before:.3f} -> {after:.3f}")
            print(f"d{d} causal s{s}: " + " | ".join(cells))
