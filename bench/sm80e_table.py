#!/usr/bin/env python3
"""Table variants for helper sm80e's device calls (session 9, issue 4): lean_setup (L), peel_first (P; call 1
only, since taken back out of the kernel).

    sm80e_table.py IN.json OUT.json VARIANT
  base   the table without its kGeneral-only rows (no measured row runs them; fewer kernels to build)
  l      base + lean_setup on every row
  lp     base + lean_setup on every row, peel_first on the rows of one m-tile per warp (d256: with two,
         the d64 / d128 shapes, peel_first spilled 200-300 B more in a local sm_90 ptxas)
  test   the whole table (kGeneral rows kept) + lp's options, on the defaults too (the call-1 suites)
  full   the table as it is (call 2's suites: the committed table has lean_setup everywhere)
"""
import json
import sys

table = json.load(open(sys.argv[1]))
variant = sys.argv[3]
options = {"base": [], "l": ["lean_setup"], "lp": ["lean_setup", "peel_first"],
           "test": ["lean_setup", "peel_first"], "full": []}
if variant not in options:
    sys.exit(f"unknown variant {variant}")
if variant in ("base", "l", "lp"):
    table["entries"] = [row for row in table["entries"] if not row.get("general")]
rows = table["entries"] + (table["defaults"] if variant == "test" else [])
for row in rows:
    for option in options[variant]:
        if option == "peel_first" and row["shape"].get("m_tiles_per_warp") != 1:
            continue
        row["shape"][option] = True
json.dump(table, open(sys.argv[2], "w"), indent=2)
