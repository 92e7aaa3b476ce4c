#!/usr/bin/env python3
"""SASS opcode histogram per kernel, from `cuobjdump -sass` of an object,
library or executable, to argue optimisations from what the compiler made.

  sass_histogram.py BINARY [--filter SUBSTR] [--top N] [--json OUT.json]

Prints, per kernel (demangled if c++filt is present), the instruction count
and the most frequent opcodes (modifiers stripped: HMMA.16816.F32 -> HMMA).
Needs cuobjdump (CUDA toolkit) on the PATH.
"""
import argparse, collections, json, re, shutil, subprocess, sys


def demangle(names):
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    return dict(zip(names, out))


def histograms(binary):
    text = subprocess.run(["cuobjdump", "-sass", binary], capture_output=True, text=True, check=True).stdout
    kernels, current, arch = {}, None, ""
    for line in text.splitlines():
        m = re.match(r"\s*arch = (\S+)", line)
        if m:
            arch = m.group(1)
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = collections.Counter()
            kernels[(m.group(1), arch)] = current
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[\w.]+)?", line)
        if m and current is not None:
            current[m.group(1)] += 1
    return kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--filter", default="")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json")
    args = ap.parse_args()
    kernels = histograms(args.binary)
    names = demangle([k[0] for k in kernels])
    result = {}
    for (name, arch), hist in kernels.items():
        pretty = names[name]
        if args.filter not in pretty:
            continue
        key = f"{pretty} [{arch}]"
        result[key] = dict(hist)
        print(f"{key}: {sum(hist.values())} instructions")
        print("  " + "  ".join(f"{op}:{n}" for op, n in hist.most_common(args.top)))
    if args.json:
        json.dump(result, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
