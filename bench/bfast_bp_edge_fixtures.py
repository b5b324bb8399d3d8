"""R fixtures of ``clts.bfast_breaks`` on the series where strucchange answers from rounding
noise or the design: exact fits (a constant, a pure harmonic, a saturated pixel with gaps, a
noise-free step), yearly dates with ``freq=1`` (harmonic columns that are the intercept and
1e-13 noise) and a minimal segment of exactly half the values. Each case has its own dates and
design (``bench/bfast_bp_edge_fixtures.R``, strucchange's ``breakpoints`` on bfastpp's season +
trend design, the missing values omitted). Needs ``apt-get install r-base-core r-cran-strucchange``.

    python bench/bfast_bp_edge_fixtures.py   # writes tests/data/bfast_bp_edge_{input,settings,output}.csv
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"


def cases():
    """(name, time, y, order, trend, h, breaks, freq) per case."""
    t = 2000 + np.arange(161) / 23
    rng = np.random.default_rng(35)
    sat = np.full(161, 255.0)
    sat[rng.random(161) < 0.2] = np.nan
    step = np.where(t >= 2003.5, 2.0, 1.0) + 0.5 * np.sin(2 * np.pi * t)
    ti = np.arange(2000, 2161.0)
    yr = rng.normal(size=(161, 2))
    yr[80:, 1] += 3
    th = 2000 + np.arange(60) / 23
    yh = np.concatenate([rng.normal(size=30), rng.normal(size=30) + 2])
    return [
        ("constant", t, np.full(161, 5.0), 3, 1, 0.15, 5, 1.0),
        ("sine", t, np.sin(2 * np.pi * t), 3, 1, 0.15, 5, 1.0),
        ("saturated_gaps", t, sat, 3, 1, 0.15, 5, 1.0),
        ("step_exact", t, step, 3, 1, 0.15, 5, 1.0),
        ("constant_history_bp", t, np.full(161, 5.0), 3, 1, 48, 2, 1.0),
        ("yearly_noise", ti, yr[:, 0], 2, 1, 0.15, 5, 1.0),
        ("yearly_shift", ti, yr[:, 1], 2, 1, 0.15, 5, 1.0),
        ("half_h", th, yh, 0, 1, 0.5, 5, 1.0),
    ]


def main():
    rows = []
    with open(DATA / "bfast_bp_edge_settings.csv", "w") as f:
        f.write("case,name,order,trend,h,breaks,freq\n")
        for i, (name, t, y, order, trend, h, breaks, freq) in enumerate(cases()):
            f.write(f"{i},{name},{order},{trend},{h},{breaks},{freq}\n")
            rows += [(i, tt, yy) for tt, yy in zip(t, y)]
    with open(DATA / "bfast_bp_edge_input.csv", "w") as f:
        f.write("case,time,y\n")
        for i, tt, yy in rows:
            f.write(f"{i},{float(tt)!r},{'NA' if np.isnan(yy) else repr(float(yy))}\n")
    subprocess.run(["Rscript", str(HERE / "bfast_bp_edge_fixtures.R"),
                    str(DATA / "bfast_bp_edge_input.csv"), str(DATA / "bfast_bp_edge_settings.csv"),
                    str(DATA / "bfast_bp_edge_output.csv")], check=True)


if __name__ == "__main__":
    main()
