"""The pipelined chunk loop (clts.runtime.pipeline): chunked runs with transfers overlapping
compute give bit-identical results to the same chunks run one after another and to an
unchunked run, on every device, with host memory used in place and with real transfers."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.runtime import faults, pipeline

ZERO_COPY = pytest.mark.parametrize("zero_copy", ["1", "0"], ids=["zero-copy", "transfers"])


def _zero_copy(device, monkeypatch, zero_copy):
    if device.info.simulator and zero_copy == "1":
        pytest.skip("the simulator shares no memory with the host: every run copies")
    clts.set_options(zero_copy=zero_copy == "1")


def _runs(monkeypatch, call, max_chunk):
    """(unchunked, chunked pipelined, chunked sequential) results of ``call()``."""
    clts.set_options(max_chunk=None)
    clts.set_options(pipeline=True)
    whole = call()
    clts.set_options(max_chunk=max_chunk)
    piped = call()
    clts.set_options(pipeline=False)
    seq = call()
    return whole, piped, seq


def _same(results, names):
    whole, piped, seq = results
    for name in names:
        w, p, s = (np.asarray(getattr(r, name)) for r in results)
        np.testing.assert_array_equal(p, s, err_msg=f"{name}: pipelined != sequential")
        np.testing.assert_array_equal(p, w, err_msg=f"{name}: chunked != unchunked")


def _layout(a, order):
    """``a`` as a Fortran-ordered copy ("F") or a strided view ("strided")."""
    if order == "F":
        return np.asfortranarray(a)
    if order == "strided":
        big = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    return a


@pytest.mark.oclgrind
@ZERO_COPY
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("robust", [False, True])
def test_stl(device, monkeypatch, zero_copy, order, robust):
    _zero_copy(device, monkeypatch, zero_copy)
    if device.info.simulator and (order == "C") == robust:
        pytest.skip("on Oclgrind each order and each robust mode once (C plain, F robust: 50 s "
                    "a case there); every combination runs on the drivers")
    rng = np.random.default_rng(3)
    t = np.arange(60)
    y = np.sin(2 * np.pi * t / 12) + 0.05 * t + 0.2 * rng.standard_normal((11, 60))
    y[2, 10:14] = np.nan
    y[5, ::12] = np.nan                  # a cycle-subseries without values: a failed series
    y = _layout(y, order)
    res = _runs(monkeypatch, lambda: clts.stl(y, 12, robust=robust, outer_iter=1 if robust
                                              else None, device=device), 3)
    _same(res, ("seasonal", "trend", "resid", "weights"))
    assert res[1].diagnostics["n_failed"] == 1


@pytest.mark.oclgrind
@ZERO_COPY
@pytest.mark.parametrize("case", ["natural", "interleaved-F", "start"])
def test_tridiagonal(device, monkeypatch, zero_copy, case):
    _zero_copy(device, monkeypatch, zero_copy)
    rng = np.random.default_rng(4)
    nsys, n = 70, 17
    axis = 0 if case == "interleaved-F" else -1
    shape = (n, nsys) if axis == 0 else (nsys, n)
    a, c, d = (rng.standard_normal(shape) for _ in range(3))
    b = 4 + rng.random(shape)
    if case == "interleaved-F":
        a, b, c, d = (np.asfortranarray(v) for v in (a, b, c, d))
    start = rng.integers(-1, n, nsys) if case == "start" else None
    res = _runs(monkeypatch, lambda: clts.solve_tridiagonal(a, b, c, d, axis=axis, start=start,
                                                             device=device), 9)
    _same(res, ("x",))


@pytest.mark.oclgrind
@ZERO_COPY
@pytest.mark.parametrize("history,order", [("all", "strided"), ("ROC", "C")])
def test_bfast(device, monkeypatch, zero_copy, history, order):
    _zero_copy(device, monkeypatch, zero_copy)
    rng = np.random.default_rng(5)
    N, M = 90, 45
    t = np.arange(N) * 16.0 + 3
    y = 3 + np.sin(2 * np.pi * t[:, None] / 365 + rng.uniform(0, 6, M)) \
        + 0.3 * rng.standard_normal((N, M))
    y[60:, ::3] -= 2
    y[rng.random((N, M)) < 0.3] = np.nan
    y = _layout(y, order)
    res = _runs(monkeypatch, lambda: clts.bfast_monitor(y, t, t[50], history=history,
                                                         detailed=True, device=device), 16)
    names = ("breaks", "means", "magnitudes", "valids", "mosum", "bounds", "coef", "prediction",
             "sigma") + (("history_start",) if history == "ROC" else ())
    _same(res, names)


# -- the loop itself -------------------------------------------------------------------------
def _recording(log, fail_at=None):
    def upload(i, a, b, slot, queue):
        log.append(("up", i, slot))
        return []

    def compute(i, a, b, slot, wait_for):
        if i == fail_at:
            raise RuntimeError("planted")
        log.append(("compute", i, slot))
        return []

    def download(i, a, b, slot, queue, wait_for):
        log.append(("down", i, slot))
        return [lambda: log.append(("done", i, slot))]
    return dict(upload=upload, compute=compute, download=download)


@ZERO_COPY
@pytest.mark.parametrize("slots", [2, 3])
def test_order_pipelined(device, monkeypatch, slots, zero_copy):
    clts.set_options(pipeline=True)
    clts.set_options(zero_copy=zero_copy == "1")
    log = []
    chunks = [(i * 10, i * 10 + 10) for i in range(6)]
    pipeline.run_pipelined(device, chunks, slots=slots, **_recording(log))
    pos = {e: k for k, e in enumerate(log)}
    for i in range(6):
        s = i % slots
        assert pos[("up", i, s)] < pos[("compute", i, s)] < pos[("down", i, s)] \
            < pos[("done", i, s)]
        if i + 1 < 6:       # the next chunk's upload does not wait for this chunk's results
            assert pos[("up", i + 1, (i + 1) % slots)] < pos[("done", i, s)]
        if i >= slots:      # a slot is reused only after its previous chunk was delivered
            assert pos[("done", i - slots, s)] < pos[("up", i, s)]


def test_order_sequential(device, monkeypatch):
    log = []
    clts.set_options(pipeline=False)
    pipeline.run_pipelined(device, [(0, 5), (5, 10), (10, 12)], **_recording(log))
    assert log == [(k, i, 0) for i in range(3) for k in ("up", "compute", "down", "done")]


def test_error_names_chunk(device):
    log = []
    with pytest.raises(RuntimeError, match="planted"):
        pipeline.run_pipelined(device, [(0, 4), (4, 8), (8, 9)], **_recording(log, fail_at=1))
    assert faults.current_chunk() == (1, 4, 8, 3, 9)


def test_slot_buffers_not_from_scratch_pool(device):
    """A slot's buffer is written on the copy queue while the device queue may still run
    kernels on a scratch buffer its caller dropped: the two must never be the same buffer."""
    from clts.runtime.memory import scratch
    tmp = scratch(device, (4096,), np.float64)
    ptr = tmp.data.int_ptr
    del tmp                         # back in the scratch pool, kernels may still use it
    with pipeline.ChunkIO(device) as io:
        assert io.temp(0, "y", (4096,), np.float64).data.int_ptr != ptr


def test_aligned_chunks(device, monkeypatch):
    """Chunks of an aligned output start at the device's host-pointer alignment."""
    from clts.runtime.memory import host_empty, host_ptr_alignment
    al = host_ptr_alignment(device) or 1
    m = pipeline.aligned_multiple(device, 115 * 8, 8)
    assert m % 8 == 0 and (m * 115 * 8) % al == 0
    x = host_empty(device, (4 * m, 115), np.float64)
    assert all(x[k * m:].ctypes.data % al == 0 for k in range(4))
