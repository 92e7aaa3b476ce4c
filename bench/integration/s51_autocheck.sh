#!/usr/bin/env bash
# Prepared in session 51 after its device time was spent (not yet run): the extension of this tree (d 64 / 128,
# bf16) and bench/integration/s51_autocheck.py's rows: the split-count rule's automatic choices over one and two
# K/V heads against the requested counts it weighed, SDPA beside.
# Prediction (s51_last.sh's sweep): 16100 keys automatic (56 pieces in two levels) ~13.1 us against 15.1 in one
# cluster of 15; 4000 keys automatic (one cluster of 8) ~10.1 against 11.2 in 32; each automatic row within ~3%
# of the fastest requested count beside it.
#   bash bench/integration/s51_autocheck.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s51f
PY_DIMS="64;128" sm90_build_py new "" 16 300
rows_ab s51_autocheck.py autocheck new
log total
