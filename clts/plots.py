"""``result.plot()`` for STL, BFAST-Monitor and matrix-profile results (matplotlib, imported
only when a plot is asked for). Each function returns the matplotlib Figure."""
from __future__ import annotations

import numpy as np


def _plt():
    try:
        import matplotlib
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'clts[plot]'") from None
    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        from .options import display_available
        if not display_available():
            plt.switch_backend("Agg")
    return plt


def _figure(fig, nrows, height, sharex=True, width=10.0):
    plt = _plt()
    if fig is None:
        fig = plt.figure(figsize=(width, height))
    axes = fig.subplots(nrows, 1, sharex=sharex, squeeze=False)[:, 0]
    return fig, axes


def _label(v) -> str:
    """A coordinate label for a title: 4499820.0 as 4499820, dates as days."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, np.datetime64):
        return str(v.astype("datetime64[D]"))
    return str(v)


def series_position(labels, series):
    """Index tuple (over the non-time axes, time last) of ``series`` and its name for titles:
    an int (flat position), an index tuple, a DataFrame column label, or for a DataArray a
    dict ``{dimension: coordinate label}``."""
    if isinstance(series, (int, np.integer)) and not isinstance(series, bool):
        if labels is not None and labels.kind == "frame":
            cols = labels.x.columns if labels.axis == 0 else labels.x.index
            return int(series), str(cols[int(series)])
        return int(series), f"series {int(series)}"
    if isinstance(series, tuple):
        return series, f"series {series}"
    if labels is not None and labels.kind == "frame":
        cols = labels.x.columns if labels.axis == 0 else labels.x.index
        if series not in cols:
            raise ValueError(f"series {series!r} is not a column of the input "
                             f"(columns {list(cols)[:6]}{' ...' if len(cols) > 6 else ''})")
        return int(cols.get_loc(series)), str(series)
    if labels is not None and labels.kind == "dataarray" and isinstance(series, dict):
        da = labels.x
        others = [d for i, d in enumerate(da.dims) if i != labels.axis]
        if set(series) != set(others):
            raise ValueError(f"series must give a label for each of {others}, got "
                             f"{sorted(series)}")
        pos = tuple(int(da.get_index(d).get_loc(series[d])) for d in others)
        return pos, ", ".join(f"{d}={_label(series[d])}" for d in others)
    raise ValueError(f"series must be an int, an index tuple, a DataFrame column label or "
                     f"a dict of DataArray coordinate labels, got {series!r}")


def _one(a, labels, series):
    """Series ``series`` (a position from :func:`series_position`) of output ``a``."""
    a = labels.to_last(a) if labels is not None else np.asarray(a)
    if a.ndim == 1:
        return a
    flat = a.reshape(-1, a.shape[-1])
    if isinstance(series, tuple):
        return a[series]
    return flat[int(series)]


def _time_labels(labels, n):
    t = labels.times() if labels is not None else None
    if t is None:
        return np.arange(n), "time step"
    from .timeaxis import is_cftime, plottable
    return plottable(t), "time (years)" if is_cftime(t) else "time"


def plot_stl(res, series=0, *, fig=None, title=None):
    """Panels data / seasonal / trend / residual of one series, like statsmodels'
    ``DecomposeResult.plot()``."""
    lab = res.labels
    series, which = series_position(lab, series)
    s = _one(res.seasonal, lab, series)
    t = _one(res.trend, lab, series)
    r = _one(res.resid, lab, series)
    observed = getattr(res, "observed", None)      # the data (a failed series keeps them)
    y = _one(observed, lab, series) if observed is not None else s + t + r
    x, xlabel = _time_labels(lab, len(s))
    fig, axes = _figure(fig, 4, 7.5)
    for ax, v, name in zip(axes, (y, s, t, r), ("data", "seasonal", "trend", "residual")):
        if name == "residual":
            ax.plot(x, v, ".", ms=3, color="C3")
            ax.axhline(0, color="0.5", lw=0.8)
        else:
            ax.plot(x, v, lw=1.2, color="C0" if name == "data" else "C1" if name == "seasonal"
                    else "C2")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(xlabel)
    fig.suptitle(title or f"STL decomposition (period {res.diagnostics['params']['period']}"
                 + (f", {which}" if np.ndim(res.trend) > 1 else "") + ")")
    fig.tight_layout()
    return fig


def _pixel(res, pixel):
    """Index tuple into the pixel axes of ``pixel`` and its name: an int / tuple of positions,
    a DataFrame column label (results indexed by the columns), or a dict of DataArray
    coordinate labels."""
    b = res.breaks
    if isinstance(pixel, dict) and hasattr(b, "dims"):
        pos = tuple(int(b.get_index(d).get_loc(pixel[d])) for d in b.dims)
        return pos, ", ".join(f"{d}={_label(pixel[d])}" for d in b.dims)
    if hasattr(b, "index") and not isinstance(pixel, (int, np.integer, tuple)):
        if pixel not in b.index:
            raise ValueError(f"pixel {pixel!r} is not a column of the input")
        return (int(b.index.get_loc(pixel)),), str(pixel)
    shape = np.shape(b)
    pos = pixel if isinstance(pixel, tuple) else (int(pixel),)
    if len(pos) == 1 and len(shape) > 1:        # a flat position over the pixel grid
        if not 0 <= pos[0] < int(np.prod(shape)):
            raise ValueError(f"pixel {pixel} is outside the {int(np.prod(shape))} pixels")
        pos = tuple(int(i) for i in np.unravel_index(pos[0], shape))
    if len(pos) != len(shape) or not all(-n <= int(i) < n for i, n in zip(pos, shape)):
        raise ValueError(f"pixel {pixel!r} is not an index into the pixel axes {shape}")
    if hasattr(b, "index"):
        return pos, str(b.index[pos[0]])
    return pos, f"pixel {pixel}"


def plot_bfast(res, pixel=None, *, fig=None, title=None):
    """Maps of the break date and magnitude (pixel None), or one pixel as R's
    ``plot(bfastmonitor)`` draws it, the data with the history model fitted and extrapolated,
    the start of monitoring and the break, above its MOSUM process and boundary (needs
    ``detailed=True``)."""
    if pixel is None:
        return _bfast_maps(res, fig=fig, title=title)
    if res.mosum is None:
        raise ValueError("a pixel's plot needs bfast_monitor(..., detailed=True)")
    pixel, name = _pixel(res, pixel)
    at = (slice(None),) + pixel
    mosum = np.asarray(res.mosum)[at]
    bound = np.asarray(res.bounds)[at]
    brk = int(np.asarray(res.breaks)[pixel])
    from .timeaxis import plottable, show
    dates = res.monitor_dates
    x = plottable(dates) if dates is not None else np.arange(len(mosum))
    has_data = res.observed is not None and res.dates is not None
    fig, axes = _figure(fig, 2 if has_data else 1, 6.4 if has_data else 3.8)
    if has_data:
        ax = axes[0]
        y = np.asarray(res.observed)[at].astype(np.float64)
        if res.diagnostics.get("nodata") is not None:
            y[y == res.diagnostics["nodata"]] = np.nan
        d = plottable(np.asarray(res.dates))
        n = len(d) - len(mosum)
        pred = np.asarray(res.prediction)[at].astype(np.float64)
        ok = np.isfinite(y)
        ax.plot(d[ok], y[ok], "-", color="0.35", lw=0.8)
        ax.plot(d[ok], y[ok], ".", color="k", ms=3, label="data")
        ax.plot(d[:n], pred[:n], color="C0", lw=1.6, label="history model")
        ax.plot(d[n - 1:], pred[n - 1:], color="C0", lw=1.4, ls="--", label="prediction")
        ax.axvline(d[n], color="0.3", ls=":", lw=1.2,
                   label=f"start of monitoring ({show(np.asarray(res.dates)[n])})")
        if brk >= 0:
            when = show(dates[brk]) if dates is not None else x[brk]
            ax.axvline(x[brk], color="C3", lw=1.6, label=f"break ({when})")
        ax.set_ylabel("value")
        ax.legend(loc="best", fontsize=8)
        ax.grid(alpha=0.3)
    ax = axes[-1]
    ok = np.isfinite(mosum)
    ax.plot(x[ok], mosum[ok], "-", color="C0", lw=1.3, label="MOSUM")
    okb = np.isfinite(bound)
    ax.plot(x[okb], bound[okb], "--", color="C3", lw=1, label="boundary")
    ax.plot(x[okb], -bound[okb], "--", color="C3", lw=1)
    if brk >= 0:
        when = x[brk].astype("datetime64[D]") if np.asarray(x).dtype.kind == "M" else (
            show(dates[brk]) if dates is not None else x[brk])
        ax.axvline(x[brk], color="k", lw=1.2, label=f"break ({when})")
    ax.axhline(0, color="0.6", lw=0.6)
    ax.set_xlabel("date")
    ax.set_ylabel("MOSUM of residuals")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.suptitle(title or f"BFAST-Monitor, {name}")
    fig.tight_layout()
    return fig


_X_NAMES = ("x", "lon", "longitude", "easting")
_Y_NAMES = ("y", "lat", "latitude", "northing")


def _grid_coords(a):
    """(x, y, x name, y name, transposed) of a 2-D DataArray's coordinates (x / y, lon / lat,
    or its dims' 1-D numeric coordinates), or None; ``transposed``: the dims are (x, y) /
    (lon, lat), so the values are drawn transposed (x across, y up)."""
    if not hasattr(a, "dims") or a.ndim != 2:
        return None
    ydim, xdim = a.dims
    swap = str(ydim).lower() in _X_NAMES and str(xdim).lower() in _Y_NAMES
    if swap:
        ydim, xdim = xdim, ydim

    def coord(dim):
        c = a.coords.get(dim)
        if c is None or c.ndim != 1 or c.dtype.kind not in "fiuM":
            return None
        unit = c.attrs.get("units")
        return np.asarray(c.values), f"{dim} ({unit})" if unit else dim
    cx, cy = coord(xdim), coord(ydim)
    if cx is None or cy is None or len(cx[0]) < 2 or len(cy[0]) < 2:
        return None     # a row or column of pixels: no cell size to draw them with
    return cx[0], cy[0], cx[1], cy[1], swap


def _draw_map(ax, v, grid, **kw):
    """``v`` on ``ax``: on its coordinates (``_grid_coords``) or as an image without them."""
    if grid is None:
        im = ax.imshow(v, interpolation="nearest", **kw)
        ax.set_xticks([])
        ax.set_yticks([])
        return im
    xs, ys, xn, yn, swap = grid
    v = np.asarray(v)
    im = ax.pcolormesh(xs, ys, np.ma.masked_invalid(v.T if swap else v), shading="nearest", **kw)
    if xs.dtype.kind != "M" and ys.dtype.kind != "M":
        ax.ticklabel_format(useOffset=False, style="plain")
    ax.set_xlabel(xn)      # coordinates as given: north up for y / lat, whichever
    ax.set_ylabel(yn)      # order the rows are stored in
    if xn.split()[0] == "x" and yn.split()[0] == "y":
        ax.set_aspect("equal")      # projected metres
    return im


def plot_breaks_maps(maps, *, fig=None, title=None):
    """The number of breaks and the largest break's magnitude of a 2-D scene (``maps`` with
    the fields of ``clts.bfast.maps.break_maps``, e.g. ``clts.xarray.break_maps``'s Dataset
    or its variables as attributes)."""
    plt = _plt()
    nb = np.asarray(maps.n_breaks)
    if nb.ndim != 2:
        raise ValueError(f"break maps need a 2-D pixel grid, got pixel shape {nb.shape}")
    if fig is None:
        fig = plt.figure(figsize=(11, 4.6))
    ax1, ax2 = fig.subplots(1, 2)
    grid = _grid_coords(maps.n_breaks)
    top = max(int(nb.max(initial=0)), 1)
    im = _draw_map(ax1, np.where(nb >= 0, nb, np.nan).astype(float), grid, cmap="viridis",
                   vmin=0, vmax=top)
    fig.colorbar(im, ax=ax1, label="breaks", shrink=0.85)
    ax1.set_title("number of breaks (white: not analysed)")
    mag = np.asarray(maps.largest_magnitude, dtype=np.float64)
    v = np.nanmax(np.abs(mag)) if np.isfinite(mag).any() else 1.0
    im2 = _draw_map(ax2, mag, grid, cmap="RdBu", vmin=-v, vmax=v)
    fig.colorbar(im2, ax=ax2, label="magnitude (fit after - fit before)", shrink=0.85)
    ax2.set_title("largest break's magnitude")
    fig.suptitle(title or f"Bai-Perron breaks: {int(np.sum(nb > 0))} of {nb.size} pixels "
                 "with a break")
    fig.tight_layout()
    return fig


def _bfast_maps(res, *, fig=None, title=None):
    plt = _plt()
    breaks = np.asarray(res.breaks)
    if breaks.ndim != 2:
        raise ValueError(f"break maps need a 2-D pixel grid, got pixel shape {breaks.shape}; "
                         "give pixel= for one pixel's plot")
    if fig is None:
        fig = plt.figure(figsize=(11, 4.6))
    ax1, ax2 = fig.subplots(1, 2)
    bd = np.asarray(res.break_dates)
    if bd.dtype.kind == "M":
        years = bd.astype("datetime64[D]").astype(np.float64) / 365.25 + 1970.0
        years[np.isnat(bd)] = np.nan
        label = "break date (year)"
    else:
        from .timeaxis import is_cftime, plottable
        years = plottable(bd).astype(np.float64)
        label = "break date (year)" if is_cftime(bd) else "break date"
    grid = _grid_coords(res.breaks)

    def draw(ax, v, **kw):
        return _draw_map(ax, v, grid, **kw)
    im = draw(ax1, years, cmap="viridis")
    fig.colorbar(im, ax=ax1, label=label, shrink=0.85)
    ax1.set_title("first break (white: none)")
    mag = np.asarray(res.magnitudes, dtype=np.float64) if res.magnitudes is not None else None
    if mag is not None:
        mag = np.where(breaks >= 0, mag, np.nan)
        v = np.nanmax(np.abs(mag)) if np.isfinite(mag).any() else 1.0
        im2 = draw(ax2, mag, cmap="RdBu", vmin=-v, vmax=v)
        fig.colorbar(im2, ax=ax2, label="magnitude (median residual)", shrink=0.85)
        ax2.set_title("magnitude at break pixels")
    fig.suptitle(title or f"BFAST-Monitor: {int(np.sum(breaks >= 0))} of {breaks.size} "
                 "pixels with a break")
    fig.tight_layout()
    return fig


def plot_mp(res, *, max_motifs=1, n_discords=1, fig=None, title=None):
    """The series (motif occurrences and discords marked) above its matrix profile."""
    from .mp.motifs import discords, motifs
    if res.series is None:
        raise ValueError("plot() shows self-join results (the series is kept with them)")
    T = res.series
    P = np.asarray(res.P)[:, 0]
    m = res.m
    from .timeaxis import plottable
    x = plottable(res.times) if res.times is not None else np.arange(len(P))
    xt = np.arange(len(T))
    fig, (ax1, ax2) = _figure(fig, 2, 5.5, sharex=res.times is None)
    if res.times is not None:
        full = plottable(res.times)
        # the last m - 1 values of T start no window: their times continue the last step
        step = full[1] - full[0] if len(full) > 1 else 1
        xt = np.concatenate([full, full[-1] + step * np.arange(1, len(T) - len(full) + 1)])
    ax1.plot(xt, T, color="0.4", lw=0.8)
    # the closest pairs (search="pair"): each marked motif is a pair of windows and its profile
    # value, whatever stumpy's cutoff would say of it
    found = motifs(T, res, max_motifs, search="pair", max_matches=2) if max_motifs else []
    for j, mo in enumerate(found):
        col = f"C{j}"
        for i in mo["indices"][:2]:
            ax1.plot(xt[i:i + m], T[i:i + m], color=col, lw=2,
                     label=f"motif {j + 1}" if i == mo["indices"][0] else None)
            ax2.plot(x[i], P[i], "o", color=col, ms=6)
    if n_discords:
        idx, _ = discords(res, n_discords)
        for j, i in enumerate(idx):
            ax1.plot(xt[i:i + m], T[i:i + m], color="C3", lw=2, ls="-",
                     label="discord" if j == 0 else None, alpha=0.9)
            ax2.plot(x[i], P[i], "v", color="C3", ms=7)
    ax1.set_ylabel(res.name or "series")
    if ax1.get_legend_handles_labels()[0]:          # nothing marked (a constant series): none
        ax1.legend(loc="upper left", fontsize=8)
    ax2.plot(x, np.where(np.isfinite(P), P, np.nan), color="C0", lw=0.9)
    ax2.set_ylabel(f"matrix profile (m={m})")
    ax2.set_xlabel("window start")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(title or f"matrix profile of {res.name or 'the series'} (m={m}): top motifs "
                 "and discords")
    fig.tight_layout()
    return fig


# MSTL and trend-test results
def plot_mstl(res, series=0, *, fig=None, title=None):
    """Panels data / one per seasonal component / trend / residual of one series."""
    lab = res.labels
    series, which = series_position(lab, series)
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
                 + (f", {which}" if np.ndim(res.trend) > 1 else "") + ")")
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
        grid = _grid_coords(getattr(res, field))      # a labelled map: on its coordinates
        if grid is not None:
            im = _draw_map(ax, v, grid, cmap="BrBG", vmin=-lim, vmax=lim)
            xs, ys, swap = grid[0], grid[1], grid[4]
            sig = sig.T if swap else sig
        else:               # an array: rows down, as stored
            im = ax.imshow(v, cmap="BrBG", vmin=-lim, vmax=lim, origin="upper",
                           interpolation="nearest")
            xs, ys = np.arange(v.shape[1]), np.arange(v.shape[0])
            ax.set_xlabel("column")
            ax.set_ylabel("row")
        fig.colorbar(im, ax=ax, label=field)
        if min(sig.shape) >= 2:
            ax.contourf(xs, ys, sig.astype(float), levels=[0.5, 1.5], hatches=["///"],
                        colors="none")
        else:               # a grid one cell wide (contourf needs 2 x 2): the cells crossed
            r, c = np.nonzero(sig)
            ax.scatter(xs[c], ys[r], marker="x", color="k")
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


def plot_bfast_decompose(res, pixel=0, *, fig=None, title=None):
    """R's ``plot(bfast)`` for a :func:`clts.bfast_decompose` result: panels data, seasonal,
    trend and remainder of one pixel (a flat position or an index tuple into the pixel axes),
    dashed lines at the season's breaks (seasonal panel) and the trend's (trend panel), the
    largest trend change drawn as a segment."""
    def series(a):
        a = np.moveaxis(np.asarray(a, np.float64), res.time_axis, 0)
        return a[(slice(None),) + pos] if isinstance(pixel, tuple) else \
            a.reshape(a.shape[0], -1)[:, int(pixel)]

    def breaks(a):
        a = np.asarray(a)
        b = a[(slice(None),) + pos] if isinstance(pixel, tuple) else \
            a.reshape(a.shape[0], -1)[:, int(pixel)]
        return [int(v) for v in b if v >= 0]
    pos = pixel if isinstance(pixel, tuple) else (int(pixel),)
    tr, se, rem = series(res.trend), series(res.seasonal), series(res.remainder)
    n = tr.size
    if res.dates is not None:
        from .timeaxis import plottable
        x = plottable(res.dates)
    else:
        x = np.arange(n)
    fig, axes = _figure(fig, 4, 7.5)
    panels = (("Yt", tr + se + rem), ("St", se), ("Tt", tr), ("et", rem))
    for ax, (name, v) in zip(axes, panels):
        ok = np.isfinite(v)
        if name == "et":
            ax.plot(x[ok], v[ok], ".", ms=3, color="C3")
            ax.axhline(0, color="0.5", lw=0.8)
        else:
            ax.plot(x[ok], v[ok], lw=1.1, color={"Yt": "C0", "St": "C1", "Tt": "C2"}[name])
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    for ax, bps in ((axes[1], breaks(res.season_breaks)), (axes[2], breaks(res.trend_breaks))):
        for b in bps:
            ax.axvline(x[b], color="C3", ls="--", lw=1)
    mb = np.asarray(res.magnitude_break)
    mb = int(mb[pos] if isinstance(pixel, tuple) else mb.reshape(-1)[int(pixel)])
    if mb >= 0:
        nxt = mb + 1 + int(np.argmax(np.isfinite(tr[mb + 1:])))
        axes[2].plot([x[mb], x[nxt]], [tr[mb], tr[nxt]], color="C3", lw=2.5,
                     label="largest change")
        axes[2].legend(loc="best", fontsize=8)
    axes[-1].set_xlabel("time")
    name = f"pixel {pixel}" if np.ndim(res.status) else ""
    fig.suptitle(title or f"bfast decomposition (season {res.season}"
                 + (f", {name}" if name else "") + ")")
    fig.tight_layout()
    return fig
