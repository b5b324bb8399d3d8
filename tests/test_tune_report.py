"""``clts-tune --report``: the markdown report of a device (tiny workloads here)."""
from __future__ import annotations

import numpy as np

from clts.tune import cli, report


def test_report_only(device, tmp_path, monkeypatch):
    import clts
    a = np.random.default_rng(0).random((64, 40))

    def tiny(dev, quick):
        return [("tridiagonal (auto)", "64 x 40", lambda: clts.solve_tridiagonal(a, a + 3, a, a,
                                                                                device=dev),
                 5 * a.nbytes, lambda: 1.0, "one second")]
    monkeypatch.setattr(report, "_workloads", tiny)
    monkeypatch.setattr(report, "REPEATS", 2)
    out = tmp_path / "r.md"
    assert cli.main(["--only", "none", "--report", str(out), "--device", device.slug]) == 0
    text = out.read_text()
    assert f"# clts report: {device.name}" in text
    assert f"| max work-group | {device.max_work_group} |" in text
    # every effective profile value with the file it came from
    assert "| stl.loess.jump_threshold |" in text and "generic-" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| tridiagonal"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[2]) > 0 and cells[4].endswith("%") and cells[7] == "1"


def test_report_names_the_recorded_description(tmp_path):
    import pytest

    from clts.runtime import emulation, usable
    if not any(i.type == "cpu" and not i.simulator for i in usable()):
        pytest.skip("emulation runs on a CPU OpenCL device; none here (a GPU-only machine)")
    dev = emulation.emulate("mi100")
    lines = report._device_section(dev)
    assert any("recorded description `mi100` matches" in ln and "same limits" in ln
               for ln in lines)
