"""clts.stl_hastl: STL with the call signature of hastl (the GPU STL of Serykh et al.), for
users coming from it."""
from __future__ import annotations

from .api import stl
from ..vocabulary import renamed


@renamed()
def stl_hastl(data, n_p, q_s, q_t=None, q_l=None, d_s=1, d_t=1, d_l=1, jump_s=1, jump_t=1,
              jump_l=1, robust=False, inner_iter=None, outer_iter=None, device=None,
              interpolation="linear"):
    """STL with hastl's call signature, returning ``(seasonal, trend, resid)``.

    The call of ``hastl.STL(...).fit(data, n_p, q_s, q_t, q_l, d_s, d_t, d_l, jump_s, jump_t,
    jump_l)``, for users coming from hastl; unlike hastl it is correct when the jumps differ and
    takes float64 and NaN.

    Parameters
    ----------
    data : array_like, shape (batch, time) or (time,)
        The series, NaN = missing.
    n_p : int
        Period.
    q_s, q_t, q_l : int
        Seasonal, trend and low-pass windows (``q_t`` / ``q_l`` None: statsmodels' defaults).
    d_s, d_t, d_l : int
        Degrees.
    jump_s, jump_t, jump_l : int
        Jumps.
    robust, inner_iter, outer_iter, device, interpolation
        As in :func:`clts.stl` (``interpolation="hermite"`` interpolates between jumped fits as
        Serykh et al. do; default: statsmodels').

    Returns
    -------
    seasonal, trend, resid : numpy.ndarray
        Shaped like ``data`` (device arrays for a ``pyopencl.array.Array`` ``data``, as
        :func:`clts.stl`).

    Raises
    ------
    ValueError, TypeError
        As :func:`clts.stl`.

    References
    ----------
    .. [1] D. Serykh, S. Oehmcke, C. Oancea, D. Masiliunas, J. Verbesselt et al.,
       "Seasonal-Trend Time Series Decomposition on Graphics Processing Units", IEEE BigData
       2023.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(96)
    >>> Y = np.stack([np.sin(2 * np.pi * t / 12), np.cos(2 * np.pi * t / 12)]) + 0.01 * t
    >>> s, tr, e = clts.stl_hastl(Y, 12, 13, 21, 13, 1, 1, 1, 2, 3, 2)
    >>> s.shape, bool(np.allclose(s + tr + e, Y))
    ((2, 96), True)
    """
    r = stl(data, n_p, seasonal=q_s, trend=q_t, low_pass=q_l, seasonal_deg=d_s, trend_deg=d_t,
            low_pass_deg=d_l, seasonal_jump=jump_s, trend_jump=jump_t, low_pass_jump=jump_l,
            robust=robust, inner_iter=inner_iter, outer_iter=outer_iter, device=device,
            interpolation=interpolation)
    return r.seasonal, r.trend, r.resid
