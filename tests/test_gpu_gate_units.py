"""The machinery of the GPU resource gate, fast and without the vendors' back ends: their report
parsers, the coalescing tracer on pocl, the gate's verdicts and allow-list, the recorded figures
(the gate itself: tests/test_gpu_resources.py; scripts/gpu-check.sh: tests/test_gpu_check.py)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from clts.runtime import occupancy as occ
from clts.tune import backends, coalescing, gate

ROOT = Path(__file__).resolve().parents[1]


def test_ptxas_parser():
    text = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'bfast_roc' for 'sm_80'
ptxas info    : Function properties for bfast_roc
    1200 bytes stack frame, 1196 bytes spill stores, 1300 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 1200 bytes cumulative stack size, 61952 bytes smem, 416 bytes cmem[0]
ptxas info    : Compiling entry function 'copy' for 'sm_80'
ptxas info    : Function properties for copy
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 360 bytes cmem[0]
"""
    a, b = backends.parse_ptxas(text)
    assert (a.name, a.vgprs, a.spill, a.scratch, a.lds) == ("bfast_roc", 255, 1196, 1200, 61952)
    assert (b.name, b.vgprs, b.spill, b.scratch, b.lds) == ("copy", 12, 0, 0, 0)


def test_amdgpu_remarks_with_agprs_and_spills():
    r = "k.cl:1:1: remark: {} [-Rpass-analysis=kernel-resource-usage]\n"
    text = "".join(r.format(x) for x in (
        "Function Name: tke_step", "    SGPRs: 60", "    VGPRs: 160", "    AGPRs: 8",
        "    ScratchSize [bytes/lane]: 24", "    Occupancy [waves/SIMD]: 3",
        "    VGPRs Spill: 5", "    LDS Size [bytes/block]: 0"))
    (k,) = backends.parse_remarks(text)
    assert (k.vgprs, k.agprs, k.sgprs, k.scratch, k.spill, k.regs) == (160, 8, 60, 24, 24, 168)


def test_igc_dump_parser_reports_the_last_retry(tmp_path):
    """The binary IGC keeps is its last retry (``_<retry>_simd``): recorded from ocloc pvc on
    bp_rss (N = 274, subgroup 16) float32 K = 9, whose first try spills 1,920 B and whose
    retry none, and float64 K = 9 at 256 GRF (2,048 B, then 1,920 B: ocloc warns "spilled
    around 30", 30 GRFs of 64 B)."""
    head = "//.kernel {k}\n//.platform PVCXT\n//.thread_config numGRF={g}, numAcc=4, numSWSB=16\n"
    ra = "//.RA type\tGRAPH_COLORING_SPILL_FF_RA\n"
    for name, text in {
            "f_simd16_entry_0001.asm": head.format(k="bp_rss", g=128) + ra
            + "//.spill size 1920\n//.spill GRF est. ref count 224\n",
            "f_1_simd16_entry_0001.asm": head.format(k="bp_rss", g=128) + ra,
            "f_simd16_entry_0002.asm": head.format(k="bp_dp", g=128) + ra,
            "d_simd16_entry_0001.asm": head.format(k="diag_topk", g=256) + "//.spill size 2048\n",
            "d_1_simd16_entry_0001.asm": head.format(k="diag_topk", g=256)
            + "//.spill size 1920\n//.private memory size 1024\n",
            "c_simd32_entry_0001.asm": head.format(k="copy", g=128) + "//.spill size 768\n",
            "c_2_simd16_entry_0001.asm": head.format(k="copy", g=128),
            "c_1_simd16_entry_0001.asm": head.format(k="copy", g=128) + "//.spill size 64\n",
    }.items():
        (tmp_path / ("OCL_asm" + name)).write_text(text)
    ks = {k.name: k for k in backends.parse_igc_dumps(tmp_path.glob("*.asm"))}
    assert (ks["bp_rss"].spill, ks["bp_rss"].simd, ks["bp_rss"].grf) == (0, 16, 128)
    assert (ks["bp_dp"].spill, ks["bp_dp"].simd) == (0, 16)
    k = ks["diag_topk"]
    assert (k.spill, k.scratch, k.grf, k.simd) == (1920, 1024, 256, 16)
    assert (ks["copy"].spill, ks["copy"].simd) == (0, 16)


