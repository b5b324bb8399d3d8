"""Matrix profile (clts.matrix_profile): against the brute-force reference, every code version
(atomic / partial merge, lane widths), every device; stumpy on small cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

import clts
from clts.mp import reference as ref

TOL = {"double": 1e-8, "mixed": 1e-8}


def _series(n, seed, kind="walk"):
    rng = np.random.default_rng(seed)
    if kind == "walk":
        return np.cumsum(rng.standard_normal(n))
    return rng.standard_normal(n)


def _hard(n, seed):
    """Random walk with a constant plateau, a plateau with 1e-9 noise, NaN and inf."""
    rng = np.random.default_rng(seed)
    T = np.cumsum(rng.standard_normal(n))
    w = max(n // 12, 8)
    T[n // 8:n // 8 + w] = 2.5
    T[n // 2:n // 2 + w] = 1.0 + 1e-9 * rng.standard_normal(w)
    T[3 * n // 4] = np.nan
    T[3 * n // 4 + w // 2] = np.inf
    return T


def _check(P, I, Pr, Ir, D, tol, side="rows"):
    """P within tol of the reference; I identical, or a tie: its brute-force distance equals
    the reference distance within tol."""
    P = np.asarray(P).reshape(Pr.shape)
    I = np.asarray(I).reshape(Ir.shape)
    fin = np.isfinite(Pr)
    assert np.array_equal(np.isfinite(P), fin)
    assert np.all(I[~fin] == -1)
    if fin.any():
        assert np.max(np.abs(P[fin] - Pr[fin])) <= tol
    diff = (I != Ir) & fin
    if diff.any():
        idx = np.nonzero(diff)
        r = idx[0]
        dd = D[r, I[idx]] if side == "rows" else D[I[idx], r]
        np.testing.assert_allclose(dd, Pr[idx], atol=tol, rtol=0)


def _dist_self(T, m, ez, normalize=True):
    D = ref.distance_matrix(T, m, normalize=normalize)
    ii, jj = np.indices(D.shape)
    D[np.abs(ii - jj) <= ez] = np.inf
    return D


VERSIONS = [dict(merge="atomic", lanes=8, groups=2, tile=16, segment=64),
            dict(merge="partial", lanes=8, groups=2, tile=16, segment=64),
            dict(merge="atomic", lanes=1, groups=3, tile=8, segment=32, keep="minmax"),
            dict(merge="partial", lanes=4, groups=1, tile=32, segment=40, unroll=4),
            dict(merge="atomic", lanes=8, groups=2, tile=16, segment=64, store="local", unroll=2,
                 keep="minmax"),
            dict(merge="partial", lanes=4, groups=2, tile=8, segment=40, store="local", wg=4)]


def _ids(v):
    return (f"{v['merge']}-w{v['lanes']}g{v['groups']}-{v.get('store', 'private')}"
            f"-u{v.get('unroll', 1)}" + (f"-{v['keep']}" if "keep" in v else ""))


@pytest.mark.parametrize("version", VERSIONS, ids=_ids)
def test_self_join_hard_series(device, version):
    T, m = _hard(420, 1), 16
    r = ref.matrix_profile(T, m)
    res = clts.matrix_profile(T, m, device=device, **version)
    D = _dist_self(T, m, math.ceil(m / 4))
    _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], D, 1e-8)
    Dl = np.where(np.tril(np.ones_like(D, bool), -1), D, np.inf)
    Dr = np.where(np.triu(np.ones_like(D, bool), 1), D, np.inf)
    _check(res.left_P, res.left_I, r["left_P"], r["left_I"], Dl, 1e-8)
    _check(res.right_P, res.right_I, r["right_P"], r["right_I"], Dr, 1e-8)
    assert res.diagnostics["special_A"] > 0


@pytest.mark.parametrize("version", VERSIONS[:2] + VERSIONS[4:], ids=_ids)
@pytest.mark.parametrize("normalize", [True, False])
def test_ab_join_both(device, version, normalize):
    A = _series(300, 2)
    B = _series(230, 3)
    B[20:50] = 4.0
    B[120] = np.nan
    m = 12
    r = ref.matrix_profile(A, m, B, both=True, normalize=normalize)
    res = clts.matrix_profile(A, m, B, both=True, normalize=normalize, device=device,
                              **version)
    D = ref.distance_matrix(A, m, B, normalize=normalize)
    _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], D, 1e-8)
    _check(res.P_B[:, 0], res.I_B[:, 0], r["P_B"][:, 0], r["I_B"][:, 0], D, 1e-8, side="cols")
    assert res.left_I is None


@pytest.mark.parametrize("merge", ["atomic", "partial"])
def test_self_join_plain_euclidean(device, merge):
    T, m = _series(350, 4), 20
    r = ref.matrix_profile(T, m, normalize=False)
    res = clts.matrix_profile(T, m, normalize=False, device=device, merge=merge)
    D = _dist_self(T, m, math.ceil(m / 4), normalize=False)
    _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], D, 1e-8)


TOPK_VERSIONS = [dict(topk_store="private", lanes=8, groups=2, tile=16, segment=64),
                 dict(topk_store="local", lanes=8, groups=2, tile=16, segment=64),
                 dict(topk_store="private", lanes=1, groups=3, tile=8, segment=32),
                 dict(topk_store="local", lanes=4, groups=1, tile=32, segment=40, wg=4, unroll=2),
                 # the GPU profiles' layout: one lane, interleaved local lists and partials
                 dict(topk_store="local", lanes=1, groups=4, tile=8, segment=32, wg=4,
                      interleave=1)]


def _kids(v):
    return f"{v['topk_store']}-w{v['lanes']}g{v['groups']}"


def _check_k(res, r, D, k, side="rows", pre=""):
    P, I = getattr(res, "P" + pre), getattr(res, "I" + pre)
    assert P.shape == r["P" + pre].shape == (D.shape[0] if side == "rows" else D.shape[1], k)
    for c in range(k):
        _check(P[:, c], I[:, c], r["P" + pre][:, c], r["I" + pre][:, c], D, 1e-8, side=side)
    # best first, no index twice in a row
    assert np.all(np.diff(np.where(np.isfinite(P), P, 1e300), axis=1) >= 0)
    for row in I:
        v = row[row >= 0]
        assert len(np.unique(v)) == len(v)


@pytest.mark.gpu_layout
@pytest.mark.parametrize("base", [dict(lanes=1, groups=4, tile=8, segment=32, wg=4,
                                       topk_store="local", interleave=1),
                                  dict(lanes=4, groups=2, tile=16, segment=40,
                                       topk_store="private")], ids=["lanes1-ilv", "lanes4"])
def test_top_k_cooperative_folds_are_bit_identical(device, base):
    """fold > 0 (the GPU profiles' work-group-cooperative folds of the partial k-lists: a
    work-group per row with a tree of list merges, a block of column groups with its global
    lists read and written together) gives exactly the lists of fold = 0, self-join (rows and
    columns, plateau and missing values) and AB-join, one and several column groups per
    work-group."""
    rng = np.random.default_rng(2)
    T = np.cumsum(rng.standard_normal(400))
    T[100:130] = 1.0
    T[200] = np.nan
    TB = np.cumsum(rng.standard_normal(300))
    for TBx in (None, TB):
        r0 = clts.matrix_profile(T, 12, TBx, k=3, device=device, fold=0, **base)
        for fold in (4, 64):
            r1 = clts.matrix_profile(T, 12, TBx, k=3, device=device, fold=fold, **base)
            for a in ("P", "I", "left_P", "left_I", "right_P", "right_I"):
                x, y = getattr(r0, a, None), getattr(r1, a, None)
                assert (x is None) == (y is None)
                if x is not None:
                    assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True), \
                        (a, fold, TBx is None)
    for bad in (3, -1):
        with pytest.raises(ValueError, match="fold"):
            clts.matrix_profile(T, 12, k=3, device=device, fold=bad)


@pytest.mark.gpu_layout
@pytest.mark.parametrize("k", [1, 3])
def test_gpu_occupancy_tiles_are_bit_identical(device, k):
    """The local-memory tiles the occupancy model gives the GPU profiles (clts.mp.plan.fit_tile:
    1-12 rows on MI100 / MI200 / A100 / H100 / Iris Xe, 28-32 elsewhere) forced on this device
    with the GPU layout (one lane, band 4, 64-wide groups, interleaved local slices): the same
    profile, bit for bit, at every tile on the self-join, plateau and missing values. The tile
    is a bound and an array size in the source, no branch: the AB-join (its own program) runs
    at two of them, 3 (below the band) and 12 (neither divides the segment)."""
    rng = np.random.default_rng(11)
    T = np.cumsum(rng.standard_normal(420))
    T[90:120] = 1.0
    T[300] = np.nan
    TB = np.cumsum(rng.standard_normal(260))
    prec = "double" if device.fp64 else "single"
    base = dict(k=k, device=device, progress=False, lanes=1, groups=4, segment=64, wg=64,
                store="local", topk_store="local", interleave=1, groups_per_cu=0,
                precision=prec)
    for TBx in (None, TB):
        r0 = clts.matrix_profile(T, 12, TBx, tile=32, **base)
        if TBx is None and prec == "double":
            r = ref.matrix_profile(T, 12, k=k)
            _check_k(r0, r, _dist_self(T, 12, 3), k)
        for tile in (1, 3, 5, 8, 12, 28) if TBx is None else (3, 12):
            r1 = clts.matrix_profile(T, 12, TBx, tile=tile, **base)
            for a in ("P", "I", "left_P", "left_I", "right_P", "right_I"):
                x, y = getattr(r0, a, None), getattr(r1, a, None)
                assert (x is None) == (y is None)
                if x is not None:
                    assert np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True), \
                        (a, tile, TBx is None)


#: every layout at k = 3; k = 2 and 5 (k is a loop bound of the lists, no branch of the
#: source) each on one layout: the CPU profile's private lists / the GPU layout's local ones
TOPK_SELF = [(3, v) for v in TOPK_VERSIONS] + [(2, TOPK_VERSIONS[0]), (5, TOPK_VERSIONS[4])]


@pytest.mark.parametrize("k,version", TOPK_SELF, ids=[f"{k}-{_kids(v)}" for k, v in TOPK_SELF])
def test_top_k_self_join(device, k, version):
    """In-kernel top-k lists (every store and lane layout) against the brute force: plateau,
    1e-9 noise on a plateau (exact path), NaN/inf; left/right neighbours unchanged."""
    T, m = _hard(300, 5), 10
    r = ref.matrix_profile(T, m, k=k)
    res = clts.matrix_profile(T, m, k=k, device=device, **version)
    D = _dist_self(T, m, math.ceil(m / 4))
    _check_k(res, r, D, k)
    Dl = np.where(np.tril(np.ones_like(D, bool), -1), D, np.inf)
    Dr = np.where(np.triu(np.ones_like(D, bool), 1), D, np.inf)
    _check(res.left_P, res.left_I, r["left_P"], r["left_I"], Dl, 1e-8)
    _check(res.right_P, res.right_I, r["right_P"], r["right_I"], Dr, 1e-8)
    again = clts.matrix_profile(T, m, k=k, device=device, **version)
    np.testing.assert_array_equal(again.I, res.I)
    np.testing.assert_array_equal(again.P, res.P)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("store", ["private", "local"])
def test_top_k_ab_join_both(device, store, normalize):
    """AB-join, both sides, special (constant) windows and NaN in A and in B."""
    A = _series(160, 6)
    B = _series(130, 7)
    A[40:60] = -1.0
    B[30:45] = 2.0
    A[100] = np.nan
    B[90] = np.inf
    m, k = 10, 3
    r = ref.matrix_profile(A, m, B, k=k, both=True, normalize=normalize)
    res = clts.matrix_profile(A, m, B, k=k, both=True, normalize=normalize, device=device,
                              topk_store=store, lanes=4, groups=2, tile=16, segment=48)
    D = ref.distance_matrix(A, m, B, normalize=normalize)
    _check_k(res, r, D, k)
    _check_k(res, r, D, k, side="cols", pre="_B")
    one = clts.matrix_profile(A, m, B, k=k, normalize=normalize, device=device,
                              topk_store=store)
    _check_k(one, r, D, k)
    assert one.P_B is None and one.left_I is None


def test_top_k_plain_euclidean_and_chunks(device, monkeypatch):
    """normalize=False; then one band per launch (CLTS_MAX_CHUNK=1: many partial-list folds)
    and the geometric launch sizes."""
    T, m, k = _series(260, 4), 12, 4
    r = ref.matrix_profile(T, m, k=k, normalize=False)
    res = clts.matrix_profile(T, m, k=k, normalize=False, device=device)
    _check_k(res, r, _dist_self(T, m, math.ceil(m / 4), normalize=False), k)
    r = ref.matrix_profile(T, m, k=k)
    D = _dist_self(T, m, math.ceil(m / 4))
    for chunk in ("1", "3"):
        clts.set_options(max_chunk=chunk)
        res = clts.matrix_profile(T, m, k=k, device=device, groups=1, segment=32)
        _check_k(res, r, D, k)


def test_top_k_edges(device):
    """k = TOPK_MAX = 16 with fewer neighbours than k (lists end in inf / -1), exclusion zone 0
    and one that leaves nothing, an AB-join with fewer windows in B than k."""
    for n, m, k, ez in [(20, 5, 16, None), (40, 4, 16, 0), (30, 6, 7, 30)]:
        T = _series(n, 3)
        r = ref.matrix_profile(T, m, k=k, exclusion_zone=ez)
        res = clts.matrix_profile(T, m, k=k, exclusion_zone=ez, device=device)
        _check_k(res, r, _dist_self(T, m, math.ceil(m / 4) if ez is None else ez), k)
        np.testing.assert_array_equal(res.left_I, r["left_I"])
        np.testing.assert_array_equal(res.right_I, r["right_I"])
    A, B = _series(50, 1), _series(12, 2)
    r = ref.matrix_profile(A, 5, B, k=10, both=True)
    res = clts.matrix_profile(A, 5, B, k=10, both=True, device=device)
    D = ref.distance_matrix(A, 5, B)
    _check_k(res, r, D, 10)
    _check_k(res, r, D, 10, side="cols", pre="_B")


def test_top_k_local_memory_too_small(device):
    """topk_store="local" where a work-group's lists cannot fit: private memory, a warning."""
    from clts.mp.tiles import TOPK_PRIVATE_GROUP_BYTES
    T, m, k, per = _hard(150, 5), 8, 16, 16 * 12 + 8
    # a work-group too large for its lists in local memory, small enough for private memory
    wgs = [w for w in (16, 32, 64, 128, 256) if w <= device.max_work_group and
           (device.local_mem - 1024) // w // per < 33 <= TOPK_PRIVATE_GROUP_BYTES // w // per]
    if not wgs:
        pytest.skip("no work-group size with too little local and enough private memory")
    wg = wgs[0]
    r = ref.matrix_profile(T, m, k=k)
    with pytest.warns(UserWarning, match="topk_store='private' used"):
        res = clts.matrix_profile(T, m, k=k, device=device, wg=wg, lanes=8, groups=4,
                                  topk_store="local")
    _check_k(res, r, _dist_self(T, m, 2), k)


def test_top_k_mixed_and_blocked(device):
    """mixed: float32 lists, exact float64 distances: the c-th distance is at least the true
    c-th and at most 1e-3 above it; single: within 2e-3 sqrt(m) of the reference on the
    float32-rounded series. k > TOPK_MAX: the blocked path, same results."""
    from clts.mp.topk import TOPK_MAX
    T, m = _series(400, 8), 32
    r = ref.matrix_profile(T, m, k=3)
    res = clts.matrix_profile(T, m, k=3, precision="mixed", device=device)
    D = _dist_self(T, m, math.ceil(m / 4))
    assert np.all(res.P >= r["P"] - 1e-9) and np.max(res.P - r["P"]) <= 1e-3
    np.testing.assert_allclose(np.take_along_axis(D, res.I, 1), res.P, atol=1e-9)
    # single: float32 throughout, against the reference on the float32-rounded series
    res = clts.matrix_profile(T, m, k=3, precision="single", device=device)
    r32 = ref.matrix_profile(T.astype(np.float32).astype(np.float64), m, k=3)
    assert np.max(np.abs(res.P - r32["P"])) <= 2e-3 * math.sqrt(m)
    k = TOPK_MAX + 1
    T, m = _hard(150, 9), 8
    r = ref.matrix_profile(T, m, k=k)
    res = clts.matrix_profile(T, m, k=k, device=device)
    _check_k(res, r, _dist_self(T, m, 2), k)


@pytest.mark.parametrize("precision", ["mixed", "single"])
def test_precisions(device, precision):
    """mixed: float32 diagonal kernel, float64 re-evaluation: P is the exact distance of the
    chosen neighbour, at most 1e-3 above the true nearest one (random walk, m = 32).
    single: float32 throughout, against the reference on the float32-rounded series:
    |P - P_ref| <= 2e-3 * sqrt(m)."""
    T, m = _series(600, 8), 32
    res = clts.matrix_profile(T, m, precision=precision, device=device)
    if precision == "mixed":
        r = ref.matrix_profile(T, m)
        D = _dist_self(T, m, math.ceil(m / 4))
        Pr = r["P"][:, 0]
        # the float32 kernel with its tile's column bests in private and in local memory
        for res in (res, clts.matrix_profile(T, m, precision=precision, device=device,
                                             store="local", merge="partial")):
            assert np.all(res.P[:, 0] >= Pr - 1e-9)
            assert np.max(res.P[:, 0] - Pr) <= 1e-3
            np.testing.assert_allclose(D[np.arange(len(Pr)), res.I[:, 0]], res.P[:, 0],
                                       atol=1e-9)
    else:
        T32 = T.astype(np.float32).astype(np.float64)
        r = ref.matrix_profile(T32, m)
        assert res.P.dtype in (np.float32, np.float64)
        assert np.max(np.abs(res.P[:, 0] - r["P"][:, 0])) <= 2e-3 * math.sqrt(m)


def test_edge_sizes_and_zones(device):
    T = _series(40, 9)
    # one window: nothing to compare with
    res = clts.matrix_profile(T[:8], 8, device=device)
    assert res.P.shape == (1, 1) and np.isinf(res.P[0, 0]) and res.I[0, 0] == -1
    # m = 3, exclusion zone 0 and one too wide for any pair
    for ez in (0, 1, 37):
        r = ref.matrix_profile(T, 3, exclusion_zone=ez)
        res = clts.matrix_profile(T, 3, exclusion_zone=ez, device=device)
        D = _dist_self(T, 3, ez)
        _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], D, 1e-8)
    # a constant series: every pair at distance 0, ties to the smallest index
    res = clts.matrix_profile(np.full(50, 3.0), 5, device=device)
    assert np.all(res.P == 0)
    ez = 2
    expect = np.where(np.arange(46) <= ez, np.arange(46) + ez + 1, 0)
    np.testing.assert_array_equal(res.I[:, 0], expect)
    # all NaN
    res = clts.matrix_profile(np.full(30, np.nan), 5, device=device)
    assert np.all(np.isinf(res.P)) and np.all(res.I == -1)


