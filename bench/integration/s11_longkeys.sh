#!/usr/bin/env bash
# Session 11 (issue 6, the d128 long rows against FlashAttention 3's 176-key blocks), one device call.
# Python extensions (90a, bf16, d128, forward only):
#   base  the tree's defaults (non-causal >= 2k: the 128-key cluster kernel with K/V multicast), twice (ctrl)
#   nomc  FLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0 (128-key blocks, no multicast): separates the two effects
#   k160  + LONG_KEY_BLOCK_N=160 (O keeps its own buffer)
#   k176  + LONG_KEY_BLOCK_N=176 (FA3's width for d128 non-causal; O in Q's buffer, no early next S)
# bench/sm90r_ab.py (cuDNN beside), d128 non-causal 4k / 8k / 16k and causal 8k / 16k, two passes (orders reversed).
#   bash bench/integration/s11_longkeys.sh
set -uo pipefail
out=/tmp/s11lk-out
bld=/tmp/s11lk-build
rm -rf "$out" "$bld" && mkdir -p "$out" "$bld/pyroot"
trap 'cp "$out/summary.txt" "$out"/*.jsonl "${OUT:-/tmp}/" 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
log() { echo "== $(($(date +%s) - t0))s $*" | tee -a "$out/summary.txt"; }
py=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tee -a "$out/summary.txt"
# shellcheck source=bench/sm90_device_common.sh
source bench/sm90_device_common.sh
sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' src/cuda/CMakeLists.txt
nomc="-DFLASHATTN_SM90_KV_MULTICAST_MIN_SEQLEN=0"
PY_DIMS=128 sm90_build_py base "" 4 300 &
PY_DIMS=128 sm90_build_py nomc "$nomc" 4 300 &
PY_DIMS=128 sm90_build_py k160 "$nomc -DFLASHATTN_SM90_LONG_KEY_BLOCK_N=160" 4 300 &
PY_DIMS=128 sm90_build_py k176 "$nomc -DFLASHATTN_SM90_LONG_KEY_BLOCK_N=176" 4 300 &
wait
log "builds done"
grep -h "spill\|C75" "$out"/py_*_build.log | sort | uniq -c | tee -a "$out/summary.txt"
rm -rf "$bld/pyroot/flashattn_ctrl" && cp -r "$bld/pyroot/flashattn_base" "$bld/pyroot/flashattn_ctrl" &&
  sed -i 's/"flashattn_base::/"flashattn_ctrl::/' "$bld/pyroot/flashattn_ctrl/_ops.py"
ab() {  # ab PASS BUILDS CAUSAL SEQLENS
  PYTHONPATH=$bld/pyroot PYTHONUNBUFFERED=1 timeout 150 python3 bench/sm90r_ab.py --builds "$2" --hdims 128 \
    --causal "$3" --seqlens "$4" --rep 60 2>&1 | grep -v Warning | sed "s/^{/{\"pass\": \"$1\", /" | tee -a "$out/ab.jsonl"
  log "ab $1 $3"
}
ab p1 base,nomc,k160,k176,ctrl 0 4096,8192,16384
ab p1 base,nomc,k160,k176,ctrl 1 8192,16384
ab p2 ctrl,k176,k160,nomc,base 0 4096,8192,16384
ab p2 ctrl,k176,k160,nomc,base 1 8192,16384
python3 - "$out/ab.jsonl" <<'PY' | tee -a "$out/summary.txt"
import json, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if not line.startswith('{"pass"'): continue
    r = json.loads(line)
    if "hdim" in r: rows[(r["hdim"], r["causal"], r["seqlen"])].append(r)
names = ("base", "nomc", "k160", "k176", "ctrl", "cudnn")
print("d causal s | " + " ".join(names) + " (mean of passes) | nomc/base k160/base k176/base ctrl/base | max err")
for key, rs in sorted(rows.items()):
    m = {n: sum(r[n] for r in rs if n in r) / max(1, sum(1 for r in rs if n in r)) for n in names}
    err = max(max(r["err"].values()) for r in rs)
    f = lambda a, b: f"{m[a] / m[b]:.3f}" if m[a] and m[b] else "-"
    print(key, " ".join(f"{m[n]:.1f}" for n in names), "|", f("nomc", "base"), f("k160", "base"), f("k176", "base"),
          f("ctrl", "base"), "|", f"{err:.4f}")
PY
log total
