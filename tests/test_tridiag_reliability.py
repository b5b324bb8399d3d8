"""clts.solve_tridiagonal's reliability diagnostic (backward error and pivot growth, one
host-side formula): every version flags a near-singular system the same way, ordinary
systems are never flagged, and ``out=`` is checked before anything is solved."""
from __future__ import annotations

import numpy as np
import pytest

from clts.tridiag import VERSIONS, solve_tridiagonal
from clts.tridiag.reliability import assess

from test_tridiag import dominant


def near_singular(batch=6, n=64, dtype=np.float64):
    """All-ones rows, one diagonal 1 + 1e-15: a tiny second pivot and no zero one."""
    rng = np.random.default_rng(0)
    a, b, c = (np.ones((batch, n)) for _ in range(3))
    b[:, 1] = 1 + 1e-15
    d = rng.standard_normal((batch, n))
    return [v.astype(dtype) for v in (a, b, c, d)]


@pytest.mark.parametrize("n", [5, 64])
@pytest.mark.parametrize("method", VERSIONS)
def test_near_singular_flagged_by_every_version(device, method, n):
    """A tiny and a longer system (each n its own programs: thomas and thomas-unrolled
    build n into the kernel, pcr its work-group; n = 5 already runs the unrolled blocks)."""
    a, b, c, d = near_singular(n=n if method != "thomas-unrolled" or n < 64 else 15)
    ok = dominant(np.random.default_rng(1), (3, a.shape[1]))
    a, b, c, d = (np.concatenate([v, w]) for v, w in zip((a, b, c, d), ok))
    r = solve_tridiagonal(a, b, c, d, version=method, device=device)
    g = r.diagnostics
    assert g["unreliable"] == 6 and r.unreliable == 6
    assert (r.pivot_growth[:6] > 1e12).all() and (r.pivot_growth[6:] <= 3).all()
    assert (r.backward_error[6:] < 8 * np.finfo(np.float64).eps).all()
    assert g["max_pivot_growth"] > 1e12
    # the same systems, system axis first: the same verdict
    rt = solve_tridiagonal(a.T, b.T, c.T, d.T, axis=0, version=method, device=device)
    assert rt.unreliable == 6 and rt.backward_error.shape == (9,)


@pytest.mark.parametrize("method", VERSIONS)
def test_ordinary_systems_are_reliable(device, method):
    rng = np.random.default_rng(2)
    n = 15 if method == "thomas-unrolled" else 64      # float64: near_singular's programs
    for dtype in (np.float64, np.float32):
        a, b, c, d = dominant(rng, (4, 3, n), dtype)
        r = solve_tridiagonal(a, b, c, d, version=method, device=device)
        assert r.unreliable == 0 and r.backward_error.shape == (4, 3)
        assert (r.pivot_growth <= 3).all()
    # not diagonally dominant but harmless (the TKE routine's systems)
    a = -rng.uniform(0, 1, (12, n))
    c = -rng.uniform(0, 1, (12, n))
    b = 1 + rng.uniform(0, 0.5, (12, n))
    r = solve_tridiagonal(a, b, c, rng.standard_normal((12, n)), version=method, device=device)
    assert r.diagnostics["unreliable"] == 0


@pytest.mark.parametrize("method", VERSIONS)
def test_start_rows_and_land_are_not_flagged(device, method):
    rng = np.random.default_rng(3)
    n, batch = 15, 9
    a, b, c, d = dominant(rng, (batch, n))
    start = np.array([0, 3, n - 1, n, -1, 5, 7, 0, 2])
    for v in (a, b, c, d):
        v[np.arange(n)[None, :] < start[:, None]] = np.nan     # garbage above the start
    r = solve_tridiagonal(a, b, c, d, version=method, start=start, device=device)
    assert r.unreliable == 0
    assert r.backward_error[3] == r.backward_error[4] == 0       # land


def test_device_arrays_assessed_after_download(device):
    import pyopencl.array as cla
    a, b, c, d = near_singular(batch=4, n=32)
    dev = [cla.to_device(device.queue, np.ascontiguousarray(v)) for v in (a, b, c, d)]
    r = solve_tridiagonal(*dev, version="thomas", device=device)
    assert r.unreliable == 4


def test_backward_error_formula():
    rng = np.random.default_rng(4)
    n = 7
    a, b, c, d = dominant(rng, (1, n))
    A = np.diag(b[0]) + np.diag(a[0, 1:], -1) + np.diag(c[0, :-1], 1)
    x = np.linalg.solve(A, d[0]) * (1 + 1e-6)                   # a perturbed answer
    eta, growth = assess(a, b, c, d, x[None])
    want = np.abs(A @ x - d[0]).max() / (np.abs(A).sum(1).max() * np.abs(x).max()
                                         + np.abs(d).max())
    assert eta[0] == pytest.approx(want, rel=1e-12)
    L, U = np.eye(n), np.zeros((n, n))                          # LU without pivoting
    p = b[0, 0]
    for i in range(n):
        if i:
            L[i, i - 1] = a[0, i] / p
            p = b[0, i] - L[i, i - 1] * c[0, i - 1]
        U[i, i] = p
        if i < n - 1:
            U[i, i + 1] = c[0, i]
    assert growth[0] == pytest.approx((np.abs(L) @ np.abs(U)).sum(1).max()
                                      / np.abs(A).sum(1).max(), rel=1e-12)


def test_read_only_out_refused_before_solving(device, monkeypatch):
    from clts.tridiag import api
    a, b, c, d = dominant(np.random.default_rng(5), (3, 15))
    out = np.zeros((3, 15))
    out.flags.writeable = False

    def boom(*args, **kw):
        raise AssertionError("solved before checking out=")
    monkeypatch.setattr(api, "run_plan", boom)
    with pytest.raises(ValueError, match="out is read-only"):
        solve_tridiagonal(a, b, c, d, out=out, device=device)
