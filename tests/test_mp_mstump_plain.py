"""clts.mstump(normalize=False, p=...) (stumpy.maamp's conventions) against the float64
reference and stumpy (random, plateau and sensor-like inputs; include, discords; p = 1, 2, 3,
inf), every code version, float32, d = 1, layouts, threads, interleave; clts.subspace and
the plain clts.mdl against stumpy (tests/data/mstump_plain_stumpy.npz,
bench/mstump_fixtures.py)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from concurrency import run_in_threads
from clts.mp import reference as ref

M = 20
#: as bench/mstump_fixtures.py's PLAIN_CASES
CASES = [("p2plain", {}), ("p2inc", {"include": [2]}), ("p2disc", {"discords": True}),
         ("p2incdisc", {"include": [3, 1], "discords": True}), ("p1", {"p": 1.0}),
         ("p1incdisc", {"p": 1.0, "include": [3, 1], "discords": True}), ("p3", {"p": 3.0})]
NORM_CASES = [("plain", {}), ("inc", {"include": [2]}), ("disc", {"discords": True}),
              ("incdisc", {"include": [3, 1], "discords": True})]
SUB_CASES = [("", {}), ("inc", {"include": [3]}), ("disc", {"discords": True}),
             ("nbit", {"n_bit": 4})]
VERSIONS = [{}, dict(lanes=1, groups=3, segment=50), dict(lanes=8, groups=2, segment=7, wg=4)]


def _ref_kw(kw):
    return {k: v for k, v in kw.items() if k in ("include", "discords", "p")}


@pytest.fixture(scope="module")
def anchor():
    """stumpy on the inputs of bench/mstump_fixtures.py and the reference's means C
    (reference.mstump_means) of every plain case."""
    z = dict(np.load(Path(__file__).parent / "data" / "mstump_plain_stumpy.npz"))
    for name in ("walk", "plat", "sensor"):
        X = {}          # the distance matrices once per p (the costly part), then each case
        for case, kw in CASES:
            p = kw.get("p", 2.0)
            if p not in X:
                X[p] = ref.dimension_distances(z[f"{name}_T"], M, normalize=False, p=p)
            z[f"{name}_{case}_C"] = ref.means_of_sorted(X[p], kw.get("include"),
                                                        kw.get("discords", False))
    return z


def _profile(C):
    I = np.argmin(C, axis=2)
    P = np.take_along_axis(C, I[:, :, None], axis=2)[:, :, 0]
    I[~np.isfinite(P)] = -1
    return P, I


def _close(P, I, C, tol, agree=1.0, Pr=None):
    """P within ``tol`` of the reference profile of the means C (or of ``Pr``); I equal to
    the reference's but for ties (an index whose reference mean is within ``tol`` of the
    best), on at least ``agree`` of the entries."""
    Pb, Ib = _profile(C)
    Pr = Pb if Pr is None else Pr
    assert P.shape == Pr.shape and I.dtype == np.int64
    assert np.array_equal(np.isinf(P), np.isinf(Pr))
    fin = np.isfinite(Pr)
    assert np.max(np.abs(P[fin] - Pr[fin]), initial=0) <= tol
    k, i = np.nonzero(I != Ib)
    ok = np.ones(P.shape, bool)
    ok[k, i] = (I[k, i] >= 0) & (np.abs(C[k, i, np.maximum(I[k, i], 0)] - Pb[k, i]) <= tol)
    assert np.mean(ok) >= agree, (k[:5], i[:5], I[k, i][:5], Ib[k, i][:5])


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: "-".join(map(str, v.values())) or
                         "profile")
@pytest.mark.parametrize("name", ["walk", "plat", "sensor"])
def test_against_reference_and_stumpy(device, anchor, name, version):
    """Every case on the profile's layout; the other layouts (lanes, groups, segment, wg: the
    diagonal kernel's traversal and vectors) with forced dimensions and discords (p = 2)
    only, as tests/test_mp_mstump.py: the cases change the sorting network over the
    dimensions (the same whatever the layout) and mexact (no layout); p != 2 runs no
    diagonal kernel (no plan)."""
    T = anchor[f"{name}_T"]
    for case, kw in CASES:
        if version and case != "p2incdisc":
            continue
        P, I = clts.mstump(T, M, normalize=False, device=device, **kw, **version)
        C = anchor[f"{name}_{case}_C"]
        # p = 2 (the kernel): near-identical windows (the plateau's 1e-9-noise run) are
        # ranked by |a|^2 + |b|^2 - 2 a.b, whose rounding hides distances below ~1e-7: P is
        # the exact distance of a neighbour within 1e-8 of the best (as matrix_profile's)
        _close(P, I, C, 1e-8 if case.startswith("p2") else 1e-9)
        # stumpy's P carries its rolling p-th power sums' rounding (and sets sums below
        # 1e-14 to 0): its indices are ties of the reference within that
        # (p = 3 on the plateau: 2e-5)
        Ps, Is = anchor[f"{name}_{case}_P"], anchor[f"{name}_{case}_I"]
        _close(P, Is, C, 5e-5 if case == "p3" else 1e-6, Pr=Ps)


@pytest.mark.parametrize("name", ["walk", "plat", "sensor"])
def test_float32(device, anchor, name):
    T = anchor[f"{name}_T"]
    # p = 2 at the two ends of the sorting network (no forced dimension; forced ones and
    # discords), and p = 1
    for case, kw in CASES[0:4:3] + CASES[4:5]:
        P, I = clts.mstump(T, M, normalize=False, precision="single", device=device, **kw)
        C = anchor[f"{name}_{case}_C"]
        Pr = _profile(C)[0]
        fin = np.isfinite(Pr)
        # relative to the distances' size (the sensor's windows are near 20)
        tol = 1e-5 * max(1.0, float(np.max(np.abs(T[np.isfinite(T)])))) * np.sqrt(M)
        assert np.array_equal(np.isinf(P), np.isinf(Pr))
        assert np.max(np.abs(P[fin] - Pr[fin])) <= tol
        _close(P, I, C, tol, agree=0.99, Pr=P)


def test_p_inf_and_one_dimension(device):
    rng = np.random.default_rng(8)
    T = np.cumsum(rng.standard_normal((3, 150)), axis=1)
    T[0, 30:60] = 1.5
    T[2, 90] = np.inf
    for kw in ({"p": np.inf}, {"p": 1.5, "include": [1]}, {"p": np.inf, "discords": True}):
        P, I = clts.mstump(T, 12, normalize=False, device=device, **kw)
        _close(P, I, ref.mstump_means(T, 12, normalize=False, **kw), 1e-9)
    x = T[1]
    P, I = clts.mstump(x, 16, normalize=False, device=device)
    r = clts.matrix_profile(x, 16, normalize=False, device=device, progress=False)
    np.testing.assert_allclose(P[0], r.P[:, 0], atol=1e-12, rtol=0)
    assert np.array_equal(I[0], r.I[:, 0])
    # p is ignored when normalising (as in stumpy)
    assert all(np.array_equal(a, b) for a, b in zip(clts.mstump(T, 12, p=1.0, device=device),
                                                    clts.mstump(T, 12, device=device)))


def test_scales_offsets_and_constant_runs(device):
    """Dimensions of very different magnitude and offset (each is rescaled by its own power
    of two for the kernel; the distances are sorted in the caller's units); constant runs are
    ordinary windows (no constant-window rule)."""
    rng = np.random.default_rng(9)
    T = np.cumsum(rng.standard_normal((4, 200)), axis=1)
    T[0] *= 1e-6
    T[1] = T[1] * 1e5 + 1e7
    T[3] += 300.0
    # float32: each distance within ~1e-3 of itself (in float32 a window of the constant run
    # below is ~1e-3 of its norm from its twins, far above dimension 0's 1e-6 distances)
    P, I = clts.mstump(T, 16, normalize=False, precision="single", device=device)
    Pr = _profile(ref.mstump_means(T, 16, normalize=False))[0]
    assert np.all(np.abs(P - Pr) <= 1e-3 * Pr)
    T[2, 50:90] = 4.0
    P, I = clts.mstump(T, 16, normalize=False, device=device)
    C = ref.mstump_means(T, 16, normalize=False)
    _close(P, I, C, 1e-9 * np.max(np.abs(_profile(C)[0])))


def test_layouts_threads_interleave(device, monkeypatch):
    T = np.cumsum(np.random.default_rng(4).standard_normal((3, 300)), axis=1)
    T[1, 100:130] = -2.0
    T[2, 200] = np.nan
    P, I = clts.mstump(T, 12, normalize=False, device=device)
    wide = np.zeros((3, 600))
    wide[:, ::2] = T
    for X in (np.asfortranarray(T), wide[:, ::2], T.astype(">f8"), T.tolist()):
        P2, I2 = clts.mstump(X, 12, normalize=False, device=device)
        assert np.array_equal(P2, P) and np.array_equal(I2, I)
    # interleave = 1 against 0, each layout; forced dimensions and discords change only the
    # sorting network, not the partials' layout (tests/test_mp_mstump.py runs them interleaved)
    for params in ({}, {"lanes": 4, "groups": 2, "segment": 50, "wg": 4}):
        for chunk in (None, "3"):
            if chunk:
                monkeypatch.setenv("CLTS_MAX_CHUNK", chunk)
            P0, I0 = clts.mstump(T, 12, normalize=False, device=device, interleave=0, **params)
            P1, I1 = clts.mstump(T, 12, normalize=False, device=device, interleave=1, **params)
            assert np.array_equal(P0, P1) and np.array_equal(I0, I1)
            monkeypatch.delenv("CLTS_MAX_CHUNK", raising=False)
    inputs = [(T, {}), (T[::-1].copy(), {}), (T, {"p": 1.0})]
    want = [clts.mstump(x, 12, normalize=False, device=device, **kw) for x, kw in inputs]
    got = run_in_threads(lambda i: clts.mstump(inputs[i % 3][0], 12, normalize=False,
                                               device=device, **inputs[i % 3][1]), 6)
    for i in range(6):
        assert all(np.array_equal(a, b) for a, b in zip(got[i], want[i % 3]))


def test_bad_input(device):
    T = np.cumsum(np.random.default_rng(5).standard_normal((3, 100)), axis=1)
    with pytest.raises(ValueError, match="p must be"):
        clts.mstump(T, 10, normalize=False, p=0.5, device=device)
    with pytest.raises(ValueError, match="p must be"):
        clts.mstump(T, 10, normalize=False, p="2", device=device)
    with pytest.raises(TypeError, match="normalize"):
        clts.mstump(T, 10, normalize="no", device=device)
    for kw, err, match in (({"k": 3}, ValueError, "k must"), ({"subseq_idx": 95}, ValueError,
                           "subseq_idx"), ({"nn_idx": -1}, ValueError, "nn_idx"),
                           ({"include": [5]}, ValueError, "include"),
                           ({"n_bit": 0}, ValueError, "n_bit"),
                           ({"normalize": None}, TypeError, "normalize"),
                           ({"discretize_func": 3}, TypeError, "discretize_func"),
                           ({"normalize": False, "p": 0}, ValueError, "p must")):
        args = dict(subseq_idx=0, nn_idx=50, k=1)
        args.update(kw)
        with pytest.raises(err, match=match):
            clts.subspace(T, 10, **args)


def _unpad(w):
    return w[w >= 0]


@pytest.mark.parametrize("name", ["walk", "plat", "sensor"])
def test_subspace_and_mdl_against_stumpy(anchor, name):
    """clts.subspace on every k-dimensional motif of stumpy's profiles (z-normalised and
    plain, p = 1, 2, 3) equals stumpy.subspace (include, discords, n_bit); the plain mdl
    equals stumpy.mdl(normalize=False, p=...)."""
    zanchor = np.load(Path(__file__).parent / "data" / "mstump_stumpy.npz")
    T = anchor[f"{name}_T"]
    d = len(T)
    for case, kw in NORM_CASES + CASES:
        plain = case[:2] in ("p1", "p2", "p3")
        dist = {"normalize": False, "p": kw.get("p", 2.0)} if plain else {}
        P, I = (anchor if plain else zanchor)[f"{name}_{case}_P"], \
            (anchor if plain else zanchor)[f"{name}_{case}_I"]
        mot = np.argmin(P, axis=1)
        nn = I[np.arange(d), mot]
        for c, kw2 in SUB_CASES:
            want = anchor[f"{name}_{case}_sub{c}"]
            for k in range(d):
                S = clts.subspace(T, M, int(mot[k]), int(nn[k]), k, **kw2, **dist)
                assert S.dtype == np.int64 and np.array_equal(S, _unpad(want[k])), (case, c, k)
        if plain:
            bits, S = clts.mdl(T, M, mot, nn, **dist)
            np.testing.assert_allclose(bits, anchor[f"{name}_{case}_mdl"], rtol=1e-12)
            assert all(np.array_equal(s, _unpad(w))
                       for s, w in zip(S, anchor[f"{name}_{case}_mdl_S"]))


def test_subspace_discretize_func():
    T = np.cumsum(np.random.default_rng(7).standard_normal((3, 120)), axis=1)
    seen = []

    def coarse(a):
        seen.append(a.shape)
        return np.round(a).astype(np.int64)
    S = clts.subspace(T, 10, 3, 60, 2, discretize_func=coarse)
    assert sorted(S.tolist()) == [0, 1, 2] and seen == [(3, 10), (3, 10)]
    S = clts.subspace(T, 10, 3, 60, 0, discretize_func=coarse, normalize=False, p=1)
    D = np.abs(np.round(T[:, 3:13]) - np.round(T[:, 60:70])).sum(1)
    assert S.tolist() == [int(np.argsort(D, kind="mergesort")[0])]


OCLGRIND_CASE = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_mp_mstump_plain import _close
from test_mp_mstump import _tiny
import clts
from clts.mp import reference as ref
from clts.runtime import get_device
T = _tiny()
C = ref.mstump_means(T, 8, include=[1], normalize=False)
P, I = clts.mstump(T, 8, include=[1], normalize=False, device=get_device(sys.argv[2]),
                   **json.loads(sys.argv[3]))
_close(P, I, C, 1e-9)
print("case ok")
"""


@pytest.mark.oclgrind
@pytest.mark.parametrize("v", [dict(lanes=4, groups=1, segment=16),
                               dict(lanes=2, groups=1, segment=16, wg=4, interleave=1),
                               dict(lanes=1, groups=1, segment=16, wg=64, interleave=1, fold=64,
                                    coop=32, subgroup=16, waves=3)],
                         ids=["l4g1", "interleave", "gpu"])
def test_oclgrind_tiny(device, v):
    """The plain kernel variant (NORMALIZE=0), one call per fresh process under Oclgrind (as
    tests/test_mp_mstump.py's test_oclgrind_tiny)."""
    import json
    import os
    import subprocess
    import sys
    if not os.environ.get("CLTS_OCLGRIND"):
        from test_mp_mstump import _tiny
        T = _tiny()
        P, I = clts.mstump(T, 8, include=[1], normalize=False, device=device, **v)
        _close(P, I, ref.mstump_means(T, 8, include=[1], normalize=False), 1e-9)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", OCLGRIND_CASE, here, device.slug, json.dumps(v)],
                         capture_output=True, text=True, timeout=600)
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    assert out.returncode == 0 and "case ok" in out.stdout, out.stderr[-3000:]
