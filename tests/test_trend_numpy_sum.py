"""numpy's pairwise summation on the device (``numpy_sum`` of templates/trend/multi.cl.mako):
the same bits as ``np.add.reduce`` for every length from 1 to 1,200 and a spread of longer ones
(recursions up to 10 levels deep), with the values strided across series as the trend kernels
keep them, and the scratch bound the host sizes its pending sums by."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyopencl as cl
import pytest

from clts.runtime.programs import render
from clts.trend.multi_device import cpu_sums, sum_depth

PROBE = """
kernel void probe_sum(global const stat* a, const int B, global const int* ns,
                      global stat* pend, global stat* out) {
    const int b = get_global_id(0);
    if (b >= B) return;
    out[b] = numpy_sum(a + b, B, ns[b], pend + b, B);
}
"""


@lru_cache(maxsize=None)
def tree_depth(n):
    """The depth of numpy's recursion over n values, by the recursion itself."""
    if n <= 128:
        return 0
    h = n // 2
    h -= h % 8
    return 1 + max(tree_depth(h), tree_depth(n - h))


def test_sum_depth_bounds_every_shorter_length():
    worst = 0
    for n in range(1, 40_000):
        worst = max(worst, tree_depth(n))
        assert sum_depth(n) >= worst, n
    assert sum_depth(128) == 0 and sum_depth(2 ** 31 - 1) <= 26


@pytest.mark.filterwarnings("ignore::pyopencl.CompilerWarning")
def test_numpy_sum_bits(device):
    if not device.fp64:
        pytest.skip("numpy_sum runs in the statistics' double here")
    src = render("trend/multi.cl.mako", dict(real="double", stat="double", min_valid=3, ok=0,
                                             too_few=1, cpu_sums=cpu_sums(device))) + PROBE
    prg = cl.Program(device.context, src).build()
    rng = np.random.default_rng(5)
    lens = np.r_[np.arange(1, 1201), rng.integers(1201, 70_000, 24)].astype(np.int32)
    B, N = lens.size, int(lens.max())
    a = rng.standard_normal((N, B)) * 10.0 ** rng.integers(-6, 7, (N, B))
    mf = cl.mem_flags
    ctx, q = device.context, device.queue
    ab = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    nb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=lens)
    pend = cl.Buffer(ctx, mf.READ_WRITE, sum_depth(N) * B * 8)
    ob = cl.Buffer(ctx, mf.WRITE_ONLY, B * 8)
    prg.probe_sum(q, (B,), None, ab, np.int32(B), nb, pend, ob)
    out = np.empty(B)
    cl.enqueue_copy(q, out, ob)
    ref = np.array([np.add.reduce(np.ascontiguousarray(a[:n, b])) for b, n in enumerate(lens)])
    bad = np.flatnonzero(out.view(np.int64) != ref.view(np.int64))
    assert bad.size == 0, lens[bad][:10]
