"""The result of :func:`clts.stl`: :class:`STLResult` and the trend slope of its series."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..runtime import integrations
from ..runtime.arrays import is_device_array
from ..runtime.integrations import TimeAxis
from ..runtime.resident import result_to_numpy


@dataclass
class STLResult:
    """Result of :func:`clts.stl`.

    Attributes
    ----------
    seasonal, trend, resid : numpy.ndarray, or labelled like the input
        The decomposition, shaped like the input ([batch, time], [time], or any layout with
        ``time_axis``); pandas / xarray inputs give DataFrames / Series / DataArrays with the
        input's labels. ``resid`` is NaN where the input is.
    weights : numpy.ndarray
        Robustness weights (1 without ``robust``; 0 at missing values and in failed series).
    observed : numpy.ndarray, or labelled like the input
        The input series (statsmodels' ``observed``): ``observed = seasonal + trend + resid``.
    diagnostics : dict
        ``n_failed``: series that came back NaN (a whole cycle-subseries missing, or fewer than
        2 x period valid values); ``failed``: their boolean mask; ``params``: the resolved
        parameters; the LOESS versions used.

    A component that ``outputs=`` left out is None.

    ``trend_slope()`` gives each series' trend slope per time step; ``plot(series)`` draws the
    decomposition panels of one series (matplotlib).

    For a device array ``y`` (``pyopencl.array.Array``) the components, ``observed`` (``y``
    itself) and ``diagnostics["failed"]`` (bytes, 1 = failed) are device arrays, still being
    computed when the call returns; ``diagnostics["n_failed"]`` is read from the device on
    first access, and ``to_numpy()`` (or ``clts.to_numpy(result)``) gives the result with
    numpy arrays (docs/device-arrays.md).

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(48.0)
    >>> r = clts.stl(np.cos(2 * np.pi * t / 4) + t, period=4)
    >>> round(float(r.trend_slope()), 3)
    1.0
    """
    seasonal: np.ndarray
    trend: np.ndarray
    resid: np.ndarray
    weights: np.ndarray
    diagnostics: dict = field(default_factory=dict)
    #: where the input's time axis was and its labels (pandas / xarray inputs come back labelled)
    labels: TimeAxis | None = field(default=None, repr=False)
    #: the input, labelled like the components (statsmodels' ``DecomposeResult.observed``)
    observed: np.ndarray | None = field(default=None, repr=False)

    def _time_last(self, a) -> np.ndarray:
        if is_device_array(a):
            return a.get()
        return self.labels.to_last(a) if self.labels is not None else np.asarray(a)

    def to_numpy(self):
        """The result with numpy arrays in place of device arrays (waits for the device; a
        result of numpy data comes back as a shallow copy)."""
        return result_to_numpy(self)

    def trend_slope(self):
        """Least-squares slope (per time step) of the trend component of each series (a Series
        indexed by a DataFrame's columns, a DataArray without the time dimension)."""
        trend = self._time_last(self.trend)
        slope = slope_per_step(trend)
        return self.labels.per_series(slope, "trend_slope") if self.labels else slope

    def plot(self, series=0, *, fig=None, title=None):
        """The decomposition panels (data, seasonal, trend, residual) of one series (its index
        into the batch, in the input's non-time axes order); needs matplotlib."""
        return integrations.plot("stl", self, series, fig=fig, title=title)


def slope_per_step(trend: np.ndarray) -> np.ndarray:
    """Least-squares slope against 0, 1, 2, ... along the last axis (NaN series give NaN)."""
    t = np.asarray(trend, dtype=np.float64)
    x = np.arange(t.shape[-1], dtype=np.float64)
    xc = x - x.mean()
    return (t - t.mean(axis=-1, keepdims=True)) @ xc / (xc @ xc)

