"""clts.xarray.tke / superbee_fluxes: the ocean routines on a Dataset of their inputs, identical
to the numpy calls, dims in any order, coordinates and attributes kept, clear errors."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.ocean.inputs import NAMES, scaled_inputs

xr = pytest.importorskip("xarray")
import clts.xarray as cx  # noqa: E402

DIMS = {"u": "xyzl", "v": "xyzl", "w": "xyzl", "tke": "xyzl", "dtke": "xyzl", "maskU": "xyz",
        "maskV": "xyz", "maskW": "xyz", "kappaM": "xyz", "mxl": "xyz", "forc": "xyz",
        "dxt": "x", "dxu": "x", "dyt": "y", "dyu": "y", "cost": "y", "cosu": "y", "dzt": "z",
        "dzw": "z", "kbot": "xy", "forc_tke_surface": "xy"}
FULL = {"x": "xt", "y": "yt", "z": "zw", "l": "timestep"}


def _dataset(x, order=None):
    """The inputs as a Dataset; ``order``: the grid variables' dims transposed to it."""
    ds = xr.Dataset({n: ([FULL[c] for c in DIMS[n]], x[n]) for n in NAMES},
                    coords={"xt": np.arange(x["dxt"].size) * 10.0, "zw": -np.arange(
                        x["dzt"].size, dtype=float)}, attrs={"model": "test"})
    ds["tke"].attrs = {"units": "m^2/s^2"}
    if order:
        ds = ds.transpose(*order)
    return ds


def test_tke_dataset_matches_numpy(device):
    x = scaled_inputs((9, 8, 4))
    want = clts.ocean.tke(*x.values(), device=device)
    ds = _dataset(x)
    got = cx.tke(ds, device=device)
    assert set(got.data_vars) == {"tke", "dtke", "tke_surf_corr"}
    for name, w in zip(("tke", "dtke", "tke_surf_corr"), want):
        np.testing.assert_array_equal(got[name].values, w)
    assert got["tke"].dims == ("xt", "yt", "zw", "timestep")
    assert got["tke_surf_corr"].dims == ("xt", "yt")
    assert got.attrs == {"model": "test"} and got["tke"].attrs == {"units": "m^2/s^2"}
    np.testing.assert_array_equal(got["xt"].values, ds["xt"].values)
    # dims in another order (z first) and Dask-backed variables: the same numbers
    import importlib.util
    other = _dataset(x, ("zw", "timestep", "yt", "xt"))
    if importlib.util.find_spec("dask") is not None:     # Dask is an optional extra
        other = other.chunk()
    got2 = cx.tke(other, device=device)
    assert got2["tke"].dims == ("zw", "timestep", "yt", "xt")
    np.testing.assert_array_equal(got2["tke"].transpose(*got["tke"].dims).values, want[0])


def test_superbee_dataset_matches_numpy(device):
    x = scaled_inputs((8, 9, 5))
    names = ("q", "u", "v", "w", "maskW", "dxt", "dyt", "dzw", "cost", "cosu")
    arrs = dict(q=x["tke"][..., 0], u=x["u"][..., 0], v=x["v"][..., 0], w=x["w"][..., 0],
                maskW=x["maskW"], dxt=x["dxt"], dyt=x["dyt"], dzw=x["dzw"], cost=x["cost"],
                cosu=x["cosu"])
    want = clts.ocean.superbee_fluxes(*(arrs[n] for n in names), 0.5, device=device)
    dims = {n: ("x", "y", "z") for n in names[:5]} | {"dxt": ("x",), "dyt": ("y",),
                                                       "dzw": ("z",), "cost": ("y",),
                                                       "cosu": ("y",)}
    ds = xr.Dataset({n: (dims[n], arrs[n]) for n in names}).transpose("y", "z", "x")
    got = cx.superbee_fluxes(ds, 0.5, device=device)
    for name, w in zip(("flux_east", "flux_north", "flux_top"), want):
        assert got[name].dims == ("y", "z", "x")
        np.testing.assert_array_equal(got[name].transpose("x", "y", "z").values, w)


def test_ocean_dataset_errors_name_the_problem():
    x = scaled_inputs((6, 6, 3))
    ds = _dataset(x)
    with pytest.raises(TypeError, match="Dataset"):
        cx.tke(ds["tke"])
    with pytest.raises(ValueError, match="lacks the variables mxl"):
        cx.tke(ds.drop_vars("mxl"))
    with pytest.raises(ValueError, match=r"dxt, dyt, dzw \(yt, yt, zw\)"):
        cx.tke(ds.assign(dxt=("yt", x["dyt"])))
    with pytest.raises(ValueError, match=r"\['dxu'\] must have the dimensions \('xt',\)"):
        cx.tke(ds.assign(dxu=("yt", x["dyu"])))
