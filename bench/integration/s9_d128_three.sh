#!/usr/bin/env bash
# Session 9 integrator, exploratory (issue 6, for session 10): a d128 kernel with THREE consumer warpgroups and
# 64-key blocks (ForwardConfig<128, 128, T, 3, 64>: 192-row tiles, 160 registers per consumer; ptxas 8 B of
# spills, no wgmma serialisation), the analogue of the four-consumer d64 kernel, forced on every dense d128 call
# (FLASHATTN_SM90_D128_THREE=1; the static_asserts relaxed in this scratch tree only). t3r adds per-consumer key
# ranges. Against main's kernels, a control and cuDNN in one process (bench/sm90r_ab.py, two passes).
set -uo pipefail
# Ran (session 9, ~14:25 UTC) on a scratch copy of main with bench/integration/s9_d128_three.patch applied
# (git apply); main does not carry that code: the kernel lost on every row (s9_d128_three_ab.jsonl).
out=/tmp/s9x-out
bld=/tmp/s9x-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
trap 'tar -C /tmp -czf "${OUT:-/tmp}/s9x-out.tgz" s9x-out' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
py=$(command -v python3)
source bench/sm90_device_common.sh
sed -i 's/^set(FLASHATTN_SM80_GENCODE -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80)/set(FLASHATTN_SM80_GENCODE)/' \
  src/cuda/CMakeLists.txt
PY_DIMS=128 sm90_build_py base "" 5 170 &
PY_DIMS=128 sm90_build_py t3 "-DFLASHATTN_SM90_D128_THREE=1" 5 170 -DFLASHATTN_PTXAS_VERBOSE=ON &
PY_DIMS=128 sm90_build_py t3r "-DFLASHATTN_SM90_D128_THREE=1 -DFLASHATTN_SM90_D128_THREE_RANGES=1" 5 170 -DFLASHATTN_PTXAS_VERBOSE=ON &
wait
grep -h -A2 "Li3ELi64" "$out"/py_t3*_build.log | grep -E "spill|C75" | sort | uniq -c > "$out/ptxas.txt"
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
for pass in p1 p2; do
  builds=base,t3,t3r,ctrl; [[ $pass == p2 ]] && builds=ctrl,t3r,t3,base
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 80 python3 bench/sm90r_ab.py --builds $builds --hdims 128 \
    --causal 0,1 --seqlens 512,1024,2048,4096,8192,16384 --rep 30 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$pass\", /" | tee -a "$out/ab.jsonl"
  log "pass $pass"
done
