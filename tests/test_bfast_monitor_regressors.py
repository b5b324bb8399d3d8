"""clts.bfast_monitor with a covariate in the model (``regressors=`` / ``formula=``) against
R's BFAST-Monitor steps with strucchange (mefp / monitor on bfastpp's frame with an xreg column;
fixtures tests/data/bfast_mreg_*.csv from bench/bfast_monitor_regressors_fixtures.R). Both code
versions (fused in float64 to 1e-7, multi in float32)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return pd.read_csv(DATA / "bfast_mreg_input.csv"), pd.read_csv(DATA / "bfast_mreg_output.csv")


@pytest.mark.parametrize("version, dtype", [("fused", np.float64), ("multi", np.float32)])
def test_r_fixture(device, rfix, version, dtype):
    if dtype == np.float64 and not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    inp, out = rfix
    t = inp.time.values
    Y = inp[[f"y{p}" for p in range(8)]].values.astype(dtype)
    for (formula, order), rows in out.groupby(["formula", "order"], sort=False):
        r = clts.bfast_monitor(Y, t, 2008.0, k=int(order), freq=1.0, formula=formula,
                               regressors={"xreg": inp.xreg.values}, device=device,
                               version=version, progress=False, detailed=True)
        np.testing.assert_array_equal(r.breaks, rows.breaks.values, err_msg=formula)
        tol = 1e-7 if dtype == np.float64 else 2e-3
        np.testing.assert_allclose(r.magnitudes, rows.magnitude.values, rtol=tol * 10,
                                   atol=tol * 0.1, err_msg=formula)
        np.testing.assert_allclose(r.sigma, rows.sigma.values, rtol=tol * 10, err_msg=formula)
        assert r.diagnostics["n_coef"] == (2 * int(order) if "harmon" in formula else 0) \
            + ("trend" in formula) + 2


def test_covariate_coefficients(device):
    """The coefficients come back in the covariate's own units (the host unscales them), and
    a shared covariate that is an affine function of time is the trend's column."""
    rng = np.random.default_rng(9)
    N = 200
    t = 2000 + np.arange(N) / 23
    x = 300 + 50 * rng.normal(size=N).cumsum()
    y = (1.0 + 0.002 * x + 0.1 * np.sin(2 * np.pi * t))[:, None] + 0.001 * rng.normal(size=(N, 2))
    r = clts.bfast_monitor(y, t, 2007.0, k=1, freq=1.0, trend=False, regressors={"temp": x},
                           detailed=True, device=device, progress=False)
    np.testing.assert_allclose(r.coef[-1], 0.002, rtol=1e-2)
    np.testing.assert_allclose(r.coef[0], 1.0, atol=0.02)
    # a NaN covariate: that value of y is missing (R's na.omit)
    r = clts.bfast_monitor(y, t, 2007.0, freq=1.0, regressors=np.r_[np.nan, x[1:]],
                           device=device, progress=False)
    assert r.valids.tolist() == [N - 1, N - 1]
    with pytest.raises(ValueError, match="shared by all pixels"):
        clts.bfast_monitor(y, t, 2007.0, freq=1.0, regressors=np.ones((N, 3, 1)))
