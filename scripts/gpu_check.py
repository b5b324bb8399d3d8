"""The time budget and the report of ``scripts/gpu-check.sh``: how long each step may take, what
each took, what failed or crashed.

    python scripts/gpu_check.py allot STEP REMAINING [PENDING ...]   # TIMEOUT TUNE_BUDGET
    python scripts/gpu_check.py report OUT DEVICE DRY BUDGET WALL    # report.md, raw/check.json
    python scripts/gpu_check.py plan BUDGET_S    # the steps' timeouts if each takes its estimate

Budget. The check has one total budget (``--budget``, counted from the script's start, set-up
included). When a step starts, the seconds left (less 10 s kept for the report) are shared out
over it and the steps still to run in proportion to their estimated time on an H100
(``ESTIMATES``, from the first H100 run's logs; docs/devices.md, "Measuring a GPU"). A step's
timeout is ``SLACK`` times its share, but never so long that the steps after it keep less than
``KEEP`` of theirs, and never past the budget: whatever a step leaves unused goes to the steps
after it, and a step that overruns is stopped (``timed out`` in the report) without stopping
the check. ``clts-tune`` gets its share less ``TUNE_OVERHEAD`` as its own ``--budget`` (its
report's anchors and its last measurement run past its budget); where the benches after it
would get less than their estimates (a slow test step), its share gives way first, down to
``ELASTIC_FLOOR`` of it.

Report. ``raw/steps.tsv`` (one line a step, written by the script: name, status, exit code,
seconds, timeout) and ``raw/tests.log`` become ``raw/check.json`` and ``report.md``: each step
with its wall time and timeout and the running total, the test summary, the failed tests, and
the tests that crashed their process (a pytest-xdist worker that died, or the serial run's
fault handler dump).
"""
from __future__ import annotations

import datetime
import json
import platform
import re
import sys
from pathlib import Path

#: estimated seconds on an H100 (16 host cores) of each step with ``--quick``: the first
#: run's logs (bench/results/gpu-check-h100-2026-11-25/raw) less what ``--quick`` leaves out;
#: docs/devices.md tabulates them with their sources
ESTIMATES = {
    "tests": 120, "tune": 135, "bench-gpu_scale": 30,
    "bench-bench_bfast": 14, "bench-bench_bfast_breaks": 17, "bench-bench_mp": 24,
    "bench-bench_mp_search": 21, "bench-bench_mp_topk": 17, "bench-bench_mstl": 20,
    "bench-bench_mstump": 35, "bench-bench_ocean": 18, "bench-bench_stl": 18,
    "bench-bench_trend": 16, "bench-bench_tridiag": 21, "bench-generic_vs_tuned": 13,
    "bench-host_overhead": 14,
}
#: bench/ scripts that are not steps of the default plan (the H100 plan fills its 9.5 minutes
#: without them; CLTS_GPU_CHECK_BENCHES names them to run them): host code only, or mostly
#: host work whose anchor (R) the GPU machine lacks (scripts/gpu-check.sh skips the same)
OFF_PLAN = {"bench-bench_bfastts": "host numpy only",
            "bench-bench_bfast01": "device part 0.14 of 0.72 s on pocl; R anchor absent",
            "bench-bench_bfast_decompose": "a third host fits; R anchor absent",
            "bench-bench_mp_batched": "mpdist / ostinato / snippets against stumpy's CPU "
                                      "code: the plan is full, run it by name",
            "bench-bench_mp_chains": "chains are host numpy; floss against stumpy's CPU code",
            "bench-bench_stimp": "scrump / stimp against stumpy's CPU code: the plan is full, "
                                 "run it by name"}
#: steps whose work fits any time (clts-tune's own --budget): where the steps after them would
#: get less than their estimates, these give way, down to ELASTIC_FLOOR of their share
ELASTIC = {"tune"}
ELASTIC_FLOOR = 0.4
ELASTIC_MARGIN = 1.0
#: a step not listed (a new bench/ script)
DEFAULT_ESTIMATE = 20
SLACK = 1.5
KEEP = 0.6
#: the shortest timeout a step gets while any budget is left
MIN_STEP = 5
#: seconds of clts-tune's share that are not its own --budget (report anchors, overrun)
TUNE_OVERHEAD = 45


def estimate(step: str) -> float:
    return ESTIMATES.get(step, DEFAULT_ESTIMATE)