def test_long_m_and_white_noise(device):
    T, m = _series(700, 10, "noise"), 300
    r = ref.matrix_profile(T, m)
    res = clts.matrix_profile(T, m, device=device)
    _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0],
           _dist_self(T, m, math.ceil(m / 4)), 1e-8)


@pytest.mark.parametrize("n,m", [(20000, 64), (4200, 2048), (50_000, 256)])
def test_long_series_sampled_rows(device, n, m):
    """Long series / long windows (up to n = 5 x 10^4, m = 2048), with a plateau and a
    run of NaNs: every row of a random sample (plus rows on the plateau, next to and inside
    the NaN run) against the row-wise brute force (the full one is O(n^2 m)). n = 10^5 runs
    the same launches (fewer than 2^14 bands each) at 4x the time: 53 s of CI per device under
    load; bench/bench_mp.py times m = 256 up to n = 2^17."""
    T = _series(n, 17)
    T[n // 3:n // 3 + 300] = 0.5
    nan0 = 2 * n // 3
    T[nan0:nan0 + 50] = np.nan
    rows = np.sort(np.random.default_rng(18).choice(n - m + 1, 12, replace=False))
    extra = np.array([n // 3 + 10, nan0 - m, nan0 - m + 1, nan0 + 20, nan0 + 50])
    rows = np.unique(np.concatenate([rows, extra[extra < n - m + 1]]))
    Pr, Ir = ref.rows_profile(T, m, rows)
    res = clts.matrix_profile(T, m, device=device)
    np.testing.assert_allclose(res.P[rows, 0], Pr, atol=1e-8, rtol=0)
    np.testing.assert_array_equal(res.I[rows, 0], Ir)


def test_chunked_launches(device, monkeypatch):
    clts.set_options(max_chunk=3)
    T, m = _series(400, 11), 8
    r = ref.matrix_profile(T, m)
    for merge in ("atomic", "partial"):
        res = clts.matrix_profile(T, m, device=device, merge=merge, groups=1, segment=32)
        _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0],
               _dist_self(T, m, 2), 1e-8)


@pytest.mark.parametrize("self_join", [True, False])
@pytest.mark.parametrize("parts", [2, 3, 5])
def test_device_split_by_area(self_join, parts):
    """Each device gets consecutive bands of about equal work (pairs), not equal diagonal
    counts: on a self-join's triangle the first device gets far fewer bands than the last."""
    from clts.mp.diagonal import band_area, split_bands
    lA, lB, D = 50_000, 30_000, 32
    kstart = 17 if self_join else -(lA - 1)
    nb = -(-(lA - kstart) // D) if self_join else -(-(lB - kstart) // D)
    area = band_area(lA, lB, self_join, D, nb, kstart)
    b = split_bands(area, parts)
    assert b[0] == 0 and b[-1] == nb and all(x <= y for x, y in zip(b, b[1:]))
    shares = [area[lo:hi].sum() for lo, hi in zip(b, b[1:])]
    assert abs(sum(shares) - area.sum()) < 1e-6 * area.sum()
    assert max(abs(sh - area.sum() / parts) for sh in shares) <= area.max()
    if self_join:
        counts = np.diff(b)
        assert counts[0] < counts[-1]      # short diagonals at the end: more of them per device


def test_several_devices():
    from clts.runtime import all_devices
    devs = all_devices()
    if len(devs) < 2:
        pytest.skip("needs two devices")
    T, m = _series(500, 12), 16
    one = clts.matrix_profile(T, m, device=devs[0])
    two = clts.matrix_profile(T, m, device=devs[:2])
    np.testing.assert_allclose(two.P, one.P, atol=1e-10)
    np.testing.assert_array_equal(two.I, one.I)
    assert two.diagnostics["devices"] == [d.slug for d in devs[:2]]
    one = clts.matrix_profile(T, m, k=3, device=devs[0])
    two = clts.matrix_profile(T, m, k=3, device=devs[:2])
    np.testing.assert_allclose(two.P, one.P, atol=1e-10)
    np.testing.assert_array_equal(two.I, one.I)
    np.testing.assert_array_equal(two.left_I, one.left_I)


STUMPY_SCRIPT = """
import sys, numpy as np, stumpy
T, A, B, m = (np.load(sys.argv[1])[k] for k in ("T", "A", "B", "m"))
m = int(m)
s = stumpy.stump(T, m)
ab = stumpy.stump(A, m, B, ignore_trivial=False)
np.savez(sys.argv[2], s=s.astype(float), ab=ab.astype(float))
"""


@pytest.fixture(scope="module")
def stumpy_small(tmp_path_factory):
    """stumpy.stump on small inputs, run once in a subprocess with NUMBA_DISABLE_JIT=1 (the
    numba JIT warm-up of stump costs ~50 s; the interpreted run takes a second or two)."""
    import os
    import subprocess
    import sys
    pytest.importorskip("stumpy")
    d = tmp_path_factory.mktemp("stumpy")
    T = _series(260, 13)
    T[100:120] = 1.5
    A, B, m = T[:150], _series(130, 14), 16
    np.savez(d / "in.npz", T=T, A=A, B=B, m=m)
    (d / "run.py").write_text(STUMPY_SCRIPT)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, str(d / "run.py"), str(d / "in.npz"), str(d / "out.npz")],
                   check=True, env=env, timeout=300)
    out = np.load(d / "out.npz")
    return T, A, B, m, out["s"], out["ab"]


