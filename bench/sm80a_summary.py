#!/usr/bin/env python3
"""Tables of helper sm80a's device calls (session 8): harness rows (bench/sm80_tune JSON lines) per pass, the
control (table / table_100ms / table_end) and each candidate by its options, and bench/sm80a_methods.py's rows.

    sm80a_summary.py OUTDIR     (the unpacked sm80a<N>.tgz)
"""
import glob
import json
import os
import sys

out = sys.argv[1]
FLAGS = {"xor_lane_offsets": "X", "approx_epilogue": "A", "early_k_copy": "E", "panel_loads": "N",
         "qk_step_ahead": "Q", "mask_bounds": "B", "o_from_registers": "R", "joint_softmax": "J",
         "prefetch_fragments": "P", "whole_tile_loads": "W", "late_copies": "L"}


def name_of(shape):
    if isinstance(shape, str):
        return shape
    base = f"{shape['m_tiles_per_warp']}x{shape['warps']}x{shape['block_n']} s{shape['stages']}"
    return base + " " + "".join(v for k, v in FLAGS.items() if shape.get(k))


for path in sorted(glob.glob(os.path.join(out, "rows_*.jsonl"))):
    print(f"## {os.path.basename(path)}")
    rows = {}
    for line in open(path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        key = (r["causal"], r["seqlen"])
        col = name_of(r["shape"]) + ("" if isinstance(r["shape"], str) else " " + r["order"])
        rows.setdefault(key, {})[col] = r["tflops"]
        if r.get("max_diff", 0) not in (0, -1) and r.get("max_diff", 0) > 2e-2:
            print("  MISMATCH", key, col, r["max_diff"])
    for key, cols in rows.items():
        ctrl = [cols[c] for c in ("table", "table_100ms", "table_end") if c in cols]
        lo, hi = min(ctrl), max(ctrl)
        print(f"  causal={key[0]} s={key[1]}: control {lo}-{hi} (spread {100 * (hi - lo) / lo:.1f}%)")
        for c, v in cols.items():
            if not c.startswith("table"):
                print(f"    {c:40s} {v:7.1f}  {100 * (v / ((lo + hi) / 2) - 1):+5.1f}% vs control mean")

mpath = os.path.join(out, "methods.jsonl")
if os.path.exists(mpath):
    print("## methods (TFLOP/s, median of rounds; ratio = / fa2 by the same method)")
    for line in open(mpath):
        r = json.loads(line)
        if "hdim" not in r:
            print(" ", line.strip())
            continue
        print(f"  d{r['hdim']} causal={r['causal']} s={r['seqlen']}")
        names = [k[len("host_us_"):] for k in r if k.startswith("host_us_")]
        if not names:
            for key, value in r.items():
                if key.startswith("prelude_"):
                    print(f"    {key} {value}")
            continue
        for key, value in r.items():
            if key.startswith("prelude_"):
                print(f"    {key} {value}")
        for m in ("dobench", "dobench0", "harness", "b2b"):
            if f"{names[0]}_{m}" not in r:
                continue
            cells = "  ".join(f"{n} {r[f'{n}_{m}']:6.1f} {r[f'{n}_{m}_rounds']}" for n in names)
            print(f"    {m:8s} {cells}")
            print("             " + "  ".join(f"{n}/fa2 {r[f'ratio_{n}_{m}']}" for n in names if n != "fa2"))
        print("    host us/call " + "  ".join(f"{n} {r[f'host_us_{n}']}" for n in names))
        for n in names:
            if f"kernels_{n}" in r:
                for k in r[f"kernels_{n}"]:
                    nm = k["name"]
                    i = nm.find("TileShape")
                    print(f"    {n}: {nm[i:i + 140] if i >= 0 else nm[:140]} grid {k['grid']} block {k['block']} "
                          f"regs {k['regs']} {k['us']} us")
            if f"max_diff_{n}_vs_fa2" in r:
                print(f"    {n} max |diff| vs fa2 {r[f'max_diff_{n}_vs_fa2']}")
