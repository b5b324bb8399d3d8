"""Pinned host staging (clts.runtime.staging), the transfer path of discrete GPUs, run on the
CPU devices with ``zero_copy=False`` (the discrete-GPU copy path) and pieces of 4 KB (several
pieces per transfer, the two-piece ring wrapping around): every numpy call gives the same bits
through pinned pieces as straight from numpy's memory, on any layout and chunking."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from concurrency import run_in_threads
from clts.ocean.inputs import SCALED_CONSTANTS, scaled_inputs
from clts.runtime import staging


@pytest.fixture
def staged(device, monkeypatch):
    """The copy path with 4 KB pieces; counts the pinned pieces lent."""
    clts.set_options(zero_copy=False)
    monkeypatch.setattr(staging, "PIECE_BYTES", 4096)
    monkeypatch.setattr(staging, "MIN_BYTES", 0)
    lent = []
    real = staging.lend_pinned

    def spy(dev, nbytes=None):
        lent.append(staging.PIECE_BYTES if nbytes is None else nbytes)
        return real(dev, staging.PIECE_BYTES if nbytes is None else nbytes)
    monkeypatch.setattr(staging, "lend_pinned", spy)
    return lent


def _both(lent, call, names):
    """``call()`` straight from numpy's memory, then through pinned pieces: the same bits."""
    clts.set_options(staging="pageable")
    direct = call()
    assert not lent
    clts.set_options(staging="pinned")
    piped = call()
    assert lent, "the pinned path was not taken"
    for name in names:
        d, p = (getattr(r, name) if name else r for r in (direct, piped))
        for u, v in (zip(d, p) if isinstance(d, tuple) else [(d, p)]):
            np.testing.assert_array_equal(np.asarray(v), np.asarray(u), err_msg=name)
    return piped


@pytest.mark.parametrize("case", ["C", "F-interleaved", "start, chunked"])
def test_tridiagonal(device, staged, case):
    rng = np.random.default_rng(8)
    a, c, d = rng.standard_normal((3, 90, 33))
    b = 4 + rng.random((90, 33))
    axis, start = -1, None
    if case == "F-interleaved":
        a, b, c, d = (np.asfortranarray(v.T) for v in (a, b, c, d))
        axis = 0
    if case == "start, chunked":
        start = rng.integers(-1, 33, 90)
        clts.set_options(max_chunk=17)
    _both(staged, lambda: clts.solve_tridiagonal(a, b, c, d, axis=axis, start=start,
                                                 device=device), ["x"])


@pytest.mark.parametrize("chunk", [None, 2])
def test_stl(device, staged, chunk):
    rng = np.random.default_rng(9)
    t = np.arange(120)
    y = np.sin(2 * np.pi * t / 12) + 0.2 * rng.standard_normal((7, 120))
    y[3, 20:25] = np.nan
    clts.set_options(max_chunk=chunk)
    _both(staged, lambda: clts.stl(np.asfortranarray(y), 12, device=device),
          ["seasonal", "trend", "resid"])


def test_bfast(device, staged):
    rng = np.random.default_rng(10)
    dates = 2000 + np.arange(92) / 23
    cube = np.sin(2 * np.pi * dates)[:, None, None] + 0.1 * rng.standard_normal((92, 6, 7))
    cube[70:, 1] -= 1.5
    cube[5, 0, 0] = np.nan
    clts.set_options(max_chunk=16)
    _both(staged, lambda: clts.bfast_monitor(cube, dates, dates[60], device=device),
          ["breaks", "magnitudes", "means"])


@pytest.mark.parametrize("cap", [None, 3])
def test_tke(device, staged, cap):
    x = scaled_inputs((13, 9, 5), seed=4)
    clts.set_options(max_chunk=cap)
    _both(staged, lambda: clts.ocean.tke(*x.values(), device=device, **SCALED_CONSTANTS),
          [None])


def test_matrix_profile_and_mass(device, staged):
    rng = np.random.default_rng(11)
    T = np.cumsum(rng.standard_normal(3000))
    _both(staged, lambda: clts.matrix_profile(T, 32, device=device), ["P", "I"])
    staged.clear()
    _both(staged, lambda: clts.mass(T[100:164], T, device=device), [None])


def test_ring_round_trip(device, monkeypatch):
    """Odd sizes across many pieces, at an offset into the buffer, both ways."""
    import pyopencl.array as cla
    monkeypatch.setattr(staging, "PIECE_BYTES", 4096)
    rng = np.random.default_rng(12)
    src = rng.standard_normal(5 * 4096 // 8 + 3)
    dev_arr = cla.zeros(device.queue, src.size + 11, np.float64)
    with staging.PinnedRing(device) as ring:
        for ev in ring.write(device.queue, dev_arr.data, src, offset=11 * 8):
            ev.wait()
        back = np.zeros_like(src)
        ring.read(device.queue, dev_arr.data, back, offset=11 * 8)
    np.testing.assert_array_equal(back, src)
    np.testing.assert_array_equal(dev_arr.get()[11:], src)
    strided = np.zeros((src.size, 2))[:, 0]             # any layout on the way back
    staging.download(device, dev_arr[11:], strided)
    np.testing.assert_array_equal(strided, src)


def test_mode_from_profile_and_option(device):
    from clts.runtime.pipeline import ChunkIO
    assert staging.staging_mode(device) == "pageable"           # generic-cpu.yaml
    clts.set_options(staging="pinned")
    assert staging.staging_mode(device) == "pinned"
    with ChunkIO(device) as io:          # where numpy's memory is used in place: no staging
        assert io.pinned == (io.align is None)
    with pytest.raises(ValueError, match="staging"):
        clts.set_options(staging="sometimes")


def test_gpu_profiles_stage_pinned():
    from clts.runtime import profiles
    for name in ("generic-gpu", "generic-accelerator", "nvidia-h100", "amd-mi200"):
        data = profiles.load(profiles.shipped_dir() / f"{name}.yaml")
        got = data.get("runtime", {}).get("staging", "pinned")     # GPUs inherit generic-gpu
        assert got == "pinned", name
    cpu = profiles.load(profiles.shipped_dir() / "generic-cpu.yaml")
    assert cpu["runtime"]["staging"] == "pageable"


def test_two_threads_through_the_pool(device, staged):
    """Two threads stage at once (pieces lent from and returned to one pool): same bits."""
    clts.set_options(staging="pinned")
    rng = np.random.default_rng(13)
    a, c, d = rng.standard_normal((3, 64, 40))
    b = 4 + rng.random((64, 40))
    y = np.sin(np.arange(96) * np.pi / 6) + 0.1 * rng.standard_normal((9, 96))
    ref_x = clts.solve_tridiagonal(a, b, c, d, device=device).x
    ref_s = clts.stl(y, 12, device=device).seasonal
    def work(_):
        for _ in range(4):
            np.testing.assert_array_equal(
                clts.solve_tridiagonal(a, b, c, d, device=device).x, ref_x)
            np.testing.assert_array_equal(clts.stl(y, 12, device=device).seasonal, ref_s)

    run_in_threads(work, 2)
    clts.set_options(staging="pageable")
    np.testing.assert_array_equal(clts.solve_tridiagonal(a, b, c, d, device=device).x, ref_x)
