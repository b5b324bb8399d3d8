"""clts.snippets and its clts.compat.stumpy names against stumpy 1.14: stumpy's own test setting
(its test_snippets: a uniform series, m = 10, k = 3, the default s = m, a smaller s, mpdist_k)
and a random walk with NaN, inf and a constant stretch; every one of the six returned arrays.
stumpy runs once, in a subprocess with NUMBA_DISABLE_JIT=1."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import clts
import clts.compat.stumpy as cs

CASES = {"uniform": dict(m=10, k=3), "uniform_s": dict(m=10, k=3, s=4),
         "uniform_pk": dict(m=10, k=2, percentage=0.6, mpdist_k=2),
         "walk": dict(m=16, k=2), "walk_s": dict(m=16, k=3, s=6, mpdist_percentage=0.2),
         "aamp": dict(m=16, k=2, s=8), "aamp1": dict(m=16, k=2, p=1.0)}

STUMPY_SCRIPT = r"""
import json, sys, numpy as np, stumpy
d = dict(np.load(sys.argv[1]))
cases = json.loads(sys.argv[3])
o = {}
for key, kw in cases.items():
    T = d["U"] if key.startswith("uniform") else d["W"]
    f = stumpy.aampdist_snippets if key.startswith("aamp") else stumpy.snippets
    for i, a in enumerate(f(T, **kw)):
        o[f"{key}_{i}"] = a
np.savez(sys.argv[2], **o)
"""


def _inputs():
    rng = np.random.default_rng(4)
    U = rng.uniform(-1000, 1000, 64)
    W = np.cumsum(rng.standard_normal(150))
    W[30:33] = np.nan
    W[80:100] = 2.5
    W[120] = np.inf
    return {"U": U, "W": W}


@pytest.fixture(scope="module")
def ref(tmp_path_factory):
    pytest.importorskip("stumpy")
    import json
    d = tmp_path_factory.mktemp("snippets_stumpy")
    inp = _inputs()
    np.savez(d / "in.npz", **inp)
    (d / "run.py").write_text(STUMPY_SCRIPT)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, str(d / "run.py"), str(d / "in.npz"), str(d / "out.npz"),
                    json.dumps(CASES)], check=True, env=env, timeout=600)
    return inp, dict(np.load(d / "out.npz"))


@pytest.mark.parametrize("key", list(CASES))
def test_against_stumpy(device, ref, key):
    inp, out = ref
    T = inp["U"] if key.startswith("uniform") else inp["W"]
    kw = dict(CASES[key])
    if key.startswith("aamp"):
        got = cs.aampdist_snippets(T, device=device, **kw)
    else:
        got = cs.snippets(T, device=device, **kw)
    assert len(got) == 6
    for i, a in enumerate(got):
        want = out[f"{key}_{i}"]
        assert a.shape == want.shape and a.dtype == want.dtype, (key, i)
        if a.dtype.kind == "f":
            np.testing.assert_allclose(a, want, rtol=1e-9, atol=1e-6, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, want)


def test_labelled_and_errors(device):
    pd = pytest.importorskip("pandas")
    T = np.cumsum(np.random.default_rng(2).standard_normal(120))
    a = clts.snippets(T, 12, 2, device=device)
    b = clts.snippets(pd.Series(T), 12, 2, device=device)
    c = clts.snippets(T[:, None], 12, 2, time_axis=0, device=device)
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    with pytest.raises(ValueError, match="too large"):
        clts.snippets(T, 61, 1, device=device)
    with pytest.raises(ValueError, match="k must be"):
        clts.snippets(T, 12, 0, device=device)
    with pytest.raises(ValueError, match="s = 2"):
        clts.snippets(T, 12, 2, s=2, device=device)
    with pytest.raises(NotImplementedError, match="mpdist_T_subseq_isconstant"):
        cs.snippets(T, 12, 2, mpdist_T_subseq_isconstant=np.ones(109, bool), device=device)