def allot(step: str, remaining: float, pending=()) -> tuple[int, float]:
    """(timeout, share) in seconds for ``step`` with ``remaining`` seconds of the budget left
    (the report's reserve already taken off) and ``pending`` steps still to run after it.
    Timeout 0: the budget is spent, the step is skipped."""
    left = max(float(remaining), 0.0)
    if left < 1:
        return 0, 0.0
    e, rest = estimate(step), sum(estimate(p) for p in pending)
    share = left * e / (e + rest)
    if step in ELASTIC:     # gives way first: the steps after it keep their estimates
        share = min(share, max(ELASTIC_FLOOR * share, left - ELASTIC_MARGIN * rest))
    cap = left - KEEP * (left - share)
    return int(min(left, max(MIN_STEP, min(SLACK * share, cap)))), share


def tune_budget(share: float) -> int:
    """``clts-tune --budget`` (seconds) for a share of ``share`` seconds."""
    return max(1, int(share - min(TUNE_OVERHEAD, share / 2)))


#: the budget-sharing steps of a check, in the script's order (the seed-scale table with the
#: GPU anchors first among the benches: the last steps take what the others overran)
PLAN = ["tests", "tune"] + [k for k in ESTIMATES if k.startswith("bench-")]


def simulate(budget: float, took=None, setup: float = 10.0, steps=PLAN) -> list[dict]:
    """The check's steps as the script times them when step ``s`` needs ``took(s)`` seconds
    (None, or no ``took``: its estimate; the tune its ``--budget`` plus ``TUNE_OVERHEAD``): one dict a step
    with its timeout, the seconds it ran (its need, or its timeout where it is stopped) and the
    running total. For the tests of the budget and the plan table in docs/devices.md."""
    now, rows = setup, []
    for i, name in enumerate(steps):
        timeout, share = allot(name, budget - now - 10, steps[i + 1:])
        need = took(name) if took else None
        if need is None:
            need = tune_budget(share) + TUNE_OVERHEAD if name == "tune" else estimate(name)
        ran = min(need, timeout)
        now += ran
        rows.append({"name": name, "timeout": timeout, "need": need, "ran": ran,
                     "stopped": need > timeout, "total": now})
    return rows


# --- the test log ---------------------------------------------------------------------------

_XDIST_CRASH = re.compile(r"worker '(gw\d+)' crashed while running '([^']+)'")
_FRAME = re.compile(r'File "[^"]*?(tests/test_\w+\.py)", line \d+ in (test_\w+)')
_SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in ([\d.]+)s")


def read_tests_log(text: str) -> dict:
    """What the test step's log says: ``summary`` (pytest's last line: counts and seconds),
    ``failed`` (test ids), ``crashed`` (test ids whose process died: pytest-xdist names them,
    a serial run's fault handler dump shows the test functions on its stacks), ``stopped``
    (xdist gave up after ``--max-worker-restart`` crashes, by default 4 a worker)."""
    crashed = list(dict.fromkeys(m.group(2) for m in _XDIST_CRASH.finditer(text)))
    if not crashed and "Fatal Python error" in text:
        dump = text[text.index("Fatal Python error"):]
        crashed = [f"{f}::{fn} (fault handler dump; the process died)"
                   for f, fn in dict.fromkeys(_FRAME.findall(dump))]
    failed = []
    for line in text.splitlines():
        m = re.match(r"(?:FAILED|ERROR) (\S+)", line)
        if m and m.group(1) not in failed:
            failed.append(m.group(1))
    summary = ""
    for line in text.splitlines():
        m = _SUMMARY.match(line.strip())
        if m:
            summary = f"{m.group(1)} in {float(m.group(2)):.0f} s"
    stopped = re.search(r"maximum crashed workers reached: \d+", text)
    return {"summary": summary, "failed": failed, "crashed": crashed,
            "stopped": stopped.group(0) + " (xdist stopped the run)" if stopped else ""}


# --- the report -----------------------------------------------------------------------------

def read_steps(path: Path) -> list[dict]:
    steps = []
    if not path.exists():
        return steps
    for line in path.read_text().splitlines():
        parts = line.split("\t")
        if len(parts) < 5:
            continue
        name, status, rc, secs, timeout = parts[:5]
        steps.append({"name": name, "status": status, "rc": int(rc), "seconds": float(secs),
                      "timeout_s": int(timeout) if timeout.isdigit() else None,
                      "note": parts[5] if len(parts) > 5 else ""})
    return steps


