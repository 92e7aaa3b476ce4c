#!/usr/bin/env python3
"""Diff of two builds' kernels: registers/spills (resource_usage.py --json) and
SASS opcode counts (sass_histogram.py --json).

  compare_builds.py OLD.json NEW.json [--min-change N]

Works on either kind of JSON; prints, per kernel present in both, the fields
or opcodes whose counts changed by at least N (default 1).
"""
import argparse, json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--min-change", type=int, default=1)
    args = ap.parse_args()
    old, new = json.load(open(args.old)), json.load(open(args.new))
    for kernel in sorted(set(old) | set(new)):
        if kernel not in old or kernel not in new:
            print(f"{'only in new' if kernel in new else 'only in old'}: {kernel}")
            continue
        a, b = old[kernel], new[kernel]
        changes = [(k, a.get(k, 0), b.get(k, 0)) for k in sorted(set(a) | set(b))
                   if abs(b.get(k, 0) - a.get(k, 0)) >= args.min_change]
        if changes:
            print(kernel)
            for k, x, y in sorted(changes, key=lambda c: -abs(c[2] - c[1])):
                print(f"    {k:>14}: {x:>7} -> {y:<7} ({y - x:+d})")


if __name__ == "__main__":
    main()
