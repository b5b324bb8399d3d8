"""Inputs that once gave silent wrong answers, crashes or hangs: layouts, scales, profiles that set
one value, bad tunables from a keyword or a profile file. Each case failed before its fix."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

import clts
from clts.errors import ProfileError
from clts.runtime import devices as devmod


def _layouts(y):
    """The same values in every layout numpy allows."""
    yield "fortran", np.asfortranarray(y)
    yield "transposed", np.ascontiguousarray(y.T).T
    wide = np.zeros((y.shape[0] * 2, y.shape[1] * 3), y.dtype)
    wide[::2, ::3] = y
    yield "strided", wide[::2, ::3]
    yield "reversed", np.ascontiguousarray(y[::-1, ::-1])[::-1, ::-1]
    yield "big-endian", y.astype(y.dtype.newbyteorder(">"))


def _stl_data(dtype=np.float64):
    rng = np.random.default_rng(7)
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12) + 0.05 * t + 0.3 * rng.standard_normal((5, 96))
    y[1, 10:30] = np.nan
    y[3] = np.nan                     # an all-NaN row must stay in its row
    return y.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stl_any_layout_is_bit_identical(device, dtype):
    y = _stl_data(dtype)
    base = clts.stl(y, 12, device=device)
    assert np.isnan(base.seasonal[3]).all() and np.isfinite(base.seasonal[[0, 2, 4]]).all()
    for name, other in _layouts(y):
        r = clts.stl(other, 12, device=device)
        for part in ("seasonal", "trend", "resid", "weights"):
            np.testing.assert_array_equal(getattr(r, part), getattr(base, part), err_msg=name)
        assert r.seasonal.flags.c_contiguous


def test_stl_integer_and_float16_inputs(device):
    y = (100 * _stl_data()[[0, 2, 4]]).astype(np.int32)
    r = clts.stl(y, 12, device=device)
    assert r.seasonal.dtype == np.float64
    np.testing.assert_array_equal(r.seasonal, clts.stl(y.astype(np.float64), 12,
                                                       device=device).seasonal)
    h = clts.stl(_stl_data()[[0, 2]].astype(np.float16), 12, device=device)
    assert h.seasonal.dtype == np.float32
    with pytest.raises(TypeError, match="y"):
        clts.stl(np.ones((2, 48), complex), 12, device=device)


def test_tridiagonal_any_layout_is_bit_identical(device):
    rng = np.random.default_rng(3)
    a, c, d = (rng.standard_normal((40, 17)) for _ in range(3))
    b = 4 + rng.random((40, 17))
    base = clts.solve_tridiagonal(a, b, c, d, device=device).x
    for name, other in _layouts(b):
        x = clts.solve_tridiagonal(a, other, c, d, device=device).x
        np.testing.assert_array_equal(x, base, err_msg=name)


def test_matrix_profile_any_layout_is_bit_identical(device):
    rng = np.random.default_rng(5)
    T = np.cumsum(rng.standard_normal(300))
    base = clts.matrix_profile(T, 16, device=device)
    for name, other in (("strided", np.repeat(T, 2)[::2]), ("reversed", T[::-1].copy()[::-1]),
                        ("big-endian", T.astype(">f8"))):
        r = clts.matrix_profile(other, 16, device=device)
        np.testing.assert_array_equal(r.P, base.P, err_msg=name)
        np.testing.assert_array_equal(r.I, base.I, err_msg=name)


# ------------------------------------------------------------------ scale of a series
@pytest.mark.parametrize("scale", [1e200, 1e154, 1e-160, 1e-200])
def test_matrix_profile_does_not_depend_on_scale(device, scale):
    """A z-normalised distance does not depend on the scale: it gave P = inf, I = -1 beyond
    1e154 and NaN below 1e-160."""
    rng = np.random.default_rng(11)
    T = np.cumsum(rng.standard_normal(400))
    base = clts.matrix_profile(T, 20, device=device)
    r = clts.matrix_profile(T * scale, 20, device=device)
    np.testing.assert_allclose(r.P, base.P, rtol=1e-9, atol=1e-9)
    assert np.mean(r.I == base.I) > 0.99


@pytest.mark.parametrize("precision,offset,tol", [("mixed", 1e6, 1e-3), ("mixed", 1e8, 1e-3),
                                                  ("single", 1e20, 1e-2),
                                                  ("single", 1e-20, 1e-2)])
def test_float32_kernels_with_offsets_and_scales(device, precision, offset, tol):
    rng = np.random.default_rng(13)
    T = np.cumsum(rng.standard_normal(400))
    base = clts.matrix_profile(T, 20, device=device)
    T2 = T * offset if offset < 1 or precision == "single" else T + offset
    r = clts.matrix_profile(T2, 20, precision=precision, device=device)
    assert np.isfinite(r.P).all()
    assert np.max(np.abs(r.P - base.P)) < tol


def test_plain_euclidean_scales_back(device):
    rng = np.random.default_rng(17)
    T = rng.standard_normal(200)
    base = clts.matrix_profile(T, 10, normalize=False, device=device)
    r = clts.matrix_profile(T * 1e100, 10, normalize=False, device=device)
    np.testing.assert_allclose(r.P / 1e100, base.P, rtol=1e-9)


# ------------------------------------------------------------------ profiles
def _fresh_device(device, monkeypatch, tmp_path, body):
    (tmp_path / "user.yaml").write_text(body)
    clts.set_options(profile_path=str(tmp_path))
    return devmod.Device(device.info)


def test_profile_that_sets_one_value_keeps_the_others(device, monkeypatch, tmp_path):
    dev = _fresh_device(device, monkeypatch, tmp_path, yaml.safe_dump(
        {"schema": 1, "device": {"type": device.type, "name": device.name},
         "tridiag": {"thomas": {"wg": 8}},
         "stl": {"outer": {"lanes": 2}}}))
    prof = dev.profile
    assert prof.get("tridiag.thomas.wg") == 8
    assert prof.get("tridiag.thomas.lanes") is not None
    assert prof.get("bfast.auto.multi_min_n") is not None and prof.get("mp.diag.tile")
    rng = np.random.default_rng(1)
    a, c, d = (rng.standard_normal((16, 9)) for _ in range(3))
    b = 4 + rng.random((16, 9))
    r = clts.solve_tridiagonal(a, b, c, d, device=dev, version="thomas")
    assert r.plan.params["wg"] == 8
    clts.stl(_stl_data()[[0]], 12, device=dev)


def test_type_default_that_sets_one_value(device, monkeypatch, tmp_path):
    """The file of the report: it made every call fail with KeyError: 'lanes' / 'tile'."""
    dev = _fresh_device(device, monkeypatch, tmp_path,
                        f"schema: 1\ndevice: {{type: {device.type}}}\ntridiag: {{thomas: {{wg: 8}}}}\n")
    rng = np.random.default_rng(1)
    a, c, d = (rng.standard_normal((16, 9)) for _ in range(3))
    clts.solve_tridiagonal(a, 4 + rng.random((16, 9)), c, d, device=dev, version="thomas")
    clts.matrix_profile(rng.standard_normal(100), 8, device=dev)
    t = 2000 + np.arange(60) / 12
    clts.bfast_monitor(rng.standard_normal((60, 3)), t, t[40], freq=1, device=dev)


def test_profile_for_another_device_does_not_break_this_one(device, monkeypatch, tmp_path):
    (tmp_path / "gpu.yaml").write_text("schema: 1\ndevice: {type: gpu, name: Some GPU}\n"
                                       "tridiag: {thomas: {wg: 100000}}\n")
    (tmp_path / "broken.yaml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    clts.set_options(profile_path=str(tmp_path))
    dev = devmod.Device(device.info)
    rng = np.random.default_rng(2)
    a, c, d = (rng.standard_normal((8, 5)) for _ in range(3))
    clts.solve_tridiagonal(a, 4 + rng.random((8, 5)), c, d, device=dev)


def test_bad_profile_value_names_file_and_key(device, monkeypatch, tmp_path):
    dev = _fresh_device(device, monkeypatch, tmp_path,
                        f"schema: 1\ndevice: {{type: {device.type}, name: '{device.name}'}}\n"
                        "tridiag: {coalesced: {tile_y: 0}}\nmp: {diag: {unroll: 1000000}}\n"
                        "stl: {intragroup: {wg: 3}}\nbfast: {fused: {lanes: 3}}\n")
    rng = np.random.default_rng(4)
    a, c, d = (rng.standard_normal((8, 5)) for _ in range(3))
    with pytest.raises(ProfileError, match=r"user\.yaml.*tridiag\.coalesced\.tile_y"):
        clts.solve_tridiagonal(a, 4 + rng.random((8, 5)), c, d, device=dev,
                               version="thomas-coalesced")
    with pytest.raises(ProfileError, match=r"user\.yaml.*mp\.diag\.unroll"):
        clts.matrix_profile(rng.standard_normal(100), 8, device=dev)
    with pytest.raises(ProfileError, match=r"user\.yaml.*stl\.intragroup\.wg"):
        clts.stl(_stl_data()[[0]], 12, device=dev)
    with pytest.raises(ProfileError, match=r"user\.yaml.*bfast\.fused\.lanes"):
        t = 2000 + np.arange(60) / 12
        clts.bfast_monitor(rng.standard_normal((60, 3)), t, t[40], freq=1, device=dev,
                           version="fused")


def test_binary_profile_file_is_named(tmp_path):
    from clts.runtime import profiles
    p = tmp_path / "bin.yaml"
    p.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ProfileError, match=r"bin\.yaml.*not a text file"):
        profiles.load(p)


# ------------------------------------------------------------------ bad keyword values
def test_bad_keywords_are_clear_errors(device, monkeypatch):
    rng = np.random.default_rng(6)
    y = _stl_data()[[0]]
    T = rng.standard_normal(200)
    a, c, d = (rng.standard_normal((8, 5)) for _ in range(3))
    b = 4 + rng.random((8, 5))
    with pytest.raises(TypeError, match="unroll"):
        clts.stl(y, 12, device=device, unroll=1000000)
    with pytest.raises(TypeError, match="bogus"):
        clts.stl(y, 12, device=device, bogus=1)
    with pytest.raises(ValueError, match=r"wg must be <="):
        clts.stl(y, 12, device=device, version="intragroup",
                 wg=1 << 20)
    with pytest.raises(ValueError, match="unroll"):
        clts.matrix_profile(T, 8, device=device, unroll=1000000)
    with pytest.raises(ValueError, match="wg"):
        clts.matrix_profile(T, 8, device=device, wg=1 << 20)
    with pytest.raises(TypeError, match="plan"):
        clts.matrix_profile(T, 8, device=device, plan="x")
    with pytest.raises(TypeError, match="plan"):
        clts.solve_tridiagonal(a, b, c, d, device=device, plan="x")
    with pytest.raises(ValueError, match="tile_y"):
        clts.solve_tridiagonal(a, b, c, d, device=device, version="thomas-coalesced", tile_y=0)
    with pytest.raises(ValueError, match="wg"):
        clts.solve_tridiagonal(a, b, c, d, device=device, version="thomas", wg=1 << 20)
    r = clts.matrix_profile(T, 8, device=device)
    for kw in ({"max_matches": -1}, {"radius": -1.0}, {"exclusion_zone": -3},
               {"max_motifs": 0}, {"min_neighbors": -1}, {"cutoff": np.nan}, {"atol": -1.0},
               {"max_distance": "1"}, {"search": "best"}, {"normalize": False},
               {"search": "pair", "radius": -1.0}, {"search": "pair", "cutoff": 1.0}):
        with pytest.raises(ValueError, match=list(kw)[-1]):
            clts.motifs(T, r, **kw)
    with pytest.raises(ValueError, match="exclusion_zone"):
        clts.discords(r, exclusion_zone=-1)
    with pytest.raises(ValueError, match="max_chunk"):
        clts.set_options(max_chunk=0)
    with pytest.raises(ValueError, match="CLTS_MAX_CHUNK"):
        clts.options.from_environ({"CLTS_MAX_CHUNK": "0"})
    clts.stl(y, 12, device=device)          # the bad value was not taken


def test_bfast_history_start_errors_name_history(device):
    """A history start of the wrong kind was reported as a start_monitor error, and True passed
    as the time 1.0."""
    dates = np.arange("2000-01-01", "2008-01-01", 16, dtype="datetime64[D]")
    t = 2000 + np.arange(dates.size) / 23
    y = np.random.default_rng(0).normal(size=(dates.size, 2))
    cases = [(dates, "2006-01-01", 2004.0, TypeError, "history 2004.0 is a number but dates"),
             (dates, "2006-01-01", float("nan"), ValueError, "history .*finite"),
             (t, 2006.0, "2004-01-01", TypeError, "history 2004-01-01 is a date but dates"),
             (t, 2006.0, float("nan"), ValueError, "history .*finite"),
             (t, 2006.0, True, TypeError, "history must be one of"),
             (dates, "2006-01-01", True, TypeError, "history must be one of")]
    for tt, start, hist, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            clts.bfast_monitor(y, tt, start, history=hist, device=device, progress=False)
        with pytest.raises(exc, match=msg):
            clts.bfast.api.check_arguments(tt, start, history=hist)
    r = clts.bfast_monitor(y, t, 2006.0, history=2004.0, freq=1, device=device,
                           progress=False)
    assert (r.history_start == np.searchsorted(t, 2004.0)).all()


def test_tridiagonal_out_may_be_d_only(device):
    """out=b was accepted and overwrote b (only d may be written over)."""
    rng = np.random.default_rng(1)
    a, c, d = (rng.uniform(-1, 1, (3, 16)) for _ in range(3))
    b = 4 + rng.uniform(0, 1, (3, 16))
    b0 = b.copy()
    for name, arr in (("a", a), ("b", b), ("c", c)):
        with pytest.raises(ValueError, match=f"out overlaps the input {name}"):
            clts.solve_tridiagonal(a, b, c, d, out=arr, device=device)
    with pytest.raises(ValueError, match="out overlaps the input b"):
        clts.solve_tridiagonal(a, b, c, d, out=b[:, ::-1][:, ::-1], device=device)
    np.testing.assert_array_equal(b, b0)
    want = clts.solve_tridiagonal(a, b, c, d, device=device).x
    r = clts.solve_tridiagonal(a, b, c, d.copy(), device=device)
    dd = d.copy()
    assert clts.solve_tridiagonal(a, b, c, dd, out=dd, device=device).x is dd
    np.testing.assert_allclose(dd, want, rtol=1e-12)
    np.testing.assert_allclose(r.x, want, rtol=1e-12)
    import pyopencl.array as cla
    from clts.runtime import get_device
    q = get_device(device).queue
    ad, bd, cd, ddv = (cla.to_device(q, np.ascontiguousarray(v)) for v in (a, b, c, d))
    with pytest.raises(ValueError, match="out overlaps the input b"):
        clts.solve_tridiagonal(ad, bd, cd, ddv, out=bd, device=device)
    np.testing.assert_array_equal(bd.get(), b0)


def test_set_options_refuses_an_unknown_device():
    """set_options(device="nonexistent-xyz") was accepted and every later call failed."""
    before = clts.get_options()["device"]
    with pytest.raises(ValueError, match="option device: no OpenCL device matches"):
        clts.set_options(device="nonexistent-xyz")
    with pytest.raises(ValueError, match="option device"):
        with clts.set_options(device="nonexistent-xyz"):
            pass
    assert clts.get_options()["device"] == before


def test_cli_numeric_history(tmp_path, device, capsys):
    """clts bfast --history 2004.0 on a numeric time axis: a time (it was read as a date)."""
    pytest.importorskip("xarray")
    from clts.cli import main
    t = 2000 + np.arange(161) / 23
    y = np.sin(2 * np.pi * t) + 0.1 * np.random.default_rng(2).normal(size=t.size)
    csv = tmp_path / "num.csv"
    csv.write_text("time,v\n" + "".join(f"{a:.17g},{b:.17g}\n" for a, b in zip(t, y)))
    argv = ["bfast", str(csv), "--start-monitor", "2006", "--time-unit", "year", "--device",
            device.slug, "--no-progress"]
    assert main(argv + ["--history", "2004.0", "-o", str(tmp_path / "a.nc")]) == 0
    assert main(argv + ["--history", "2004-01-01", "-o", str(tmp_path / "b.nc")]) == 2
    assert "--history '2004-01-01'" in capsys.readouterr().err
    assert not (tmp_path / "b.nc").exists()
