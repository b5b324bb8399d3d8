"""clts.stumpi's two paths: single points on the host (the sliding dot product as a filter,
exact distances for the undecided windows) and blocks on the device give the same profile,
equal to a full recompute, on random, plateau / NaN / inf and offset sensor series, with and
without egress, z-normalised and plain; threads, layouts, the plan's cost rule. (Against
stumpy.stumpi: tests/test_mp_mass.py.)"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clts
from concurrency import run_in_threads
from clts.mp import reference as ref
from clts.mp import stream_host
from clts.mp.stream_plan import StreamPlan

M = 16


def _series(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "walk":
        return np.cumsum(rng.standard_normal(n))
    if kind == "plateaus":                    # constant and 1e-9-noise plateaus, NaN, inf
        x = rng.standard_normal(n)
        x[n // 5:n // 5 + 30] = 2.5
        x[n // 2:n // 2 + 30] = 1.0 + 1e-9 * rng.standard_normal(30)
        x[2 * n // 3] = np.nan
        x[3 * n // 4] = np.inf
        x[-40:-10] = -1.0                     # a plateau among the appended points
        return x
    t = np.arange(n)                          # a sensor far from 0: daily cycle, trend, noise
    return 1e4 + 5 * np.sin(2 * np.pi * t / 48) + 0.01 * t + 0.3 * rng.standard_normal(n)


def _run(T, n0, device, egress, normalize, steps, **kw):
    """Build on T[:n0], append the rest as ``steps`` (ints: block sizes; 1: a point); every
    update applied at once unless ``lazy_points`` is given."""
    kw.setdefault("lazy_points", 1)
    s = clts.stumpi(T[:n0], M, egress=egress, normalize=normalize, device=device, **kw)
    a = n0
    for b in steps:
        s.update(T[a] if b == 1 else T[a:a + b])
        a += b
    assert a == len(T)
    return s


def _same(s, r, tol=1e-9, frac=0.99):
    P, R = s.P_, r.P_
    assert np.array_equal(np.isfinite(P), np.isfinite(R))
    f = np.isfinite(R)
    np.testing.assert_allclose(P[f], R[f], atol=tol, rtol=0)
    np.testing.assert_allclose(s.left_P_[np.isfinite(r.left_P_)],
                               r.left_P_[np.isfinite(r.left_P_)], atol=tol, rtol=0)
    assert np.mean(s.I_ == r.I_) >= frac and np.mean(s.left_I_ == r.left_I_) >= frac
    assert np.array_equal(s.T_, r.T_, equal_nan=True)


@pytest.mark.parametrize("kind", ["walk", "plateaus", "sensor"])
@pytest.mark.parametrize("egress", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
def test_host_points_equal_device_blocks(device, kind, egress, normalize):
    T = _series(kind, 420, 3)
    steps = [1] * 120
    host = _run(T, 300, device, egress, normalize, steps)
    dev = _run(T, 300, device, egress, normalize, [1] * 10 + [50, 60], host_points=0)
    mixed = _run(T, 300, device, egress, normalize, [1] * 5 + [40] + [1] * 25 + [50],
                 host_points=30)
    lazy = _run(T, 300, device, egress, normalize, steps, lazy_points=None)
    _same(host, dev)
    _same(mixed, dev)
    _same(lazy, dev)
    if not egress:                            # the whole series: a full recompute
        r = ref.matrix_profile(T, M, normalize=normalize)
        f = np.isfinite(r["P"][:, 0])
        assert np.array_equal(np.isfinite(host.P_), f)
        np.testing.assert_allclose(host.P_[f], r["P"][f, 0], atol=1e-8)
        np.testing.assert_allclose(host.left_P_[np.isfinite(r["left_P"])],
                                   r["left_P"][np.isfinite(r["left_P"])], atol=1e-8)


def test_undecided_rows_go_to_the_device(device, monkeypatch):
    """A filter that decides nothing (every window re-evaluated on the host, or the device
    row) and one refreshed at every point: the same profile."""
    T = _series("plateaus", 400, 5)
    want = _run(T, 300, device, True, True, [1] * 100, host_points=0)
    def undecided(self, lim):                # NaN: windows with NaN / inf, never neighbours
        nan = self.nan.view()[:lim]
        return nan - np.inf, nan + np.inf, 0.0
    monkeypatch.setattr(stream_host.HostStream, "bounds", undecided)
    for fraction in (0, 10 ** 9):            # all on the host, all on the device
        monkeypatch.setattr("clts.mp.stream.EXACT_FRACTION", fraction)
        _same(_run(T, 300, device, True, True, [1] * 100), want)
    monkeypatch.undo()
    monkeypatch.setattr("clts.mp.stream.REFRESH", 1)
    _same(_run(T, 300, device, True, True, [1] * 100), want)


def test_nonfinite_points_and_constant_windows(device):
    T = np.cumsum(np.random.default_rng(7).standard_normal(300))
    new = np.r_[np.full(20, 3.0), np.nan, np.random.default_rng(8).standard_normal(20),
                np.inf, -np.inf, np.full(M + 2, 3.0), np.zeros(5)]
    X = np.r_[T, new]
    s = _run(X, 300, device, False, True, [1] * len(new))
    r = ref.matrix_profile(X, M)
    f = np.isfinite(r["P"][:, 0])
    assert np.array_equal(np.isfinite(s.P_), f)
    np.testing.assert_allclose(s.P_[f], r["P"][f, 0], atol=1e-8)
    assert np.all(s.I_[~f] == -1)
    _same(s, _run(X, 300, device, False, True, [len(new)], host_points=0))


@pytest.mark.parametrize("normalize", [True, False])
def test_extreme_magnitudes_leave_the_host(device, normalize):
    """Points whose squares would overflow (or, plain, underflow) go to the device, one
    distance profile per point (a device block's AB-join does not cover windows of 1e200
    beside windows of 1: see docs/matrix-profile.md)."""
    rng = np.random.default_rng(12)
    for scale in (1e200, 1e-200):
        X = np.cumsum(rng.standard_normal(340))
        X[310:320] *= scale
        X[:290] *= scale
        s = _run(X, 290, device, True, normalize, [1] * 50)
        assert s._host is None or scale == 1e-200
        _same(_run(X, 290, device, True, normalize, [1] * 50, lazy_points=None,
                   host_points=64), s)
        _same(s, _run(X, 290, device, True, normalize, [1] * 50, host_points=0))


def test_threads_two_streams(device):
    rng = np.random.default_rng(9)
    Ts = [np.cumsum(rng.standard_normal(500)) for _ in range(2)]
    want = [_run(T, 300, device, True, True, [1] * 200).P_ for T in Ts]
    barrier = threading.Barrier(2)

    def work(i):
        barrier.wait()
        return _run(Ts[i], 300, device, True, True, [1] * 200).P_
    got = run_in_threads(work, 2)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_layouts(device):
    T = np.cumsum(np.random.default_rng(10).standard_normal(360))
    want = _run(T, 300, device, True, True, [1] * 60)
    wide = np.zeros(720)
    wide[::2] = T
    for X in (T.astype(">f8"), wide[::2], np.asfortranarray(T[:, None])[:, 0]):
        s = clts.stumpi(X[:300], M, device=device, lazy_points=1)
        for i in range(300, 360):
            s.update(X[i:i + 1] if i % 2 else X[i])
        np.testing.assert_array_equal(s.P_, want.P_)
        np.testing.assert_array_equal(s.I_, want.I_)


def test_lazy_updates_and_reads(device):
    """Points wait until a read or ``lazy_points`` pending; reads in between, a caller's
    buffer changed after ``update``, and a pending count past the limit change nothing."""
    T = _series("plateaus", 500, 13)
    want = _run(T, 300, device, True, True, [1] * 200)
    s = clts.stumpi(T[:300], M, device=device, lazy_points=50)
    buf = np.empty(1)
    for i in range(300, 500):
        buf[0] = T[i]
        s.update(buf)
        buf[0] = np.nan                       # the caller reuses its buffer
        if i % 37 == 0:
            assert s.P_.shape == (300 - M + 1,)
        if i == 420:
            assert s._npending < 50
    assert s._npending > 0
    repr(s)
    assert s._npending == 0
    _same(s, want)


def test_plan(device):
    T = np.cumsum(np.random.default_rng(11).standard_normal(200))
    with pytest.raises(ValueError, match="host_points"):
        clts.stumpi(T, M, device=device, host_points=-1)
    with pytest.raises(TypeError, match="StreamPlan"):
        clts.stumpi(T, M, device=device, plan={"host_points": 4})
    s = clts.stumpi(T, M, device=device, plan=StreamPlan(host_points=0, lazy_points=1))
    assert s._plan.host_points == 0
    with pytest.raises(ValueError, match="lazy_points"):
        clts.stumpi(T, M, device=device, lazy_points=0)
    with pytest.raises(ValueError, match="subgroup"):
        clts.stumpi(T, M, device=device, plan=StreamPlan(host_points=0, lazy_points=1,
                                                         subgroup=12))
    assert clts.stumpi(T, M, device=device)._plan.host_points >= 1