SRC = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
static double get(__global const double *p, int i) { return p[i]; }
static double twice(__global const double *p, int i) { return 2.0 * get(p, i); }
__kernel void strided(__global const double *x, __global double *y, const int n)
{
    size_t g = get_global_id(0);
    __global double *row = y + 0;
    double acc = 0.0;
    for (int j = 0; j < 4; ++j)
        acc += x[(g * n + j)];          /* lanes n doubles apart */
    row[g] = acc + twice(x, (int)g);   /* contiguous */
}
"""


def _pocl_device():
    from clts.runtime import get_device, usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("no pocl device")
    return get_device(hits[0])


def test_instrumented_copy_measures_segments_on_pocl():
    import pyopencl as cl
    text, sites = coalescing.instrument(SRC)
    assert "__clts_trace" in text and any(s.startswith("x[") for s in sites)
    dev = _pocl_device()
    prg = cl.Program(dev.context, text).build(options=["-w"])
    n, items = 16, 256
    x = cl.Buffer(dev.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                  hostbuf=np.arange(items * n, dtype=np.float64))
    y = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, items * 8)
    trace = coalescing.run_traced(dev, prg, "strided", len(sites), (items,), (64,),
                                  [x, y, np.int32(n)])
    size, s32, s64, worst, hot = coalescing.summarize(trace, sites)
    assert size == 8 and worst.startswith("x[") and hot == 1   # the loop's site only
    assert s32 == 32 and s64 == 64                             # 128 B apart: one segment each
    # the contiguous store: 32 doubles = 256 B = 2 segments
    store = next(i for i, s in enumerate(sites) if s.startswith("row["))
    assert coalescing.segments(trace[:, store, 2:].astype(np.int64)[:64], 8, 32) == 2


MACRO_SRC = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ARGS __global const double* restrict u, \\
    __global double* restrict out, const int T
#define STORE_ONE(v, p) { *(p) = (v); }
__kernel void levels(ARGS)
{
    const size_t c = get_global_id(0);
    const double2 pair = vload2(0, u + c * T);      /* time level last: T doubles apart */
    out[c] = pair.s0 + pair.s1 + u[c * T + 2];
}
__kernel void hidden(ARGS)
{
    STORE_ONE(1.0, out + get_global_id(0));         /* a pointer handed to a macro: not seen */
}
#define LEVEL(ptr, c, l) (ptr)[(c) * T + (l)]
#define SET(ptr, c, v) (ptr)[c] = (v)
__kernel void in_macros(ARGS)
{
    const size_t c = get_global_id(0);
    SET(out, c, LEVEL(u, c + 0, 1));                  /* accesses inside macro bodies */
}
"""


def test_tracer_sees_macro_parameter_lists_and_vloads_and_reports_untraced():
    text, sites = coalescing.instrument(MACRO_SRC)
    assert "u[c * T + 2]" in sites and "vload2(u + c * T + 0)" in sites
    assert "__CLTS_ATV(" in text and "STORE_ONE(v, p) { *(p) = (v); }" in text
    assert "u[((c + 0)) * T + 1]" in sites and "out[c]" in sites    # expanded, then traced
    import pyopencl as cl
    dev = _pocl_device()
    built = cl.Program(dev.context, text).build(options=["-w"])
    items, T = 128, 3
    u = cl.Buffer(dev.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                  hostbuf=np.zeros(items * T))
    out = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, items * 8)
    for name, worst_site in (("levels", None), ("hidden", "-"), ("in_macros", "u")):
        trace = coalescing.run_traced(dev, built, name, len(sites), (items,), (64,),
                                      [u, out, np.int32(T)])
        size, s32, s64, worst, hot = coalescing.summarize(trace, sites)
        if worst_site == "-":     # no site reached: sites 0, never a perfect figure
            assert (hot, worst, s32) == (0, "-", 0.0)
        elif worst_site == "u":   # the level read through the macros: 6 segments again
            assert worst.startswith("u[") and s32 == 6.0 and hot == 2
        else:     # 32 lanes 24 B apart: 768 B, 6 segments (the vload2 and the u[] read alike)
            assert s32 == 6.0 and size in (8, 16) and hot == 3


