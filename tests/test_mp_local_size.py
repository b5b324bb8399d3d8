"""On a driver that compiles a kernel's work-group function per local size at its first enqueue
(pocl), the matrix profile's launches use one local size per kernel whatever the series length
or window length (clts/mp/local_size.py): a new length compiles nothing. Checked by recording
the local size of every enqueue over two series lengths (across a doubling: the range buckets
of ``runtime.launch.fixed_local`` changed there) and two window lengths."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import clts

launch_mod = importlib.import_module("clts.runtime.launch")

#: (series length, window length) of the calls: the sizes stay small (programs are built per
#: structure, not per size: these reuse the other mp tests' builds)
SIZES = [(300, 20), (1100, 20), (1100, 37)]


def _calls(dev, n, m):
    rng = np.random.default_rng(n + m)
    T = np.cumsum(rng.standard_normal(n))
    U = np.cumsum(rng.standard_normal(n))
    clts.matrix_profile(T, m, device=dev, progress=False)
    clts.matrix_profile(T, m, U[:n // 2 + m], device=dev, progress=False)
    clts.matrix_profile(T, m, k=3, device=dev, progress=False)
    clts.aamp(T, m, device=dev)
    clts.mass(U[:m], T, device=dev)
    clts.mpdist(T, U, m, device=dev)
    clts.ostinato([T, U, T[n // 3:] * 2], m, device=dev)
    clts.scrump(T, m, percentage=0.1, pre_scrump=True, device=dev).update()
    s = clts.stumpi(T, m, device=dev)
    for t in U[:3]:
        s.update(t)
    assert np.isfinite(s.P_).any()


def test_one_local_size_per_kernel(device, monkeypatch):
    if not launch_mod.compiles_per_local_size(device):
        pytest.skip("the driver compiles nothing per local size")
    launch_mod._bind()      # the real enqueue bound first, then wrapped
    real = launch_mod._enqueue
    seen = {}

    def enqueue(queue, kernel, global_size, local_size, *rest):
        seen.setdefault(kernel.function_name, set()).add(
            None if local_size is None else tuple(local_size))
        return real(queue, kernel, global_size, local_size, *rest)

    monkeypatch.setattr(launch_mod, "_enqueue", enqueue)
    for n, m in SIZES:
        _calls(device, n, m)
    assert seen
    several = {k: v for k, v in seen.items() if len(v) > 1 or None in v}
    assert not several, several
