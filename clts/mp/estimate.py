"""Run-time estimate of a k = 1 matrix profile: calibration, records of real runs, the fit.

One JSON file per device and precision in the user cache directory, valid for one clts
version, kernel source and default plan: the calibration (a ladder of sizes from CAL_START,
doubling until two rungs are in the n^2 regime; the minimum of CAL_REPEATS runs each, the
machine load per CPU before it) and, when the user opts in with ``CLTS_MP_RECORD_RUNS=1``, the
last RUNS_KEPT k = 1 self-joins at least as large as the smallest calibration size. The
prediction uses the fastest run of each half-octave of pairs (timing noise on a shared machine
only ever adds time). ``matrix_profile.estimate`` creates the file, and so does a self-join of
at least AUTO_CAL_PAIRS pairs with a progress bar (its bar shows the estimate up front).

On a CPU device a calibration run counts the seconds it would take on an idle machine: the
calling thread's CPU seconds plus the other threads' (the OpenCL runtime's workers) divided by
the device's cores, when that is less than the wall time (``idle_seconds``): so a calibration
taken beside other jobs still predicts the idle run time.

Public names besides the constants, for the library's other modules and for tests:
``calibration_path(dev, precision)`` (the JSON file), ``predictor(points)`` (the fit),
``record_run`` (adds one run, as ``matrix_profile`` does when opted in), ``cached_estimate``
(never calibrates), ``progress_estimate`` (the progress bar's: the same, calibrating first for
a run of at least AUTO_CAL_PAIRS pairs), ``idle_seconds`` and the two measurements
that tests replace with fakes, ``calibration_time(dev, precision, n, run)`` and
``load_per_cpu()``."""
from __future__ import annotations

import json
import math
import os
import time

import numpy as np

from .. import options
from .plan import Problem, make_plan


CAL_SCHEMA = 3


#: calibration: series lengths; None -> a ladder of powers of two from CAL_START (each rung the
#: minimum of CAL_REPEATS runs), doubling until a rung takes CAL_MIN_SECONDS and its pairs per
#: second are within SATURATED of the rung before (both in the n^2 regime: a GPU fills up only
#: at larger n), or CAL_MAX. Every rung is kept: below the n^2 regime the prediction is the line
#: between measured rungs, not an extrapolation of the n^2 law (which was 25 % low on an H100
#: at 2^15, where the device is not full)
CAL_SIZES = None


CAL_START = 1 << 14


CAL_MAX = 1 << 20


CAL_MIN_SECONDS = 0.15


SATURATED = 0.1


#: seconds the ladder may take (its runs, warm-ups included): a device whose pairs per second
#: still grow at large n stops before the rung that would pass it, and the n^2 law anchored at
#: its top rung (with the fixed cost of the line through the top two) carries on from there
CAL_BUDGET = 30.0


CAL_REPEATS = 5


#: the window-length term: a run's work is pairs + gamma * l * m (the O(m) exact parts: segment
#: starts, re-evaluation of the winners; 30 % of the pairs at n = 2^14, m = 2048): gamma is the
#: mean of two measurements, each one more rung with m = CAL_M_LONG against the rung of the same
#: n, at the ladder's first rung and at its last but one (in the n^2 regime); each held within
#: [0, GAMMA_MAX] (one n alone: Intel's CPU runtime gave 0.9 at 2^14 and 2^16 but 2.1 at 2^15)
CAL_M_LONG = 2048


GAMMA_MAX = 4.0


#: a self-join of at least this many pairs (n ~ 2^19.3 at m = 256) with a progress bar
#: calibrates first where no calibration exists (a few seconds, under 5 % of such a run on the
#: devices measured), so that its bar shows the estimate up front
AUTO_CAL_PAIRS = 2e11


#: the fixed cost of a run, in the extrapolation beyond the measured sizes, at most this
#: fraction of the smaller of the two nearest sizes' times
INTERCEPT_MAX = 0.1


CAL_M = 256


#: recorded runs kept per file
RUNS_KEPT = 32


#: a calibration taken at this load per CPU or more is redone once the load has dropped by
#: LOAD_DROP per CPU
LOADED, LOAD_DROP = 0.5, 0.5


