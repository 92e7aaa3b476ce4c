#!/usr/bin/env python3
"""Session 10 (issue 4): the cuda_sm80 table with the d256 causal `max_seqlen_q: 1024` row (single buffer,
2 CTAs/SM, R E P B Q A X L, grouped heads) extended to 2048, so that d256 causal 2k runs it instead of the
`max_seqlen_q: 4096` row (heads fastest, without A X).   s10_table_d256c2k.py IN OUT"""
import json
import sys

table = json.load(open(sys.argv[1]))
hits = [e for e in table["entries"]
        if e["head_dim"] == 256 and e["causal"] and e.get("max_seqlen_q") == 1024 and not e.get("general")]
assert len(hits) == 1, hits
hits[0]["max_seqlen_q"] = 2048
json.dump(table, open(sys.argv[2], "w"), indent=2)
