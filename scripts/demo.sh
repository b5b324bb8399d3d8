#!/usr/bin/env bash
# Set up, list the OpenCL devices, and run the demo on the default device.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
. .venv/bin/activate
clts devices
clts demo "$@"
