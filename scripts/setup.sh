#!/usr/bin/env bash
# Set up clts in ./.venv on Debian 12 (root or sudo for apt). Usage: scripts/setup.sh [demo|test]
# - installs Debian's pocl-opencl-icd when no OpenCL driver is registered (and for tests oclgrind,
#   clang-16 and libclc-16 for the offline GPU compiles)
# - creates .venv, installs clts (editable) with the extras the job needs, and Intel's CPU
#   OpenCL runtime from PyPI, which clts makes visible next to pocl by itself (clts/runtime/icd.py)
set -euo pipefail
job="${1:-demo}"
PY="${PYTHON:-python3}"
case "$PY" in    # absolute before the cd below: a relative PYTHON= names the caller's folder
  */*) PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" ;;
esac
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_pkgs=()
have_driver=0
for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && have_driver=1; done
[ "$have_driver" -eq 1 ] || apt_pkgs+=(pocl-opencl-icd)
if [ "$job" = test ]; then
  [ -e /usr/lib/oclgrind/liboclgrind-rt-icd.so ] || [ -e /usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so ] || apt_pkgs+=(oclgrind)
  # offline GPU compiles (tests/test_offline_compile.py): clang + libclc's amdgcn / nvptx built-ins
  command -v clang-16 >/dev/null || apt_pkgs+=(clang-16)
  [ -e /usr/lib/clc/amdgcn--amdhsa.bc ] || apt_pkgs+=(libclc-16)
fi
"$PY" -c "import venv, ensurepip" 2>/dev/null || apt_pkgs+=(python3-venv python3-dev)
if [ "${#apt_pkgs[@]}" -gt 0 ]; then
  echo "setup: installing Debian packages: ${apt_pkgs[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${apt_pkgs[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
pip_q() { PYTHONWARNINGS=ignore python -m pip install -q --disable-pip-version-check "$@" 2>&1 | grep -v -E "^WARNING: (Location|The index)" || true; }
pip_q --upgrade pip setuptools wheel
if [ "$job" = test ]; then
  pip_q -e ".[test,intel]"
else
  pip_q -e ".[intel,demo]"
fi
python -c "import clts" || { echo "setup: clts did not install" >&2; exit 1; }
