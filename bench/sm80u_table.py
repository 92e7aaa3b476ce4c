#!/usr/bin/env python3
"""Side-by-side table of bench/sm80_tune rows and FA2 (bench/sm80u_peers.py) from one device call.

    sm80u_table.py ROWS.jsonl [ROWS.jsonl ...] [--fa2 FA2.jsonl]

One line per (head dim, causal, seqlen): every shape's TFLOP/s ("table", "table_100ms", "table_end" are
cuda_sm80::run; candidates are named MxWxBN sS plus J joint_softmax, R o_from_registers, P
prefetch_fragments, W whole_tile_loads, L late_copies), then FA2 timed like compare.py (fa2_100) and like
the harness (fa2_25). Rows whose output differed from the table kernel's by more than 2e-2 are listed.
"""
import json
import sys


def name(shape):
    if isinstance(shape, str):
        return shape
    n = f"{shape['m_tiles_per_warp']}x{shape['warps']}x{shape['block_n']}s{shape['stages']}"
    for key, letter in (("joint_softmax", "J"), ("o_from_registers", "R"), ("prefetch_fragments", "P"),
                        ("whole_tile_loads", "W"), ("late_copies", "L")):
        if shape.get(key):
            n += letter
    return n


args = sys.argv[1:]
fa2 = {}
if "--fa2" in args:
    i = args.index("--fa2")
    for line in open(args[i + 1]):
        r = json.loads(line)
        if "hdim" in r:
            fa2[(r["hdim"], r["causal"], r["seqlen"])] = r
    args = args[:i] + args[i + 2:]
for path in args:
    rows, cols, bad = {}, [], []
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("dtype", "bf16") != "bf16" or r.get("variant", "plain") != "plain":
            continue
        n = name(r["shape"])
        if n not in cols:
            cols.append(n)
        rows.setdefault((r["hdim"], r["causal"], r["seqlen"]), {})[n] = r["tflops"]
        if r.get("max_diff", 0) > 2e-2 or r.get("error", "no error") != "no error":
            bad.append((n, r["seqlen"], r.get("max_diff"), r.get("error")))
    print(f"{path}: output mismatches {bad if bad else 'none'}")
    print(f"{'d':>4} {'causal':>6} {'s':>6}" + "".join(f"{c:>14}" for c in cols) + f"{'fa2_100':>9}{'fa2_25':>8}")
    for key, v in rows.items():
        f = fa2.get(key, {})
        print(f"{key[0]:>4} {str(key[1]):>6} {key[2]:>6}" + "".join(f"{v.get(c, 0):>14.1f}" for c in cols) +
              f"{f.get('fa2_100ms', 0):>9.1f}{f.get('fa2_25', 0):>8.1f}")
