"""Labelled inputs to the numpy functions: pandas Series / DataFrame and xarray DataArray in,
the same labels out.

A pandas object's index is time (a DataFrame holds one series per column, time down the rows,
as pandas users keep them); an xarray DataArray's time axis is its ``time`` dimension when it
has one. ``time_axis=`` (an int, or a dimension name for a DataArray) overrides either. Plain
numpy arrays keep each function's own default (STL: the last axis, BFAST: the first).

:class:`Labels` remembers where the time axis was and what labelled it, hands the algorithm a
numpy array with time on the last axis, and puts the labels back on what comes out: arrays with
a time axis come back shaped and labelled like the input, per-series values (a break date, a
slope) as a Series indexed by the DataFrame's columns or a DataArray without the time dimension.
"""
from __future__ import annotations

import numpy as np


def _kind(x) -> str:
    mod = type(x).__module__.split(".")[0]
    if mod == "pandas" and hasattr(x, "index"):
        return "frame" if getattr(x, "ndim", 1) == 2 else "series"
    if mod == "xarray" and hasattr(x, "dims"):
        return "dataarray"
    return "numpy"


def freq_to_period(freq) -> int:
    """Values per seasonal cycle of a pandas frequency, by statsmodels' rules
    (``statsmodels.tsa.tsatools.freq_to_period``): yearly 1, quarterly 4, monthly 12, weekly
    52, daily 7, business-daily 5, hourly 24; another frequency is a ValueError."""
    from pandas.tseries.frequencies import to_offset
    code = to_offset(freq).rule_code.upper()
    if code in ("A", "Y") or code.startswith(("A-", "AS-", "Y-", "YS-", "YE-")):
        return 1
    if code == "Q" or code.startswith(("Q-", "QS", "QE")):
        return 4
    if code == "M" or code.startswith(("M-", "MS", "ME")):
        return 12
    if code == "W" or code.startswith("W-"):
        return 52
    periods = {"D": 7, "B": 5, "H": 24}
    if code in periods:
        return periods[code]
    raise ValueError(f"period is None and the time index's frequency {freq!r} has no "
                     "seasonal period by statsmodels' rules (yearly, quarterly, monthly, weekly, "
                     "daily, business-daily, hourly): give period=")


def period_of(times) -> int:
    """The seasonal period implied by regularly spaced datetime ``times`` (a pandas index or a
    datetime64 array: pandas' ``inferred_freq``, then :func:`freq_to_period`)."""
    import pandas as pd
    if times is None:
        raise ValueError("period is None: give period=, or y as a pandas / xarray object with "
                         "a datetime time index")
    idx = times if isinstance(times, pd.DatetimeIndex) else None
    if idx is None:
        try:
            idx = pd.DatetimeIndex(np.asarray(times))
        except (TypeError, ValueError):
            idx = None
        if idx is None or np.asarray(times).dtype.kind != "M":
            raise ValueError("period is None and the time axis is not datetime: give period=")
    import warnings
    with warnings.catch_warnings():    # pandas 3: inferred_freq will become an offset; either
        warnings.simplefilter("ignore")  # is what to_offset takes
        freq = idx.freq or (idx.inferred_freq if len(idx) >= 3 else None)
    if freq is None:
        raise ValueError("period is None and the time index has no regular frequency "
                         "(pandas inferred_freq is None): give period=")
    return freq_to_period(freq)


class Labels:
    """Where the time axis of an input is and what labels to put back on outputs."""

    def __init__(self, x, time_axis, default: int, name: str = "y"):
        self.kind = _kind(x)
        self.x = x
        if self.kind == "dataarray":
            dims = list(x.dims)
            if time_axis is None:
                time_axis = dims.index("time") if "time" in dims else default
            elif isinstance(time_axis, str):
                if time_axis not in dims:
                    raise ValueError(f"time_axis {time_axis!r} is not a dimension of {name} "
                                     f"(dimensions {tuple(dims)})")
                time_axis = dims.index(time_axis)
        elif self.kind in ("frame", "series"):
            if time_axis is None:
                time_axis = 0
        elif time_axis is None:
            time_axis = default
        if isinstance(time_axis, bool) or not isinstance(time_axis, (int, np.integer)):
            raise TypeError(f"time_axis must be an int (or a dimension name of a DataArray), "
                            f"got {time_axis!r}")
        ndim = np.ndim(x) if self.kind != "numpy" else np.asarray(x).ndim
        if ndim == 0:
            raise ValueError(f"{name} must have a time axis, got a scalar")
        if not -ndim <= time_axis < ndim:
            raise ValueError(f"time_axis {time_axis} out of range for {name} with {ndim} "
                             "dimension(s)")
        self.axis = int(time_axis) % ndim
        self.ndim = ndim

    @property
    def labelled(self) -> bool:
        return self.kind != "numpy"

    def times(self):
        """The labels of the time axis (None for numpy input)."""
        if self.kind in ("frame", "series"):
            return self.x.index if self.axis == 0 else self.x.columns
        if self.kind == "dataarray":
            dim = self.x.dims[self.axis]
            return self.x[dim].values if dim in self.x.coords else None
        return None

    def to_last(self, a) -> np.ndarray:
        """``a`` (the input's values, or an array of the input's shape) with time last."""
        a = a.to_numpy() if hasattr(a, "to_numpy") and not isinstance(a, np.ndarray) else a
        a = a.values if hasattr(a, "dims") else a
        return np.moveaxis(np.asarray(a), self.axis, -1)

    def series(self, a: np.ndarray):
        """An output with the time axis last (and the other axes of the input, in order) back in
        the input's layout, with its labels."""
        a = np.ascontiguousarray(np.moveaxis(a, -1, self.axis))
        if self.kind == "numpy":
            return a
        if self.kind in ("series", "frame"):
            import pandas as pd
            if self.kind == "series":
                return pd.Series(a, index=self.x.index, name=self.x.name)
            return pd.DataFrame(a, index=self.x.index, columns=self.x.columns)
        return self.x.copy(data=a)

    def _others(self):
        """The labels of the non-time axes: a DataFrame's other axis, or the DataArray with
        its time dimension dropped (a template for dims and coordinates)."""
        if self.kind == "frame":
            return self.x.columns if self.axis == 0 else self.x.index
        return self.x.isel({self.x.dims[self.axis]: 0}, drop=True)

    def per_series(self, a: np.ndarray, name: str | None = None):
        """An output with the input's non-time axes (no time axis), labelled."""
        a = np.asarray(a)
        if self.kind in ("numpy", "series"):
            return a
        if self.kind == "frame":
            import pandas as pd
            return pd.Series(a, index=self._others(), name=name)
        import xarray as xr
        tmpl = self._others()
        return xr.DataArray(a, dims=tmpl.dims, coords=tmpl.coords, name=name)

    def with_lead(self, a: np.ndarray, lead: str, labels=None):
        """An output with a new leading axis (a coefficient, a monitoring date) and the input's
        non-time axes: numpy as is, a DataFrame (rows: the lead axis) for a DataFrame input, a
        DataArray with dimension ``lead`` for a DataArray."""
        a = np.asarray(a)
        if self.kind in ("numpy", "series"):
            return a
        if self.kind == "frame":
            import pandas as pd
            return pd.DataFrame(a, index=labels, columns=self._others())
        import xarray as xr
        tmpl = self._others()
        coords = dict(tmpl.coords)
        if labels is not None:
            coords[lead] = np.asarray(labels)
        return xr.DataArray(a, dims=(lead,) + tmpl.dims, coords=coords)
