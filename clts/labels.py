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

The package face installs it (``clts.runtime.integrations.install_labels``): the algorithms
read their inputs through ``integrations.time_axis_of`` and never import this module.
"""
from __future__ import annotations

import numpy as np

from .runtime.integrations import TimeAxis


def _kind(x) -> str:
    mod = type(x).__module__.split(".")[0]
    if mod == "pandas" and hasattr(x, "index"):
        return "frame" if getattr(x, "ndim", 1) == 2 else "series"
    if mod == "xarray" and hasattr(x, "dims"):
        return "dataarray"
    return "numpy"


class Labels(TimeAxis):
    """Where the time axis of an input is and what labels to put back on outputs."""

    def __init__(self, x, time_axis, default: int, name: str = "y"):
        self.kind = _kind(x)
        super().__init__(x, time_axis, default, name)

    def _axis(self, x, time_axis, default, name):
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
        return time_axis

    def times(self):
        """The labels of the time axis (None for numpy input)."""
        if self.kind in ("frame", "series"):
            return self.x.index if self.axis == 0 else self.x.columns
        if self.kind == "dataarray":
            dim = self.x.dims[self.axis]
            return self.x[dim].values if dim in self.x.coords else None
        return None

    def _wrap_series(self, a: np.ndarray):
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


def labelled(x, time_axis, default: int, name: str = "y"):
    """A :class:`Labels` for a pandas / xarray ``x``, None for anything else (numpy's
    ``TimeAxis`` then)."""
    return Labels(x, time_axis, default, name) if _kind(x) != "numpy" else None
