"""Make the R reference fixtures of ``clts.bfast_breaks`` (Bai-Perron ``breakpoints``): seed-fixed
16-day series (23 a year) with missing values and 0-3 planted breaks, run through
``strucchange::breakpoints`` by ``bench/bfast_bp_fixtures.R`` for several designs (season order,
trend or not, h as a fraction or a count). Needs ``apt-get install r-base-core r-cran-strucchange``.

    python bench/bfast_bp_fixtures.py   # writes tests/data/bfast_bp_{input,settings,output,triangle}.csv
                                     # and bfast_bp_{ci_input,confint}.csv

It also runs ``bench/bfast_r_fixtures.R`` (bfastmonitor's steps) on the series of
tests/data/bfast_r_input.csv for the history options it adds: ``history="BP"`` (bfast's
``history_break``), a numeric history start, ROC with its own level (R's ``level = c(a, b)``), the
formulas ``response ~ trend`` / ``response ~ harmon`` and other harmonic orders,
into tests/data/bfast_bp_monitor_{settings,output}.csv.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"
FREQ = 23


def series(seed=27, n_pix=16, years=7):
    rng = np.random.default_rng(seed)
    N = FREQ * years
    t = 2000 + np.arange(N) / FREQ
    cols = []
    for p in range(n_pix):
        y = (0.5 + rng.normal(0, 0.01) * (t - 2000)
             + rng.uniform(0.05, 0.2) * np.sin(2 * np.pi * t + rng.uniform(0, 6))
             + rng.normal(0, rng.uniform(0.01, 0.04), N))
        for _ in range(p % 4):                  # 0..3 planted level shifts
            y[t >= rng.uniform(2001.2, 2005.8)] += rng.choice([-1, 1]) * rng.uniform(0.1, 0.3)
        y = np.round(y, 6)
        y[rng.random(N) < rng.uniform(0.0, 0.4)] = np.nan
        cols.append(y)
    return t, np.stack(cols, axis=1)


SETTINGS = [  # order, trend, h, breaks
    (3, 1, 0.15, 5),
    (1, 1, 0.15, 5),
    (2, 0, 0.2, 3),
    (0, 1, 0.1, 6),
    (3, 1, 48, 2),          # h as a count (history="BP" uses 6 * K)
]


MONITOR_SETTINGS = [  # history, level, h, start, level_roc, formula, order
    ("BP", 0.05, 0.25, 2007.51, 0.05, "response ~ trend + harmon", 3),
    ("BP", 0.025, 0.5, 2008.03, 0.05, "response ~ trend + harmon", 3),
    ("2003.5", 0.05, 0.25, 2007.51, 0.05, "response ~ trend + harmon", 3),
    ("ROC", 0.05, 0.25, 2007.51, 0.01, "response ~ trend + harmon", 3),
    ("ROC", 0.025, 0.25, 2008.03, 0.02, "response ~ trend + harmon", 3),
    ("all", 0.05, 0.25, 2007.51, 0.05, "response ~ trend", 1),
    ("all", 0.05, 0.25, 2007.51, 0.05, "response ~ harmon", 3),
    ("ROC", 0.05, 0.25, 2007.51, 0.05, "response ~ trend + harmon", 1),
    ("all", 0.05, 0.5, 2007.51, 0.05, "response ~ trend + harmon", 8),
    ("BP", 0.05, 0.25, 2007.51, 0.05, "response ~ harmon", 2),
]


def main():
    DATA.mkdir(parents=True, exist_ok=True)
    t, y = series()
    header = "time," + ",".join(f"p{i}" for i in range(y.shape[1]))
    body = np.column_stack([t, y])
    np.savetxt(DATA / "bfast_bp_input.csv", body, delimiter=",", header=header, comments="",
               fmt="%.10g")
    with open(DATA / "bfast_bp_settings.csv", "w") as f:
        f.write("order,trend,h,breaks\n")
        for s in SETTINGS:
            f.write(",".join(str(v) for v in s) + "\n")
    # weak shifts (0.5-2 noise sd) for the confidence intervals: wider than +-1 value
    rng = np.random.default_rng(28)
    yc = np.sin(2 * np.pi * t)[:, None] * 0.1 + 0.03 * rng.standard_normal((t.size, 24))
    for p in range(24):
        for _ in range(1 + p % 2):
            yc[t >= rng.uniform(2001.5, 2005.5), p] += rng.choice([-1, 1]) * rng.uniform(0.015, 0.06)
    yc = np.round(yc, 6)
    yc[rng.random(yc.shape) < 0.1] = np.nan
    np.savetxt(DATA / "bfast_bp_ci_input.csv", np.column_stack([t, yc]), delimiter=",",
               header="time," + ",".join(f"p{i}" for i in range(24)), comments="", fmt="%.10g")
    subprocess.run(["Rscript", str(HERE / "bfast_bp_fixtures.R"), str(DATA / "bfast_bp_input.csv"),
                    str(DATA / "bfast_bp_output.csv"), str(DATA / "bfast_bp_triangle.csv")],
                   check=True)
    ms = DATA / "bfast_bp_monitor_settings.csv"
    with open(ms, "w") as f:
        f.write("history,level,h,start,level_roc,formula,order\n")
        for row in MONITOR_SETTINGS:
            f.write(",".join(str(v) for v in row) + "\n")
    subprocess.run(["Rscript", str(HERE / "bfast_r_fixtures.R"), str(DATA / "bfast_r_input.csv"),
                    str(DATA / "bfast_bp_monitor_output.csv"), str(ms)], check=True)


if __name__ == "__main__":
    main()
