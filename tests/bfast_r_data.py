"""The R strucchange fixtures of the BFAST tests (tests/data, made by bench/bfast_r_fixtures.R and
bench/bfast_bp_fixtures.py): the shared input cube, a settings file with its output rows, and
the relative error the tests state their tolerances in."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def rel(a, b, scale=1.0) -> float:
    """Largest relative difference, NaN where both are NaN counting as equal."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    both = np.isnan(a) & np.isnan(b)
    d = np.where(both, 0.0, np.abs(a - b) / np.fmax(scale, np.abs(b)))
    d = np.where(np.isnan(d) & ~both, np.inf, d)
    return float(np.max(d)) if d.size else 0.0


def column(rows, key, f=float) -> np.ndarray:
    """One column of CSV rows, R's NA as NaN."""
    return np.array([f(x[key]) if x[key] != "NA" else np.nan for x in rows])


def r_cases(settings: str, output: str):
    """(Y [time, case], T [time], settings rows, output rows) of the R fixture whose settings and
    output files are named."""
    inp = list(csv.DictReader(open(DATA / "bfast_r_input.csv")))
    sett = list(csv.DictReader(open(DATA / settings)))
    out = list(csv.DictReader(open(DATA / output)))
    C = len({r["case"] for r in inp})
    N = max(int(r["i"]) for r in inp) + 1
    Y = np.full((N, C), np.nan)
    T = np.zeros(N)
    for r in inp:
        i, c = int(r["i"]), int(r["case"])
        T[i] = float(r["time"])
        Y[i, c] = np.nan if r["value"] == "NA" else float(r["value"])
    return Y, T, sett, out
