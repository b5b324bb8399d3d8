"""clts.stumpi with k > 1 (stumpy.stumpi's top-k: P_ / I_ [l, k], left profile top-1): equal to
stumpy.stumpi / aampi on random streams, growing and with egress, by every path (points on the
host, blocks on the device, both mixed); the paths agree with each other and with a full
recompute on series with plateaus, NaN and inf (exact ties: distance, then index)."""
from __future__ import annotations

import numpy as np
import pytest
from stumpy_anchor import run_stumpy

import clts
import clts.compat.stumpy as cs
from clts.mp import reference as ref
from clts.mp.stream_topk import best_k, insert

M, K, N0, N1 = 12, 3, 150, 240

STUMPY_SCRIPT = r"""
import sys, numpy as np, stumpy
d = dict(np.load(sys.argv[1]))
T, n0, m, k = d["T"], int(d["n0"]), int(d["m"]), int(d["k"])
o = {}
for egress in (0, 1):
    for name, make in (("z", lambda: stumpy.stumpi(T[:n0], m, egress=bool(egress), k=k)),
                       ("p1", lambda: stumpy.aampi(T[:n0], m, egress=bool(egress), p=1.0,
                                                   k=k - 1))):
        s = make()
        for t in T[n0:]:
            s.update(t)
        for a in ("P_", "I_", "left_P_", "left_I_", "T_"):
            o[f"{name}{egress}{a}"] = getattr(s, a)
np.savez(sys.argv[2], **o)
"""

#: (host_points, update sizes): points on the host, device blocks, mixed
PATHS = {"host": (None, [1] * (N1 - N0)), "device": (0, [1] * 6 + [44, 40]),
         "mixed": (30, [1] * 5 + [25] + [1] * 20 + [40])}


@pytest.fixture(scope="module")
def walk():
    return np.cumsum(np.random.default_rng(41).standard_normal(N1))


@pytest.fixture(scope="module")
def anchor(tmp_path_factory, walk):
    return run_stumpy(tmp_path_factory, "stumpi_topk", STUMPY_SCRIPT,
                      dict(T=walk, n0=N0, m=M, k=K))


def _run(T, device, egress, normalize, path, k=K, p=2.0):
    hp, steps = PATHS[path]
    kw = {} if hp is None else dict(host_points=hp)
    s = clts.stumpi(T[:N0], M, egress=egress, normalize=normalize, p=p, k=k, device=device,
                    lazy_points=1, **kw)
    a = N0
    for b in steps:
        s.update(T[a] if b == 1 else T[a:a + b])
        a += b
    return s


def _close(P, W, atol=1e-8):
    assert P.shape == W.shape
    assert np.array_equal(np.isfinite(P), np.isfinite(W))
    f = np.isfinite(W)
    np.testing.assert_allclose(P[f], W[f], atol=atol, rtol=0)


@pytest.mark.parametrize("egress", [False, True])
@pytest.mark.parametrize("path", list(PATHS))
def test_against_stumpy(device, walk, anchor, egress, path):
    for name, normalize, p, k in (("z", True, 2.0, K), ("p1", False, 1.0, K - 1)):
        s = _run(walk, device, egress, normalize, path, k=k, p=p)
        want = {a: anchor[f"{name}{int(egress)}{a}"] for a in ("P_", "I_", "left_P_", "left_I_")}
        _close(s.P_, want["P_"])
        np.testing.assert_array_equal(s.I_, want["I_"])
        _close(s.left_P_, want["left_P_"])
        np.testing.assert_array_equal(s.left_I_, want["left_I_"])
        np.testing.assert_allclose(s.T_, anchor[f"{name}{int(egress)}T_"])
    # the compat module: stumpy's signature and layout
    c = cs.stumpi(walk[:N0], M, egress=egress, k=K, device=device)
    for t in walk[N0:]:
        c.update(t)
    np.testing.assert_array_equal(c.I_, anchor[f"z{int(egress)}I_"])
    assert c.P_.shape == (N0 - M + 1 if egress else N1 - M + 1, K)


def _ties():
    """Plateaus (constant windows: exact ties), NaN and inf in the start and the stream."""
    x = np.cumsum(np.random.default_rng(43).standard_normal(N1))
    x[40:60] = 1.0
    x[170:195] = 1.0
    x[100], x[120], x[210] = np.nan, np.inf, np.nan
    return x


