"""clts.mass / clts.match / clts.fluss: against the float64 reference and stumpy (random,
plateau and real-looking series), every code version, batch shapes, p-norms, layouts, threads,
chunks, extreme magnitudes, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest

import clts
from concurrency import run_in_threads
from clts.mp import reference as ref

TOL = {"double": 1e-9, "single": 2e-3}


def _kinds(n, seed):
    """Random walk, white noise with a constant plateau and a 1e-9-noise plateau and NaN /
    inf, and a real-looking sensor (daily cycle, trend, noise, a dropout run)."""
    rng = np.random.default_rng(seed)
    walk = np.cumsum(rng.standard_normal(n))
    noisy = rng.standard_normal(n)
    w = min(40, n // 8)
    noisy[n // 6:n // 6 + w] = 2.5
    noisy[n // 2:n // 2 + w] = 1.0 + 1e-9 * rng.standard_normal(w)
    noisy[3 * n // 4] = np.nan
    noisy[3 * n // 4 + w // 2] = np.inf
    t = np.arange(n)
    sensor = (20 + 5 * np.sin(2 * np.pi * t / 144) + 0.002 * t
              + 0.3 * rng.standard_normal(n))
    sensor[n // 3:n // 3 + 10] = np.nan
    return np.stack([walk, noisy, sensor])


def _ref(Q, T, **kw):
    Q = np.atleast_2d(Q)
    T = np.atleast_2d(T)
    k = max(len(Q), len(T))
    return np.array([ref.distance_profile(Q[i % len(Q)], T[i % len(T)], **kw)
                     for i in range(k)])


def _close(D, R, tol):
    assert D.shape == R.shape
    assert np.array_equal(np.isinf(D), np.isinf(R))
    fin = np.isfinite(R)
    assert np.max(np.abs(D[fin] - R[fin]), initial=0) <= tol


VERSIONS = [dict(lanes=8, chains=2), dict(lanes=1, chains=1), dict(lanes=4, chains=3, wg=4),
            dict(lanes=16, chains=1), dict(lanes=2, chains=4, wg=1)]


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: "-".join(map(str, v.values())))
def test_one_query_against_many(device, version):
    T = _kinds(700, 1)
    for Q in (T[0, 100:140], T[1, 160:200], T[2, 300:340]):   # incl. a constant query
        D = clts.mass(Q, T, device=device, **version)
        _close(D, _ref(Q, T), TOL["double"])
    Q = T[0, 100:140]
    D = clts.mass(Q, T[0], device=device, **version)
    assert D.shape == (661,) and D[100] == 0.0            # the query's own window: 0 exactly


@pytest.mark.parametrize("normalize", [True, False])
def test_batch_shapes(device, normalize):
    T = _kinds(500, 2)
    Qs = np.stack([T[0, 10:42], T[2, 200:232], T[1, 250:282]])
    each = clts.mass(Qs, T, normalize=normalize, device=device)
    _close(each, _ref(Qs, T, normalize=normalize), TOL["double"])
    many = clts.mass(Qs, T[2], normalize=normalize, device=device)
    _close(many, _ref(Qs, T[2], normalize=normalize), TOL["double"])
    one = clts.mass(Qs[:1], T[2], normalize=normalize, device=device)
    assert one.shape == (1, 469)
    with pytest.raises(ValueError, match="Q has 3 queries and T 2"):
        clts.mass(Qs, T[:2], device=device)


@pytest.mark.parametrize("p", [1, 2, 3, 1.5, np.inf])
def test_plain_minkowski(device, p):
    T = _kinds(400, 3)
    Q = T[2, 50:80] + 0.1
    D = clts.mass(Q, T, normalize=False, p=p, device=device, lanes=8, chains=2)
    _close(D, _ref(Q, T, normalize=False, p=p), 1e-9 * max(1.0, float(np.nanmax(D[
        np.isfinite(D)]))))
    # p is ignored when normalising (as stumpy)
    np.testing.assert_array_equal(clts.mass(Q, T, p=p, device=device),
                                  clts.mass(Q, T, device=device))


def test_extreme_magnitudes(device):
    T = _kinds(300, 4)[[0, 2]]
    Q = T[0, 30:60]
    D = clts.mass(Q, T, device=device)
    for s in (1e300, 1e-300, 2.0 ** 1000):
        _close(clts.mass(Q * s, T * s, device=device), D, 1e-9)
    Dp = clts.mass(Q, T, normalize=False, device=device)
    for s in (1e200, 1e-200):
        Ds = clts.mass(Q * s, T * s, normalize=False, device=device)
        _close(Ds / s, Dp, 1e-9 * np.nanmax(Dp[np.isfinite(Dp)]))
    offset = clts.mass(Q + 1e6, T + 1e6, device=device)    # a large offset: cancellation
    _close(offset, D, 1e-6)


def test_single_precision(device):
    T = _kinds(500, 5)[[0, 2]]
    Q = T[0, 40:104]
    D = clts.mass(Q, T, precision="single", device=device)
    assert D.dtype == np.float32
    R = _ref(Q.astype(np.float32), T.astype(np.float32))
    _close(D.astype(np.float64), R, TOL["single"] * math.sqrt(64))


def test_layouts_and_chunks(device, monkeypatch):
    T = np.ascontiguousarray(_kinds(600, 6))
    Q = T[0, 10:50].copy()
    D = clts.mass(Q, T, device=device)
    big = T.astype(">f8")
    assert np.array_equal(clts.mass(Q.astype(">f8"), big, device=device), D)
    assert np.array_equal(clts.mass(Q, np.asfortranarray(T), device=device), D)
    wide = np.zeros((6, 1200))
    wide[::2, ::2] = T
    assert np.array_equal(clts.mass(Q, wide[::2, ::2], device=device), D)
    assert np.array_equal(clts.mass(Q[::-1][::-1], T[:, ::-1][:, ::-1], device=device), D)
    monkeypatch.setenv("CLTS_MAX_CHUNK", "1")               # one series per chunk
    assert np.array_equal(clts.mass(Q, T, device=device), D)
    assert np.array_equal(clts.mass(np.stack([Q] * 3), T, device=device), D)


def test_threads(device):
    T = _kinds(500, 7)
    Qs = [T[0, 10:50], T[2, 100:132], T[0, 200:216]]
    want = [clts.mass(Q, T, device=device) for Q in Qs]
    got = run_in_threads(lambda i: clts.mass(Qs[i % 3], T, device=device), 6)
    for i in range(6):
        assert np.array_equal(got[i], want[i % 3])


def test_match_conventions(device):
    rng = np.random.default_rng(8)
    T = np.cumsum(rng.standard_normal(1500))
    Q = T[200:240].copy()
    T[900:940] = Q * 3 + 7                                 # z-normalised: an exact repeat
    T[1200:1240] = Q + 0.05 * rng.standard_normal(40)
    r = clts.match(Q, T, device=device)
    D = ref.distance_profile(Q, T)
    assert list(r[:3, 1]) == [200, 900, 1200]
    ez = math.ceil(40 / 4)
    idx = r[:, 1].astype(int)
    assert np.all(np.abs(idx[:, None] - idx[None, :])[~np.eye(len(idx), dtype=bool)] > ez)
    np.testing.assert_allclose(r[:, 0].astype(float), D[idx], atol=1e-9)
    assert np.all(np.diff(r[:, 0].astype(float)) >= 0)
    fin = D[np.isfinite(D)]
    thr = max(fin.mean() - 2 * fin.std(), fin.min())
    assert np.all(r[:, 0].astype(float) <= thr + 1e-8)
    assert len(clts.match(Q, T, max_matches=2, device=device)) == 2
    assert len(clts.match(Q, T, max_distance=lambda d: 1e-6, device=device)) == 2
    first = clts.match(Q, T, query_idx=900, max_distance=5.0, device=device)
    assert first[0, 1] == 900 and first[0, 0] == 0
    batch = clts.match(Q, np.stack([T, T[::-1].copy()]), max_distance=3.0, device=device)
    assert isinstance(batch, list) and len(batch) == 2
    assert np.array_equal(batch[0][:, 1], clts.match(Q, T, max_distance=3.0,
                                                     device=device)[:, 1])
    with pytest.raises(ValueError, match="Q contains illegal"):
        clts.match(np.r_[Q[:-1], np.nan], T, device=device)


STUMPY_SCRIPT = """
import sys, numpy as np, stumpy
from stumpy.floss import _iac
d = np.load(sys.argv[1])
T, Qs, I, k = d["T"], d["Qs"], d["I"], len(d["I"])
out = {}
for q, Q in enumerate(Qs):
    out[f"mass{q}"] = np.array([stumpy.mass(Q, t) for t in T])
    for p in (1.0, 2.0, 3.0):
        out[f"abs{q}_{p}"] = np.array([stumpy.mass(Q, t, normalize=False, p=p) for t in T])
    out[f"match{q}"] = stumpy.match(Q, T[0]).astype(float)
