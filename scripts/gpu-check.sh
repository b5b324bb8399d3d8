#!/usr/bin/env bash
# One command on a machine with a GPU (NVIDIA, AMD or Intel, with its driver): find the vendor's
# OpenCL library even where no .icd file registers it, set up the venv, run the test suite on
# that device, measure a profile (clts-tune --quick), run every bench/ script against the
# anchors that run there (CuPy's cuSPARSE batched tridiagonal solver, stumpy.gpu_stump, ...), and
# write the measured profile, a markdown report and the raw JSON into one folder. Designed for
# < 10 minutes on an H100. How to contribute the result: docs/devices.md ("Measuring a GPU").
#
# Usage: scripts/gpu-check.sh [--out DIR] [--device D] [--budget 4m] [--dry-run]
#   --dry-run  every step that needs no GPU, on whatever OpenCL device there is (e.g. pocl):
#              library discovery, venv, a tiny test selection, a tune listing, bench --help,
#              the report; the tests run it on pocl (tests/test_gpu_check.py)
#   CLTS_GPU_CHECK_SKIP_SETUP=1  use the current python (no venv set-up; tests); the check
#                                falls back to it by itself where the set-up fails (no network)
#                                and it already imports pyopencl, mako, yaml and numpy
#   CLTS_GPU_CHECK_WORKERS       pytest-xdist workers of the test step (default: the cores;
#                                used where xdist imports; 1: one serial process)
#   CLTS_OPENCL_LIB_DIRS         extra folders to search for vendor OpenCL libraries
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=""; DEVICE="gpu"; BUDGET="4m"; DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2;;
    --device) DEVICE="$2"; shift 2;;
    --budget) BUDGET="$2"; shift 2;;
    --dry-run) DRY=1; shift;;
    -h|--help) sed -n 2,20p "$0"; exit 0;;
    *) echo "gpu-check: unknown argument $1" >&2; exit 2;;
  esac
done
OUT="${OUT:-gpu-check-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT/raw" "$OUT/icd"
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/steps.log"
: > "$LOG"
step() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }
status=0
run() {  # run "name" cmd...: log output, remember failures, never stop the check
  local name="$1" rc; shift
  step "$name"
  "$@" >> "$OUT/raw/$name.log" 2>&1; rc=$?
  if [ "$rc" -eq 0 ]; then echo "ok $name" >> "$OUT/raw/status.txt"; return; fi
  status=1
  if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then   # killed by a signal: say which
    echo "FAILED $name: crashed (signal $((rc - 128))$([ "$rc" -eq 139 ] && echo ", a segmentation fault"))" \
      | tee -a "$LOG" >> "$OUT/raw/status.txt"
  elif [ "$rc" -eq 124 ]; then
    echo "FAILED $name: timed out" | tee -a "$LOG" >> "$OUT/raw/status.txt"
  else
    echo "FAILED $name (exit $rc)" | tee -a "$LOG" >> "$OUT/raw/status.txt"
  fi
}

# 1. the vendor's OpenCL library, registered or not
step "vendor OpenCL libraries"
dirs="${CLTS_OPENCL_LIB_DIRS:-} /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib \
  /usr/lib/x86_64-linux-gnu/intel-opencl /opt/rocm/lib /opt/rocm/opencl/lib /usr/local/nvidia/lib64 \
  /usr/lib/wsl/lib"
found=0
for pair in nvidia:libnvidia-opencl.so.1 amd:libamdocl64.so intel:libigdrcl.so; do
  vendor="${pair%%:*}"; lib="${pair#*:}"
  for d in $dirs; do
    if [ -e "$d/$lib" ]; then
      echo "$d/$lib" > "$OUT/icd/clts-$vendor.icd"; echo "found $vendor: $d/$lib" | tee -a "$LOG"
      found=1; break
    fi
  done
done
for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && cp "$f" "$OUT/icd/"; done
[ "$found" -eq 1 ] || echo "no GPU vendor OpenCL library found (searched: $dirs)" | tee -a "$LOG"
export OCL_ICD_VENDORS="$OUT/icd"

# 2. the venv
runtime_ok() {  # the run-time dependencies import in python $1
  "$1" -c "import pyopencl, mako, yaml, numpy" >/dev/null 2>&1
}
if [ "${CLTS_GPU_CHECK_SKIP_SETUP:-0}" = 1 ]; then
  PY="${PYTHON:-python3}"
elif step "venv (scripts/setup.sh test)"; ! scripts/setup.sh test >> "$OUT/raw/setup.log" 2>&1; then
  # no network (a lent machine): the current python, where it already has what clts needs
  PY="${PYTHON:-python3}"
  if runtime_ok "$PY"; then
    echo "setup failed (raw/setup.log; no network?); using $(command -v "$PY") ($("$PY" -V 2>&1)), which imports pyopencl, mako, yaml and numpy" \
      | tee -a "$LOG"
    echo "setup failed (no venv): fell back to $PY" >> "$OUT/raw/status.txt"
  else
    echo "setup failed (raw/setup.log) and $PY lacks pyopencl, mako, yaml or numpy; install them or run with CLTS_GPU_CHECK_SKIP_SETUP=1 PYTHON=..." \
      | tee -a "$LOG"
    exit 1
  fi
