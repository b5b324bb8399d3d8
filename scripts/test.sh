#!/usr/bin/env bash
# Set up and run the test suite: every test on every working OpenCL device (pocl and Intel's CPU
# runtime here), then the tiny kernel cases on Oclgrind with race / uninitialised-read /
# out-of-bounds checks, then the input-handling tests again with the lowest numpy clts supports
# (1.26, in .venv-numpy1). Extra arguments go to every pytest run. First a pyflakes-class ruff
# check (configured in pyproject.toml), so dead imports and variables stay gone.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
. .venv/bin/activate
clts devices
status=0
echo "== ruff check (pyflakes rules) =="
ruff check --no-cache clts tests bench scripts || status=$?
python -m pytest -q -p no:cacheprovider --durations=15 "$@" tests || status=$?
echo "== kernel cases on Oclgrind =="
python -m pytest -q -p no:cacheprovider --oclgrind "$@" tests || status=$?
deactivate
echo "== lowest supported numpy (1.26): input handling, BFAST, properties on pocl =="
if [ ! -x .venv-numpy1/bin/python ]; then
  python3 -m venv .venv-numpy1
fi
.venv-numpy1/bin/python -m pip install -q --disable-pip-version-check "numpy==1.26.*" \
  -e ".[test]" 2>&1 | grep -v -E "^WARNING: (Location|The index)" || true
CLTS_TEST_DEVICES=pocl .venv-numpy1/bin/python -m pytest -q -p no:cacheprovider "$@" \
  tests/test_hostile_inputs.py tests/test_properties.py \
  tests/test_bfast.py -k "not fixture and not reference_random" || status=$?
exit $status
