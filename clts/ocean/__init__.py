"""Ocean-model kernels (Veros): the Superbee advection fluxes and the turbulent kinetic energy
step, with the batched tridiagonal solver for the vertical diffusion (docs/ocean.md)."""
from .api import superbee_fluxes, tke
from .plan import SuperbeePlan, TkePlan, superbee_plan, tke_plan

__all__ = ["superbee_fluxes", "tke", "SuperbeePlan", "TkePlan", "superbee_plan", "tke_plan"]
