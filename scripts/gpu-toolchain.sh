#!/usr/bin/env bash
# Fetch the GPU vendors' own back ends for offline compiles into a cache folder, nothing installed:
#   - NVIDIA ptxas from the PyPI wheel nvidia-cuda-nvcc-cu12 (pip download, unzip one file)
#   - Intel ocloc (IGC, the compiler inside Intel's GPU driver) from Debian packages, extracted
#     with dpkg-deb -x (never installed: installing would register a GPU driver)
#   - AMD: clang-16's AMDGPU back end (the one ROCm uses) with libclc-16, from apt
#   - the one-function 64-bit atom_cmpxchg shim that libclc's nvptx library lacks, as bitcode
# Usage: scripts/gpu-toolchain.sh [--print-env]   (cache: $CLTS_GPU_TOOLCHAIN, default
#   ~/.cache/clts-gpu-toolchain). Prints the environment the offline compiles read
#   (CLTS_PTXAS, CLTS_OCLOC, CLTS_OCLOC_LIBS, CLTS_PTXAS_SHIM). Safe to re-run: cached steps are
#   skipped. Works as root on a fresh Debian 12 (apt-get and pip; no GPU needed).
set -euo pipefail
CACHE="${CLTS_GPU_TOOLCHAIN:-$HOME/.cache/clts-gpu-toolchain}"
NVCC_VERSION="${CLTS_NVCC_VERSION:-12.9.86}"
PY="${PYTHON:-python3}"
# an absolute interpreter path: a relative one (.venv/bin/python) would name nothing in a
# sub-shell that changed directory
case "$PY" in
  */*) PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" ;;
  *) PY="$(command -v "$PY")" ;;
esac
LIBCLC="${CLTS_LIBCLC:-/usr/lib/clc}"
mkdir -p "$CACHE"
CACHE="$(cd "$CACHE" && pwd)"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
log() { [ "${1:-}" = "--print-env" ] || echo "gpu-toolchain: $*" >&2; }

# AMD (and the nvptx front end): clang-16 + libclc-16
if ! command -v clang-16 >/dev/null || [ ! -e "$LIBCLC/amdgcn--amdhsa.bc" ]; then
  log "installing clang-16 libclc-16 (apt)"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-16 libclc-16 >/dev/null
fi

# NVIDIA: ptxas from the wheel
PTXAS="$CACHE/nvcc/nvidia/cuda_nvcc/bin/ptxas"
if [ ! -x "$PTXAS" ]; then
  log "downloading nvidia-cuda-nvcc-cu12==$NVCC_VERSION (PyPI) for ptxas"
  # the wheel (~40 MB) goes to a temporary folder removed whatever happens; ptxas alone is
  # extracted into the cache, and takes its final name only once it is whole
  rm -rf "$CACHE/nvcc" "$CACHE/nvcc.part" "$CACHE"/wheel.*
  WHEELS="$(mktemp -d "$CACHE/wheel.XXXXXX")"
  trap 'rm -rf "$WHEELS" "$CACHE/nvcc.part"' EXIT
  "$PY" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 --platform manylinux_2_27_x86_64 \
    "nvidia-cuda-nvcc-cu12==$NVCC_VERSION" -d "$WHEELS"
  "$PY" -c "import glob, sys, zipfile
found = glob.glob(sys.argv[1] + '/*.whl')
if len(found) != 1:
    sys.exit('gpu-toolchain: expected one wheel, found %s' % found)
zipfile.ZipFile(found[0]).extract('nvidia/cuda_nvcc/bin/ptxas', sys.argv[2])" \
    "$WHEELS" "$CACHE/nvcc.part"
  chmod +x "$CACHE/nvcc.part/nvidia/cuda_nvcc/bin/ptxas"
  mv "$CACHE/nvcc.part" "$CACHE/nvcc"
  rm -rf "$WHEELS"
  trap - EXIT
fi

# Intel: ocloc + IGC, extracted
OCLOC="$CACHE/igc/usr/bin/ocloc"
if [ ! -x "$OCLOC" ]; then
  log "downloading Intel's compute runtime + IGC (apt-get download, extracted, not installed)"
  rm -rf "$CACHE/igc" "$CACHE/debs" && mkdir -p "$CACHE/igc" "$CACHE/debs"
  (cd "$CACHE/debs" && apt-get download -qq intel-opencl-icd libigc1 libigdfcl1 libigdgmm12 \
      libopencl-clang14 libllvmspirvlib14 libllvm14 libclang-cpp14 2>/dev/null || \
   { $SUDO apt-get update -qq && apt-get download -qq intel-opencl-icd libigc1 libigdfcl1 \
      libigdgmm12 libopencl-clang14 libllvmspirvlib14 libllvm14 libclang-cpp14; })
  for f in "$CACHE"/debs/*.deb; do dpkg-deb -x "$f" "$CACHE/igc"; done
  rm -rf "$CACHE/debs"
  [ -x "$OCLOC" ] || OCLOC="$(find "$CACHE/igc" -name 'ocloc*' -type f -perm -u+x | head -1)"
fi
OCLOC_LIBS="$CACHE/igc/usr/lib/x86_64-linux-gnu:$CACHE/igc/usr/lib/llvm-14/lib"

# the 64-bit atom_cmpxchg NVIDIA's driver provides and libclc-16's nvptx library lacks
SHIM="$CACHE/atom_cmpxchg_nvptx.bc"
if [ ! -s "$SHIM" ]; then
  cat > "$CACHE/atom_cmpxchg_nvptx.cl" <<'EOF'
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
__attribute__((overloadable)) ulong atom_cmpxchg(volatile __global ulong *p, ulong cmp, ulong val)
{ return __sync_val_compare_and_swap(p, cmp, val); }
__attribute__((overloadable)) long atom_cmpxchg(volatile __global long *p, long cmp, long val)
{ return __sync_val_compare_and_swap(p, cmp, val); }
EOF
  clang-16 -x cl -cl-std=CL1.2 -Xclang -finclude-default-header \
    -Xclang -cl-ext=+cl_khr_fp64,+cl_khr_int64_base_atomics -nogpulib -O2 -c -emit-llvm \
    -target nvptx64-nvidia-nvcl "$CACHE/atom_cmpxchg_nvptx.cl" -o "$SHIM"
fi

# check each tool runs
"$PTXAS" --version >/dev/null || { echo "gpu-toolchain: $PTXAS does not run" >&2; exit 1; }
LD_LIBRARY_PATH="$OCLOC_LIBS" "$OCLOC" --help >/dev/null 2>&1 || \
  LD_LIBRARY_PATH="$OCLOC_LIBS" "$OCLOC" query OCL_DRIVER_VERSION >/dev/null 2>&1 || \
  { echo "gpu-toolchain: $OCLOC does not run" >&2; exit 1; }
cat > "$CACHE/env.sh" <<EOF
export CLTS_PTXAS="$PTXAS"
export CLTS_PTXAS_SHIM="$SHIM"
export CLTS_OCLOC="$OCLOC"
export CLTS_OCLOC_LIBS="$OCLOC_LIBS"
EOF
log "ready; source $CACHE/env.sh (the offline compiles also find this cache by themselves)"
[ "${1:-}" = "--print-env" ] && cat "$CACHE/env.sh"
exit 0
