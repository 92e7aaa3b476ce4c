"""Reads the per-warp trace of bench/integration/s39_epitrace.patch from a workspace dump of the CLI
(FLASHATTN_TAIL_TRACE) and prints the phases of the static tiles' ends, per consumer warp, in microseconds: S->L (the
tile's key blocks from its first S to its last P V's completion), L->P (begin_tile: the next tile's Q, first K, turn,
Q fragments and S issue), P->M (O normalised and written to shared memory), M->F (the proxy fence), F->R (the
warpgroup's barrier), R->E (the TMA store's issue and the LSE stores), E->S (to the next tile's first S completed).
  python3 bench/epilogue_trace.py DUMP
"""
import argparse
import statistics
import struct

ap = argparse.ArgumentParser()
ap.add_argument("dump")
args = ap.parse_args()
data = open(args.dump, "rb").read()
base = len(data) - (1 << 20)
SLOTS, TAIL = 48, 1 << 30
phases = {}
for cta in range(132):
    for w in range(8):
        rows = []
        for slot in range(SLOTS):
            t, tag = struct.unpack_from("<QQ", data, base + ((cta * 8 + w) * SLOTS + slot) * 16)
            if t == 0 or (tag & 0xFF) == 0:
                break
            rows.append((t, chr(tag & 0xFF), tag >> 32))
        # per static tile: the times of its events; E -> the next item's S
        for i, (t, e, item) in enumerate(rows):
            if item >= TAIL or e != "S":
                continue
            ev = {"S": t}
            for t2, e2, it2 in rows[i + 1:]:
                if it2 == item and e2 not in ev:
                    ev[e2] = t2
                elif it2 != item and e2 == "S":
                    ev["next"] = t2
                    break
            for a, b in (("S", "L"), ("L", "P"), ("P", "M"), ("M", "F"), ("F", "R"), ("R", "E"), ("E", "next"),
                         ("P", "E")):
                if a in ev and b in ev:
                    phases.setdefault(f"{a}->{b}" + (" (warp 0)" if w % 4 == 0 else ""), []).append(
                        (ev[b] - ev[a]) / 1000.0)
for k in sorted(phases):
    xs = phases[k]
    print(f"{k:18s} n {len(xs):4d} min {min(xs):7.2f} median {statistics.median(xs):7.2f} "
          f"p90 {sorted(xs)[int(0.9 * (len(xs) - 1))]:7.2f} max {max(xs):7.2f}")
