"""Batched Mann-Kendall trend tests (original with ties, Hamed-Rao and Yue-Wang corrections,
seasonal) and Theil-Sen slopes with confidence intervals, NaN-aware, pymannkendall's results.

``clts.trend_test``, ``clts.mann_kendall`` and ``clts.sen_slope`` are the functions of
:mod:`clts.trend.api`; the modules stay importable by their full path.
"""
from .api import TrendResult, mann_kendall, sen_slope, trend_test

__all__ = ["trend_test", "mann_kendall", "sen_slope", "TrendResult"]
