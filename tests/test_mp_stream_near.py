"""The near columns of clts.stumpi's device blocks (clts/mp/stream_near.py): the matrix
product as a filter never changes a decision (row minima, left minima, the first row that
beats a column's neighbour equal those of every entry computed exactly, on ties too), and
blocks through it give the profile of blocks through distance profiles."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.mp import stream_near

M = 16


def _series(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "walk":
        return np.cumsum(rng.standard_normal(n))
    if kind == "integers":                    # an integer walk: many exactly equal distances
        return np.cumsum(rng.integers(-1, 2, n)).astype(float)
    if kind == "repeats":                     # one pattern again and again: distances 0
        return np.tile(rng.standard_normal(23), n // 23 + 1)[:n]
    if kind == "offset":
        return 1e6 + np.cumsum(rng.standard_normal(n))
    x = rng.standard_normal(n)                # constant plateaus, NaN, inf
    x[n // 5:n // 5 + 30] = 2.5
    x[2 * n // 3] = np.nan
    x[3 * n // 4] = np.inf
    x[-60:-20] = -1.0
    return x


def _exact_all(ext, m, cols, b, normalize):
    """Every entry by the exact arithmetic (stream_host.exact_distances)."""
    from clts.mp.stream_host import exact_distances, zexact1
    W = np.lib.stride_tricks.sliding_window_view(ext, m)[cols]
    D = np.full((b, len(cols)), np.inf)
    good = np.all(np.isfinite(W), axis=1)
    for r in range(b):
        q = W[len(cols) - b + r]
        zq, qbad, qconst, _, _ = zexact1(q)
        D[r, good] = exact_distances(W[good], zq, qbad, qconst, normalize, q)
    return D


def _decisions(D, b, limit):
    nold = D.shape[1] - b
    left = np.tri(b, D.shape[1], k=nold - 1, dtype=bool)
    L = np.where(left, D, np.inf)
    rr = np.argmin(D[:, :nold], axis=0)
    best = D[rr, np.arange(nold)]
    beats = best < limit
    return (np.min(D, 1), np.argmin(D, 1), np.min(L, 1), np.argmin(L, 1),
            np.where(beats, rr, -1), np.where(beats, best, np.inf))


@pytest.mark.parametrize("kind", ["walk", "integers", "repeats", "offset", "plateaus"])
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("egress", [True, False])
def test_filter_changes_no_decision(kind, normalize, egress):
    b, ez = 40, M // 4
    ext = _series(kind, 300 + b, 4)
    l0 = 300 - M + 1
    l1 = l0 + b
    cols = np.r_[np.arange(b) if egress else np.arange(0), np.arange(l0 - ez, l1)]
    new = np.arange(l0, l1)
    mask = np.abs(cols[None, :] - new[:, None]) <= ez
    if egress:
        mask |= cols[None, :] <= np.arange(b)[:, None]
    full = _exact_all(ext, M, cols, b, normalize)
    full[mask] = np.inf
    # the columns' current neighbours: some beaten, some not, some none
    limit = np.min(full[:, :-b], axis=0)
    limit[::3] *= 1.5
    limit[1::3] *= 0.5
    got = stream_near.near_block(ext, M, cols, b, mask, limit, normalize)
    for g, w in zip(_decisions(got, b, limit), _decisions(full, b, limit)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("kind", ["walk", "integers", "repeats", "offset", "plateaus"])
@pytest.mark.parametrize("normalize", [True, False])
def test_blocks_equal_distance_profile_blocks(device, monkeypatch, kind, normalize):
    T = _series(kind, 520, 6)
    calls = []
    real = stream_near.near_block
    monkeypatch.setattr(stream_near, "near_block",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    for egress in (True, False):
        s = clts.stumpi(T[:300], M, egress=egress, normalize=normalize, device=device,
                        host_points=0, lazy_points=1)
        for a, b in ((300, 60), (360, 100), (460, 60)):
            s.update(T[a:a + b])
        with monkeypatch.context() as mp:
            mp.setattr(stream_near, "usable", lambda *a: False)
            r = clts.stumpi(T[:300], M, egress=egress, normalize=normalize, device=device,
                            host_points=0, lazy_points=1)
            for a, b in ((300, 60), (360, 100), (460, 60)):
                r.update(T[a:a + b])
            want = (r.P_, r.I_, r.left_P_, r.left_I_)
        got = (s.P_, s.I_, s.left_P_, s.left_I_)
        for g, w in zip(got[::2], want[::2]):
            assert np.array_equal(np.isfinite(g), np.isfinite(w))
            np.testing.assert_allclose(g[np.isfinite(w)], w[np.isfinite(w)], atol=1e-9,
                                       rtol=0)
        for g, w in zip(got[1::2], want[1::2]):
            assert np.mean(g == w) >= (0.9 if kind in ("integers", "repeats") else 0.99)
    assert len(calls) == 6


def _blocks(X, device, egress=True):
    s = clts.stumpi(X[:300], M, egress=egress, device=device, host_points=0, lazy_points=1)
    for a in range(300, len(X), 50):
        s.update(X[a:a + 50])
    return s.P_, s.I_, s.left_P_, s.left_I_


def test_blocks_threads_and_layouts(device):
    """Device blocks (their near columns in a worker thread) from two threads at once, and on
    big-endian, strided and Fortran-ordered input: identical to serial, native ones."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(21)
    Ts = [np.cumsum(rng.standard_normal(500)) for _ in range(2)]
    want = [_blocks(T, device) for T in Ts]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda T: _blocks(T, device), Ts))
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_array_equal(a, b)
    wide = np.zeros(1000)
    wide[::2] = Ts[0]
    for X in (Ts[0].astype(">f8"), wide[::2], np.asfortranarray(Ts[0][:, None])[:, 0]):
        for a, b in zip(_blocks(X, device), want[0]):
            np.testing.assert_array_equal(a, b)


def test_short_update_without_host_state_joins(device):
    """An update of 16..host_points points with no host state goes to the device (building
    the state costs O(n m)); with the state, through the host; the same profile either way."""
    T = _series("walk", 400, 22)
    s = clts.stumpi(T[:300], M, device=device, host_points=32, lazy_points=1)
    s.update(T[300:320])
    assert s._host is None
    s.update(T[320])                          # one point: the host path builds its state
    assert s._host is not None
    s.update(T[321:341])
    assert s._host is not None
    s.update(T[341:400])                      # a long block: the device, the state dropped
    assert s._host is None
    r = clts.stumpi(T[:300], M, device=device, host_points=0, lazy_points=1)
    r.update(T[300:400])
    np.testing.assert_allclose(s.P_, r.P_, atol=1e-9, rtol=0)
    assert np.mean(s.I_ == r.I_) >= 0.99
