#!/usr/bin/env bash
# Set up and run the test suite: every test on every working OpenCL device (pocl and Intel's CPU
# runtime here), the tiny kernel cases on Oclgrind with race / uninitialised-read /
# out-of-bounds checks, the input-handling tests again with the lowest numpy clts supports
# (1.26, in .venv-numpy1), then the GPU resource gate (scripts/gpu-gate.sh: NVIDIA's, AMD's and
# Intel's compilers on what every GPU profile builds). Extra arguments go to every pytest run but
# the gate's. First a pyflakes-class ruff check (configured in pyproject.toml), so dead imports
# and variables stay gone.
#
# The three test runs go in parallel (numpy 1.26's environment is set up inside its run, while
# the others start), each writing its own log, printed whole when all are
# done; every exit code counts. The main run spreads the test files over CLTS_TEST_WORKERS
# pytest-xdist workers (default: cores + 1), which take the next file as they finish one, so
# the cores stay busy to the end (one process per driver, as before, left one core idle for
# minutes while the longest ran on). The table gives each run's wall time and its CPU seconds
# (user + system): the runs share the cores, so the CPU seconds are what a change moves.
# CLTS_TEST_SERIAL=1 runs them one after another, in one process each, instead. At the end, a
# table of each stage's wall time (the runs overlap: their own times, then the stage's) and the
# total.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
times=()       # "stage seconds" lines, printed at the end
stage_start=$start
stage_done() {   # stage_done NAME: the wall time since the previous stage ended
  local now
  now=$(date +%s)
  times+=("$1 $((now - stage_start))")
  stage_start=$now
}
bash scripts/setup.sh test
. .venv/bin/activate
clts devices
stage_done "set-up (venvs, drivers)"
status=0
echo "== ruff check (pyflakes rules) =="
ruff check --no-cache clts tests bench scripts || status=$?
stage_done "ruff"
numpy1_env() {   # the lowest supported numpy (1.26) in .venv-numpy1: set up while tests run
  if [ ! -x .venv-numpy1/bin/python ]; then
    python3 -m venv .venv-numpy1
  fi
  .venv-numpy1/bin/python -m pip install -q --disable-pip-version-check "numpy==1.26.*" \
    -e ".[test]" 2>&1 | grep -v -E "^WARNING: (Location|The index)" || true
}
logs=$(mktemp -d)
pids=()
names=()
run() {   # run NAME PYTHON ENV... -- PYTEST-ARGS...: in the background, output to $logs/NAME.log
  # (with $before set: that command first, in the same background job, its output in the log)
  local name=$1 py=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ "${CLTS_TEST_SERIAL:-}" = 1 ]; then
    local t0 rc=0
    t0=$(date +%s)
    ${before:+$before}
    env "${envs[@]}" "$py" -m pytest -q -p no:cacheprovider "$@" 2>&1 | tee "$logs/$name.log" \
      || rc=${PIPESTATUS[0]}
    times+=("  pytest $name $(($(date +%s) - t0))")
    return $rc
  fi
  (
    t0=$(date +%s)
    rc=0
    TIMEFORMAT='%0U+%0S'     # the process's CPU seconds (user + system), beside its wall time
    ${before:+$before} >"$logs/$name.log" 2>&1
    { time env "${envs[@]}" "$py" -m pytest -q -p no:cacheprovider "$@" >>"$logs/$name.log" \
        2>&1; } 2>"$logs/$name.cpu" || rc=$?
    echo $(($(date +%s) - t0)) >"$logs/$name.seconds"
    exit $rc
  ) &
  pids+=($!)
  names+=("$name")
}
workers=()
if [ "${CLTS_TEST_SERIAL:-}" != 1 ]; then
  workers=(-n "${CLTS_TEST_WORKERS:-$(($(nproc) + 1))}" --dist loadfile)
fi
run "every-device" python -- "${workers[@]}" --durations=15 "$@" tests || status=$?
run oclgrind python -- --oclgrind "$@" tests || status=$?
# the input handling, BFAST and properties with numpy 1.26, on pocl
before=numpy1_env run numpy-1.26 .venv-numpy1/bin/python CLTS_TEST_DEVICES=pocl -- "$@" \
  tests/test_hostile_inputs.py tests/test_properties.py tests/test_bfast.py \
  -k "not fixture and not reference_random" || status=$?
for i in "${!pids[@]}"; do
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "== ${names[$i]} (exit $rc) =="
  cat "$logs/${names[$i]}.log"
  [ $rc = 0 ] || status=$rc
  cpu=$(( $(cat "$logs/${names[$i]}.cpu" 2>/dev/null || echo 0) ))
  times+=("  pytest ${names[$i]} (cpu ${cpu} s) $(cat "$logs/${names[$i]}.seconds" 2>/dev/null \
    || echo '?')")
done
rm -rf "$logs"
deactivate
stage_done "the test runs (together)"
echo "== GPU resource gate: the vendors' back ends on what every GPU profile builds =="
bash scripts/gpu-gate.sh || status=$?
stage_done "GPU resource gate"
echo "== stage times (wall clock, seconds; $(nproc) cores) =="
for line in "${times[@]}"; do
  printf '%-44s %6s\n' "${line% *}" "${line##* }"
done
printf '%-44s %6s\n' "total" "$(($(date +%s) - start))"
exit $status