def test_tracer_ignores_brackets_in_comments():
    """A comment like the Mann-Kendall kernel's ``a[0..mm)`` left the tracer's bracket matching
    unbalanced, so mk_pairs was never traced."""
    src = """
__kernel void k(__global const float* restrict a, __global float* restrict out, const int m)
{
    // select among a[0..mm), ranks shifted by off
    /* block comment: a[1..2) [ */
    out[get_global_id(0)] = a[get_global_id(0) * m];
}
"""
    text, sites = coalescing.instrument(src)
    assert sorted(sites) == ["a[get_global_id(0) * m]", "out[get_global_id(0)]"]
    assert "a[0..mm)" not in text


def test_untraced_kernels_fail_the_gate_unless_listed():
    """A kernel auto launched with no traced access: marked by coalescing.apply, its own check."""
    src_a, src_b = "kernel void a() {}", "kernel void b() {}"
    ra = _row(kernel="a", target="sm_80", source=src_a)
    ra.extra["auto_gpus"] = ("a100",)
    rb = _row(kernel="b", target="sm_80", source=src_b)
    rb.extra["auto_gpus"] = ("a100",)
    rc = _row(kernel="c", target="sm_80", source="kernel void c() {}")
    rc.extra["auto_gpus"] = ("a100",)
    traced = [coalescing.Coalescing("a100", "t", "a", 0, 0.0, 0.0, "-", 0, source=src_a,
                                    note="no global access traced"),
              coalescing.Coalescing("a100", "t", "b", 8, 2.0, 4.0, "b[i]", 3, source=src_b)]
    coalescing.apply(traced, [ra, rb, rc])
    assert ra.segments is None and ra.extra["untraced"] == "no global access traced"
    assert rb.segments == 2.0 and "untraced" not in rb.extra
    assert "saw no launch" in rc.extra["untraced"]           # launched, never traced
    vs = gate.violations([ra, rb, rc], [])
    assert {(v.row.kernel, v.check) for v in vs} == {("a", "untraced"), ("c", "untraced")}
    allow = [{"kernel": "a", "checks": ["untraced"], "reason": "r" * 12, "argument": "a" * 12}]
    assert {v.row.kernel for v in gate.violations([ra, rc], allow) if v.allowed_by} == {"a"}


def _row(**kw):
    base = dict(template="t.cl.mako", kernel="k", target="gfx908", params={}, auto=True,
                default=True, regs=40, local_limit=65536, wg=64)
    base.update(kw)
    r = gate.Row(**base)
    r.occupancy = occ.occupancy(r.target, regs=r.regs, work_group=r.wg, local_mem=r.lds)
    return r


def test_gate_verdicts_and_allowlist():
    good = _row()
    heavy = _row(kernel="heavy", regs=234)                       # 10 % on gfx908
    spill = _row(kernel="sp", spill=16)
    lds = _row(kernel="big", lds=70000)
    forced = _row(kernel="f", auto=False, spill=8)               # a forced version's spill
    cand = _row(kernel="c", auto=False, default=False, spill=8)  # tuner candidates may spill
    coal = _row(kernel="co", segments=32.0)
    table = [good, heavy, spill, lds, forced, cand, coal]
    allow = [{"kernel": "heavy", "checks": ["occupancy"], "targets": ["gfx908"],
              "reason": "r", "argument": "a"},
             {"kernel": "gone", "checks": ["spill"], "reason": "r", "argument": "a"}]
    vs = gate.violations(table, allow)
    got = {(v.row.kernel, v.check, v.allowed_by is not None) for v in vs}
    assert got == {("heavy", "occupancy", True), ("sp", "spill", False),
                   ("big", "local", False), ("f", "spill", False),
                   ("co", "coalescing", False), ("big", "occupancy", False)}
    assert [e["kernel"] for e in gate.stale(table, allow)] == ["gone"]
    # float32 (4-byte) accesses: more than 2 segments fail
    c32 = _row(kernel="c32", segments=3.0)
    assert gate.violations([c32], [], itemsize={c32.key: 4})[0].check == "coalescing"
    assert gate.violations([c32], [], itemsize={c32.key: 8}) == []
    # a double8 vload a lane (64 bytes): 32 lanes' contiguous vectors fill 16 segments at best
    vec = _row(kernel="v", segments=16.9)
    assert gate.violations([vec], [], itemsize={vec.key: 64}) == []
    vec.segments = 40.0
    assert gate.violations([vec], [], itemsize={vec.key: 64})[0].check == "coalescing"
    assert [gate.max_segments(s) for s in (1, 2, 4, 8, 16, 64)] == [4, 4, 2, 4, 8, 32]


