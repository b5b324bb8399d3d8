"""A clts warning points at the user's line (errors.warn_caller: the first frame outside the
package), however many clts frames lie between: a fixed stacklevel pointed into clts once
vocabulary.renamed wrapped the public functions."""
from __future__ import annotations

import numpy as np
import pytest

import clts


def test_warnings_name_the_callers_line(device):
    import clts.compat.stumpy as cs
    rng = np.random.default_rng(0)
    T = rng.standard_normal(64)
    calls = {
        "mstl": lambda: clts.mstl(rng.standard_normal(100), [7, 60], device=device),
        "bfast_breaks": lambda: clts.bfast_breaks(rng.standard_normal((40, 2)),
                                                  2000 + np.arange(40.0), freq=1, order=1,
                                                  device=device, progress=False),
        "stumpy.stump": lambda: cs.stump(T, 8, T_B=T, ignore_trivial=False, device=device),
        "trend_test": lambda: clts.trend_test(rng.standard_normal((48, 2)), device=device),
    }
    for name, call in calls.items():
        with pytest.warns(UserWarning) as caught:
            call()
        assert caught[0].filename == __file__, (name, caught[0].filename)


# modules that may set warning filters: the tuner and the command line run as their own
# process; clts.io reads the command line's files
PROCESS_OWNERS = ("tune/", "cli.py", "cli_bfast.py", "cli_common.py", "io.py")


def test_no_process_wide_warning_filters_in_library_calls():
    """``warnings.catch_warnings`` (before Python 3.14) saves and restores the filters of the
    whole process: two threads inside such blocks can leave one's "ignore" in place for good,
    and any thread's warnings are hidden while one runs. A public call must be safe from a
    user's threads, so library code silences nothing that way (it avoids the warning, or lets
    it go to the user's filters)."""
    import pathlib
    import re
    root = pathlib.Path(clts.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(PROCESS_OWNERS):
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"\bwarnings\.(catch_warnings|simplefilter|filterwarnings)\(", code):
                bad.append(f"{rel}:{i}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_geotiff_argument_probe_warns_once_and_keeps_filters(device, tmp_path):
    """The one-pixel probe of a GeoTIFF run gives the blocks' warning at the user's line (shown
    once under the default filter), and leaves the process's filters as they were."""
    import warnings
    rasterio = pytest.importorskip("rasterio")
    from affine import Affine
    from clts import geotiff
    dates = np.array([f"{y}-06-01" for y in range(1990, 2030)], dtype="datetime64[D]")
    y = np.random.default_rng(1).standard_normal((dates.size, 3, 2)).astype(np.float32)
    with rasterio.open(tmp_path / "stack.tif", "w", driver="GTiff", width=2, height=3,
                       count=dates.size, dtype="float32", crs="EPSG:32633",
                       transform=Affine(30.0, 0.0, 5e5, 0.0, -30.0, 4.2e6)) as ds:
        ds.write(y)
    (tmp_path / "dates.csv").write_text("date\n" + "\n".join(map(str, dates)) + "\n")
    before = list(warnings.filters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        geotiff.bfast_breaks_geotiff(tmp_path / "stack.tif", tmp_path / "out",
                                     dates=str(tmp_path / "dates.csv"), block_rows=1, freq=1,
                                     order=1, device=device, progress=False)
    rank = [w for w in caught if "rank-deficient" in str(w.message)]
    assert len(rank) == 1 and rank[0].filename == __file__, [str(w.message) for w in caught]
    assert warnings.filters == before
