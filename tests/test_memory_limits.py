"""Every buffer sized by the chunk: under an emulated GPU with a small max allocation and global
memory (enforced as a driver would, tests/emulated.py), calls whose whole batch would need
larger buffers run in chunks, allocate nothing beyond the limits, are never refused an
allocation, and give the results of the same emulated GPU without the limits. And an allocation
that fails after earlier calls left memory in the pools is retried once the pools give it back,
at the same chunk size."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import clts
from clts.runtime import faults
from emulated import limited_gpu, memory_limits

MAX_ALLOC = 16 << 20
GLOBAL = 64 << 20


def _cases():
    rng = np.random.default_rng(3)
    y_trend = np.cumsum(rng.standard_normal((600, 200)), axis=1)   # scratch 600 x 175 KB
    y_trend[::7, ::5] = np.nan
    t = np.arange(400)
    y_stl = (np.sin(2 * np.pi * t / 12) + 0.3 * rng.standard_normal((12000, 400))
             ).astype(np.float32)                                    # 19 MB a field
    dates = 2000 + np.arange(128) / 23
    cube = (np.sin(2 * np.pi * dates)[:, None]
            + 0.1 * rng.standard_normal((128, 40000))).astype(np.float32)   # 20 MB
    cube[100:, ::3] -= 1
    a, c, d = (rng.standard_normal((120000, 16)) for _ in range(3))    # 15 MB each
    b = 4 + rng.random((120000, 16))
    return {
        "trend_test": lambda dev: clts.trend_test(y_trend, device=dev).slope,
        "trend_test hamed_rao": lambda dev: clts.trend_test(y_trend, variant="hamed_rao",
                                                            device=dev).z,
        # jumps and one inner iteration: several times fewer LOESS fits, the same buffers
        "stl": lambda dev: clts.stl(y_stl, 12, seasonal_jump=3, trend_jump=8, low_pass_jump=5,
                                    inner_iter=1, device=dev).trend,
        "bfast_monitor": lambda dev: clts.bfast_monitor(cube, dates, dates[96], freq=1,
                                                        device=dev).magnitudes,
        "solve_tridiagonal": lambda dev: clts.solve_tridiagonal(a, b, c, d, device=dev).x,
    }


@pytest.fixture(scope="module")
def gpus():
    small = limited_gpu("h100", max_alloc=MAX_ALLOC, global_mem=GLOBAL)
    if small is None:
        pytest.skip("pocl is not usable here")
    # the same GPU with room for the whole batch (pocl's own 2 GB allocations)
    roomy = limited_gpu("h100", max_alloc=1 << 30, global_mem=4 << 30)
    return small, roomy


@pytest.mark.parametrize("name", list(_cases()))
def test_calls_fit_a_small_gpu_in_chunks(gpus, name):
    small, roomy = gpus
    call = _cases()[name]
    with memory_limits(roomy) as whole:
        want = np.asarray(call(roomy))
    assert whole.largest > MAX_ALLOC, "the case must need chunking on the small GPU"
    clts.set_options(progress=False)
    with memory_limits(small) as lim:
        got = np.asarray(call(small))
    assert not lim.refused, f"{name}: allocations refused {lim.refused}"
    assert lim.largest <= MAX_ALLOC and lim.peak <= GLOBAL
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)


def test_an_allocation_failure_first_gives_the_pools_memory_back(gpus, caplog):
    small, _ = gpus
    cases = _cases()
    call = cases["trend_test"]
    want = np.asarray(call(small))
    cases["solve_tridiagonal"](small)       # leaves blocks of other sizes held in the pools
    assert sum(p.held_blocks for p in small.state.pools.values()) > 0
    caplog.set_level(logging.INFO, logger="clts")
    with faults.inject("alloc", times=1):
        got = np.asarray(call(small))
    np.testing.assert_array_equal(got, want)
    assert "giving back the memory its pools held" in caplog.text
    assert "retrying with" not in caplog.text          # the chunks kept their size
