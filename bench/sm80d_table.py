#!/usr/bin/env python3
"""RECORD of device call 1 (tree ea41bb6, whose TileShape had warp_key_bounds and balanced_m_tiles).
Table variants for helper sm80d's device calls (session 9, issue 4): a copy of
src/cuda/sm80/forward_tuning.json without the kGeneral-only rows (no measured row runs them; fewer kernels
to build on the device), and with OPTION=true on every causal row that is not kGeneral-only (balanced_m_tiles only on rows with two m-tiles
per warp).

    sm80d_table.py IN.json OUT.json [OPTION ...]     e.g. warp_key_bounds
"""
import json
import sys

table = json.load(open(sys.argv[1]))
options = sys.argv[3:]
table["entries"] = [row for row in table["entries"] if not row.get("general")]
for row in table["entries"]:
    if row.get("causal"):
        for option in options:
            if option == "balanced_m_tiles" and row["shape"].get("m_tiles_per_warp") != 2:
                continue
            row["shape"][option] = True
json.dump(table, open(sys.argv[2], "w"), indent=2)
