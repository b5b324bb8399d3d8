"""The ``clts`` command's device listing and profile printout."""
from clts import cli
from clts.runtime import devices as devmod


def test_clts_devices_lists_every_device_with_status(capsys):
    assert cli.main(["devices"]) == 0
    out = capsys.readouterr().out
    for col in ("platform", "device", "type", "driver", "fp64", "local", "max alloc", "global",
                "status", "profile"):
        assert col in out.splitlines()[0]
    for i in devmod.discover():
        assert i.name in out
        if not i.ok:
            assert "UNUSABLE" in out and i.reason[:30] in out
    assert "(default)" in out


def test_clts_profile_prints_files(capsys):
    assert cli.main(["profile", "--device", str(devmod.usable()[0].index)]) == 0
    out = capsys.readouterr().out
    assert "generic-" in out and "fingerprint" in out


def test_clts_bad_device_is_a_clean_error(capsys):
    assert cli.main(["profile", "--device", "no-such-device-xyz"]) == 2
    assert "no OpenCL device matches" in capsys.readouterr().err


def test_clts_demo_quick_runs_every_algorithm(capsys):
    assert cli.main(["demo", "--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("solve_tridiagonal", "stl", "bfast_monitor", "matrix_profile"):
        assert name in out
    assert "best motif at 1000 <-> 5000" in out or "best motif at 5000 <-> 1000" in out
