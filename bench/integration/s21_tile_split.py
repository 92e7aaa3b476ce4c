#!/usr/bin/env python3
"""Splits two ncu source-page exports (--page source --csv --print-source sass) of the same kernel, run on
problems with the same tile count but different key lengths (s21_tile_profile.sh: d128 non-causal 4k and 16k,
2048 tiles each), into per-key-block and per-tile instructions.

An instruction executed as often in both runs runs once per tile (or per CTA); one executed ~4x as often at 16k
runs once per key block. Per region between the given SASS indices it prints instructions executed per
warp-tile and stall samples, so the tile boundary's cost can be read against one key block's.

  python3 bench/integration/s21_tile_split.py sass_4096.csv.gz sass_16384.csv.gz --warp-tiles 16384 \
      --cuts 0,62,364,921,1289,1290,2600,2611,2740,2880,3013,3171,3208,3242,3440,3474,3561,3802,3872
"""
import argparse
import csv
import gzip

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def load(path):
    rows, header = [], None
    with gzip.open(path, "rt") as f:
        for row in csv.reader(f):
            if len(row) > 3 and row[0] == "Address":
                header = row
            elif header and len(row) == len(header):
                rows.append(dict(zip(header, row)))
    return header, rows


def count(row, key):
    return int(row[key] or 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("short")
    ap.add_argument("long")
    ap.add_argument("--warp-tiles", type=int, required=True, help="tiles x consumer warps (same in both runs)")
    ap.add_argument("--cuts", required=True, help="comma-separated SASS indices bounding the regions")
    ap.add_argument("--key-ratio", type=float, default=4.0, help="key blocks per tile, long / short")
    args = ap.parse_args()
    header, short = load(args.short)
    _, long_ = load(args.long)
    assert len(short) == len(long_), "not the same kernel"
    stalls = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]

    groups = {"per tile": [0, 0], "per key block": [0, 0], "other": [0, 0]}
    for a, b in zip(short, long_):
        ea, eb = count(a, EXECUTED), count(b, EXECUTED)
        if ea == 0:
            group = "other"
        elif eb / ea < 1.5:
            group = "per tile"
        elif eb / ea > args.key_ratio - 1:
            group = "per key block"
        else:
            group = "other"
        groups[group][0] += count(a, SAMPLES)
        groups[group][1] += count(b, SAMPLES)
    total = [sum(g[i] for g in groups.values()) for i in range(2)]
    for name, (sa, sb) in groups.items():
        print(f"{name:14s} samples short {sa:8d} ({100 * sa / total[0]:5.1f}%)  long {sb:8d} ({100 * sb / total[1]:5.1f}%)")

    cuts = [int(c) for c in args.cuts.split(",")]
    print("\nregion        executed / warp-tile (short, long)   samples (short, long)   top stalls (short)")
    for lo, hi in zip(cuts, cuts[1:]):
        ea = sum(count(short[i], EXECUTED) for i in range(lo, hi)) / args.warp_tiles
        eb = sum(count(long_[i], EXECUTED) for i in range(lo, hi)) / args.warp_tiles
        sa = sum(count(short[i], SAMPLES) for i in range(lo, hi))
        sb = sum(count(long_[i], SAMPLES) for i in range(lo, hi))
        top = sorted(((sum(count(short[i], s) for i in range(lo, hi)), s[6:]) for s in stalls), reverse=True)[:3]
        tops = ", ".join(f"{name} {n}" for n, name in top if n)
        print(f"{lo:5d}-{hi:5d}   {ea:9.1f} {eb:9.1f}                  {sa:7d} {sb:7d}          {tops}")


if __name__ == "__main__":
    main()
