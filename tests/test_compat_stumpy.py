"""clts.compat.stumpy against stumpy itself: stumpy's own checks (its test suite's
naive-vs-stumpy comparisons: stump self / AB / top-k / non-normalised, mstump, mass, match,
motifs, fluss, stumpi) rerun on the compat module, with stumpy's outputs on the same inputs as
the expected values. stumpy runs once, in a subprocess with NUMBA_DISABLE_JIT=1 (its numba
warm-up costs minutes on a shared CPU; interpreted, these small cases take seconds)."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from stumpy_anchor import run_stumpy

import clts.compat.stumpy as cs

M = 12

STUMPY_SCRIPT = r"""
import sys, numpy as np, stumpy
from stumpy.floss import _iac
d = dict(np.load(sys.argv[1]))
T, TN, B, T3, m = d["T"], d["TN"], d["B"], d["T3"], int(d["m"])
o = {}
o["self"] = stumpy.stump(T, m).astype(float)
o["self_nan"] = stumpy.stump(TN, m).astype(float)
o["ab"] = stumpy.stump(T, m, B, ignore_trivial=False).astype(float)
o["k3"] = stumpy.stump(T, m, k=3).astype(float)
o["plain"] = stumpy.stump(T, m, normalize=False).astype(float)
o["aamp1"] = stumpy.aamp(T, m, p=1.0).astype(float)
P, I = stumpy.mstump(T3, m)
o["mP"], o["mI"] = P, I
o["mass"] = stumpy.mass(T[40:40 + m], T)
o["mass_q"] = stumpy.mass(T[40:40 + m], T, query_idx=40)
o["mass_p1"] = stumpy.mass(T[40:40 + m], T, normalize=False, p=1.0)
o["match"] = stumpy.match(T[40:40 + m], T, max_distance=3.0).astype(float)
o["match_def"] = stumpy.match(T[40:40 + m], T).astype(float)
o["match_md"] = stumpy.match(T3[:, 40:40 + m], T3, max_distance=4.0).astype(float)
Pm = o["self"][:, 0]
for name, kw in (("mot", {}), ("mot3", dict(max_motifs=3, max_matches=4)),
                 ("mot_md", dict(max_motifs=2, max_distance=2.0, min_neighbors=2)),
                 ("mot_cut", dict(max_motifs=5, cutoff=np.inf))):
    o[name + "_d"], o[name + "_i"] = stumpy.motifs(T, Pm, **kw)
o["amot_d"], o["amot_i"] = stumpy.aamp_motifs(T, o["plain"][:, 0], max_motifs=2, cutoff=np.inf)
I = o["self"][:, 1].astype(np.int64)
o["iac"] = _iac(len(I), n_iter=5, n_samples=200)
o["cac"], o["locs"] = stumpy.fluss(I, L=M_L, n_regimes=3, custom_iac=o["iac"].copy())
s = stumpy.stumpi(T[:120], m, egress=False)
for t in T[120:150]:
    s.update(t)
o["si_P"], o["si_I"], o["si_lP"], o["si_lI"] = s.P_, s.I_, s.left_P_, s.left_I_
s = stumpy.stumpi(T[:120], m)
for t in T[120:140]:
    s.update(t)
