"""Batched BFAST-Monitor change detection with missing values (see ``api.bfast_monitor``), after
Gieseke, Rosca, Henriksen, Verbesselt and Oancea, "Massively-Parallel Change Detection for
Satellite Time Series Data with Missing Values" (ICDE 2020)."""
from .api import BfastResult, bfast_monitor
from .breaks_api import BreaksResult, bfast_breaks
from .bfast01 import BFAST01_STATUS, Bfast01Result, bfast01
from .decompose import bfast_decompose
from .decompose_result import DecomposeIteration, DecomposeResult
from .bfastts import RegularSeries, bfastts
from .maps import break_maps
from .maps import bfast01_maps, decompose_maps, result_maps
from .breakpoints_plan import BreakpointsPlan
from .plan import Plan

__all__ = ["bfast_monitor", "BfastResult", "Plan", "bfast_breaks", "BreaksResult",
           "BreakpointsPlan", "bfastts", "RegularSeries", "break_maps", "bfast01",
           "Bfast01Result", "bfast_decompose", "DecomposeResult", "DecomposeIteration"]
__all__ += ["decompose_maps", "bfast01_maps", "result_maps"]
__all__ += ["BFAST01_STATUS"]
