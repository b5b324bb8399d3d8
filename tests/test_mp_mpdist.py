"""clts.mpdist / clts.mpdist_vect and their clts.compat.stumpy names against stumpy 1.14: stumpy's
own test inputs (its test_mpdist cases: m = 3, percentages, k = 0..4) and random walks with
NaN and constant stretches; the batch, broadcast and pairwise forms against one call per pair.
stumpy runs once, in a subprocess with NUMBA_DISABLE_JIT=1 (small inputs: seconds)."""
from __future__ import annotations


import numpy as np
import pytest
from stumpy_anchor import run_stumpy

import clts
import clts.compat.stumpy as cs

STUMPY_SCRIPT = r"""
import importlib, sys, numpy as np, stumpy
from stumpy import core
d = dict(np.load(sys.argv[1]))
o = {}
for c in range(2):
    A, B = d[f"sA{c}"], d[f"sB{c}"]
    o[f"s{c}"] = stumpy.mpdist(A, B, 3)
    for q in (0.25, 0.5, 0.75):
        o[f"s{c}_p{q}"] = stumpy.mpdist(A, B, 3, percentage=q)
    for k in range(5):
        o[f"s{c}_k{k}"] = stumpy.mpdist(A, B, 3, k=k)
A, B, m = d["A"], d["B"], int(d["m"])
o["r"] = stumpy.mpdist(A, B, m)
o["r_k7"] = stumpy.mpdist(A, B, m, k=7)
o["r_p1"] = stumpy.mpdist(A, B, m, percentage=1.0)
o["r_p0"] = stumpy.mpdist(A, B, m, percentage=0.0)
o["aamp"] = stumpy.aampdist(d["A0"], d["B0"], m)
o["aamp_p1"] = stumpy.aampdist(d["A0"], d["B0"], m, p=1.0, percentage=0.2)
mv = importlib.import_module("stumpy.mpdist")
Q, T = d["Q"], d["T"]
Qp, mQ, sQ, cQ = core.preprocess(Q, m)
Tp, mT, sT, cT = core.preprocess(T, m)
o["vect"] = mv._mpdist_vect(Qp, Tp, m, mQ, sQ, mT, sT, cQ, cT)
o["vect_k3"] = mv._mpdist_vect(Qp, Tp, m, mQ, sQ, mT, sT, cQ, cT, k=3)
o["vect_p3"] = mv._mpdist_vect(Qp, Tp, m, mQ, sQ, mT, sT, cQ, cT, percentage=0.3)
np.savez(sys.argv[2], **o)
"""

M = 8


def _inputs():
    rng = np.random.default_rng(12)
    d = {"sA0": np.array([9, 8100, -60, 7], dtype=np.float64),
         "sB0": np.array([584, -11, 23, 79, 1001, 0, -19], dtype=np.float64),
         "sA1": rng.uniform(-1000, 1000, 8), "sB1": rng.uniform(-1000, 1000, 64)}
    A = np.cumsum(rng.standard_normal(90))
    B = np.cumsum(rng.standard_normal(130))
    A[[11, 60]] = np.nan
    A[30:30 + M] = 1.5                          # one constant window
    B[70:70 + M + 4] = -2.0                     # five constant windows
    B[100] = np.inf
    Q = np.cumsum(rng.standard_normal(30))
    T = np.cumsum(rng.standard_normal(160))
    T[40:44] = np.nan
    T[90:90 + M + 2] = 0.5
    Q[5:5 + M] = 3.0
    d.update(A=A, B=B, A0=np.cumsum(rng.standard_normal(70)),
             B0=np.cumsum(rng.standard_normal(50)), Q=Q, T=T, m=M)
    return d


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    inp = _inputs()
    return inp, run_stumpy(tmp_path_factory, "mpdist_stumpy", STUMPY_SCRIPT, inp)


def _close(got, want):
    # both sides take sqrt(2 m (1 - rho)): a near-perfect match carries sqrt(eps) (~1e-7)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-6)


def test_stumpys_cases(device, ref):
    inp, out = ref
    for c in range(2):
        A, B = inp[f"sA{c}"], inp[f"sB{c}"]
        got = cs.mpdist(A, B, 3, device=device)
        assert isinstance(got, float)
        _close(got, out[f"s{c}"])
        for q in (0.25, 0.5, 0.75):
            _close(cs.mpdist(A, B, 3, percentage=q, device=device), out[f"s{c}_p{q}"])
        for k in range(5):
            _close(cs.mpdist(A, B, 3, k=k, device=device), out[f"s{c}_k{k}"])


