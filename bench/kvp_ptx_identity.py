#!/usr/bin/env python3
"""Whether two PTX files of one sm80 forward translation unit hold the same kernels, instruction for
instruction (helper kvp, session 7; docs/kernel-notes.md "paged loader, helper kvp").

Identical PTX means identical SASS (ptxas is deterministic), hence identical timings: this is how the
kernels split off by kPagedLoads were checked against kernels measured on the GPU without another call.

  kvp_ptx_identity.py OLD.ptx NEW.ptx          OLD's kernels vs NEW's of the same (shape, kGeneral) with
                                                kPagedLoads false (or absent)
  kvp_ptx_identity.py OLD.ptx NEW.ptx paged    OLD's kernels vs NEW's kPagedLoads = true ones

PTX from: nvcc -DFLASHATTN_VERSION=\\"0.1.0\\" -DFLASHATTN_WITH_CUDA=1 -I<tree>/include -I<tree>/src -O3
-DNDEBUG -std=c++20 -arch=compute_90 -ptx -x cu <build>/src/cuda/generated/forward_sm80_hdim64_fp16.cu.
Compared: each .entry body with its own name and the block-label numbering (the function's index in
the file) normalised; the parameter declaration (the size of ForwardKernelArgs) is not compared.
"""
import hashlib
import re
import sys


def kernels(path):
    """(TileShape fields, kGeneral, kPagedLoads) -> (md5 of the normalised body, its line count)."""
    found = {}
    text = open(path).read()
    for m in re.finditer(r"\.visible \.entry (\S+)\(\n(.*?)\n\)\n(.*?)\n}\n", text, re.S):
        name, body = m.group(1), m.group(3)
        # ..._9TileShapeE<12 fields>EEEE<kGeneral>[<kPagedLoads>]EEvNS1_17ForwardKernelArgsE
        fields = re.findall(r"L[ib]\d+E", name.split("TileShapeE", 1)[1])
        key = ("".join(fields[:12]), fields[12], fields[13] if len(fields) > 13 else "Lb0E")
        body = body.replace(name, "KERNEL")
        body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
        found[key] = (hashlib.md5(body.encode()).hexdigest(), len(body.splitlines()))
    return found


def main():
    old, new = kernels(sys.argv[1]), kernels(sys.argv[2])
    paged = "Lb1E" if len(sys.argv) > 3 and sys.argv[3] == "paged" else "Lb0E"
    differ = 0
    for (shape, general, _), (digest, lines) in sorted(old.items()):
        if paged == "Lb1E" and general == "Lb1E":
            continue  # no kGeneral kernel has kPagedLoads (forward_launch.h)
        other = new.get((shape, general, paged))
        if other is None:
            print(f"MISSING   {shape} kGeneral={general} in {sys.argv[2]}")
            differ += 1
            continue
        same = other[0] == digest
        differ += not same
        print(f"{'IDENTICAL' if same else 'DIFFERENT'} {shape} kGeneral={general}: {lines} / {other[1]} lines")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
