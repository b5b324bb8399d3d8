"""Device faults, injected (``clts.runtime.faults.inject``): an allocation failure retries with
smaller chunks and then raises ``DeviceError`` with the sizes; a failed enqueue or build in the
middle of a chunked run names the chunk and never returns a partial result."""
from __future__ import annotations

import re

import numpy as np
import pytest

import clts
from clts.errors import DeviceError, KernelBuildError
from clts.runtime import devices as devmod
from clts.runtime import faults

#: what the tests injected and survived (printed at the end of the test run)
REPORT = []


def _cases(dev):
    rng = np.random.default_rng(9)
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12) + 0.3 * rng.standard_normal((40, 96))
    a, c, d = (rng.standard_normal((400, 12)) for _ in range(3))
    b = 4 + rng.random((400, 12))
    dates = 2000 + np.arange(80) / 23
    cube = np.sin(2 * np.pi * dates)[:, None] + 0.1 * rng.standard_normal((80, 64))
    cube[60:, ::3] -= 1
    T = np.cumsum(rng.standard_normal(600))
    return {
        "stl": lambda: clts.stl(y, 12, device=dev).trend,
        "solve_tridiagonal": lambda: clts.solve_tridiagonal(a, b, c, d, device=dev).x,
        "bfast_monitor": lambda: clts.bfast_monitor(cube, dates, dates[50], freq=1, device=dev).breaks,
        "matrix_profile": lambda: clts.matrix_profile(T, 16, device=dev).P,
    }


@pytest.mark.parametrize("name", ["stl", "solve_tridiagonal", "bfast_monitor",
                                  "matrix_profile"])
def test_allocation_failure_retries_with_smaller_chunks(device, name, monkeypatch, caplog):
    clts.set_options(max_chunk=16)          # several chunks
    whole = _cases(device)[name]()
    chunks = []
    real_check = faults.check
    monkeypatch.setattr(faults, "check", lambda kind, items=0: chunks.append(
        faults.current_chunk()))
    _cases(device)[name]()          # the launches of a call like the next (a first call has more)
    monkeypatch.setattr(faults, "check", real_check)
    # the first failure in the chunks, from the second chunk's first launch on (the launches
    # before the chunks, e.g. the matrix profile's preparation on the device, have no smaller
    # chunks to retry with)
    inside = [(c[0], i) for i, c in enumerate(chunks) if c is not None]
    after = next((i for k, i in inside if k >= 1), inside[0][1])    # one chunk: its first launch
    with faults.inject("alloc", times=2, after=after) as plan:
        got = _cases(device)[name]()
    assert plan["times"] == 0, "the fault was not hit"
    np.testing.assert_array_equal(got, whole)
    assert "retrying with" in caplog.text
    REPORT.append(f"faults: {name} on {device.slug}: 2 allocation failures survived "
                  "(smaller chunks, identical result)")


@pytest.mark.parametrize("name", ["stl", "solve_tridiagonal", "bfast_monitor",
                                  "matrix_profile"])
def test_allocation_failure_everywhere_is_a_device_error(device, name):
    with faults.inject("alloc", times=10**6):
        with pytest.raises(DeviceError, match=r"(?s)could not allocate.*global memory \d+"):
            _cases(device)[name]()


@pytest.mark.parametrize("name", ["stl", "solve_tridiagonal", "bfast_monitor",
                                  "matrix_profile"])
def test_failed_enqueue_names_the_chunk(device, name, monkeypatch):
    clts.set_options(max_chunk=2 if name == "matrix_profile" else 16)
    calls = []
    real_check = faults.check
    monkeypatch.setattr(faults, "check", lambda kind, items=0: calls.append(kind))
    _cases(device)[name]()                          # count the launches of a clean run
    monkeypatch.setattr(faults, "check", real_check)
    with faults.inject("enqueue", after=calls.count("enqueue") // 2):
        with pytest.raises(DeviceError, match=r"chunk \d+ of \d+ \(items \d+ to \d+ of \d+\)"
                                              r".*no partial result") as exc:
            _cases(device)[name]()
    assert exc.value.__cause__ is not None
    REPORT.append(f"faults: {name} on {device.slug}: enqueue failure mid-run named its chunk")


def test_failed_build_mid_run_names_the_chunk(device, monkeypatch):
    """The third program build of a fresh device's 3-chunk STL fails: the error names the chunk
    it happened in, and the next call works. (A plan that builds fewer programs, such as the
    fused STL on a GPU, built before the first chunk, has no build to fail mid-run: skipped
    once the next call is checked.)"""
    clts.set_options(max_chunk=16)
    fresh = devmod.Device(device.info)                  # nothing built yet
    raised = False
    with faults.inject("build", after=2):
        try:
            _cases(fresh)["stl"]()
        except KernelBuildError as exc:
            raised = True
            assert re.search(r"stl: chunk \d of 3", str(exc)), str(exc)
    np.testing.assert_array_equal(_cases(fresh)["stl"](), _cases(device)["stl"]())
    if not raised:
        pytest.skip("this device's STL plan builds fewer than three programs")
    REPORT.append(f"faults: stl on {device.slug}: build failure named its chunk, next call ok")
