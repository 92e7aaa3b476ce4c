#!/usr/bin/env python3
"""Writes a copy of src/cuda/sm80/forward_tuning.json for the test build of helper sm80y's device call (session 7,
issue 4): xor_lane_offsets on every d64 row that runs the plain kernels (the d64 entries without "general" and the
d64 default), so that the GPU suites run the XOR-derived ldmatrix addresses (smem_layout.h LaneOffsets::address)
on every d64 (and d40, bucket 64) case that is not softcap/ALiBi/dropout; the kGeneral rows keep the option off,
as a table adopting it would.

    sm80y_test_table.py IN.json OUT.json
"""
import json
import sys

table = json.load(open(sys.argv[1]))
for row in table["entries"] + table["defaults"]:
    dim = row.get("head_dim", row.get("max_head_dim"))
    if dim == 64 and not row.get("general"):
        row["shape"]["xor_lane_offsets"] = True
json.dump(table, open(sys.argv[2], "w"), indent=2)
