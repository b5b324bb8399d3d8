"""``result.plot()`` for MSTL and trend-test results (matplotlib, imported only when a plot is
asked for). Each function returns the matplotlib Figure."""
from __future__ import annotations

import numpy as np

from .plots import _figure, _one, _plt, _time_labels


def plot_mstl(res, series=0, *, fig=None, title=None):
    """Panels data / one per seasonal component / trend / residual of one series."""
    lab = res.labels
    seas = {p: _one(s, lab, series) for p, s in res.seasonal.items()}
    t = _one(res.trend, lab, series)
    r = _one(res.resid, lab, series)
    y = _one(res.observed, lab, series)
    x, xlabel = _time_labels(lab, len(t))
    rows = [("data", y, "C0")] + [(f"seasonal {p}", s, f"C{(4 + i) % 10}")
                                  for i, (p, s) in enumerate(seas.items())]
    rows += [("trend", t, "C2"), ("residual", r, "C3")]
    fig, axes = _figure(fig, len(rows), 2 + 1.6 * len(rows))
    for ax, (name, v, color) in zip(axes, rows):
        if name == "residual":
            ax.plot(x, v, ".", ms=3, color=color)
            ax.axhline(0, color="0.5", lw=0.8)
        else:
            ax.plot(x, v, lw=1.1, color=color)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(xlabel)
    fig.suptitle(title or f"MSTL decomposition (periods {', '.join(map(str, seas))}"
                 + (f", series {series}" if np.ndim(res.trend) > 1 else "") + ")")
    fig.tight_layout()
    return fig


def plot_trend_map(res, *, field="slope", fig=None, title=None):
    """A map of ``field`` over a 2-D grid of series with the significant ones (``h``) hatched;
    a bar chart for a 1-D batch (significant bars dark)."""
    plt = _plt()
    v = np.asarray(getattr(res, field), dtype=np.float64)
    sig = np.asarray(res.h, dtype=bool)
    if fig is None:
        fig = plt.figure(figsize=(7.5, 5.5))
    ax = fig.subplots()
    variant = res.diagnostics.get("variant", "")
    if v.ndim == 2:
        lim = np.nanmax(np.abs(v)) if np.isfinite(v).any() else 1.0
        im = ax.imshow(v, cmap="BrBG", vmin=-lim, vmax=lim, origin="upper",
                       interpolation="nearest")
        fig.colorbar(im, ax=ax, label=field)
        ax.contourf(np.arange(v.shape[1]), np.arange(v.shape[0]), sig.astype(float),
                    levels=[0.5, 1.5], hatches=["///"], colors="none")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.text(0.01, -0.12, f"hatched: significant at alpha = {res.diagnostics['alpha']}",
                transform=ax.transAxes, fontsize=8)
    elif v.ndim <= 1:
        v = np.atleast_1d(v)
        sig = np.atleast_1d(sig)
        ax.bar(np.arange(len(v)), v, color=np.where(sig, "C0", "0.75"))
        ax.axhline(0, color="0.4", lw=0.8)
        ax.set_xlabel("series")
        ax.set_ylabel(field)
    else:
        raise ValueError(f"a trend map needs series on a 1-D or 2-D grid, got {v.shape}")
    ax.set_title(title or f"Mann-Kendall ({variant}) and Sen: {field}")
    fig.tight_layout()
    return fig
