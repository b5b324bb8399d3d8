"""What the matrix-profile helpers take besides a numpy result: a device-array call's result
(fluss), bare profiles (discords, as motifs), pandas labels at every p (aamp), and the
stumpy layer's empty match. Each case failed before its fix (an object-dtype ValueError, an
AttributeError, unlabelled output, a (0, 2) array where stumpy returns (0,), numpy's
"inhomogeneous shape")."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyopencl.array as cla
import pytest

import clts
import clts.compat.stumpy as cs


def _walk(n, seed=0):
    return np.cumsum(np.random.default_rng(seed).standard_normal(n))


def test_fluss_of_a_device_result(device):
    T = _walk(400)
    host = clts.matrix_profile(T, 16, device=device)
    dev = clts.matrix_profile(cla.to_device(device.queue, T), 16, device=device)
    want = clts.fluss(host, 16, 2)
    for given in (dev, dev.I):
        cac, regimes = clts.fluss(given, 16, 2)
        assert np.array_equal(cac, want[0]) and np.array_equal(regimes, want[1])
    s_cac, s_reg = cs.fluss(dev.I, 16, 2)
    assert np.array_equal(s_reg, cs.fluss(host, 16, 2)[1])


def test_discords_of_a_bare_profile():
    import stumpy
    T = _walk(400, 1)
    r = clts.matrix_profile(T, 16)
    want = clts.discords(r, 3, exclusion_zone=16)
    for given in (r.P[:, 0], stumpy.stump(T, 16)):
        idx, dist = clts.discords(given, 3, exclusion_zone=16)
        assert np.array_equal(idx, want[0]) and np.allclose(dist, want[1], rtol=1e-12)
    with pytest.raises(TypeError, match="exclusion_zone"):
        clts.discords(r.P[:, 0], 3)
    with pytest.raises(ValueError, match="MatrixProfileResult"):
        clts.discords(np.zeros((4, 3)), 1, exclusion_zone=2)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_aamp_labels_pandas_at_every_p(p):
    s = pd.Series(_walk(120, 2), index=pd.date_range("2001-01-01", periods=120), name="x")
    r = clts.aamp(s, 10, p=p)
    assert isinstance(r.profile, pd.Series) and r.name == "x"
    assert r.profile.index[0] == s.index[0] and len(r.profile) == 111
    assert isinstance(clts.aamp(s.values, 10, p=p).profile, np.ndarray)


def test_empty_match_shapes():
    T, Q = _walk(300, 3), _walk(32, 4)
    assert clts.match(Q, T, max_distance=0.0).shape == (0, 2)
    empty = cs.match(Q, T, max_distance=0.0)            # stumpy.match's empty array
    assert empty.shape == (0,) and empty.dtype == object
    assert cs.match(np.stack([Q, Q]), np.stack([T, T]), max_distance=0.0).shape == (0,)
    assert cs.match(Q, T).shape[1] == 2


def test_mpdist_ragged_list_says_lengths():
    x, y = _walk(100, 5), _walk(120, 6)
    with pytest.raises(ValueError, match="different shapes"):
        clts.mpdist([x, x[:80]], y, 12)
