"""Every kernel the public functions render for a GPU compiles for that GPU's target. Under the
A100's and the MI100's recorded descriptions (emulated on pocl), every algorithm runs every
code version with the profile's values, plus one sampled tuner candidate per tuner entry (a
different one per GPU); each rendered source is compiled as OpenCL C 1.2 for the targets of the
GPU it was rendered for (clang + libclc: amdgcn gfx908, nvptx64 sm_80 - through ptxas too where
scripts/gpu-toolchain.sh fetched it). A compile error or a compiler warning fails, so does
static local memory above that GPU's limit, and so does scratch (spilled registers or private
arrays in memory) on gfx908 outside the known cases below and the gate's allow-list. The Intel
GPUs, the newer targets, auto's realistic shapes and every recorded GPU's forced versions are
the GPU resource gate's (tests/test_gpu_resources.py, the test command's last stage, with IGC
for the Intel GPUs: the two Intel descriptions compiled here for spir64 only repeated it, at
half of this module's time). Skipped where clang-16 or libclc-16 is missing (``scripts/setup.sh
test`` installs them).
The two compiling tests belong to the GPU resource gate's stage (marker ``gpu_gate``, run by
scripts/gpu-gate.sh with CLTS_GPU_GATE=1): about 300 compiles, minutes on two cores, that in
the device runs' stage lengthened it on a machine whose cores those runs already fill. In that
stage the forced versions' sources are the ones the resource gate compiled just before for the
same targets: ``offline.compile_all`` compiles each (source, target, options) once per process,
so only the tuner candidates are compiled here. The parsers' unit test runs everywhere.
"""
from __future__ import annotations

import logging
import os
import time

import pytest

from clts.runtime import emulation
from clts.tune import offline

#: lines for the end of the run (conftest.py's "what was tried")
REPORT: list[str] = []

#: (template, kernel, template parameters that select it) of the scratch that remains, and why
KNOWN_SCRATCH = [
    ("mp/diag_topk.cl.mako", "diag_topk", {"LOCAL": 0},
     "topk_store='private': each work-item's k-lists of a tile are indexed at run time, so GPU "
     "compilers put them in scratch; GPU profiles keep them in local memory (topk_store='local')"
     " and only a forced 'private', or lists that fit no local memory, take this kernel"),
    ("mp/diag_top1.cl.mako", "diag", {"LOCAL": 0, "PACK": 0},
     "store='private' in float: the tile's column bests (value and index arrays) indexed at run "
     "time; GPU profiles use store='local'"),
]


def _known(template, kernel, params):
    """KNOWN_SCRATCH's cases, and the gfx908 spills the resource gate's allow-list excuses
    with their reasons (clts/devices/resources/gpu-allowlist.yaml: one list of known spills)."""
    from clts.tune import gate
    listed = any(e["kernel"] == kernel and "spill" in e["checks"]
                 and e.get("template", template) == template
                 and (not e.get("targets") or "gfx908" in e["targets"])
                 and all(params.get(p) == v for p, v in (e.get("params") or {}).items())
                 for e in gate.load_allowlist())
    return listed or any(template == t and kernel == k
                         and all(params.get(p) == v for p, v in sel.items())
                         for t, k, sel, _ in KNOWN_SCRATCH)


@pytest.fixture(scope="module")
def compiled():
    why = offline.missing_tools()
    if why:
        pytest.skip(f"offline GPU compiles need clang-16 and libclc-16: {why}")
    from clts.runtime import usable
    pocl = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not pocl:
        pytest.skip("the emulated GPUs run on pocl; no pocl device here")
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    # with the seeds they always had (the same sampled candidates); the Intel GPUs, the others,
    # realistic shapes and IGC are the GPU resource gate's (tests/test_gpu_resources.py)
    t0 = time.perf_counter()
    cols = [offline.collect(emulation.emulate(name, pocl[0]), sample=1, seed=seed, auto=False)
            for seed, name in ((0, "a100"), (3, "mi100"))]
    col = offline.merge(cols)
    offline.PHASES["offline_compile collect"] = time.perf_counter() - t0
    return col, offline.compile_all(col, skip=("pvc", "dg2", "tgllp"))


#: the compiling tests run in the GPU resource gate's stage (see the module's docstring)
in_gate_stage = pytest.mark.skipif(not os.environ.get("CLTS_GPU_GATE"),
                                   reason="the offline GPU compiles run in the GPU resource "
                                          "gate's stage (scripts/gpu-gate.sh, CLTS_GPU_GATE=1)")


@pytest.mark.gpu_gate
@in_gate_stage
def test_every_source_compiles_and_fits(compiled):
    col, results = compiled
    assert not col.failed, col.failed
    targets = {r.target for r in results}
    assert targets == {"gfx908", "sm_80"}
    # every algorithm's kernels were rendered and compiled
    templates = {r.template.split("/")[0] for r in results}
    assert templates >= {"stl", "tridiag", "mp", "bfast", "ocean"}
    assert offline.problems(results) == []
    assert offline.compiler_warnings(results) == []
    # shown at the end of the run (conftest.py), not between the progress dots
    REPORT.append(f"[offline compiles] {len(col.sources)} sources, {len(results)} compiles; "
                  "kernels on gfx908 using scratch or more than 128 VGPRs (tuner candidates "
                  "included):")
    REPORT.extend("  " + line[:160] for line in offline.report(results, heavy=True).splitlines())


@pytest.mark.gpu_gate
@in_gate_stage
def test_no_unexplained_scratch_on_gfx908(compiled):
    """The profiles' own values and every forced version: no scratch but the known cases.
    (Tuner candidates may spill: the tuner measures them and a spilling one loses.)"""
    _, results = compiled
    assert any(r.default for r in results) and any(not r.default for r in results)
    bad = [(t, k, v, s, p) for t, k, v, s, p in offline.spills(results, defaults_only=True)
           if not _known(t, k, p)]
    assert not bad, "\n".join(f"{t} {k}: {v} VGPRs, {s} bytes/lane of scratch, {p}"
                              for t, k, v, s, p in bad)


def test_local_memory_parsers():
    ptx = ".shared .align 8 .b8 diag_topk_$_lcv[26112];\n.shared .align 4 .b8 diag_topk_$_lci[13056];"
    assert offline.static_local(ptx, "sm_80") == {"diag_topk": 39168}
    ll = ("@diag_topk.lcv = internal unnamed_addr addrspace(3) global [3264 x double] undef, align 8\n"
          "@loess.red = internal unnamed_addr addrspace(3) global [5 x [128 x float]] undef, align 4\n")
    assert offline.static_local(ll, "spir64") == {"diag_topk": 26112, "loess": 2560}
    text = ("k.cl:1:1: remark: Function Name: window_stats [-Rpass-analysis=kernel-resource-usage]\n"
            "k.cl:1:1: remark:     VGPRs: 255 [-Rpass-analysis=kernel-resource-usage]\n"
            "k.cl:1:1: remark:     ScratchSize [bytes/lane]: 776 [-Rpass-analysis=kernel-resource-usage]\n"
            "k.cl:1:1: remark:     Occupancy [waves/SIMD]: 1 [-Rpass-analysis=kernel-resource-usage]\n"
            "k.cl:1:1: remark:     LDS Size [bytes/block]: 0 [-Rpass-analysis=kernel-resource-usage]\n")
    (k,) = offline.parse_remarks(text)
    assert (k.name, k.vgprs, k.scratch, k.occupancy, k.lds) == ("window_stats", 255, 776, 1, 0)