def _listed_at_their_distances(s, T, normalize):
    """Every listed neighbour (a growing series: every index is a window of T) lies at its
    listed distance (exact ties beyond k may list any of the tied windows: the batch top-k
    keeps those its kernel met first)."""
    D = ref.distance_matrix(T, M, normalize=normalize)
    P, I = s.P_, s.I_
    l = np.arange(len(P))[:, None]
    assert np.all((I >= 0) == np.isfinite(P))
    assert np.all((np.abs(I - l) > int(np.ceil(M / 4))) | (I < 0))
    got = D[np.broadcast_to(l, I.shape), np.maximum(I, 0)]
    np.testing.assert_allclose(np.where(I >= 0, got, np.inf), P, atol=1e-8, rtol=0)
    lI = s.left_I_
    assert np.all(lI < l[:, 0]) and np.all((lI >= 0) == np.isfinite(s.left_P_))
    got = D[l[:, 0], np.maximum(lI, 0)]
    np.testing.assert_allclose(np.where(lI >= 0, got, np.inf), s.left_P_, atol=1e-8, rtol=0)


@pytest.mark.parametrize("normalize", [True, False])
def test_paths_agree_and_grow_to_the_full_profile(device, normalize):
    T = _ties()
    for egress in (True, False):
        runs = [_run(T, device, egress, normalize, path) for path in PATHS]
        for s in runs[1:]:
            _close(s.P_, runs[0].P_)
            _close(s.left_P_, runs[0].left_P_)
    r = clts.matrix_profile(T, M, k=K, normalize=normalize, device=device)
    for s in runs:
        _close(s.P_, np.asarray(r.P))
        _close(s.left_P_, np.asarray(r.left_P))
        _listed_at_their_distances(s, T, normalize)
    # the host path, one point at a time, keeps stumpy's rule on ties: distance, then index
    Dm = ref.distance_matrix(T, M, normalize=normalize)
    ez = int(np.ceil(M / 4))
    idx = np.arange(len(Dm))
    Dm[np.abs(idx[:, None] - idx[None, :]) <= ez] = np.inf
    Dm[~np.isfinite(Dm)] = np.inf
    V, J = best_k(Dm[N0 - M + 1:].T, K)      # the windows the stream added (their rows)
    host = runs[0]
    np.testing.assert_array_equal(host.I_[N0 - M + 1:], J)


def test_k_lists_helpers():
    """best_k and insert against a plain sort by (distance, index), with ties and inf."""
    rng = np.random.default_rng(44)
    D = rng.integers(0, 4, (9, 30)).astype(float)
    D[rng.random(D.shape) < 0.3] = np.inf
    for k in (1, 2, 5, 12):
        V, J = best_k(D, k)
        for c in range(D.shape[1]):
            o = [r for r in np.lexsort((np.arange(9), D[:, c])) if np.isfinite(D[r, c])][:k]
            assert list(J[c, :len(o)]) == o and np.all(J[c, len(o):] == -1)
            np.testing.assert_array_equal(V[c, :len(o)], D[o, c])
    P, I = best_k(D, 3)
    d = rng.integers(0, 4, 30).astype(float)
    insert(P, I, np.arange(30), d, 99)
    D2 = np.vstack([D, d])
    V, J = best_k(D2, 3)
    np.testing.assert_array_equal(P, V)
    np.testing.assert_array_equal(I, np.where(J == 9, 99, J))


def test_bad_k(device):
    T = np.arange(50.0) % 7
    for k in (0, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            clts.stumpi(T, 8, k=k, device=device)


@pytest.mark.parametrize("k", [1, 3])
def test_near_block_columns_without_neighbour(k):
    """Old columns with no neighbour yet (limit inf) still get their k best new rows exact."""
    from clts.mp import stream_near
    rng = np.random.default_rng(45)
    m, b, nold = 16, 60, 30
    ext = rng.standard_normal(400)
    l1 = len(ext) - m + 1
    new, cols = np.arange(l1 - b, l1), np.arange(l1 - b - nold, l1)
    mask = np.abs(cols[None, :] - new[:, None]) <= int(np.ceil(m / 4))
    limit = np.where(np.arange(nold) % 2, np.inf, 1e100)
    D = stream_near.near_block(ext, m, cols, b, mask, limit, True, k)
    want = ref.distance_matrix(ext, m)[np.ix_(new, cols)]
    want[mask] = np.inf
    V, J = best_k(want[:, :nold], k)
    got = D[J, np.arange(nold)[:, None]]
    np.testing.assert_allclose(got, V, atol=1e-12, rtol=0)
