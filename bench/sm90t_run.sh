#!/usr/bin/env bash
# Run 1 of helper sm90t (session 8, issue 6: sm90 forward d64 / d128 short rows). Run from this tree's
# root, carried inside the main checkout:
#   cd .device-carry/sm90t && DEADLINE=245 timeout 262 bash bench/sm90t_run.sh
# Python extensions (90a, bf16, d 64/128, forward only) of this tree differing only by compile flags, all
# built in parallel before anything is timed (PY_BUILDS "name=flags;..."; base's extension is installed a
# second time as "ctrl": identical kernels, the noise floor):
#   base  = the defaults (main 0f879a8's kernels: every new switch is 0 by default)
#   MC    = K/V multicast from 512 keys (FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=512; d128 non-causal only)
#   HM    = head-major tile order for unmasked rows <= 4k keys (FLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN)
#   HMMC  = both (at d128 the cluster order over pairs with sections of one head)
#   EH    = L2 eviction hints: Q / O evict_first, K / V evict_last (FLASHATTN_SM90_L2_HINTS=1; the switch
#           exists only in the tree of commit 2690fa9, the one run 1 used)
# Then, each step under a timeout: bench/sm90s_ab.py (all builds + ctrl + cuDNN in one process, each row
# forward then reverse order, rotated per row) on d 64/128 x causal x s 512..2k, then d64 causal 4k and
# d128 non-causal 8k; ncu (locked clocks) of base / HM / EH / MC and cuDNN at s 512 non-causal, d128 and
# d64, with the same sections (launch, SOL, memory workload, scheduler, warp state, occupancy) and DRAM /
# L2 metrics. One tar under $OUT.
set -uo pipefail
out=/tmp/sm90t-out
bld=/tmp/sm90t-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld"
finish() { tar -C /tmp -czf "${OUT:-/tmp}/sm90t-out.tgz" sm90t-out; }
trap finish EXIT
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
left() { echo $((${DEADLINE:-245} - ($(date +%s) - t0))); }
cap() { local l; l=$(left); echo $(($1 < l ? $1 : (l > 1 ? l : 1))); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv >"$out/gpu.txt" 2>&1
py=$(command -v python3)
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh

PY_BUILDS=${PY_BUILDS:-"base=;MC=-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=512;HM=-DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=4096;HMMC=-DFLASHATTN_SM90_HEAD_MAJOR_MAX_SEQLEN=4096 -DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=512;EH=-DFLASHATTN_SM90_L2_HINTS=1"}
build_py() { PY_DIMS="64;128" sm90_build_py "$1" "$2" "${PY_JOBS:-3}" "$(cap 150)" -DFLASHATTN_PTXAS_VERBOSE=ON; }
pids=()
names=()
IFS=';' read -ra specs <<<"$PY_BUILDS"
for spec in "${specs[@]}"; do
  build_py "${spec%%=*}" "${spec#*=}" & pids+=($!)
  names+=("${spec%%=*}")
done
for pid in "${pids[@]}"; do wait "$pid"; done
builds=""
for b in "${names[@]}"; do [[ -d $bld/pyroot/flashattn_$b ]] && builds+="${builds:+,}$b"; done
if [[ -d $bld/pyroot/flashattn_base ]]; then
  rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
    sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py" && builds+=,ctrl
fi
log "builds done: $builds; wgmma serialisation lines: $(grep -c -E 'C751[3458]' "$out"/py_*_build.log | tr '\n' ' ')"
for f in "$out"/py_*_build.log; do
  echo "-- $(basename "$f")"
  grep -A2 "Compiling entry.*cuda_sm90.*forward_kernel" "$f" | grep -E "entry|spill" |
    sed -E 's/.*ForwardConfigILi([0-9]+)ELi([0-9]+)E(13__nv_bfloat16|6__half)Li([0-9])ELi([0-9]+)ELi([0-9]+)EEELb([01]).*/kernel d\1 dv\2 \3 c\4 long\5 cluster\6 paged\7/'
done >"$out/ptxas.txt" 2>&1
if command -v cuobjdump >/dev/null; then
  for b in "${names[@]}"; do
    for o in "$bld/py-$b"/src/CMakeFiles/flashattn.dir/cuda/sm90/forward_hdim{64,128}_bf16.cu.o; do
      [[ -f $o ]] || continue
      timeout 20 cuobjdump -sass "$o" | awk -v f="$b $(basename "$o")" '
        /Function : .*forward_kernel/ {name = $3; next}
        /Function :/ {name = ""}
        name != "" && /\/\*[0-9a-f]+\*\// {n[name]++}
        name != "" && /R2UR/ {r[name]++}
        name != "" && /HGMMA/ {h[name]++}
        name != "" && /LDL|STL/ {l[name]++}
        END {for (k in n) printf "%s %s instr %d R2UR %d HGMMA %d LDL/STL %d\n", f, substr(k, 1, 90), n[k], r[k] + 0, h[k] + 0, l[k] + 0}'
    done
  done >"$out/sass_counts.txt" 2>&1
fi
log "sass counts done"

ab() {  # ab HDIMS CAUSAL SEQLENS TIMEOUT
  local start
  start=$(date +%s)
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout "$(cap "$4")" python3 bench/sm90s_ab.py --builds "$builds" \
    --hdims "$1" --causal "$2" --seqlens "$3" --rep "${AB_REP:-40}" 2>&1 | grep -v Warning | tee -a "$out/ab.jsonl"
  log "ab d $1 causal $2 s $3 rc=${PIPESTATUS[0]} in $(($(date +%s) - start)) s"
}
ab 64,128 0,1 512,1024,2048 "${AB_TIMEOUT:-70}"
ab 128 0 8192 15
ab 64 1 4096 12
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >>"$out/gpu.txt" 2>&1

if command -v ncu >/dev/null && (($(left) > 25)); then
  start=$(date +%s)
  targets=${NCU_TARGETS:-"base HM EH:128 MC:128"}
  # shellcheck disable=SC2086
  PYTHONPATH=$bld/pyroot timeout "$(cap 75)" ncu --profile-from-start off --import-source no --section LaunchStats \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SchedulerStats \
    --section WarpStateStats --section Occupancy \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex.sum,smsp__inst_executed.sum,sm__cycles_active.avg,gpc__cycles_elapsed.max \
    -o "$out/ncu" python3 bench/sm90t_ncu_target.py $targets >"$out/ncu.log" 2>&1
  log "ncu rc=$? in $(($(date +%s) - start)) s"
  [[ -f $out/ncu.ncu-rep ]] && timeout "$(cap 20)" ncu -i "$out/ncu.ncu-rep" --page details >"$out/ncu.txt" 2>&1
  [[ -f $out/ncu.ncu-rep ]] && timeout "$(cap 15)" ncu -i "$out/ncu.ncu-rep" --page raw --csv 2>/dev/null | gzip >"$out/ncu_raw.csv.gz"
  rm -f "$out"/ncu.ncu-rep
  log "ncu export done"
fi
log "total"
