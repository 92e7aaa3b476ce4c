#!/usr/bin/env python3
"""Reads the decode kernel's trace (bench/integration/s46_decodetrace.patch) from a workspace dump.

The patch's kernel stores, per CTA and role (0: the producer thread, 1: the consumer warpgroup's first thread),
up to 64 events {globaltimer ns, item << 32 | value << 8 | event char} in the workspace's last MiB; the patched
CLI dumps the whole workspace after its last call (FLASHATTN_TAIL_TRACE). Prints the kernel's span, when each
event first happens (us from the first CTA's entry, over CTAs: min / median / max), the steps between
consecutive events of one role (count, median, max), and the first CTAs' timelines. Session 48's patch
(bench/integration/s48_trace.patch) adds the prepare kernel's thread 0 as "CTA" 500 role 0 (g entry, m maps
written, l its lengths loaded, Z) and the combine's thread 0 as CTA 256 + c role 0 (h entry, c after each batch of
pieces, Z).

    python3 bench/decode_trace.py DUMP [--ctas N] [--brief]
"""
import argparse
import statistics
import struct
from collections import defaultdict

SLOTS = 64
TRACE_BYTES = 1 << 20


def read_lists(path):
    data = open(path, "rb").read()[-TRACE_BYTES:]
    words = struct.unpack(f"<{len(data) // 8}Q", data)
    lists = {}
    per_list = SLOTS * 2
    for index in range(len(words) // per_list):
        cta, role = divmod(index, 2)
        events = []
        for k in range(SLOTS):
            time, tag = words[index * per_list + 2 * k], words[index * per_list + 2 * k + 1]
            event = tag & 0xFF
            if time == 0 or event == 0:
                break
            events.append((time, chr(event), tag >> 32, (tag >> 8) & 0xFFFFFF))
        if events:
            lists[(cta, role)] = events
    return lists


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dump")
    parser.add_argument("--ctas", type=int, default=3, help="timelines printed")
    parser.add_argument("--brief", action="store_true", help="one line: the span and each event's median")
    args = parser.parse_args()
    lists = read_lists(args.dump)
    if not lists:
        print("no trace")
        return
    start = min(e[0][0] for e in lists.values())
    end = max(e[-1][0] for e in lists.values())
    ctas = sorted({cta for cta, _ in lists})
    print(f"span {(end - start) / 1e3:.2f} us over {len(ctas)} CTAs")
    firsts = defaultdict(list)
    steps = defaultdict(list)
    for (cta, role), events in lists.items():
        seen = set()
        for t, e, _, _ in events:
            if (role, e) not in seen:
                seen.add((role, e))
                firsts[(role, e)].append((t - start) / 1e3)
        for (t0, e0, _, _), (t1, e1, _, _) in zip(events, events[1:]):
            steps[(role, e0 + ">" + e1)].append((t1 - t0) / 1e3)
    if args.brief:
        order = sorted(firsts.items(), key=lambda kv: statistics.median(kv[1]))
        print(f"span {(end - start) / 1e3:.2f} us: " +
              " ".join(f"{role}{e}={statistics.median(ts):.2f}" for (role, e), ts in order))
        return
    print("first occurrence (us from the first entry): role event  n  min  median  max")
    for (role, e), ts in sorted(firsts.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"  {role} {e}  {len(ts):4d}  {min(ts):7.2f} {statistics.median(ts):7.2f} {max(ts):7.2f}")
    print("steps (us): role from>to  n  median  max")
    for (role, step), ds in sorted(steps.items()):
        print(f"  {role} {step}  {len(ds):4d}  {statistics.median(ds):6.2f} {max(ds):6.2f}")
    for cta in ctas[: args.ctas]:
        for role in (0, 1):
            events = lists.get((cta, role), [])
            line = " ".join(f"{e}{item if item < 1 << 30 else ''}:{value}@{(t - start) / 1e3:.2f}"
                            for t, e, item, value in events)
            print(f"cta {cta} role {role}: {line}")


if __name__ == "__main__":
    main()
