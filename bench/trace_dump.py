"""The diagnostic traces of session 39 (bench/integration/s39_*trace.patch): a CLI run under FLASHATTN_TAIL_TRACE
dumps its workspace, whose last MiB holds `lists` lists of `slots` records of 16 bytes, {global timer in ns, item <<
32 | value << 8 | event}; event 0 (or time 0) ends a list. Read by bench/tail_trace.py (lists per CTA and consumer
warpgroup), bench/epilogue_trace.py and bench/gap_trace.py (per consumer warp).
"""
import statistics
import struct

TAIL = 1 << 30  # tail pieces' items (split_tail.h kTailItem); 0x7FFFFFFF marks the start / end events
NO_ITEM = 0x7FFFFFFF


def read_lists(path, lists, slots):
    """{list index: [(time, event, item, value)]} for the non-empty lists."""
    data = open(path, "rb").read()
    base = len(data) - (1 << 20)
    assert lists * slots * 16 <= 1 << 20, "the trace is the workspace's last MiB"
    out = {}
    for index in range(lists):
        rows = []
        for slot in range(slots):
            t, tag = struct.unpack_from("<QQ", data, base + (index * slots + slot) * 16)
            if t == 0 or (tag & 0xFF) == 0:
                break
            rows.append((t, chr(tag & 0xFF), tag >> 32, (tag >> 8) & 0xFFFFFF))
        if rows:
            out[index] = rows
    if not out:
        raise SystemExit(f"no trace in {path}")
    return out


def summary_line(name, xs):
    """`name n N min median p90 max` of durations in microseconds (a non-empty list)."""
    xs = sorted(xs)
    median = statistics.median(xs)
    return (f"{name:18s} n {len(xs):5d} min {xs[0]:7.3f} median {median:7.3f} p90 {xs[int(0.9 * (len(xs) - 1))]:7.3f} "
            f"max {xs[-1]:7.3f}")
