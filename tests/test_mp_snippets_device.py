"""clts.snippets with s < m on the device (snippets.cl.mako) against its host path (distance
profiles from clts.mass, minima and k-th values in numpy) on a series long enough for several
column blocks per segment and several positions per k-th work-item, with NaN, inf and a
constant stretch. (Against stumpy: tests/test_mp_snippets.py.)"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import clts


@pytest.mark.parametrize("kw", [dict(s=20), dict(s=7, mpdist_k=9)])
def test_device_equals_host_path(device, monkeypatch, kw):
    rng = np.random.default_rng(46)
    T = np.cumsum(rng.standard_normal(2600))
    T[300:304] = np.nan
    T[1500] = np.inf
    T[2000:2090] = 1.5
    got = clts.snippets(T, 40, 3, device=device, **kw)
    monkeypatch.setattr(sys.modules["clts.mp.snippets_join"], "usable", lambda j, k: False)
    want = clts.snippets(T, 40, 3, device=device, **kw)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=0, atol=1e-9)
    for a, b in zip(got[3:], want[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
