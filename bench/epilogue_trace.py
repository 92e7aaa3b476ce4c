"""Reads the per-warp trace of bench/integration/s39_epitrace.patch from a workspace dump of the CLI
(FLASHATTN_TAIL_TRACE) and prints the phases of the static tiles' ends, per consumer warp, in microseconds: S->L (the
tile's key blocks from its first S to its last P V's completion), L->P (begin_tile: the next tile's Q, first K, turn,
Q fragments and S issue), P->M (O normalised and written to shared memory), M->F (the proxy fence), F->R (the
warpgroup's barrier), R->E (the TMA store's issue and the LSE stores), E->S (to the next tile's first S completed).
  python3 bench/epilogue_trace.py DUMP
"""
import argparse

from trace_dump import TAIL, read_lists, summary_line

ap = argparse.ArgumentParser()
ap.add_argument("dump")
args = ap.parse_args()
phases = {}
# s39_epitrace.patch: 48 slots per consumer warp, [cta][consumer * 4 + warp] over 132 CTAs
for index, rows in read_lists(args.dump, 132 * 8, 48).items():
    warp0 = index % 4 == 0
    # Per static tile, the times of its events (the first of each), and E -> the next item's S.
    for i, (t, e, item, _) in enumerate(rows):
        if item >= TAIL or e != "S":
            continue
        ev = {"S": t}
        for t2, e2, it2, _ in rows[i + 1:]:
            if it2 == item and e2 not in ev:
                ev[e2] = t2
            elif it2 != item and e2 == "S":
                ev["next"] = t2
                break
        for a, b in (("S", "L"), ("L", "P"), ("P", "M"), ("M", "F"), ("F", "R"), ("R", "E"), ("E", "next"),
                     ("P", "E")):
            if a in ev and b in ev:
                phases.setdefault(f"{a}->{b}" + (" (warp 0)" if warp0 else ""), []).append((ev[b] - ev[a]) / 1000.0)
for k in sorted(phases):
    print(summary_line(k, phases[k]))
