"""Reads the split tail's diagnostic trace (bench/integration/s39_tailtrace.patch) from a workspace dump of the CLI
(FLASHATTN_TAIL_TRACE) and prints, per CTA, when its events happened, in microseconds from the first 'B' (the
consumers' start): the last static tiles ('S' start, 'P' epilogue start, 'E' epilogue end), the tail pieces (items
from 2^30), their record written ('W') and arrival ('A', with the arrival count), and 'Z' (the consumer loop's end).
Then a summary: when the static part ended, when the tail pieces ran, the combine's time, and the kernel's end.
  python3 bench/tail_trace.py DUMP [--ctas N]
"""
import argparse
import struct
import statistics

ap = argparse.ArgumentParser()
ap.add_argument("dump")
ap.add_argument("--ctas", type=int, default=6, help="CTAs listed in full")
args = ap.parse_args()
data = open(args.dump, "rb").read()
base = len(data) - (1 << 20)  # the trace is the workspace's last MiB
TAIL = 1 << 30
events = {}  # (cta, consumer) -> [(time, event, item, value)]
for cta in range(264):
    for consumer in range(2):
        rows = []
        for slot in range(32):
            off = base + ((cta * 2 + consumer) * 32 + slot) * 16
            t, tag = struct.unpack_from("<QQ", data, off)
            e = tag & 0xFF
            if e == 0 or t == 0:
                break
            rows.append((t, chr(e), tag >> 32, (tag >> 8) & 0xFFFFFF))
        if rows:
            events[(cta, consumer)] = rows
if not events:
    raise SystemExit("no trace found")
t0 = min(r[0][0] for r in events.values() if r[0][1] == "B")
us = lambda t: (t - t0) / 1000.0
def label(item):
    return f"piece{item - TAIL}" if TAIL <= item < 0x7FFFFFFF else ("-" if item == 0x7FFFFFFF else f"tile{item}")
for (cta, consumer), rows in sorted(events.items()):
    if cta >= args.ctas:
        continue
    print(f"cta {cta} consumer {consumer}: " +
          " ".join(f"{e}:{label(i)}{'/' + str(v) if e in 'SA' else ''}@{us(t):.1f}" for t, e, i, v in rows))
static_end, tail_start, tail_end, combine, ends = [], [], [], [], []
pieces = []
for (cta, consumer), rows in events.items():
    last_static = [r for r in rows if r[1] == "E" and r[2] < TAIL]
    if last_static:
        static_end.append(us(last_static[-1][0]))
    starts = [r for r in rows if r[1] == "S" and TAIL <= r[2] < 0x7FFFFFFF]
    if starts:
        tail_start.append(us(starts[0][0]))
    for r in rows:
        if r[1] == "Z":
            ends.append(us(r[0]))
    by_item = {}
    for t, e, i, v in rows:
        by_item.setdefault(i, {})[e] = (t, v)
    for i, ev in by_item.items():
        if TAIL <= i < 0x7FFFFFFF and "S" in ev and "E" in ev:
            pieces.append(((ev["E"][0] - ev["S"][0]) / 1000.0, ev["S"][1]))
            if "P" in ev:
                combine.append((ev["E"][0] - ev["P"][0]) / 1000.0)
    # a static tile's duration, S to the next S
def stats(name, xs):
    if xs:
        print(f"{name}: n {len(xs)} min {min(xs):.1f} median {statistics.median(xs):.1f} max {max(xs):.1f}")
stats("static part's last epilogue end (us)", static_end)
stats("first tail piece's start (us)", tail_start)
stats("consumer loop end (us)", ends)
stats("tail piece S->E (us)", [p[0] for p in pieces])
stats("tail piece blocks", [p[1] for p in pieces])
stats("tail piece epilogue P->E (us)", combine)
# Static tiles of the last rounds: S to E and E to next S.
tile = []
for rows in events.values():
    by_item = {}
    for t, e, i, v in rows:
        by_item.setdefault(i, {})[e] = (t, v)
    for i, ev in by_item.items():
        if i < TAIL and "S" in ev and "E" in ev:
            tile.append((ev["E"][0] - ev["S"][0]) / 1000.0)
stats("static tile S->E (us)", tile)
