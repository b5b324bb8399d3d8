"""The model terms of ``clts.bfast_breaks`` / ``clts.bfast01``: R's formula terms (``1``,
``trend``, ``harmon`` and covariates) to the columns of the design matrix.

R users write ``response ~ trend + harmon + covariate`` on the data frame ``bfast::bfastpp``
builds (``xreg`` covariates among its columns). Here the same model is ``formula=`` (that text,
or only its right-hand side) with ``regressors=`` holding the covariates: one value per date
shared by all pixels, an array ``[dates]`` / ``[dates, q]`` (names ``x1 .. xq``) or a dict
name -> ``[dates]``; or one value per pixel and date, an array shaped like ``y`` plus a last
axis of q, or a dict name -> an array shaped like ``y``. A NaN regressor value makes that
value of ``y`` missing (R's ``na.omit`` of the data frame). Without ``formula=`` the model is
``trend`` (if ``trend=True``) + ``harmon`` (if ``order > 0``) + every regressor.
``response ~ 1`` is the intercept-only model.

Columns, always in this order whatever the formula's: intercept, trend, sin_1, cos_1, ..,
sin_order, cos_order, the regressors (in the formula's order). The trend and the regressors
are centred and scaled on the host (the same column space with the intercept, so the same fits
and RSS) so that every column is of order 1: the rank test and the float32 RSS see a
well-conditioned design; :meth:`Terms.unscale` gives the coefficients of the columns as given.
Per-pixel regressors given as device arrays with a device cube are centred and scaled the same
way on the device (``clts.bfast.pixel_device``; :attr:`Terms.device` their sources).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .common import design_matrix, design_names

_NAME = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*$")
_RESERVED = ("trend", "harmon", "intercept", "response")
#: covariates a model may take (the kernels unroll over the K x K design)
MAX_REGRESSORS = 16


@dataclass
class Terms:
    """The model of one call: ``order`` / ``trend`` of the season + trend part and the
    regressors with their ``names``: ``R`` [N, q] shared by the pixels, or ``RP`` [N, M, q]
    per pixel (float64, as given, NaN as 0); ``missing`` ([N] or [N, M] bool, None: none)
    the values of ``y`` a NaN regressor makes missing."""
    order: int
    trend: bool
    names: list = field(default_factory=list)
    R: np.ndarray | None = None
    center: np.ndarray | None = None     # of the regressors, [q] or [M, q] (trend: trend_scaling)
    scale: np.ndarray | None = None
    RP: np.ndarray | None = None
    missing: np.ndarray | None = None
    #: per-pixel regressors of a device cube: their sources (``clts.bfast.pixel_device``)
    device: list | None = None

    @property
    def q(self) -> int:
        return len(self.names)

    @property
    def per_pixel(self) -> bool:
        return self.RP is not None or self.device is not None

    def columns(self) -> list:
        """Names of the design's columns, in order."""
        return design_names(self.order, self.trend) + list(self.names)

    def design(self, t, freq, center, scale):
        """[N, K] design: ``common.design_matrix`` and the scaled shared regressors (per-pixel
        regressors: the shared columns only, :meth:`pixel_columns` the others)."""
        X = design_matrix(t, self.order, freq, self.trend, center, scale)
        if not self.q or self.per_pixel:
            return X
        return np.column_stack([X, (self.R - self.center) / self.scale])

    def pixel_columns(self, cols=slice(None)):
        """[N, q, P] the scaled per-pixel regressors of pixels ``cols`` (None: shared ones)."""
        if not self.per_pixel:
            return None
        z = (self.RP[:, cols] - self.center[cols]) / self.scale[cols]
        return np.ascontiguousarray(np.moveaxis(z, 2, 1))

    def apply_missing(self, flat, dtype):
        """``flat`` [N, M] with the values a NaN regressor makes missing set NaN (a copy in
        ``dtype`` where there are any; ``flat`` itself otherwise)."""
        if self.missing is None:
            return flat
        out = np.array(flat, dtype=dtype, copy=True)
        out[np.broadcast_to(self.missing if self.missing.ndim == 2 else self.missing[:, None],
                            out.shape)] = np.nan
        return out

    def unscale(self, beta, center, scale):
        """Coefficients ``beta`` [..., K] of :meth:`design`'s columns to those of 1, t,
        sin / cos and the regressors as given (the trend's ``center`` / ``scale``)."""
        b = np.array(beta, dtype=np.float64, copy=True)
        if self.trend:
            b[..., 1] = beta[..., 1] / scale
            b[..., 0] -= beta[..., 1] * center / scale
        k0 = b.shape[-1] - self.q       # per pixel: beta [..., M, K], center / scale [M, q]
        for j in range(self.q):
            c, s = self.center[..., j], self.scale[..., j]
            b[..., k0 + j] = beta[..., k0 + j] / s
            b[..., 0] -= beta[..., k0 + j] * c / s
        return b