def test_shipped_allowlist_is_well_formed():
    entries = gate.load_allowlist()
    assert entries, "the allow-list lists today's known failures"
    for e in entries:
        assert set(e.get("targets") or []) <= set(occ.LIMITS) | {"spir64"}, e
        assert len(e["reason"]) > 10 and len(str(e["argument"])) > 10, e


def test_record_and_read_back(tmp_path, monkeypatch):
    rows = [_row(kernel="k", regs=96, params={"TILE": 32, "SRC": "x" * 100}),
            _row(kernel="k", regs=40, params={"TILE": 16}),
            _row(kernel="cand", auto=False, default=False)]
    (path,) = gate.record(rows, tmp_path)
    assert path.name == "gfx908.yaml"
    monkeypatch.setattr(occ, "resources_dir", lambda: tmp_path)
    occ.clear_records()
    try:
        assert occ.recorded("gfx908", "t.cl.mako", "k", {"TILE": 16}).regs == 40
        assert occ.recorded("gfx908", "t.cl.mako", "k", {"TILE": 32}).regs == 96
        assert occ.recorded("gfx908", "t.cl.mako", "cand") is None
    finally:
        occ.clear_records()


def test_shipped_resource_figures_load():
    for target in ("sm_80", "gfx908"):
        recs = occ._records(target)
        if not recs:
            pytest.skip("no recorded figures yet")
        assert all(r.regs >= 0 and r.kernel for r in recs)


def test_unregistered_gpu_library_is_found(tmp_path, monkeypatch):
    from clts.runtime import icd
    (tmp_path / "libnvidia-opencl.so.1").write_text("")
    monkeypatch.setenv("CLTS_OPENCL_LIB_DIRS", str(tmp_path))
    got = icd.unregistered_gpu_libraries([])
    assert got["clts-nvidia.icd"] == str(tmp_path / "libnvidia-opencl.so.1")
    # one registered by a vendor .icd file (by name or path) is not listed twice
    assert "clts-nvidia.icd" not in icd.unregistered_gpu_libraries(["libnvidia-opencl.so.1"])


def test_a_compile_that_times_out_is_its_own_excusable_check():
    slow = gate.Row("t.cl.mako", "t.cl.mako", "gfx908", {}, False, False, ok=False,
                    log="error: compile timed out after 900 s")
    broken = gate.Row("u.cl.mako", "u.cl.mako", "gfx908", {}, False, False, ok=False,
                      log="k.cl:3:1: error: use of undeclared identifier 'x'")
    allow = [{"kernel": "t.cl.mako", "checks": ["compile_time"], "reason": "slow back end",
              "argument": "measured: > 900 s"}]
    vs = {v.row.template: v for v in gate.violations([slow, broken], allow)}
    assert vs["t.cl.mako"].check == "compile_time" and vs["t.cl.mako"].allowed_by
    assert vs["u.cl.mako"].check == "compile" and vs["u.cl.mako"].allowed_by is None


