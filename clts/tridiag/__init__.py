"""Batched tridiagonal solvers: ``solve_tridiagonal`` in five code versions, after T. Grenzdörffer,
"Accelerating Ocean Modelling: Addressing performance bottlenecks of the ocean modelling framework
Veros" (University of Copenhagen)."""
from .api import TridiagonalResult, release_scratch, solve_tridiagonal
from .plan import VERSIONS, Plan, make_plan

__all__ = ["solve_tridiagonal", "TridiagonalResult", "release_scratch", "Plan", "make_plan", "VERSIONS"]
