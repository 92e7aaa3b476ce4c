#!/usr/bin/env python3
"""Variants of src/cuda/sm80/forward_tuning.json for helper sm80b's device calls (session 8, issue 4: sm80 forward
d128 non-causal and d64 causal 2k), so that the Python extension can be built once per table and timed the
bench/compare.py way (bench/sm80b_peers.py) beside FA2.

    sm80b_tables.py IN.json OUT.json VARIANT

VARIANT is a comma list of edits:
  d128nc=LETTERS  every d128 bf16 non-causal plain row (the main entry and the s <= 512 row) gets the 2x4x64
                  shape with these options (J joint_softmax, R o_from_registers, P prefetch_fragments,
                  W whole_tile_loads, L late_copies, A approx_epilogue, X xor_lane_offsets); the s <= 512 row
                  is dropped when the two become equal.
  d64c_hf=N       the d64 causal heads-fastest row (max_seqlen_q 2048) ends at N (longer rows up to 4096 take
                  the grouped J R A X row); N = 0 drops the row.
  none            the table unchanged (the control build).
"""
import json
import sys

LETTERS = {"J": "joint_softmax", "R": "o_from_registers", "P": "prefetch_fragments", "W": "whole_tile_loads",
           "L": "late_copies", "A": "approx_epilogue", "X": "xor_lane_offsets"}
BASE = {"block_n": 64, "m_tiles_per_warp": 2, "min_blocks_per_sm": 2, "q_in_registers": False, "stages": 2,
        "warps": 4}


def main():
    table = json.load(open(sys.argv[1]))
    entries = table["entries"]
    for edit in sys.argv[3].split(","):
        key, _, value = edit.partition("=")
        if key == "none":
            continue
        if key == "d128nc":
            shape = dict(BASE, **{LETTERS[c]: True for c in value})
            plain = [e for e in entries if e["head_dim"] == 128 and e["dtype"] == "bf16" and not e["causal"]
                     and not e.get("general")]
            assert len(plain) == 2, plain
            for e in plain:
                e["shape"] = dict(shape)
            entries[:] = [e for e in entries if not (e in plain and "max_seqlen_q" in e)]
        elif key == "d64c_hf":
            rows = [e for e in entries if e["head_dim"] == 64 and e["causal"] and e.get("order") == "heads_fastest"
                    and e.get("max_seqlen_q") == 2048]
            assert len(rows) == 1, rows
            if int(value) == 0:
                entries.remove(rows[0])
            else:
                rows[0]["max_seqlen_q"] = int(value)
        else:
            sys.exit(f"unknown edit {edit}")
    json.dump(table, open(sys.argv[2], "w"), indent=2)
    open(sys.argv[2], "a").write("\n")


if __name__ == "__main__":
    main()