def test_gate_workloads_build_bfast_breaks_and_trend_at_their_defaults():
    """``auto_calls`` (what the gate compiles for ``auto``) runs ``bfast_breaks`` at its default
    order = 3 (K = 8 regressors) and breaks = 5 on 274 dates, and ``trend_test`` at its
    defaults: a spill at the defaults users build is seen by the gate."""
    from clts.runtime import programs
    from clts.tune import workloads
    dev = _pocl_device()
    calls = dict(workloads.auto_calls(dev, np.float32, scale=1 / 32))
    assert {"bfast_breaks", "trend"} <= {label.split()[0] for label in calls}
    seen, key = [], programs._key

    def recording(template, params, options=()):
        seen.append((template, dict(params)))
        return key(template, params, options)
    mp = pytest.MonkeyPatch()
    mp.setattr(programs, "_key", recording)
    mp.setattr(dev.state, "constants", {})          # this call's look-ups, not earlier memos
    mp.setattr(dev.state, "program_index", {})
    try:
        for label, fn in calls.items():
            if label.split()[0] in ("bfast_breaks", "trend"):
                fn()
    finally:
        mp.undo()
    bp = [p for t, p in seen if t == "bfast/breakpoints.cl.mako"]
    # (the number of dates is a kernel argument, no template parameter: one source for any N)
    assert bp and {(p["K"], p["BREAKS"]) for p in bp} == {(8, 5)}
    assert not any("N" in p for p in bp)
    assert any(t.startswith("trend/") for t, _ in seen)


def test_ocloc_alone_gets_the_build_parameters(monkeypatch, tmp_path):
    """A program's ``grf`` reaches ocloc as Intel's driver gets it, and no other back end."""
    cmds = []

    def run(cmd, **kw):
        cmds.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "error: stop here")
    monkeypatch.setattr(backends, "_run", run)
    monkeypatch.setattr(backends, "ocloc", lambda: ("ocloc", ""))
    src = "__kernel void k(__global float *x) { x[0] = 1.0f; }\n"
    for params in ({"grf": 256}, {"grf": 0}, {}):
        backends.compile_source(src, "pvc", tmp_path, params)
    opts = [c[c.index("-options") + 1] for c in cmds]
    assert opts == ["-cl-std=CL1.2 -cl-intel-256-GRF-per-thread", "-cl-std=CL1.2",
                    "-cl-std=CL1.2"]
    cmds.clear()
    for target in ("gfx908", "sm_80", "spir64"):
        backends.compile_source(src, target, tmp_path, {"grf": 256})
    assert cmds and not any("GRF" in " ".join(c) for c in cmds)


def _fake_nvcc_wheel(folder, with_ptxas=True):
    """A wheel named and laid out as NVIDIA's nvidia-cuda-nvcc-cu12 (ptxas: a shell script)."""
    import re
    import zipfile
    version = re.search(r'NVCC_VERSION="\$\{CLTS_NVCC_VERSION:-([^}]+)\}"',
                        (ROOT / "scripts" / "gpu-toolchain.sh").read_text()).group(1)
    folder.mkdir(exist_ok=True)
    info = f"nvidia_cuda_nvcc_cu12-{version}.dist-info"
    wheel = folder / f"nvidia_cuda_nvcc_cu12-{version}-py3-none-manylinux2014_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        if with_ptxas:
            z.writestr("nvidia/cuda_nvcc/bin/ptxas", "#!/bin/sh\necho 'ptxas: fake'\n")
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: nvidia-cuda-nvcc-cu12\n"
                   f"Version: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: "
                   "false\nTag: py3-none-manylinux2014_x86_64\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


