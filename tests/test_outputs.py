"""``out=`` of clts.stl, clts.bfast_monitor and clts.matrix_profile: the same bits as without it,
in any layout of the out arrays (C, Fortran, strided) and of the inputs (big-endian too), as a
dict or an earlier result; bad out arrays refused before any work; two threads with their own
out arrays; and the pool of dropped results behind fresh outputs (``memory.host_empty``)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clts
from concurrency import run_in_threads
from clts.runtime import memory

STL_KEYS = ("seasonal", "trend", "resid", "weights")
BFAST_KEYS = ("breaks", "break_dates", "magnitudes", "means", "valids", "status",
              "history_start", "mosum", "bounds", "prediction", "coef", "sigma")
MP_KEYS = ("P", "I", "left_P", "left_I", "right_P", "right_I", "P_B", "I_B")


def _stl_data():
    rng = np.random.default_rng(3)
    t = np.arange(96)
    y = np.sin(2 * np.pi * t / 12) + 0.05 * t + 0.3 * rng.standard_normal((3, 4, 96))
    y[1, 2, 10:14] = np.nan
    return y


def _bfast_data():
    rng = np.random.default_rng(4)
    dates = 2000 + np.arange(92) / 23
    cube = np.sin(2 * np.pi * dates)[:, None, None] + 0.1 * rng.standard_normal((92, 3, 5))
    cube[70:, 1] -= 1.5
    cube[5, 0, 0] = np.nan
    return cube, dates, dates[60]


def _series():
    return np.cumsum(np.random.default_rng(5).standard_normal(400))


def _layout(a, kind):
    """An array of ``a``'s shape and dtype in layout ``kind``, filled with junk."""
    if kind == "F":
        o = np.asfortranarray(np.empty_like(a))
    elif kind == "strided":
        o = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)[..., ::2] if a.ndim else \
            np.empty_like(a)
    else:
        o = np.empty_like(a, order="C")
    if o.dtype.kind == "f":
        o[...] = -7.5
    elif o.dtype.kind in "iu":
        o[...] = -7
    return o


def _check(ref, got, given):
    for key, o in given.items():
        assert getattr(got, key) is o, key
        np.testing.assert_array_equal(o, np.asarray(getattr(ref, key)), err_msg=key)


def _present(res, keys):
    return [k for k in keys if getattr(res, k, None) is not None]


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_stl_out_bit_identical(device, layout):
    y = _stl_data()
    ref = clts.stl(y, 12, robust=True, device=device)
    out = {k: _layout(getattr(ref, k), layout) for k in STL_KEYS}
    _check(ref, clts.stl(y, 12, robust=True, device=device, out=out), out)
    # big-endian, Fortran-ordered input, time first, an earlier result as out=
    yb = np.asfortranarray(np.moveaxis(y, -1, 0)).astype(">f8")
    ref_t = clts.stl(yb, 12, time_axis=0, device=device)
    first = clts.stl(yb, 12, time_axis=0, device=device)
    again = clts.stl(yb, 12, time_axis=0, device=device, out=first)
    for k in STL_KEYS:
        assert getattr(again, k) is getattr(first, k)
        np.testing.assert_array_equal(getattr(again, k), getattr(ref_t, k))
    # a subset of the components
    part = {"trend": _layout(ref.trend, layout)}
    _check(ref, clts.stl(y, 12, robust=True, device=device, out=part), part)


@pytest.mark.parametrize("kw", [{}, {"detailed": True}, {"history": "ROC"},
                                {"magnitudes": False}])
def test_bfast_out_bit_identical(device, kw):
    cube, dates, start = _bfast_data()
    ref = clts.bfast_monitor(cube, dates, start, freq=1, device=device, **kw)
    keys = _present(ref, BFAST_KEYS)
    for layout in ("C", "F", "strided"):
        out = {k: _layout(np.asarray(getattr(ref, k)), layout) for k in keys}
        _check(ref, clts.bfast_monitor(cube, dates, start, freq=1, device=device, out=out, **kw), out)
    big = np.asfortranarray(cube).astype(">f4")          # big-endian, float32
    ref32 = clts.bfast_monitor(big, dates, start, freq=1, device=device, **kw)
    res = clts.bfast_monitor(big, dates, start, freq=1, device=device, **kw)
    again = clts.bfast_monitor(big, dates, start, freq=1, device=device, out=res, **kw)
    for k in keys:
        assert getattr(again, k) is getattr(res, k)
        np.testing.assert_array_equal(getattr(again, k), getattr(ref32, k))


@pytest.mark.parametrize("kw", [{}, {"k": 2}, {"ab": True}])
def test_mp_out_bit_identical(device, kw):
    T = _series()
    args = dict(k=kw.get("k", 1))
    if kw.get("ab"):
        args.update(T_B=T[::-1].astype(">f8"), both=True)
    ref = clts.matrix_profile(T, 16, device=device, **args)
    keys = _present(ref, MP_KEYS)
    for layout in ("C", "F", "strided"):
        out = {k: _layout(getattr(ref, k), layout) for k in keys}
        _check(ref, clts.matrix_profile(T, 16, device=device, out=out, **args), out)
    again = clts.matrix_profile(T, 16, device=device, out=ref, **args)
    assert again.P is ref.P and again.I is ref.I


