#!/usr/bin/env bash
# Helper sm80b, session 8 (issue 4: sm80 forward d128 non-causal 512/1k/2k/16k and d64 causal 2k below FA2 in
# compare-20261122-104626), device call 1. Builds, all before any timing (a loaded host could delay launches):
#  - the tuning harness (bench/sm80_tune) with bench/sm80b_candidates.json: d128 2x4x64 R P (the table's main
#    entry), R P A (its s <= 512 row), + xor_lane_offsets (X), joint_softmax (J) shapes; d64 J R A X (the table's
#    causal s <= 4096 kernel, timed heads fastest and grouped);
#  - three Python extensions (cuda_sm80 only, bf16, sm_90 SASS only: the copies' gencode loses sm_80/compute_80)
#    from table variants (bench/sm80b_tables.py): A = the committed table (the control), B1 = d128 non-causal
#    J R A X at every length + the d64 causal heads-fastest row ending at 1k (2k grouped), B2 = d128 non-causal
#    R P A X at every length (d128 only).
# Then: harness pass 1; compare.py-way readings (bench/sm80b_peers.py: do_bench, FA2 in the same process) in
# processes A, B1, B2; harness pass 2; B2, B1, A. Everything lands in one tar under $OUT.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=/tmp/sm80b-out
final="${OUT:-$PWD/sm80b-gpu-out}"
rm -rf "$out" && mkdir -p "$out" "$final"
trap 'cp "$out/run.txt" "$final/" 2>/dev/null; tar -czf "$final/sm80b.tgz" -C "$out" . 2>/dev/null' EXIT
export PATH=$PATH:/usr/local/cuda/bin
t0=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$out/run.txt"; }
gpu_state() { nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,temperature.gpu,power.draw --format=csv,noheader >>"$out/run.txt" 2>&1; }
gpu_state
echo "tree $(cat TREE 2>/dev/null) nproc $(nproc)" >>"$out/run.txt"

# Python extension of one table variant: build_ext NAME HEAD_DIMS EDITS
build_ext() {
  local name=$1 dims=$2 edits=$3 tree=/tmp/sm80b-$1
  rm -rf "$tree" && mkdir -p "$tree" && tar --exclude='./build*' --exclude=./.git -cf - . | tar -C "$tree" -xf -
  python3 bench/sm80b_tables.py src/cuda/sm80/forward_tuning.json "$tree/src/cuda/sm80/forward_tuning.json" "$edits"
  sed -i 's/^set(FLASHATTN_SM80_GENCODE .*)$/set(FLASHATTN_SM80_GENCODE)/' "$tree/src/cuda/CMakeLists.txt"
  cmake -S "$tree" -B "$tree/build" -G Ninja -DFLASHATTN_CUDA=ON -DFLASHATTN_CUDA_ARCHS=90 \
    -DFLASHATTN_HEAD_DIMS="$dims" -DFLASHATTN_DTYPES=bf16 -DFLASHATTN_BACKWARD=OFF -DFLASHATTN_BUILD_TESTS=OFF \
    -DFLASHATTN_BUILD_CLI=OFF -DFLASHATTN_BUILD_EXAMPLES=OFF -DFLASHATTN_BUILD_PYTHON=ON \
    -DPython_EXECUTABLE="$(command -v python3)" >"$out/ext_$name.configure.log" 2>&1 &&
    timeout 170 cmake --build "$tree/build" --target _C -j 16 >"$out/ext_$name.build.log" 2>&1 &&
    mkdir -p "$tree/pyroot" && cp -r "$tree/python/flashattn" "$tree/pyroot/" &&
    cp "$tree"/build/python/_C*.so "$tree/pyroot/flashattn/"
  echo "ext $name rc=$?" >>"$out/run.txt"
}
build_ext A "64;128" none & pa=$!
build_ext B1 "64;128" d128nc=JRAX,d64c_hf=1024 & pb1=$!
build_ext B2 "128" d128nc=RPAX & pb2=$!
stamp "harness build"
timeout 170 python3 tools/kernels/tune_forward.py --build-only --head-dims "64;128" --dtypes bf16 \
  --candidates bench/sm80b_candidates.json --build build/tuneb >"$out/tune_build.txt" 2>&1
stamp "harness build rc=$?"; tail -3 "$out/tune_build.txt"
wait $pa $pb1 $pb2
stamp "extensions built: $(grep '^ext' "$out/run.txt" | tr '\n' ' ')"
for n in A B1 B2; do grep -m3 -B2 -A8 "error" "$out/ext_$n.build.log" | head -30; done
python3 /dev/stdin build/tuneb/obj/*.ptxas.txt >"$out/ptxas.txt" 2>&1 <<'PY'
import re, sys
L = "JRPWLAX"
for f in sys.argv[1:]:
    for blk in open(f).read().split("ptxas info    : Compiling entry function '")[1:]:
        name = blk.split("'")[0]
        m = re.search(r"TileShapeE((?:L[ib]\d+E)+)EEEELb(\d)ELb(\d)E", name)
        if not m:
            continue
        v = list(map(int, re.findall(r"L[ib](\d+)E", m.group(1))))
        flags = dict(zip("JRPWLA", (v[7], v[8], v[9], v[10], v[11], v[12])), X=v[17] if len(v) > 17 else 0)
        sp = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", blk)
        print(f"{v[0]}x{v[1]}x{v[2]} {''.join(k for k in L if flags[k]):8s} general={m.group(2)} paged={m.group(3)} "
              f"spill st/ld={sp.group(1)}/{sp.group(2)}")
PY

common="SM80_MIN_MS=100 SM80_NORMAL=1 SM80_ONE_ORDER=1 SM80_BF16_ONLY=1 SM80_GENERAL_SEQLEN=0"
pass() {
  env $common SM80_DIMS=128 SM80_CAUSAL=0 timeout 45 build/tuneb/sm80_tune 512,1024,2048,16384 \
    >"$out/rows_n128_$1.jsonl" 2>&1
  stamp "pass $1 d128 non-causal rc=$?"
  env $common SM80_DIMS=64 SM80_CAUSAL=1 SM80_GROUP_FACTORS=2 timeout 30 build/tuneb/sm80_tune 1024,2048,4096 \
    >"$out/rows_c64_$1.jsonl" 2>&1
  stamp "pass $1 d64 causal rc=$?"
}
rows128="128:0:512,128:0:1024,128:0:2048,128:0:16384"
peers() {  # peers NAME ROWS
  [[ -d /tmp/sm80b-$1/pyroot/flashattn ]] || { stamp "peers $1: no extension"; return; }
  PYTHONPATH=/tmp/sm80b-$1/pyroot timeout 40 python3 bench/sm80b_peers.py "$1" "$2" >>"$out/peers.jsonl" \
    2>>"$out/peers_err.txt"
  stamp "peers $1 rc=$?"
}
[[ -x build/tuneb/sm80_tune ]] && pass 1
peers A "$rows128,64:1:2048,64:1:1024"
peers B1 "$rows128,64:1:2048"
peers B2 "$rows128"
[[ -x build/tuneb/sm80_tune ]] && pass 2
peers B2 "$rows128"
peers B1 "$rows128,64:1:2048"
peers A "$rows128,64:1:2048,64:1:1024"
gpu_state
python3 bench/sm80b_summary.py "$out" >"$out/summary.txt" 2>&1; cat "$out/summary.txt"
stamp done
