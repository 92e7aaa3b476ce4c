#!/usr/bin/env python3
"""RECORD of device call 2 (tree b83ee8b, whose TileShape had dense_kv_only).
Table variants for helper sm80d's device call 2 (session 9, issue 4): dense_kv_only (D) on the d256 rows.

    sm80d_table2.py IN.json OUT.json VARIANT
  base  the table without its kGeneral-only rows (no measured row runs them; fewer kernels to build)
  d1    base + D on the d256 64 x 64 X A rows (non-causal s <= 2048, causal s <= 512 / 1024); the causal
        s <= 4096 row (heads fastest) takes that X A + D kernel too
  d2    base + D on the same X A rows; the causal s <= 4096 row keeps its kernel (no X A) + D
  test  the whole table (kGeneral rows kept) with D on every d256 row that is not kGeneral-only (the X A
        rows, the causal s <= 4096 row, the ring rows), for the suites
  adopt the whole table with the d1 edits (what is committed if d1 wins)
"""
import copy
import json
import sys

table = json.load(open(sys.argv[1]))
variant = sys.argv[3]
if variant not in ("base", "d1", "d2", "test", "adopt"):
    sys.exit(f"unknown variant {variant}")
if variant in ("base", "d1", "d2"):
    table["entries"] = [row for row in table["entries"] if not row.get("general")]
xa = None
for row in table["entries"]:
    if row.get("head_dim") == 256 and not row.get("general") and row["shape"].get("xor_lane_offsets"):
        xa = row["shape"]
for row in table["entries"]:
    if row.get("head_dim") != 256 or row.get("general"):
        continue
    shape = row["shape"]
    if variant == "test":
        shape["dense_kv_only"] = True
    elif variant in ("d1", "d2", "adopt"):
        if shape.get("xor_lane_offsets"):
            shape["dense_kv_only"] = True
        elif row.get("causal") and row.get("max_seqlen_q") == 4096:
            if variant in ("d1", "adopt"):
                row["shape"] = copy.deepcopy(xa)
            row["shape"]["dense_kv_only"] = True
json.dump(table, open(sys.argv[2], "w"), indent=2)
