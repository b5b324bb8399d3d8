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
