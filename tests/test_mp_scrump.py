"""clts.scrump / clts.prescrump / clts.stimp (and their clts.compat.stumpy names) against
stumpy with the same ``np.random`` seed: update by update the same profile (distances to
rounding, identical indices) on stumpy's docstring inputs and on random walks with NaN and a
constant run; properties where the result is approximate (an upper bound of the exact
profile that improves with each update, indices that name windows at those distances, exact
at the end). stumpy runs once in a child without JIT (tests/stumpy_anchor.py)."""
from __future__ import annotations

import numpy as np
import pytest
from stumpy_anchor import run_stumpy

import clts
import clts.compat.stumpy as cs

M = 10

STUMPY_SCRIPT = r"""
import sys, numpy as np, stumpy
d = dict(np.load(sys.argv[1]))
T, TN, B = d["T"], d["TN"], d["B"]
m = int(d["m"])
o = {}
def run(name, obj, n):
    for u in range(n):
        obj.update()
        o[f"{name}_P{u}"], o[f"{name}_I{u}"] = obj.P_, obj.I_
    if hasattr(obj, "left_I_"):
        o[name + "_L"], o[name + "_R"] = obj.left_I_, obj.right_I_
np.random.seed(11); run("self", stumpy.scrump(TN, m, percentage=0.2, pre_scrump=True), 2)
np.random.seed(12); run("ab", stumpy.scrump(T, m, B, ignore_trivial=False, percentage=0.3,
                                            pre_scrump=True, k=2), 2)
np.random.seed(13); run("plain", stumpy.scraamp(T, m, percentage=0.25), 2)
TP = T.copy()
TP[40] = np.nan
np.random.seed(19); run("plain1", stumpy.scraamp(TP, m, percentage=0.25, pre_scraamp=True,
                                                p=1.0), 2)
np.random.seed(20); run("plain3", stumpy.scraamp(T, m, B, ignore_trivial=False, percentage=0.3,
                                                p=3.0, k=2), 2)
np.random.seed(14); o["pre_P"], o["pre_I"] = stumpy.prescrump(TN, m, k=2)
np.random.seed(15); o["prea_P"], o["prea_I"] = stumpy.prescraamp(T, m, B, p=1.0)
np.random.seed(16); s = stumpy.stimp(T, 8, 20, 4, percentage=0.2)
for u in range(3):
    s.update()
o["pan"], o["pan_M"] = s.PAN_, s.M_
o["pan_n"] = s.pan(contrast=False, binary=False)
np.random.seed(17); s = stumpy.stimp(TN, 8, 20, 4, percentage=0.2)
for u in range(3):
    s.update()
o["panN_P"] = np.concatenate(s.P_)
np.random.seed(18); s = stumpy.aamp_stimp(T, 8, 20, 4, percentage=0.25)
for u in range(3):
    s.update()
o["apan_P"] = np.concatenate(s.P_)
s = stumpy.gpu_stimp if False else stumpy.stimp(T, 8, 20, 4, percentage=1.0)
for u in range(4):
    s.update()
o["pan1"] = s.PAN_
o["pan1_n"] = s.pan(contrast=False, binary=False)
o["pan1_P"] = np.concatenate(s.P_)
np.savez(sys.argv[2], **o)
"""


def _inputs():
    rng = np.random.default_rng(7)
    T = np.cumsum(rng.standard_normal(160))
    TN = T.copy()
    TN[40] = np.nan
    TN[100:100 + M + 3] = 2.5        # a constant run
    B = np.cumsum(rng.standard_normal(120))
    return dict(T=T, TN=TN, B=B, m=M)


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    inp = _inputs()
    return inp, run_stumpy(tmp_path_factory, "scrump_stumpy", STUMPY_SCRIPT, inp)


def _same(got_P, got_I, want_P, want_I, m=M):
    """Distances to rounding, indices equal except at the ties of a constant window (distance
    sqrt(m) to every other window, 0 between two constant ones: which of the tied windows is
    kept depends on the order the pairs are met in)."""
    np.testing.assert_array_equal(np.isinf(got_P), np.isinf(want_P))
    fin = np.isfinite(want_P)
    np.testing.assert_allclose(got_P[fin], want_P[fin], rtol=0, atol=1e-8)
    tie = np.isclose(want_P, np.sqrt(m), rtol=0, atol=1e-8) | (want_P == 0)
    np.testing.assert_array_equal(got_I[~tie], want_I[~tie])


def _run(obj, n):
    out = []
    for _ in range(n):
        obj.update()
        out.append((obj.P_, obj.I_))
    return out


