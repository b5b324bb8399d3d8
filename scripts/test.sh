#!/usr/bin/env bash
# Set up and run the test suite: every test on every working OpenCL device (pocl and Intel's CPU
# runtime here), then the tiny kernel cases on Oclgrind with race / uninitialised-read /
# out-of-bounds checks. Extra arguments go to both pytest runs. First a pyflakes-class ruff check
# (configured in pyproject.toml), so dead imports and variables stay gone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
. .venv/bin/activate
clts devices
status=0
echo "== ruff check (pyflakes rules) =="
ruff check --no-cache clts tests bench scripts || status=$?
python -m pytest -q -p no:cacheprovider "$@" tests || status=$?
echo "== kernel cases on Oclgrind =="
python -m pytest -q -p no:cacheprovider --oclgrind "$@" tests || status=$?
exit $status
