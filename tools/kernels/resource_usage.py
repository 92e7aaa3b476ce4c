#!/usr/bin/env python3
"""Registers, spills, stack and shared memory per kernel.

  resource_usage.py BINARY [--json OUT.json]      # cuobjdump --dump-resource-usage
  resource_usage.py --ptxas LOG [--json OUT.json] # a build log with -Xptxas=-v
                                                  # (cmake -DFLASHATTN_PTXAS_VERBOSE=ON)
"""
import argparse, json, re, shutil, subprocess, sys


def demangle(names):
    if not shutil.which("c++filt"):
        return {n: n for n in names}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")
    return dict(zip(names, out))


def from_cuobjdump(binary):
    text = subprocess.run(["cuobjdump", "--dump-resource-usage", binary], capture_output=True, text=True,
                          check=True).stdout
    rows, arch = {}, ""
    for line in text.splitlines():
        m = re.search(r"arch = (\S+)", line)
        if m:
            arch = m.group(1)
        m = re.search(r"Function (\S+):", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", line)
        if m:
            rows[(name, arch)] = dict(zip(("registers", "stack", "shared", "local"), map(int, m.groups())))
    return rows


# ptxas's notes that it serialised a kernel's wgmma pipeline (C7510-C7518 "Potential Performance Loss: wgmma.mma_async
# instructions are serialized due to ..."): every wgmma of that kernel then waits for the one before it. They name
# the kernel in the message itself (nvcc 13.0 prints them before the kernel's resource lines; matched by name, so
# the order does not matter).
SERIALISED = re.compile(r"\((C75\d\d)\) Potential Performance Loss: (.*?) in the function '(\S+)'")


def from_ptxas(log):
    rows, name, arch, serialised = {}, None, "", {}
    for line in open(log, errors="replace"):
        m = SERIALISED.search(line)
        if m:
            serialised.setdefault(m.group(3), []).append(f"{m.group(1)}: {m.group(2)}")
            continue
        m = re.search(r"Compiling entry function '(\S+)' for '(\S+)'", line)
        if m:
            name, arch = m.groups()
            rows[(name, arch)] = {}
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and name:
            rows[(name, arch)].update(dict(zip(("stack", "spill_stores", "spill_loads"), map(int, m.groups()))))
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            rows[(name, arch)]["registers"] = int(m.group(1))
    for kernel, notes in serialised.items():
        keys = [key for key in rows if key[0] == kernel] or [(kernel, "")]
        for key in keys:
            rows.setdefault(key, {})["wgmma_serialised"] = notes
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?")
    ap.add_argument("--ptxas")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = from_ptxas(args.ptxas) if args.ptxas else from_cuobjdump(args.binary)
    names = demangle([k[0] for k in rows])
    out = {}
    for (name, arch), r in sorted(rows.items(), key=lambda kv: names[kv[0][0]]):
        key = f"{names[name]} [{arch}]"
        out[key] = r
        print(f"{key}\n    " + " ".join(f"{k}={v}" for k, v in r.items()))
    if args.json:
        json.dump(out, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
