#!/usr/bin/env bash
# Session 24, first call (H200): (1) PC samples of d256 causal 4k (the prepared s24_d256_profile.sh), (2) ncu
# time, instructions and DRAM / L2 bytes of d128 non-causal 4k and 16k and d256 causal 4k, ours beside cuDNN: the
# 4k row pays per tile (the same 2048 tiles as 16k, a quarter of the FLOPs), so per FLOP it moves 4x the Q / O
# bytes; how many bytes does each kernel move there, and how many instructions does each execute?
#   bash bench/integration/s24_profile.sh
set -uo pipefail
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
device_call_begin s24p
out=${OUT:-$out} # results straight to $OUT (fewer than eight files)
PY_DIMS="128;256" sm90_build_py new "-lineinfo" 16 300
rm -f "$out"/py_*_configure.log
PYTHONPATH=$bld/pyroot timeout 120 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__inst_executed.sum,sm__cycles_active.avg,smsp__inst_executed_pipe_tensor.sum \
  --profile-from-start off --csv --page raw python3 bench/ncu_grid_target.py --rows 128:0:4096,128:0:16384,256:1:4096 \
  --builds new --cudnn >"$out/ncu_bytes.csv" 2>"$out/ncu_bytes.err"
log "ncu bytes rc=$?"
sass_profile 256:1:4096 d256_causal_4096 200
log total
