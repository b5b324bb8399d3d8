"""The runtime: discovery, probing, selection, templates, program cache, build errors."""

import numpy as np
import pytest

import clts
from clts.runtime import devices as devmod
from clts.runtime import get_device, launch, programs, timing
from clts.runtime.memory import chunk_sizes


def test_discovery_lists_and_probes_every_device():
    infos = devmod.discover()
    assert infos, "no OpenCL device at all"
    for i in infos:
        assert isinstance(i.ok, bool)
        if not i.ok:
            assert i.reason
    assert any(i.ok for i in infos)


def test_default_device_order():
    mk = lambda idx, typ, plat, cu, ok=True: devmod.DeviceInfo(
        idx, 0, idx, plat, f"d{idx}", "v", typ, "1.0", "OpenCL 1.2", frozenset(), cu, 0, 1,
        1, 1, ok, "")
    infos = [mk(0, "cpu", "pocl", 64), mk(1, "gpu", "Oclgrind", 1), mk(2, "gpu", "NVIDIA", 10),
             mk(3, "gpu", "NVIDIA", 80), mk(4, "accelerator", "x", 4), mk(5, "gpu", "AMD", 999,
                                                                         ok=False)]
    order = [i.index for i in sorted(infos, key=devmod.DeviceInfo.sort_key)]
    assert order == [3, 2, 1, 4, 0, 5]


def test_select_by_index_substring_and_env(monkeypatch):
    good = devmod.usable()
    first = good[0]
    assert get_device(str(first.index)).info is first
    assert get_device(first.name.upper()[:6]).info.ok
    assert get_device(first.slug.split("-")[0]).info.ok  # "pocl", "intel", ...
    clts.set_options(device=str(first.index))
    assert get_device().info is first
    with pytest.raises(clts.DeviceError, match="no OpenCL device matches"):
        get_device("no-such-device-xyz")
    with pytest.raises(clts.DeviceError, match="out of range"):
        get_device("999")


def test_unusable_device_is_never_chosen(monkeypatch):
    infos = devmod.discover()
    bad = devmod.DeviceInfo(len(infos), 9, 0, "Broken", "broken-gpu", "v", "gpu", "0", "",
                            frozenset(), 999, 0, 1, 1, 1, False, "probe crashed")
    monkeypatch.setattr(devmod, "discover", lambda refresh=False: infos + [bad])
    assert get_device().info is not bad
    with pytest.raises(clts.DeviceError, match="unusable: probe crashed"):
        get_device("broken-gpu")


def test_probe_child_process_reports_crash(monkeypatch):
    """A driver that kills the probing process is reported, not propagated."""
    info = devmod.discover()[0]
    monkeypatch.setattr(devmod.sys, "executable", "/bin/false")
    res = devmod.run_probes([info])
    assert res[info.index]["ok"] is False
    assert "crashed" in res[info.index]["reason"]


def test_probe_runs_without_oclgrind_checkers(monkeypatch):
    """Oclgrind's uninitialised-value checker crashes on the probe's vector loads, and the test
    mode sets it: the probe child must run without it, or a fresh machine caches Oclgrind as
    unusable and the Oclgrind test stage finds no device."""
    monkeypatch.setenv("OCLGRIND_UNINITIALIZED", "1")
    monkeypatch.setenv("OCLGRIND_DATA_RACES", "1")
    monkeypatch.setenv("CLTS_SOMETHING_ELSE", "kept")
    seen = {}
    real_popen = devmod.subprocess.Popen

    def spy(cmd, **kw):
        seen.update(kw["env"])
        return real_popen(cmd, **kw)
    monkeypatch.setattr(devmod.subprocess, "Popen", spy)
    info = devmod.discover()[0]
    assert devmod.run_probes([info])[info.index]["ok"] is True
    assert "OCLGRIND_UNINITIALIZED" not in seen and "OCLGRIND_DATA_RACES" not in seen
    assert seen["CLTS_SOMETHING_ELSE"] == "kept"


def test_device_capabilities_and_identity(device):
    assert device.max_alloc > 0 and device.global_mem >= device.max_alloc
    assert device.local_mem > 0 and device.max_work_group >= 1
    assert isinstance(device.fp64, bool) and isinstance(device.int64_atomics, bool)
    assert len(device.fingerprint) == 16
    assert device.slug == device.slug.lower() and " " not in device.slug
    assert device.queue.properties & 2  # profiling enabled


