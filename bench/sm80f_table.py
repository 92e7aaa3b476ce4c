#!/usr/bin/env python3
"""Table variants for helper sm80f's device call (session 9, issue 4: d256 non-causal s <= 512).

    sm80f_table.py IN.json OUT.json VARIANT [PICKS.json INDEX]
  base   the table without its kGeneral-only rows (no timed problem runs them; fewer kernels to build):
         the Python extensions' table (control A; B/C/D before their row is known)
  pick   base + a d256 bf16 non-causal row with max_seqlen_q 512: shape and tile order of PICKS[INDEX]
         (bench/sm80f_pick.py's output); without that pick, base
  test   the whole table + that row (the suites' build)
"""
import json
import sys

OPTIONAL = ("q_in_registers",)  # bools that every table shape names, even when false

table = json.load(open(sys.argv[1]))
variant = sys.argv[3]
if variant not in ("base", "pick", "test"):
    sys.exit(f"unknown variant {variant}")
if variant in ("base", "pick"):
    table["entries"] = [row for row in table["entries"] if not row.get("general")]
if variant in ("pick", "test"):
    picks = json.load(open(sys.argv[4]))
    index = int(sys.argv[5])
    if index < len(picks):
        pick = picks[index]
        shape = {k: v for k, v in pick["shape"].items() if v is not False or k in OPTIONAL}
        table["entries"].append({"head_dim": 256, "dtype": "bf16", "causal": False, "max_seqlen_q": 512,
                                 "order": pick["order"], "shape": shape,
                                 "measured": f"sm80f candidate {index}: {pick['label']}"})
        print(f"{sys.argv[2]}: + d256 non-causal <= 512 row {pick['label']}")
    else:
        print(f"{sys.argv[2]}: no pick {index}, no new row")
json.dump(table, open(sys.argv[2], "w"), indent=2)
