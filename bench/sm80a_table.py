#!/usr/bin/env python3
"""Writes a copy of src/cuda/sm80/forward_tuning.json with TileShape options turned on for the d256 rows that run
FlashAttention 2's 64 x 64 single-buffer kernel (stages 1, not "general"): the candidate table of helper sm80a
(session 8, issue 4), for a Python extension / test build beside the committed table.

    sm80a_table.py IN.json OUT.json OPTION [OPTION ...]     e.g. xor_lane_offsets approx_epilogue
"""
import json
import sys

table = json.load(open(sys.argv[1]))
options = sys.argv[3:]
for row in table["entries"]:
    shape = row["shape"]
    if row.get("head_dim") == 256 and not row.get("general") and shape.get("stages") == 1:
        for option in options:
            shape[option] = True
json.dump(table, open(sys.argv[2], "w"), indent=2)
