#!/usr/bin/env bash
# Prepared in session 54 (not yet run): the decode kernels' two integer divisions before a piece's first K load
# (session 53's trace: 0.29 us for the key range and the K/V head) through the launch's divisors instead
# (s55_entry.patch: producer.h kv_head_of, split_kv_plan.h split_key_blocks with SplitKV::splits_div,
# ForwardKernelParams::heads_per_kv_div; the grid's kernels keep their SASS), and session 54's review's fold of
# SplitKV::cluster into SplitKV::clustered() (cluster_size > 0, derivable state), against the tree with the patch
# reversed: s52_combine.py's rows in two passes, orders swapped, SDPA beside; then every decode check.
# Prediction: 0.97-0.99 on the decodes of 1-4k keys (0.1-0.2 us of ~6-9), 0.99-1.00 beyond.
# The patch is not in the tree: apply and commit it first (git apply bench/integration/s55_entry.patch), so
# that this script's base (the patch reversed) is the tree before it. Checked locally in session 54: the
# split-count unit tests pass (a new one matches the divisor's shares against the division's); cuobjdump of the
# d64 / d128 / d256 bf16 units differs from the tree's only in the decode kernels (64-row and narrow, dense and
# paged: 96-136 instructions fewer, the narrow kernels' integer divisions 5 -> 2, the 64-row ones' 4 -> 0), their
# key-block loops the same length; every grid kernel identical.
#   bash bench/integration/s55_entry.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s55e
patch_ab_builds bench/integration/s55_entry.patch
rows_ab s52_combine.py entry base new
rows_ab s52_combine.py entry2 new base
decode_change_checks
log total