def _mmss(s: float) -> str:
    s = int(round(s))
    return f"{s // 60}:{s % 60:02d}"


def step_lines(steps: list[dict]) -> list[str]:
    """One markdown line a step: status, name, wall time (of its timeout), running total."""
    out, total = [], 0.0
    for s in steps:
        total += s["seconds"]
        of = f" of {s['timeout_s']} s allowed" if s["timeout_s"] else ""
        note = f": {s['note']}" if s["note"] else ""
        out.append(f"- {s['status']} {s['name']}{note} ({s['seconds']:.0f} s{of}; "
                   f"total {_mmss(total)})")
    return out


def report(out: Path, spec: str, dry: bool, budget: int, wall: int) -> Path:
    from clts.runtime import get_device, occupancy
    dev = get_device(spec)
    info = {f: getattr(dev.info, f) for f in ("name", "vendor", "platform", "driver", "version",
                                              "compute_units", "local_mem", "max_work_group",
                                              "global_mem", "simd_width")}
    steps = read_steps(out / "raw" / "steps.tsv")
    tlog = out / "raw" / "tests.log"
    tests = read_tests_log(tlog.read_text(errors="replace")) if tlog.exists() else {}
    total = sum(s["seconds"] for s in steps)
    raw = {"device": info, "slug": dev.slug, "target": occupancy.target_of(dev),
           "host": platform.node(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "dry_run": dry, "budget_s": budget, "wall_s": wall, "steps_s": round(total, 1),
           "steps": steps, "tests": tests}
    (out / "raw" / "check.json").write_text(json.dumps(raw, indent=2, default=str))
    lines = [f"# GPU check: {info['name']}", "",
             f"{'DRY RUN (no GPU steps measured) - ' if dry else ''}device `{dev.slug}`, driver "
             f"{info['driver']}, {info['compute_units']} compute units, occupancy target "
             f"{raw['target']}, {raw['date']}", "",
             f"## Steps ({_mmss(wall)} of a {_mmss(budget)} budget)", ""]
    lines += step_lines(steps)
    if tests:
        lines += ["", "## Tests", "", f"pytest: {tests['summary'] or 'no summary line'}"]
        if tests["stopped"]:
            lines += ["", f"**{tests['stopped']}**"]
        if tests["crashed"]:
            lines += ["", "Crashed (the process running them died; under pytest-xdist the "
                      "worker was replaced and the run went on):", ""]
            lines += [f"- {t}" for t in tests["crashed"]]
        if tests["failed"]:
            lines += ["", f"Failed ({len(tests['failed'])}):", ""]
            lines += [f"- {t}" for t in tests["failed"][:60]]
            if len(tests["failed"]) > 60:
                lines.append(f"- ... {len(tests['failed']) - 60} more in raw/tests.log")
    p = out / "gpu-scale.md"
    if p.exists():      # bench/gpu_scale.py: wall, kernels and the PCIe bound of each call
        lines += ["", "## Seed scale (bench/gpu_scale.py --quick)", "",
                  p.read_text().split("\n", 2)[-1].strip()]
    p = out / "tune-report.md"
    if p.exists():
        lines += ["", "## tune-report.md", "", p.read_text()]
    lines += ["", "Raw logs: `raw/*.log`; machine-readable summary: `raw/check.json`; measured "
              "profile: `profile.yaml` (commit it under clts/devices/ with `provenance: measured`, "
              "docs/devices.md says how)."]
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["allot"] and len(argv) >= 3:
        timeout, share = allot(argv[1], float(argv[2]), argv[3:])
        print(timeout, tune_budget(share) if share else 0)
        return 0
    if argv[:1] == ["report"] and len(argv) == 6:
        print(f"wrote {report(Path(argv[1]), argv[2], argv[3] == '1', int(argv[4]), int(argv[5]))}")
        return 0
    if argv[:1] == ["plan"] and len(argv) == 2:       # the table of docs/devices.md
        print("| step | H100 estimate s | timeout s | total |\n|---|---|---|---|")
        for r in simulate(float(argv[1])):
            print(f"| {r['name']} | {r['need']:.0f} | {r['timeout']} | {_mmss(r['total'])} |")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