def test_against_stumpy(device, stumpy_small):
    T, A, B, m, s, ab = stumpy_small
    res = clts.matrix_profile(T, m, device=device)
    np.testing.assert_allclose(res.P[:, 0], s[:, 0], atol=1e-7)
    assert np.mean(res.I[:, 0] == s[:, 1]) > 0.97     # stumpy breaks exact ties differently
    D = _dist_self(T, m, math.ceil(m / 4))
    np.testing.assert_allclose(D[np.arange(len(s)), s[:, 1].astype(int)], res.P[:, 0],
                               atol=1e-7)
    res = clts.matrix_profile(A, m, B, device=device)
    np.testing.assert_allclose(res.P[:, 0], ab[:, 0], atol=1e-7)
    np.testing.assert_array_equal(res.I[:, 0], ab[:, 1].astype(int))


def test_motifs_and_discords(device):
    """Two planted patterns in noise: the first motif is the thrice-planted one with all three
    occurrences, the second the twice-planted one, none of its members inside the first's
    exclusion zones (search="pair"; stumpy's procedure, the default, stops at its cutoff
    after the first and finds the second when the cutoff allows); discords are the largest
    profile values, apart from each other."""
    rng = np.random.default_rng(15)
    T = 0.3 * rng.standard_normal(700)
    m = 40
    sine = np.sin(np.linspace(0, 6, m)) * 3
    saw = np.linspace(-3, 3, m) ** 3 / 9
    for at in (50, 300, 480):
        T[at:at + m] += sine
    for at in (150, 600):
        T[at:at + m] += saw
    res = clts.matrix_profile(T, m, device=device)
    P = res.P[:, 0]
    # the default zone (m/4) would let the first motif shifted by m/4 + 1 come back as the
    # second; a whole window between reported motifs is what distinct motifs need
    mot = clts.motifs(T, res, max_motifs=2, max_matches=3, exclusion_zone=m, search="pair")
    assert len(mot) == 2

    def found(idx, planted):
        """every planted occurrence, all at one common shift (the window may start a little
        before or after the pattern, the same for each) small against m"""
        got = np.sort(np.asarray(idx))
        shift = got - np.asarray(planted)
        return len(got) == len(planted) and len(set(shift)) == 1 and abs(shift[0]) <= m // 4
    first, second = mot[0]["indices"], mot[1]["indices"]
    assert found(first, (50, 300, 480))
    assert first[1] == res.I[first[0], 0] and P[first[0]] == P[np.isfinite(P)].min()
    assert found(second[:2], (150, 600))
    assert all(abs(i - j) > m for i in second for j in first)
    np.testing.assert_allclose(mot[0]["distances"][1], P[first[0]], atol=1e-8)
    # stumpy's procedure: the saw pair's profile value is above the default cutoff
    # max(mean - 2 std, min) of P; with cutoff=inf (and a whole window excluded around each
    # occurrence, not to find the first shifted) it is the second motif
    st = clts.motifs(T, res, max_motifs=2, device=device)
    assert len(st) == 1 and found(st[0]["indices"], (50, 300, 480))
    assert st[0]["indices"][0] == first[0] and st[0]["distances"][0] == 0.0
    st = clts.motifs(T, res, max_motifs=2, cutoff=np.inf, max_distance=3.0, exclusion_zone=m,
                     device=device)
    assert len(st) == 2 and found(st[1]["indices"], (150, 600))
    idx, dist = clts.discords(res, 3)
    assert len(idx) == 3 and np.all(np.diff(dist) <= 0)
    assert np.all(np.abs(np.diff(np.sort(idx))) > m)         # distinct events: zone m
    assert dist[0] == P[np.isfinite(P)].max() and P[idx[0]] == dist[0]
    with pytest.raises(ValueError):
        clts.discords(res, 0)