def test_scrump_as_stumpy(device, ref):
    inp, o = ref
    T, TN, B = inp["T"], inp["TN"], inp["B"]
    np.random.seed(11)
    a = cs.scrump(TN, M, percentage=0.2, pre_scrump=True, device=device)
    for u, (P, I) in enumerate(_run(a, 2)):
        _same(P, I, o[f"self_P{u}"], o[f"self_I{u}"])
    free = ~np.isclose(a.P_, np.sqrt(M)) & (a.P_ > 0)       # no constant-window tie
    np.testing.assert_array_equal(a.left_I_[free], o["self_L"][free])
    np.testing.assert_array_equal(a.right_I_[free], o["self_R"][free])
    np.random.seed(12)
    b = cs.scrump(T, M, B, ignore_trivial=False, percentage=0.3, pre_scrump=True, k=2,
                  device=device)
    for u, (P, I) in enumerate(_run(b, 2)):
        assert P.shape == (len(T) - M + 1, 2)
        _same(P, I, o[f"ab_P{u}"], o[f"ab_I{u}"])
    np.testing.assert_array_equal(b.left_I_, o["ab_L"])
    np.random.seed(13)
    c = cs.scraamp(T, M, percentage=0.25, device=device)
    for u, (P, I) in enumerate(_run(c, 2)):
        _same(P, I, o[f"plain_P{u}"], o[f"plain_I{u}"])


def test_scraamp_p_as_stumpy(device, ref):
    """Plain distances of order p != 2 below percentage 1 (the diagonal update's rolling sum
    of |a - b|^p): p = 1 self-join with NaN after preSCRAAMP, p = 3 AB-join top-2 (no
    constant run: equal windows tie exactly under plain distances)."""
    inp, o = ref
    T, B = inp["T"], inp["B"]
    TP = T.copy()
    TP[40] = np.nan
    np.random.seed(19)
    a = cs.scraamp(TP, M, percentage=0.25, pre_scraamp=True, p=1.0, device=device)
    for u, (P, I) in enumerate(_run(a, 2)):
        _same(P, I, o[f"plain1_P{u}"], o[f"plain1_I{u}"])
    np.testing.assert_array_equal(a.left_I_, o["plain1_L"])
    np.testing.assert_array_equal(a.right_I_, o["plain1_R"])
    np.random.seed(20)
    b = cs.scraamp(T, M, B, ignore_trivial=False, percentage=0.3, p=3.0, k=2, device=device)
    for u, (P, I) in enumerate(_run(b, 2)):
        _same(P, I, o[f"plain3_P{u}"], o[f"plain3_I{u}"])


def test_scraamp_p_inf_exact_at_the_end(device):
    """p = inf (stumpy's rolling update gives NaN there: no anchor): every update an upper
    bound of the brute-force profile, equal to it once every diagonal is done."""
    T = np.cumsum(np.random.default_rng(8).standard_normal(150))
    T[30] = np.nan
    W = np.lib.stride_tricks.sliding_window_view(T, M)
    with np.errstate(invalid="ignore"):
        D = np.max(np.abs(W[:, None, :] - W[None, :, :]), axis=2)
    D[np.isnan(D)] = np.inf
    ez = int(np.ceil(M / 4))
    idx = np.arange(len(W))
    D[np.abs(idx[:, None] - idx[None, :]) <= ez] = np.inf
    want = D.min(axis=1)
    a = clts.scrump(T, M, percentage=0.4, normalize=False, p=np.inf, device=device)
    while not a.done:
        a.update()
        assert np.all(a.P_ >= want - 1e-12)
        has = a.I_ >= 0
        np.testing.assert_allclose(a.P_[has], D[idx[has], a.I_[has]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.P_, want, rtol=0, atol=1e-12)


def test_prescrump_as_stumpy(device, ref):
    inp, o = ref
    np.random.seed(14)
    P, I = cs.prescrump(inp["TN"], M, k=2, device=device)
    _same(P, I, o["pre_P"], o["pre_I"])
    np.random.seed(15)
    P, I = cs.prescraamp(inp["T"], M, inp["B"], p=1.0, device=device)
    _same(P, I, o["prea_P"], o["prea_I"])


def _same_pan(s, pan, pan_n):
    """The normalised profiles to rounding; PAN_ (ranks of all distances, then 0 / 1 at the
    threshold's rank) equal but where two distances equal to rounding swap ranks across the
    threshold."""
    np.testing.assert_allclose(s.pan(contrast=False, binary=False), pan_n, rtol=0, atol=1e-10)
    assert np.sum(s.PAN_ != pan) <= 2


def test_stimp_as_stumpy(device, ref):
    inp, o = ref
    np.random.seed(16)
    s = cs.stimp(inp["T"], 8, 20, 4, percentage=0.2, device=device)
    for _ in range(3):
        s.update()
    np.testing.assert_array_equal(s.M_, o["pan_M"])
    _same_pan(s, o["pan"], o["pan_n"])
    # with NaN and a constant run: the raw profiles (PAN_ ranks all distances together, and
    # the constant windows' many equal distances sit at its threshold)
    np.random.seed(17)
    s = cs.stimp(inp["TN"], 8, 20, 4, percentage=0.2, device=device)
    for _ in range(3):
        s.update()
    got, want = np.concatenate(s.P_), o["panN_P"]
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], atol=1e-8)
    np.random.seed(18)
    a = cs.aamp_stimp(inp["T"], 8, 20, 4, percentage=0.25, device=device)
    for _ in range(3):
        a.update()
    got, want = np.concatenate(a.P_), o["apan_P"]
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got[np.isfinite(want)], want[np.isfinite(want)], atol=1e-8)
    g = cs.gpu_stimp(inp["T"], 8, 20, 4, device=device)
    g.update()
    g.update_all()
    _same_pan(g, o["pan1"], o["pan1_n"])
    np.testing.assert_allclose(np.concatenate(g.P_), o["pan1_P"], rtol=0, atol=1e-10)


