"""Repeated ``trend_test`` calls on device arrays (``runtime.replay.run_recorded``): a key's
second call is recorded, the next ones enqueue its launches again with their own series and
fresh results. Call after call (the series variants, float32 and float64, the GPUs'
interleaved layout, several threads), the numpy path's values with no host traffic; earlier
results keep theirs; a row slice, an empty batch and chunked calls compute as before."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from test_device_arrays_rest import same_fields, series_batch  # noqa: E402
from test_device_arrays_stl import on_device  # noqa: E402
from transfers import host_traffic  # noqa: E402

cla = pytest.importorskip("pyopencl.array")

CASES = [("original", {}), ("hamed_rao", {}), ("yue_wang", dict(lag=3)),
         ("seasonal", dict(period=4)), ("original", dict(interleave=1, lanes=1))]


def _calls(dev, variant, kw, seeds, replays, dtype=np.float64):
    before = replays[0]
    results = []
    for s in seeds:
        y = series_batch(np.random.default_rng(s)).astype(dtype)
        want = clts.trend_test(y, variant=variant, device=dev, **kw)
        yd = on_device(dev, y)
        with host_traffic() as t:
            got = clts.trend_test(yd, variant=variant, device=dev, **kw)
        assert t.total == 0, t.report()
        results.append((got, want))
    for got, want in results:       # read after all calls: earlier results keep their values
        same_fields(got, want, False)
    assert replays[0] - before >= len(seeds) - 2, (variant, kw)


@pytest.mark.parametrize("variant,kw", CASES, ids=lambda c: str(c))
def test_repeated_calls_replay(device, replays, variant, kw):
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    _calls(device, variant, kw, (1, 2, 3, 4), replays)


def test_float32_series_replay(device, replays):
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    _calls(device, "original", {}, (5, 6, 7), replays, dtype=np.float32)


def test_replay_under_the_h100_plans(replays):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    for variant, kw in CASES[:3]:
        _calls(emu, variant, kw, (8, 9, 10), replays)


def test_threads_replay_their_own_calls(device, replays):
    """Four threads calling one shape at once: each result is its own series'."""
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    ys = [series_batch(np.random.default_rng(20 + i)) for i in range(4)]
    wants = [clts.trend_test(y, device=device) for y in ys]
    yds = [on_device(device, y) for y in ys]

    def work(i):
        return [clts.trend_test(yds[i], device=device) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for r in results:
            same_fields(r, wants[i], False)
    assert replays[0] > 0


def test_slices_empty_batches_and_chunks(device, replays):
    """A row slice at an offset, an empty batch and a call in chunks of 3 series compute as
    the numpy path, repeated."""
    if not device.fp64:
        pytest.skip("the device's statistics are float32 without cl_khr_fp64")
    y = series_batch(np.random.default_rng(30))
    yd = on_device(device, y)
    for _ in range(3):
        same_fields(clts.trend_test(yd[1:], device=device), clts.trend_test(y[1:],
                                                                            device=device), False)
        e = clts.trend_test(cla.empty(device.queue, (0, 48), np.float64), device=device)
        assert e.to_numpy().s.shape == (0,)
    with clts.set_options(max_chunk=3):
        for _ in range(3):
            same_fields(clts.trend_test(yd, device=device), clts.trend_test(y, device=device),
                        False)
