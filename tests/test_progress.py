"""Progress bars on long calls that run in one chunk: STL over its iterations, the matrix
profile over its diagonals (launches split so that the bar moves); the same results; the
no-progress switch turns them off."""
import importlib
import json

import numpy as np
import pytest

import clts
from clts.runtime import memory

pytest.importorskip("tqdm")
stl_chunks = importlib.import_module("clts.stl.chunks")
diagonal = importlib.import_module("clts.mp.diagonal")


@pytest.fixture
def bars_now(monkeypatch):
    """Bars from the first step and for small calls (the thresholds are for long calls)."""
    monkeypatch.setattr(memory, "PROGRESS_DELAY", 0)
    monkeypatch.setattr(stl_chunks, "PASS_BAR_MIN", 1)
    monkeypatch.setattr(diagonal, "BAR_MIN_PAIRS", 0)
    monkeypatch.setattr(diagonal, "BAR_MIN_SECONDS", 0)
    clts.set_options(progress=True)        # the suite turns bars off; restored after the test


def test_stl_one_chunk_bar_over_iterations(device, bars_now, capsys, monkeypatch):
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12) + 0.01 * t + np.random.default_rng(0).random((8, 96))
    r = clts.stl(y, 12, robust=True, device=device, fused=0)   # separate kernels (GPUs fuse)
    err = capsys.readouterr().err
    assert "stl" in err and "iteration" in err and "/32" in err     # 16 outer x 2 inner
    quiet = clts.stl(y, 12, robust=True, device=device, progress=False, fused=0)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(r.trend, quiet.trend)
    clts.set_options(progress=False)
    clts.stl(y, 12, device=device)
    assert capsys.readouterr().err == ""


def test_matrix_profile_bar_moves_and_results_agree(device, bars_now, capsys):
    T = np.cumsum(np.random.default_rng(1).standard_normal(3000))
    r = clts.matrix_profile(T, 32, device=device)
    err = capsys.readouterr().err
    assert "matrix profile" in err and "pair" in err
    quiet = clts.matrix_profile(T, 32, device=device, progress=False)
    assert capsys.readouterr().err == ""
    np.testing.assert_array_equal(r.I, quiet.I)
    np.testing.assert_allclose(r.P, quiet.P, rtol=1e-12)


def test_matrix_profile_bar_shows_estimate_up_front(device, bars_now, capsys, monkeypatch,
                                                    tmp_path):
    """A k = 1 self-join of at least estimate.AUTO_CAL_PAIRS pairs calibrates first where no
    calibration exists (once; fake timings here) and its bar says the estimate; a top-k run's
    bar has none (the calibration is of k = 1)."""
    from clts.mp import estimate
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(diagonal, "EST_MIN_PAIRS", 0)
    monkeypatch.setattr(estimate, "AUTO_CAL_PAIRS", 1e6)
    calls = []

    def fake(dev, precision, n, run, m=estimate.CAL_M):
        calls.append(n)
        return 1e-9 * n * n
    monkeypatch.setattr(estimate, "calibration_time", fake)
    T = np.cumsum(np.random.default_rng(1).standard_normal(3000))
    clts.matrix_profile(T, 32, device=device)
    assert calls and "(estimate " in capsys.readouterr().err
    calls.clear()
    clts.matrix_profile(T, 32, device=device)
    assert not calls and "(estimate " in capsys.readouterr().err
    # a calibration taken on a loaded machine is the bar's estimate too (it used to be none)
    path = estimate.calibration_path(device, "double")
    data = json.loads(path.read_text())
    data["calibration"]["load"] = 9.0
    path.write_text(json.dumps(data))
    clts.matrix_profile(T, 32, device=device)
    assert not calls and "(estimate " in capsys.readouterr().err
    clts.matrix_profile(T, 32, device=device, k=2)
    err = capsys.readouterr().err
    assert "matrix profile" in err and "(estimate " not in err
    assert diagonal._duration(5.04) == "5.0 s" and diagonal._duration(162) == "2.7 min"
