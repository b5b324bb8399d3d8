"""Batched BFAST-Monitor change detection with missing values (see ``api.bfast_monitor``)."""
