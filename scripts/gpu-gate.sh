#!/usr/bin/env bash
# The GPU resource gate, the test command's last stage: fetch the vendors' back ends
# (scripts/gpu-toolchain.sh), then compile what the public functions build under every shipped
# GPU profile - auto on realistic shapes and every forced code version - with ptxas (sm_80,
# sm_90), LLVM AMDGPU (gfx908, gfx90a) and IGC (pvc, dg2, tgllp), trace the coalescing of
# auto's kernels, and judge it (tests/test_gpu_resources.py), and compile the A100's and MI100's
# sources with one tuner candidate per entry (tests/test_offline_compile.py; minutes). Options:
#   --full     also one sampled tuner candidate per tuner entry, compiles up to 900 s each
#              (tens of minutes on 2 cores)
#   --report   also regenerate docs/gpu-resources.md and clts/devices/resources/*.yaml
# Environment: CLTS_GPU_GATE_SCALE (default 0.25: batch dimensions of the realistic shapes),
# CLTS_GPU_GATE_EMULATE (a comma-separated subset of the GPUs), CLTS_COMPILE_TIMEOUT.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"   # absolute: the toolchain script cds
PYTHON="$PY" scripts/gpu-toolchain.sh
# shellcheck disable=SC1091
. "${CLTS_GPU_TOOLCHAIN:-$HOME/.cache/clts-gpu-toolchain}/env.sh"
export CLTS_TEST_DEVICES="${CLTS_TEST_DEVICES:-pocl}"
# (600 s: IGC took about 300 s on pvc for prescrump's float64 screen at the CPUs' 32 windows x
# 4 queries; the GPU profiles' 16 x 2 builds in seconds, but a forced or tuned shape may not)
export CLTS_GPU_GATE_SAMPLE=0 CLTS_COMPILE_TIMEOUT="${CLTS_COMPILE_TIMEOUT:-600}"
for arg in "$@"; do
  if [ "$arg" = "--full" ]; then
    export CLTS_GPU_GATE_SAMPLE=1 CLTS_COMPILE_TIMEOUT="${CLTS_COMPILE_TIMEOUT_FULL:-900}"
  fi
done
for arg in "$@"; do
  if [ "$arg" = "--report" ]; then
    "$PY" -m clts.tune.offline --scale "${CLTS_GPU_GATE_SCALE:-0.25}" \
      --sample "$CLTS_GPU_GATE_SAMPLE" --record --report docs/gpu-resources.md || true
  fi
done
CLTS_GPU_GATE=1 "$PY" -m pytest -q -p no:cacheprovider -m gpu_gate tests/test_gpu_resources.py \
  tests/test_offline_compile.py
