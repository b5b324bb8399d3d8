"""The ``clts`` command's device listing and profile printout."""
import logging

import numpy as np
import pytest

import clts
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


def _subparsers():
    import argparse
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def test_cli_defaults_are_the_functions_defaults():
    """Every option of an algorithm subcommand named like a parameter of its function has that
    parameter's default (``--freq`` once defaulted to 365.25 in the CLI, 365.0 in the API)."""
    import inspect
    checked = 0
    for cmd, p in _subparsers().items():
        if cmd not in cli.FUNCTIONS:
            continue
        params = inspect.signature(cli.function_of(cmd)).parameters
        for a in p._actions:
            if a.dest in params and a.option_strings and not a.required:
                default = params[a.dest].default
                if default is inspect.Parameter.empty:
                    continue        # a data argument (bfast's --dates: a GeoTIFF stack's CSV)
                assert a.default == default and type(a.default) is type(default), \
                    f"clts {cmd} {a.option_strings[0]}: {a.default!r}, function: {default!r}"
                checked += 1
    assert checked >= 9      # stl: seasonal, trend, robust; bfast: 5; mp: exclusion_zone


def test_clts_version_and_help_are_plain(capsys):
    from clts import __version__
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"clts {__version__}"
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "``" not in capsys.readouterr().out
    for cmd in ("stl", "bfast", "mp"):
        with pytest.raises(SystemExit):
            cli.main([cmd, "--help"])
        out = capsys.readouterr().out
        assert "default" in out and "``" not in out
    with pytest.raises(SystemExit):
        cli.main(["bfast", "--help"])
    assert "(default: 3)" in capsys.readouterr().out


def test_clts_bad_device_is_a_clean_error(capsys):
    assert cli.main(["profile", "--device", "no-such-device-xyz"]) == 2
    assert "no OpenCL device matches" in capsys.readouterr().err


