"""Time-series chains (``clts.allc`` / ``clts.atsc``), streaming segmentation (``clts.floss``)
and multi-dimensional motifs (``clts.mmotifs``), and their ``clts.compat.stumpy`` wrappers,
against stumpy (run once in a child without JIT) on stumpy's documented inputs and on random
series with NaN and constant windows."""
from __future__ import annotations

import numpy as np
import pytest
from stumpy_anchor import run_stumpy

import clts
import clts.compat.stumpy as cs
from clts.mp.chains import _heads, _links
from clts.mp.floss import unidirectional_iac
from clts.mp.fluss import arc_curve, stumpy_iac

M = 8
N0 = 120          # floss: the series it starts from
STEPS = 6         # floss: updates read one by one, then the rest in one piece

SCRIPT = r"""
import sys, numpy as np, stumpy
from stumpy.floss import _iac
d = dict(np.load(sys.argv[1]))
m, n0, steps = int(d["m"]), int(d["n0"]), int(d["steps"])
o = {}
for name in ("doc", "walk", "flat"):
    mp = stumpy.stump(d[name], int(d[name + "_m"]))
    o[name + "_mp"] = mp.astype(float)
    S, C = stumpy.allc(mp[:, 2], mp[:, 3])
    o[name + "_S"] = np.concatenate(S)
    o[name + "_Slen"] = np.array([len(s) for s in S])
    o[name + "_C"] = C
    o[name + "_atsc"] = np.concatenate([stumpy.atsc(mp[:, 2], mp[:, 3], j)
                                        for j in range(0, len(mp), 7)])
F = d["F"]
o["iac"] = _iac(len(F[:n0]) - m + 1, bidirectional=False, n_iter=4, n_samples=100)
for name, kw in (("z", {}), ("p1", dict(normalize=False, p=1.0)),
                 ("p2", dict(normalize=False))):
    if kw:
        mp = stumpy.aamp(F[:n0], m, p=kw.get("p", 2.0))
    else:
        mp = stumpy.stump(F[:n0], m)
    f = stumpy.floss(mp, F[:n0], m, L=4, custom_iac=o["iac"].copy(), **kw)
    cac = []
    for t in F[n0:n0 + steps]:
        f.update(t)
        cac.append(f.cac_1d_)
    o[name + "_cac_steps"] = np.array(cac)
    for t in F[n0 + steps:]:
        f.update(t)
    o[name + "_cac"], o[name + "_P"], o[name + "_I"], o[name + "_T"] = (f.cac_1d_, f.P_,
                                                                      f.I_, f.T_)
# stumpy's own floss test: uniform values, n = 30, m = 5, L = 5, excl_factor = 1, every step
U1 = d["U1"]
iac1 = _iac(26, bidirectional=False, n_iter=4, n_samples=100)
o["iac1"] = iac1
for name, X in (("u1", U1), ("u1nan", d["U1N"])):
    f = stumpy.floss(stumpy.stump(X[:30], 5), X[:30], 5, 5, 1, custom_iac=iac1.copy())
    cac, P, I = [], [], []
    for t in X[30:]:
        f.update(t)
        cac.append(f.cac_1d_)
        P.append(f.P_)
        I.append(f.I_)
    o[name + "_cac"], o[name + "_P"], o[name + "_I"] = np.array(cac), np.array(P), np.array(I)
MM = [("def", {}), ("many", dict(max_motifs=3, max_matches=3)),
      ("k1", dict(k=1, max_motifs=2)), ("cut", dict(cutoffs=np.inf, max_motifs=2)),
      ("md", dict(max_distance=2.5, max_motifs=2, min_neighbors=2)),
      ("all", dict(max_matches=None, max_motifs=2))]
for sname in ("U", "W"):
    X, mm = d[sname], int(d[sname + "_m"])
    P, I = stumpy.mstump(X, mm)
    o[sname + "_P"], o[sname + "_I"] = P, I
    for name, kw in MM:
        dd, ii, ss, bb = stumpy.mmotifs(X, P, I, **kw)
        o[f"{sname}_{name}_d"], o[f"{sname}_{name}_i"] = dd, ii
        o[f"{sname}_{name}_s"] = np.concatenate(ss) if ss else np.zeros(0, int)
        o[f"{sname}_{name}_b"] = np.array(bb)
    Pi, Ii = stumpy.mstump(X, mm, include=[2])
    o[sname + "_Pi"], o[sname + "_Ii"] = Pi, Ii
    dd, ii, ss, bb = stumpy.mmotifs(X, Pi, Ii, include=[2], max_motifs=2)
    o[sname + "_inc_d"], o[sname + "_inc_i"], o[sname + "_inc_s"] = dd, ii, np.concatenate(ss)
    for pp in (1.0, 2.0):
        Pa, Ia = stumpy.maamp(X, mm, p=pp)
        o[f"{sname}_aP{pp:g}"], o[f"{sname}_aI{pp:g}"] = Pa, Ia
        dd, ii, ss, bb = stumpy.aamp_mmotifs(X, Pa, Ia, max_motifs=2, p=pp)
        o[f"{sname}_a{pp:g}_d"], o[f"{sname}_a{pp:g}_i"] = dd, ii
        o[f"{sname}_a{pp:g}_s"], o[f"{sname}_a{pp:g}_b"] = np.concatenate(ss), np.array(bb)
np.savez(sys.argv[2], **o)
"""
MM = ["def", "many", "k1", "cut", "md", "all"]