S, new = d["S"], d["new"]
for egress in (False, True):
    st = stumpy.stumpi(S, 20, egress=egress)
    for x in new:
        st.update(x)
    for a in ("P_", "I_", "left_P_", "left_I_"):
        out[f"stumpi{int(egress)}{a}"] = getattr(st, a)
for egress in (False, True):
    st = stumpy.stumpi(S, 20, egress=egress, normalize=False, p=3.0)
    for x in new:
        st.update(x)
    out[f"aampi{int(egress)}P_"], out[f"aampi{int(egress)}I_"] = st.P_, st.I_
for p in (1.0, 3.0):
    out[f"aamp{p}"] = stumpy.aamp(S[:200], 16, p=p).astype(float)
iac = _iac(k, bidirectional=True)
cac, locs = stumpy.fluss(I, 40, 3, custom_iac=iac.copy())
out.update(iac=iac, cac=cac, locs=locs)
np.savez(sys.argv[2], **out)
"""


def _regimes(n, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    a = np.sin(2 * np.pi * t / 37)
    b = np.sign(np.sin(2 * np.pi * t / 53))
    c = np.sin(2 * np.pi * t / 23) ** 3
    T = np.where(t < n // 3, a, np.where(t < 2 * n // 3, b, c))
    return T + 0.15 * rng.standard_normal(n)


@pytest.fixture(scope="module")
def stumpy_anchor(tmp_path_factory):
    """stumpy on small inputs, once, in a subprocess with NUMBA_DISABLE_JIT=1 (its JIT
    warm-up costs more than the interpreted run)."""
    import os
    import subprocess
    import sys
    pytest.importorskip("stumpy")
    d = tmp_path_factory.mktemp("stumpy_mass")
    T = _kinds(360, 9)[[0, 2]]
    Qs = np.stack([T[0, 50:82], T[1, 200:232]])
    R = _regimes(1800, 10)
    I = clts.matrix_profile(R, 40, progress=False).I[:, 0]
    S = np.cumsum(np.random.default_rng(14).standard_normal(300))
    new = np.random.default_rng(15).standard_normal(50)
    new[20] = np.nan
    np.savez(d / "in.npz", T=T, Qs=Qs, I=I, S=S, new=new)
    (d / "run.py").write_text(STUMPY_SCRIPT)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, str(d / "run.py"), str(d / "in.npz"), str(d / "out.npz")],
                   check=True, env=env, timeout=300)
    return T, Qs, I, dict(np.load(d / "out.npz"), S=S, new=new)


def test_against_stumpy(device, stumpy_anchor):
    T, Qs, I, out = stumpy_anchor
    for q, Q in enumerate(Qs):
        D = clts.mass(Q, T, device=device)
        # stumpy works from a sliding dot product: agreement to its cancellation, which is in
        # the squared distance (the query's own window: 0 here, 1.4e-6 = sqrt(1.8e-12) from
        # stumpy on an AMD EPYC without AVX-512, whose FFT rounds otherwise than a
        # Cascade Lake's)
        _close(D ** 2, out[f"mass{q}"] ** 2, 1e-10)
        for p in (1.0, 2.0, 3.0):
            _close(clts.mass(Q, T, normalize=False, p=p, device=device), out[f"abs{q}_{p}"],
                   1e-7)
        r = clts.match(Q, T[0], device=device)
        s = out[f"match{q}"]
        np.testing.assert_array_equal(r[:, 1].astype(int), s[:, 1].astype(int))
        np.testing.assert_allclose(r[:, 0].astype(float) ** 2, s[:, 0] ** 2, atol=1e-10)
    cac, locs = clts.fluss(I, 40, 3, custom_iac=out["iac"])
    np.testing.assert_allclose(cac, out["cac"], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(locs, out["locs"])


@pytest.mark.parametrize("egress", [False, True])
def test_stumpi_against_stumpy(device, stumpy_anchor, egress):
    out = stumpy_anchor[3]
    S, new = out["S"], out["new"]
    for normalize, key in ((True, "stumpi"), (False, "aampi")):
        s = clts.stumpi(S, 20, egress=egress, normalize=normalize, p=3.0, device=device)
        for x in new[:10]:
            s.update(x)
        s.update(new[10:35])                               # a block: the same result
        for x in new[35:]:
            s.update(x)
        want = out[f"{key}{int(egress)}P_"]
        fin = np.isfinite(want)
        assert np.array_equal(np.isfinite(s.P_), fin)
        np.testing.assert_allclose(s.P_[fin], want[fin], atol=1e-8)
        assert np.mean(s.I_ == out[f"{key}{int(egress)}I_"]) > 0.99
        if normalize:
            np.testing.assert_array_equal(s.left_I_, out[f"stumpi{int(egress)}left_I_"])
            lp = out[f"stumpi{int(egress)}left_P_"]
            np.testing.assert_allclose(s.left_P_[np.isfinite(lp)], lp[np.isfinite(lp)],
                                       atol=1e-8)
    assert len(s.T_) == (300 if egress else 350)


def test_stumpi_grows_to_the_full_profile(device):
    rng = np.random.default_rng(16)
    T = np.cumsum(rng.standard_normal(500))
    s = clts.stumpi(T[:300], 24, egress=False, device=device)
    s.update(T[300:330])
    for x in T[330:]:
        s.update(x)
    r = ref.matrix_profile(T, 24)
    np.testing.assert_allclose(s.P_, r["P"][:, 0], atol=1e-8)
    np.testing.assert_allclose(s.left_P_, r["left_P"], atol=1e-8)
    assert np.mean(s.I_ == r["I"][:, 0]) > 0.99
    with pytest.raises(ValueError, match="m must be"):
        clts.stumpi(T, 2)
    with pytest.raises(ValueError, match="t must be"):
        s.update(np.ones((2, 2)))


def _tie_ok(P, I, D, Pr, tol):
    """P within tol of the reference row minima; I a neighbour at that distance."""
    fin = np.isfinite(Pr)
    assert np.array_equal(np.isfinite(P), fin)
    assert np.max(np.abs(P[fin] - Pr[fin]), initial=0) <= tol
    rows = np.nonzero(fin)[0]
    np.testing.assert_allclose(D[rows, I[rows]], Pr[rows], atol=tol, rtol=0)


@pytest.mark.parametrize("p", [1.0, 3.0, np.inf])
def test_aamp_p_norms(device, p):
    T = _kinds(260, 17)[1]                     # white noise, plateaus, NaN / inf
    m, ez = 16, 4
    r = clts.aamp(T, m, p=p, k=3, device=device)
    W = np.lib.stride_tricks.sliding_window_view(T, m)
    D = np.array([ref.distance_profile(w, T, normalize=False, p=p) for w in W])
    ii, jj = np.indices(D.shape)
    D[np.abs(ii - jj) <= ez] = np.inf
    Ps = np.sort(D, axis=1)
    for c in range(3):
        _tie_ok(r.P[:, c], r.I[:, c], D, Ps[:, c], 1e-9)
    _tie_ok(r.left_P, r.left_I, np.where(jj < ii, D, np.inf),
            np.min(np.where(jj < ii, D, np.inf), axis=1), 1e-9)
    _tie_ok(r.right_P, r.right_I, np.where(jj > ii, D, np.inf),
            np.min(np.where(jj > ii, D, np.inf), axis=1), 1e-9)
    ab = clts.aamp(T[:120], m, T[100:], p=p, device=device)
    Dab = np.array([ref.distance_profile(w, T[100:], normalize=False, p=p) for w in W[:105]])
    _tie_ok(ab.P[:, 0], ab.I[:, 0], Dab, np.min(Dab, axis=1), 1e-9)
    two = clts.aamp(T, m, p=2, device=device, progress=False)   # the diagonal kernel
    np.testing.assert_allclose(two.P, clts.matrix_profile(T, m, normalize=False,
                                                          device=device).P)


def test_aamp_against_stumpy(device, stumpy_anchor):
    out = stumpy_anchor[3]
    S = out["S"][:200]
    for p in (1.0, 3.0):
        s = out[f"aamp{p}"]
        r = clts.aamp(S, 16, p=p, device=device)
        # stumpy's rolling p-th power sums drift (1e-5 here); clts' distances are exact
        np.testing.assert_allclose(r.P[:, 0], s[:, 0], atol=1e-4)
        assert np.mean(r.I[:, 0] == s[:, 1]) > 0.95


def test_fluss_regimes_and_reference(device):
    R = _regimes(1800, 11)
    r = clts.matrix_profile(R, 40, device=device)
    cac, locs = clts.fluss(r, 40, 3)
    assert np.max(np.abs(np.sort(locs) - [600, 1200])) < 60
    # the arc curve against the definition: arcs (i, I[i]) over each position
    I = r.I[:, 0]
    ac = np.array([np.sum((np.minimum(np.arange(len(I)), I) <= x)
                          & (np.maximum(np.arange(len(I)), I) > x)) for x in range(len(I))])
    from clts.mp.fluss import arc_curve
    np.testing.assert_array_equal(arc_curve(I), ac)
    assert np.all((cac >= 0) & (cac <= 1))
    with pytest.raises(ValueError, match="n_regimes"):
        clts.fluss(I, 40, 0)
    with pytest.raises(ValueError, match="custom_iac"):
        clts.fluss(I, 40, 2, custom_iac=np.ones(3))


def test_bad_input(device):
    T = np.random.default_rng(12).standard_normal((2, 100))
    with pytest.raises(ValueError, match="m >= 3"):
        clts.mass(T[0, :2], T, device=device)
    with pytest.raises(ValueError, match="fewer than the query length"):
        clts.mass(T[0, :50], T[:, :40], device=device)
    with pytest.raises(ValueError, match="p must be"):
        clts.mass(T[0, :10], T, normalize=False, p=0.5, device=device)
    with pytest.raises(TypeError, match="T must hold real"):
        clts.mass(T[0, :10], T.astype(complex), device=device)
    with pytest.raises(ValueError, match="T must be 1-D or 2-D"):
        clts.mass(T[0, :10], T[None], device=device)
    with pytest.raises(ValueError, match="lanes"):
        clts.mass(T[0, :10], T, lanes=3, device=device)
    with pytest.raises(TypeError, match="unknown parameter"):
        clts.mass(T[0, :10], T, tile=3, device=device)
    with pytest.raises(ValueError, match="query_idx"):
        clts.mass(T[0, :10], T, query_idx=500, device=device)
    nan_q = clts.mass(np.r_[T[0, :9], np.nan], T, device=device)
    assert np.all(np.isinf(nan_q))                         # stumpy.mass's convention


@pytest.mark.oclgrind
@pytest.mark.parametrize("normalize", [True, False])
def test_oclgrind_tiny(device, normalize):
    T = _kinds(80, 13)[[0, 1]]
    Q = T[0, 5:21]
    for v in (dict(lanes=4, chains=2), dict(lanes=1, chains=1)):
        D = clts.mass(Q, T, normalize=normalize, p=2 if normalize else 3, device=device, **v)
        _close(D, _ref(Q, T, normalize=normalize, p=3.0 if not normalize else 2.0), 1e-9
               if normalize else 1e-9 * np.nanmax(D[np.isfinite(D)]))


def test_layouts_of_the_other_entry_points(device):
    T = np.cumsum(np.random.default_rng(18).standard_normal(300))
    wide = np.zeros(600)
    wide[::2] = T
    for X in (T.astype(">f8"), wide[::2], T[::-1].copy()[::-1]):
        np.testing.assert_array_equal(clts.aamp(X, 12, p=1, device=device).P,
                                      clts.aamp(T, 12, p=1, device=device).P)
        a, b = clts.stumpi(X[:250], 12, device=device), clts.stumpi(T[:250], 12, device=device)
        a.update(X[250:]), b.update(T[250:])
        np.testing.assert_array_equal(a.P_, b.P_)
        np.testing.assert_array_equal(clts.match(X[40:60], X, device=device),
                                      clts.match(T[40:60], T, device=device))
    Q2 = np.asfortranarray(np.stack([T[:20], T[50:70]]))
    np.testing.assert_array_equal(clts.mass(Q2, T, device=device),
                                  clts.mass(np.ascontiguousarray(Q2), T, device=device))


@pytest.mark.parametrize("normalize", [True, False])
def test_device_views_at_an_offset(device, normalize):
    """mass / match of device arrays that start inside their buffer (a query cut from the
    series, rows of a batch): pyopencl's ArrayHasOffsetError before."""
    if not device.fp64:
        pytest.skip("float64 device arrays")
    import pyopencl.array as cla
    rng = np.random.default_rng(7)
    T = np.cumsum(rng.standard_normal(400))
    T2 = np.cumsum(rng.standard_normal((3, 200)), axis=1)
    q = device.queue
    td, t2d = cla.to_device(q, T), cla.to_device(q, T2)
    kw = dict(normalize=normalize, device=device)
    got = clts.mass(td[100:120], td, **kw).get()
    np.testing.assert_allclose(got, clts.mass(T[100:120], T, **kw), rtol=1e-9, atol=1e-9)
    got = clts.mass(td[100:120], td[3:], **kw).get()
    np.testing.assert_allclose(got, clts.mass(T[100:120], T[3:], **kw), rtol=1e-9, atol=1e-9)
    got = clts.mass(cla.to_device(q, T2[1, 5:25].copy()), t2d[1:], **kw).get()
    np.testing.assert_allclose(got, clts.mass(T2[1, 5:25], T2[1:], **kw), rtol=1e-9, atol=1e-9)
    m = clts.match(td[100:120], td, max_distance=3.0, **kw)
    want = clts.match(T[100:120], T, max_distance=3.0, **kw)
    np.testing.assert_allclose(np.asarray(clts.to_numpy(m), float), np.asarray(want, float),
                               rtol=1e-9, atol=1e-9)
