#!/usr/bin/env bash
# The seed-scale table (bench/gpu_scale.py) on a GPU machine without network, for one or more
# source trees of clts in one session: installs the carried wheels that the machine's python
# lacks into a folder of their own, makes the vendor's OpenCL library visible to the ICD loader
# (even where no .icd file registers it), then runs this checkout's bench/gpu_scale.py once per
# tree with PYTHONPATH at that tree, and writes a side-by-side comparison.
#
# Usage: scripts/gpu-scale.sh [--tree DIR]... [--wheels DIR] [--timeout S] [-- gpu_scale args]
#   --tree DIR   a source tree whose clts/ is measured (repeat: A, B, ... in that order;
#                default: this checkout)
#   --wheels DIR wheels to install where their distribution is missing (default .whl; pip
#                --no-index --no-deps into $CLTS_SITE, default /tmp/site)
#   --timeout S  each tree's run is stopped after S seconds (default 280)
#   after --:    arguments for bench/gpu_scale.py (--device, --scale, --quick, --only, ...)
#   $OUT         where the results go (default ./gpu-scale-out): gpu-scale-<i>-<tree>.jsonl /
#                .md / .log per tree, compare.md, icd/
#   $PYTHON      the python (default python3); CLTS_OPENCL_LIB_DIRS: more library folders
set -uo pipefail
HERE="$PWD"
cd "$(dirname "$0")/.."
ROOT="$PWD"
TREES=(); WHEELS=.whl; TMO=280; ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tree) TREES+=("$(cd "$HERE" && cd "$2" && pwd)") || exit 2; shift 2;;
    --wheels) WHEELS="$(cd "$HERE" && cd "$2" && pwd)" || exit 2; shift 2;;
    --timeout) TMO="$2"; shift 2;;
    --) shift; ARGS=("$@"); break;;
    -h|--help) sed -n 2,19p "$0"; exit 0;;
    *) echo "gpu-scale: unknown argument $1 (see --help)" >&2; exit 2;;
  esac
done
[ ${#TREES[@]} -gt 0 ] || TREES=("$ROOT")
PY="${PYTHON:-python3}"
DEST="${OUT:-$ROOT/gpu-scale-out}"
mkdir -p "$DEST/icd"
DEST="$(cd "$DEST" && pwd)"
SITE="${CLTS_SITE:-/tmp/site}"

# 1. the wheels whose distributions this python lacks (the machine's own numpy etc. stay)
if [ -d "$WHEELS" ]; then
  mapfile -t missing < <(PYTHONPATH="$SITE" "$PY" - "$WHEELS" <<'EOF'
import importlib.metadata as md
import pathlib
import sys
for w in sorted(pathlib.Path(sys.argv[1]).glob("*.whl")):
    try:
        md.version(w.name.split("-")[0])
    except md.PackageNotFoundError:
        print(w)
EOF
  )
  if [ ${#missing[@]} -gt 0 ]; then
    echo "gpu-scale: installing ${missing[*]##*/} into $SITE"
    if ! "$PY" -m pip install -q --no-index --no-deps --target "$SITE" "${missing[@]}"; then
      # no pip: a wheel is a zip of what goes into site-packages
      echo "gpu-scale: pip install failed; unpacking the wheels into $SITE" >&2
      "$PY" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' \
        "$SITE" "${missing[@]}" || echo "gpu-scale: could not unpack the wheels" >&2
    fi
  fi
fi

# 2. the ICD loader's vendor folder: the system's .icd files plus GPU libraries none registers
if [ -z "${OCL_ICD_VENDORS:-}" ]; then
  for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && cp "$f" "$DEST/icd/"; done
  dirs="${CLTS_OPENCL_LIB_DIRS:-} /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib \
    /usr/lib/x86_64-linux-gnu/intel-opencl /opt/rocm/lib /opt/rocm/opencl/lib \
    /usr/local/nvidia/lib64 /usr/lib/wsl/lib"
  for pair in nvidia:libnvidia-opencl.so.1 amd:libamdocl64.so intel:libigdrcl.so; do
    vendor="${pair%%:*}"; lib="${pair#*:}"
    grep -qls "$lib" "$DEST"/icd/*.icd 2>/dev/null && continue
    for d in $dirs; do
      if [ -e "$d/$lib" ]; then
        echo "$d/$lib" > "$DEST/icd/clts-$vendor.icd"; echo "gpu-scale: found $vendor: $d/$lib"
        break
      fi
    done
  done
  # and the drivers clts itself finds (a pocl or Intel CPU runtime pip put in the prefix)
  clts_icd="$(OCL_ICD_VENDORS='' PYTHONPATH="${TREES[0]}:$SITE" "$PY" -m clts.runtime.icd \
    2>/dev/null | tail -n1)"
  if [ -n "$clts_icd" ] && [ -d "$clts_icd" ]; then
    for f in "$clts_icd"/*.icd; do
      [ -e "$f" ] || continue
      grep -qxF "$(head -n1 "$f")" "$DEST"/icd/*.icd 2>/dev/null \
        || cp "$f" "$DEST/icd/clts-more-$(basename "$f")"
    done
  fi
  export OCL_ICD_VENDORS="$DEST/icd"
fi
echo "gpu-scale: OCL_ICD_VENDORS=$OCL_ICD_VENDORS ($(ls "$OCL_ICD_VENDORS" 2>/dev/null | tr '\n' ' '))"

# 3. one run per tree, in order; then the comparison
export PYTHONUNBUFFERED=1
status=0; jsons=()
i=0
for tree in "${TREES[@]}"; do
  i=$((i + 1))
  name="gpu-scale-$i-$(basename "$tree")"
  if [ ! -d "$tree/clts" ]; then
    echo "gpu-scale: $tree has no clts/ package" >&2; status=1; continue
  fi
  echo "== $(date -u +%H:%M:%S) $name: clts from $tree"
  PYTHONPATH="$tree:$SITE${PYTHONPATH:+:$PYTHONPATH}" timeout -s INT -k 15 "$TMO" \
    "$PY" bench/gpu_scale.py --json "$DEST/$name.jsonl" --md "$DEST/$name.md" \
    ${ARGS[@]+"${ARGS[@]}"} > "$DEST/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || { echo "gpu-scale: $name exit $rc (see $DEST/$name.log)"; status=1; }
  if [ -s "$DEST/$name.md" ]; then cat "$DEST/$name.md"; else tail -20 "$DEST/$name.log"; fi
  [ -s "$DEST/$name.jsonl" ] && jsons+=("$DEST/$name.jsonl")
done
if [ ${#jsons[@]} -gt 1 ]; then
  "$PY" bench/gpu_scale.py --compare "${jsons[@]}" > "$DEST/compare.md" && cat "$DEST/compare.md"
fi
echo "gpu-scale: results in $DEST (status $status)"
exit $status
