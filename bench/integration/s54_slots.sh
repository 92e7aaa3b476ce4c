#!/usr/bin/env bash
# Prepared in session 53 (not yet run): the same-call A/B that session 53 owes for the slots of one row
# (s54_slots.patch: 6067f5b's source; reversed here, the tree before it), which it measured only across calls
# (d256 8/1 at 4000 / 16100 keys 14.16 / 19.27 -> 9.38 / 11.73 us; s53_slots.sh's A/B compared identical
# kernels). s52_combine.py's rows in two passes (orders swapped), SDPA beside; the d256 8-row count sweep on the
# final tree (s54_d256sweep.py); then the checks session 53 did not run on its final tree: every decode check
# (the KV-cache / split-KV / workspace / cuda_sm90 forward and varlen suites, memcheck / racecheck on every
# KV-cache case of cuda_sm90, synccheck on the cluster cases, pytest's interface and dispatch files).
# Prediction: d256 8/1 0.60-0.70 at 4000 / 16100 keys, every other row 0.98-1.02.
#   bash bench/integration/s54_slots.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s54s
patch_ab_builds bench/integration/s54_slots.patch
rows_ab s52_combine.py slots base new
rows_ab s52_combine.py slots2 new base
rows_ab s54_d256sweep.py d256sweep new
decode_change_checks
sanitizer_runs "$tests" 'Grid/KVCacheTest.*cuda_sm90_*1x9000*:Grid/KVCacheTest.*cuda_sm90_*gqa12x2_d256*' 60 synccheck
log total