o["se_P"], o["se_I"], o["se_lI"], o["se_T"] = s.P_, s.I_, s.left_I_, s.T_
np.savez(sys.argv[2], **o)
""".replace("M_L", "10")


def _inputs():
    rng = np.random.default_rng(37)
    T = np.cumsum(rng.standard_normal(220))
    T[150:150 + M] = T[30:30 + M] + 0.01 * rng.standard_normal(M)     # a near repeat
    TN = T.copy()
    TN[[20, 95]] = np.nan
    B = np.cumsum(rng.standard_normal(160))
    T3 = np.cumsum(rng.standard_normal((3, 150)), axis=1)
    return dict(T=T, TN=TN, B=B, T3=T3, m=M)


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    inp = _inputs()
    return inp, run_stumpy(tmp_path_factory, "compat_stumpy", STUMPY_SCRIPT, inp)


def _same_profile(got, want, atol=1e-7):
    """stumpy's check for a (l, 2k + 2) result: distances close, indices equal (no exact ties
    in these series)."""
    assert isinstance(got, cs.mparray) and got.dtype == object and got.shape == want.shape
    k = got._k
    np.testing.assert_allclose(got[:, :k].astype(float), want[:, :k], atol=atol)
    np.testing.assert_array_equal(got[:, k:].astype(np.int64), want[:, k:].astype(np.int64))


def test_stump(device, ref):
    inp, out = ref
    T, m = inp["T"], M
    got = cs.stump(T, m, device=device)
    _same_profile(got, out["self"])
    assert got.P_.dtype == np.float64 and got.P_.shape == (len(T) - m + 1,)
    np.testing.assert_array_equal(got.I_, out["self"][:, 1].astype(np.int64))
    np.testing.assert_array_equal(got.left_I_, out["self"][:, 2].astype(np.int64))
    np.testing.assert_array_equal(got.right_I_, out["self"][:, 3].astype(np.int64))
    _same_profile(cs.stump(inp["TN"], m, device=device), out["self_nan"])
    _same_profile(cs.stump(T, m, inp["B"], ignore_trivial=False, device=device), out["ab"])
    k3 = cs.stump(T, m, k=3, device=device)
    _same_profile(k3, out["k3"])
    assert k3.P_.shape == (len(T) - m + 1, 3)
    _same_profile(cs.gpu_stump(T, m, device=device), out["self"])


def test_stump_join_rules(device, ref):
    inp, out = ref
    T = inp["T"]
    with pytest.warns(UserWarning, match="ignore_trivial"):
        _same_profile(cs.stump(T, M, ignore_trivial=False, device=device), out["self"])
    _same_profile(cs.stump(T, M, T.copy(), device=device), out["self"])   # T_B == T_A
    with pytest.raises(NotImplementedError, match="T_A_subseq_isconstant"):
        cs.stump(T, M, T_A_subseq_isconstant=np.zeros(len(T) - M + 1, bool))


def test_layouts_and_warnings(device, ref):
    """Any numpy layout gives the same profile (Fortran-strided, big-endian, a list); stumpy's
    warning for an AB-join asked as a self-join, and the AB-join runs."""
    inp, out = ref
    T = inp["T"]
    wide = np.zeros((len(T), 3), order="F")
    wide[:, 1] = T
    for layout in (wide[:, 1], T.astype(">f8"), list(T)):
        _same_profile(cs.stump(layout, M, device=device), out["self"])
    with pytest.warns(UserWarning, match="AB-join"):
        _same_profile(cs.stump(T, M, inp["B"], device=device), out["ab"])
    with pytest.raises(TypeError, match="m"):
        cs.stump(T, "12", device=device)


def test_aamp(device, ref):
    inp, out = ref
    T = inp["T"]
    _same_profile(cs.stump(T, M, normalize=False, device=device), out["plain"])
    _same_profile(cs.aamp(T, M, p=1.0, device=device), out["aamp1"])


def test_mstump(device, ref):
    inp, out = ref
    P, I = r = cs.mstump(inp["T3"], M, device=device)
    assert type(r).__name__ == "mparray" and r._fields == ("P_", "I_")
    np.testing.assert_allclose(P, out["mP"], atol=1e-7)
    np.testing.assert_array_equal(I, out["mI"])


def test_mass_match(device, ref):
    inp, out = ref
    T, Q = inp["T"], inp["T"][40:40 + M]
    np.testing.assert_allclose(cs.mass(Q, T, device=device), out["mass"], atol=1e-6)
    np.testing.assert_allclose(cs.mass(Q, T, query_idx=40, device=device), out["mass_q"],
                               atol=1e-6)
    np.testing.assert_allclose(cs.mass(Q, T, normalize=False, p=1.0, device=device),
                               out["mass_p1"], atol=1e-9)
    for got, key in ((cs.match(Q, T, max_distance=3.0, device=device), "match"),
                     (cs.match(Q, T, device=device), "match_def"),
                     (cs.match(inp["T3"][:, 40:40 + M], inp["T3"], max_distance=4.0,
                               device=device), "match_md")):
        assert got.dtype == object and got.shape == out[key].shape
        np.testing.assert_allclose(got[:, 0].astype(float), out[key][:, 0], atol=1e-6)
        np.testing.assert_array_equal(got[:, 1].astype(int), out[key][:, 1].astype(int))
    with pytest.raises(ValueError, match="illegal"):
        cs.match(np.full(M, np.nan), T)


def test_motifs(device, ref):
    inp, out = ref
    T = inp["T"]
    P = out["self"][:, 0].astype(object)          # stumpy users pass mp[:, 0]
    for name, kw in (("mot", {}), ("mot3", dict(max_motifs=3, max_matches=4)),
                     ("mot_md", dict(max_motifs=2, max_distance=2.0, min_neighbors=2)),
                     ("mot_cut", dict(max_motifs=5, cutoff=np.inf))):
        d, i = cs.motifs(T, P, device=device, **kw)
        assert d.dtype == np.float64 and i.dtype == np.int64, name
        assert i.size > 0, name
        np.testing.assert_array_equal(i, out[name + "_i"], err_msg=name)
        np.testing.assert_allclose(d, out[name + "_d"], atol=1e-6, err_msg=name)
    d, i = cs.aamp_motifs(T, out["plain"][:, 0], max_motifs=2, cutoff=np.inf, device=device)
    assert i.size > 0
    np.testing.assert_array_equal(i, out["amot_i"])
    np.testing.assert_allclose(d, out["amot_d"], atol=1e-6)
    # a clts result works as P too (the pair's two profile values are equal but for rounding:
    # which of the two comes first is rounding's choice)
    import clts
    d2, i2 = cs.motifs(T, clts.matrix_profile(T, M, device=device, progress=False),
                       device=device)
    np.testing.assert_array_equal(np.sort(i2, axis=1), np.sort(out["mot_i"], axis=1))


def test_fluss(ref):
    inp, out = ref
    I = out["self"][:, 1].astype(np.int64)
    cac, locs = cs.fluss(I, L=10, n_regimes=3, custom_iac=out["iac"].copy())
    np.testing.assert_allclose(cac, out["cac"], rtol=1e-12)
    np.testing.assert_array_equal(locs, out["locs"])
    cac2, _ = cs.fluss(I.astype(object), 10, 3, 5, out["iac"].copy())    # stumpy's mp[:, 1]
    np.testing.assert_array_equal(cac2, cac)
    pytest.importorskip("scipy")
    # stumpy's idealised arc curve, reimplemented: the same numbers from the same seed
    np.testing.assert_allclose(cs.stumpy_iac(len(I), n_iter=5, n_samples=200), out["iac"],
                               rtol=1e-10)


def test_stumpi(device, ref):
    inp, out = ref
    T = inp["T"]
    s = cs.stumpi(T[:120], M, egress=False, device=device)
    for t in T[120:150]:
        s.update(t)
    np.testing.assert_allclose(s.P_, out["si_P"], atol=1e-7)
    np.testing.assert_array_equal(s.I_, out["si_I"])
    np.testing.assert_allclose(s.left_P_, out["si_lP"], atol=1e-7)
    np.testing.assert_array_equal(s.left_I_, out["si_lI"])
    s = cs.stumpi(T[:120], M, device=device)
    for t in T[120:140]:
        s.update(t)
    np.testing.assert_allclose(s.P_, out["se_P"], atol=1e-7)
    np.testing.assert_array_equal(s.I_, out["se_I"])
    np.testing.assert_array_equal(s.left_I_, out["se_lI"])
    np.testing.assert_allclose(s.T_, out["se_T"])
    with pytest.raises(ValueError, match="k must be"):
        cs.stumpi(T[:120], M, k=0)


@pytest.mark.parametrize("name", ["ostinatoed", "mpdisted", "stumped"])
def test_absent_functions_raise(name):
    with pytest.raises(NotImplementedError, match=f"stumpy.{name} "):
        getattr(cs, name)(np.arange(10.0), 3)


def test_no_stray_warnings(device):
    T = np.cumsum(np.random.default_rng(2).standard_normal(100))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cs.stump(T, 8, device=device)


def test_clts_motifs_takes_stumpy_profiles(device):
    """clts.motifs(T, P) with a bare profile (stumpy's mp[:, 0]) or stumpy's whole array finds
    the motifs that it finds from the result object."""
    import clts
    rng = np.random.default_rng(5)
    T = rng.standard_normal(400)
    T[50:80] = T[250:280] = np.sin(np.arange(30) / 3)
    T[150:180] = np.sin(np.arange(30) / 3) + 0.05 * rng.standard_normal(30)
    res = clts.matrix_profile(T, 30, device=device, progress=False)
    want = clts.motifs(T, res, 2)
    mp = cs.stump(T, 30, device=device)
    for P in (mp[:, 0], res.P[:, 0], mp):
        got = clts.motifs(T, P, 2)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert sorted(g["indices"].tolist()) == sorted(w["indices"].tolist())
            np.testing.assert_allclose(np.sort(g["distances"]), np.sort(w["distances"]),
                                       atol=1e-8)
    assert {50, 250} <= set(want[0]["indices"].tolist())
    with pytest.raises(ValueError, match="m = 2"):
        clts.motifs(T, np.zeros(399))


REAL_SCRIPT = r"""
import sys, numpy as np, stumpy
d = dict(np.load(sys.argv[1]))
o = {}
for name in ("elnino", "sunspots", "co2"):
    for j, kw in enumerate(MOTIF_CASES):
        o[f"{name}{j}_d"], o[f"{name}{j}_i"] = stumpy.motifs(d[name], d[name + "_P"], **kw)
o["aamp_d"], o["aamp_i"] = stumpy.aamp_motifs(d["elnino"], d["elnino_aP"], max_motifs=2)
o["cac"], o["locs"] = stumpy.fluss(d["walk_I"], L=30, n_regimes=3)
np.savez(sys.argv[2], **o)
"""

#: stumpy.motifs's keywords tried on each real series
MOTIF_CASES = ({}, dict(max_motifs=3, max_matches=None),
               dict(max_motifs=2, cutoff=np.inf, min_neighbors=3),
               dict(max_motifs=4, max_distance=2.5, atol=1e-6, max_matches=5))


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """statsmodels' series (El Nino sea temperatures monthly, m = 24; yearly sunspots, m = 11;
    Mauna Loa CO2 weekly, m = 52) and a random walk with a plateau; their profiles computed by
    clts and given to stumpy and clts alike (same inputs), stumpy interpreted in a
    subprocess."""
    pytest.importorskip("stumpy")
    sm = pytest.importorskip("statsmodels.api")
    import clts
    d = {"elnino": sm.datasets.elnino.load_pandas().data.iloc[:, 1:13].to_numpy().ravel(),
         "sunspots": sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(),
         "co2": sm.datasets.co2.load_pandas().data["co2"].interpolate().to_numpy()[:1500]}
    d = {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in d.items()}
    for name, m in (("elnino", 24), ("sunspots", 11), ("co2", 52)):
        d[name + "_P"] = clts.matrix_profile(d[name], m, progress=False).P[:, 0]
    d["elnino_aP"] = clts.aamp(d["elnino"], 24, progress=False).P[:, 0]
    rng = np.random.default_rng(11)
    walk = np.cumsum(rng.standard_normal(1500))
    walk[600:950] = walk[600] + 0.05 * rng.standard_normal(350)      # a plateau
    d["walk"] = walk
    d["walk_I"] = clts.matrix_profile(walk, 30, progress=False).I[:, 0]
    tmp = tmp_path_factory.mktemp("compat_stumpy_real")
    np.savez(tmp / "in.npz", **d)
    (tmp / "run.py").write_text(REAL_SCRIPT.replace("MOTIF_CASES", repr(MOTIF_CASES))
                                .replace("inf", "np.inf"))
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONWARNINGS="ignore")
    subprocess.run([sys.executable, str(tmp / "run.py"), str(tmp / "in.npz"),
                    str(tmp / "out.npz")], check=True, env=env, timeout=600)
    return d, dict(np.load(tmp / "out.npz"))


def test_motifs_real_series(device, real):
    """clts.motifs (list of motifs) and compat.motifs (stumpy's padded arrays) find stumpy's
    motifs on real series: the same indices in the same order, the same distances."""
    import clts
    d, out = real
    for name in ("elnino", "sunspots", "co2"):
        T, P = d[name], d[name + "_P"]
        for j, kw in enumerate(MOTIF_CASES):
            want_d, want_i = out[f"{name}{j}_d"], out[f"{name}{j}_i"]
            msg = f"{name} {kw}"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")       # stumpy's "no motifs" advice
                got_d, got_i = cs.motifs(T, P, device=device, **kw)
                own = dict(kw)
                found = clts.motifs(T, P, own.pop("max_motifs", 1), device=device, **own)
            np.testing.assert_array_equal(got_i, want_i, err_msg=msg)
            np.testing.assert_allclose(got_d, want_d, atol=1e-6, err_msg=msg)
            assert len(found) == (len(want_i) if want_i.size else 0), msg
            for f, wi, wd in zip(found, want_i, want_d):
                n = int(np.sum(wi >= 0))
                np.testing.assert_array_equal(f["indices"], wi[:n], err_msg=msg)
                np.testing.assert_allclose(f["distances"], wd[:n], atol=1e-6, err_msg=msg)
    assert out["elnino0_i"].shape == (1, 8)         # one motif, eight occurrences
    got_d, got_i = cs.aamp_motifs(d["elnino"], d["elnino_aP"], max_motifs=2, device=device)
    np.testing.assert_array_equal(got_i, out["aamp_i"])
    np.testing.assert_allclose(got_d, out["aamp_d"], atol=1e-6)


def test_fluss_stumpy_iac(real):
    """fluss(iac="stumpy") is stumpy.fluss's curve and boundaries, on a random walk with a
    plateau; compat.fluss is that by default."""
    pytest.importorskip("scipy")
    import clts
    d, out = real
    cac, locs = clts.fluss(d["walk_I"], 30, 3, iac="stumpy")
    np.testing.assert_allclose(cac, out["cac"], rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(locs, out["locs"])
    cac2, locs2 = cs.fluss(d["walk_I"].astype(object), 30, 3)
    np.testing.assert_array_equal(cac2, cac)
    np.testing.assert_array_equal(locs2, locs)
    closed, _ = clts.fluss(d["walk_I"], 30, 3)          # the default, the closed form
    assert 0 < np.max(np.abs(closed - cac)) < 0.2
    with pytest.raises(ValueError, match="iac"):
        clts.fluss(d["walk_I"], 30, 3, iac="beta")
