"""The launch path: one-shot launches of shared kernels, prepared launches (arguments set
once, re-enqueued), scalar packing, kernel pools, threads, emulated limits, timing and faults."""
import threading

import numpy as np
import pytest

from clts.errors import DeviceError
from clts.runtime import faults, programs, timing
from clts.runtime.launch import Launch, launch, prepare

SRC = """
kernel void k(global float* out, int i, uint u, float f, long l, short h, uchar c) {
    const int g = get_global_id(0);
    out[6 * g + 0] = (float)i; out[6 * g + 1] = (float)u; out[6 * g + 2] = f;
    out[6 * g + 3] = (float)l; out[6 * g + 4] = (float)h; out[6 * g + 5] = (float)c;
}
kernel void add(global int* x, int v) { x[get_global_id(0)] += v; }
"""


@pytest.fixture(autouse=True)
def _quiet_builds():
    """The tests' own programs and pyopencl's fill / zeros kernels build as clts' do: Intel's
    CPU runtime logs every build, which pyopencl reports as a CompilerWarning."""
    with programs.quiet_pyopencl_builds():
        yield


def _program(device):
    import pyopencl as cl
    return programs.Program(cl.Program(device.context, SRC).build(), "test", {}, SRC)


def _scalars(n):
    return (np.int32(-n), np.uint32(3_000_000_000 + n), np.float32(0.5 + n), np.int64(-7 * n),
            np.int16(-n), np.uint8(n % 256))


def _expect(n):
    return np.array([-n, 3_000_000_000 + n, 0.5 + n, -7 * n, -n, n % 256], np.float32)


def test_scalars_of_every_kind_through_both_paths(device):
    import pyopencl.array as cla
    prg = _program(device)
    out = cla.zeros(device.queue, 12, np.float32)
    launch(device, prg.kernel("k"), 2, None, out.data, *_scalars(5))
    assert np.array_equal(out.get(), np.tile(_expect(5), 2))
    go = prepare(device, prg, "k", 2, None, out.data, *_scalars(9))
    for _ in range(3):
        out.fill(0)
        go()
        assert np.array_equal(out.get(), np.tile(_expect(9), 2))
    go.set(1, np.int32(-11), 3, np.float32(2.25))     # changed arguments, the rest kept
    go()
    want = _expect(9)
    want[0], want[2] = -11, 2.25
    assert np.array_equal(out.get(), np.tile(want, 2))


def test_wrong_argument_count_is_a_type_error(device):
    prg = _program(device)
    import pyopencl.array as cla
    x = cla.zeros(device.queue, 4, np.int32)
    with pytest.raises(TypeError, match="takes 2 arguments, 1 given"):
        launch(device, prg.kernel("add"), 4, None, x.data)
    with pytest.raises(TypeError, match="takes 2 arguments, 3 given"):
        prepare(device, prg, "add", 4, None, x.data, np.int32(1), np.int32(2))


def test_prepared_launches_own_their_kernels_and_give_them_back(device):
    import pyopencl.array as cla
    prg = _program(device)
    x = cla.zeros(device.queue, 4, np.int32)
    a = prepare(device, prg, "add", 4, None, x.data, np.int32(1))
    b = prepare(device, prg, "add", 4, None, x.data, np.int32(10))
    assert a.kernel is not b.kernel and a.kernel is not prg.kernel("add")
    a(), b(), a()
    assert x.get().tolist() == [12] * 4
    ka = a.kernel
    del a
    c = prepare(device, prg, "add", 4, None, x.data, np.int32(100))
    assert c.kernel is ka               # the pooled kernel object, its arguments set anew
    c()
    assert x.get().tolist() == [112] * 4
    assert prg.owns(ka) and prg.owns(prg.kernel("add")) and not prg.owns(object())


def test_empty_range_enqueues_nothing(device):
    import pyopencl.array as cla
    prg = _program(device)
    x = cla.zeros(device.queue, 4, np.int32)
    assert launch(device, prg.kernel("add"), 0, None, x.data, np.int32(1)) is None
    assert prepare(device, prg, "add", (0, 4), None, x.data, np.int32(1))() is None
    assert x.get().tolist() == [0] * 4


def test_rebind_sets_sizes_and_every_argument(device):
    """``Launch.rebind``: a new range and all arguments for the next enqueue (a stream's update
    changes both), the buffers not held by the launch off an emulated device."""
    import weakref

    import pyopencl.array as cla
    prg = _program(device)
    x = cla.zeros(device.queue, 8, np.int32)
    go = prepare(device, prg, "add", 4, None, x.data, np.int32(1))
    go()
    y = cla.zeros(device.queue, 8, np.int32)
    for n, v in ((8, 10), (2, 100), (0, 1000)):
        go.rebind(n, None, y.data, np.int32(v))
        go()
    assert x.get().tolist() == [1] * 4 + [0] * 4
    assert y.get().tolist() == [110, 110] + [10] * 6
    z = cla.zeros(device.queue, 8, np.int32)
    go.rebind((8,), None, z.data, np.int32(3))
    gone = weakref.ref(z)
    go()
    assert z.get().tolist() == [3] * 8
    del z
    if not device.info.emulates:
        assert gone() is None and go.args == []
    with pytest.raises(TypeError, match="takes 2 arguments, 1 given"):
        go.rebind(4, None, y.data)


