"""stumpy as the tests' anchor: a script run once in a child process with numba's JIT off
(stumpy's JIT warm-up costs tens of seconds a process; interpreted, the small cases take
seconds), inputs and outputs through .npz files."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest


def run_stumpy(tmp_path_factory, name: str, script: str, inputs: dict, timeout: int = 600):
    """Run ``script`` (argv: input .npz, output .npz) on ``inputs`` in a child without JIT;
    returns the outputs as a dict. Skips where stumpy is not installed."""
    pytest.importorskip("stumpy")
    d = tmp_path_factory.mktemp(name)
    np.savez(d / "in.npz", **inputs)
    (d / "run.py").write_text(script)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, str(d / "run.py"), str(d / "in.npz"), str(d / "out.npz")],
                   check=True, env=env, timeout=timeout)
    return dict(np.load(d / "out.npz"))
