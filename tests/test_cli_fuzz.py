"""A fuzz test of the command line (hypothesis): generated NetCDF / Zarr / CSV inputs with
numeric, datetime64 and cftime axes of random calendars, some shuffled; earlier outputs of
every kind at the output path, with and without --overwrite; failures and Ctrl-C injected in the
middle of the computation. No input and no earlier output is ever modified, no partial file is
left, and every result written equals the library call on the same arrays. Small and few
examples (deterministic: derandomize), in process through clts.cli.main."""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
pytest.importorskip("cftime")
pytest.importorskip("h5netcdf")
pytest.importorskip("zarr")
hyp = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings, strategies as st  # noqa: E402

import clts.xarray as cx  # noqa: E402
from clts import cli  # noqa: E402
from clts.io import read, write  # noqa: E402
from clts.timeaxis import YEAR_DAYS  # noqa: E402

AXES = ["datetime", "steps", "years", "noleap", "360_day", "all_leap", "julian", "standard"]
BLOCKS = {"stl": "_stl_block", "bfast": "_bfast_block", "mp": "_mp_block"}


@st.composite
def cases(draw):
    fmt = draw(st.sampled_from(["nc", "zarr", "csv"]))
    return dict(
        fmt=fmt,
        axis=draw(st.sampled_from(AXES if fmt != "csv" else AXES[:3])),
        cmd=draw(st.sampled_from(["stl", "bfast", "mp"])),
        out=draw(st.sampled_from(["nc", "zarr"])),
        n=draw(st.integers(48, 64)),
        shuffled=draw(st.sampled_from([False] * 5 + [True])),
        existing=draw(st.sampled_from([None, None, None, "ours", "ours", "file", "foreign"])),
        overwrite=draw(st.sampled_from([True, True, False])),
        fail=draw(st.sampled_from([None, None, "error", "interrupt"])),
        seed=draw(st.integers(0, 2**16)))


def times(axis, n):
    if axis == "datetime":
        return pd.date_range("2001-01-01", periods=n, freq="MS").values
    if axis == "steps":
        return np.arange(n)
    if axis == "years":
        return 2001 + np.arange(n) / 12
    return xr.date_range("2001-01-01", periods=n, freq="MS", calendar=axis,
                         use_cftime=True).values


def make_input(d: Path, c) -> Path:
    rng = np.random.default_rng(c["seed"])
    n = c["n"]
    t = times(c["axis"], n)
    y = np.sin(2 * np.pi * np.arange(n) / 12)[:, None] + 0.1 * rng.standard_normal((n, 2))
    y[rng.integers(0, n, 3), rng.integers(0, 2, 3)] = np.nan
    if c["shuffled"]:
        order = np.r_[0, 2, 1, 3:n]
        t = t[order]
    if c["fmt"] == "csv":
        path = d / "in.csv"
        pd.DataFrame({"a": y[:, 0], "b": y[:, 1]},
                     index=pd.Index(t, name="time")).to_csv(path)
        return path
    ds = xr.Dataset({"v": (("time", "x"), y)}, coords={"time": t})
    path = d / f"in.{c['fmt']}"
    if c["fmt"] == "nc":
        ds.to_netcdf(path, engine="h5netcdf")
    else:
        ds.to_zarr(path, zarr_format=2)
    return path


def make_existing(out: Path, kind):
    if kind == "ours":
        write(xr.Dataset({"old": ("k", np.arange(3.0))}), str(out), progress=False)
    elif kind == "file":
        out.write_bytes(b"an earlier result")
    elif kind == "foreign":
        out.mkdir()
        (out / "data.txt").write_text("someone's")


