"""Batched tridiagonal solvers (issue 3): ``solve_tridiagonal`` in five code versions."""
from .api import TridiagonalResult, release_scratch, solve_tridiagonal
from .plan import VERSIONS, Plan, make_plan

__all__ = ["solve_tridiagonal", "TridiagonalResult", "release_scratch", "Plan", "make_plan", "VERSIONS"]
