#!/usr/bin/env python3
"""Static issue cost of the SASS the compiler made: the control word of every instruction
(the stall cycles ptxas scheduled after it, the yield bit, the scoreboards it sets and waits on),
summed per kernel and per HGMMA issue stretch, to see where a warp's instruction stream is long
before any run on a GPU.

  sass_stalls.py BINARY [--filter SUBSTR] [--stretches] [--min-hgmma N] [--listing START:END] [--json OUT]

BINARY: a cubin (disassembled with nvdisasm -hex) or an object / library / executable
(cuobjdump -sass). nvdisasm is looked up in $NVDISASM, on the PATH, then in the PyPI wheel
nvidia-cuda-nvdisasm (`pip install nvidia-cuda-nvdisasm`: a CPU-only machine can read sm_90 SASS).

Reports, per kernel whose mangled name contains SUBSTR:
  - instructions and the sum of their stall cycles (the fewest cycles one pass over all of them
    takes in one warp when nothing else stalls it);
  - --stretches: each stretch from a named-barrier wait (BAR.SYNC) to the next arrive (BAR.ARV)
    holding at least --min-hgmma HGMMA: the consumer warpgroups' turn-to-turn GEMM issue in the
    sm90 forward kernels (consumer.h). Its static cycles are time the other warpgroup waits for
    its turn;
  - --listing START:END: instructions START..END-1 (indices into the kernel) with their control
    bits: s = stall cycles, y = yield, w / r = the scoreboard set on write / read (7: none),
    m = the scoreboards waited on (bit mask).

The control word is the second 64-bit word of each 128-bit instruction (Volta and later): stall
cycles in its bits 41-44, yield 45, write scoreboard 46-48, read scoreboard 49-51, wait mask 52-57,
operand reuse 58-61.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


def find_nvdisasm():
    for candidate in (os.environ.get("NVDISASM"), shutil.which("nvdisasm")):
        if candidate and Path(candidate).is_file():
            return candidate
    site = Path(sysconfig.get_paths()["purelib"]) / "nvidia"
    found = sorted(site.glob("cu*/bin/nvdisasm")) if site.is_dir() else []
    return str(found[-1]) if found else None


def disassemble(binary):
    if binary.endswith(".cubin"):
        tool = find_nvdisasm()
        if tool is None:
            sys.exit("sass_stalls: nvdisasm not found ($NVDISASM, PATH, or pip install nvidia-cuda-nvdisasm)")
        return subprocess.run([tool, "-hex", "-c", binary], capture_output=True, text=True, check=True).stdout
    if shutil.which("cuobjdump") is None:
        sys.exit("sass_stalls: cuobjdump not found (or pass a .cubin: nvcc -cubin, read with nvdisasm)")
    return subprocess.run(["cuobjdump", "-sass", binary], capture_output=True, text=True, check=True).stdout


def control_bits(word):
    return {"stall": (word >> 41) & 0xF, "yield": (word >> 45) & 1, "wbar": (word >> 46) & 7,
            "rbar": (word >> 49) & 7, "wait": (word >> 52) & 0x3F, "reuse": (word >> 58) & 0xF}


# A kernel's start: nvdisasm ".text.NAME:" or cuobjdump "Function : NAME".
KERNEL = re.compile(r"^\.text\.(\S+):|^\s*Function : (\S+)")
# An instruction: "/*0ab0*/  [@P0] OPCODE operands ;  /* 0x<first word> */".
INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/")
# The control word on the next line: "/* 0x<second word> */".
SECOND_WORD = re.compile(r"^\s*/\* (0x[0-9a-f]{16}) \*/\s*$")


def parse(text):
    """{kernel name: [{offset, text, stall, yield, wbar, rbar, wait, reuse}, ...]} in address order."""
    kernels, current, pending = {}, None, None
    for line in text.splitlines():
        m = KERNEL.match(line)
        if m:
            current = kernels.setdefault(m.group(1) or m.group(2), [])
            pending = None
            continue
        m = INSTRUCTION.search(line)
        if m and current is not None:
            pending = (int(m.group(1), 16), m.group(2).strip().rstrip(";").strip())
            continue
        m = SECOND_WORD.match(line)
        if m and pending is not None:
            current.append(dict(offset=pending[0], text=pending[1], **control_bits(int(m.group(1), 16))))
            pending = None
    return kernels


def opcode(instruction):
    words = instruction["text"].split()
    return words[1] if words and words[0].startswith("@") and len(words) > 1 else (words[0] if words else "")


def issue_stretches(instructions, min_hgmma):
    """(first index, end index, HGMMA count, static cycles) of each BAR.SYNC .. BAR.ARV stretch."""
    found = []
    for start, ins in enumerate(instructions):
        if not opcode(ins).startswith("BAR.SYNC"):
            continue
        for end in range(start + 1, min(start + 400, len(instructions))):
            if opcode(instructions[end]).startswith("BAR.SYNC"):
                break  # a later wait starts the stretch
            if opcode(instructions[end]).startswith("BAR.ARV"):
                body = instructions[start:end]
                hgmma = sum(1 for x in body if opcode(x).startswith("HGMMA"))
                if hgmma >= min_hgmma:
                    found.append((start, end, hgmma, sum(x["stall"] for x in body)))
                break
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--filter", default="")
    ap.add_argument("--stretches", action="store_true")
    ap.add_argument("--min-hgmma", type=int, default=8)
    ap.add_argument("--listing", help="START:END, instruction indices of the (one) selected kernel")
    ap.add_argument("--json")
    args = ap.parse_args()
    kernels = {k: v for k, v in parse(disassemble(args.binary)).items() if args.filter in k}
    result = {}
    for name, instructions in kernels.items():
        entry = {"instructions": len(instructions), "stall_cycles": sum(x["stall"] for x in instructions)}
        print(f"{name}: {entry['instructions']} instructions, {entry['stall_cycles']} stall cycles")
        if args.stretches:
            entry["stretches"] = []
            for start, end, hgmma, cycles in issue_stretches(instructions, args.min_hgmma):
                print(f"  issue stretch [{start}, {end}): {end - start} instructions, {hgmma} HGMMA, "
                      f"{cycles} stall cycles")
                entry["stretches"].append({"start": start, "end": end, "hgmma": hgmma, "stall_cycles": cycles})
        if args.listing:
            first, last = (int(x) for x in args.listing.split(":"))
            for i in range(max(0, first), min(last, len(instructions))):
                x = instructions[i]
                print(f"  {i:5d} s{x['stall']:<2d} y{x['yield']} w{x['wbar']} r{x['rbar']} m{x['wait']:02x}  {x['text']}")
        result[name] = entry
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
