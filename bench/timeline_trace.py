"""Reads the tile timeline of bench/integration/s40_timeline.patch (tile_trace.h: 64 slots per consumer warpgroup,
[cta][consumer] with four consumers' room, events B start, S a tile's first S done (value: its key blocks), E its
epilogue's end, Z the consumer loop's end) from a workspace dump of the CLI (FLASHATTN_TAIL_TRACE) and prints where
a launch's SM time goes: the span from the first start to the last end, when each CTA starts and ends, the time its
warpgroups spend in tiles, the idle time at the start and the end summed over CTAs, and the time per key block.
  python3 bench/timeline_trace.py DUMP [--ctas 132]
"""
import argparse
import statistics

from trace_dump import NO_ITEM, read_lists, summary_line

ap = argparse.ArgumentParser()
ap.add_argument("dump")
ap.add_argument("--ctas", type=int, default=132)
args = ap.parse_args()
lists = read_lists(args.dump, args.ctas * 4, 64)
t0 = min(rows[0][0] for rows in lists.values() if rows[0][1] == "B")
t_end = max(t for rows in lists.values() for t, e, _, _ in rows if e == "Z")
span = (t_end - t0) / 1000.0
starts, ends, busy, first_s, per_block, tiles = [], [], [], [], [], []
last_tile_start = []
for index, rows in sorted(lists.items()):
    b = next((t for t, e, _, _ in rows if e == "B"), None)
    z = next((t for t, e, _, _ in rows if e == "Z"), None)
    if b is None or z is None:
        continue
    starts.append((b - t0) / 1000.0)
    ends.append((z - t0) / 1000.0)
    s_events = [(t, i, v) for t, e, i, v in rows if e == "S" and i != NO_ITEM]
    e_events = {i: t for t, e, i, _ in rows if e == "E"}
    tiles.append(len(s_events))
    if s_events:
        first_s.append((s_events[0][0] - t0) / 1000.0)
        last_tile_start.append((s_events[-1][0] - t0) / 1000.0)
    total = 0.0
    for t, i, v in s_events:
        if i in e_events and v > 0:
            d = (e_events[i] - t) / 1000.0
            total += d
            per_block.append(d / v)
    busy.append(total)
print(f"span (first B to last Z): {span:.1f} us over {len(starts)} consumer warpgroups")
for name, xs in (("start B (us)", starts), ("first S done (us)", first_s), ("last tile's S (us)", last_tile_start),
                 ("loop end Z (us)", ends), ("tiles per warpgroup", tiles), ("time in tiles (us)", busy),
                 ("us per key block", per_block)):
    if xs:
        print(summary_line(name, xs))
idle_end = sum(span - z for z in ends) / (span * len(ends))
idle_start = sum(f for f in first_s) / (span * len(first_s)) if first_s else 0.0
print(f"idle share of the span: before the first S done {idle_start:.2%}, after the loop end {idle_end:.2%}; "
      f"in tiles {statistics.mean(busy) / span:.2%} (S->E, the next tile's first S included)")
