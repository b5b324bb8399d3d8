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