def _inputs():
    rng = np.random.default_rng(11)
    walk = np.cumsum(rng.standard_normal(400))
    flat = np.cumsum(rng.standard_normal(200))
    flat[40:60] = 3.0                                   # constant windows
    flat[100:110] = np.nan
    F = np.cumsum(rng.standard_normal(N0 + 160))
    F[N0 + 20:N0 + 32] = F[N0 + 19]                    # a plateau arrives
    F[N0 + 60] = np.nan                                 # a gap arrives
    F[N0 + 90:N0 + 130] = np.sin(np.arange(40) / 2.0)   # another regime
    U1 = rng.uniform(-1000, 1000, 64)
    U1N = U1.copy()
    U1N[[12, 41]] = np.inf, np.nan                              # as stumpy's inf / nan test
    U = rng.uniform(-1000, 1000, (3, 40))                      # stumpy's test input kind
    W = np.cumsum(rng.standard_normal((3, 160)), axis=1)
    W[:2, 20:32] = W[:2, 100:112] = 4 * np.sin(np.arange(12) / 2.0)   # a motif in 0 and 1
    W[0, 60:75] = 1.5                                          # constant windows
    W[2, 130:134] = np.nan
    return dict(U1=U1, U1N=U1N, U=U, U_m=5, W=W, W_m=8,
                doc=np.array([584., -11., 23., 79., 1001., 0., -19.]), doc_m=3,
                walk=walk, walk_m=M, flat=flat, flat_m=6, F=F, m=M, n0=N0, steps=STEPS)


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    inp = _inputs()
    return inp, run_stumpy(tmp_path_factory, "mp_chains", SCRIPT, inp)


def _flat_chains(S):
    return np.concatenate(S), np.array([len(s) for s in S])


@pytest.mark.parametrize("name", ["doc", "walk", "flat"])
def test_chains_equal_stumpy(ref, name):
    inp, out = ref
    mp = out[name + "_mp"]
    IL, IR = mp[:, 2].astype(np.int64), mp[:, 3].astype(np.int64)
    S, C = cs.allc(IL, IR)
    got, lens = _flat_chains(S)
    np.testing.assert_array_equal(got, out[name + "_S"])          # stumpy's order too
    np.testing.assert_array_equal(lens, out[name + "_Slen"])
    np.testing.assert_array_equal(C, out[name + "_C"])
    assert all(s.dtype == np.int64 for s in S) and C.dtype == np.int64
    at = np.concatenate([cs.atsc(IL, IR, j) for j in range(0, len(mp), 7)])
    np.testing.assert_array_equal(at, out[name + "_atsc"])
    # native: chains by first window, every window once; stumpy's object columns work too
    S2, C2 = clts.allc((mp[:, 2].astype(object), IR))
    assert [s[0] for s in S2] == sorted(s[0] for s in S)
    np.testing.assert_array_equal(np.sort(np.concatenate(S2)), np.arange(len(mp)))
    np.testing.assert_array_equal(C2, C)


def test_chains_from_clts_result(ref, device):
    inp, out = ref
    r = clts.matrix_profile(inp["walk"], M, device=device)
    S, C = clts.allc(r)
    np.testing.assert_array_equal(C, out["walk_C"])
    np.testing.assert_array_equal(clts.atsc(r, int(C[0])), C)
    np.testing.assert_array_equal(clts.atsc(r, -1), [len(r.P) - 1])


def test_chains_reference_and_inputs():
    """The doubling against a plain walk on random links (long chains); bad indices."""
    rng = np.random.default_rng(3)
    n = 3000
    IR = np.where(rng.random(n) < 0.9, np.arange(n) + rng.integers(1, 4, n), -1)
    IR[IR >= n] = -1
    IL = np.full(n, -1)
    ok = IR >= 0
    IL[IR[ok]] = np.arange(n)[ok]                     # the last writer wins: some links break
    succ = _links(IL, IR)
    root, depth = _heads(succ)
    pred = {int(b): a for a, b in enumerate(succ) if b >= 0}
    for i in range(n):
        j, d = i, 0
        while j in pred:
            j, d = pred[j], d + 1
        assert (root[i], depth[i]) == (j, d)
    S, C = clts.allc((IL, IR))
    assert len(C) == max(len(s) for s in S) > 10
    with pytest.raises(ValueError, match="right_I"):
        clts.allc((np.array([-1, 0]), np.array([0, -1])))
    with pytest.raises(ValueError, match="left_I"):
        clts.allc((np.array([1, -1]), np.array([-1, -1])))
    with pytest.raises(ValueError, match="j"):
        clts.atsc((IL, IR), n)
    with pytest.raises(TypeError, match="pair"):
        clts.allc(IL)
    with pytest.raises(ValueError, match="self-join"):
        clts.allc(clts.matrix_profile(np.arange(30.0) ** 1.5, 5, np.sin(np.arange(30.0))))


