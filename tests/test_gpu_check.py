"""scripts/gpu-check.sh without a GPU: its time budget (scripts/gpu_check.py: every step's
timeout from what is left, the H100 plan within the default budget), the reading of the test
step's log (failed tests, tests whose process crashed, serially or under pytest-xdist), and the
script itself on pocl with --dry-run: the steps' times in the report and raw/check.json, a
crashed xdist worker that stops neither the test step's summary nor the check, and a step
stopped at its timeout."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "bench" / "results" / "gpu-check-h100-2026-11-25" / "raw"
_spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
gc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gc)

DEFAULT_BUDGET = 9 * 60 + 30


def test_every_bench_script_has_an_estimate():
    names = {f"bench-{p.stem}" for p in ROOT.glob("bench/bench_*.py")} - set(gc.OFF_PLAN)
    names |= {"bench-generic_vs_tuned", "bench-host_overhead",
              "bench-gpu_scale"}
    assert names == {s for s in gc.PLAN if s.startswith("bench-")}
    assert gc.PLAN[:2] == ["tests", "tune"]


def test_the_h100_plan_fits_the_default_budget():
    rows = gc.simulate(DEFAULT_BUDGET)
    assert not [r["name"] for r in rows if r["stopped"]]
    assert rows[-1]["total"] <= DEFAULT_BUDGET - 10
    for r in rows:
        if r["name"] != "tune":              # room beyond the estimate for a slower run
            assert r["timeout"] >= 1.4 * r["need"], r
    tune = next(r for r in rows if r["name"] == "tune")
    assert tune["need"] - gc.TUNE_OVERHEAD >= 90          # clts-tune --budget of 1.5 min or more
    tests = rows[0]
    assert tests["timeout"] >= 170                           # 94 s on the H100 with 14 workers


def test_an_overrunning_step_is_stopped_and_the_tune_gives_way():
    fair = {r["name"]: r for r in gc.simulate(DEFAULT_BUDGET)}
    last = gc.PLAN[-1]
    for hung in ("tests", "bench-bench_mp"):
        rows = gc.simulate(DEFAULT_BUDGET, took=lambda s, hung=hung: 10_000 if s == hung else None)
        by = {r["name"]: r for r in rows}
        assert by[hung]["stopped"] and by[hung]["ran"] == by[hung]["timeout"]
        assert rows[-1]["total"] <= DEFAULT_BUDGET - 10
        # the others run to the end of their work; the last step takes what is left
        assert {r["name"] for r in rows if r["stopped"]} <= {hung, last}
        assert by[last]["ran"] >= 0.7 * by[last]["need"]
    # a slow test step: clts-tune's budget shrinks first, not the benches'
    assert by["tune"]["timeout"] == fair["tune"]["timeout"]       # (bench_mp hung: after it)
    rows = gc.simulate(DEFAULT_BUDGET, took=lambda s: 179 if s == "tests" else None)
    tune = next(r for r in rows if r["name"] == "tune")
    assert tune["need"] <= fair["tune"]["need"] - 30 and not any(r["stopped"] for r in rows)


def test_what_is_left_is_shared_and_a_spent_budget_skips():
    assert gc.allot("bench-bench_stl", 0, ["bench-bench_trend"]) == (0, 0.0)
    assert gc.allot("bench-bench_stl", -30) == (0, 0.0)
    timeout, share = gc.allot("bench-gpu_scale", 200)         # the last step: all of it
    assert timeout == 200 and share == 200
    timeout, _ = gc.allot("tests", 3, ["tune"])                # never past the budget
    assert timeout == 3
    # a short budget (a CPU try-out): everything ends within it, later steps may be skipped
    rows = gc.simulate(60, took=lambda s: 1000)
    assert rows[-1]["total"] <= 60 and rows[0]["timeout"] >= gc.MIN_STEP
    # what a fast step leaves goes to the ones after it
    fast = gc.simulate(DEFAULT_BUDGET, took=lambda s: 1)
    assert fast[-1]["timeout"] > 5 * gc.simulate(DEFAULT_BUDGET)[-1]["timeout"]


def test_tune_budget_leaves_room_for_the_report():
    assert gc.tune_budget(200) == 200 - gc.TUNE_OVERHEAD
    assert gc.tune_budget(20) == 10 and gc.tune_budget(0.5) == 1


XDIST = """bringing up nodes...
..[gw0] node down: Not properly terminated
F
replacing crashed worker gw0
=================================== FAILURES ===================================
[gw0] linux -- Python 3.11.7 /work/main/.venv/bin/python
worker 'gw0' crashed while running 'tests/test_threads.py::test_eight_threads_bit_identical_to_serial[nvidia-gpu]'
=========================== short test summary info ============================
FAILED tests/test_threads.py::test_eight_threads_bit_identical_to_serial[nvidia-gpu] - worker 'gw0' crashed while running 'tes...
FAILED tests/test_mp.py::test_ab_join_both[x]
1 failed, 2 passed in 4.86s
"""


def test_reads_a_crashed_xdist_worker():
    got = gc.read_tests_log(XDIST)
    tid = "tests/test_threads.py::test_eight_threads_bit_identical_to_serial[nvidia-gpu]"
    assert got["crashed"] == [tid]
    assert got["failed"] == [tid, "tests/test_mp.py::test_ab_join_both[x]"]
    assert got["summary"] == "1 failed, 2 passed in 5 s" and not got["stopped"]
    got = gc.read_tests_log(XDIST + "\nmaximum crashed workers reached: 56\n")
    assert got["stopped"] == "maximum crashed workers reached: 56 (xdist stopped the run)"


def test_reads_the_h100_logs():
    """The first H100 run: the serial run's segfault (a fault handler dump, no test id) and
    the xdist run's summary."""
    seg = gc.read_tests_log((H100 / "threads-segfault-sample.log").read_text())
    assert seg["crashed"] == ["tests/test_threads.py::test_eight_threads_bit_identical_to_serial"
                              " (fault handler dump; the process died)"]
    xd = gc.read_tests_log((H100 / "tests-xdist-summary.log").read_text())
    assert xd["summary"] == "28 failed, 739 passed, 109 skipped, 28 warnings in 94 s"
    assert len(xd["failed"]) == 28 and not xd["crashed"]