def test_clts_demo_quick_prints_steps_and_writes_figures(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    level_before = logging.getLogger("clts").level
    assert cli.main(["demo", "--quick", "--out-dir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("clts demo on ") and str(tmp_path) in lines[0]
    for name, png in (("STL", "ndvi_trend_slope.png"), ("BFAST-Monitor", "ndvi_breaks.png"),
                      ("matrix profile", "sunspots_motifs.png")):
        line = next(x for x in lines if name in x)
        assert line.rstrip().endswith(png) and " s -> " in line
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG"
    # the demo quiets clts's notes while it runs, and gives the process its logging back (the
    # tests that run after it in this process read clts's warnings)
    assert logging.getLogger("clts").level == level_before
    assert len(lines) == 5                       # nothing else on stdout
    assert "warning" not in captured.err.lower()


def test_demo_figures_stay_out_of_git():
    """The demo's default folder, ./clts-demo (scripts/demo.sh runs it in the clone), is
    ignored, and no generated figure is committed."""
    import shutil
    import subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    assert cli.build_parser().parse_args(["demo"]).out_dir == "clts-demo"
    assert git("check-ignore", "-q", "clts-demo/ndvi_breaks.png").returncode == 0
    assert git("ls-files", "clts-demo").stdout == ""


# --------------------------------------------------------------- the algorithms on files



@pytest.fixture(scope="module")
def files(tmp_path_factory):
    xr = pytest.importorskip("xarray")
    pd = pytest.importorskip("pandas")
    pytest.importorskip("h5netcdf")
    pytest.importorskip("zarr")
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    n = 96
    t = np.arange(n)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 12)[:, None, None] + 0.03 * rng.standard_normal(
        (n, 5, 6))
    y[75:, :2] -= 0.3
    time = pd.date_range("2000-01-01", periods=n, freq="MS")
    ds = xr.Dataset({"ndvi": (("time", "y", "x"), y), "flag": (("time",), t * 1.0)},
                    coords={"time": time})
    ds.to_netcdf(d / "cube.nc", engine="h5netcdf")
    ds.isel(time=np.r_[1, 0, 2:n]).to_netcdf(d / "unsorted.nc", engine="h5netcdf")
    import importlib.util
    (ds.chunk({"y": 2}) if importlib.util.find_spec("dask") is not None else ds).to_zarr(
        d / "cube.zarr", zarr_format=2)     # Dask is an optional extra
    pd.DataFrame({"a": y[:, 0, 0], "b": y[:, 4, 4]}, index=time).to_csv(d / "two.csv")
    np.save(d / "one.npy", y[:, 0, 0])
    return d, ds


def _dev():
    return str(devmod.usable()[0].index)


def test_clts_stl_netcdf_to_zarr_with_plot(files, capsys):
    import xarray as xr
    import clts.xarray as cx
    d, ds = files
    out, png = d / "stl.zarr", d / "stl.png"
    assert cli.main(["stl", str(d / "cube.nc"), "--var", "ndvi", "--period", "12", "-o",
                     str(out), "--plot", str(png), "--device", _dev(), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert f"wrote {out}" in text and f"plot: {png}" in text
    res = xr.open_zarr(out).load()
    ref = cx.stl(ds["ndvi"], 12, device=int(_dev()))
    np.testing.assert_array_equal(res["trend"].values, ref["trend"].values)
    assert res["trend_slope"].dims == ("y", "x")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_clts_bfast_zarr_chunks_to_netcdf(files, capsys):
    import xarray as xr
    import clts.xarray as cx
    d, ds = files
    out, png = d / "b.nc", d / "b.png"
    assert cli.main(["bfast", str(d / "cube.zarr"), "--var", "ndvi", "--start-monitor",
                     "2005-01-01", "-o", str(out), "--plot", str(png), "--device", _dev(),
                     "--no-progress"]) == 0
    res = xr.open_dataset(out, engine="h5netcdf").load()
    ref = cx.bfast_monitor(ds["ndvi"], "2005-01-01", device=int(_dev()))  # the same defaults
    np.testing.assert_array_equal(res["breaks"].values, ref["breaks"].values)
    assert res["break_dates"].dtype.kind == "M" and (res["breaks"].values[:2] >= 0).all()
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_clts_mp_csv_and_npy(files, capsys):
    import xarray as xr
    import clts
    d, ds = files
    out = d / "mp.nc"
    assert cli.main(["mp", str(d / "two.csv"), "--var", "b", "-m", "12", "-o", str(out),
                     "--plot", str(d / "mp.png"), "--device", _dev(), "--no-progress"]) == 0
    res = xr.open_dataset(out, engine="h5netcdf").load()
    ref = clts.matrix_profile(ds["ndvi"].values[:, 4, 4], 12, device=int(_dev()))
    np.testing.assert_allclose(res["profile"].values, ref.P[:, 0], rtol=1e-12)
    assert res["neighbour"].dtype.kind == "M"
    assert cli.main(["stl", str(d / "one.npy"), "--period", "12", "-o", str(d / "one.nc"),
                     "--device", _dev(), "--no-progress"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["stl", "cube.nc", "--var", "nope", "--period", "12"],
     "variable 'nope' not in .*cube.nc; variables: ndvi, flag"),
    (["stl", "cube.nc", "--period", "12"], "holds 2 variables .*pick one with --var"),
    (["stl", "two.csv", "--var", "c", "--period", "12"], "column 'c' not in .*columns: a, b"),
    (["bfast", "unsorted.nc", "--var", "ndvi", "--start-monitor", "2005-01-01"],
     "'time' coordinate .* not strictly increasing .*sortby"),
    (["bfast", "cube.nc", "--var", "ndvi", "--start-monitor", "soon"], "not a date"),
    (["mp", "missing.nc", "-m", "12"], "no such file"),
])
def test_clts_file_errors_are_clean(files, capsys, argv, message):
    import re
    d, _ = files
    argv = [argv[0], str(d / argv[1])] + argv[2:] + ["-o", str(d / "x.nc"), "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"clts {argv[0]}: ") and re.search(message, err), err


def test_clts_tune_list_fits_100_columns_and_help_is_plain(capsys):
    from clts.tune import cli as tune_cli
    assert tune_cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert out.strip() and max(map(len, out.splitlines())) <= 100
    assert "tridiag.thomas" in out and "keys: " in out
    with pytest.raises(SystemExit):
        tune_cli.main(["--help"])
    assert "``" not in capsys.readouterr().out


def test_clts_warmup_builds_in_parallel(capsys):
    assert cli.main(["warmup", "--device", _dev()]) == 0
    out = capsys.readouterr().out
    assert "stl float32" in out and "tridiagonal float32" in out
    assert out.strip().splitlines()[-1].startswith("warm: ")
    assert cli.main(["warmup", "--device", _dev(), "--threads", "1"]) == 0


def test_warmup_is_one_thread_on_nvidia():
    """Several threads building on a cold program cache crashed NVIDIA's driver 580 (H100):
    `clts warmup` builds from one thread there unless told otherwise."""
    import os

    from clts.runtime import emulation, get_device, usable
    from clts.warmup import default_threads
    for info in usable():
        names = f"{info.platform} {info.vendor}".lower()
        one = "nvidia" in names or "portable computing language" in names   # pocl: no gain
        assert default_threads(get_device(info)) == (1 if one else os.cpu_count() or 2)
    if not any(i.type == "cpu" and not i.simulator for i in usable()):
        pytest.skip("emulation runs on a CPU OpenCL device; none here")
    assert default_threads(emulation.emulate("h100")) == 1


def test_slow_build_says_building_kernels(capsys, monkeypatch):
    """A build still running after BUILD_NOTICE_SECONDS prints one line (once per device);
    the no-progress switch silences it."""
    import itertools
    from clts.runtime import get_device, programs
    dev = get_device(int(_dev()))
    import time
    import pyopencl as cl
    build = cl.Program.build

    def slow_build(self, *a, **k):      # a build that lasts longer than the notice's delay
        time.sleep(0.3)
        return build(self, *a, **k)
    monkeypatch.setattr(cl.Program, "build", slow_build)
    monkeypatch.setattr(programs, "BUILD_NOTICE_SECONDS", 0.05)
    monkeypatch.setattr(programs, "_noticed", set())
    monkeypatch.setattr(programs, "_build_seconds", {})
    fresh = itertools.count(int(np.random.default_rng().integers(1 << 30)))
    clts.set_options(progress=False)     # global: the notice runs on a timer thread
    dev.program("runtime/copy.cl.mako", real="float", width=1, unused_tag=next(fresh))
    assert "building OpenCL kernels" not in capsys.readouterr().err
    monkeypatch.setattr(programs, "_noticed", set())
    clts.set_options(progress=True)
    for _ in range(2):
        dev.program("runtime/copy.cl.mako", real="float", width=1, unused_tag=next(fresh))
    err = capsys.readouterr().err
    assert err.count("clts: building OpenCL kernels (runtime) for") == 1 and "clts warmup" in err
    # another algorithm's first slow build says it again (tridiag's transpose: a small
    # program), through tqdm while a bar is on screen
    tqdm = pytest.importorskip("tqdm")
    import io
    screen = io.StringIO()
    with tqdm.tqdm(total=2, file=screen) as bar:
        written = []
        monkeypatch.setattr(tqdm.tqdm, "write", classmethod(
            lambda cls, s, file=None, **k: written.append(s)))
        dev.program("tridiag/transpose.cl.mako", real="float", tile=0, tile_y=1,
                    unused_tag=next(fresh))
        bar.update()
    assert len(written) == 1 and "building OpenCL kernels (tridiag)" in written[0]


def test_short_builds_that_add_up_say_building_kernels(capsys, monkeypatch):
    """A first call that builds several programs, none of them lasting the notice's delay
    (ocean.tke, matrix_profile: 2-4 s in all on a cold driver cache, without a word before),
    says "building OpenCL kernels" once its builds reach BUILD_NOTICE_SECONDS in all; one
    short build alone says nothing, and a later call in the process nothing more (each
    template family speaks once: ocean.tke's tridiagonal solves count as tridiag's)."""
    import time
    import pyopencl as cl
    from clts.ocean.inputs import benchmark_inputs
    from clts.runtime import devices, get_device, programs
    info = get_device(int(_dev())).info
    copy = dict(real="float", width=1)
    devices.Device(info).program("runtime/copy.cl.mako", **copy)  # in the driver's disk cache
    build = cl.Program.build

    def short_build(self, *a, **k):      # each build well under the notice's delay, any two
        time.sleep(0.6)                  # over it (the sleeps alone)
        return build(self, *a, **k)
    monkeypatch.setattr(cl.Program, "build", short_build)
    monkeypatch.setattr(programs, "BUILD_NOTICE_SECONDS", 1.0)
    monkeypatch.setattr(programs, "_noticed", set())
    monkeypatch.setattr(programs, "_build_seconds", {})
    clts.set_options(progress=True)
    devices.Device(info).program("runtime/copy.cl.mako", **copy)
    assert "building OpenCL kernels" not in capsys.readouterr().err
    x = benchmark_inputs(2 ** 10)
    T = np.random.default_rng(0).normal(size=300)
    dev = devices.Device(info)          # a fresh program cache: the calls below build (tke:
    #                                     2 ocean programs and a tridiagonal one; mp: 3)
    clts.ocean.tke(*x.values(), device=dev)
    clts.matrix_profile(T, 16, device=dev)
    err = capsys.readouterr().err
    for algorithm in ("ocean", "mp"):
        assert err.count(f"clts: building OpenCL kernels ({algorithm}) for") == 1, err
    again = devices.Device(info)        # builds the same programs again: said once a process
    clts.ocean.tke(*x.values(), device=again)
    clts.matrix_profile(T, 16, device=again)
    err = capsys.readouterr().err
    assert "kernels (ocean)" not in err and "kernels (mp)" not in err


def test_help_imports_nothing_heavy():
    """`clts --help` and `clts mp --help` answer without pandas, xarray, Dask, matplotlib,
    tqdm, SciPy or even OpenCL (a fresh process: this one has them all loaded)."""
    import subprocess
    import sys
    code = ("import sys, contextlib, io, clts.cli\n"
            "for argv in (['--help'], ['mp', '--help'], ['stl', '--help']):\n"
            "    try:\n"
            "        with contextlib.redirect_stdout(io.StringIO()):\n"
            "            clts.cli.main(argv)\n"
            "    except SystemExit:\n"
            "        pass\n"
            "heavy = ('pandas', 'xarray', 'dask', 'distributed', 'matplotlib', 'tqdm', 'scipy',\n"
            "         'h5py', 'h5netcdf', 'zarr', 'pyopencl')\n"
            "print(' '.join(m for m in heavy if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == ""
