"""Reads the split tail's diagnostic trace (bench/integration/s39_tailtrace.patch) from a workspace dump of the CLI
(FLASHATTN_TAIL_TRACE) and prints, per CTA, when its events happened, in microseconds from the first 'B' (the
consumers' start): the last static tiles ('S' start, 'P' epilogue start, 'E' epilogue end), the tail pieces (items
from 2^30), their record written ('W') and arrival ('A', with the arrival count), and 'Z' (the consumer loop's end).
Then a summary: when the static part ended, when the tail pieces ran, the combine's time, and the kernel's end.
  python3 bench/tail_trace.py DUMP [--ctas N]
"""
import argparse

from trace_dump import NO_ITEM, TAIL, read_lists, summary_line

ap = argparse.ArgumentParser()
ap.add_argument("dump")
ap.add_argument("--ctas", type=int, default=6, help="CTAs listed in full")
args = ap.parse_args()
# s39_tailtrace.patch: 32 slots per consumer warpgroup, [cta][consumer] over up to 264 CTAs
events = {(i // 2, i % 2): rows for i, rows in read_lists(args.dump, 264 * 2, 32).items()}
t0 = min(rows[0][0] for rows in events.values() if rows[0][1] == "B")


def us(t):
    return (t - t0) / 1000.0


def label(item):
    return f"piece{item - TAIL}" if TAIL <= item < NO_ITEM else ("-" if item == NO_ITEM else f"tile{item}")


for (cta, consumer), rows in sorted(events.items()):
    if cta < args.ctas:
        print(f"cta {cta} consumer {consumer}: " +
              " ".join(f"{e}:{label(i)}{'/' + str(v) if e in 'SA' else ''}@{us(t):.1f}" for t, e, i, v in rows))
static_end, tail_start, ends, piece_time, piece_blocks, piece_epilogue, tile_time = [], [], [], [], [], [], []
for rows in events.values():
    last_static = [r for r in rows if r[1] == "E" and r[2] < TAIL]
    if last_static:
        static_end.append(us(last_static[-1][0]))
    starts = [r for r in rows if r[1] == "S" and TAIL <= r[2] < NO_ITEM]
    if starts:
        tail_start.append(us(starts[0][0]))
    ends += [us(r[0]) for r in rows if r[1] == "Z"]
    by_item = {}
    for t, e, i, v in rows:
        by_item.setdefault(i, {})[e] = (t, v)
    for i, ev in by_item.items():
        if "S" not in ev or "E" not in ev or i == NO_ITEM:
            continue
        duration = (ev["E"][0] - ev["S"][0]) / 1000.0
        if i < TAIL:
            tile_time.append(duration)
            continue
        piece_time.append(duration)
        piece_blocks.append(ev["S"][1])
        if "P" in ev:
            piece_epilogue.append((ev["E"][0] - ev["P"][0]) / 1000.0)
for name, xs in (("static end (us)", static_end), ("first piece (us)", tail_start), ("loop end (us)", ends),
                 ("piece S->E", piece_time), ("piece blocks", piece_blocks), ("piece P->E", piece_epilogue),
                 ("static tile S->E", tile_time)):
    if xs:
        print(summary_line(name, xs))
