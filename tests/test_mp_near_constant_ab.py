"""AB-joins of near-constant windows (a series of 1e-9 noise on an offset): the diagonals enter
the column series from its padding, which repeats the end values (zero padding stepped over a
jump of the series' offset, and near-constant windows got distances off by up to 4), against
the brute-force reference and stumpy, k = 1 and top-k, both directions; stumpi's device blocks
(AB-joins of the new windows) against its points."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.mp import reference as ref
from stumpy_anchor import run_stumpy
from test_mp import TOPK_VERSIONS, VERSIONS, _check, _check_k

M = 8


def _flat(n=300, seed=0):
    return 5 + 1e-9 * np.random.default_rng(seed).standard_normal(n)


def _mixed(seed=1):
    """A walk far from 0 with a 1e-7-noise plateau and a constant one (the noise still ~8
    digits above the values' rounding)."""
    rng = np.random.default_rng(seed)
    T = 100 + np.cumsum(rng.standard_normal(200))
    T[40:80] = T[40] + 1e-7 * rng.standard_normal(40)
    T[120:140] = T[120]
    return T


def _pairs():
    F, W = _flat(), _mixed()
    return {"flat": (F[150:177], F[20:160]), "offset": (W[30:138], W[60:200])}


@pytest.mark.parametrize("version", [VERSIONS[0], VERSIONS[1], VERSIONS[2], VERSIONS[5]],
                         ids=["atomic", "partial", "one-lane", "local"])
@pytest.mark.parametrize("case", ["flat", "offset"])
def test_near_constant_ab_join(device, case, version):
    A, B = _pairs()[case]
    r = ref.matrix_profile(A, M, B, both=True)
    D = ref.distance_matrix(A, M, B)
    res = clts.matrix_profile(A, M, B, both=True, device=device, **version)
    _check(res.P[:, 0], res.I[:, 0], r["P"][:, 0], r["I"][:, 0], D, 1e-8)
    _check(res.P_B[:, 0], res.I_B[:, 0], r["P_B"][:, 0], r["I_B"][:, 0], D, 1e-8, side="cols")
    # the other way round: B's profile is the rows' now
    back = clts.matrix_profile(B, M, A, device=device, **version)
    _check(back.P[:, 0], back.I[:, 0], r["P_B"][:, 0], r["I_B"][:, 0], D.T, 1e-8)


#: the top-k layouts: private and local lists, one lane with interleaved lists (the GPU
#: profiles'), the register window
TOPK = [TOPK_VERSIONS[0], TOPK_VERSIONS[1], TOPK_VERSIONS[4],
        dict(topk_store="window", lanes=1, interleave=1, tile=5, wg=2, fold=0, groups=3,
             segment=64)]


@pytest.mark.parametrize("version", TOPK, ids=["private", "local", "interleaved", "window"])
def test_near_constant_ab_join_top_k(device, version):
    A, B = _pairs()["flat"]
    k = 3
    r = ref.matrix_profile(A, M, B, k=k, both=True)
    D = ref.distance_matrix(A, M, B)
    res = clts.matrix_profile(A, M, B, k=k, both=True, device=device, **version)
    _check_k(res, r, D, k)
    _check_k(res, r, D, k, side="cols", pre="_B")


def test_near_constant_ab_join_plain(device):
    """Plain Euclidean distances (no ill-conditioning test; the padding is the same)."""
    A, B = _pairs()["flat"]
    for k in (1, 3):
        r = ref.matrix_profile(A, M, B, k=k, both=True, normalize=False)
        D = ref.distance_matrix(A, M, B, normalize=False)
        res = clts.matrix_profile(A, M, B, k=k, both=True, normalize=False, device=device)
        _check_k(res, r, D, k)
        _check_k(res, r, D, k, side="cols", pre="_B")


def test_near_constant_ab_join_mixed_precision(device):
    A, B = _pairs()["flat"]
    r = ref.matrix_profile(A, M, B, both=True)
    res = clts.matrix_profile(A, M, B, both=True, device=device, precision="mixed")
    np.testing.assert_allclose(res.P[:, 0], r["P"][:, 0], atol=1e-8)
    np.testing.assert_allclose(res.P_B[:, 0], r["P_B"][:, 0], atol=1e-8)


STUMPY_SCRIPT = """
import sys
import numpy as np
import stumpy
d = np.load(sys.argv[1])
m = int(d["m"])
o = {}
for name in ("flat", "offset"):
    o[name] = stumpy.stump(d[name + "_A"], m, d[name + "_B"], ignore_trivial=False).astype(float)
np.savez(sys.argv[2], **o)
"""


@pytest.fixture(scope="module")
def stumpy_ab(tmp_path_factory):
    inputs = {"m": M}
    for name, (A, B) in _pairs().items():
        inputs.update({name + "_A": A, name + "_B": B})
    return run_stumpy(tmp_path_factory, "near_constant_ab", STUMPY_SCRIPT, inputs)


#: stumpy's own rounding on these windows (sliding dot products less the products of means):
#: its distances are off the exact ones by up to 2e-3 here (zero padding made clts's off by 4)
STUMPY_TOL = 5e-3


@pytest.mark.parametrize("case", ["flat", "offset"])
def test_near_constant_ab_join_against_stumpy(device, stumpy_ab, case):
    """Within stumpy's rounding; constant windows (stumpy's T_subseq_isconstant rule: no spread
    at all) exactly as stumpy: 0 to another constant window, sqrt(m) to any other."""
    A, B = _pairs()[case]
    out = stumpy_ab[case]
    res = clts.matrix_profile(A, M, B, device=device)
    np.testing.assert_allclose(res.P[:, 0], out[:, 0], atol=STUMPY_TOL)
    const = np.ptp(np.lib.stride_tricks.sliding_window_view(A, M), axis=1) == 0
    assert const.any() == (case == "offset")
    np.testing.assert_allclose(res.P[const, 0], out[const, 0], atol=1e-12)
    D = ref.distance_matrix(A, M, B)        # stumpy's neighbour is as near, within its rounding
    np.testing.assert_allclose(D[np.arange(len(out)), out[:, 1].astype(int)], res.P[:, 0],
                               atol=STUMPY_TOL)


def test_stumpi_blocks_equal_points_near_constant(device):
    T = _flat(260, 2)
    pts = clts.stumpi(T[:200], M, egress=False, device=device, lazy_points=1)
    blk = clts.stumpi(T[:200], M, egress=False, device=device, lazy_points=1,
                       host_points=0)
    for i in range(200, 260):
        pts.update(T[i])
    blk.update(T[200:230])
    blk.update(T[230:260])
    np.testing.assert_allclose(blk.P_, pts.P_, atol=1e-8, rtol=0)
    np.testing.assert_allclose(blk.left_P_, pts.left_P_, atol=1e-8, rtol=0)
    r = ref.matrix_profile(T, M)
    np.testing.assert_allclose(pts.P_, r["P"][:, 0], atol=1e-8)