def test_discords_are_distinct_events(device):
    """Two planted anomalies, k = 2: one discord in each (with the profile's zone ceil(m / 4)
    both came from the first anomaly)."""
    rng = np.random.default_rng(1)
    T = np.sin(np.arange(4000) * 2 * np.pi / 50) + rng.normal(0, 0.05, 4000)
    T[2000:2010] += 1.0
    T[800:810] -= 0.6
    m = 50
    res = clts.matrix_profile(T, m, device=device)
    idx, _ = clts.discords(res, 2)
    assert sorted((i <= 810 and i + m > 800) or 2 * (i <= 2010 and i + m > 2000)
                  for i in idx) == [1, 2], idx
    same, _ = clts.discords(res, 2, exclusion_zone=res.exclusion_zone)   # the old default
    assert all(1951 <= i < 2010 for i in same)


def test_bad_input():
    with pytest.raises(ValueError):
        clts.matrix_profile(np.ones(10), 2)
    with pytest.raises(ValueError):
        clts.matrix_profile(np.ones(10), 11)
    with pytest.raises(ValueError):
        clts.matrix_profile(np.ones((3, 10)), 4)
    with pytest.raises(TypeError):
        clts.matrix_profile(np.array(["a"] * 10), 4)
    with pytest.raises(TypeError):
        clts.matrix_profile(np.ones(10), 4.0)
    with pytest.raises(ValueError):
        clts.matrix_profile(np.ones(10), 4, k=0)
    with pytest.raises(ValueError):
        clts.matrix_profile(np.ones(10), 4, precision="half")
    with pytest.raises(ValueError):
        clts.matrix_profile(np.ones(10), 4, lanes=3)
    with pytest.raises(ValueError, match="unroll"):
        clts.matrix_profile(np.ones(10), 4, unroll=0)
    with pytest.raises(TypeError):
        clts.matrix_profile(np.ones(10), 4, nonsense=3)


