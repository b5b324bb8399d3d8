"""Fill and copy commands (``clts.runtime.commands``): through pyopencl's C entries where they
have the parameters written for, else through its public functions; the same bytes either way,
offsets honoured (timed in docs/performance.md: ~4 µs a copy against ~10 before on pocl)."""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

from clts.runtime import commands
from clts.runtime.memory import copy, fill


def _run(device, monkeypatch=None):
    """A copy and a fill with offsets (``monkeypatch``: pyopencl's public copy and fill
    functions refused while they run); the two arrays' values."""
    q = device.queue
    a = cla.to_device(q, np.arange(64, dtype=np.float32))
    b = cla.zeros(q, 64, np.float32)
    c = cla.zeros(q, 16, np.float32)
    q.finish()
    with monkeypatch.context() if monkeypatch else _nothing() as m:
        if m is not None:
            def refuse(*args, **kwargs):
                raise AssertionError("the public function ran")
            m.setattr(cl, "enqueue_copy", refuse)
            m.setattr(cl, "enqueue_fill_buffer", refuse)
        copy(device, b.data, a.data, 40, dst_offset=8, src_offset=16)
        fill(device, c[4:12], 2.5)
    return b.get(), c.get()


@contextmanager
def _nothing():
    yield None


@pytest.mark.parametrize("direct", [True, False], ids=["C entries", "public functions"])
def test_bytes_and_offsets(device, monkeypatch, direct):
    if device.info.simulator:
        pytest.skip("a simulator copies with a kernel")
    if not direct:
        monkeypatch.setattr(commands, "_entries", [None, None])
    b, c = _run(device)
    want = np.zeros(64, np.float32)
    want[2:12] = np.arange(4, 14)
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(c, np.where((np.arange(16) >= 4) & (np.arange(16) < 12),
                                              2.5, 0).astype(np.float32))


def test_entries_checked():
    """Found here with the parameters written for; a function with others is not used."""
    copy_fn, fill_fn = commands.entries()
    assert copy_fn is not None and fill_fn is not None

    def other(queue, src, dst, nbytes):         # pragma: no cover
        return None
    assert commands._parameters(other) != commands._COPY_PARAMS
    assert commands._parameters(copy_fn) == commands._COPY_PARAMS


def test_public_functions_skipped(device, monkeypatch):
    """With the C entries found, pyopencl's public copy and fill functions are not called."""
    if device.info.simulator:
        pytest.skip("a simulator copies with a kernel")
    b, c = _run(device, monkeypatch)
    assert b[2] == 4 and c[4] == 2.5 and c[3] == 0
