#!/usr/bin/env python3
"""Summary of helper sm80b's device call (bench/sm80b_run*.sh): the tuning harness's rows per pass (TFLOP/s;
"table", "table_100ms", "table_end" = the committed table's call three times, the control) and the
compare.py-way readings per Python extension (bench/sm80b_peers.py: ours and FA2 in the same process).

    sm80b_summary.py OUT_DIR
"""
import glob
import json
import os
import sys

LETTERS = (("joint_softmax", "J"), ("o_from_registers", "R"), ("prefetch_fragments", "P"), ("whole_tile_loads", "W"),
           ("late_copies", "L"), ("approx_epilogue", "A"), ("xor_lane_offsets", "X"))


def name(r):
    shape = r["shape"]
    if isinstance(shape, str):
        return shape
    n = f"{shape['m_tiles_per_warp']}x{shape['warps']}x{shape['block_n']} " + "".join(
        letter for key, letter in LETTERS if shape.get(key))
    order = r.get("order", "")
    if order.startswith("grouped"):
        n += ":g" + order[len("grouped"):].split("_")[0]
    elif order == "heads_fastest":
        n += ":h"
    if r.get("max_diff", 0) not in (0, -1) and r.get("max_diff", 0) > 2e-2:
        n += "(BAD)"
    return n


def load(path):
    rows = []
    for line in open(path):
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    return rows


def main():
    out = sys.argv[1]
    for path in sorted(glob.glob(os.path.join(out, "rows_*.jsonl"))):
        rows = [r for r in load(path) if r.get("variant", "plain") == "plain" and r.get("dtype", "bf16") == "bf16"]
        print(f"## {os.path.basename(path)}")
        keys = sorted({(r["hdim"], r["causal"], r["seqlen"]) for r in rows})
        for key in keys:
            here = [r for r in rows if (r["hdim"], r["causal"], r["seqlen"]) == key]
            control = [r["tflops"] for r in here if r["shape"] in ("table", "table_100ms", "table_end")]
            spread = (max(control) - min(control)) / min(control) * 100 if control and min(control) > 0 else 0
            print(f"d{key[0]} {'causal' if key[1] else 'non-causal'} s={key[2]}: control "
                  f"{'/'.join(f'{c:.1f}' for c in control)} (spread {spread:.1f}%)")
            for r in here:
                if r["shape"] in ("table", "table_100ms", "table_end"):
                    continue
                print(f"    {name(r):22s} {r['tflops']:7.1f}  {r['tflops'] / max(control) * 100 - 100:+5.1f}% vs "
                      f"control max  diff {r.get('max_diff')}")
    peers = os.path.join(out, "peers.jsonl")
    if os.path.exists(peers):
        print("## compare.py way (bench/sm80b_peers.py): ours mean / FA2 mean = ratio [readings ours, fa2]")
        rows = load(peers)
        keys = sorted({(r["hdim"], r["causal"], r["seqlen"]) for r in rows})
        for key in keys:
            print(f"d{key[0]} {'causal' if key[1] else 'non-causal'} s={key[2]}:")
            for r in rows:
                if (r["hdim"], r["causal"], r["seqlen"]) == key:
                    print(f"    {r['label']:3s} {r['ours_mean']:7.1f} / {r['fa2_mean']:7.1f} = {r['ratio']:.4f}  "
                          f"{r['ours']} {r['fa2']} diff {r['max_diff_vs_fa2']}")


if __name__ == "__main__":
    main()
