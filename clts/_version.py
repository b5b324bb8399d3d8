"""The version of clts, in one place (pyproject.toml holds the same number); modules that record
it (profiles, calibrations, reports) import it from here, never from the package face."""
__version__ = "0.1.0"
