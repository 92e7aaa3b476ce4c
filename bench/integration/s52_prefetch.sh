#!/usr/bin/env bash
# Session 52 (issue 6): the first work item's cache length prefetched into L1 at the decode kernels' entry
# (producer.h prefetch_first_lengths) against the tree before it (s52_prefetch.patch reversed), s52_combine3.sh's
# call: bench/integration/s52_prefetch.py's rows, the KV-cache / split-KV / workspace / cuda_sm90 suites,
# memcheck / racecheck / synccheck, pytest on the GPU.
# Prediction (s52_first.sh's trace: the producer's barriers-to-first-tile 1.22 us, most of it the cold read of the
# length after the barriers and the register handover, ~0.5 us later than the entry): 0.2-0.5 us off every
# decode call (0.96-0.99 of the time), none on the split-free MHA row's share (the same read).
#   bash bench/integration/s52_prefetch.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52e
patch_ab_builds bench/integration/s52_prefetch.patch
rows_ab s52_prefetch.py prefetch
decode_change_checks
log total
