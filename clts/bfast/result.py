"""The result of ``clts.bfast_monitor`` (``BfastResult``): per-pixel numpy or device arrays,
lazily read fields of device results, plots."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..runtime import integrations
from ..runtime.arrays import is_device_array
from .device import LazyFields
from .plan import Plan


@dataclass
class BfastResult(LazyFields):
    """Result of :func:`clts.bfast_monitor`: per-pixel arrays shaped like the cube without its
    time axis.

    Attributes
    ----------
    breaks : numpy.ndarray of int32
        Index of the first break among the monitoring dates (every date counts, from 0); -1 no
        break; -2 not tested (``status`` says why).
    break_dates : numpy.ndarray
        The date of the break (NaT / NaN / None for cftime dates when none), of the kind of
        ``dates``.
    magnitudes : numpy.ndarray or None
        Median of the valid monitoring residuals (None with ``magnitudes=False``).
    means : numpy.ndarray
        Mean of the MOSUM process (of the ``type``'s process; RE / ME: of its largest
        |component|) over the valid monitoring values.
    valids : numpy.ndarray of int32
        Number of valid values.
    history_start : numpy.ndarray or None
        Index of the first history date used (``history="ROC"``).
    status : numpy.ndarray of int32
        0 tested, 1 too few valid values, 2 singular history fit, 3 zero variance (the history
        is fitted exactly, to rounding: the MOSUM is 0 / 0), 4 non-finite (+-inf in the series,
        or values too large for the fit); ``clts.bfast.common.STATUS`` names the codes.
    mosum, bounds : numpy.ndarray or None
        ``[N - n, ...]`` MOSUM (the ``type``'s process) and boundary (NaN at missing dates),
        with ``detailed=True``.
    prediction : numpy.ndarray or None
        ``[N, ...]`` fitted model, with ``detailed=True``.
    coef : numpy.ndarray or None
        ``[K, ...]`` coefficients (basis 1, t, sin_1, cos_1, ..., in the units of the time
        axis), with ``detailed=True``.
    sigma : numpy.ndarray or None
        Residual standard deviation of the history fit, with ``detailed=True``.
    plan : clts.bfast.Plan
        The code version and parameters that ran.
    diagnostics : dict
        Counts per status and run information.

    Examples
    --------
    >>> import numpy as np, clts
    >>> y = np.tile(np.r_[np.zeros(40), np.full(20, 5.0)], (3, 1)).T
    >>> y = y + np.random.default_rng(0).normal(0, 0.1, y.shape)
    >>> res = clts.bfast_monitor(y, np.arange(60.0) / 12, 2.5, freq=1, k=1)
    >>> res.breaks.shape, res.status.tolist()
    ((3,), [0, 0, 0])
    """
    breaks: np.ndarray
    break_dates: np.ndarray
    magnitudes: np.ndarray | None
    means: np.ndarray
    valids: np.ndarray
    history_start: np.ndarray | None = None
    status: np.ndarray | None = None
    mosum: np.ndarray | None = None
    bounds: np.ndarray | None = None
    prediction: np.ndarray | None = None
    coef: np.ndarray | None = None
    sigma: np.ndarray | None = None
    plan: Plan | None = None
    diagnostics: dict = field(default_factory=dict)
    #: the monitoring dates (``breaks`` indexes them) and the history's length, for plots
    monitor_dates: np.ndarray | None = field(default=None, repr=False)
    #: with ``detailed=True``: every date and the input values ``[N, ...]`` (a view, time
    #: first; ``nodata`` not replaced), for ``plot(pixel)``
    dates: np.ndarray | None = field(default=None, repr=False)
    observed: np.ndarray | None = field(default=None, repr=False)

    def plot(self, pixel=None, *, fig=None, title=None):
        """Without ``pixel``: the break-date and magnitude maps (2-D cubes; a DataArray's x / y
        or lon / lat coordinates on the axes). With ``pixel`` (an index tuple into the pixel
        axes, a DataFrame column label, or a dict of DataArray coordinate labels; needs
        ``detailed=True``): as R's ``plot(bfastmonitor)``, the data with the history model and
        its prediction, the start of monitoring and the break, above the MOSUM process and its
        boundary. Needs matplotlib."""
        res = self.to_numpy() if is_device_array(self.breaks) else self
        return integrations.plot("bfast", res, pixel, fig=fig, title=title)
