#!/usr/bin/env bash
# One command on a machine with a GPU (NVIDIA, AMD or Intel, with its driver): find the vendor's
# OpenCL library even where no .icd file registers it, set up the venv, run the test suite on
# that device, measure a profile (clts-tune --quick), run every bench/ script with --quick
# against the anchors that run there, bench/gpu_scale.py first (the seed-scale table: wall,
# kernel time and the PCIe bound of each call side by side, the link's pinned and pageable
# bandwidth, CuPy's cuSPARSE batched tridiagonal solver, pyhpc-benchmarks' JAX TKE), and write the measured profile, a markdown report and the raw JSON
# into one folder, within one time budget (default 9m30s: under 10 minutes on an H100).
# Where the time goes and how to contribute the result: docs/devices.md ("Measuring a GPU").
#
# Usage: scripts/gpu-check.sh [--out DIR] [--device D] [--budget 9m30s] [--dry-run]
#   --budget   the whole check's time, set-up included (90s, 5m, 9m30s, 1h); each step gets a
#              timeout from what is left (scripts/gpu_check.py: shares by the steps' H100
#              estimates); a step that overruns is stopped and the check goes on
#   --device   any OpenCL device clts knows (default gpu; pocl tries the check on a CPU)
#   --dry-run  every step that needs no GPU, on whatever OpenCL device there is (e.g. pocl):
#              library discovery, venv, a tiny test selection, a tune listing, bench --help,
#              the report; the tests run it on pocl (tests/test_gpu_check.py)
#   CLTS_GPU_CHECK_SKIP_SETUP=1  use the current python (no venv set-up; tests); the check
#                                falls back to it by itself where the set-up fails (no network)
#                                and it already imports pyopencl, mako, yaml and numpy
#   CLTS_GPU_CHECK_WORKERS       pytest-xdist workers of the test step (default: the cores;
#                                used where xdist imports; 1: one serial process)
#   CLTS_GPU_CHECK_TESTS         what the test step runs (default: tests; dry run:
#                                tests/test_occupancy.py)
#   CLTS_GPU_CHECK_BENCHES       the bench/ scripts to run, comma-separated (bench_mp,gpu_scale;
#                                default: all; none: none)
#   CLTS_OPENCL_LIB_DIRS         extra folders to search for vendor OpenCL libraries
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=""; DEVICE="gpu"; BUDGET="9m30s"; DRY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift 2;;
    --device) DEVICE="$2"; shift 2;;
    --budget) BUDGET="$2"; shift 2;;
    --dry-run) DRY=1; shift;;
    -h|--help) sed -n 2,28p "$0"; exit 0;;
    *) echo "gpu-check: unknown argument $1" >&2; exit 2;;
  esac
done
if [[ "$BUDGET" =~ ^([0-9]+h)?([0-9]+m)?([0-9]+s?)?$ ]] && [ -n "$BUDGET" ]; then
  h=${BASH_REMATCH[1]%h}; m=${BASH_REMATCH[2]%m}; s=${BASH_REMATCH[3]%s}
  BUDGET_S=$(( ${h:-0} * 3600 + ${m:-0} * 60 + ${s:-0} ))
fi
if [ "${BUDGET_S:-0}" -le 0 ]; then
  echo "gpu-check: --budget $BUDGET: give a time such as 90s, 5m, 9m30s or 1h" >&2; exit 2
