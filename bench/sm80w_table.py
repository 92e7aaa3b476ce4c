#!/usr/bin/env python3
"""Side-by-side table of bench/sm80_tune rows and FA2 (bench/sm80u_peers.py) from one device call
(session 7, helper sm80w).

    sm80w_table.py ROWS.jsonl [ROWS.jsonl ...] [--fa2 FA2.jsonl]

Like bench/sm80u_table.py, plus: a candidate listed twice (the control) gets one column per occurrence
(suffix #2), candidates timed in both tile orders get /M (m fastest) or /H (heads fastest), and the
letters E early_k_copy, N panel_loads, Q qk_step_ahead, B mask_bounds. Rows whose output differed from the
table kernel's by more than 2e-2 are listed.
"""
import json
import sys


def name(shape, order=None):
    if isinstance(shape, str):
        return shape
    n = f"{shape['m_tiles_per_warp']}x{shape['warps']}x{shape['block_n']}s{shape['stages']}"
    for key, letter in (("joint_softmax", "J"), ("o_from_registers", "R"), ("prefetch_fragments", "P"),
                        ("whole_tile_loads", "W"), ("late_copies", "L"), ("early_k_copy", "E"),
                        ("panel_loads", "N"), ("qk_step_ahead", "Q"), ("mask_bounds", "B")):
        if shape.get(key):
            n += letter
    return n + (("/H" if order == "heads_fastest" else "/M") if order else "")


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
        key = (r["hdim"], r["causal"], r["seqlen"])
        row = rows.setdefault(key, {})
        n = name(r["shape"], r.get("order"))
        k = 1
        while (n if k == 1 else f"{n}#{k}") in row:
            k += 1
        n = n if k == 1 else f"{n}#{k}"
        if n not in cols:
            cols.append(n)
        row[n] = r["tflops"]
        if r.get("max_diff", 0) > 2e-2 or r.get("error", "no error") != "no error":
            bad.append((n, r["seqlen"], r.get("max_diff"), r.get("error")))
    print(f"{path}: output mismatches {bad if bad else 'none'}")
    width = max(12, max(len(c) for c in cols) + 1)
    print(f"{'d':>4} {'causal':>6} {'s':>6}" + "".join(f"{c:>{width}}" for c in cols) +
          f"{'fa2_100':>9}{'fa2_100#2':>10}{'fa2_25':>8}")
    for key, v in rows.items():
        f = fa2.get(key, {})
        cells = "".join(f"{v.get(c, 0):>{width}.1f}" for c in cols)
        print(f"{key[0]:>4} {str(key[1]):>6} {key[2]:>6}" + cells +
              f"{f.get('fa2_100ms', 0):>9.1f}{f.get('fa2_100ms_2', 0):>10.1f}{f.get('fa2_25', 0):>8.1f}")