def snapshot(root: Path) -> dict:
    return {str(p.relative_to(root)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def arguments(c, t):
    if c["cmd"] == "stl":
        return ["-p", "12"], {}
    if c["cmd"] == "mp":
        return ["-m", "8"], {}
    k = int(len(t) * 2 // 3)
    axis = c["axis"]
    if axis in ("steps", "years"):
        start, freq = str(t[k]), (12.0 if axis == "steps" else 1.0)
    elif axis == "datetime":
        start, freq = str(np.datetime64(t[k], "D")), 365.25
    else:
        start, freq = t[k].strftime("%Y-%m-%d"), YEAR_DAYS[axis]
    return ["--start-monitor", start, "--freq", str(freq)], dict(start=start, freq=freq)


def expected(c, inp: Path, kw):
    da = read(str(inp), "a" if c["fmt"] == "csv" else None, "time")
    if c["cmd"] == "stl":
        ds = cx.stl(da, 12, seasonal=7, robust=False)
        ds["trend_slope"] = cx.trend_slope(ds)
    elif c["cmd"] == "mp":
        ds = cx.matrix_profile(da, 8)
    else:
        start = float(kw["start"]) if c["axis"] in ("steps", "years") else kw["start"]
        ds = cx.bfast_monitor(da, start, freq=kw["freq"], k=3, hfrac=0.25, level=0.05,
                              history="all")
    return ds.compute()


def check_result(out: Path, want):
    got = xr.open_zarr(out) if out.suffix == ".zarr" else xr.open_dataset(out,
                                                                          engine="h5netcdf")
    assert set(got.data_vars) == set(want.data_vars)
    for name, v in want.data_vars.items():
        g = got[name].values
        if v.dtype == object:                      # cftime results: days after "since"
            import cftime
            a = got[name].attrs
            ok = ~np.isnan(g)
            dates = cftime.num2date(g[ok], f"days since {a['since']}", calendar=a["calendar"])
            assert (dates == v.values[ok]).all() and all(x is None for x in v.values[~ok])
        else:
            np.testing.assert_array_equal(g, v.values, err_msg=name)


@settings(max_examples=14, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cases())
# always among the cases: each command on a cftime axis, failures reaching the computation
@example(dict(fmt="nc", axis="360_day", cmd="mp", out="nc", n=50, shuffled=False,
              existing="ours", overwrite=True, fail=None, seed=1))
@example(dict(fmt="zarr", axis="noleap", cmd="bfast", out="zarr", n=60, shuffled=False,
              existing=None, overwrite=False, fail=None, seed=2))
@example(dict(fmt="nc", axis="julian", cmd="stl", out="zarr", n=48, shuffled=False,
              existing="ours", overwrite=True, fail="interrupt", seed=3))
@example(dict(fmt="csv", axis="steps", cmd="bfast", out="nc", n=64, shuffled=False,
              existing="file", overwrite=True, fail="error", seed=4))
@example(dict(fmt="csv", axis="years", cmd="stl", out="nc", n=64, shuffled=False,
              existing="file", overwrite=True, fail=None, seed=5))
def test_cli_never_loses_a_file_and_matches_the_library(c):
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        inp = make_input(d, c)
        out = d / f"out.{c['out']}"
        make_existing(out, c["existing"])
        before = snapshot(d)
        t = read(str(inp), "a" if c["fmt"] == "csv" else None, "time")["time"].values
        extra, kw = arguments(c, t)
        argv = [c["cmd"], str(inp), "-o", str(out), "--no-progress", *extra]
        argv += ["--var", "a"] if c["fmt"] == "csv" else []
        argv += ["--overwrite"] if c["overwrite"] else []
        replaceable = c["existing"] is None or (c["overwrite"] and (
            c["existing"] == "ours" or (c["existing"] == "file" and c["out"] == "nc")))
        succeed = replaceable and not c["shuffled"] and c["fail"] is None
        block = getattr(cx, BLOCKS[c["cmd"]])

        def failing(*args, **kwargs):
            raise KeyboardInterrupt if c["fail"] == "interrupt" else ValueError("injected")
        with mock.patch.object(cx, BLOCKS[c["cmd"]], failing if c["fail"] else block):
            rc = cli.main(argv)
        after = snapshot(d)
        assert not [p for p in d.iterdir() if p.name.startswith(".")], "temporary left"
        if not succeed:
            assert rc in (2, 130), (c, rc)
            assert after == before, c
            return
        assert rc == 0, c
        kept = {k: v for k, v in before.items() if not k.startswith(out.name)}
        assert {k: v for k, v in after.items() if k in kept} == kept
        check_result(out, expected(c, inp, kw))
