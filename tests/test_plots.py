"""result.plot() renders (matplotlib, Agg) for STL, BFAST and matrix-profile results."""
import numpy as np
import pytest

import clts

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _png(fig, tmp_path, name):
    path = tmp_path / name
    fig.savefig(path, dpi=60)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    return fig


def test_stl_plot_panels(device, tmp_path):
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12) + 0.01 * t + np.zeros((2, 1))
    fig = _png(clts.stl(y, 12, device=device).plot(series=1), tmp_path, "stl.png")
    assert [ax.get_ylabel() for ax in fig.axes] == ["data", "seasonal", "trend", "residual"]


def test_bfast_plots_maps_and_pixel(device, tmp_path):
    rng = np.random.default_rng(0)
    t = np.arange(96)
    dates = np.datetime64("2000-01-01") + (t * 30.4).astype("timedelta64[D]")
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 12)[:, None, None] + 0.02 * rng.standard_normal(
        (96, 6, 5))
    y[75:, :3] -= 0.3
    r = clts.bfast_monitor(y, dates, np.datetime64("2005-01-01"), freq=365.25, detailed=True,
                           device=device)
    fig = _png(r.plot(), tmp_path, "maps.png")
    assert any("pixels with a break" in t.get_text() for t in fig.texts)   # the suptitle
    fig = _png(r.plot((0, 0)), tmp_path, "pixel.png")
    # as R's plot(bfastmonitor): the data, the history model and its prediction, the break
    top = fig.axes[0].get_legend_handles_labels()[1]
    assert top[:3] == ["data", "history model", "prediction"]
    assert top[3].startswith("start of monitoring (2005-") and top[4].startswith("break (")
    labels = fig.axes[1].get_legend_handles_labels()[1]
    assert labels[:2] == ["MOSUM", "boundary"] and labels[2].startswith("break (")
    with pytest.raises(ValueError, match="detailed=True"):
        clts.bfast_monitor(y, dates, np.datetime64("2005-01-01"), freq=365.25,
                           device=device).plot((0, 0))


def test_matrix_profile_plot_marks_motifs(device, tmp_path):
    rng = np.random.default_rng(2)
    T = np.cumsum(rng.standard_normal(600))
    T[400:440] = T[100:140] - T[100] + T[400]
    fig = _png(clts.matrix_profile(T, 40, device=device).plot(), tmp_path, "mp.png")
    assert fig.axes[0].get_legend_handles_labels()[1] == ["motif 1", "discord"]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # no "No artists with labels" warning
        fig = clts.matrix_profile(T, 40, device=device).plot(max_motifs=0, discords=0)
    assert fig.axes[0].get_legend() is None


def test_plots_take_labels_and_name_them(device, tmp_path):
    """plot(series=<column>) on a DataFrame result, titles with the label; BFAST maps on the
    DataArray's x / y coordinates and a pixel chosen by its coordinates; the matrix-profile
    plot names the variable."""
    pd = pytest.importorskip("pandas")
    xr = pytest.importorskip("xarray")
    rng = np.random.default_rng(0)
    idx = pd.date_range("2000-01-01", periods=96, freq="MS")
    t = np.arange(96)
    df = pd.DataFrame({f"sensor{i:03d}": np.sin(2 * np.pi * t / 12) + 0.01 * i * t
                       for i in range(12)}, index=idx)
    r = clts.stl(df, device=device)
    fig = _png(r.plot(series="sensor010"), tmp_path, "stl.png")
    assert fig.texts[0].get_text() == "STL decomposition (period 12, sensor010)"
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), df["sensor010"])
    assert "sensor000" in r.plot().texts[0].get_text()
    with pytest.raises(ValueError, match="not a column"):
        r.plot(series="sensor999")
    dates = np.datetime64("2000-01-01") + (t * 30.4).astype("timedelta64[D]")
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 12)[:, None, None] + 0.02 * rng.standard_normal(
        (96, 6, 5))
    y[75:, :3] -= 0.3
    da = xr.DataArray(y, dims=("time", "y", "x"), name="ndvi", coords={
        "time": dates, "y": 4.5e6 - 30 * np.arange(6), "x": 6e5 + 30 * np.arange(5)})
    b = clts.bfast_monitor(da, None, "2005-01-01", freq=365.25, detailed=True, device=device)
    fig = _png(b.plot(), tmp_path, "maps.png")
    assert fig.axes[0].get_xlabel() == "x" and fig.axes[0].get_ylabel() == "y"
    lo, hi = sorted(fig.axes[0].get_xlim())
    assert lo < 6e5 < 6e5 + 120 < hi
    fig = _png(b.plot({"y": 4.5e6 - 30, "x": 6e5 + 60}), tmp_path, "pix.png")
    assert fig.texts[0].get_text() == "BFAST-Monitor, y=4499970, x=600060"
    np.testing.assert_allclose(fig.axes[0].lines[1].get_ydata(), y[:, 1, 2][np.isfinite(
        y[:, 1, 2])])
    T = pd.Series(np.sin(np.arange(600) * 2 * np.pi / 50) + 0.05 * rng.standard_normal(600),
                  name="pressure")
    fig = _png(clts.matrix_profile(T, 40, device=device).plot(), tmp_path, "mp.png")
    assert "pressure" in fig.texts[0].get_text() and fig.axes[0].get_ylabel() == "pressure"


def test_plots_of_device_results_and_odd_grids(device, tmp_path):
    """Results of device-array calls are read back to draw (matplotlib raised on pyopencl
    arrays); a grid one cell wide draws its trend map; MSTL takes a column label; a failed STL
    series still shows its data; a BFAST pixel may be a flat position."""
    import pandas as pd
    import pyopencl.array as cla
    rng = np.random.default_rng(0)
    y = np.sin(np.arange(96) * 2 * np.pi / 12) + 0.1 * rng.standard_normal((3, 96))
    g = cla.to_device(device.queue, y)
    for r in (clts.stl(g, 12, device=device), clts.mstl(g, periods=(6, 12), device=device),
              clts.trend_test(g, device=device),
              clts.matrix_profile(cla.to_device(device.queue, y[0]), 12, device=device)):
        _png(r.plot(), tmp_path, "dev.png")
    for shape in ((3, 1, 30), (1, 1, 30)):
        _png(clts.trend_test(rng.normal(size=shape) + 0.2 * np.arange(30), device=device)
             .plot(), tmp_path, "map.png")
    df = pd.DataFrame(y.T, columns=["a", "b", "c"],
                      index=pd.date_range("2000-01-01", periods=96, freq="MS"))
    fig = clts.mstl(df, periods=(6, 12), device=device).plot("b")
    assert "b)" in fig._suptitle.get_text()
    bad = y.copy()
    bad[1, :70] = np.nan
    fig = clts.stl(bad, 12, device=device).plot(1)
    assert np.isfinite(fig.axes[0].lines[0].get_ydata()).sum() == 26
    t = np.datetime64("2000-01-01") + np.arange(0, 365 * 8, 16)
    cube = rng.normal(size=(t.size, 2, 3))
    rb = clts.bfast_monitor(cube, t, np.datetime64("2005-01-01"), detailed=True, device=device)
    assert "pixel 4" in rb.plot(4)._suptitle.get_text()
    with pytest.raises(ValueError, match="outside the 6 pixels"):
        rb.plot(6)
