"""Per-device state lives in one object the Device owns (``device.state``): nothing else is
written on a Device, nothing is keyed by id(), and ``clear()`` forgets it all."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

import clts
from clts.runtime import devices

ROOT = Path(__file__).resolve().parents[1]
OWN = {"info", "description", "cl_device", "context", "queue", "_profile", "state"}


def test_calls_write_nothing_on_the_device(device):
    rng = np.random.default_rng(0)
    y = np.sin(np.arange(96) * 2 * np.pi / 12)[None] + rng.normal(size=(40, 96))
    a, c = rng.uniform(-1, 1, (2, 64, 20))
    b, d = 4 + rng.uniform(0, 1, (64, 20)), rng.normal(size=(64, 20))
    with clts.set_options(max_chunk=7):               # the chunk loop: slots, staging, queues
        clts.stl(y, 12, device=device)
        clts.solve_tridiagonal(a, b, c, d, device=device)
        clts.matrix_profile(np.cumsum(rng.normal(size=200)), 8, device=device)
    assert set(vars(device)) <= OWN
    st = device.state
    assert st.programs and "scratch" in st.pools
    assert st.programs.keys() <= st.build_locks.keys()      # a failed build keeps its lock


def test_clear_forgets_and_the_next_call_rebuilds():
    dev = devices.Device(clts.get_device().info)          # a private device: a fresh state
    rng = np.random.default_rng(1)
    a, c = rng.uniform(-1, 1, (2, 32, 10))
    b, d = 4 + rng.uniform(0, 1, (32, 10)), rng.normal(size=(32, 10))
    x1 = clts.solve_tridiagonal(a, b, c, d, device=dev).x
    assert dev.state.programs and dev.state.constants
    assert dev.state is not clts.get_device().state
    dev.state.release_memory()
    assert dev.state.programs and not dev.state.staging and not dev.state.kept
    dev.state.clear()
    assert not (dev.state.programs or dev.state.pools or dev.state.build_locks
                or dev.state.constants or dev.state.copy_queue)
    x2 = clts.solve_tridiagonal(a, b, c, d, device=dev).x
    assert np.array_equal(x1, x2) and dev.state.programs


def test_no_state_keyed_by_id_or_written_into_a_device():
    offenders = []
    for path in (ROOT / "clts").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"\bid\((dev|device)\)|\b(dev|device)\.__dict__|setattr\((dev|device)\b", text):
            offenders.append(path.relative_to(ROOT).as_posix())
    assert offenders == []