def _refusals(call, res, keys, inp):
    """Every bad out= raises before the call writes anything (the sentinels stay)."""
    good = {k: np.full_like(np.asarray(getattr(res, k)), 3) for k in keys[:2]}
    k0 = keys[0]
    ro = good[k0].copy()
    ro.flags.writeable = False
    cases = [
        ({**good, k0: ro}, ValueError, "read-only"),
        ({**good, k0: good[k0][:-1]}, ValueError, "shape"),
        ({**good, k0: good[k0].astype(np.float16)}, TypeError, "dtype"),
        ({**good, k0: good[k0].tolist()}, TypeError, "numpy array"),
        ({**good, "nonsense": good[k0]}, ValueError, "nonsense"),
        ({k0: good[k0], keys[1]: good[k0]}, (ValueError, TypeError), None),
        ([good[k0]], TypeError, "dict"),
    ]
    if inp is not None:
        cases.append(({k0: inp}, ValueError, "overlaps the input"))
    before = {k: v.copy() for k, v in good.items()}
    for bad, err, words in cases:
        with pytest.raises(err, match=words):
            call(bad)
        for k, v in good.items():
            np.testing.assert_array_equal(v, before[k])


def test_out_refused_before_any_work(device):
    y = _stl_data()
    r = clts.stl(y, 12, device=device)
    yy = y.copy()
    _refusals(lambda o: clts.stl(yy, 12, device=device, out=o), r, ["seasonal", "trend"],
              yy)
    np.testing.assert_array_equal(yy, y)
    cube, dates, start = _bfast_data()
    b = clts.bfast_monitor(cube, dates, start, freq=1, device=device)
    _refusals(lambda o: clts.bfast_monitor(cube, dates, start, freq=1, device=device, out=o), b,
              ["means", "magnitudes"], cube[0])
    with pytest.raises(ValueError, match="mosum"):       # not returned without detailed=True
        clts.bfast_monitor(cube, dates, start, freq=1, device=device,
                           out={"mosum": np.empty((32, 3, 5))})
    T = _series()
    m = clts.matrix_profile(T, 16, device=device)
    _refusals(lambda o: clts.matrix_profile(T, 16, device=device, out=o), m, ["P", "left_P"],
              None)
    with pytest.raises(ValueError, match="overlaps the input T_A"):
        clts.matrix_profile(T, 16, device=device, out={"left_P": T[:385]})


def test_out_from_two_threads(device):
    """Two threads, each with its own out= arrays, calling every function in turn."""
    y = _stl_data()
    cube, dates, start = _bfast_data()
    T = _series()
    calls = {
        "stl": (lambda o: clts.stl(y, 12, robust=True, device=device, out=o), STL_KEYS),
        "bfast": (lambda o: clts.bfast_monitor(cube, dates, start, freq=1, device=device, out=o),
                  BFAST_KEYS),
        "mp": (lambda o: clts.matrix_profile(T, 16, device=device, out=o), MP_KEYS),
    }
    refs = {name: f(None) for name, (f, _) in calls.items()}
    def work(seed):
        outs = {name: {k: _layout(np.asarray(getattr(refs[name], k)), ("C", "F")[seed % 2])
                       for k in _present(refs[name], keys)}
                for name, (_, keys) in calls.items()}
        for _ in range(2):
            for name, (f, _) in calls.items():
                _check(refs[name], f(outs[name]), outs[name])

    run_in_threads(work, 2)


def test_pooled_results_come_back_once_dropped(device):
    n = memory.RESULT_POOL_MIN_BYTES // 8 + 512
    a = memory.host_empty(device, (n,), np.float64)
    assert a.ctypes.data % memory.RESULT_ALIGNMENT == 0 and a.flags.c_contiguous
    ptr = a.ctypes.data
    view = a[::3]
    del a
    b = memory.host_empty(device, (n,), np.float64)      # the view keeps a's memory
    assert b.ctypes.data != ptr
    del view
    c = memory.host_empty(device, (n,), np.float64)
    assert c.ctypes.data == ptr
    assert not np.shares_memory(b, c)
    memory.release_results()


@pytest.mark.parametrize("layout", ["C", "F"])
def test_out_on_the_copying_path(device, layout):
    """``zero_copy=False``: the transfers a discrete GPU makes (device buffers, copies into the
    out arrays) give the same bits."""
    y = _stl_data()
    cube, dates, start = _bfast_data()
    ref_s = clts.stl(y, 12, device=device)
    ref_b = clts.bfast_monitor(cube, dates, start, freq=1, device=device)
    clts.set_options(zero_copy=False)
    out = {k: _layout(getattr(ref_s, k), layout) for k in STL_KEYS}
    _check(ref_s, clts.stl(y, 12, device=device, out=out), out)
    out = {k: _layout(np.asarray(getattr(ref_b, k)), layout) for k in _present(ref_b, BFAST_KEYS)}
    _check(ref_b, clts.bfast_monitor(cube, dates, start, freq=1, device=device, out=out), out)


