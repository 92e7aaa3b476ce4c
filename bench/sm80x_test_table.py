#!/usr/bin/env python3
"""Writes a copy of src/cuda/sm80/forward_tuning.json for the test build of helper sm80x's device call (session 7,
issue 4): whole_tile_ends on every d64 and d128 row (entries and defaults), pair_stores on the d128 ones, so that
the GPU suites run the new whole-tile prologue/epilogue (the 16-byte register stores at d64's s <= 512 row, the
staged stores on the other d64 rows, the 8-byte pair stores at d128) beside the edge tiles' general code.

    sm80x_test_table.py IN.json OUT.json

RECORD: the options exist only on tree 12f8640 (taken back out after the device call, docs/kernel-notes.md v14).
"""
import json
import sys

table = json.load(open(sys.argv[1]))
for row in table["entries"] + table["defaults"]:
    dim = row.get("head_dim", row.get("max_head_dim"))
    if dim in (64, 128):
        row["shape"]["whole_tile_ends"] = True
        row["shape"]["pair_stores"] = dim == 128
json.dump(table, open(sys.argv[2], "w"), indent=2)