def test_threads_share_kernels_and_prepare_their_own(device):
    """Threads launching the same shared kernel with their own arguments, and threads
    re-enqueueing prepared launches, each see their own values."""
    import pyopencl as cl
    import pyopencl.array as cla
    prg = _program(device)
    n, rounds = 6, 25
    outs = [cla.zeros(device.queue, 6, np.float32) for _ in range(n)]
    adds = [cla.zeros(device.queue, 8, np.int32) for _ in range(n)]
    device.queue.finish()       # the zero fills, before the threads' own queues touch them
    errors = []
    barrier = threading.Barrier(n)

    def work(i):
        try:
            q = cl.CommandQueue(device.context)
            barrier.wait()
            go = prepare(device, prg, "add", 8, None, adds[i].data, np.int32(i + 1), queue=q)
            for r in range(rounds):
                launch(device, prg.kernel("k"), 1, None, outs[i].data, *_scalars(i), queue=q)
                go()
            q.finish()
            assert np.array_equal(outs[i].get(queue=q), _expect(i))
            assert adds[i].get(queue=q).tolist() == [rounds * (i + 1)] * 8
        except Exception as exc:       # noqa: BLE001 - reported below
            errors.append(exc)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_timing_and_faults_see_prepared_launches(device):
    import pyopencl.array as cla
    prg = _program(device)
    x = cla.zeros(device.queue, 4, np.int32)
    go = prepare(device, prg, "add", 4, None, x.data, np.int32(1))
    with timing(device) as t:
        go()
        go()
        launch(device, prg.kernel("add"), 4, None, x.data, np.int32(1))
    assert len(t.events) == 3 and t.kernel_seconds > 0
    before = faults.injected["enqueue"]
    with faults.inject("enqueue", after=1):
        go()
        with pytest.raises(Exception, match="injected"):
            go()
    assert faults.injected["enqueue"] == before + 1
    assert x.get().tolist() == [4] * 4


def test_emulated_limits_checked_when_prepared():
    from clts.runtime import emulation, usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation runs on pocl")
    small = emulation.emulate("a100", hits[0])
    prg = _program(small)
    import pyopencl.array as cla
    x = cla.zeros(small.queue, 2048, np.int32)
    with pytest.raises(DeviceError, match="work-group of 2048 work-items > 1024"):
        prepare(small, prg, "add", (64, 32), (64, 32), x.data, np.int32(1))
    seen = []
    small.state.launch_hook = lambda *a: seen.append(a[0])
    try:
        go = prepare(small, prg, "add", 2048, 256, x.data, np.int32(1))
        go()
        go()
    finally:
        small.state.launch_hook = None
    assert len(seen) == 2 and all(k is go.kernel for k in seen)
    assert isinstance(go, Launch)


def test_typed_setter_after_repeated_launches(device):
    """A kernel launched TYPE_AFTER times gets its scalar types declared to pyopencl (its
    generated setter); later launches give the same values, one with other numpy scalar types
    (the typed setter refuses them: set the general way, bytes as before) and a wrong argument
    count is still a TypeError."""
    import importlib

    import pyopencl.array as cla
    launch_mod = importlib.import_module("clts.runtime.launch")
    prg = _program(device)
    kern = prg.kernel("k")
    out = cla.zeros(device.queue, 6, np.float32)
    for n in range(launch_mod.TYPE_AFTER + 3):
        launch(device, kern, 1, None, out.data, *_scalars(n))
        assert np.array_equal(out.get(), _expect(n)), n
    assert launch_mod._KERNELS[kern][1] == launch_mod.TYPED
    other = (np.int32(-4), np.uint32(3_000_000_004), np.float64(4.5), np.int64(-28),
             np.int16(-4), np.uint8(4))                     # float64 where float is declared
    launch(device, kern, 1, None, out.data, *other)
    assert np.array_equal(out.get(), _expect(4))
    with pytest.raises(TypeError, match="takes 7 arguments"):
        launch(device, kern, 1, None, out.data, *_scalars(1)[:-1])


def test_fast_arrays_match_pyopencl(device):
    """empty_device / reshaped (pyopencl's fast constructor) give what cla.empty / reshape
    give: shape, strides, size, bytes, flags, offset, data, and reshaped shares the events."""
    import pyopencl.array as cla
    from clts.runtime.memory import empty_device, reshaped, scratch
    for shape, dtype in (((3, 5), np.float32), ((7,), np.float64), ((2, 0, 4), np.int32),
                         (6, np.bool_), ((), np.float64)):
        want = cla.empty(device.queue, shape, dtype)
        for got in (empty_device(device.queue, device.context, shape, dtype),
                    scratch(device, shape, dtype)):
            assert (got.shape, got.strides, got.size, got.nbytes, got.dtype, got.offset) == (
                want.shape, want.strides, want.size, want.nbytes, want.dtype, want.offset)
            assert got.flags.c_contiguous and got.queue == device.queue
    a = cla.to_device(device.queue, np.arange(24, dtype=np.float32))
    v = reshaped(a, (2, 3, 4))
    w = a.reshape(2, 3, 4)
    assert (v.shape, v.strides, v.offset) == (w.shape, w.strides, w.offset)
    assert v.base_data is a.base_data and v.events is a.events
    assert np.array_equal(v.get(), np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    assert reshaped(a[1:], (23,)).shape == (23,)        # an offset view: pyopencl's reshape
