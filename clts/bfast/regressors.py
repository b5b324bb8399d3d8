"""The model terms of ``clts.bfast_breaks`` / ``clts.bfast01``: R's formula terms (``1``,
``trend``, ``harmon`` and covariates) to the columns of the design matrix.

R users write ``response ~ trend + harmon + covariate`` on the data frame ``bfast::bfastpp``
builds (``xreg`` covariates among its columns). Here the same model is ``formula=`` (that text,
or only its right-hand side) with ``regressors=`` holding the covariates, one value per date
shared by all pixels: an array ``[dates]`` / ``[dates, q]`` (names ``x1 .. xq``), or a dict
name -> ``[dates]``. Without ``formula=`` the model is ``trend`` (if ``trend=True``) + ``harmon``
(if ``order > 0``) + every regressor. ``response ~ 1`` is the intercept-only model.

Columns, always in this order whatever the formula's: intercept, trend, sin_1, cos_1, ..,
sin_order, cos_order, the regressors (in the formula's order). The trend and the regressors
are centred and scaled on the host (the same column space with the intercept, so the same fits
and RSS) so that every column is of order 1: the rank test and the float32 RSS see a
well-conditioned design; :meth:`Terms.unscale` gives the coefficients of the columns as given.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .common import design_matrix, design_names

_NAME = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]*$")
_RESERVED = ("trend", "harmon", "intercept", "response")


@dataclass
class Terms:
    """The model of one call: ``order`` / ``trend`` of the season + trend part and the
    regressors ``R`` [N, q] (float64, as given) with their ``names``."""
    order: int
    trend: bool
    names: list = field(default_factory=list)
    R: np.ndarray | None = None
    center: np.ndarray | None = None     # of the regressors (trend: common.trend_scaling)
    scale: np.ndarray | None = None

    @property
    def q(self) -> int:
        return 0 if self.R is None else self.R.shape[1]

    def columns(self) -> list:
        """Names of the design's columns, in order."""
        return design_names(self.order, self.trend) + list(self.names)

    def design(self, t, freq, center, scale):
        """[N, K] design: ``common.design_matrix`` and the scaled regressors."""
        X = design_matrix(t, self.order, freq, self.trend, center, scale)
        if not self.q:
            return X
        return np.column_stack([X, (self.R - self.center) / self.scale])

    def unscale(self, beta, center, scale):
        """Coefficients ``beta`` [..., K] of :meth:`design`'s columns to those of 1, t,
        sin / cos and the regressors as given (the trend's ``center`` / ``scale``)."""
        b = np.array(beta, dtype=np.float64, copy=True)
        if self.trend:
            b[..., 1] = beta[..., 1] / scale
            b[..., 0] -= beta[..., 1] * center / scale
        k0 = b.shape[-1] - self.q
        for j in range(self.q):
            b[..., k0 + j] = beta[..., k0 + j] / self.scale[j]
            b[..., 0] -= beta[..., k0 + j] * self.center[j] / self.scale[j]
        return b


def _regressor_table(regressors, N):
    """(names, [N, q] float64) of ``regressors`` (None: no columns)."""
    if regressors is None:
        return [], None
    if isinstance(regressors, dict):
        names = list(regressors)
        for nm in names:
            if not isinstance(nm, str) or not _NAME.match(nm) or nm in _RESERVED:
                raise ValueError(f"regressors: {nm!r} is not a usable name (letters, digits, "
                                 f"'_' and '.', not one of {_RESERVED})")
        cols = []
        for nm in names:
            c = np.asarray(regressors[nm])
            if c.ndim != 1 or c.shape[0] != N:
                raise ValueError(f"regressors[{nm!r}] must hold one value per date ({N}), "
                                 f"got shape {c.shape}")
            cols.append(c)
        arr = np.stack(cols, axis=1) if cols else np.zeros((N, 0))
    else:
        arr = np.asarray(regressors)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError("regressors must be [dates] or [dates, q], one value per date "
                             "shared by all pixels (per-pixel regressors are not supported), "
                             f"got shape {arr.shape}")
        if arr.shape[0] != N:
            raise ValueError(f"regressors has {arr.shape[0]} rows but there are {N} dates")
        names = [f"x{j + 1}" for j in range(arr.shape[1])]
    if arr.dtype.kind not in "fiub" or arr.dtype.kind == "b":
        raise TypeError(f"regressors must be real numbers, got dtype {arr.dtype}")
    arr = np.asarray(arr, np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("regressors must be finite (a date without a covariate value: "
                         "set that date of y to NaN and its regressor to any number)")
    return names, arr


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


def model_terms(formula, order, trend, regressors, N) -> Terms:
    """The :class:`Terms` of a call (arguments as ``clts.bfast_breaks`` takes them)."""
    names, R = _regressor_table(regressors, N)
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
    R = R[:, use]
    names = [names[j] for j in use]
    center = R.mean(axis=0)
    scale = np.max(np.abs(R - center), axis=0)
    const = [names[j] for j in range(len(use)) if not scale[j] > 0]
    if const:
        raise ValueError(f"regressors: {', '.join(map(repr, const))} "
                         f"{'is' if len(const) == 1 else 'are'} constant over the dates (the "
                         "intercept's column)")
    return Terms(order, bool(trend), names, R, center, scale)
