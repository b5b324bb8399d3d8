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
    labels = fig.axes[0].get_legend_handles_labels()[1]
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