def _run_check(tmp_path, *args, env=None, timeout=300):
    out = tmp_path / "out"
    e = dict(os.environ, CLTS_GPU_CHECK_SKIP_SETUP="1", PYTHON=sys.executable,
             PYTHONPATH=str(ROOT), **(env or {}))
    t0 = time.monotonic()
    p = subprocess.run(["bash", str(ROOT / "scripts/gpu-check.sh"), "--dry-run", "--out",
                        str(out), *args], capture_output=True, text=True, env=e, cwd=ROOT,
                       timeout=timeout)
    return p, out, time.monotonic() - t0


def _pocl():
    from clts.runtime import usable
    if not [i for i in usable() if "portable computing" in i.platform.lower()]:
        pytest.skip("no pocl device")


def test_gpu_check_dry_run_on_pocl(tmp_path):
    _pocl()
    fake = tmp_path / "lib"
    fake.mkdir()
    (fake / "libnvidia-opencl.so.1").write_text("")      # found, registered in the run's icd dir
    p, out, _ = _run_check(tmp_path, env={"CLTS_OPENCL_LIB_DIRS": str(fake)})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert (out / "icd" / "clts-nvidia.icd").read_text().strip() == str(fake / "libnvidia-opencl.so.1")
    report = (out / "report.md").read_text()
    assert "DRY RUN" in report and "- ok tests" in report and "- ok tune" in report
    assert "of a 9:30 budget" in report and "s allowed; total " in report
    assert "FAILED" not in report and (out / "profile.yaml").is_file()
    raw = json.loads((out / "raw" / "check.json").read_text())
    steps = {s["name"]: s for s in raw["steps"]}
    assert {"libraries", "setup", "devices", "tests", "tune", "bench-bench_stl"} <= set(steps)
    assert all(s["status"] == "ok" and s["seconds"] >= 0 for s in steps.values())
    assert steps["tests"]["timeout_s"] > 100 and raw["budget_s"] == DEFAULT_BUDGET
    assert raw["tests"]["summary"].endswith(" s") and "passed" in raw["tests"]["summary"]
    log = (out / "steps.log").read_text()
    assert "ok tests in " in log and "total 0:" in log     # the running total


def test_a_crashed_xdist_worker_stops_neither_the_tests_nor_the_check(tmp_path):
    _pocl()
    pytest.importorskip("xdist")
    t = tmp_path / "crash"
    t.mkdir()
    (t / "test_crash.py").write_text(
        "import os, signal\n\ndef test_before():\n    pass\n\n"
        "def test_segv():\n    os.kill(os.getpid(), signal.SIGSEGV)\n\n"
        "def test_after():\n    pass\n")
    p, out, _ = _run_check(tmp_path, env={"CLTS_GPU_CHECK_TESTS": str(t / "test_crash.py"),
                                          "CLTS_GPU_CHECK_WORKERS": "2",
                                          "CLTS_GPU_CHECK_BENCHES": "bench_trend"})
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    report = (out / "report.md").read_text()
    assert "- failed tests: exit 1" in report and "- ok tune" in report
    assert "- ok bench-bench_trend" in report and "bench-bench_mp" not in report
    assert "pytest: 1 failed, 2 passed" in report
    crashed = report.split("Crashed")[1].split("Failed")[0]
    assert "test_crash.py::test_segv" in crashed and "test_before" not in crashed
    raw = json.loads((out / "raw" / "check.json").read_text())
    assert [c.split("::")[-1] for c in raw["tests"]["crashed"]] == ["test_segv"]


def test_a_step_past_its_timeout_is_stopped_within_the_budget(tmp_path):
    _pocl()
    t = tmp_path / "slow"
    t.mkdir()
    (t / "test_slow.py").write_text("import time\n\ndef test_sleeps():\n    time.sleep(120)\n")
    p, out, took = _run_check(tmp_path, "--budget", "30s",
                              env={"CLTS_GPU_CHECK_TESTS": str(t / "test_slow.py"),
                                   "CLTS_GPU_CHECK_BENCHES": "none"})
    assert p.returncode == 1, p.stdout[-3000:] + p.stderr[-3000:]
    assert took < 30 + 20                     # the budget, and the kill grace of one step
    raw = json.loads((out / "raw" / "check.json").read_text())
    tests = next(s for s in raw["steps"] if s["name"] == "tests")
    assert tests["status"] == "timed out" and tests["seconds"] <= tests["timeout_s"] + 16
    report = (out / "report.md").read_text()
    assert "timed out tests: stopped at its timeout" in report
    assert "tune" in {s["name"] for s in raw["steps"]}        # the check went on
    assert "bench-" not in report


def test_a_bad_budget_is_refused(tmp_path):
    p, _, _ = _run_check(tmp_path, "--budget", "ten minutes")
    assert p.returncode == 2 and "--budget ten minutes" in p.stderr