def _per_pixel(a, cube):
    """``a`` shaped like the cube ``y`` (+ a last axis) as [N, M, ...]; None if it is not."""
    if cube is None:
        return None
    shape, axis = cube
    if len(shape) < 2 or a.shape[:len(shape)] != tuple(shape) or a.ndim > len(shape) + 1:
        return None
    a = np.moveaxis(a, axis, 0)
    return a.reshape((a.shape[0], -1) + a.shape[len(shape):])


def _regressor_table(regressors, N, cube=None):
    """(names, [N, q] or [N, M, q] float64, per pixel?) of ``regressors`` (None: no columns).
    ``cube``: (shape, time axis) of ``y`` (None: shared regressors only)."""
    if regressors is None:
        return [], None, False
    vals = regressors.values() if isinstance(regressors, dict) else [regressors]
    if any(type(v).__module__.startswith("pyopencl") for v in vals):
        raise TypeError("regressors given as device arrays take a device cube y "
                        "(bfast_breaks / bfast_monitor on a pyopencl array); with a host cube "
                        "give numpy arrays")
    shape_hint = ("[dates] or [dates, q] (shared by all pixels), or y's shape + (q,) per pixel"
                  if cube is not None else "[dates] or [dates, q] (shared by all pixels; per "
                  "pixel: numpy arrays with a host cube, device arrays with a device cube)")
    if isinstance(regressors, dict):
        names = list(regressors)
        for nm in names:
            if not isinstance(nm, str) or not _NAME.match(nm) or nm in _RESERVED:
                raise ValueError(f"regressors: {nm!r} is not a usable name (letters, digits, "
                                 f"'_' and '.', not one of {_RESERVED})")
        cols, pp = [], []
        for nm in names:
            c = np.asarray(regressors[nm])
            p = _per_pixel(c, cube) if c.ndim > 1 else None
            p = p if p is not None and p.ndim == 2 else None
            if p is None and (c.ndim != 1 or c.shape[0] != N):
                raise ValueError(f"regressors[{nm!r}] must hold one value per date ({N}, "
                                 "shared by all pixels)"
                                 + (" or be shaped like y (per pixel)" if cube else "")
                                 + f", got shape {c.shape}")
            cols.append(c if p is None else p)
            pp.append(p is not None)
        if any(pp):          # shared ones joined to the per-pixel ones
            M = next(c.shape[1] for c, p in zip(cols, pp) if p)
            cols = [c if p else np.broadcast_to(c[:, None], (N, M)) for c, p in zip(cols, pp)]
        arr = np.stack(cols, axis=-1) if cols else np.zeros((N, 0))
        per = any(pp)
    else:
        arr = np.asarray(regressors)
        # per pixel: y's shape plus the last axis of q (a 2-D array is always [dates, q])
        p = (_per_pixel(arr, cube) if cube is not None and arr.ndim == len(cube[0]) + 1
             else None)
        per = p is not None
        if per:
            arr = p
        else:
            if arr.ndim == 1:
                arr = arr[:, None]
            if arr.ndim != 2:
                raise ValueError(f"regressors must be {shape_hint}, got shape {arr.shape}")
            if arr.shape[0] != N:
                raise ValueError(f"regressors has {arr.shape[0]} rows but there are {N} dates")
        names = [f"x{j + 1}" for j in range(arr.shape[-1])]
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"regressors must be real numbers, got dtype {arr.dtype}")
    arr = np.asarray(arr, np.float64)
    if np.isinf(arr).any():
        raise ValueError("regressors must be finite or NaN (NaN: that value of y is missing)")
    return names, arr, per


