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
import statistics
import struct

ap = argparse.ArgumentParser()
ap.add_argument("dump")
args = ap.parse_args()
data = open(args.dump, "rb").read()
base = len(data) - (1 << 20)
SLOTS, TAIL = 60, 1 << 30
gaps = {}
for cta in range(132):
    for w in range(8):
        rows = []
        for slot in range(SLOTS):
            t, tag = struct.unpack_from("<QQ", data, base + ((cta * 8 + w) * SLOTS + slot) * 16)
            if t == 0 or (tag & 0xFF) == 0:
                break
            rows.append((t, chr(tag & 0xFF), tag >> 32))
        for (t0, e0, i0), (t1, e1, i1) in zip(rows, rows[1:]):
            if i0 >= TAIL or i1 >= TAIL:  # tail pieces, the start / end markers
                continue
            gaps.setdefault(f"{e0}->{e1}", []).append((t1 - t0) / 1000.0)
for k, xs in sorted(gaps.items(), key=lambda kv: -len(kv[1])):
    xs.sort()
    print(f"{k:6s} n {len(xs):5d} median {statistics.median(xs):7.3f} p90 {xs[int(0.9 * (len(xs) - 1))]:7.3f} "
          f"max {xs[-1]:7.3f}")
