#!/bin/bash
# Session 9 verification call C on the final tree (after final9a/b: the sm80 lean_setup constants moved into
# kernel_args.h, shared with the tuning harness; docs and records): build, GPU suites, sanitizers, PTX-JIT backward.
O=$OUT; export OUT=/tmp/g9c; mkdir -p $OUT; trap 'tar czf $O/x.tgz -C /tmp g9c' EXIT
FLASHATTN_GPU_STEPS="build tests sanitize ptxjit" scripts/gpu_check.sh > $OUT/all.txt 2>&1
grep -E "^== " $OUT/all.txt
