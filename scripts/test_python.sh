#!/usr/bin/env bash
# Python package tests: make a virtual environment with PyTorch (once; reused after),
# `pip install .` flashattn into it, and run pytest on tests/python.
#
# Environment:
#   PYTHON                 interpreter to base the venv on (default python3)
#   FLASHATTN_VENV         venv location (default ~/.cache/flashattn/venv-pyXY, kept between runs)
#   FLASHATTN_TORCH        PyTorch requirement (default "torch>=2.4")
#   FLASHATTN_PY_CUDA      ON to build the CUDA backends into the extension (default OFF: the
#                          CPU suite needs none, and CI machines have no GPU)
#   FLASHATTN_PY_CMAKE_ARGS extra -C settings for pip, e.g. "-Ccmake.define.FLASHATTN_HEAD_DIMS=128"
#   PYTEST_ARGS            extra pytest arguments
#
# PyTorch from PyPI on Linux x86-64 depends on ~3 GB of CUDA libraries it needs at import
# time, plus Triton (1 GB) that only GPU torch.compile uses. The CPU suite needs no Triton,
# so torch is installed without it: `pip install --no-deps torch`, then exactly torch's
# own requirements minus triton and cuda-bindings. Cold: about a minute; warm: seconds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

py=${PYTHON:-python3}
tag=$("$py" -c 'import sys; print("%d%d" % sys.version_info[:2])')
venv=${FLASHATTN_VENV:-$HOME/.cache/flashattn/venv-py$tag}
torch_req=${FLASHATTN_TORCH:-torch>=2.4}
vpy="$venv/bin/python"
# --no-compile: byte-compiling all of torch and sympy costs more than the imports ever need.
pip=("$vpy" -m pip install -q --disable-pip-version-check --no-compile)

t0=$(date +%s)
if [[ ! -x "$vpy" ]]; then
  echo "== creating $venv"
  mkdir -p "$(dirname "$venv")"
  "$py" -m venv "$venv"
fi

if ! "$vpy" -c 'import torch' >/dev/null 2>&1; then
  echo "== installing PyTorch ($torch_req) without triton"
  "${pip[@]}" --no-deps "$torch_req"
  # torch's own requirements for this platform, minus the GPU-compiler-only ones.
  mapfile -t reqs < <("$vpy" - <<'EOF'
from importlib.metadata import requires
from pip._vendor.packaging.requirements import Requirement
for line in requires("torch") or []:
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    if req.name.lower() in ("triton", "cuda-bindings"):
        continue
    req.marker = None
    print(str(req))
EOF
)
  echo "(pip will warn that triton and cuda-bindings are missing: intended, torch imports without them)"
  if ! "${pip[@]}" "${reqs[@]}" || ! "$vpy" -c 'import torch' >/dev/null 2>&1; then
    echo "== selective install did not import; installing torch with all its dependencies"
    "${pip[@]}" "$torch_req"
  fi
fi
if ! "$vpy" -c 'import pytest, numpy, nanobind, scikit_build_core' >/dev/null 2>&1; then
  "${pip[@]}" pytest numpy "nanobind>=2.0" "scikit-build-core>=0.10"
fi
echo "python environment ready in $(( $(date +%s) - t0 )) s: $("$vpy" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null)"

t0=$(date +%s)
cuda=${FLASHATTN_PY_CUDA:-OFF}
# The build dir persists (ignored by git), so a re-install rebuilds only what changed.
# shellcheck disable=SC2086  # FLASHATTN_PY_CMAKE_ARGS is a list of arguments
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "${pip[@]}" --no-build-isolation --no-deps --force-reinstall . \
  -Cbuild-dir="build-py/pip-cuda-$cuda-py$tag" -Ccmake.define.FLASHATTN_CUDA="$cuda" ${FLASHATTN_PY_CMAKE_ARGS:-}
echo "pip install . took $(( $(date +%s) - t0 )) s"

# Run from the repository root: the installed package is imported, not python/flashattn.
# shellcheck disable=SC2086
"$vpy" -m pytest tests/python -q -p no:cacheprovider ${PYTEST_ARGS:-}
