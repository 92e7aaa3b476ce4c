#!/usr/bin/env python3
"""Side-by-side table of bench/sm80_tune rows (several files) and FA2 (bench/sm80u_peers.py) from one device call
(session 7, helpers sm80v and sm80x; bench/sm80u_table.py keyed by shape only, this one by shape and tile
order).

    sm80x_table.py ROWS.jsonl [ROWS.jsonl ...] [--fa2 FA2.jsonl ...]

Columns: "table", "table_100ms", "table_end" (cuda_sm80::run, the control: the same call three times), then each
candidate as MxWxBN sS + option letters (J joint_softmax, R o_from_registers, P prefetch_fragments, W
whole_tile_loads, L late_copies, A approx_epilogue, E whole_tile_ends, X pair_stores) + the order when it is
not the backend's (":m" m fastest, ":h" heads fastest, ":g1"/":g2" grouped heads fastest with factor 1/2), then
FA2 timed like compare.py (fa2_100: mean of the two do_bench passes) and the ratio of the best candidate and of the
table to it.
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
                        ("whole_tile_ends", "E"), ("pair_stores", "X")):
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
    for key, v in rows.items():
        f = fa2.get(key, {})
        ref = (f.get("fa2_100ms", 0) + f.get("fa2_100ms_2", f.get("fa2_100ms", 0))) / 2
        cands = {c: x for c, x in v.items() if not c.startswith("table")}
        best = max(cands, key=cands.get) if cands else ""
        ctrl = [v[c] for c in ("table", "table_100ms", "table_end") if c in v]
        tbl = sum(ctrl) / len(ctrl) if ctrl else 0
        print(f"{key[0]:>4} {str(key[1]):>6} {key[2]:>6}" + "".join(f"{v.get(c, 0):>15.1f}" for c in cols) +
              f"{ref:>9.1f}{(tbl / ref if ref else 0):>8.3f}{(cands.get(best, 0) / ref if ref else 0):>9.3f}  {best}"
              f"  (control spread {100 * (max(ctrl) - min(ctrl)) / max(min(ctrl), 1e-9):.1f}%)")