def test_unidirectional_iac_is_the_mean_arc_curve():
    rng = np.random.default_rng(0)
    k, acc = 40, np.zeros(40)
    for _ in range(4000):
        I = np.append(rng.integers(np.arange(1, k), k), -1)
        acc += arc_curve(I)
    np.testing.assert_allclose(acc / 4000, unidirectional_iac(k), atol=0.15)


@pytest.mark.parametrize("name,kw", [("z", {}), ("p1", dict(normalize=False, p=1.0)),
                                     ("p2", dict(normalize=False))])
def test_floss_equal_stumpy(ref, device, name, kw):
    inp, out = ref
    F, n0 = inp["F"], N0
    if kw:
        mp = cs.aamp(F[:n0], M, p=kw.get("p", 2.0), device=device)
    else:
        mp = cs.stump(F[:n0], M, device=device)
    f = cs.floss(mp, F[:n0], M, L=4, custom_iac=out["iac"], device=device, **kw)
    np.testing.assert_array_equal(f.cac_1d_, -1.0)
    for s, t in enumerate(F[n0:n0 + STEPS]):
        f.update(t)
        np.testing.assert_allclose(f.cac_1d_, out[name + "_cac_steps"][s], rtol=1e-12)
    f.update(F[n0 + STEPS:])                     # the rest in one piece (the join path)
    np.testing.assert_array_equal(f.I_, out[name + "_I"])
    np.testing.assert_allclose(f.P_, out[name + "_P"], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(f.cac_1d_, out[name + "_cac"], rtol=1e-12)
    np.testing.assert_array_equal(f.T_, out[name + "_T"])


@pytest.mark.parametrize("name", ["u1", "u1nan"])
def test_floss_stumpy_test_input(ref, device, name):
    """stumpy's own floss test (uniform values, n = 30, m = 5, excl_factor = 1; with inf and
    NaN): the state after every update."""
    inp, out = ref
    X = inp["U1N" if name == "u1nan" else "U1"]
    f = cs.floss(cs.stump(X[:30], 5, device=device), X[:30], 5, 5, 1, custom_iac=out["iac1"],
                 device=device)
    for s, t in enumerate(X[30:]):
        f.update(t)
        np.testing.assert_allclose(f.cac_1d_, out[name + "_cac"][s], rtol=1e-12)
        np.testing.assert_array_equal(f.I_, out[name + "_I"][s])
        np.testing.assert_allclose(f.P_, out[name + "_P"][s], rtol=1e-8)


def test_floss_stumpy_iac_and_native(ref, device):
    inp, out = ref
    F = inp["F"]
    k = N0 - M + 1
    np.testing.assert_allclose(stumpy_iac(k, 4, 100, bidirectional=False),
                               out["iac"], rtol=1e-12)
    # native: the result object in, the default curve; one update at a time == one block
    a = clts.floss(F[:N0], M, L=4, mp=clts.matrix_profile(F[:N0], M, device=device),
                   device=device)
    b = clts.floss(F[:N0], M, L=4, device=device)
    for t in F[N0:N0 + 40]:
        a.update(t)
        a.P_
    b.update(F[N0:N0 + 40])
    np.testing.assert_array_equal(a.I_, b.I_)
    np.testing.assert_array_equal(a.cac_1d_, b.cac_1d_)
    # near-constant windows (5 +- 1e-9): the host path, and a block kept off the AB-join
    G = 5 + 1e-9 * np.random.default_rng(4).standard_normal(N0 + 40)
    a = clts.floss(G[:N0], M, L=4, device=device)
    b = clts.floss(G[:N0], M, L=4, device=device)
    for t in G[N0:]:
        a.update(t)
        a.I_
    b.update(G[N0:])
    np.testing.assert_array_equal(a.I_, b.I_)
    np.testing.assert_allclose(a.P_, b.P_, rtol=1e-9)
    with pytest.raises(ValueError, match="L"):
        clts.floss(F[:N0], M, L=0)
    with pytest.raises(ValueError, match="T"):
        clts.floss(np.stack([F[:N0], F[:N0]]), M, L=4)
    with pytest.raises(ValueError, match="t"):
        a.update(np.ones((2, 2)))
    with pytest.raises(ValueError, match="custom_iac"):
        clts.floss(F[:N0], M, L=4, custom_iac=np.ones(3))
    with pytest.raises(ValueError, match="mp"):
        clts.floss(F[:N0], M, L=4, mp=np.zeros((5, 4)))


def _same_motifs(got, out, key, subspaces=True):
    dd, ii, ss, bb = got
    np.testing.assert_array_equal(ii, out[key + "_i"])
    # stumpy's FFT distances lose ~1e-7 on exact repeats (clts's are direct: 0)
    np.testing.assert_allclose(dd, out[key + "_d"], rtol=1e-9, atol=1e-6)
    assert dd.dtype == np.float64 and ii.dtype == np.int64
    if subspaces:
        s = np.concatenate(ss) if ss else np.zeros(0, int)
        np.testing.assert_array_equal(s, out[key + "_s"])


@pytest.mark.parametrize("sname", ["U", "W"])
def test_mmotifs_equal_stumpy(ref, device, sname):
    inp, out = ref
    X = inp[sname]
    P, I = out[sname + "_P"], out[sname + "_I"]
    kws = dict(many=dict(max_motifs=3, max_matches=3), k1=dict(k=1, max_motifs=2),
               cut=dict(cutoffs=np.inf, max_motifs=2),
               md=dict(max_distance=2.5, max_motifs=2, min_neighbors=2),
               all=dict(max_matches=None, max_motifs=2))
    for name in MM:
        got = cs.mmotifs(X, P, I, device=device, **kws.get(name, {}))
        _same_motifs(got, out, f"{sname}_{name}")
        if len(got[3]):
            np.testing.assert_allclose(np.array(got[3]), out[f"{sname}_{name}_b"], rtol=1e-12)
    got = cs.mmotifs(X, out[sname + "_Pi"], out[sname + "_Ii"], include=[2], max_motifs=2,
                     device=device)
    _same_motifs(got, out, sname + "_inc")
    for pp in (1.0, 2.0):
        got = cs.aamp_mmotifs(X, out[f"{sname}_aP{pp:g}"], out[f"{sname}_aI{pp:g}"],
                              max_motifs=2, p=pp, device=device)
        _same_motifs(got, out, f"{sname}_a{pp:g}")
        np.testing.assert_allclose(np.array(got[3]), out[f"{sname}_a{pp:g}_b"], rtol=1e-12)


def test_mmotifs_native(ref, device):
    """On clts's own mstump: the planted motif in dimensions 0 and 1; bad arguments."""
    inp, out = ref
    W = inp["W"]
    P, I = clts.mstump(W, 8, device=device)
    found = clts.mmotifs(W, P, I, device=device)
    a, b = sorted(found[0]["indices"][:2].tolist())     # planted 12 long: 5 equal windows
    assert 20 <= a <= 24 and b - a == 80
    assert found[0]["subspace"].tolist() == [0, 1]
    with pytest.raises(ValueError, match="k"):
        clts.mmotifs(W, P, I, k=3)
    with pytest.raises(ValueError, match="max_matches"):
        clts.mmotifs(W, P, I, max_matches=0)
    with pytest.raises(ValueError, match="I"):
        clts.mmotifs(W, P, I[:2])
    # time down the rows (a pandas frame's layout), any memory layout
    again = clts.mmotifs(np.asfortranarray(W.T), P, I, time_axis=0, device=device)
    np.testing.assert_array_equal(again[0]["indices"], found[0]["indices"])
    with pytest.raises(ValueError, match="time_axis=0"):
        clts.mmotifs(W.T, P, I)


def test_threads(ref, device):
    """chains, mmotifs and separate floss streams from four threads at once: each as alone."""
    from concurrency import run_in_threads
    inp, out = ref
    W, F = inp["W"], inp["F"]
    P, I = out["W_P"], out["W_I"]
    IL, IR = out["walk_mp"][:, 2].astype(np.int64), out["walk_mp"][:, 3].astype(np.int64)

    def work(i):
        S, C = clts.allc((IL, IR))
        mm = clts.mmotifs(W, P, I, max_motifs=2, device=device)
        f = clts.floss(F[:N0], M, L=4, device=device)
        f.update(F[N0:N0 + 10 + 10 * i])
        return C, mm[0]["indices"], f.I_

    got = run_in_threads(work, 4)
    for i, (C, mi, fI) in enumerate(got):
        np.testing.assert_array_equal(C, out["walk_C"])
        np.testing.assert_array_equal(mi, got[0][1])
        f = clts.floss(F[:N0], M, L=4, device=device)
        f.update(F[N0:N0 + 10 + 10 * i])
        np.testing.assert_array_equal(fI, f.I_)