def _self_pairs(n, m, ez):
    l = n - m + 1
    return max(l - ez - 1, 0) * max(l - ez, 0) / 2


def load_per_cpu():
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (OSError, AttributeError):
        return 0.0


def calibration_path(dev, precision):
    from ..runtime.icd import cache_dir
    d = cache_dir() / "mp"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"calibration-{dev.fingerprint}-{precision}.json"


_CODE = []


def _code_key(dev, precision):
    """What a calibration is valid for: clts version, kernel sources, the default plan (its
    segment, which scales with m, left out)."""
    if not _CODE:
        import hashlib
        from pathlib import Path
        from .._version import __version__
        h = hashlib.sha1(__version__.encode())
        tdir = Path(__file__).resolve().parents[1] / "templates"
        for f in sorted([*tdir.glob("mp/*.cl.mako"), *tdir.glob("common/*.cl.mako")]):
            h.update(f.read_bytes())
        _CODE.append(f"{__version__}/{h.hexdigest()[:12]}")
    from dataclasses import replace
    p = make_plan(dev, Problem(CAL_M, precision))
    return f"{_CODE[0]}/{replace(p, segment=0)!r}"


def _read(path):
    try:
        data = json.loads(path.read_text())
        return data if data.get("schema") == CAL_SCHEMA else None
    except (OSError, ValueError, AttributeError):
        return None


def _write(path, data):
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _stale(data, key, load_now):
    """Why ``data`` cannot be used (a string), or None."""
    if data is None or not data.get("calibration"):
        return "no calibration"
    if data.get("key") != key:
        return "clts version, kernels or default plan changed"
    cal = data["calibration"]
    if cal.get("load", 0.0) >= LOADED and load_now <= cal["load"] - LOAD_DROP:
        return "calibrated on a loaded machine, now quieter"
    return None


def _points(data):
    """(work, seconds) of the calibration and the recorded runs, and gamma."""
    cal = data["calibration"]
    g = float(cal.get("gamma", 0.0))
    pts = [(p + g * (n - CAL_M + 1) * CAL_M, t) for n, p, t in cal["points"]]
    pts += [(r[0] + g * (r[4] if len(r) > 4 else 0.0), r[1]) for r in data.get("runs", [])]
    return pts, g


def _law(data):
    """seconds(pairs, lm) from a calibration file's content; lm = l * m (self-join)."""
    pts, g = _points(data)
    pred = predictor(pts)
    return lambda pairs, lm=0.0: pred(float(pairs) + g * float(lm))


def _gamma(pairs, lm, seconds):
    """gamma from two runs of one n at two m: pairs[i] + gamma * lm[i] proportional to
    seconds[i], within [0, GAMMA_MAX]."""
    r = seconds[1] / seconds[0]
    den = lm[1] - r * lm[0]
    if den <= 0:
        return 0.0
    return float(min(max((r * pairs[0] - pairs[1]) / den, 0.0), GAMMA_MAX))


def predictor(points):
    """t(pairs) from measured (pairs, seconds): per half-octave of pairs the fastest run; between
    two sizes the line through them; beyond the largest size the n^2 law anchored at it,
    t = a + (t_A - a) * pairs / pairs_A, with the fixed cost a the intercept of the line through
    the two largest sizes kept within [0, INTERCEPT_MAX * their smaller time] (a two-point line
    extrapolated far amplifies the timing noise of both points; anchoring at one point does
    not, and the fixed cost of a run in the n^2 regime is small); below the smallest size the
    same with a up to the smaller time: the line through the two smallest sizes (a GPU not yet
    full at small n takes longer than the n^2 law says)."""
    best = {}
    for p, t in points:
        if p > 0 and t > 0:
            key = round(2 * math.log2(p))
            if key not in best or t / p < best[key][1] / best[key][0]:
                best[key] = (float(p), float(t))
    env = sorted(best.values())
    if not env:
        raise ValueError("no measured run to estimate from")

    def anchored(pairs, anchor, other, cap=INTERCEPT_MAX):
        (pa, ta), (po, to) = anchor, other
        b = (ta - to) / (pa - po)
        a = ta - b * pa
        a = 0.0 if b <= 0 else min(max(a, 0.0), cap * min(ta, to))
        return a + (ta - a) * pairs / pa

    def predict(pairs):
        pairs = float(pairs)
        if len(env) == 1:
            return env[0][1] * pairs / env[0][0]
        if pairs >= env[-1][0]:
            return anchored(pairs, env[-1], env[-2])
        if pairs <= env[0][0]:         # a device not full at small n: the line, fixed cost
            return anchored(pairs, env[0], env[1], 1.0)    # up to the smaller time
        i = int(np.searchsorted([e[0] for e in env], pairs))
        (p0, t0), (p1, t1) = env[i - 1], env[i]
        if t1 <= t0:        # noise: the n^2 law of the nearer size
            pn, tn = env[i] if pairs / p0 > p1 / pairs else env[i - 1]
            return tn * pairs / pn
        return t0 + (t1 - t0) * (pairs - p0) / (p1 - p0)
    return predict


