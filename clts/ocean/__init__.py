"""Ocean-model kernels (Veros): the Superbee advection fluxes and the turbulent kinetic energy
step, with the batched tridiagonal solver for the vertical diffusion (docs/ocean.md)."""
from .api import superbee_fluxes, tke
from .plan import Problem, SuperbeePlan, TkePlan, make_superbee_plan, make_tke_plan

__all__ = ["superbee_fluxes", "tke", "SuperbeePlan", "TkePlan", "make_superbee_plan", "make_tke_plan", "Problem"]
