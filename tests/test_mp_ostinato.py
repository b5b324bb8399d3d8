"""clts.ostinato and its clts.compat.stumpy names against stumpy 1.14: stumpy's own deterministic
test cases (its test_ostinato seeds: three uniform series of 64, 128, 256 values, m = 50),
random walks with NaN, inf and constant windows, the non-normalised variant; the forms of
``Ts`` (list, 2-D, time_axis=0) against each other. stumpy runs once, in a subprocess with
NUMBA_DISABLE_JIT=1."""
from __future__ import annotations


import numpy as np
import pytest
from stumpy_anchor import run_stumpy

import clts
import clts.compat.stumpy as cs

SEEDS = (79, 133, 275, 355)

STUMPY_SCRIPT = r"""
import sys, numpy as np, stumpy
d = np.load(sys.argv[1], allow_pickle=True)
o = {}
for key in d.files:
    Ts = list(d[key])
    if key.startswith("aamp"):
        o[key] = np.array(stumpy.aamp_ostinato(Ts, 12, p=1.0 if key == "aamp1" else 2.0),
                          float)
    else:
        o[key] = np.array(stumpy.ostinato(Ts, 50 if key.startswith("seed") else 12), float)
np.savez(sys.argv[2], **o)
"""


def _inputs():
    d = {}
    for seed in SEEDS:
        np.random.seed(seed)
        Ts = [np.random.rand(n) for n in [64, 128, 256]]
        a = np.empty(3, object)
        a[:] = Ts
        d[f"seed{seed}"] = a
    rng = np.random.default_rng(5)
    Ts = [np.cumsum(rng.standard_normal(n)) for n in (90, 120, 75, 100)]
    Ts[0][10:13] = np.nan
    Ts[1][40:40 + 15] = 2.0
    Ts[3][60] = np.inf
    a = np.empty(4, object)
    a[:] = Ts
    d["walks"] = a
    d["aamp2"] = a
    d["aamp1"] = a
    return d


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    inp = _inputs()
    return inp, run_stumpy(tmp_path_factory, "ostinato_stumpy", STUMPY_SCRIPT, inp)


def _same(got, want):
    assert len(got) == 3
    np.testing.assert_allclose(float(got[0]), want[0], rtol=1e-9, atol=1e-7)
    assert (int(got[1]), int(got[2])) == (int(want[1]), int(want[2]))


def test_stumpys_cases(device, ref):
    inp, out = ref
    for seed in SEEDS:
        Ts = list(inp[f"seed{seed}"])
        _same(cs.ostinato(Ts, 50, device=device), out[f"seed{seed}"])
    Ts = list(inp[f"seed{SEEDS[0]}"])
    r = clts.ostinato(Ts, 50, device=device)
    assert isinstance(r, clts.mp.Consensus) and r.series == int(out[f"seed{SEEDS[0]}"][1])


def test_nan_inf_constant_windows(device, ref):
    inp, out = ref
    Ts = list(inp["walks"])
    _same(cs.gpu_ostinato(Ts, 12, device=device), out["walks"])


def test_aamp_ostinato(device, ref):
    inp, out = ref
    Ts = list(inp["aamp2"])
    _same(cs.aamp_ostinato(Ts, 12, device=device), out["aamp2"])
    _same(cs.gpu_aamp_ostinato(Ts, 12, p=1.0, device=device), out["aamp1"])


def test_forms_of_ts(device):
    rng = np.random.default_rng(9)
    X = np.cumsum(rng.standard_normal((6, 150)), axis=1)
    X[:, 20:45] += 8 * np.sin(np.linspace(0, 5, 25))          # a shared shape
    a = clts.ostinato(list(X), 25, device=device)
    b = clts.ostinato(X, 25, device=device)
    c = clts.ostinato(np.asfortranarray(X.T), 25, time_axis=0, device=device)
    assert a == b == c
    assert 15 <= a.index <= 25


def test_errors(device):
    x = np.arange(30.0)
    with pytest.raises(ValueError, match="at least 2 series"):
        clts.ostinato([x], 5, device=device)
    with pytest.raises(ValueError, match=r"Ts\[1\] has 4 values"):
        clts.ostinato([x, x[:4]], 5, device=device)
    with pytest.raises(ValueError, match="list"):
        cs.ostinato(np.stack([x, x]), 5, device=device)
    with pytest.raises(ValueError, match="1-D"):
        clts.ostinato([x, np.ones((2, 3))], 5, device=device)


@pytest.mark.parametrize("tile", [(4, 1), (1, 1), (3, 2), (16, 8)])
def test_run_tile_shapes(device, tile):
    """The runs kernel's register tile (the profile's ``mp.mpdist``: CPUs 8 items x 2 vectors,
    GPUs 4 x 1) changes no bit of the run profiles, with NaN, inf and constant windows, runs
    of several lengths and targets whose item counts are not multiples of the tile."""
    from clts.mp.mpdist import SeriesSet, run_profiles
    rng = np.random.default_rng(12)
    X = np.cumsum(rng.standard_normal((5, 140)), axis=1)
    X[1, 30:33] = np.nan
    X[2, 50:70] = 1.5
    X[4, 90] = np.inf
    runs = np.array([(a, b, r0, cnt) for b in range(5) for a in range(5) if a != b
                     for r0, cnt in ((0, 7), (40 + a, 1 + b), (100, 25))], np.int32)
    want = run_profiles(SeriesSet(X, 12, device), runs)
    with device.profile.overlay("mp.mpdist", first_items=tile[0], first_vectors=tile[1]):
        got = run_profiles(SeriesSet(X, 12, device), runs)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("key,value", [("first_items", 0), ("first_vectors", 9),
                                       ("subgroup", 12)])
def test_mpdist_profile_errors(device, key, value):
    """A bad ``mp.mpdist`` value is a ProfileError naming its key."""
    from clts.errors import ProfileError
    with device.profile.overlay("mp.mpdist", **{key: value}), \
            pytest.raises(ProfileError, match=f"mp.mpdist.{key}"):
        clts.ostinato([np.arange(60.0) % 7, np.arange(50.0) % 5], 8, device=device)
