"""A normal (non-editable) install carries the shipped profiles and the kernel templates."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_profiles_and_templates(tmp_path):
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-q", "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True,
                       timeout=300)
    except subprocess.CalledProcessError as exc:
        pytest.fail("building the wheel failed:\n" + exc.stderr.decode()[-3000:])
    wheel = next(tmp_path.glob("clts-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"clts/devices/{p.name}" for p in (ROOT / "clts" / "devices").glob("*.yaml")}
    assert shipped and shipped <= names
    assert "clts/devices/README.md" in names
    templates = {str(p.relative_to(ROOT)) for p in (ROOT / "clts" / "templates").rglob("*.mako")}
    assert templates <= names
    entry = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry[0]).decode()
    assert "clts = clts.cli:main" in text and "clts-tune = clts.tune.cli:main" in text


def test_version_matches_pyproject():
    import re
    from pathlib import Path

    import clts
    from clts._version import __version__
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == __version__
    assert clts.__version__ == __version__


#: the optional packages (the extras' top-level modules); the base install has none of them
OPTIONAL = ("scipy", "statsmodels", "stumpy", "pandas", "xarray", "dask", "distributed",
            "h5netcdf", "h5py", "zarr", "matplotlib", "cftime", "ruptures", "rasterio",
            "rioxarray", "pymannkendall", "tqdm", "numba", "kernel_tuner", "hypothesis")

BASE_INSTALL = """
import sys
BLOCKED = set(sys.argv[1].split(","))

class Blocker:                      # `pip install .` brings none of the optional packages
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is not installed (blocked)")

sys.meta_path.insert(0, Blocker())
import numpy as np
import clts
rng = np.random.default_rng(0)
t = np.arange(96)
y = np.sin(2 * np.pi * t / 12) + 0.02 * t + rng.normal(0, .2, (6, t.size))
y[:, 10:14] = np.nan
for variant in ("original", "hamed_rao", "yue_wang", "seasonal"):
    kw = dict(period=12) if variant == "seasonal" else {}
    r = clts.trend_test(y.reshape(2, 3, -1), variant=variant, **kw)
    assert r.p.shape == (2, 3) and np.isfinite(r.p).all() and np.isfinite(r.slope_low).all()
r = clts.mann_kendall(y[0])
assert 0 <= r.p <= 1 and np.isfinite(clts.sen_slope(y).slope).all()
assert np.isfinite(clts.stl(y, 12).trend[:, 20:]).all()
m = clts.mstl(np.abs(y) + 1, (12, 24), lmbda=0.5)
assert np.isfinite(m.trend[:, 20:]).all()
try:
    clts.mstl(np.abs(y) + 1, (12, 24), lmbda="auto")
except ImportError as exc:
    assert "pip install scipy" in str(exc)
else:
    raise AssertionError("lmbda='auto' ran without scipy")
print("ok", sorted(m for m in BLOCKED if m in sys.modules))
"""


def test_base_install_runs_without_optional_packages():
    """What `pip install .` gives (pyopencl, numpy, mako, pyyaml) runs trend_test, the
    Mann-Kendall / Sen functions, STL and MSTL: a child process where every optional package
    fails to import (this one has them all)."""
    import os
    env = dict(os.environ)
    want = [w for w in env.get("CLTS_TEST_DEVICES", "").split(",") if w.strip()]
    if want:
        env["CLTS_DEVICE"] = want[0].strip()
    env["CLTS_NO_PROGRESS"] = "1"
    out = subprocess.run([sys.executable, "-c", BASE_INSTALL, ",".join(OPTIONAL)], env=env,
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "ok []"