def parse_formula(formula) -> list | None:
    """The right-hand side terms of ``formula`` (``"response ~ trend + harmon"`` or
    ``"trend + harmon"``), ``[]`` for ``~ 1``; None for None."""
    if formula is None:
        return None
    if not isinstance(formula, str):
        raise TypeError(f"formula must be a string such as 'response ~ trend + harmon', "
                        f"got {type(formula).__name__}")
    rhs = formula.split("~")
    if len(rhs) > 2 or (len(rhs) == 2 and rhs[0].strip() not in ("", "response")):
        raise ValueError(f"formula must read 'response ~ terms' or 'terms', got {formula!r}")
    if "-" in rhs[-1] or rhs[-1].strip() == "0":
        raise ValueError(f"formula: the intercept is always fitted (removing terms with '-' "
                         f"or '0' is not supported): {formula!r}")
    terms = [s.strip() for s in rhs[-1].split("+")]
    if any(not s for s in terms):
        raise ValueError(f"formula has an empty term: {formula!r}")
    out = []
    for s in terms:
        if s == "1":
            continue
        if not _NAME.match(s):
            raise ValueError(f"formula: {s!r} is not a term (trend, harmon, 1 or a regressor's "
                             "name; no interactions or transformations)")
        if s in out:
            raise ValueError(f"formula: {s!r} is given twice")
        out.append(s)
    return out


def model_terms(formula, order, trend, regressors, N, cube=None) -> Terms:
    """The :class:`Terms` of a call (arguments as ``clts.bfast_breaks`` takes them); ``cube``:
    (shape, time axis) of ``y``, for regressors per pixel."""
    names, R, per = _regressor_table(regressors, N, cube)
    if len(names) > MAX_REGRESSORS:
        hint = (" (an array shaped like y is read as [dates, q]: a covariate per pixel is y's "
                "shape plus a last axis, x[..., None])"
                if cube is not None and R is not None and not per
                and (N,) + R.shape[1:] == tuple(np.moveaxis(np.empty(cube[0], bool), cube[1],
                                                            0).shape) else "")
        raise ValueError(f"regressors: {len(names)} covariates, at most {MAX_REGRESSORS} (the "
                         f"kernels unroll over the design's columns){hint}")
    terms = parse_formula(formula)
    if terms is None:
        use = list(range(len(names)))
    else:
        unknown = [s for s in terms if s not in ("trend", "harmon") and s not in names]
        if unknown:
            raise ValueError(f"formula: {', '.join(map(repr, unknown))} "
                             f"{'is' if len(unknown) == 1 else 'are'} not trend, harmon or a "
                             f"regressor's name (regressors: {names or 'none given'})")
        trend = "trend" in terms
        if "harmon" not in terms:
            order = 0
        elif order == 0:
            raise ValueError("formula has harmon but order=0")
        use = [names.index(s) for s in terms if s in names]
    if not use:
        return Terms(order, bool(trend))
    R = R[..., use]
    names = [names[j] for j in use]
    nan = np.isnan(R)
    missing = nan.any(axis=-1) if nan.any() else None
    R = np.where(nan, 0.0, R)
    if per:                 # centre and scale per pixel over its dates with a value
        ok = ~nan
        cnt = np.maximum(ok.sum(axis=0), 1)
        center = np.where(ok, R, 0.0).sum(axis=0) / cnt
        scale = np.max(np.where(ok, np.abs(R - center), 0.0), axis=0)
        scale = np.where(scale > 0, scale, 1.0)    # constant: the intercept's column (status 4)
        return Terms(order, bool(trend), names, None, center, scale, RP=R, missing=missing)
    ok = ~nan
    cnt = np.maximum(ok.sum(axis=0), 1)
    center = np.where(ok, R, 0.0).sum(axis=0) / cnt
    scale = np.max(np.where(ok, np.abs(R - center), 0.0), axis=0)
    const = [names[j] for j in range(len(use)) if not scale[j] > 0]
    if const:
        raise ValueError(f"regressors: {', '.join(map(repr, const))} "
                         f"{'is' if len(const) == 1 else 'are'} constant over the dates (the "
                         "intercept's column)")
    return Terms(order, bool(trend), names, R, center, scale, missing=missing)
