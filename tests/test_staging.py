"""Pinned host staging (clts.runtime.staging), the transfer path of discrete GPUs, run on the
CPU devices with ``zero_copy=False`` (the discrete-GPU copy path), pieces of 4 KB and parts of
1 KB copied by two threads (several pieces per transfer, the ring wrapping around): every numpy
call gives the same bits through pinned pieces as straight from numpy's memory, on any layout,
chunking, ``out=`` and ``outputs=``, and from several calling threads at once."""
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
    clts.set_options(zero_copy=False, copy_threads=2)
    monkeypatch.setattr(staging, "PIECE_BYTES", 4096)
    monkeypatch.setattr(staging, "PART_BYTES", 1024)
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
def test_stl(device, staged, chunk, monkeypatch):
    """The same bits both ways; the residual computed piece by piece as the trend lands (on
    the copy threads) is y - seasonal - trend, NaN for a failed series."""
    rng = np.random.default_rng(9)
    t = np.arange(120)
    y = np.sin(2 * np.pi * t / 12) + 0.2 * rng.standard_normal((7, 120))
    y[3, 20:25] = np.nan
    y[5, ::12] = np.nan               # a cycle-subseries without a value: the series fails
    clts.set_options(max_chunk=chunk)
    passes = []
    real = staging._copy

    def spy(dst, src, then=None, p0=0, p1=0):
        if then is not None:
            passes.append(p1 - p0)
        real(dst, src, then, p0, p1)
    monkeypatch.setattr(staging, "_copy", spy)
    r = _both(staged, lambda: clts.stl(np.asfortranarray(y), 12, device=device),
              ["seasonal", "trend", "resid"])
    assert sum(passes) == y.size and len(passes) > 1   # every trend piece, on the pinned path
    assert np.isnan(r.resid[5]).all() and np.isnan(r.trend[5]).all()
    ok = np.arange(7) != 5
    np.testing.assert_array_equal(r.resid[ok], (y - r.seasonal - r.trend)[ok])


def test_bfast(device, staged):
    rng = np.random.default_rng(10)
    dates = 2000 + np.arange(92) / 23
    cube = np.sin(2 * np.pi * dates)[:, None, None] + 0.1 * rng.standard_normal((92, 6, 7))
    cube[70:, 1] -= 1.5
    cube[5, 0, 0] = np.nan
    clts.set_options(max_chunk=16)
    _both(staged, lambda: clts.bfast_monitor(cube, dates, dates[60], freq=1, device=device),
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
    from clts.runtime.plans import profile_value
    # the device's profile decides: pageable on CPUs (generic-cpu.yaml), pinned on GPUs
    assert staging.staging_mode(device) == profile_value(device, "runtime.staging")
    if device.type == "cpu":
        assert staging.staging_mode(device) == "pageable"
    clts.set_options(staging="pageable")
    assert staging.staging_mode(device) == "pageable"
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


@pytest.mark.parametrize("threads, pieces", [(1, 4), (3, 4), (2, 1), (3, 2), (16, None)])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "big-endian", "int16 to float32",
                                    "3-D F", "rows longer than a piece"])
def test_ring_layouts_and_threads(device, monkeypatch, threads, pieces, layout):
    """Any numpy layout both ways, cast to and from the device's dtype, parts copied by one or
    several threads, rings of 1, 2 and 4 pieces and the default (16 threads: consecutive
    pieces merged into one DMA each way), rows of the first axis spanning piece boundaries:
    the same values."""
    import pyopencl.array as cla
    monkeypatch.setattr(staging, "PIECE_BYTES", 4096)
    monkeypatch.setattr(staging, "PART_BYTES", 512)
    rng = np.random.default_rng(14)
    base = rng.standard_normal((67, 29))
    dtype = np.float64
    src = {"C": base, "F": np.asfortranarray(base),
           "strided": rng.standard_normal((134, 58))[::2, ::2],
           "big-endian": base.astype(">f8"),
           "int16 to float32": (base * 1000).astype(np.int16),
           "3-D F": np.asfortranarray(rng.standard_normal((7, 9, 31))),
           "rows longer than a piece": np.asfortranarray(rng.standard_normal((3, 1001)))}[layout]
    if layout == "int16 to float32":
        dtype = np.float32
    want = np.ascontiguousarray(src, dtype)
    dev_arr = cla.zeros(device.queue, src.size + 5, dtype)
    with staging.PinnedRing(device, pieces, threads=threads) as ring:
        cl_events = ring.write(device.queue, dev_arr.data, src, offset=5 * dev_arr.dtype.itemsize,
                               dtype=dtype)
        for ev in cl_events:
            ev.wait()
        np.testing.assert_array_equal(dev_arr.get()[5:], want.ravel())
        back = np.zeros_like(src)       # the same layout and dtype as the source
        ring.read(device.queue, dev_arr.data, back, offset=5 * dev_arr.dtype.itemsize, dtype=dtype)
    np.testing.assert_array_equal(back, src)


