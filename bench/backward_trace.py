#!/usr/bin/env python3
"""Where the Hopper backward main kernel's time goes, from the diagnostic trace of
bench/integration/s64_bwd_trace.patch (FLASHATTN_BWD_TRACE=PREFIX: PREFIX.<call> per launch, a header of four
int32 (lists, slots, head dim, consumers), then per list `slots` records {globaltimer ns, item << 32 | value << 8 |
event}; list 4 cta + role, role 0 the producer thread, 1 + w consumer warpgroup w's thread 0).

Consumer events: T tile start, K its K / V arrived, per step Q its Q arrived, B past the dS^T barrier, D its dQ
staged; L the tile's last reduction issued, E its dK / dV stored. Producer: t tile start, k the previous tile's
K / V released (its loads issued), q a step's Q issued.

    python3 bench/backward_trace.py PREFIX.3 [PREFIX.7 ...]

Prints per file, over the consumer warpgroups: the span (first T to last E), the busy time split into step
phases (wait for Q = previous D -> Q, Q -> B, B -> D), the tile boundary (last D -> L, L -> E the dK / dV
stores, E -> next T, T -> K the K / V wait, K -> first Q), the first step of a tile against the others, and the
launch's idle time at the start and end (a consumer's first T and last E against the span).
"""
import statistics
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    lists, slots, head_dim, consumers = struct.unpack_from("<4i", data, 0)
    out = {}
    for index in range(lists):
        rows = []
        for slot in range(slots):
            t, tag = struct.unpack_from("<QQ", data, 16 + (index * slots + slot) * 16)
            if t == 0:
                break
            rows.append((t, chr(tag & 0xFF), (tag >> 8) & 0xFFFFFF, tag >> 32))
        if rows:
            out[index] = rows
    return out, head_dim, consumers


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def analyse(path):
    lists, head_dim, consumers = read(path)
    consumer_lists = {i: r for i, r in lists.items() if i % 4 != 0}
    t0 = min(r[0][0] for r in consumer_lists.values())
    t_end = max(t for r in consumer_lists.values() for t, e, _, _ in r if e == "E")
    span = (t_end - t0) / 1e3
    phase = {k: 0.0 for k in ("wait_q", "q_to_b", "b_to_d", "last_d_to_l", "l_to_e", "e_to_t", "t_to_k",
                               "k_to_q", "start_idle", "end_idle")}
    first_steps, other_steps, steps_per_tile, kv_waits, epilogues = [], [], [], [], []
    for rows in consumer_lists.values():
        phase["start_idle"] += (rows[0][0] - t0) / 1e3
        last_e = max(t for t, e, _, _ in rows if e == "E")
        phase["end_idle"] += (t_end - last_e) / 1e3
        prev = None  # (time, event)
        step_in_tile, step_start, n_steps = 0, None, 0
        for t, e, v, item in rows:
            if prev is not None:
                dt = (t - prev[0]) / 1e3
                key = {("D", "Q"): "wait_q", ("Q", "B"): "q_to_b", ("B", "D"): "b_to_d", ("D", "L"): "last_d_to_l",
                       ("L", "E"): "l_to_e", ("E", "T"): "e_to_t", ("T", "K"): "t_to_k",
                       ("K", "Q"): "k_to_q"}.get((prev[1], e))
                if key:
                    phase[key] += dt
                if (prev[1], e) == ("T", "K"):
                    kv_waits.append(dt)
                if (prev[1], e) == ("L", "E"):
                    epilogues.append(dt)
            if e == "T":
                step_in_tile, n_steps = 0, 0
            if e == "Q":
                step_start = t
            if e == "D" and step_start is not None:
                (first_steps if step_in_tile == 0 else other_steps).append((t - step_start) / 1e3)
                step_in_tile += 1
                n_steps += 1
            if e == "L":
                steps_per_tile.append(n_steps)
            prev = (t, e)
    lanes = len(consumer_lists)
    total = span * lanes
    print(f"{path}: d{head_dim} consumers {consumers}, {lanes} consumer lists, span {span:.1f} us, "
          f"{len(steps_per_tile)} tile-consumers, steps/tile median {med(steps_per_tile)}")
    for k, v in phase.items():
        print(f"  {k:12s} {v / lanes:8.2f} us per consumer  {100 * v / total:5.1f}%")
    print(f"  step Q->D: first of tile median {med(first_steps):.3f} us, others {med(other_steps):.3f} us; "
          f"K/V wait median {med(kv_waits):.3f}, dK/dV stores median {med(epilogues):.3f}")
    producers = [r for i, r in lists.items() if i % 4 == 0]
    releases = []
    for rows in producers:
        prev_t = None
        for t, e, _, _ in rows:
            if e == "t":
                prev_t = t
            if e == "k" and prev_t is not None:
                releases.append((t - prev_t) / 1e3)
    print(f"  producer: waits for K/V release median {med(releases):.3f} us over {len(releases)} tiles")


for p in sys.argv[1:]:
    analyse(p)
