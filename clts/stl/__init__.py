"""Batched STL decomposition with missing values (seed 000: STL on GPUs)."""
from .api import STLResult, stl, stl_hastl

__all__ = ["stl", "stl_hastl", "STLResult"]