def test_estimate_is_callable_attribute(device, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    from clts.mp import estimate
    monkeypatch.setattr(estimate, "CAL_SIZES", (1 << 11, 1 << 12))
    t1 = clts.matrix_profile.estimate(1 << 12, 64, device)
    t2 = clts.matrix_profile.estimate(1 << 14, 64, device)
    assert 0 < t1 < t2
    assert list((tmp_path / "clts" / "mp").glob("calibration-*.json"))


OCLGRIND_CASE = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_mp import _check, _dist_self, _hard
import clts
from clts.mp import reference as ref
from clts.runtime import get_device
dev = get_device(sys.argv[2])
T, m = _hard(48, 16), 6
r = ref.matrix_profile(T, m)
res = clts.matrix_profile(T, m, device=dev, merge=sys.argv[3], lanes=2, groups=2, tile=4,
                          segment=8, store=sys.argv[4], wg=2, keep=sys.argv[5])
_check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], _dist_self(T, m, 2), 1e-8)
print("case ok")
"""


@pytest.mark.oclgrind
@pytest.mark.parametrize("keep", ["minmax", "select"])
@pytest.mark.parametrize("store", ["private", "local"])
@pytest.mark.parametrize("merge", ["atomic", "partial"])
def test_oclgrind_tiny(device, merge, store, keep):
    """One matrix profile per fresh process: Oclgrind (with OCLGRIND_UNINITIALIZED) flags every
    kernel of a second matrix_profile call in the same process, even pair_dist that reads only
    host-uploaded buffers, while the first call is clean (seen 2026-11-22, Oclgrind 21.10 +
    pyopencl). lanes=2: its uninitialised-value checker also crashes on the 4- and 8-lane
    builds of the diagonal kernel; the 2-lane build runs the same code (lane shifts, packed
    indices). Reports go to the inherited stderr, which the conftest fixture checks."""
    import os
    import subprocess
    import sys
    if not os.environ.get("CLTS_OCLGRIND"):
        T, m = _hard(48, 16), 6
        r = ref.matrix_profile(T, m)
        res = clts.matrix_profile(T, m, device=device, merge=merge, lanes=2, groups=2,
                                  tile=4, segment=8, store=store, wg=2, keep=keep)
        _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], _dist_self(T, m, 2), 1e-8)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", OCLGRIND_CASE, here, device.slug, merge, store,
                          keep],
                         capture_output=True, text=True, timeout=600)
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    assert out.returncode == 0 and "case ok" in out.stdout, out.stderr[-3000:]


OCLGRIND_TOPK = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_mp import _check_k, _dist_self, _hard
import clts
from clts.mp import reference as ref
from clts.runtime import get_device
dev = get_device(sys.argv[2])
T, m, k = _hard(48, 16), 6, 3
r = ref.matrix_profile(T, m, k=k)
res = clts.matrix_profile(T, m, k=k, device=dev, tile=4, segment=8, wg=2,
                          **json.loads(sys.argv[3]))
_check_k(res, r, _dist_self(T, m, 2), k)
print("case ok")
"""


