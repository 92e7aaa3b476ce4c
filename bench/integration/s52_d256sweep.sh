#!/usr/bin/env bash
# Session 52: bench/integration/s52_d256sweep.py on this tree (the d256 bf16 extension alone): requested split
# counts of d256 decodes over 8-row tiles, SDPA beside. No prediction: data for the next rule (the counter's
# combine at 8 rows of d256 takes 4 pieces a round, about 1.5 us each in s52_combine2.sh's trace at d128).
#   bash bench/integration/s52_d256sweep.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s52f
PY_DIMS="256" sm90_build_py new "" 16 240
rows_ab s52_d256sweep.py d256sweep new
log total
