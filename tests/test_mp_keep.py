"""The k = 1 float64 diagonal kernel's two ways of keeping the better packed candidate
(Plan.keep: "minmax" = fmax / fmin, "select" = compare and select) give bit-identical
profiles: self-join and AB-join, z-normalized and plain, column bests in registers and in
local memory, one lane and several, on every device; and a bad value names the keyword."""
from __future__ import annotations

import numpy as np
import pytest

import clts

FIELDS = ("P", "I", "left_P", "left_I", "right_P", "right_I", "P_B", "I_B")

BANDS = [dict(lanes=1, groups=3, store="private"), dict(lanes=4, groups=2, store="private"),
         dict(lanes=8, groups=2, store="local", tile=16, wg=2)]


def _walk(n, seed):
    return np.cumsum(np.random.default_rng(seed).standard_normal(n))


def _same(a, b):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x is None:
            assert y is None, name
            continue
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)


@pytest.mark.parametrize("band", BANDS, ids=lambda b: f"w{b['lanes']}g{b['groups']}-{b['store']}")
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("merge", ["atomic", "partial"])
def test_keep_select_is_bit_identical_to_minmax(device, band, normalize, merge):
    if merge == "atomic" and not device.int64_atomics:
        pytest.skip("no 64-bit atomics")
    T = _walk(600, 5)
    T[100:140] = 3.0                    # a constant stretch: exact scans
    T[300] = np.nan                     # windows with NaN: no profile entry
    B = _walk(350, 6)
    for args, kw in (((T, 20), {}), ((T, 16, B), dict(both=True))):
        out = [clts.matrix_profile(*args, device=device, normalize=normalize, merge=merge,
                                   segment=64, keep=keep, progress=False, **kw, **band)
               for keep in ("minmax", "select")]
        assert [r.plan.keep for r in out] == ["minmax", "select"]
        _same(*out)


def test_keep_rejects_other_values(device):
    with pytest.raises(ValueError, match="keep"):
        clts.matrix_profile(_walk(100, 1), 8, device=device, keep="fmax")