def test_out_and_outputs_through_pinned(device, staged):
    """STL with Fortran-ordered ``out=`` arrays and with ``outputs=`` subsets: the same bits
    through pinned pieces as straight, the components left out None, and only the asked
    components downloaded."""
    rng = np.random.default_rng(15)
    y = np.sin(np.arange(96) * np.pi / 6) + 0.1 * rng.standard_normal((11, 96))
    y[2, 5:9] = np.nan
    clts.set_options(max_chunk=4)
    outs = {k: np.asfortranarray(np.zeros_like(y)) for k in ("seasonal", "trend", "resid")}
    got = _both(staged, lambda: clts.stl(y, 12, out=outs, device=device),
                ["seasonal", "trend", "resid"])
    assert got.trend is outs["trend"]
    ref = clts.stl(y, 12, device=device, robust=True)
    downloaded = []
    real = staging.download

    def spy(dev, arr, host, *a, **kw):
        downloaded.append(host.nbytes)
        return real(dev, arr, host, *a, **kw)
    for robust in (False, True):
        full = clts.stl(y, 12, device=device, robust=robust)
        for names in (("trend",), "seasonal", ("resid", "weights"), ("weights",)):
            downloaded.clear()
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(staging, "download", spy)
                r = clts.stl(y, 12, device=device, robust=robust, outputs=names)
            wanted = (names,) if isinstance(names, str) else names
            for k in ("seasonal", "trend", "resid", "weights"):
                if k in wanted:
                    np.testing.assert_array_equal(getattr(r, k), getattr(full, k), err_msg=k)
                else:
                    assert getattr(r, k) is None, k
            # seasonal and trend for the residual, the robustness weights where asked
            n = len({"seasonal": {"seasonal"}, "trend": {"trend"}, "weights": set(),
                     "resid": {"seasonal", "trend"}}[wanted[0]]
                    | ({"seasonal", "trend"} if "resid" in wanted else set())
                    | ({"weights"} if robust and "weights" in wanted else set()))
            assert sum(downloaded) == n * y.nbytes, (names, robust)
    np.testing.assert_array_equal(
        clts.stl(y, 12, device=device, robust=True, outputs=["weights"]).weights, ref.weights)
    with pytest.raises(ValueError, match="outputs"):
        clts.stl(y, 12, device=device, outputs=("trend", "level"))
    with pytest.raises(ValueError, match="out has no component"):
        clts.stl(y, 12, device=device, outputs="trend", out={"seasonal": np.zeros_like(y)})


def test_integer_cube_stays_integer(device, staged):
    """An int16 BFAST cube crosses the link as int16 (the device converts it)."""
    rng = np.random.default_rng(16)
    dates = 2000 + np.arange(92) / 23
    cube = (1000 * np.sin(2 * np.pi * dates)[:, None] + 50 * rng.standard_normal((92, 40))
            ).astype(np.int16)
    cube[3, 4] = -9999
    written = []
    real = staging.PinnedRing.write

    def spy(self, queue, buf, src, offset=0, dtype=None):
        written.append((np.dtype(dtype or src.dtype), src.nbytes))
        return real(self, queue, buf, src, offset, dtype)
    clts.set_options(staging="pinned")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(staging.PinnedRing, "write", spy)
        got = clts.bfast_monitor(cube, dates, dates[60], nodata=-9999, freq=1, device=device)
    assert written and all(dt == np.int16 for dt, _ in written)
    # int16 across the link: under half of what the smallest float type would move (rows are
    # padded to the plan's pixel width, e.g. 40 -> 48 pixels on Intel's CPU runtime)
    assert sum(nb for _, nb in written) < 2 * cube.nbytes
    clts.set_options(staging="pageable")
    ref = clts.bfast_monitor(cube, dates, dates[60], nodata=-9999, freq=1, device=device)
    np.testing.assert_array_equal(got.breaks, ref.breaks)
    np.testing.assert_array_equal(got.magnitudes, ref.magnitudes)


