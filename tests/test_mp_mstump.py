"""clts.mstump: against the float64 reference and stumpy.mstump (random, plateau and
real-looking inputs; include, discords), every code version, float32, the 1-D profile at
d = 1, layouts, threads, chunks, bad input."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from concurrency import run_in_threads
from clts.mp import reference as ref

M = 20
CASES = [("plain", {}), ("inc", {"include": [2]}), ("disc", {"discords": True}),
         ("incdisc", {"include": [3, 1], "discords": True})]
#: as bench/mstump_fixtures.py
MDL_CASES = [("", {}), ("inc", {"include": [3]}), ("disc", {"discords": True}),
             ("nbit", {"n_bit": 4})]
VERSIONS = [{}, dict(lanes=1, groups=3, segment=50), dict(lanes=8, groups=2, segment=7, wg=4)]


@pytest.fixture(scope="module")
def anchor():
    """stumpy.mstump on the inputs of bench/mstump_fixtures.py (tests/data/mstump_stumpy.npz)
    and the reference on the same inputs."""
    z = dict(np.load(Path(__file__).parent / "data" / "mstump_stumpy.npz"))
    for name in ("walk", "plat", "sensor"):
        X = ref.dimension_distances(z[f"{name}_T"], M)     # once a series (the costly part)
        for case, kw in CASES:
            C = ref.means_of_sorted(X, kw.get("include"), kw.get("discords", False))
            z[f"{name}_{case}_Pr"], z[f"{name}_{case}_Ir"] = ref.profile_of_means(C)
    return z


def _close(P, I, Pr, Ir, tol, agree=1.0):
    assert P.shape == Pr.shape and I.dtype == np.int64
    assert np.array_equal(np.isinf(P), np.isinf(Pr))
    fin = np.isfinite(Pr)
    assert np.max(np.abs(P[fin] - Pr[fin]), initial=0) <= tol
    assert np.mean(I == Ir) >= agree


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: "-".join(map(str, v.values())) or
                         "profile")
@pytest.mark.parametrize("name", ["walk", "plat", "sensor"])
def test_against_reference_and_stumpy(device, anchor, name, version):
    """Every case on the profile's layout; the other layouts (lanes, groups, segment, wg: the
    diagonal kernel's traversal and vectors) with forced dimensions and discords only. The
    cases change the sorting network over the dimensions (the same comparators, branch-free,
    on whole vectors, whatever the layout) and mexact (no layout at all), so a layout runs
    one case: forced dimensions (their unsorted prefix) and discords (flipped comparators)."""
    T = anchor[f"{name}_T"]
    for case, kw in CASES if not version else CASES[-1:]:
        P, I = clts.mstump(T, M, device=device, **kw, **version)
        Pr, Ir = anchor[f"{name}_{case}_Pr"], anchor[f"{name}_{case}_Ir"]
        _close(P, I, Pr, Ir, 1e-9)
        Ps, Is = anchor[f"{name}_{case}_P"], anchor[f"{name}_{case}_I"]
        if name == "plat":
            # stumpy's rolling QT loses the 1e-9-noise run of dimension 3 (windows 281 ..
            # 339 and their neighbours): compared where stumpy agrees with the reference
            ok = (Is == Ir)
            bad = np.nonzero(~ok)
            assert np.all((bad[1] >= 281 - M) & (bad[1] < 345) | (Ir[bad] >= 281 - M)
                          & (Ir[bad] < 345))
        else:
            ok = np.ones_like(Is, bool)
        # stumpy's P carries its rolling QT's rounding (1e-6 next to a plateau)
        _close(np.where(ok, P, Ps), np.where(ok, I, Is), Ps, Is,
               1e-5 if name == "plat" else 1e-8)


@pytest.mark.parametrize("name", ["walk", "plat", "sensor"])
def test_float32(device, anchor, name):
    if name == "plat":
        # float32 cannot hold the 1e-9 noise of dimension 3 (its run becomes constant)
        T = anchor["plat_T"][:3]
        cases = [({}, ref.mstump(T, M)), ({"discords": True}, ref.mstump(T, M, discords=True))]
    else:
        T = anchor[f"{name}_T"]
        # the two ends of the sorting network (no forced dimension; forced ones and discords)
        cases = [(kw, (anchor[f"{name}_{c}_Pr"], anchor[f"{name}_{c}_Ir"]))
                 for c, kw in CASES[::3]]
    for kw, (Pr, Ir) in cases:
        P, I = clts.mstump(T, M, device=device, precision="single", **kw)
        _close(P, I, Pr, Ir, 1e-4, agree=0.99)


def test_one_dimension_is_the_matrix_profile(device):
    T = np.cumsum(np.random.default_rng(3).standard_normal(400))
    P, I = clts.mstump(T, 16, device=device)
    r = clts.matrix_profile(T, 16, device=device, progress=False)
    assert P.shape == (1, 385)
    np.testing.assert_allclose(P[0], r.P[:, 0], atol=1e-12, rtol=0)
    assert np.array_equal(I[0], r.I[:, 0])


def test_layouts_threads_chunks(device, monkeypatch):
    T = np.cumsum(np.random.default_rng(4).standard_normal((3, 300)), axis=1)
    P, I = clts.mstump(T, 12, device=device)
    wide = np.zeros((3, 600))
    wide[:, ::2] = T
    for X in (np.asfortranarray(T), wide[:, ::2], T.astype(">f8"), T[::-1][::-1], T.tolist()):
        P2, I2 = clts.mstump(X, 12, device=device)
        assert np.array_equal(P2, P) and np.array_equal(I2, I)
    monkeypatch.setenv("CLTS_MAX_CHUNK", "1")               # one band per launch
    P2, I2 = clts.mstump(T, 12, device=device, lanes=1, groups=1, segment=40)
    np.testing.assert_allclose(P2, P, atol=1e-12, rtol=0)
    assert np.array_equal(I2, I)
    monkeypatch.delenv("CLTS_MAX_CHUNK")
    inputs = [T, T[::-1].copy(), T[[2, 0, 1]]]
    want = [clts.mstump(x, 12, device=device) for x in inputs]
    got = run_in_threads(lambda i: clts.mstump(inputs[i % 3], 12, device=device), 6)
    for i in range(6):
        assert all(np.array_equal(a, b) for a, b in zip(got[i], want[i % 3]))


@pytest.mark.gpu_layout
@pytest.mark.parametrize("params", [{}, {"lanes": 1, "groups": 1, "segment": 40},
                                    {"lanes": 4, "groups": 2, "segment": 50, "wg": 4}],
                         ids=["profile", "lanes1", "lanes4"])
def test_interleaved_partials_are_bit_identical(device, monkeypatch, params):
    """interleave = 1 (the GPU profiles' layout of the partial profiles) gives exactly the
    result of interleave = 0, with several launches of unequal work-item counts, forced
    dimensions, discords, constant and missing windows. One case (forced dimensions and
    discords, test_against_reference_and_stumpy's last): the cases change only the sorting
    network over the dimensions, not the partials' layout."""
    T = np.cumsum(np.random.default_rng(6).standard_normal((4, 260)), axis=1)
    T[1, 40:60] = 2.0
    T[2, 100] = np.nan
    for _, kw in CASES[-1:]:
        for chunk in (None, "3"):
            if chunk:
                monkeypatch.setenv("CLTS_MAX_CHUNK", chunk)
            P0, I0 = clts.mstump(T, 12, device=device, interleave=0, **kw, **params)
            P1, I1 = clts.mstump(T, 12, device=device, interleave=1, **kw, **params)
            assert np.array_equal(P0, P1, equal_nan=True) and np.array_equal(I0, I1)
            monkeypatch.delenv("CLTS_MAX_CHUNK", raising=False)
    with pytest.raises(ValueError, match="interleave"):
        clts.mstump(T, 12, device=device, interleave=2)


@pytest.mark.gpu_layout
@pytest.mark.parametrize("params", [{}, {"lanes": 1, "groups": 1, "segment": 40},
                                    {"lanes": 4, "groups": 2, "segment": 50, "wg": 4}],
                         ids=["profile", "lanes1", "lanes4"])
def test_cooperative_folds_are_bit_identical(device, monkeypatch, params):
    """fold > 0 (the GPU profiles' work-group-cooperative folds of the partial profiles: a
    work-group per row / per column block, a tree of lexicographic minima in local memory)
    gives exactly the result of the one-work-item-per-row / -column folds, in both layouts of
    the partials, with one slice (fold 4) and several slices (fold 64: 32 column groups x 2)
    of each column's work-items, several launches, forced dimensions, discords, constant and
    missing windows (one case, as test_interleaved_partials_are_bit_identical)."""
    T = np.cumsum(np.random.default_rng(6).standard_normal((4, 260)), axis=1)
    T[1, 40:60] = 2.0
    T[2, 100] = np.nan
    for _, kw in CASES[-1:]:
        for chunk in (None, "3"):
            if chunk:
                monkeypatch.setenv("CLTS_MAX_CHUNK", chunk)
            P0, I0 = clts.mstump(T, 12, device=device, interleave=0, fold=0, **kw, **params)
            for il, fold in ((1, 64), (0, 4)):
                P1, I1 = clts.mstump(T, 12, device=device, interleave=il, fold=fold, **kw,
                                     **params)
                assert np.array_equal(P0, P1, equal_nan=True) and np.array_equal(I0, I1), \
                    (il, fold)
            monkeypatch.delenv("CLTS_MAX_CHUNK", raising=False)
    for bad in (3, -1, True):
        with pytest.raises(ValueError, match="fold"):
            clts.mstump(T, 12, device=device, fold=bad)
    with pytest.raises(ValueError, match="fold"):
        clts.mstump(T, 12, device=device, fold=1 << 20)


def test_bad_input(device):
    T = np.cumsum(np.random.default_rng(5).standard_normal((3, 100)), axis=1)
    with pytest.raises(ValueError, match="include"):
        clts.mstump(T, 10, include=[3], device=device)
    with pytest.raises(ValueError, match="include"):
        clts.mstump(T, 10, include=[1, 1], device=device)
    with pytest.raises(TypeError, match="include"):
        clts.mstump(T, 10, include=[0.5], device=device)
    with pytest.raises(TypeError, match="discords"):
        clts.mstump(T, 10, discords="yes", device=device)
    with pytest.raises(ValueError, match="m must be"):
        clts.mstump(T, 2, device=device)
    with pytest.raises(TypeError, match="m must be"):
        clts.mstump(T, 10.0, device=device)
    with pytest.raises(ValueError, match="fewer than m"):
        clts.mstump(T[:, :5], 10, device=device)
    with pytest.raises(ValueError, match="dimensions"):
        clts.mstump(np.zeros((33, 50)), 10, device=device)
    with pytest.raises(ValueError, match="2-D"):
        clts.mstump(np.zeros((2, 3, 50)), 10, device=device)
    with pytest.raises(ValueError, match="precision"):
        clts.mstump(T, 10, precision="mixed", device=device)
    with pytest.raises(ValueError, match="lanes"):
        clts.mstump(T, 10, lanes=3, device=device)
    with pytest.raises(ValueError, match="lanes \\* groups"):
        clts.mstump(T, 10, lanes=16, groups=8, device=device)
    P, I = clts.mstump(np.full((2, 30), 1.0), 10, device=device)   # every window constant
    assert np.all(P == 0) and np.all(I >= 0)
    P, I = clts.mstump(T[:, :12], 10, device=device)                # no pair outside the zone
    assert np.all(np.isinf(P)) and np.all(I == -1)


OCLGRIND_CASE = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_mp_mstump import _close, _tiny
import clts
from clts.mp import reference as ref
from clts.runtime import get_device
T = _tiny()
Pr, Ir = ref.mstump(T, 8, include=[1])
P, I = clts.mstump(T, 8, include=[1], device=get_device(sys.argv[2]), **json.loads(sys.argv[3]))
_close(P, I, Pr, Ir, 1e-9)
print("case ok")
"""


def _tiny():
    T = np.cumsum(np.random.default_rng(6).standard_normal((3, 60)), axis=1)
    T[1, 20:32] = 1.0
    return T


@pytest.mark.oclgrind
@pytest.mark.parametrize("v", [dict(lanes=4, groups=1, segment=16),
                               dict(lanes=1, groups=2, segment=64),
                               dict(lanes=2, groups=1, segment=16, wg=4, interleave=1),
                               dict(lanes=1, groups=2, segment=16, interleave=1, fold=64),
                               dict(lanes=1, groups=1, segment=16, wg=64, interleave=1, fold=64,
                                    coop=32, subgroup=16, waves=3)],
                         ids=["l4g1", "l1g2", "interleave", "fold", "gpu"])
def test_oclgrind_tiny(device, v):
    """One mstump call per fresh process under Oclgrind: its uninitialised-value checker flags
    every kernel of a second matrix-profile call in one process (tests/test_mp.py's
    test_oclgrind_tiny says more), and its report cap would silence later tests."""
    import json
    import os
    import subprocess
    import sys
    if not os.environ.get("CLTS_OCLGRIND"):
        T = _tiny()
        Pr, Ir = ref.mstump(T, 8, include=[1])
        P, I = clts.mstump(T, 8, include=[1], device=device, **v)
        _close(P, I, Pr, Ir, 1e-9)
        return
    here = os.path.dirname(os.path.abspath(__file__))
    out = subprocess.run([sys.executable, "-c", OCLGRIND_CASE, here, device.slug, json.dumps(v)],
                         capture_output=True, text=True, timeout=600)
    sys.stdout.write(out.stdout)
    sys.stderr.write(out.stderr)
    assert out.returncode == 0 and "case ok" in out.stdout, out.stderr[-3000:]


@pytest.mark.parametrize("name", ["walk", "plat", "sensor"])
def test_mdl_against_stumpy(anchor, name):
    T = anchor[f"{name}_T"]
    for case, _ in CASES:
        P, I = anchor[f"{name}_{case}_P"], anchor[f"{name}_{case}_I"]
        mot = np.argmin(P, axis=1)
        for c, kw in MDL_CASES:
            bits, S = clts.mdl(T, M, mot, I[np.arange(len(P)), mot], **kw)
            np.testing.assert_allclose(bits, anchor[f"{name}_{case}_mdl{c}"], rtol=1e-12)
            want = anchor[f"{name}_{case}_mdl{c}_S"]
            assert all(np.array_equal(s, w[w >= 0]) for s, w in zip(S, want))
    with pytest.raises(ValueError, match="subseq_idx"):
        clts.mdl(T, M, [0, 1], [2, 3])
    with pytest.raises(ValueError, match="n_bit"):
        clts.mdl(T, M, [0] * 4, [50] * 4, n_bit=0)