def test_toolchain_script_fills_an_empty_cache(tmp_path):
    """scripts/gpu-toolchain.sh, the GPU gate's first step, from an empty cache as on a fresh
    machine: called from another folder with a relative interpreter path and a relative cache,
    pip downloads the nvcc wheel (here a local stand-in: no network), ptxas alone is kept and
    no wheel stays behind, also when the wheel lacks ptxas. Intel's and AMD's tools stand in as
    stubs already in the cache (their steps: apt)."""
    import os
    import stat
    import sys

    def script(path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n" + text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    script(tmp_path / "venv" / "bin" / "python", f'exec "{sys.executable}" "$@"\n')
    script(tmp_path / "tools" / "clang-16", "exit 1\n")          # present, never needed
    (tmp_path / "clc").mkdir()
    (tmp_path / "clc" / "amdgcn--amdhsa.bc").write_bytes(b"x")

    def fill(cache, wheels):
        script(tmp_path / cache / "igc" / "usr" / "bin" / "ocloc", "exit 0\n")
        (tmp_path / cache / "atom_cmpxchg_nvptx.bc").write_bytes(b"shim")
        env = dict(os.environ, PYTHON="venv/bin/python", CLTS_GPU_TOOLCHAIN=cache,
                   CLTS_LIBCLC=str(tmp_path / "clc"), PIP_NO_INDEX="1",
                   PIP_FIND_LINKS=str(wheels), PIP_CACHE_DIR=str(tmp_path / "pip-cache"),
                   PATH=f"{tmp_path / 'tools'}{os.pathsep}{os.environ['PATH']}")
        return subprocess.run(["bash", str(ROOT / "scripts" / "gpu-toolchain.sh")], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)

    out = fill("cache", _fake_nvcc_wheel(tmp_path / "wheels").parent)
    assert out.returncode == 0, out.stderr[-3000:]
    cache = tmp_path / "cache"
    ptxas = cache / "nvcc" / "nvidia" / "cuda_nvcc" / "bin" / "ptxas"
    assert os.access(ptxas, os.X_OK)
    assert not list(cache.rglob("*.whl")) and not list(cache.glob("wheel.*"))
    env_sh = (cache / "env.sh").read_text()
    assert f'CLTS_PTXAS="{ptxas}"' in env_sh and f'CLTS_OCLOC="{cache}/igc/usr/bin/ocloc"' in env_sh
    # again: every step cached, nothing downloaded (no wheels to find at all)
    again = fill("cache", tmp_path / "nowhere")
    assert again.returncode == 0 and "downloading" not in again.stderr, again.stderr[-3000:]

    bad = fill("cache2", _fake_nvcc_wheel(tmp_path / "broken", with_ptxas=False).parent)
    assert bad.returncode != 0
    assert not list((tmp_path / "cache2").rglob("*.whl"))
    assert not (tmp_path / "cache2" / "nvcc").exists()


def test_compile_all_compiles_each_source_target_and_options_once(monkeypatch):
    """Within one process a (source, target, back-end options) compiles once: the gate's two
    modules and GPUs rendering the same source share it; Intel's ``grf`` is an option of its
    own, and each result keeps its own template, parameters and local-memory limit."""
    from clts.tune import offline
    calls = []

    def fake(source, target, workdir, params=None):
        calls.append((source, target, dict(params or {})))
        return True, "", [backends.KernelUsage("k", vgprs=len(calls))]
    monkeypatch.setattr(offline, "compile_source", fake)
    monkeypatch.setattr(offline, "_COMPILED", {})
    monkeypatch.setattr(offline, "STATS", {})
    monkeypatch.setattr(backends, "available", lambda t: True)
    a, b = "__kernel void a(void) {}\n", "__kernel void b(void) {}\n"
    col = offline.Collected(None, sources={
        a: ("x.cl.mako", {}, {"sm_80": 1000, "gfx908": 2000}),
        b: ("y.cl.mako", {"grf": 256}, {"pvc": 3000})}, defaults={a})
    first = offline.compile_all(col)
    assert len(calls) == 3
    other = offline.Collected(None, sources={
        a: ("x.cl.mako", {"other": 1}, {"sm_80": 500}),
        b: ("y.cl.mako", {"grf": 128}, {"pvc": 3000})})
    second = offline.compile_all(other)
    assert len(calls) == 4 and calls[-1] == (b, "pvc", {"grf": 128})
    assert (second[0].params, second[0].local_mem, second[0].default) == ({"other": 1}, 500,
                                                                           False)
    assert second[0].kernels == [k for r in first if r.target == "sm_80" for k in r.kernels]
    assert offline.STATS["sm_80"] == [1, offline.STATS["sm_80"][1], 1]