def test_nan_and_constant_windows(device, ref):
    inp, out = ref
    A, B = inp["A"], inp["B"]
    _close(clts.mpdist(A, B, M, device=device), out["r"])
    _close(clts.mpdist(A, B, M, k=7, device=device), out["r_k7"])
    _close(cs.mpdist(A, B, M, percentage=1.0, device=device), out["r_p1"])
    _close(cs.gpu_mpdist(A, B, M, percentage=0.0, device=device), out["r_p0"])
    # single precision: the same definition, float32 arithmetic
    np.testing.assert_allclose(clts.mpdist(A, B, M, precision="single", device=device)
                               if device.fp64 else out["r"], out["r"], rtol=2e-3, atol=2e-3)


def test_aampdist(device, ref):
    inp, out = ref
    _close(cs.aampdist(inp["A0"], inp["B0"], M, device=device), out["aamp"])
    _close(cs.aampdist(inp["A0"], inp["B0"], M, p=1.0, percentage=0.2, device=device),
           out["aamp_p1"])


def test_mpdist_vect(device, ref):
    inp, out = ref
    Q, T = inp["Q"], inp["T"]
    for kw, key in (({}, "vect"), ({"k": 3}, "vect_k3"), ({"percentage": 0.3}, "vect_p3")):
        got = clts.mpdist_vect(Q, T, M, device=device, **kw)
        assert got.shape == (len(T) - len(Q) + 1,)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(out[key]))
        _close(got, out[key])


def test_batches_equal_single_pairs(device):
    rng = np.random.default_rng(3)
    X = np.cumsum(rng.standard_normal((5, 70)), axis=1)
    Y = np.cumsum(rng.standard_normal((3, 55)), axis=1)
    X[2, 10:14] = np.nan
    Y[1, 20:40] = 4.0
    one = np.array([[clts.mpdist(x, y, 9, device=device) for y in Y] for x in X])
    np.testing.assert_allclose(clts.mpdist(X, Y, 9, pairwise=True, device=device), one,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(clts.mpdist(X[:3], Y, 9, device=device), np.diag(one[:3]),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(clts.mpdist(X, Y[1], 9, device=device), one[:, 1],
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(clts.mpdist(X[4], Y, 9, k=5, device=device),
                               [clts.mpdist(X[4], y, 9, k=5, device=device) for y in Y],
                               rtol=1e-12, atol=1e-12)
    D = clts.mpdist(X, X, 9, pairwise=True, device=device)      # half the pairs, mirrored
    full = clts.mpdist(X, X.copy(), 9, pairwise=True, device=device)
    np.testing.assert_allclose(D, full, rtol=1e-12, atol=1e-12)
    assert np.array_equal(D, D.T) and np.all(np.diag(D) == 0)
    # time_axis=0: [time, series]; any layout
    np.testing.assert_allclose(clts.mpdist(np.asfortranarray(X.T), Y.T[::-1, :][::-1], 9,
                                           pairwise=True, time_axis=0, device=device), one,
                               rtol=1e-12, atol=1e-12)


def test_errors(device):
    x = np.arange(20.0)
    with pytest.raises(ValueError, match="m must be >= 3"):
        clts.mpdist(x, x, 2, device=device)
    with pytest.raises(ValueError, match="T_B has 5 values"):
        clts.mpdist(x, x[:5], 6, device=device)
    with pytest.raises(ValueError, match="T_A has 2 series and T_B 3"):
        clts.mpdist(np.ones((2, 20)), np.ones((3, 20)), 4, device=device)
    with pytest.raises(ValueError, match="k must be >= 0"):
        clts.mpdist(x, x, 4, k=-1, device=device)
    with pytest.raises(TypeError, match="m must be an int"):
        clts.mpdist(x, x, 4.0, device=device)
    with pytest.raises(ValueError, match="1-dimensional"):
        cs.mpdist(np.ones((2, 20)), x, 4, device=device)
    with pytest.raises(NotImplementedError, match="T_A_subseq_isconstant"):
        cs.mpdist(x, x, 4, T_A_subseq_isconstant=np.ones(17, bool), device=device)