def test_out_with_a_labelled_input(device):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    idx = pd.date_range("2000-01-01", periods=96, freq="MS")
    df = pd.DataFrame(np.sin(np.arange(96) * np.pi / 6)[:, None] + rng.normal(0, .1, (96, 3)),
                      index=idx, columns=list("abc"))
    ref = clts.stl(df, device=device)
    out = {"trend": np.empty((96, 3))}
    res = clts.stl(df, device=device, out=out)
    assert res.trend.equals(ref.trend) and list(res.trend.columns) == list("abc")
    np.testing.assert_array_equal(out["trend"], ref.trend.to_numpy())
    with pytest.raises(TypeError, match="to_numpy"):
        clts.stl(df, device=device, out=ref)


def test_pooled_results_from_two_threads(device):
    """Results of 1 MiB and more come from the pool while two threads drop and take them: the
    same bits, and no two live results share memory."""
    rng = np.random.default_rng(7)
    a, c, d = rng.uniform(-1, 1, (3, 1100, 120))
    b = 4 + rng.uniform(0, 1, (1100, 120))
    y = np.sin(np.arange(120) * np.pi / 6) + 0.1 * rng.standard_normal((1100, 120))
    ref_x = clts.solve_tridiagonal(a, b, c, d, device=device).x
    ref_s = clts.stl(y, 12, device=device).seasonal
    assert ref_x.nbytes >= memory.RESULT_POOL_MIN_BYTES
    live, errors = [], []

    def work():
        try:
            for i in range(6):
                x = clts.solve_tridiagonal(a, b, c, d, device=device).x
                np.testing.assert_array_equal(x, ref_x)
                if i % 3 == 0:
                    s = clts.stl(y, 12, device=device).seasonal
                    np.testing.assert_array_equal(s, ref_s)
                    live.append(s)        # kept: the pool must not lend its memory again
                if i % 2:
                    live.append(x)
        except Exception as e:          # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, u in enumerate(live):
        assert not any(np.shares_memory(u, v) for v in live[i + 1:])
    for u in live:            # still intact: none was lent again while alive
        assert np.array_equal(u, ref_s) or np.array_equal(u, ref_x)


def test_pool_keeps_at_most_its_size(monkeypatch):
    memory.release_results()
    monkeypatch.setattr(memory, "RESULT_POOL_BYTES", 8 << 20)
    big = memory.pooled_empty((16 << 20,), np.uint8)
    del big                                     # larger than the pool: freed, not kept
    assert not memory._results and not memory._returned
    small = [memory.pooled_empty((3 << 20,), np.uint8) for _ in range(3)]
    del small                                   # 9 MB dropped: 6 MB kept
    assert sum(nb * len(v) for nb, v in memory._results.items()) == 6 << 20
    memory.release_results()


def test_big_endian_out_arrays(device):
    """out= arrays of the other byte order are written right (computed, then copied in with
    the swap): they were refused as another dtype."""
    y = _stl_data()
    r = clts.stl(y, 12, device=device)
    o = {k: np.zeros(y.shape, np.dtype(np.float64).newbyteorder()) for k in ("seasonal", "trend")}
    got = clts.stl(y, 12, device=device, out=o)
    assert got.seasonal is o["seasonal"]
    np.testing.assert_array_equal(o["seasonal"], r.seasonal)
    np.testing.assert_array_equal(o["trend"], r.trend)
    cube, dates, start = _bfast_data()
    b = clts.bfast_monitor(cube, dates, start, freq=1, device=device)
    ob = {"breaks": np.zeros(b.breaks.shape, np.dtype(np.int32).newbyteorder()),
          "magnitudes": np.zeros(b.magnitudes.shape, b.magnitudes.dtype.newbyteorder())}
    clts.bfast_monitor(cube, dates, start, freq=1, device=device, out=ob)
    np.testing.assert_array_equal(ob["breaks"], b.breaks)
    np.testing.assert_array_equal(ob["magnitudes"], b.magnitudes)
    T = _series()
    m = clts.matrix_profile(T, 16, device=device)
    om = {"P": np.zeros(m.P.shape, m.P.dtype.newbyteorder()),
          "I": np.zeros(m.I.shape, m.I.dtype.newbyteorder())}
    clts.matrix_profile(T, 16, device=device, out=om)
    np.testing.assert_array_equal(om["P"], m.P)
    np.testing.assert_array_equal(om["I"], m.I)
    rng = np.random.default_rng(1)
    a, c, d = rng.standard_normal((3, 6, 20))
    b4 = 4 + rng.random((6, 20))
    x = clts.solve_tridiagonal(a, b4, c, d, device=device).x
    ox = np.zeros((6, 20), np.dtype(np.float64).newbyteorder())
    assert clts.solve_tridiagonal(a, b4, c, d, device=device, out=ox).x is ox
    np.testing.assert_array_equal(ox, x)