fi
OUT="${OUT:-gpu-check-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT/raw" "$OUT/icd"
OUT="$(cd "$OUT" && pwd)"
CALLER_ICD="${OCL_ICD_VENDORS:-}"     # the caller's drivers stay visible (step 2)
LOG="$OUT/steps.log"
: > "$LOG"; : > "$OUT/raw/steps.tsv"; : > "$OUT/raw/status.txt"
export PYTHONUNBUFFERED=1    # a step stopped at its timeout keeps what it printed
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
elapsed() { mmss "$SECONDS"; }
step() { echo "== $(date -u +%H:%M:%S) [$(elapsed) of $(mmss "$BUDGET_S")] $*" | tee -a "$LOG"; }
status=0
T0=$SECONDS
record() {  # record NAME STATUS RC TIMEOUT [NOTE]: one line of raw/steps.tsv, from T0 to now
  local secs=$((SECONDS - T0))
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$secs" "${4:--}" "${5:-}" >> "$OUT/raw/steps.tsv"
  echo "   $2 $1 in ${secs} s$([ "${4:--}" != - ] && echo " (timeout $4 s)"); total $(elapsed) of $(mmss "$BUDGET_S")" \
    | tee -a "$LOG"
  T0=$SECONDS
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
record libraries ok 0

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
    SETUP_NOTE="set-up failed (no network?): fell back to $(command -v "$PY")"
  else
    echo "setup failed (raw/setup.log) and $PY lacks pyopencl, mako, yaml or numpy; install them or run with CLTS_GPU_CHECK_SKIP_SETUP=1 PYTHON=..." \
      | tee -a "$LOG"
    record setup failed 1; exit 1
  fi
else
  PY=.venv/bin/python
  "$PY" -c "import xdist" >/dev/null 2>&1 || "$PY" -m pip install -q pytest-xdist >> "$OUT/raw/setup.log" 2>&1 || true
  if [ "$DRY" -eq 0 ]; then   # the GPU anchors, where they install
    "$PY" -m pip install -q stumpy >> "$OUT/raw/setup.log" 2>&1 || true
    if [ -e "$OUT/icd/clts-nvidia.icd" ] || ls /etc/OpenCL/vendors/*nvidia* >/dev/null 2>&1; then
      "$PY" -m pip install -q cupy-cuda12x >> "$OUT/raw/setup.log" 2>&1 || true
    fi
  fi
fi
record setup ok 0 - "${SETUP_NOTE:-}$([ -n "${SETUP_NOTE:-}" ] && echo ", ")$("$PY" -V 2>&1)"
# the drivers the caller's OCL_ICD_VENDORS listed and those clts itself finds (a pocl or Intel
# CPU runtime installed with pip into the python's prefix): each library once
add_icds() {
  local f lib
  for f in "$1"/*.icd; do
    [ -e "$f" ] || continue
    lib="$(head -n1 "$f")"
    grep -qxF "$lib" "$OUT"/icd/*.icd 2>/dev/null || cp "$f" "$OUT/icd/clts-more-$(basename "$f")"
  done
}
[ -n "$CALLER_ICD" ] && [ -d "$CALLER_ICD" ] && [ "$CALLER_ICD" != "$OUT/icd" ] && add_icds "$CALLER_ICD"
CLTS_ICD="$(OCL_ICD_VENDORS='' "$PY" -m clts.runtime.icd 2>/dev/null | tail -n1)"
[ -n "$CLTS_ICD" ] && [ -d "$CLTS_ICD" ] && add_icds "$CLTS_ICD"
"$PY" -c "import sys; from clts.cli import main; sys.exit(main(['devices']))" > "$OUT/devices.txt" 2>&1
cat "$OUT/devices.txt" >> "$LOG"
if [ "$DRY" -eq 1 ]; then
  DEVICE="${CLTS_GPU_CHECK_DEVICE:-pocl}"
fi
SLUG=$("$PY" -c "import sys, clts.runtime as r; print(r.get_device(sys.argv[1]).slug)" "$DEVICE" 2>>"$LOG") || {
  echo "gpu-check: no device matches '$DEVICE' (see $OUT/devices.txt)" | tee -a "$LOG"; exit 1; }
step "device: $SLUG"
record devices ok 0
export CLTS_TEST_DEVICES="$DEVICE"

# The steps that share the budget, in order (tests, tune, one per bench/ script)
BENCHES=()
# the seed-scale table with the GPU anchors first (the last steps take what the others
# overran), then bench/ by name (bench/gpu_anchors.py, stumpy.gpu_stump's anchor, runs alone)
for b in bench/gpu_scale.py $(LC_ALL=C ls bench/bench_*.py) bench/generic_vs_tuned.py bench/host_overhead.py; do
  [ -e "$b" ] || continue
  if [ -z "${CLTS_GPU_CHECK_BENCHES:-}" ]; then   # off the default plan (gpu_check.OFF_PLAN)
    case "$b" in bench/bench_bfastts.py|bench/bench_bfast01.py|bench/bench_bfast_decompose.py|\
      bench/bench_mp_batched.py|bench/bench_mp_chains.py|bench/bench_stimp.py) continue ;; esac
  fi
  if [ -n "${CLTS_GPU_CHECK_BENCHES:-}" ] && [[ ",$CLTS_GPU_CHECK_BENCHES," != *",$(basename "$b" .py),"* ]]; then
    continue
  fi
  BENCHES+=("$b")
done
PLAN=(tests tune)
for b in ${BENCHES[@]+"${BENCHES[@]}"}; do PLAN+=("bench-$(basename "$b" .py)"); done
ALLOT=(0 0)
DFL=(); env --default-signal=INT true 2>/dev/null && DFL=(env --default-signal=INT)
allot() {  # allot NAME: ALLOT=(timeout tune-budget) from the budget left and the steps after NAME
  local i pending=() found=0 remaining
  for i in "${PLAN[@]}"; do
    [ "$found" -eq 1 ] && pending+=("$i")
    [ "$i" = "$1" ] && found=1
  done
  remaining=$((BUDGET_S - SECONDS - 10))     # 10 s kept for the report
  read -r -a ALLOT < <("$PY" scripts/gpu_check.py allot "$1" "$remaining" ${pending[@]+"${pending[@]}"}) \
    || ALLOT=(0 0)
}
run() {  # run NAME TIMEOUT cmd...: log output, time it, stop it at TIMEOUT, never stop the check
  local name="$1" tmo="$2" rc; shift 2
  T0=$SECONDS
  if [ "$tmo" -le 0 ]; then
    step "$name: skipped (budget spent)"; status=1
    echo "FAILED $name: skipped (budget spent)" >> "$OUT/raw/status.txt"
    record "$name" skipped 0 0 "budget spent"; return
  fi
  step "$name (timeout ${tmo} s)"
  # SIGINT first (pytest prints its summary, python flushes; env makes sure a check started
  # in the background does not pass SIGINT on ignored), SIGKILL 15 s later
  timeout -s INT -k 15 "$tmo" ${DFL[@]+"${DFL[@]}"} "$@" >> "$OUT/raw/$name.log" 2>&1; rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "ok $name" >> "$OUT/raw/status.txt"; record "$name" ok 0 "$tmo"; return
  fi
  status=1
  local what="FAILED $name (exit $rc)" st=failed note=""
  if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ $((SECONDS - T0)) -ge "$tmo" ]; }; then
    what="FAILED $name: timed out after $tmo s"; st="timed out"; note="stopped at its timeout"
  elif [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then   # killed by a signal: say which
    note="crashed (signal $((rc - 128))$([ "$rc" -eq 139 ] && echo ", a segmentation fault")$([ "$rc" -eq 137 ] && echo ", killed: out of memory?"))"
    what="FAILED $name: $note"; st=crashed
  else
    note="exit $rc"
  fi
  echo "$what" | tee -a "$LOG" >> "$OUT/raw/status.txt"
  record "$name" "$st" "$rc" "$tmo" "$note"
}

# 3. the test suite on that device: in parallel where pytest-xdist imports (an H100's serial
# run took over 3 minutes for 16 %; with 14 workers the whole suite took 94 s). A crash (a
# signal) is recorded as such and the check goes on; under xdist it takes down one worker,
# which xdist replaces, and the report names the test it was running.
if [ "$DRY" -eq 1 ]; then   # a tiny selection: serial unless workers are asked for
  workers="${CLTS_GPU_CHECK_WORKERS:-1}"
  sel="${CLTS_GPU_CHECK_TESTS:-tests/test_occupancy.py}"
else
  workers="${CLTS_GPU_CHECK_WORKERS:-$(nproc 2>/dev/null || echo 1)}"
  sel="${CLTS_GPU_CHECK_TESTS:-tests}"
fi
par=()
if [ "$workers" -gt 1 ] && "$PY" -c "import xdist" >/dev/null 2>&1; then
  par=(-n "$workers"); echo "tests: pytest-xdist, $workers workers" | tee -a "$LOG"
else
  echo "tests: one pytest process (pytest-xdist not importable or 1 worker)" | tee -a "$LOG"
fi
allot tests
# shellcheck disable=SC2086  # $sel: a list of paths
run tests "${ALLOT[0]}" "$PY" -m pytest -q -p no:cacheprovider ${par[@]+"${par[@]}"} -m "not slow" $sel

# 4. the profile, measured (its own --budget: the share less the report's anchors)
allot tune
if [ "$DRY" -eq 1 ]; then
  run tune "${ALLOT[0]}" "$PY" -m clts.tune.cli --dry-run --quick --device "$DEVICE"
  printf 'schema: 1\n# dry run: nothing measured\n' > "$OUT/profile.yaml"
else
  run tune "${ALLOT[0]}" "$PY" -m clts.tune.cli --quick --budget "${ALLOT[1]}s" --device "$DEVICE" \
    --no-warmup -o "$OUT/profile.yaml" --report "$OUT/tune-report.md"
fi

# 5. every bench/ script with --quick, against its anchors, each with its share of the budget
for b in ${BENCHES[@]+"${BENCHES[@]}"}; do
  name="bench-$(basename "$b" .py)"
  allot "$name"
  if [ "$DRY" -eq 1 ]; then
    run "$name" "${ALLOT[0]}" "$PY" "$b" --help
  elif [ "$b" = bench/gpu_scale.py ]; then    # the seed-scale table: wall, kernels, PCIe bound
    run "$name" "${ALLOT[0]}" "$PY" "$b" --quick --device "$SLUG" --budget $((ALLOT[0] > 24 ? ALLOT[0] - 12 : ALLOT[0] / 2)) \
      --json "$OUT/raw/gpu_scale.jsonl" --md "$OUT/gpu-scale.md"
  else
    run "$name" "${ALLOT[0]}" "$PY" "$b" --quick --device "$SLUG"
  fi
done

# 6. the report: device, steps with their times, tests that failed or crashed, the profile;
# raw logs and JSON beside it
step "report"
"$PY" scripts/gpu_check.py report "$OUT" "$DEVICE" "$DRY" "$BUDGET_S" "$SECONDS" >> "$LOG" 2>&1 || status=1
step "done: $OUT (status $status, $(elapsed) of $(mmss "$BUDGET_S"))"
exit $status
