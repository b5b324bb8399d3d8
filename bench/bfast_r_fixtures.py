"""Make the R reference fixture for ``convention="r"``: seed-fixed single series (16-day
regular series with missing values and planted breaks) run through strucchange's OLS-MOSUM
monitoring by ``bench/bfast_r_fixtures.R`` (bfast::bfastmonitor's steps, history "all" and
"ROC"). Needs ``apt-get install r-base-core r-cran-strucchange``.

    python bench/bfast_r_fixtures.py      # writes tests/data/bfast_r_{input,settings,output}.csv
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"
FREQ = 23


def series(seed=11, n_cases=24, years=10):
    rng = np.random.default_rng(seed)
    N = FREQ * years
    t = 2000 + np.arange(N) / FREQ
    rows = []
    for c in range(n_cases):
        y = (0.6 + rng.normal(0, 0.01) * (t - 2000) + rng.uniform(0.05, 0.2) * np.sin(2 * np.pi * t + rng.uniform(0, 6))
             + rng.normal(0, rng.uniform(0.01, 0.05), N))
        kind = c % 4
        if kind == 1:                          # a disturbance in the monitoring period
            y[t >= rng.uniform(2007.5, 2009.5)] -= rng.uniform(0.1, 0.4)
        elif kind == 2:                        # an unstable history (ROC should cut it)
            y[t < rng.uniform(2002.0, 2005.0)] += rng.uniform(0.2, 0.5)
        elif kind == 3:                        # both
            y[t < rng.uniform(2002.0, 2005.0)] += rng.uniform(0.2, 0.5)
            y[t >= rng.uniform(2007.5, 2009.5)] -= rng.uniform(0.1, 0.4)
        miss = rng.random(N) < rng.uniform(0.1, 0.6)
        y = np.round(y, 6)
        y[miss] = np.nan
        if c == 0:                             # break at the first monitoring date
            pass
        rows += [(c, i, float(t[i]), float(y[i])) for i in range(N)]
    return rows


def main():
    DATA.mkdir(parents=True, exist_ok=True)
    inp, sett, out = DATA / "bfast_r_input.csv", DATA / "bfast_r_settings.csv", DATA / "bfast_r_output.csv"
    with open(inp, "w") as f:
        f.write("case,i,time,value\n")
        for c, i, t, v in series():
            f.write(f"{c},{i},{t!r},{'NA' if np.isnan(v) else repr(float(v))}\n")
    settings = [("all", 0.05, 0.25, 2007.51), ("ROC", 0.05, 0.25, 2007.51),
                ("all", 0.0125, 0.5, 2008.03), ("ROC", 0.025, 0.25, 2008.03)]
    with open(sett, "w") as f:
        f.write("history,level,h,start\n")
        for s in settings:
            f.write(",".join(str(x) for x in s) + "\n")
    r = subprocess.run(["Rscript", str(HERE / "bfast_r_fixtures.R"), str(inp), str(out)],
                       capture_output=True, text=True)
    print(r.stdout, r.stderr[-2000:])
    r.check_returncode()
    print("wrote", out)


if __name__ == "__main__":
    main()