@pytest.mark.oclgrind
@pytest.mark.parametrize("v", [dict(topk_store="private", lanes=2, groups=2),
                               dict(topk_store="local", lanes=2, groups=2),
                               dict(topk_store="local", lanes=1, groups=3, interleave=1),
                               dict(topk_store="local", lanes=1, groups=2, interleave=1,
                                    fold=8),
                               dict(topk_store="private", lanes=1, groups=2, interleave=0,
                                    fold=4),
                               dict(topk_store="window", lanes=1, groups=2, interleave=1,
                                    fold=8)],
                         ids=["private", "local", "local-lanes1", "fold", "fold-contiguous",
                              "window"])
def test_oclgrind_top_k(device, v):
    """The top-k kernel and its list reductions under Oclgrind (races, uninitialised reads,
    out-of-bounds), private and local tile lists, the GPU profiles' one-lane interleaved
    layout and its window of column lists (a barrier per tile of floors, wg = 2); one fresh
    process, as test_oclgrind_tiny."""
    import json
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.environ.get("CLTS_OCLGRIND"):
        sys.path.insert(0, here)
        T, m, k = _hard(48, 16), 6, 3
        r = ref.matrix_profile(T, m, k=k)
        res = clts.matrix_profile(T, m, k=k, device=device, tile=4, segment=8, wg=2, **v)
        _check_k(res, r, _dist_self(T, m, 2), k)
        return
    out = subprocess.run([sys.executable, "-c", OCLGRIND_TOPK, here, device.slug, json.dumps(v)],
                         capture_output=True, text=True, timeout=600)
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    assert out.returncode == 0 and "case ok" in out.stdout, out.stderr[-3000:]


