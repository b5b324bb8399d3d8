"""Exact matrix profile (issue 6): ``matrix_profile``, ``motifs``, ``discords``."""
from .api import MatrixProfileResult, matrix_profile
from .motifs import discords, motifs
from .plan import Plan

__all__ = ["matrix_profile", "MatrixProfileResult", "motifs", "discords", "Plan"]
