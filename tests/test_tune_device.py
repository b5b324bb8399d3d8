"""clts-tune end to end on every working OpenCL device, with tiny entries defined here.

The entries time the runtime's copy kernel through ``dev.program`` and ``launch`` (the path every
algorithm uses). Half of the candidates launch only half the work-items: their result is wrong,
so they must be rejected by the check on the real device and never chosen. The run goes through
the ``clts-tune`` command line and must write a profile that validates and that device lookup
then uses.
"""
from __future__ import annotations


import numpy as np
import pytest

from clts.runtime import launch, profiles
from clts.runtime.launch import pyopencl_kernels
from clts.tune import Crossover, Tunable
from clts.tune import cli
from clts.tune.space import Registry


class CopyWorkload:
    def __init__(self, n):
        self.n = n
        self.host = np.arange(n, dtype=np.float64)
        self._buffers = {}

    def buffers(self, dev):
        if dev.fingerprint not in self._buffers:
            import pyopencl.array as cla
            dtype = np.float64 if dev.fp64 else np.float32
            src = cla.to_device(dev.queue, self.host.astype(dtype))
            self._buffers[dev.fingerprint] = (src, cla.empty_like(src))
        return self._buffers[dev.fingerprint]


def run_copy(dev, width, wg, n_items_fraction, w):
    real = "double" if dev.fp64 else "float"
    k = dev.program("runtime/copy.cl.mako", real=real, width=width).kernel("copy")
    src, dst = w.buffers(dev)
    with pyopencl_kernels():        # pyopencl's fill kernel, built quietly as clts' own
        dst.fill(0)
    launch(dev, k, int(w.n // width * n_items_fraction), wg, src.data, dst.data)
    return dst.get()


def check_copy(result, w):
    return np.array_equal(result, w.host.astype(result.dtype))


def entries(workloads):
    tunable = Tunable(
        name="testcopy.copy", section="testcopy",
        params={"width": [1, 8], "wg": [16, 64], "launch": ["full", "half"]},
        workloads=lambda quick: workloads,
        run=lambda dev, p, w: run_copy(dev, p["width"], p["wg"],
                                       1.0 if p["launch"] == "full" else 0.5, w),
        check=check_copy,
        constraint=lambda p, dev: p["wg"] <= dev.max_work_group,
        description="copy kernel (test entry)")
    crossover = Crossover(
        name="testcopy.vector", key="testcopy.vec_min_n", versions=("w1", "w8"),
        values=[1 << 12, 1 << 14, 1 << 16], quick_values=[1 << 12, 1 << 16],
        workload=CopyWorkload,
        run=lambda dev, version, w: run_copy(dev, 1 if version == "w1" else 8, None, 1.0, w),
        check=check_copy, description="scalar vs double8 copy (test entry)")
    return tunable, crossover


@pytest.fixture
def registered(monkeypatch):
    # the command's machinery on every device: on a GPU the tuner would also widen these test
    # entries' work-groups and leave their microsecond copies undecided (tune/sizing.py, tested
    # in test_tune_gpu.py); here every device is tuned as a CPU is
    from clts.tune import sizing
    monkeypatch.setattr(sizing, "is_gpu", lambda device: False)
    monkeypatch.setitem(profiles.schema(), "testcopy",
                        {"width": 1, "wg": 64, "launch": "full", "vec_min_n": 1024})
    reg = Registry()
    for e in entries([CopyWorkload(1 << 14), CopyWorkload(1 << 16)]):
        reg.add(e)
    monkeypatch.setattr(cli, "load_all", lambda: reg)
    monkeypatch.setattr(cli, "REGISTRY", reg)
    return reg


def test_clts_tune_writes_a_valid_profile_that_lookup_uses(device, registered, tmp_path,
                                                           monkeypatch, capsys):
    monkeypatch.setattr(cli, "cache_path", lambda dev: tmp_path / "cache.json")
    warmed = []
    monkeypatch.setattr(cli, "_warm", warmed.append)     # the kernels' warm-up: test_cli's
    out = tmp_path / "profile.yaml"
    rc = cli.main(["--device", device.slug, "--quick", "--only", "testcopy", "-o", str(out)])
    assert rc == 0
    assert warmed == [device]                   # after writing, the tuned profile's kernels
    printed = capsys.readouterr().out
    assert "testcopy.copy" in printed and "testcopy.vector" in printed
    data = profiles.load(out)                                # validates
    assert data["device"] == {"vendor": device.vendor, "name": device.name,
                              "type": device.type, "platform": device.platform}
    assert data["testcopy"]["launch"] == "full"             # the wrong half-launches lost
    assert data["testcopy"]["width"] in (1, 8) and data["testcopy"]["wg"] in (16, 64)
    from clts.tune.engine import NEVER
    assert data["testcopy"]["vec_min_n"] in (1 << 12, 1 << 16, NEVER)  # NEVER: w8 never won
    prov = data["provenance"]
    assert prov["fingerprint"] == device.fingerprint and prov["driver"] == device.driver
    ent = prov["entries"]["testcopy.copy"]
    assert sorted(ent["wrong"]) == sorted(f"width={w},wg={g},launch=half"
                                          for w in (1, 8) for g in (16, 64))
    assert len(ent["times"]) == 4 and all(t > 0 for t in ent["times"].values())
    assert ent["chosen"] == {k: data["testcopy"][k] for k in ("width", "wg", "launch")}
    assert set(prov["entries"]["testcopy.vector"]["winners"]) == {"4096", "65536"}
    # a second run (its own file: its timing race may choose another width than the first's)
    assert cli.main(["--device", device.slug, "--quick", "--only", "testcopy", "-o",
                     str(tmp_path / "again.yaml"), "--no-warmup"]) == 0 and warmed == [device]
    assert not (tmp_path / "cache.json").exists()             # a finished run drops its cache
    assert "testcopy" not in device.profile.values            # in-memory tuning undone
    # the written profile is what lookup now finds for this device
    prof = profiles.effective_profile(device, paths=[out, profiles.shipped_dir()])
    assert prof.level == 3
    assert prof.get("testcopy.width") == data["testcopy"]["width"]
    assert prof.source_of("testcopy.width") == str(out)


def test_clts_tune_list_and_dry_run(device, registered, tmp_path, capsys):
    assert cli.main(["--list"]) == 0
    listing = capsys.readouterr().out
    assert "testcopy.copy" in listing and "8 candidates" in listing
    assert "testcopy.vector" in listing and "w1 vs w8" in listing
    out = tmp_path / "p.yaml"
    assert cli.main(["--dry-run", "--device", device.slug, "-o", str(out)]) == 0
    assert "8 valid, 0 rejected" in capsys.readouterr().out
    assert not out.exists()
    with pytest.raises(SystemExit, match="matches no entry"):
        cli.main(["--only", "nosuch", "--dry-run"])


def test_parse_budget():
    assert cli.parse_budget("10m") == 600 and cli.parse_budget("90s") == 90
    assert cli.parse_budget("1.5h") == 5400 and cli.parse_budget("45") == 45
    import argparse
    with pytest.raises(argparse.ArgumentTypeError, match="10m"):
        cli.parse_budget("ten minutes")


@pytest.mark.parametrize("how", ["KeyboardInterrupt", "SIGTERM"])
def test_interrupted_clts_tune_resumes(device, registered, tmp_path, monkeypatch, capsys, how):
    """Ctrl-C, or SIGTERM (``timeout``), while a candidate is measured: an interruption (exit
    130, the measurements so far kept, the signal's handler restored), not a crash; the same
    command again resumes."""
    import os
    import signal
    import time
    monkeypatch.setattr(cli, "cache_path", lambda dev: tmp_path / "cache.json")
    tunable = registered.tunables["testcopy.copy"]
    real_run, seen = tunable.run, []

    def flaky(dev, p, w):
        if p not in seen:
            seen.append(dict(p))
        if len(seen) == 3 and flaky.interrupt:
            if how == "SIGTERM":
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)
            raise KeyboardInterrupt
        return real_run(dev, p, w)
    flaky.interrupt = True
    monkeypatch.setattr(tunable, "run", flaky)
    handler = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "p.yaml"
    args = ["--device", device.slug, "--quick", "--only", "testcopy.copy", "-o", str(out)]
    assert cli.main(args) == 130
    err = capsys.readouterr().err
    assert "resume" in err and not out.exists()
    assert ("interrupted by SIGTERM" in err) == (how == "SIGTERM")
    assert signal.getsignal(signal.SIGTERM) == handler
    from clts.tune.cache import MeasurementCache
    assert len(MeasurementCache(tmp_path / "cache.json")) == 2
    flaky.interrupt, seen[:] = False, []
    assert cli.main(args) == 0
    assert "resuming: 2 measured" in capsys.readouterr().err
    assert len(seen) == 6                  # the 2 cached candidates were not run again
    assert profiles.load(out)["testcopy"]["launch"] == "full"
    assert not (tmp_path / "cache.json").exists()


def test_clts_tune_command_on_registered_tridiag(device, tmp_path):
    """The real command (a child process) on real registered entries: one tunable and one
    crossover of the tridiagonal solver, quick, on pocl only (CI time)."""
    import subprocess
    import sys
    from clts.tune import load_all
    if "pocl" not in device.slug:
        pytest.skip("end-to-end command run on pocl only")
    reg = load_all()
    if "tridiag.flat" not in reg.tunables or "tridiag.pcr_max_batch" not in reg.crossovers:
        pytest.skip("tridiag tuning entries not registered")
    out = tmp_path / "tri.yaml"
    cmd = [sys.executable, "-m", "clts.tune.cli", "--quick", "--device", device.slug,
           "--only", "tridiag.flat,tridiag.pcr_max_batch", "-o", str(out),
           "--cache", str(tmp_path / "cache.json")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env={**__import__("os").environ, "CLTS_NO_PROGRESS": "1"})
    assert p.returncode == 0, p.stderr[-3000:]
    assert "tridiag.flat " in p.stdout and "tridiag.pcr_max_batch" in p.stdout
    data = profiles.load(out)
    flat = reg.tunables["tridiag.flat"].params
    assert data["tridiag"]["flat"]["wg"] in flat["wg"]
    assert data["tridiag"]["flat"]["chunk"] in flat["chunk"]
    assert isinstance(data["tridiag"]["auto"]["pcr_max_batch"], int)
    ent = data["provenance"]["entries"]["tridiag.flat"]
    assert ent["strategy"] == "exhaustive"
    assert len(ent["times"]) + len(ent.get("wrong", {})) == ent["candidates"] > 1
    assert data["device"]["name"] == device.name
    assert not (tmp_path / "cache.json").exists()


def test_event_timer_modes(device):
    from clts.tune.timer import EventTimer
    w = CopyWorkload(1 << 16)

    def two_launches():
        run_copy(device, 1, None, 1.0, w)
        run_copy(device, 8, None, 1.0, w)
    timer = EventTimer(device)
    two_launches()
    kernel, span, wall = (timer.time(two_launches, ("e", "c", 0), m)
                          for m in ("kernel", "span", "wall"))
    assert kernel > 0 and span > 0 and wall > 0
    assert timer.wall_fallbacks == 0
    assert timer.time(lambda: None, ("e", "nothing", 0)) >= 0     # nothing launched: wall time
    assert timer.wall_fallbacks == 1


def test_unwritable_output_is_refused_before_measuring(device, registered, tmp_path,
                                                       monkeypatch, capsys):
    """-o is checked first: a profile of another device, a directory or an unwritable place is
    refused before any candidate runs (it used to fail with a traceback after the whole run)."""
    monkeypatch.setattr(cli, "cache_path", lambda dev: tmp_path / "cache.json")
    from clts.tune.cache import MeasurementCache
    out = tmp_path / "p.yaml"
    out.write_text("schema: 1\ndevice: {name: some other device, type: cpu}\n")
    base = ["--device", device.slug, "--quick", "--only", "testcopy.copy"]
    assert cli.main(base + ["-o", str(out)]) == 2
    assert "not for" in capsys.readouterr().err
    assert cli.main(base + ["-o", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli.main(base + ["-o", str(blocker / "sub" / "p.yaml")]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert len(MeasurementCache(tmp_path / "cache.json")) == 0      # nothing was run


@pytest.mark.parametrize("bad", [["--repeats", "-3"], ["--repeats", "0"], ["--budget", "0s"],
                                 ["--budget", "-5m"]])
def test_bad_numbers_are_refused(registered, bad, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--dry-run", "--only", "testcopy"] + bad)
    assert exc.value.code == 2
    assert bad[0] in capsys.readouterr().err


def test_entry_that_launches_nothing_is_reported(device):
    from clts.tune import Settings, Tuner
    entry = Tunable(name="hostonly", section="x", params={"a": [1, 2]},
                    workloads=lambda q: [np.arange(10.0)], run=lambda d, p, w: w * p["a"],
                    check=lambda r, w: r.shape == w.shape)
    res = Tuner(device, settings=Settings(repeats=2, max_rounds=1)).tune_tunable(entry)
    assert res.best is not None
    assert any("launched no kernel" in w for w in res.warnings)


def test_device_all(registered, capsys):
    from clts.runtime import usable
    assert cli.main(["--device", "all", "--dry-run", "--only", "testcopy"]) == 0
    err = capsys.readouterr().err
    working = [i for i in usable() if not i.simulator]
    assert err.count("clts-tune: ") == len(working)
    assert all(i.slug in err for i in working)
    assert cli.main(["--device", "all", "-o", "x.yaml"]) == 2
    assert "single device" in capsys.readouterr().err


def test_tune_warm_up_reads_the_written_profile(device, monkeypatch, capsys):
    """After writing, clts-tune re-reads the device's profile and builds the common calls'
    kernels with it (clts.warmup.warmup), saying so on stderr."""
    import clts.warmup
    seen = []

    def fake_warmup(dev, verbose=True):
        seen.append((dev, dev._profile))        # the profile is read again after this point
        return {"programs built": 3, "total": 0.5}
    monkeypatch.setattr(clts.warmup, "warmup", fake_warmup)
    device.profile                               # loaded before
    cli._warm(device)
    if device.info.simulator:
        assert seen == []
        return
    assert seen == [(device, None)]
    assert "3 programs built in 0.5 s" in capsys.readouterr().err
