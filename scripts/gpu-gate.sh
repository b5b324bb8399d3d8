#!/usr/bin/env bash
# The GPU resource gate as its own CI stage (a few minutes): fetch the vendors' back ends
# (scripts/gpu-toolchain.sh), then compile everything the public functions build for every
# shipped GPU profile and judge it (tests/test_gpu_resources.py). Options:
#   --report   also regenerate docs/gpu-resources.md and clts/devices/resources/*.yaml
# Environment: CLTS_GPU_GATE_SCALE (default 0.25: batch dimensions of the realistic shapes).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
PYTHON="$PY" scripts/gpu-toolchain.sh
# shellcheck disable=SC1091
. "${CLTS_GPU_TOOLCHAIN:-$HOME/.cache/clts-gpu-toolchain}/env.sh"
export CLTS_TEST_DEVICES="${CLTS_TEST_DEVICES:-pocl}"
if [ "${1:-}" = "--report" ]; then
  "$PY" -m clts.tune.offline --scale "${CLTS_GPU_GATE_SCALE:-0.25}" --record \
    --report docs/gpu-resources.md || true
fi
CLTS_GPU_GATE=1 "$PY" -m pytest -q -p no:cacheprovider -m gpu_gate tests/test_gpu_resources.py
