"""Run-time estimate of a k = 1 matrix profile: calibration, records of real runs, the fit.

One JSON file per device and precision in the user cache directory, valid for one clts
version, kernel source and default plan: the calibration (two sizes, the minimum of
CAL_REPEATS runs each, the machine load per CPU before it) and, when the user opts in with
``CLTS_MP_RECORD_RUNS=1``, the last RUNS_KEPT k = 1 self-joins at least as large as the smaller
calibration size. The prediction uses the fastest run of each half-octave of pairs (timing noise
on a shared machine only ever adds time). Only ``matrix_profile.estimate`` creates the file.

Public names besides the constants, for the library's other modules and for tests:
``calibration_path(dev, precision)`` (the JSON file), ``predictor(points)`` (the fit),
``record_run`` (adds one run, as ``matrix_profile`` does when opted in), ``cached_estimate``
(the progress bar's estimate: never calibrates), and the two measurements that tests replace
with fakes, ``calibration_time(dev, precision, n, run)`` and ``load_per_cpu()``."""
from __future__ import annotations

import json
import math
import os
import time

import numpy as np

from .. import options
from .plan import Problem, make_plan


CAL_SCHEMA = 2


#: calibration: series lengths; None -> the first power of two from CAL_START whose run takes
#: CAL_MIN_SECONDS (so that both sizes are in the n^2 regime on any device), and twice that
#: (CAL_START is itself large enough on a 2-core CPU, so load cannot push the sizes below it)
CAL_SIZES = None


CAL_START = 1 << 15


CAL_MAX = 1 << 20


CAL_MIN_SECONDS = 0.15


CAL_REPEATS = 5


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
    pts = [(p, t) for _, p, t in data["calibration"]["points"]]
    pts += [(r[0], r[1]) for r in data.get("runs", [])]
    return pts


def predictor(points):
    """t(pairs) from measured (pairs, seconds): per half-octave of pairs the fastest run; between
    two sizes the line through them; beyond the measured sizes the n^2 law anchored at the
    nearest size, t = a + (t_A - a) * pairs / pairs_A, with the fixed cost a the intercept of the
    line through the two nearest sizes kept within [0, INTERCEPT_MAX * their smaller time] (a
    two-point line extrapolated far amplifies the timing noise of both points; anchoring at one
    point does not, and the fixed cost of a run in the n^2 regime is small)."""
    best = {}
    for p, t in points:
        if p > 0 and t > 0:
            key = round(2 * math.log2(p))
            if key not in best or t / p < best[key][1] / best[key][0]:
                best[key] = (float(p), float(t))
    env = sorted(best.values())
    if not env:
        raise ValueError("no measured run to estimate from")

    def anchored(pairs, anchor, other):
        (pa, ta), (po, to) = anchor, other
        b = (ta - to) / (pa - po)
        a = ta - b * pa
        a = 0.0 if b <= 0 else min(max(a, 0.0), INTERCEPT_MAX * min(ta, to))
        return a + (ta - a) * pairs / pa

    def predict(pairs):
        pairs = float(pairs)
        if len(env) == 1:
            return env[0][1] * pairs / env[0][0]
        if pairs >= env[-1][0]:
            return anchored(pairs, env[-1], env[-2])
        if pairs <= env[0][0]:
            return anchored(pairs, env[0], env[1])
        i = int(np.searchsorted([e[0] for e in env], pairs))
        (p0, t0), (p1, t1) = env[i - 1], env[i]
        if t1 <= t0:        # noise: the n^2 law of the nearer size
            pn, tn = env[i] if pairs / p0 > p1 / pairs else env[i - 1]
            return tn * pairs / pn
        return t0 + (t1 - t0) * (pairs - p0) / (p1 - p0)
    return predict


def calibration_time(dev, precision, n, run):
    """Wall seconds of one k=1 self-join of a random walk of length n (not recorded), run by
    ``run`` (the matrix profile's compute function: api.py passes its own, so that this module
    does not import api)."""
    T = np.cumsum(np.random.default_rng(n).standard_normal(n))
    t0 = time.perf_counter()
    run(T, CAL_M, None, 1, None, True, precision, dev, False, None, {}, False)
    return time.perf_counter() - t0


def _calibrate(dev, precision, run):
    load = load_per_cpu()
    times = {}
    if CAL_SIZES:
        sizes = tuple(CAL_SIZES)
    else:
        n = CAL_START
        while True:
            calibration_time(dev, precision, n, run)               # build, warm caches
            times[n] = [calibration_time(dev, precision, n, run)]
            if times[n][0] >= CAL_MIN_SECONDS or n >= CAL_MAX:
                break
            n *= 2
        sizes = (n, 2 * n)
    if len(sizes) != 2 or sizes[1] <= sizes[0]:
        raise ValueError(f"calibration sizes must be two increasing lengths, got {sizes}")
    pts = []
    for n in sizes:
        ts = times.get(n, [])
        if not ts:
            calibration_time(dev, precision, n, run)
        while len(ts) < CAL_REPEATS:
            ts.append(calibration_time(dev, precision, n, run))
        pts.append([n, _self_pairs(n, CAL_M, math.ceil(CAL_M / 4)), min(ts)])
    return {"date": time.time(), "load": round(load, 3), "cpus": os.cpu_count(),
            "m": CAL_M, "repeats": CAL_REPEATS, "points": pts}


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
    return predictor(_points(data))


def _recording_runs() -> bool:
    """Whether ordinary calls record their run times into the calibration file (opt-in: the
    ``mp_record_runs`` option, ``CLTS_MP_RECORD_RUNS=1``): without it, only ``estimate`` writes
    there."""
    return options.get("mp_record_runs")


def record_run(dev, plan, pairs, seconds):
    """Add one k=1 self-join to the calibration file of its device and precision (if it is
    valid for this code and plan, and the run at least as large as the smaller calibration
    size: smaller runs are not in the n^2 regime)."""
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
        runs.append([float(pairs), float(seconds), round(load_per_cpu(), 3), time.time()])
        del runs[:-RUNS_KEPT]
        _write(path, data)
    except (OSError, ValueError, KeyError, TypeError):
        pass            # the estimate is a convenience: never fail a computation for it


def cached_estimate(dev, precision, pairs):
    """Seconds predicted from a calibration already on disk (never runs one), else None."""
    try:
        data = _read(calibration_path(dev, precision))
        if _stale(data, _code_key(dev, precision), 0.0):
            return None
        return predictor(_points(data))(pairs)
    except (OSError, ValueError, KeyError, TypeError):
        return None