def test_stumpy_docstring_example(device):
    # stumpy.stimp's docstring example (its printed result)
    T = np.array([584., -11., 23., 79., 1001., 0., -19.])
    pmp = cs.stimp(T, device=device)
    pmp.update()
    np.testing.assert_array_equal(pmp.PAN_, [[0., 1., 1., 1., 1., 1., 1.]] * 2)


def test_percentage_one_is_stump(device):
    T = np.cumsum(np.random.default_rng(3).standard_normal(200))
    a = cs.scrump(T, M, percentage=1.0, pre_scrump=True, device=device)
    a.update()
    s = cs.stump(T, M, device=device)
    np.testing.assert_array_equal(a.P_, s.P_)
    np.testing.assert_array_equal(a.I_, s.I_)
    np.testing.assert_array_equal(a.left_I_, s.left_I_)
    np.testing.assert_array_equal(a.right_I_, s.right_I_)


@pytest.mark.parametrize("k", [1, 3])
def test_anytime_properties(device, k):
    rng = np.random.default_rng(5)
    T = np.cumsum(rng.standard_normal(180))
    T[60:75] = 1.0
    ex = clts.matrix_profile(T, M, k=k, device=device, progress=False)
    a = clts.scrump(T, M, percentage=0.3, pre_scrump=True, k=k, device=device)
    prev = np.full(ex.P.shape, np.inf)
    win = np.lib.stride_tricks.sliding_window_view(T, M)
    z = (win - win.mean(1, keepdims=True)) / np.where(win.std(1) > 0, win.std(1), 1)[:, None]
    while not a.done:
        a.update()
        P, I = a.P_.reshape(ex.P.shape), a.I_.reshape(ex.P.shape)
        assert np.all(P >= ex.P - 1e-9)              # an upper bound of the exact profile
        assert np.all(P <= prev + 1e-12)             # never worse than before
        prev = P
        rows, cols = np.nonzero(I >= 0)
        assert np.all(np.abs(rows - I[rows, cols]) > int(np.ceil(M / 4)))
        d = np.linalg.norm(z[rows] - z[I[rows, cols]], axis=1)
        const = (win.std(1) == 0)
        both = const[rows] & const[I[rows, cols]]
        one = const[rows] ^ const[I[rows, cols]]
        d = np.where(both, 0.0, np.where(one, np.sqrt(M), d))
        np.testing.assert_allclose(P[rows, cols], d, atol=1e-8)   # I names windows at P
    np.testing.assert_allclose(a.P_.reshape(ex.P.shape), ex.P, atol=1e-12)


def test_bad_input():
    T = np.arange(50.0)
    with pytest.raises(ValueError, match="percentage"):
        clts.scrump(T, 5, percentage=0)
    with pytest.raises(ValueError, match="k must"):
        clts.scrump(T, 5, k=0)
    with pytest.raises(ValueError, match="m must"):
        clts.prescrump(T, 2)
    with pytest.raises(ValueError, match="1-D"):
        clts.stimp(np.ones((2, 20)))
    with pytest.raises(ValueError, match="p must"):
        clts.scrump(T, 5, normalize=False, p=0.5)


def test_layouts(device):
    T = np.cumsum(np.random.default_rng(9).standard_normal(300))
    odd = T.astype(">f8")[::2]                    # big-endian, strided
    np.random.seed(4)
    P1, I1 = clts.prescrump(odd, M, device=device)
    np.random.seed(4)
    P2, I2 = clts.prescrump(np.ascontiguousarray(T[::2]), M, device=device)
    np.testing.assert_array_equal(P1, P2)
    np.testing.assert_array_equal(I1, I2)
    np.random.seed(4)
    a = clts.scrump(odd, M, percentage=0.5, device=device)
    a.update()
    np.random.seed(4)
    b = clts.scrump(T[::2].copy(), M, percentage=0.5, device=device)
    b.update()
    np.testing.assert_array_equal(a.P_, b.P_)