def idle_seconds(wall, cpu, main_cpu, cores):
    """Seconds of a run on an idle machine, from its wall seconds, the process's CPU seconds
    (all threads), the calling thread's CPU seconds and the cores the device runs on: the
    calling thread's part serial, the rest spread over ``cores``; never more than ``wall``
    (other jobs only ever add wall time). ``cores`` None: ``wall`` (not a CPU device)."""
    if not cores or cpu <= 0:
        return wall
    main_cpu = min(max(main_cpu, 0.0), cpu)
    return min(wall, main_cpu + (cpu - main_cpu) / cores)


def _cpu_cores(dev):
    """Cores a CPU device's runtime spreads a run over (None: not a CPU device)."""
    if getattr(dev, "type", None) != "cpu" or getattr(dev.info, "simulator", False):
        return None
    return max(1, min(dev.info.compute_units or 1, os.cpu_count() or 1))


def _process_cpu():
    try:
        import resource
        r = resource.getrusage(resource.RUSAGE_SELF)        # all threads of this process
        return r.ru_utime + r.ru_stime
    except (ImportError, OSError):
        return time.process_time()


def calibration_time(dev, precision, n, run, m=CAL_M):
    """Idle-machine seconds (``idle_seconds``) of one k=1 self-join of a random walk of length
    n, window m (not recorded), run by ``run`` (the matrix profile's compute function: api.py passes its
    own, so that this module does not import api)."""
    T = np.cumsum(np.random.default_rng(n).standard_normal(n))
    c0, s0 = _process_cpu(), time.thread_time()
    t0 = time.perf_counter()
    run(T, m, None, 1, None, True, precision, dev, False, None, {}, False)
    wall = time.perf_counter() - t0
    return idle_seconds(wall, _process_cpu() - c0, time.thread_time() - s0, _cpu_cores(dev))


def _rung(dev, precision, n, run, m=CAL_M):
    calibration_time(dev, precision, n, run, m=m)                # build, warm caches
    return min(calibration_time(dev, precision, n, run, m=m) for _ in range(CAL_REPEATS))


