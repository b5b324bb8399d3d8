"""R's BFAST-Monitor on white noise: how often does a stable series get a break? The false
alarms of OLS-MOSUM monitoring grow with the length of the monitoring period against the
history's (strucchange's boundary is set for monitoring up to ``end`` = 10 histories, but its
level holds asymptotically, not for these lengths), so a user sees many breaks on noise when
the history is short. This fixture pins R's answer: seed-fixed N(0, 1) series of 20 years of
16-day values (``noise()``, rounded to 6 digits so that the CSV R reads is the same series), the
whole history, monitoring from 2007 / 2013 / 2017 (13, 7 and 3 years), through
``bench/bfast_r_fixtures.R`` (bfastmonitor's steps with strucchange). Needs
``apt-get install r-base-core r-cran-strucchange``.

    python bench/bfast_noise_fixtures.py     # writes tests/data/bfast_r_noise_breaks.csv
"""
from __future__ import annotations

import csv
import subprocess
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "tests" / "data" / "bfast_r_noise_breaks.csv"
STARTS = (2007.0, 2013.0, 2017.0)


def noise(seed=5, cases=100, n=460):
    """[cases, n] N(0, 1) values, rounded to 6 digits; their times are 2000 + i / 23."""
    return np.round(np.random.default_rng(seed).normal(0.0, 1.0, (cases, n)), 6)


def main():
    y = noise()
    with tempfile.TemporaryDirectory() as td:
        inp, sett, out = (Path(td) / n for n in ("in.csv", "settings.csv", "out.csv"))
        with open(inp, "w") as f:
            f.write("case,value\n")
            for c, row in enumerate(y):
                f.writelines(f"{c},{v!r}\n" for v in row.tolist())
        sett.write_text("history,level,h,start\n"
                        + "".join(f"all,0.05,0.25,{s}\n" for s in STARTS))
        r = subprocess.run(["Rscript", str(HERE / "bfast_r_fixtures.R"), str(inp), str(out),
                            str(sett)], capture_output=True, text=True)
        print(r.stdout, r.stderr[-2000:])
        r.check_returncode()
        with open(out) as f:
            rows = list(csv.DictReader(f))
    with open(OUT, "w") as f:
        f.write("start,case,breaks\n")
        for row in rows:
            f.write(f"{STARTS[int(row['setting'])]},{row['case']},{row['breaks']}\n")
    for s in STARTS:
        b = np.array([int(r["breaks"]) for r in rows if STARTS[int(r["setting"])] == s])
        print(f"monitoring from {s}: R flags {np.mean(b >= 0):.0%} of {b.size} noise series")
    print("wrote", OUT)


if __name__ == "__main__":
    main()
