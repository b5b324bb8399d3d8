"""Matrix profile, the parts around the diagonal kernel: per-window statistics (against exact
rational arithmetic), and the run-time estimate's calibration logic (fake timings)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from clts.mp import api
from clts.mp.plan import make_plan


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
    p = make_plan(device, m=m)
    s = api._Side(device, T, m, p, normalize, 0)
    W = np.lib.stride_tricks.sliding_window_view(T, m)
    assert len(s.mu_h) == n - m + 1
    ex = np.array([_exact_stats(w) for w in W])
    const = np.all(W == W[:, :1], axis=1)
    np.testing.assert_array_equal(s.flags == 2, const)
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
    p = make_plan(device, precision="single", m=m)
    s = api._Side(device, T, m, p, True, 0)
    W = np.lib.stride_tricks.sliding_window_view(s.Tc, m)
    np.testing.assert_allclose(s.mu_h, W.mean(1), rtol=0, atol=1e-5 * np.max(np.abs(T)))
    ss = ((W - W.mean(1)[:, None]) ** 2).sum(1)
    ok = ss > 1e-3 * m
    np.testing.assert_allclose(s.ss_h[ok], ss[ok], rtol=1e-5)