@pytest.mark.oclgrind
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("width", [1, 4])
def test_copy_template_runs_and_is_cached(device, dtype, width):
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no fp64")
    import pyopencl.array as cla
    real = "double" if dtype == np.float64 else "float"
    x = np.random.default_rng(0).standard_normal(256).astype(dtype)
    prg = device.program("runtime/copy.cl.mako", real=real, width=width)
    builds = programs.stats["builds"]
    assert device.program("runtime/copy.cl.mako", real=real, width=width) is prg
    assert programs.stats["builds"] == builds
    opt = device.program("runtime/copy.cl.mako", real=real, width=width,
                         build_options=("-cl-mad-enable",))
    assert opt is not prg and opt is device.program(
        "runtime/copy.cl.mako", real=real, width=width, build_options=("-cl-mad-enable",))
    a = cla.to_device(device.queue, x)
    b = cla.empty_like(a)
    with timing(device) as t:
        launch(device, prg.kernel("copy"), x.size // width, None, a.data, b.data)
    assert np.array_equal(b.get(), x)
    assert len(t.events) == 1 and t.kernel_seconds >= 0


def test_device_build_options_reach_the_driver(device):
    """A Device object's ``state.build_options`` (the offline collector's -cl-opt-disable) go
    to every build on that object, and to no other Device of the same hardware."""
    import pyopencl as cl
    fresh = devmod.Device(device.info)
    fresh.state.build_options = ("-cl-opt-disable",)
    prg = fresh.program("runtime/copy.cl.mako", real="float", width=1)
    used = prg.cl_program.get_build_info(fresh.cl_device, cl.program_build_info.OPTIONS)
    assert "-cl-opt-disable" in used
    plain = devmod.Device(device.info).program("runtime/copy.cl.mako", real="float", width=1)
    assert "-cl-opt-disable" not in plain.cl_program.get_build_info(
        device.cl_device, cl.program_build_info.OPTIONS)


def test_fp64_on_device_without_it_raises(device, monkeypatch):
    monkeypatch.setattr(type(device.info), "fp64", property(lambda self: False))
    with pytest.raises(clts.DeviceError, match="cl_khr_fp64"):
        programs.build_program(device, "runtime/copy.cl.mako", {"real": "double", "width": 1})


def test_build_error_shows_template_params_log_and_source(device, tmp_path, monkeypatch):
    bad = programs.TEMPLATE_DIR / "runtime" / "_test_broken.cl.mako"
    bad.write_text("<%include file='/common/real.cl.mako'/>\n__kernel void k(__global real *x)\n"
                   "{\n    x[0] = undefined_symbol_${tag};\n}\n")
    clts.set_options(dump_sources=str(tmp_path))
    try:
        with pytest.raises(clts.KernelBuildError) as ei:
            device.program("runtime/_test_broken.cl.mako", real="float", tag="abc")
    finally:
        bad.unlink()
    msg = str(ei.value)
    assert "runtime/_test_broken.cl.mako" in msg and "tag='abc'" in msg
    assert "undefined_symbol_abc" in msg and ">>" in msg
    assert list(tmp_path.glob("runtime___test_broken-*.cl"))


def test_chunking_respects_device_limits(device, monkeypatch):
    n = 10_000
    per = device.max_alloc // 1000 + 1  # ~1000 items per buffer at most
    chunks = chunk_sizes(n, [per, 8], device)
    assert chunks[0][0] == 0 and chunks[-1][1] == n
    assert all(b - a <= 1000 for a, b in chunks)
    assert all(c[1] == d[0] for c, d in zip(chunks, chunks[1:]))
    clts.set_options(max_chunk=7)
    assert max(b - a for a, b in chunk_sizes(50, [8], device, multiple=4)) == 4
    with pytest.raises(clts.DeviceError):
        chunk_sizes(5, [device.max_alloc + 1], device)


def test_icd_dir_lists_drivers(tmp_path, monkeypatch):
    from clts.runtime import icd
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    entries = {"a.icd": "/x/liba.so", "b.icd": "libb.so"}
    d = icd.write_vendor_dir(entries)
    assert sorted(p.name for p in d.iterdir()) == ["a.icd", "b.icd"]
    assert (d / "a.icd").read_text().strip() == "/x/liba.so"
    assert icd.write_vendor_dir(entries) == d


@pytest.mark.oclgrind
@pytest.mark.oclgrind_selftest
def test_oclgrind_mode_catches_out_of_bounds(device, request, capfd):
    """The Oclgrind mode's detector sees a planted out-of-bounds write."""
    if not request.config.getoption("--oclgrind"):
        pytest.skip("writes out of bounds on purpose: only under the simulator")
    import pyopencl.array as cla
    x = cla.to_device(device.queue, np.zeros(16, np.float32))
    prg = device.program("runtime/copy.cl.mako", real="float", width=1)
    launch(device, prg.kernel("copy"), 32, None, x.data, x.data)
    device.queue.finish()
    from conftest import OCLGRIND_REPORT
    assert OCLGRIND_REPORT.search("".join(capfd.readouterr()))


@pytest.mark.parametrize("n_chunk", [1, 7, 64, 1000])
def test_pipelined_chunks_match_one_pass(device, n_chunk, monkeypatch):
    """Copy + scale through the copy/compute pipeline in chunks == the whole array at once."""
    import pyopencl as cl

    from clts.runtime.pipeline import run_pipelined
    clts.set_options(max_chunk=n_chunk)
    x = np.random.default_rng(1).standard_normal((300, 8)).astype(np.float32)
    out = np.full_like(x, np.nan)
    chunks = chunk_sizes(len(x), [x[0].nbytes, x[0].nbytes], device)
    assert len(chunks) == -(-len(x) // n_chunk)
    prg = device.program("runtime/copy.cl.mako", real="float", width=1)
    bufs = [(cl.Buffer(device.context, cl.mem_flags.READ_WRITE, n_chunk * x[0].nbytes),
             cl.Buffer(device.context, cl.mem_flags.READ_WRITE, n_chunk * x[0].nbytes))
            for _ in range(2)]

    def upload(i, a, b, slot, q):
        return [cl.enqueue_copy(q, bufs[slot][0], x[a:b], is_blocking=False)]

    def compute(i, a, b, slot, wait_for):
        return [launch(device, prg.kernel("copy"), (b - a) * 8, None, bufs[slot][0],
                       bufs[slot][1], wait_for=wait_for)]

    def download(i, a, b, slot, q, wait_for):
        return [cl.enqueue_copy(q, out[a:b], bufs[slot][1], is_blocking=False,
                                wait_for=wait_for)]

    run_pipelined(device, chunks, upload=upload, compute=compute, download=download)
    assert np.array_equal(out, x)


def test_kernels_build_without_warnings(device, monkeypatch):
    """Every public function's kernels compile without a warning in the driver's build log
    (a first run printed the driver's "N warnings generated." between a user's lines)."""
    import pyopencl
    import pyopencl.invoker  # noqa: F401 - imported with its cache on, before the patch below
    from test_threads import _calls

    from clts.runtime import devices as devmod
    from clts.runtime import programs
    monkeypatch.setattr(pyopencl, "_PYOPENCL_NO_CACHE", True)   # a real compile, with its log
    fresh = devmod.Device(device.info)
    # only this test's builds: earlier tests of the process (a pytest-xdist worker runs
    # several files) may have built other parameters on the same device
    n0 = len(programs.build_warnings)
    for f in _calls(fresh).values():
        f()
    from clts.ocean.inputs import benchmark_inputs
    x = benchmark_inputs(2 ** 10)
    clts.ocean.tke(*x.values(), device=fresh)
    clts.ocean.tke(*x.values(), device=fresh, superbee={"version": "tiled"})
    seen = [w for w in programs.build_warnings[n0:] if w[1] == str(fresh)]
    assert not seen, [(t, len(ws), ws[:2]) for t, _, ws in seen]


def test_driver_notes_on_every_kernel_are_not_build_warnings(monkeypatch):
    """NVIDIA's driver (580, H100) reports "Function X is a kernel, so overriding noinline
    attribute" for every kernel of every program (it marks every function noinline itself):
    not a warning about a clts source. Any other warning line of a log is still kept."""
    import pyopencl as cl

    from clts.runtime import programs

    class Built:
        def __init__(self, log):
            self.log = log

        def get_build_info(self, dev, what):
            return self.log

    class Dev:
        cl_device = None

        def __str__(self):
            return "fake NVIDIA"
    monkeypatch.setattr(programs, "build_warnings", [])
    note = ("(): Warning: Function {} is a kernel, so overriding noinline attribute. The "
            "function may be inlined when called.")
    programs._record_log(Dev(), "t.cl.mako", Built("\n".join(
        note.format(k) for k in ("copy", "superbee_tiled"))))
    assert programs.build_warnings == []
    other = "<kernel>:3:5: warning: unused variable 'x'"
    programs._record_log(Dev(), "t.cl.mako", Built(note.format("copy") + "\n" + other))
    assert programs.build_warnings == [("t.cl.mako", "fake NVIDIA", [other])]
    assert cl.program_build_info.LOG is not None


def test_pyopencl_build_reports_are_silent_only_inside_clts_builds():
    """pyopencl warns (CompilerWarning) on every non-empty build log, as Intel's CPU runtime
    writes for every build: silent in a thread inside a clts build, per thread (a
    warnings.catch_warnings block, process-wide, let one escape while threads built), and
    unchanged for a user's own programs."""
    import threading
    import warnings

    import pyopencl as cl

    from clts.runtime import programs
    programs._quiet_compiler_output()
    assert cl.compiler_output.__wrapped__ is not None
    elsewhere = []

    def user_build():
        cl.compiler_output("a user's program said something")
        elsewhere.append(True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        programs._building.depth = 1            # this thread builds for clts ...
        try:
            cl.compiler_output("Compilation started ... Done.")
            t = threading.Thread(target=user_build)    # ... another thread does not
            t.start()
            t.join()
        finally:
            programs._building.depth = 0
        cl.compiler_output("a user's program, this thread")
    assert elsewhere == [True]
    assert [issubclass(w.category, cl.CompilerWarning) for w in seen] == [True, True]
