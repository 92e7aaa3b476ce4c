#!/usr/bin/env python3
"""Side-by-side table of bench/sm80_tune rows and FA2 (bench/sm80u_peers.py) from helper sm80y's device call
(session 7, issue 4: TileShape::xor_lane_offsets), after bench/sm80x_table.py.

    sm80y_table.py ROWS.jsonl [ROWS.jsonl ...] [--fa2 FA2.jsonl]

Columns: "table", "table_100ms", "table_end" (cuda_sm80::run with the committed table: the control, the same call
three times), then each candidate as MxWxBN sS + option letters (J joint_softmax, R o_from_registers, W
whole_tile_loads, L late_copies, A approx_epilogue, X xor_lane_offsets) + the order when it is not the
backend's (":g2" grouped heads fastest, factor 2), then FA2 (fa2_100: mean of its two do_bench passes) and the
ratios. Below each file: every candidate with X against the same shape and order without it, in percent, and
whether the difference exceeds the row's control spread.
"""
import json
import sys


def name(r):
    shape = r["shape"]
    if isinstance(shape, str):
        return shape
    n = f"{shape['m_tiles_per_warp']}x{shape['warps']}x{shape['block_n']}s{shape['stages']}"
    for key, letter in (("joint_softmax", "J"), ("o_from_registers", "R"), ("prefetch_fragments", "P"),
                        ("whole_tile_loads", "W"), ("late_copies", "L"), ("approx_epilogue", "A"),
                        ("xor_lane_offsets", "X")):
        if shape.get(key):
            n += letter
    order = r.get("order", "")
    backend = "heads_fastest" if r["causal"] else "m_fastest"
    if order.startswith("grouped"):
        n += ":g" + order[len("grouped"):].split("_")[0]
    elif order and order != backend:
        n += ":" + order[0]
    return n


args = sys.argv[1:]
fa2 = {}
while "--fa2" in args:
    i = args.index("--fa2")
    for line in open(args[i + 1]):
        try:
            r = json.loads(line)
        except ValueError:
            continue
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
        n = name(r)
        if n not in cols:
            cols.append(n)
        rows.setdefault((r["hdim"], r["causal"], r["seqlen"]), {})[n] = r["tflops"]
        if r.get("max_diff", 0) > 2e-2 or r.get("error", "no error") != "no error":
            bad.append((n, r["seqlen"], r.get("max_diff"), r.get("error")))
    print(f"{path}: output mismatches {bad if bad else 'none'}")
    print(f"{'d':>4} {'causal':>6} {'s':>6}" + "".join(f"{c:>15}" for c in cols) +
          f"{'fa2_100':>9}{'tbl/fa2':>8}{'best/fa2':>9}  best")
    deltas = []
    for key, v in rows.items():
        f = fa2.get(key, {})
        ref = (f.get("fa2_100ms", 0) + f.get("fa2_100ms_2", f.get("fa2_100ms", 0))) / 2
        cands = {c: x for c, x in v.items() if not c.startswith("table")}
        best = max(cands, key=cands.get) if cands else ""
        ctrl = [v[c] for c in ("table", "table_100ms", "table_end") if c in v]
        tbl = sum(ctrl) / len(ctrl) if ctrl else 0
        spread = 100 * (max(ctrl) - min(ctrl)) / max(min(ctrl), 1e-9) if ctrl else 0
        print(f"{key[0]:>4} {str(key[1]):>6} {key[2]:>6}" + "".join(f"{v.get(c, 0):>15.1f}" for c in cols) +
              f"{ref:>9.1f}{(tbl / ref if ref else 0):>8.3f}{(cands.get(best, 0) / ref if ref else 0):>9.3f}  {best}"
              f"  (control spread {spread:.1f}%)")
        for c, x in cands.items():
            base_name = c.split(":")[0].replace("X", "") + (":" + c.split(":")[1] if ":" in c else "")
            if "X" in c.split(":")[0] and base_name in cands and cands[base_name] > 0:
                gain = 100 * (x / cands[base_name] - 1)
                deltas.append(f"  d{key[0]} {'causal' if key[1] else 'non-causal'} {key[2]:>5}: {base_name:>20} "
                              f"{cands[base_name]:6.1f} -> X {x:6.1f} ({gain:+5.1f}%, spread {spread:.1f}%"
                              f"{', beyond' if abs(gain) > spread else ''}; FA2 {ref:.1f})")
    print("\n".join(deltas))