def test_callers_in_threads_big_endian(device, staged):
    """Three threads call at once through pinned pieces and two copy threads, big-endian and
    Fortran-ordered inputs among them: each gets what one call alone gives."""
    clts.set_options(staging="pinned")
    rng = np.random.default_rng(17)
    a, c, d = rng.standard_normal((3, 48, 30))
    b = 4 + rng.random((48, 30))
    y = np.sin(np.arange(96) * np.pi / 6) + 0.1 * rng.standard_normal((9, 96))
    ref_x = clts.solve_tridiagonal(a, b, c, d, device=device).x
    ref_t = clts.stl(y, 12, device=device, outputs="trend").trend
    big = [v.astype(">f8") for v in (a, b, c, d)]

    def work(i):
        for _ in range(3):
            args = big if i == 0 else [np.asfortranarray(v) for v in (a, b, c, d)]
            np.testing.assert_array_equal(
                clts.solve_tridiagonal(*args, device=device).x, ref_x)
            np.testing.assert_array_equal(
                clts.stl(y.astype(">f8") if i else y, 12, device=device).trend, ref_t)
    run_in_threads(work, 3)


def test_ring_merges_dmas(device, monkeypatch):
    """With 16 copy threads a download moves two consecutive pieces per DMA, and an upload
    merges the pieces whose copies are in: fewer enqueues than pieces, the same values."""
    import pyopencl as cl
    import pyopencl.array as cla
    monkeypatch.setattr(staging, "PIECE_BYTES", 4096)
    monkeypatch.setattr(staging, "PART_BYTES", 1024)
    calls = []
    real = cl.enqueue_copy

    def counted(*args, **kw):
        calls.append(1)
        return real(*args, **kw)
    monkeypatch.setattr(cl, "enqueue_copy", counted)
    src = np.random.default_rng(19).standard_normal(40 * 4096 // 8 + 5)
    pieces = -(-src.nbytes // 4096)
    dev_arr = cla.zeros(device.queue, src.size, np.float64)
    with staging.PinnedRing(device, threads=16) as ring:
        for ev in ring.write(device.queue, dev_arr.data, src):
            ev.wait()
        assert len(calls) <= pieces
        calls.clear()
        back = np.zeros_like(src)
        ring.read(device.queue, dev_arr.data, back)
    assert len(calls) <= -(-pieces // 2)
    np.testing.assert_array_equal(back, src)


def test_in_parts_covers_and_raises(monkeypatch):
    """The host passes split over the copy threads cover every row once; an error in one part
    is raised once all parts have finished."""
    monkeypatch.setattr(staging, "PART_BYTES", 16)
    clts.set_options(copy_threads=3)
    seen = np.zeros(100, int)
    staging.in_parts(100, lambda a, b: np.add.at(seen, np.arange(a, b), 1), 10_000)
    assert (seen == 1).all()

    def bad(a, b):
        if a == 0:
            raise RuntimeError("part 0")
    with pytest.raises(RuntimeError, match="part 0"):
        staging.in_parts(100, bad, 10_000)


def test_emulated_h100_pinned_by_profile(monkeypatch):
    """Under the emulated H100's Plans over pocl (a device with its own memory, its profile
    staging pinned; BFAST with one lane, its cube put straight into the pieces): the same bits
    with one and two copy threads as straight from numpy's memory."""
    from emulated import gpus_over_pocl
    dev = gpus_over_pocl().get("h100")
    if dev is None:
        pytest.skip("pocl is not usable here")
    assert staging.staging_mode(dev) == "pinned"
    monkeypatch.setattr(staging, "PIECE_BYTES", 4096)
    monkeypatch.setattr(staging, "PART_BYTES", 1024)
    monkeypatch.setattr(staging, "MIN_BYTES", 0)
    rng = np.random.default_rng(18)
    dates = 2000 + np.arange(92) / 23
    cube = (1000 * np.sin(2 * np.pi * dates)[:, None] + 50 * rng.standard_normal((92, 70))
            ).astype(np.int16)
    y = np.sin(np.arange(96) * np.pi / 6) + 0.1 * rng.standard_normal((13, 96))
    a, c, d = rng.standard_normal((3, 40, 33))
    b = 4 + rng.random((40, 33))
    calls = [lambda: clts.bfast_monitor(cube, dates, dates[60], nodata=-1, freq=1, device=dev).breaks,
             lambda: clts.stl(np.asfortranarray(y), 12, device=dev, outputs="trend").trend,
             lambda: clts.solve_tridiagonal(a, b, c, d, device=dev).x]
    for call in calls:
        clts.set_options(staging="pageable")
        ref = call()
        for threads in (1, 2):
            clts.set_options(staging=None, copy_threads=threads)
            np.testing.assert_array_equal(call(), ref)