else
  PY=.venv/bin/python
  if [ "$DRY" -eq 0 ]; then   # the GPU anchors, where they install
    "$PY" -m pip install -q stumpy >> "$OUT/raw/setup.log" 2>&1 || true
    if [ -e "$OUT/icd/clts-nvidia.icd" ] || ls /etc/OpenCL/vendors/*nvidia* >/dev/null 2>&1; then
      "$PY" -m pip install -q cupy-cuda12x >> "$OUT/raw/setup.log" 2>&1 || true
    fi
  fi
fi
"$PY" -c "import sys; from clts.cli import main; sys.exit(main(['devices']))" > "$OUT/devices.txt" 2>&1
cat "$OUT/devices.txt" >> "$LOG"
if [ "$DRY" -eq 1 ]; then
  DEVICE="${CLTS_GPU_CHECK_DEVICE:-pocl}"
fi
SLUG=$("$PY" -c "import sys, clts.runtime as r; print(r.get_device(sys.argv[1]).slug)" "$DEVICE" 2>>"$LOG") || {
  echo "gpu-check: no device matches '$DEVICE' (see $OUT/devices.txt)" | tee -a "$LOG"; exit 1; }
step "device: $SLUG"
export CLTS_TEST_DEVICES="$DEVICE"

# 3. the test suite on that device: in parallel where pytest-xdist imports (an H100's serial
# run took over 3 minutes for 16 %; with 14 workers the whole suite took 94 s). A crash (a
# signal) is recorded as such and the check goes on; under xdist it takes down one worker only.
workers="${CLTS_GPU_CHECK_WORKERS:-$(nproc 2>/dev/null || echo 1)}"
par=()
if [ "$workers" -gt 1 ] && "$PY" -c "import xdist" >/dev/null 2>&1; then
  par=(-n "$workers"); echo "tests: pytest-xdist, $workers workers" | tee -a "$LOG"
else
  echo "tests: one pytest process (pytest-xdist not importable or 1 worker)" | tee -a "$LOG"
fi
if [ "$DRY" -eq 1 ]; then   # a tiny selection: serial (worker start-up would dominate)
  run tests "$PY" -m pytest -q -p no:cacheprovider -x tests/test_occupancy.py
else
  run tests "$PY" -m pytest -q -p no:cacheprovider ${par[@]+"${par[@]}"} -m "not slow" tests
fi

# 4. the profile, measured
if [ "$DRY" -eq 1 ]; then
  run tune "$PY" -m clts.tune.cli --dry-run --quick --device "$DEVICE"
  printf 'schema: 1\n# dry run: nothing measured\n' > "$OUT/profile.yaml"
else
  run tune "$PY" -m clts.tune.cli --quick --budget "$BUDGET" --device "$DEVICE" \
    -o "$OUT/profile.yaml" --report "$OUT/tune-report.md"
fi

# 5. every bench/ script, with its anchors
for b in bench/bench_*.py bench/generic_vs_tuned.py bench/host_overhead.py bench/gpu_anchors.py; do
  [ -e "$b" ] || continue
  name=$(basename "$b" .py)
  if [ "$DRY" -eq 1 ]; then
    run "bench-$name" "$PY" "$b" --help
  else
    case "$name" in
      gpu_anchors)
        run "bench-$name" timeout 300 "$PY" "$b" --quick --device "$DEVICE" --json "$OUT/raw/gpu_anchors.json";;
      bench_stl|bench_tridiag|bench_bfast|bench_mp|bench_ocean)
        run "bench-$name" timeout 300 "$PY" "$b" --quick --device "$DEVICE";;
      *) run "bench-$name" timeout 300 "$PY" "$b" --device "$DEVICE";;
    esac
  fi
done

# 6. the report: device, profile, figures, what failed; raw logs and JSON beside it
step "report"
"$PY" - "$OUT" "$DEVICE" "$DRY" <<'EOF' >> "$LOG" 2>&1 || status=1
import json, sys, platform, datetime
from pathlib import Path
out, spec, dry = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
from clts.runtime import get_device
dev = get_device(spec)
info = {f: getattr(dev.info, f) for f in ("name", "vendor", "platform", "driver", "version",
                                          "compute_units", "local_mem", "max_work_group",
                                          "global_mem", "simd_width")}
status = (out / "raw" / "status.txt").read_text().splitlines() if (out / "raw" / "status.txt").exists() else []
from clts.runtime import occupancy
raw = {"device": info, "slug": dev.slug, "target": occupancy.target_of(dev),
       "host": platform.node(), "date": datetime.datetime.utcnow().isoformat() + "Z",
       "dry_run": dry, "steps": status}
(out / "raw" / "check.json").write_text(json.dumps(raw, indent=2, default=str))
lines = [f"# GPU check: {info['name']}", "",
         f"{'DRY RUN (no GPU steps measured) - ' if dry else ''}device `{dev.slug}`, driver "
         f"{info['driver']}, {info['compute_units']} compute units, occupancy target "
         f"{raw['target']}, {raw['date']}", "", "## Steps", ""]
lines += [f"- {s}" for s in status]
for name in ("tune-report.md",):
    p = out / name
    if p.exists():
        lines += ["", f"## {name}", "", p.read_text()]
lines += ["", "Raw logs: `raw/*.log`; machine-readable summary: `raw/check.json`; measured "
          "profile: `profile.yaml` (commit it under clts/devices/ with `provenance: measured`, "
          "docs/devices.md says how)."]
(out / "report.md").write_text("\n".join(lines) + "\n")
print(f"wrote {out / 'report.md'}")
EOF
step "done: $OUT (status $status)"
exit $status
