"""The result of ``clts.bfast_decompose`` (R's ``bfast()`` list, per pixel) and of each of its
iterations (R's ``output``), made from the driver's flat arrays (``decompose.iterate``)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..runtime.integrations import plot
from .breaks_api import _break_dates

#: per-pixel status codes of :func:`bfast_decompose`
DECOMPOSE_STATUS = {0: "ok", 1: "too_few_values", 2: "exact_fit", 3: "non_finite",
                    4: "rank_deficient"}

@dataclass
class DecomposeResult:
    """Result of :func:`clts.bfast_decompose`, per pixel (the cube's shape without its time
    axis; ``[N, ...]`` components in the input's layout; ``[breaks, ...]`` arrays one row per
    possible break, -1 / NaN / NaT padded).

    Attributes
    ----------
    trend, seasonal, remainder : numpy.ndarray
        R's final ``Tt``, ``St`` and ``Nt = Yt - Tt - St`` (NaN at missing dates; ``seasonal``
        is 0 with ``season="none"``).
    trend_breaks, season_breaks : numpy.ndarray of int32, ``[breaks, ...]``
        R's ``Vt.bp`` / ``Wt.bp``: date index of the last value before each break.
    trend_break_dates, season_break_dates : numpy.ndarray, ``[breaks, ...]``
        Their dates.
    n_trend_breaks, n_season_breaks : numpy.ndarray of int32
        Number of breaks (0: R's ``nobp``); -1 for a pixel not analysed.
    magnitude : numpy.ndarray
        R's ``Magnitude``: the largest (in absolute value) trend change at a break; 0 without
        a trend break.
    magnitude_break, magnitude_date : numpy.ndarray
        R's ``Time``: the date index (int32, -1 without a break) and date of that break.
    magnitudes : numpy.ndarray, ``[breaks, ...]``
        R's ``Mags[, 3]``: the change at each break (NaN where R gives NA).
    iterations : numpy.ndarray of int32
        Iterations run (R's ``length(output)``).
    trend_pvalue, season_pvalue : numpy.ndarray
        The p-values of the ``type`` tests of the last iteration (NaN: not tested).
    trend_ci_lower, trend_ci_upper, season_ci_lower, season_ci_upper : numpy.ndarray or None
        With ``confint=``: R's ``ci.Vt`` / ``ci.Wt`` (strucchange's ``confint`` with
        ``het.err = FALSE``), the date indices of each break's interval ends, ``[breaks, ...]``,
        -1 where R gives NA or there is no break.
    output : list of DecomposeIteration or None
        With ``keep_iterations=True``: R's ``output``, one entry per iteration (the longest
        pixel's count; a pixel that stopped before an entry has ``ran`` False there).
    status : numpy.ndarray of int32
        ``DECOMPOSE_STATUS``: 0 ok; 1 too few valid values (fewer than two seasons, or a
        minimal segment floor(n h) not above the model's regressors); 2 a component fitted
        exactly (e.g. a constant pixel): its test not run, no break there, the components
        valid; 3 +-inf in the series; 4 the valid dates leave the seasonal model
        rank-deficient (a season never observed). 1, 3, 4: NaN components, no breaks.
    """
    trend: np.ndarray
    seasonal: np.ndarray
    remainder: np.ndarray
    trend_breaks: np.ndarray
    trend_break_dates: np.ndarray
    n_trend_breaks: np.ndarray
    season_breaks: np.ndarray
    season_break_dates: np.ndarray
    n_season_breaks: np.ndarray
    magnitude: np.ndarray
    magnitude_break: np.ndarray
    magnitude_date: np.ndarray
    magnitudes: np.ndarray
    iterations: np.ndarray
    trend_pvalue: np.ndarray
    season_pvalue: np.ndarray
    status: np.ndarray
    season: str = "dummy"
    diagnostics: dict = field(default_factory=dict)
    dates: np.ndarray | None = None
    time_axis: int = 0
    trend_ci_lower: np.ndarray | None = None
    trend_ci_upper: np.ndarray | None = None
    season_ci_lower: np.ndarray | None = None
    season_ci_upper: np.ndarray | None = None
    output: list | None = None

    def plot(self, pixel=0, *, fig=None, title=None):
        """As R's ``plot(bfast)``: the data, seasonal, trend and remainder of one pixel (an
        int: its flat position, or an index tuple into the pixel axes), dashed lines at the
        season's and the trend's breaks, the largest trend change marked. Needs matplotlib;
        returns the Figure."""
        return plot("bfast_decompose", self, pixel, fig=fig, title=title)


@dataclass
class DecomposeIteration:
    """One iteration of :func:`clts.bfast_decompose` (R's ``bfast(...)$output[[i]]``), shaped as
    :class:`DecomposeResult`'s fields of the same names.

    Attributes
    ----------
    trend, seasonal, remainder : numpy.ndarray
        R's ``Tt``, ``St`` and ``Nt`` of the iteration (NaN for a pixel that did not run it).
    trend_breaks, season_breaks : numpy.ndarray of int32, ``[breaks, ...]``
        R's ``Vt.bp`` / ``Wt.bp`` of the iteration (date indices, -1 padded).
    n_trend_breaks, n_season_breaks : numpy.ndarray of int32
        Their counts (-1: the pixel did not run the iteration).
    trend_ci_lower, trend_ci_upper, season_ci_lower, season_ci_upper : numpy.ndarray or None
        With ``confint=``: R's ``ci.Vt`` / ``ci.Wt`` of the iteration.
    ran : numpy.ndarray of bool
        Whether the pixel ran this iteration (R's ``length(output)`` reaches it).
    """
    trend: np.ndarray
    seasonal: np.ndarray
    remainder: np.ndarray
    trend_breaks: np.ndarray
    season_breaks: np.ndarray
    n_trend_breaks: np.ndarray
    n_season_breaks: np.ndarray
    ran: np.ndarray
    trend_ci_lower: np.ndarray | None = None
    trend_ci_upper: np.ndarray | None = None
    season_ci_lower: np.ndarray | None = None
    season_ci_upper: np.ndarray | None = None


def make_result(o, labels, dates, pix_shape, season, dev, history=None):
    def per(a, name):
        return labels.per_series(np.asarray(a).reshape(pix_shape), name)

    def lead(a, name):
        a = np.asarray(a)
        return labels.with_lead(a.reshape(a.shape[:1] + pix_shape), name,
                                np.arange(a.shape[0]))

    def series(a):
        a = np.asarray(a).reshape((a.shape[0],) + pix_shape)
        return labels.series(np.moveaxis(a, 0, -1))

    status = o["status"]
    mdate = _break_dates(dates, o["mtime"][None, :])[0]
    res = DecomposeResult(
        trend=series(o["trend"]), seasonal=series(o["seasonal"]),
        remainder=series(o["remainder"]),
        trend_breaks=lead(o["bpT"], "break"),
        trend_break_dates=lead(_break_dates(dates, o["bpT"]), "break"),
        n_trend_breaks=per(o["nT"], "n_trend_breaks"),
        season_breaks=lead(o["bpS"], "break"),
        season_break_dates=lead(_break_dates(dates, o["bpS"]), "break"),
        n_season_breaks=per(o["nS"], "n_season_breaks"),
        magnitude=per(o["magnitude"], "magnitude"),
        magnitude_break=per(o["mtime"], "magnitude_break"),
        magnitude_date=per(mdate, "magnitude_date"),
        magnitudes=lead(o["mags"], "break"), iterations=per(o["iterations"], "iterations"),
        trend_pvalue=per(o["pT"], "trend_pvalue"), season_pvalue=per(o["pS"], "season_pvalue"),
        status=per(status, "status"), season=season,
        dates=None if dates is None else np.asarray(dates), time_axis=labels.axis)
    if "ciT" in o:
        res.trend_ci_lower, res.trend_ci_upper = (lead(o["ciT"][i], "break") for i in (0, 1))
        res.season_ci_lower, res.season_ci_upper = (lead(o["ciS"][i], "break") for i in (0, 1))
    if history is not None:
        res.output = [iteration(e, o, per, lead, series) for e in history]
    counts = {name: int(np.sum(status == code)) for code, name in DECOMPOSE_STATUS.items()}
    res.diagnostics = dict(status_counts=counts, failed=int(np.sum((status != 0) & (status != 2))),
                           breaks=(o["BT"], o["BS"]), device=str(dev.slug),
                           max_iterations=int(o["iterations"].max(initial=0)))
    return res


def iteration(e, o, per, lead, series):
    """One entry of ``history`` (active pixels ``e["A"]``) as a :class:`DecomposeIteration` over
    every pixel: NaN / -1 where a pixel did not run it."""
    N, M = o["trend"].shape
    A = e["A"]

    def full(v, fill, dtype, rows=None):
        a = np.full(((rows,) if rows is not None else ()) + (M,), fill, dtype)
        a[..., A] = v
        return a
    T = full(e["T"], np.nan, np.float64, N)
    S = full(e["S"], np.nan, np.float64, N)
    ran = np.zeros(M, bool)
    ran[A] = True
    it = DecomposeIteration(
        trend=series(T), seasonal=series(S), remainder=series(full(e["Y"], np.nan,
                                                                   np.float64, N) - T - S),
        trend_breaks=lead(full(e["bpT"], -1, np.int32, o["BT"]), "break"),
        season_breaks=lead(full(e["bpS"], -1, np.int32, o["BS"]), "break"),
        n_trend_breaks=per(full(e["nT"], -1, np.int32), "n_trend_breaks"),
        n_season_breaks=per(full(e["nS"], -1, np.int32), "n_season_breaks"),
        ran=per(ran, "ran"))
    if "ciT" in e:
        ci = {k: np.full((2, o[b].shape[0], M), -1, np.int32) for k, b in
              (("ciT", "bpT"), ("ciS", "bpS"))}
        for k in ci:
            ci[k][..., A] = e[k]
        it.trend_ci_lower, it.trend_ci_upper = (lead(ci["ciT"][i], "break") for i in (0, 1))
        it.season_ci_lower, it.season_ci_upper = (lead(ci["ciS"][i], "break") for i in (0, 1))
    return it