def _calibrate(dev, precision, run):
    load = load_per_cpu()
    pairs = lambda n: _self_pairs(n, CAL_M, math.ceil(CAL_M / 4))   # noqa: E731
    pts = []
    if CAL_SIZES:
        sizes = tuple(CAL_SIZES)
        if len(sizes) < 2 or any(b <= a for a, b in zip(sizes, sizes[1:])):
            raise ValueError(f"calibration sizes must be two or more increasing lengths, "
                             f"got {sizes}")
        pts = [[n, pairs(n), _rung(dev, precision, n, run)] for n in sizes]
    else:
        n, spent = CAL_START, 0.0
        while True:
            pts.append([n, pairs(n), _rung(dev, precision, n, run)])
            spent += (1 + CAL_REPEATS) * pts[-1][2]
            if len(pts) >= 2 and pts[-1][2] >= CAL_MIN_SECONDS:
                (_, p0, t0), (_, p1, t1) = pts[-2], pts[-1]
                if (p1 / t1) <= (1 + SATURATED) * (p0 / t0):
                    break
            # the next rung (4x the pairs) would take the ladder past its budget
            if n >= CAL_MAX or (len(pts) >= 2 and
                                spent + 4 * (1 + CAL_REPEATS) * pts[-1][2] > CAL_BUDGET):
                break
            n *= 2
    longs, gs = [], []
    for n0, p0, t0 in {id(q): q for q in (pts[0], pts[-2])}.values():
        ml = min(CAL_M_LONG, n0 // 4)
        t_long = _rung(dev, precision, n0, run, m=ml)
        longs.append([n0, ml, t_long])
        gs.append(_gamma((p0, _self_pairs(n0, ml, math.ceil(ml / 4))),
                         ((n0 - CAL_M + 1) * CAL_M, (n0 - ml + 1) * ml), (t0, t_long)))
    return {"date": time.time(), "load": round(load, 3), "cpus": os.cpu_count(),
            "m": CAL_M, "repeats": CAL_REPEATS, "idle": _cpu_cores(dev) is not None,
            "points": pts, "long": longs, "gamma": round(float(np.mean(gs)), 4)}


def _model(dev, precision, recalibrate, run):
    path = calibration_path(dev, precision)
    key = _code_key(dev, precision)
    data = _read(path)
    if recalibrate or _stale(data, key, load_per_cpu()):
        runs = data.get("runs", []) if data and data.get("key") == key and not recalibrate \
            else []
        data = {"schema": CAL_SCHEMA, "key": key, "calibration": _calibrate(dev, precision, run),
                "runs": runs}
        _write(path, data)
    return _law(data)


def _recording_runs() -> bool:
    """Whether ordinary calls record their run times into the calibration file (opt-in: the
    ``mp_record_runs`` option, ``CLTS_MP_RECORD_RUNS=1``): without it, only ``estimate`` writes
    there."""
    return options.get("mp_record_runs")


def record_run(dev, plan, pairs, seconds, lm=0.0):
    """Add one k=1 self-join to the calibration file of its device and precision (if it is
    valid for this code and plan, and the run at least as large as the smallest calibration
    size)."""
    try:
        path = calibration_path(dev, plan.precision)
        data = _read(path)
        key = _code_key(dev, plan.precision)
        if data is None or data.get("key") != key or not data.get("calibration"):
            return
        from dataclasses import replace
        if replace(plan, segment=0) != replace(make_plan(dev, Problem(CAL_M, plan.precision)),
                                                 segment=0):
            return
        if pairs < min(p for _, p, _ in data["calibration"]["points"]):
            return
        runs = data.setdefault("runs", [])
        runs.append([float(pairs), float(seconds), round(load_per_cpu(), 3), time.time(),
                     float(lm)])
        del runs[:-RUNS_KEPT]
        _write(path, data)
    except (OSError, ValueError, KeyError, TypeError):
        pass            # the estimate is a convenience: never fail a computation for it


def cached_estimate(dev, precision, pairs, lm=0.0):
    """Seconds predicted from a calibration already on disk (never runs one), else None. A
    calibration taken on a loaded machine counts here (only ``estimate`` redoes it once the
    machine is quieter: a CPU device's calibration is of idle-machine seconds anyway)."""
    try:
        data = _read(calibration_path(dev, precision))
        if _stale(data, _code_key(dev, precision), math.inf):
            return None
        return _law(data)(pairs, lm)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def progress_estimate(dev, plan, pairs, run, lm=0.0):
    """The progress bar's estimate of a k = 1 run with ``plan``: ``cached_estimate``, or for a
    run of at least AUTO_CAL_PAIRS pairs without a valid calibration, a calibration first
    (``run`` as in ``calibration_time``); None where neither, or where ``plan`` is not the
    default plan the calibration measures (its segment aside)."""
    try:
        from dataclasses import replace
        if replace(plan, segment=0) != replace(make_plan(dev, Problem(CAL_M, plan.precision)),
                                                 segment=0):
            return None
    except (ValueError, TypeError):
        return None
    est = cached_estimate(dev, plan.precision, pairs, lm)
    if est is not None or pairs < AUTO_CAL_PAIRS:
        return est
    try:
        return _model(dev, plan.precision, False, run)(pairs, lm)
    except (OSError, ValueError, KeyError, TypeError):
        return None
