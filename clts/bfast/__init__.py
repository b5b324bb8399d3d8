"""Batched BFAST-Monitor change detection with missing values (see ``api.bfast_monitor``)."""
from .api import BfastResult, bfast_monitor
from .plan import Plan

__all__ = ["bfast_monitor", "BfastResult", "Plan"]
