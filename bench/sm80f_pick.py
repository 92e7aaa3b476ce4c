#!/usr/bin/env python3
"""Helper sm80f, session 9 (issue 4): ranks the tuning harness's d256 non-causal s = 512 rows and picks the
candidates that bench/sm80f_run.sh builds into Python extensions (timed beside FA2 the compare.py way).

    sm80f_pick.py ROWS.jsonl PICKS.json [COUNT]

ROWS.jsonl: bench/sm80_tune run with seqlens "512,512" (two passes in one process; a pass starts at its
"table" row). Each candidate (shape, tile order) is scored against the current row's shape in the m-fastest
order (the table's row, timed as a candidate in the same pass): ratio per pass, ranked by the mean ratio.
Rows with a launch error or an output off the table kernel's by > 2e-2 are left out. Writes the best COUNT
(default 3) other than the current row itself to PICKS.json and prints the ranking.
"""
import json
import statistics
import sys

CURRENT = {"m_tiles_per_warp": 1, "warps": 4, "block_n": 64, "stages": 1, "q_in_registers": False,
           "min_blocks_per_sm": 2, "o_from_registers": True, "early_k_copy": True, "panel_loads": True,
           "mask_bounds": True, "qk_step_ahead": True, "approx_epilogue": True, "xor_lane_offsets": True,
           "lean_setup": True}
LETTERS = {"o_from_registers": "R", "early_k_copy": "E", "panel_loads": "P", "mask_bounds": "B",
           "qk_step_ahead": "Q", "approx_epilogue": "A", "xor_lane_offsets": "X", "lean_setup": "L",
           "joint_softmax": "J", "prefetch_fragments": "F", "whole_tile_loads": "W", "late_copies": "C",
           "prefetch_next": "N", "q_in_registers": "G"}


def same_shape(shape):
    return all(shape.get(k, False) == v for k, v in CURRENT.items()) and not any(
        shape.get(k) for k in LETTERS if k not in CURRENT)


def label(shape, order):
    flags = "".join(v for k, v in LETTERS.items() if shape.get(k))
    return (f"{shape['m_tiles_per_warp']}x{shape['warps']}x{shape['block_n']} s{shape['stages']} "
            f"b{shape['min_blocks_per_sm']} {flags} {order}")


def main():
    rows, passes = [], -1
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line.replace(": inf", ": Infinity").replace(": nan", ": NaN"))
        if r.get("hdim") != 256 or r.get("causal") or r.get("seqlen") != 512 or r.get("variant") != "plain":
            continue
        if r["shape"] == "table":
            passes += 1
        r["pass"] = max(passes, 0)
        rows.append(r)
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    current = {}
    for r in rows:
        if isinstance(r["shape"], dict) and same_shape(r["shape"]) and r["order"] == "m_fastest":
            current[r["pass"]] = r["tflops"]
    scores = {}
    for r in rows:
        if not isinstance(r["shape"], dict):
            print(f"pass {r['pass']} {r['shape']:12s} {r['tflops']:7.1f}")
            continue
        ok = r["error"] == "no error" and (0 <= r["max_diff"] <= 2e-2 or r["max_diff"] == -1)
        key = label(r["shape"], r["order"])
        entry = scores.setdefault(key, {"shape": r["shape"], "order": r["order"], "tflops": [], "ratios": [],
                                        "ok": True, "label": key})
        entry["ok"] &= ok
        entry["tflops"].append(r["tflops"])
        if r["pass"] in current:
            entry["ratios"].append(round(r["tflops"] / current[r["pass"]], 4))
    # A shape whose checked (m-fastest) output failed is rejected in both orders (the same kernel).
    bad = {json.dumps(e["shape"], sort_keys=True) for e in scores.values() if not e["ok"]}
    for e in scores.values():
        e["ok"] &= json.dumps(e["shape"], sort_keys=True) not in bad
    ranked = sorted(scores.values(), key=lambda e: -statistics.mean(e["ratios"] or [0]))
    for e in ranked:
        mark = "" if e["ok"] else "  REJECTED"
        cur = " (current row)" if same_shape(e["shape"]) and e["order"] == "m_fastest" else ""
        print(f"{e['label']:40s} tflops {e['tflops']} ratio {e['ratios']}{cur}{mark}")
    picks = [e for e in ranked if e["ok"] and e["ratios"] and not (same_shape(e["shape"]) and e["order"] == "m_fastest")]
    json.dump(picks[:count], open(sys.argv[2], "w"), indent=1)
    print("picks:", [e["label"] for e in picks[:count]])


if __name__ == "__main__":
    main()