@pytest.mark.parametrize("store", ["private", "local"])
@pytest.mark.parametrize("band", [dict(lanes=1, groups=1), dict(lanes=4, groups=2)])
def test_anti_correlated_windows_do_not_win_the_merge(device, store, band):
    """A pure sine: windows half a period apart have corr = -1, whose score 1 + corr rounds to
    just below 0; packed, a negative score's key won every 64-bit atomic minimum, so columns
    (and rows) reported their worst match, distance 2 sqrt(m) (seen first on an H100, whose
    profile keeps the column bests in local memory, in the discords example)."""
    T, m = np.sin(np.arange(400) * 2 * np.pi / 50), 50
    r = ref.matrix_profile(T, m)
    res = clts.matrix_profile(T, m, device=device, store=store, tile=8, wg=1, **band)
    for name in ("left_P", "right_P"):
        np.testing.assert_allclose(getattr(res, name), r[name], atol=1e-6, err_msg=name)
    np.testing.assert_allclose(res.P[:, 0], r["P"][:, 0], atol=1e-6)


@pytest.mark.parametrize("k", [1, 3])
def test_repeated_calls_reuse_device_memory(device, k):
    """A repeated call takes its device buffers from the device's pool (a fresh buffer costs a
    page fault per 4 KB on CPU drivers): the pool allocates nothing new the second time, and
    the results are the same."""
    rng = np.random.default_rng(12)
    T = np.cumsum(rng.standard_normal(700))
    from clts.runtime.memory import release_scratch
    release_scratch(device)
    pool = device.state.pool()
    first = clts.matrix_profile(T, 16, k=k, device=device)
    assert pool.held_blocks > 0                 # its buffers went back to the pool
    held = pool.managed_bytes
    again = clts.matrix_profile(T, 16, k=k, device=device)
    np.testing.assert_array_equal(again.P, first.P)
    np.testing.assert_array_equal(again.I, first.I)
    assert pool.managed_bytes == held
