"""The matrix profile in parts: the documented internal interface through which
``clts.distributed`` splits one long series' diagonals over workers and merges their results.

- :func:`one_series` reads a 1-D series (numpy, pandas Series, one-column DataFrame,
  DataArray) and its time labels, as ``matrix_profile`` does;
- :func:`run_part` runs part ``part`` of ``parts`` (diagonal bands of about equal work) on the
  calling process's device;
- :func:`merge_parts` merges the parts' results exactly: the k-lists by (distance, index) with
  each neighbour index once, the left / right neighbours by the same rule.
"""
from __future__ import annotations

from .api import MatrixProfileResult, _one_series, matrix_profile
from .exact import _better
from .topk import _merge_k


def one_series(T, name: str, time_axis):
    """(the series as float64 numpy, its time labels or None); ``name`` is used in errors."""
    return _one_series(T, name, time_axis)


def run_part(T_A, m, T_B, part: int, parts: int, **kwargs) -> MatrixProfileResult:
    """Part ``part`` of ``parts`` of ``matrix_profile(T_A, m, T_B, **kwargs)`` (no progress
    bar): its diagonals' contribution, to be merged with :func:`merge_parts`."""
    return matrix_profile.compute(T_A, m, T_B, progress=False, bands=(part, parts), **kwargs)


def merge_parts(results) -> MatrixProfileResult:
    """One ``MatrixProfileResult`` from the parts of a distributed run (each over its own
    diagonals, all over the same windows): the k-lists (``P``/``I``, ``P_B``/``I_B``) merged
    by (distance, index) with each neighbour index once, the left / right neighbours by the
    same rule; a k = 1 self-join's profile is the better of left and right, as in one
    process."""
    res = results[0]
    k = res.P.shape[1]
    lists = [("P", "I")] + ([("P_B", "I_B")] if res.P_B is not None else [])
    tops = [("left_P", "left_I"), ("right_P", "right_I")] if res.self_join else []
    for other in results[1:]:
        for pk, ik in lists:
            d, i = _merge_k(getattr(res, pk), getattr(res, ik), getattr(other, pk),
                            getattr(other, ik), k, unique=True)
            setattr(res, pk, d)
            setattr(res, ik, i)
        for pk, ik in tops:
            d, i = _better(getattr(res, pk), getattr(res, ik), getattr(other, pk),
                           getattr(other, ik))
            setattr(res, pk, d)
            setattr(res, ik, i)
    if res.self_join and k == 1:
        P, I = _better(res.right_P, res.right_I, res.left_P, res.left_I)
        res.P, res.I = P[:, None], I[:, None]
    res.diagnostics["parts"] = len(results)
    res.diagnostics["devices"] = sorted({d for r in results for d in r.diagnostics["devices"]})
    return res
