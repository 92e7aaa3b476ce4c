"""Reads the per-warp trace of bench/integration/s39_begintrace.patch (tail_trace.h: 60 slots per consumer warp) from a
workspace dump of the CLI (FLASHATTN_TAIL_TRACE) and prints, for each pair of consecutive events of a warp, the
time between them in microseconds (median, p90, count), the static tiles' events only (tail pieces and what follows
them left out). Events: S a tile's first S done, L its last P V done, h the next tile's index received, q its Q
landed, k its first K landed, t the issue turn taken, l Q's fragments loaded, i its first S issued, P begin_tile
returned, M O in shared memory, F the proxy fence, R the barrier, T the TMA store issued (warp 0), E the epilogue's
end.
  python3 bench/gap_trace.py DUMP
"""
import argparse

from trace_dump import TAIL, read_lists, summary_line

ap = argparse.ArgumentParser()
ap.add_argument("dump")
args = ap.parse_args()
gaps = {}
# s39_begintrace.patch: 60 slots per consumer warp, [cta][consumer * 4 + warp] over 132 CTAs
for rows in read_lists(args.dump, 132 * 8, 60).values():
    for (t0, e0, i0, _), (t1, e1, i1, _) in zip(rows, rows[1:]):
        if i0 >= TAIL or i1 >= TAIL:  # tail pieces, the start / end markers
            continue
        gaps.setdefault(f"{e0}->{e1}", []).append((t1 - t0) / 1000.0)
for k, xs in sorted(gaps.items(), key=lambda kv: -len(kv[1])):
    print(summary_line(k, xs))
