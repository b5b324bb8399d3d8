"""Batched tridiagonal solvers (issue 3): ``solve_tridiagonal`` in five code versions."""
from .api import TridiagonalResult, solve_tridiagonal
from .plan import VERSIONS, Plan, make_plan

__all__ = ["solve_tridiagonal", "TridiagonalResult", "Plan", "make_plan", "VERSIONS"]
