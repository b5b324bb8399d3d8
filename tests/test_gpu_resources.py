"""The GPU resource gate (its own CI stage: scripts/gpu-gate.sh, marker ``gpu_gate``).

Everything the public functions build under every recorded GPU description - ``auto`` on
realistic shapes, every forced version, a tuner sample - compiled with the vendors' own back
ends (ptxas sm_80 / sm_90, LLVM AMDGPU gfx908 / gfx90a, IGC pvc / dg2 / tgllp), and the
coalescing of ``auto``'s kernels measured from their addresses. Fails on a compile error, local
memory over the limit, spills or scratch, occupancy below 25 % and more than 4 (float64) / 2
(float32) 128-byte segments per warp access (vector loads: twice their ideal) or an auto kernel
whose accesses the tracer did not see, unless clts/devices/resources/gpu-allowlist.yaml lists
the kernel with a reason. Runs only with CLTS_GPU_GATE=1 (minutes); needs clang-16 + libclc-16 and
the back ends of scripts/gpu-toolchain.sh.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

from clts.tune import backends, gate, offline

pytestmark = pytest.mark.gpu_gate
if not os.environ.get("CLTS_GPU_GATE"):
    pytest.skip("the GPU resource gate runs as its own stage (scripts/gpu-gate.sh, "
                "CLTS_GPU_GATE=1)", allow_module_level=True)

#: batch dimensions of auto's realistic shapes in the gate (series lengths stay as they are)
SCALE = float(os.environ.get("CLTS_GPU_GATE_SCALE", "0.25"))
#: tuner candidates per tuner entry (the CI stage: 0, the kernels auto and every forced
#: version build; scripts/gpu-gate.sh --full samples one candidate of each entry as well)
SAMPLE = int(os.environ.get("CLTS_GPU_GATE_SAMPLE", "0"))
#: a comma-separated subset of the recorded GPUs (a quick local check); default: all
ONLY = [n for n in os.environ.get("CLTS_GPU_GATE_EMULATE", "").split(",") if n]
#: a subset of the workloads (clts.tune.workloads.selection, CLTS_GPU_GATE_CALLS)
CALLS = os.environ.get("CLTS_GPU_GATE_CALLS", "")


@pytest.fixture(scope="module")
def gated():
    why = backends.missing_tools()
    if why:
        pytest.fail(f"the gate needs clang-16 and libclc-16: {why}")
    missing = backends.vendor_tools_missing()
    if missing:
        pytest.fail(f"vendor back ends missing: {', '.join(missing)}; run "
                    "scripts/gpu-toolchain.sh")
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return offline.run(ONLY or None, sample=SAMPLE, scale=SCALE)


def _fails(run, check):
    out = sorted({f"{v.row.kernel} ({v.row.template}) on {v.row.target}: {v.message}"
                  for v in run.violations if v.check == check and v.allowed_by is None})
    return "\n".join(out)


def test_every_target_and_algorithm_compiled(gated):
    if ONLY or CALLS:
        pytest.skip("a subset of the GPUs or workloads (CLTS_GPU_GATE_EMULATE / _CALLS)")
    targets = {r.target for r in gated.results}
    assert targets >= {"sm_80", "sm_90", "gfx908", "gfx90a", "pvc", "dg2", "tgllp"}
    families = {r.template.split("/")[0] for r in gated.results if r.devices}
    assert families >= {"stl", "bfast", "mp", "tridiag", "ocean"}, families
    auto = {r.kernel for r in gated.table if r.auto}
    assert {"tke_step", "superbee_fused", "bfast_roc", "diag_topk", "diag"} <= auto, auto
    assert not gated.collected.failed, gated.collected.failed


#: kernels of the templates no public function builds on a GPU profile, and why
NOT_ON_GPUS = {
    "copy": "runtime/copy.cl.mako: the tuner's copy-bandwidth measurement, no public function's",
    "loess_wtab": "the vector outer LOESS's weight table: lanes > 1, CPU profiles only (every "
                  "GPU profile runs outer with lanes 1)",
}


def test_every_kernel_of_the_templates_is_compiled(gated):
    """The gate's workloads (clts.tune.workloads, workloads_more) reach every kernel the
    templates define: a kernel only a device-array path or a rarer function builds was once
    left out, and two of them did not compile for NVIDIA."""
    if ONLY or CALLS:
        pytest.skip("a subset of the GPUs or workloads (CLTS_GPU_GATE_EMULATE / _CALLS)")
    root = Path(offline.__file__).resolve().parents[1] / "templates"
    pat = re.compile(r"\b(?:__)?kernel\s+(?:__attribute__\(\(.*?\)\)\s*)?void\s+(\w+)",
                     re.S)
    defined = {k for f in root.rglob("*.cl.mako") for k in pat.findall(f.read_text())}
    compiled = {r.kernel for r in gated.table}
    missing = sorted(defined - compiled - set(NOT_ON_GPUS))
    assert not missing, f"kernels no gate workload builds: {missing}"
    assert not set(NOT_ON_GPUS) - defined, "an exemption names no kernel"


def test_no_compile_error(gated):
    assert not _fails(gated, "compile"), _fails(gated, "compile")


def test_local_memory_within_limits(gated):
    assert not _fails(gated, "local"), _fails(gated, "local")


def test_no_unlisted_spill_or_scratch(gated):
    assert not _fails(gated, "spill"), _fails(gated, "spill")


def test_occupancy_at_least_a_quarter(gated):
    assert not _fails(gated, "occupancy"), _fails(gated, "occupancy")


def test_coalescing(gated):
    assert gated.coalescing, "no kernel traced"
    assert not _fails(gated, "coalescing"), _fails(gated, "coalescing")


def test_every_auto_kernel_traced(gated):
    """A kernel auto launched whose accesses the tracer did not see has unknown coalescing,
    not a perfect one (clts.tune.coalescing: what it cannot see)."""
    assert not _fails(gated, "untraced"), _fails(gated, "untraced")


def test_allowlist_has_no_stale_entries(gated):
    """A fixed kernel leaves the allow-list (the layout work removes entries as it lands)."""
    if ONLY or CALLS:
        pytest.skip("a subset of the GPUs or workloads (CLTS_GPU_GATE_EMULATE / _CALLS)")
    stale = gate.stale(gated.table, itemsize=gated.itemsize)
    if not SAMPLE:          # entries for tuner candidates are judged only when they are built
        stale = [e for e in stale if not e.get("tuner")]
    assert not stale, "\n".join(f"{e['kernel']} {e['checks']} {e.get('targets')}"
                                for e in stale)
