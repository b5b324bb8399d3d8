"""Matrix profile, the parts around the diagonal kernel: per-window statistics (against exact
rational arithmetic), and the run-time estimate's calibration logic (fake timings)."""
from __future__ import annotations

from fractions import Fraction

import json

import numpy as np
import pytest

from clts.mp import estimate, flags, series
from clts.mp.plan import Problem, make_plan


def _exact_stats(w):
    F = [Fraction(float(v)) for v in w]
    mu = sum(F) / len(F)
    return float(mu), float(sum((f - mu) ** 2 for f in F)), float(sum(f * f for f in F))


def _stats_series(n, seed):
    """A random walk far from 0 (cancellation in a naive variance), a constant plateau and a
    plateau with 1e-9 noise."""
    rng = np.random.default_rng(seed)
    T = 1e4 + np.cumsum(rng.standard_normal(n))
    T[n // 5:n // 5 + 60] = 1e4 + 1e-9 * rng.standard_normal(60)
    T[n // 2:n // 2 + 50] = 7.25
    return T


@pytest.mark.parametrize("m", [3, 13, 40, 100])
@pytest.mark.parametrize("normalize", [True, False])
def test_window_stats_exact(device, m, normalize):
    """Mean within 1 ulp-ish of the exact mean; the centred sum of squares within
    1e-13 relative plus the unavoidable m * (ulp of the values)^2 of a rounded mean; constant
    windows flagged and given ss = 0. n - m + 1 is not a multiple of a work-item's windows."""
    n = 333
    T = _stats_series(n, m)
    p = make_plan(device, Problem(m))
    s = series.Side(device, T, m, p, normalize, 0)
    W = np.lib.stride_tricks.sliding_window_view(T, m)
    assert len(s.mu_h) == n - m + 1
    ex = np.array([_exact_stats(w) for w in W])
    const = np.all(W == W[:, :1], axis=1)
    np.testing.assert_array_equal(s.flags == flags.CONSTANT, const)
    scale = np.max(np.abs(T))
    np.testing.assert_allclose(s.mu_h, ex[:, 0], rtol=0, atol=4 * np.finfo(float).eps * scale)
    if normalize:
        assert np.all(s.ss_h[const] == 0)
        ulp = np.spacing(scale)
        bound = 1e-13 * ex[:, 1] + m * ulp ** 2
        assert np.all(np.abs(s.ss_h - ex[:, 1])[~const] <= bound[~const])
    else:
        np.testing.assert_allclose(s.ss_h, ex[:, 2], rtol=1e-14, atol=0)


def test_window_stats_single(device):
    """precision='single': float32 statistics of the float32-rounded series."""
    m, T = 24, _stats_series(200, 3) - 1e4
    p = make_plan(device, Problem(m, "single"))
    s = series.Side(device, T, m, p, True, 0)
    W = np.lib.stride_tricks.sliding_window_view(s.Tc, m)
    np.testing.assert_allclose(s.mu_h, W.mean(1), rtol=0, atol=1e-5 * np.max(np.abs(T)))
    ss = ((W - W.mean(1)[:, None]) ** 2).sum(1)
    ok = ss > 1e-3 * m
    np.testing.assert_allclose(s.ss_h[ok], ss[ok], rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# matrix_profile.estimate: calibration, staleness, refinement from recorded runs (fake timings)

LAW_A, LAW_B = 0.01, 3e-10           # seconds, seconds per pair


def _pairs(n, m, ez):
    """Pairs of windows of a self-join more than ``ez`` apart: sum over the diagonals
    d = ez + 1 .. l - 1 of their l - d pairs."""
    l = n - m + 1
    return max(l - ez - 1, 0) * max(l - ez, 0) / 2


def _law(n, m=estimate.CAL_M):
    return LAW_A + LAW_B * _pairs(n, m, -(-m // 4))


def data_gamma(device):
    return _cal(device)["calibration"]["gamma"]


def _cal(device):
    """The calibration file's content."""
    return json.loads(estimate.calibration_path(device, "double").read_text())


def _save(device, data):
    estimate.calibration_path(device, "double").write_text(json.dumps(data))


@pytest.fixture
def fake_cal(device, tmp_path, monkeypatch):
    """Calibration runs replaced by the law above, each repeat slowed by a fake load factor
    that is >= 1 (other jobs only ever add time); the cache directory is a temporary one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rng = np.random.default_rng(0)
    calls = []

    def fake_time(dev, precision, n, run, m=estimate.CAL_M):
        calls.append(n)
        return _law(n, m) * (1 + (rng.random() < 0.5) * rng.uniform(0, 0.8))
    monkeypatch.setattr(estimate, "calibration_time", fake_time)
    monkeypatch.setattr(estimate, "load_per_cpu", lambda: 0.1)
    return calls


def test_estimate_calibration_fake_timings(device, fake_cal):
    import clts
    # a ladder from CAL_START (2^14) until a rung takes CAL_MIN_SECONDS with pairs/s within
    # SATURATED of the rung before (law: 2^15 0.17 s but 18 % faster per pair than 2^14;
    # 2^16 5 % faster than 2^15); a warm-up and the minimum of CAL_REPEATS runs each
    t17 = clts.matrix_profile.estimate(1 << 17, 256, device)
    assert set(fake_cal) == {1 << 14, 1 << 15, 1 << 16}
    assert fake_cal.count(1 << 16) == 1 + estimate.CAL_REPEATS
    # and the window-length term's runs (the first and the last but one rung, m = 2048): a
    # law without one, gamma ~ 0
    assert fake_cal.count(1 << 14) == fake_cal.count(1 << 15) == 2 * (1 + estimate.CAL_REPEATS)
    assert data_gamma(device) < 0.5
    data = _cal(device)
    assert [p[0] for p in data["calibration"]["points"]] == [1 << 14, 1 << 15, 1 << 16]
    assert data["calibration"]["load"] == 0.1 and data["key"].startswith(clts.__version__)
    # extrapolated within a few % of the law, interpolated and at other m as well
    assert abs(t17 / _law(1 << 17) - 1) < 0.05
    for n, m in ((1 << 16, 64), (50000, 1024), (1 << 18, 256)):
        est = clts.matrix_profile.estimate(n, m, device)
        assert abs(est / _law(n, m) - 1) < 0.05, (n, m)
    # cached: no new runs; recalibrate=True measures again
    fake_cal.clear()
    clts.matrix_profile.estimate(1 << 16, 256, device)
    assert fake_cal == []
    clts.matrix_profile.estimate(1 << 16, 256, device, recalibrate=True)
    assert fake_cal
    # the progress bar's estimate reads the same file and never calibrates
    fake_cal.clear()
    assert abs(estimate.cached_estimate(device, "double", 1e10) / (LAW_A + LAW_B * 1e10) - 1) < 0.05
    assert fake_cal == []


def test_estimate_adaptive_sizes(device, fake_cal, monkeypatch):
    """A device 16x faster than the law: the sizes grow until a run takes CAL_MIN_SECONDS."""
    import clts
    calls = []

    def fast(dev, precision, n, run, m=estimate.CAL_M):
        calls.append(n)
        return _law(n, m) / 16
    monkeypatch.setattr(estimate, "calibration_time", fast)
    est = clts.matrix_profile.estimate(1 << 19, 256, device)
    assert set(calls) == {1 << 14, 1 << 15, 1 << 16, 1 << 17}
    assert abs(est / (_law(1 << 19) / 16) - 1) < 0.01


def _gpu_law(n, m=estimate.CAL_M):
    """A device that fills up only at larger n, like the H100 (7.9e9 pairs/s at 2^15, 1.6e10
    at 2^16): the diagonal driver's launches, one per segment of 8192 rows with the bands of
    64 diagonals that reach it, each launch taking at least one full wave of 4096 work-items
    (a work-item: 5e6 pairs/s), 5 us a launch, 1 ms a call."""
    l = n - m + 1
    ez = -(-m // 4)
    t = 1e-3
    for s0 in range(0, l - ez - 1, 8192):
        bands = -(-(l - ez - 1 - s0) // 64)
        rows = min(8192, l - ez - 1 - s0)
        t += 5e-6 + max(bands, 1024) * 64 * rows / 2e7 / 1024
    return t


def test_estimate_device_not_full_at_small_n(device, fake_cal, monkeypatch):
    """A GPU-like device whose pairs/s keep growing with n: the ladder goes on until two
    rungs are in the n^2 regime (or its time budget is spent), every rung is kept, and the
    estimate is within 10 % of the law from 2^14 to 2^20 at m = 64 .. 2048 (the n^2
    extrapolation from the top rungs alone was 25 % low at 2^15 on the H100)."""
    import clts
    calls = []

    def gpu(dev, precision, n, run, m=estimate.CAL_M):
        calls.append(n)
        return _gpu_law(n, m)
    monkeypatch.setattr(estimate, "calibration_time", gpu)
    monkeypatch.setattr(estimate, "CAL_BUDGET", 1e3)
    clts.matrix_profile.estimate(1 << 14, 256, device)
    rungs = [p[0] for p in _cal(device)["calibration"]["points"]]
    assert rungs[0] == estimate.CAL_START and len(rungs) >= 3
    rates = [p[1] / p[2] for p in _cal(device)["calibration"]["points"]]
    assert rates[-1] <= (1 + estimate.SATURATED) * rates[-2] < rates[-2] + rates[1] - rates[0]
    for e in range(14, 21):
        for m in (64, 256, 2048):
            est = clts.matrix_profile.estimate(1 << e, m, device)
            assert abs(est / _gpu_law(1 << e, m) - 1) < 0.1, (e, m, est, _gpu_law(1 << e, m))
    # the default budget stops the ladder before the n^2 regime (the 2^19 rung would take it
    # from 16 s to 60 s): the law anchored at the top rung still within 10 % up to 2^20
    monkeypatch.setattr(estimate, "CAL_BUDGET", 30.0)
    clts.matrix_profile.estimate(1 << 14, 256, device, recalibrate=True)
    rungs = [p[0] for p in _cal(device)["calibration"]["points"]]
    assert rungs[-1] == 1 << 18
    for e in range(14, 21):
        for m in (64, 256, 2048):
            est = clts.matrix_profile.estimate(1 << e, m, device)
            assert abs(est / _gpu_law(1 << e, m) - 1) < 0.1, (e, m, est, _gpu_law(1 << e, m))


def test_estimate_window_length_term(device, fake_cal, monkeypatch):
    """A device whose O(m) parts cost 1.2 pairs per l * m (pocl's figure: 24 % of the time at
    n = 2^14, m = 2048, nothing at m = 256 beyond the pairs law): the calibration's run at
    m = 2048 finds gamma, and the estimate follows m at small n."""
    import clts

    def law(n, m=estimate.CAL_M):
        return 3e-10 * (_pairs(n, m, -(-m // 4)) + 1.2 * (n - m + 1) * m)

    monkeypatch.setattr(estimate, "calibration_time",
                        lambda dev, precision, n, run, m=estimate.CAL_M: law(n, m))
    clts.matrix_profile.estimate(1 << 16, 256, device)
    assert abs(data_gamma(device) - 1.2) < 0.01
    for e in (14, 15, 17, 20):
        for m in (64, 256, 2048):
            assert abs(clts.matrix_profile.estimate(1 << e, m, device) / law(1 << e, m) - 1) < 0.02
    assert estimate._gamma((1e8, 1e8), (1e6, 1e6), (1.0, 2.0)) == 0.0        # no m difference
    assert estimate._gamma((1e8, 5e7), (1e6, 3e7), (1.0, 2.0)) == estimate.GAMMA_MAX


def test_idle_seconds():
    """A CPU device's calibration run counts its idle-machine seconds: the calling thread's
    CPU seconds serial, the rest over the cores, never more than the wall time."""
    assert estimate.idle_seconds(10.0, 4.0, 0.5, 2) == 0.5 + 3.5 / 2
    assert estimate.idle_seconds(1.0, 4.0, 0.5, 2) == 1.0         # never above the wall time
    assert estimate.idle_seconds(3.0, 4.0, 0.5, None) == 3.0      # not a CPU device
    assert estimate.idle_seconds(3.0, 1.0, 2.0, 2) == 1.0         # thread time > process time


def test_estimate_stale_calibrations(device, fake_cal, monkeypatch):
    import clts
    clts.matrix_profile.estimate(1 << 16, 256, device)
    path = estimate.calibration_path(device, "double")
    # another clts version / kernel source / plan: measured again
    data = _cal(device)
    data["key"] = "0.0.0/old"
    _save(device, data)
    fake_cal.clear()
    clts.matrix_profile.estimate(1 << 16, 256, device)
    assert fake_cal
    # calibrated on a loaded machine: measured again once the machine is quieter, not before
    data = _cal(device)
    data["calibration"]["load"] = 1.0
    _save(device, data)
    monkeypatch.setattr(estimate, "load_per_cpu", lambda: 0.9)
    fake_cal.clear()
    clts.matrix_profile.estimate(1 << 16, 256, device)
    assert fake_cal == []
    monkeypatch.setattr(estimate, "load_per_cpu", lambda: 0.2)
    clts.matrix_profile.estimate(1 << 16, 256, device)
    assert fake_cal
    assert _cal(device)["calibration"]["load"] == 0.2
    # an unreadable file is a missing calibration
    path.write_text("{not json")
    fake_cal.clear()
    clts.matrix_profile.estimate(1 << 16, 256, device)
    assert fake_cal


def test_estimate_refined_by_recorded_runs(device, fake_cal, monkeypatch):
    """Runs recorded after the calibration move the estimate to the fastest run of each size;
    runs smaller than the calibration, with a forced plan, or AB-joins are not recorded; an
    ordinary call records nothing unless CLTS_MP_RECORD_RUNS opts in."""
    import clts
    from clts.mp.plan import Problem, make_plan
    n17 = 1 << 17
    p17 = _pairs(n17, 256, 64)
    clts.matrix_profile.estimate(n17, 256, device)
    plan = make_plan(device, Problem(256))
    # this machine is really 20% faster at 2^17 than the calibration's law says
    for slow in (1.5, 1.0, 1.3):
        estimate.record_run(device, plan, p17, 0.8 * _law(n17) * slow, (n17 - 255) * 256)
    assert abs(clts.matrix_profile.estimate(n17, 256, device) / (0.8 * _law(n17)) - 1) < 1e-9
    # halfway between the calibration's 2^16 and the runs' 2^17: interpolated
    est = clts.matrix_profile.estimate(92000, 256, device)
    assert 0.8 * _law(92000) < est < _law(92000)
    runs = len(_cal(device)["runs"])
    estimate.record_run(device, plan, 1e6, 1.0)                     # below the calibration sizes
    from dataclasses import replace
    estimate.record_run(device, replace(plan, groups=plan.groups + 1), p17, 1.0)
    assert len(_cal(device)["runs"]) == runs
    # matrix_profile records its own k = 1 self-joins (the threshold lowered for a small run)
    data = _cal(device)
    data["calibration"]["points"][0][1] = 1.0
    _save(device, data)
    T = np.cumsum(np.random.default_rng(1).standard_normal(400))
    clts.set_options(mp_record_runs=False)
    before = estimate.calibration_path(device, "double").read_bytes()
    clts.matrix_profile(T, 16, device=device)                   # not opted in: no write
    assert estimate.calibration_path(device, "double").read_bytes() == before
    clts.set_options(mp_record_runs=True)
    clts.matrix_profile(T, 16, device=device)
    clts.matrix_profile(T, 16, T[:300], device=device)
    clts.matrix_profile(T, 16, device=device, k=2)
    clts.matrix_profile(T, 16, device=device, groups=1)
    got = _cal(device)["runs"]
    assert len(got) == runs + 1 and got[-1][0] == _pairs(400, 16, 4)


def test_predictor_noise_and_single_point():
    pts = [(1e9, 1.0), (1e9, 1.7), (4e9, 4.0), (4.1e9, 9.0)]
    f = estimate.predictor(pts)
    assert abs(f(1e9) - 1.0) < 1e-12 and abs(f(4e9) - 4.0) < 1e-12
    assert abs(f(8e9) - 8.0) < 1e-9
    # a line that would decrease (noise): the n^2 law of the nearer size
    f = estimate.predictor([(1e9, 2.0), (4e9, 1.5)])
    assert abs(f(8e9) - 3.0) < 1e-12
    assert abs(estimate.predictor([(2e9, 1.0)])(4e9) - 2.0) < 1e-12
    # the smaller size 30 % slow (noise, or a device not full): between the sizes the line;
    # beyond them the law anchored at the larger size, the fixed cost held to 10 % of the
    # smaller time (a line through both would give 7.6 for a true 8.0); below them the line
    f = estimate.predictor([(1e9, 1.3), (4e9, 4.0)])
    assert abs(f(2e9) - 2.2) < 1e-12
    assert abs(f(8e9) - (0.13 + 3.87 * 2)) < 1e-12
    assert abs(f(5e8) - (0.4 + 0.9 / 2)) < 1e-12
    with pytest.raises(ValueError):
        estimate.predictor([])


@pytest.mark.oclgrind
def test_oclgrind_stats(device):
    """The statistics kernel on a tiny case with a constant run (Oclgrind: races,
    uninitialised reads, out-of-bounds accesses fail the test)."""
    m, pad = 5, 8 + 64
    A = np.cumsum(np.random.default_rng(6).standard_normal(30))
    A[10:16] = 2.0
    p = make_plan(device, Problem(m))
    sA = series.Side(device, A, m, p, True, pad)
    W = np.lib.stride_tricks.sliding_window_view(A, m)
    np.testing.assert_allclose(sA.mu_h, W.mean(1), atol=1e-12)


# ---------------------------------------------------------------------------------------------
# segment length R against m

def _check_segment_scales_with_m(device):
    import copy
    import types
    from clts.runtime.profiles import Profile
    floor = make_plan(device, Problem(3)).segment
    spm = device.profile.get("mp.diag.segment_per_m")
    for m in (64, 256, 2048):
        assert make_plan(device, Problem(m)).segment == max(floor, -(-spm * m // 1024) * 1024)
        assert make_plan(device, Problem(m), segment_per_m=8).segment == max(floor, -(-8 * m // 1024)
                                                                      * 1024)
        assert make_plan(device, Problem(m), segment=3000).segment == 3000
    values = copy.deepcopy(device.profile.values)
    # a CPU-like plan whatever the device's profile (a GPU's local-memory tiles would ask the
    # fake device for its local memory)
    values["mp"]["diag"].update(segment=1024, segment_per_m=4, lanes=8, groups=8, wg=1,
                                store="private", topk_store="local", groups_per_cu=0, fold=0,
                                interleave=0)
    prof = Profile(values, {}, [], 0)
    fake = types.SimpleNamespace(profile=prof, platform="x", int64_atomics=True,
                                 max_work_group=1024)
    assert make_plan(fake, Problem(2048)).segment == 8192
    assert make_plan(fake, Problem(2048), segment_per_m=16).segment == 32768
    with pytest.raises(ValueError):
        make_plan(fake, Problem(64), segment_per_m=0)
    return floor


def test_segment_scales_with_m(device):
    """R = segment_per_m * m rows (rounded up to 1024, at least the profile's segment) unless
    segment is forced; segment_per_m from the keyword, else the profile, else the default;
    on this device and under every emulated GPU's profile (the rule holds on any device)."""
    import clts
    from emulated import gpus_over_pocl
    floor = _check_segment_scales_with_m(device)
    for emu in gpus_over_pocl().values():
        _check_segment_scales_with_m(emu)
    T = np.cumsum(np.random.default_rng(2).standard_normal(300))
    res = clts.matrix_profile(T, 40, device=device, segment_per_m=1)
    assert res.plan.segment == max(floor, 1024)
