"""Dask distributed: each worker process opens its own device (CLTS_DEVICE); results are
identical to a single-process run; the matrix profile split over workers merges exactly."""
import numpy as np
import pytest

import clts

distributed = pytest.importorskip("distributed")
xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
import clts.distributed as cd  # noqa: E402
import clts.xarray as cx  # noqa: E402


def _pocl():
    from clts.runtime import usable
    for i in usable():
        if "pocl" in i.slug and not i.simulator:
            return i
    return None


@pytest.fixture(scope="module")
def client():
    if _pocl() is None:
        pytest.skip("the distributed test runs its workers on pocl")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None,
                                       env={"CLTS_DEVICE": "pocl", "CLTS_NO_PROGRESS": "1"})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_workers_own_their_device_and_match_one_process(client):
    slugs = client.run(cd.worker_device)
    assert len(slugs) == 2 and set(slugs.values()) == {_pocl().slug}
    dev = clts.get_device(_pocl())
    rng = np.random.default_rng(0)
    n = 96
    t = np.arange(n)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 12) + 0.03 * rng.standard_normal((4, 6, n))
    y[:2, :, 70:] -= 0.3
    da = xr.DataArray(y, dims=("y", "x", "time"),
                      coords={"time": pd.date_range("2000-01-01", periods=n, freq="MS")})
    lazy = da.chunk({"y": 1})
    # device=None: each worker's own (CLTS_DEVICE); a Device object travels as its name
    stl = cx.stl(lazy, 12).compute()
    xr.testing.assert_identical(stl, cx.stl(da, 12, device=dev))
    bf = cx.bfast_monitor(lazy, "2005-01-01", freq=365.25, device=dev).compute()
    xr.testing.assert_identical(bf, cx.bfast_monitor(da, "2005-01-01", freq=365.25,
                                                     device=dev))


def test_distributed_matrix_profile_exact(client):
    dev = clts.get_device(_pocl())
    rng = np.random.default_rng(1)
    T = np.cumsum(rng.standard_normal(3000))
    T[500:540] = 3.0                                  # constant windows: the exact scans
    r = cd.matrix_profile(client, T, 50)
    assert r.diagnostics["parts"] == 2
    same_split = clts.matrix_profile(T, 50, device=[dev, dev])   # one process, two parts
    for key in ("P", "I", "left_P", "left_I", "right_P", "right_I"):
        np.testing.assert_array_equal(getattr(r, key), getattr(same_split, key), err_msg=key)
    one = clts.matrix_profile(T, 50, device=dev)
    np.testing.assert_allclose(r.P, one.P, rtol=0, atol=1e-9)
    A, B = T[:900], np.cumsum(rng.standard_normal(700))
    r = cd.matrix_profile(client, A, 30, B, both=True, parts=3)
    ref = clts.matrix_profile(A, 30, B, both=True, device=[dev, dev, dev])
    for key in ("P", "I", "P_B", "I_B"):
        np.testing.assert_array_equal(getattr(r, key), getattr(ref, key), err_msg=key)
    with pytest.raises(ValueError, match="fewer than m"):     # on the client, no task sent
        cd.matrix_profile(client, T[:20], 50)
    with pytest.raises(ValueError, match="m must be >= 3"):
        cd.matrix_profile(client, T, 2)


def test_repeated_calls_on_the_same_series_never_lose_their_input(client):
    # the scattered series has a key of its own per call: releasing one call's future never
    # cancels the next one's (a shared content-hashed key lost dependencies about 1 call in 6)
    rng = np.random.default_rng(2)
    T = np.cumsum(rng.standard_normal(400))
    first = cd.matrix_profile(client, T, 20)
    for _ in range(8):
        r = cd.matrix_profile(client, T, 20)
        np.testing.assert_array_equal(r.P, first.P)
        np.testing.assert_array_equal(r.I, first.I)


def test_device_plugin_assigns_one_device_per_worker(client):
    plugin = cd.DevicePlugin(["pocl", "1"])
    assert [plugin.device_for(i) for i in (0, 1, 2, "3")] == ["pocl", "1", "pocl", "1"]
    assert plugin.device_for("gpu-node-a") in ("pocl", "1")
    with pytest.raises(ValueError, match="non-empty list"):
        cd.DevicePlugin("pocl")
    client.register_plugin(cd.DevicePlugin(["pocl"]))
    assert set(client.run(lambda: clts.get_options()["device"]).values()) == {"pocl"}


@pytest.mark.parametrize("k", [3, 17])
def test_distributed_topk_identical_to_one_process(client, k):
    # each worker's k-lists over its diagonals, merged by (distance, index): the single-process
    # top-k, bit for bit; k = 17 is the blocked path (split by rows)
    dev = clts.get_device(_pocl())
    rng = np.random.default_rng(2)
    T = np.cumsum(rng.standard_normal(1500))
    T[300:340] = 3.0          # constant windows: every part scans them, each index kept once
    r = cd.matrix_profile(client, T, 40, k=k, parts=3)
    one = clts.matrix_profile(T, 40, k=k, device=dev)
    assert r.P.shape == (len(T) - 39, k) and r.diagnostics["parts"] == 3
    for key in ("P", "I", "left_P", "left_I", "right_P", "right_I"):
        np.testing.assert_array_equal(getattr(r, key), getattr(one, key), err_msg=key)
    I = np.sort(np.where(r.I < 0, -np.arange(1, k + 1), r.I), axis=1)
    assert (np.diff(I, axis=1) != 0).all()                  # no neighbour index twice
    A, B = T[:700], np.cumsum(rng.standard_normal(500))
    B[100:130] = -1.0
    r = cd.matrix_profile(client, A, 25, B, k=k, both=True)
    one = clts.matrix_profile(A, 25, B, k=k, both=True, device=dev)
    for key in ("P", "I", "P_B", "I_B"):
        np.testing.assert_array_equal(getattr(r, key), getattr(one, key), err_msg=key)
