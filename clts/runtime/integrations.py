"""Where the integrations plug into the algorithms without the algorithms importing them.

An algorithm reads the time axis of its input through :func:`time_axis_of` and puts it back on
its outputs through the object it returns (:class:`TimeAxis`: numpy in, numpy out). A result's
``plot()`` calls :func:`plot`. The package face (``clts/__init__``) installs the integrations:
``clts.labels`` (pandas / xarray inputs come back labelled) through :func:`install_labels`, and
``clts.plots`` (matplotlib) through :func:`install_plots`. Nothing here imports them.
"""
from __future__ import annotations

import numpy as np

_labels = None          # x, time_axis, default, name -> a TimeAxis for labelled inputs, or None
_plots: dict = {}       # result kind ("stl", "bfast", "mp") -> plotting function


class TimeAxis:
    """Where the time axis of an input is, and the input's layout for outputs (numpy)."""

    kind = "numpy"

    def __init__(self, x, time_axis, default: int, name: str = "y"):
        self.x = x
        time_axis = self._axis(x, time_axis, default, name)
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

    def _axis(self, x, time_axis, default, name):
        """The time axis asked for (an int), before the range check."""
        return default if time_axis is None else time_axis

    @property
    def labelled(self) -> bool:
        return self.kind != "numpy"

    def times(self):
        """The labels of the time axis (None for numpy input)."""
        return None

    def to_last(self, a) -> np.ndarray:
        """``a`` (the input's values, or an array of the input's shape) with time last."""
        a = a.to_numpy() if hasattr(a, "to_numpy") and not isinstance(a, np.ndarray) else a
        a = a.values if hasattr(a, "dims") else a
        return np.moveaxis(np.asarray(a), self.axis, -1)

    def series(self, a: np.ndarray):
        """An output with the time axis last (and the other axes of the input, in order) back in
        the input's layout."""
        return self._wrap_series(np.ascontiguousarray(np.moveaxis(a, -1, self.axis)))

    def _wrap_series(self, a: np.ndarray):
        return a

    def per_series(self, a: np.ndarray, name: str | None = None):
        """An output with the input's non-time axes (no time axis)."""
        return np.asarray(a)

    def with_lead(self, a: np.ndarray, lead: str, labels=None):
        """An output with a new leading axis (a coefficient, a monitoring date) and the input's
        non-time axes."""
        return np.asarray(a)


def time_axis_of(x, time_axis, default: int, name: str = "y") -> TimeAxis:
    """The :class:`TimeAxis` of input ``x``: a labelled one (pandas / xarray) when the labels
    integration is installed and ``x`` is labelled, else numpy's."""
    if _labels is not None:
        t = _labels(x, time_axis, default, name)
        if t is not None:
            return t
    return TimeAxis(x, time_axis, default, name)


def plot(kind: str, result, *args, **kwargs):
    """Draw ``result`` with the plotting function installed for ``kind``; a result of a
    device-array call is read back first (matplotlib draws numpy)."""
    fn = _plots.get(kind)
    if fn is None:
        raise ImportError(f"no plotting installed for {kind} results (import clts)")
    from .arrays import is_device_array
    if any(is_device_array(v) for v in vars(result).values()):
        result = result.to_numpy()
    return fn(result, *args, **kwargs)


def install_labels(factory) -> None:
    """``factory(x, time_axis, default, name)``: a TimeAxis for labelled ``x``, else None."""
    global _labels
    _labels = factory


def install_plots(**functions) -> None:
    """Plotting functions per result kind: ``install_plots(stl=f, bfast=g, mp=h)``."""
    _plots.update(functions)