@pytest.mark.parametrize("m", [M, 33])
def test_prescrump_fused_is_stored_path(device, m, monkeypatch):
    """preSCRIMP at k = 1 (``pre_fused32``: profiles screened in float and reduced where made;
    ``pre_fused``: in double) equals the path that stores them (``pre_dist`` + ``pre_rows`` /
    ``pre_cols``) bit for bit, also in several launches, with NaN, constant and
    ill-conditioned windows and exact repeats."""
    import sys
    ps = sys.modules["clts.mp.prescrump"]
    rng = np.random.default_rng(5)
    T = np.cumsum(rng.standard_normal(700))
    T[100:140] = 5.0
    T[300] = np.nan
    T[500:540] = 1e9 + 1e-6 * rng.standard_normal(40)
    T[600:700] = T[200:300]         # exact repeats: ties that the float screen must not decide
    monkeypatch.setattr(ps, "MASS_BYTES", 12 * 700 // 8 * 9)      # a few queries a launch
    out = []
    for fused, screen in ((False, False), (True, True), (True, False)):
        monkeypatch.setattr(ps, "FUSED", fused)
        monkeypatch.setattr(ps, "SCREEN32", screen)
        np.random.seed(6)
        out.append(clts.prescrump(T, m, device=device))
    for o in out[1:]:
        np.testing.assert_array_equal(o[0], out[0][0])
        np.testing.assert_array_equal(o[1], out[0][1])


@pytest.mark.parametrize("windows,queries", [(16, 1), (16, 2), (48, 3)])
def test_prescrump_screen_shapes(device, windows, queries, monkeypatch):
    """preSCRIMP's screen at other work-item shapes than the CPUs' 32 windows x 4 queries (the
    profile's ``mp.subdiag``: GPUs take 16 x 2) gives the stored path's neighbours and
    distances bit for bit, with flagged windows and several launches."""
    import sys
    ps = sys.modules["clts.mp.prescrump"]
    rng = np.random.default_rng(9)
    T = np.cumsum(rng.standard_normal(650))
    T[90:130] = 2.0
    T[333] = np.nan
    T[560:650] = T[100:190]
    monkeypatch.setattr(ps, "MASS_BYTES", 12 * 650 // 8 * 9)
    monkeypatch.setattr(ps, "FUSED", False)
    np.random.seed(3)
    want = clts.prescrump(T, M, device=device)
    monkeypatch.setattr(ps, "FUSED", True)
    for screen in (True, False):
        monkeypatch.setattr(ps, "SCREEN32", screen)
        np.random.seed(3)
        with device.profile.overlay("mp.subdiag", fused_windows=windows, fused_queries=queries):
            got = clts.prescrump(T, M, device=device)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("key,value", [("fused_windows", 24), ("fused_windows", 80),
                                       ("fused_queries", 0), ("subgroup", 12),
                                       ("grf", 64)])
def test_subdiag_profile_errors(device, key, value):
    """A bad ``mp.subdiag`` value is a ProfileError naming its key (the profile's own value
    back after ``Profile.overlay``)."""
    from clts.errors import ProfileError
    with device.profile.overlay("mp.subdiag", **{key: value}), \
            pytest.raises(ProfileError, match=f"mp.subdiag.{key}"):
        clts.prescrump(np.arange(200.0) % 7, 8, device=device)
    assert device.profile.get(f"mp.subdiag.{key}") != value      # the overlay is gone


@pytest.mark.parametrize("kw", [{}, {"k": 2, "normalize": False, "p": 1.0}, {"T_B": "B"}])
def test_scrump_pickles_midway_and_goes_on_alike(device, kw):
    """A Scrump pickles (saved, or sent to a Dask worker) between updates; the copy prepares its
    own device side and its next updates give the same profile as the original's."""
    import pickle
    rng = np.random.default_rng(4)
    T = np.cumsum(rng.standard_normal(400))
    if kw.get("T_B") == "B":
        kw = {"T_B": np.cumsum(rng.standard_normal(300))}
    np.random.seed(3)
    s = clts.scrump(T, 24, percentage=0.2, pre_scrump=True, device=device, **kw)
    s.update()
    s2 = pickle.loads(pickle.dumps(s))
    for _ in range(2):
        s.update()
        s2.update()
    for name in ("P_", "I_", "left_I_", "right_I_"):
        np.testing.assert_array_equal(getattr(s2, name), getattr(s, name), err_msg=name)
    assert s2._sides.dev is s._sides.dev
