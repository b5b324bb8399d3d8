"""The GPU vendors' back ends, offline: compile one rendered OpenCL C source for a target and read
each kernel's registers, spills, scratch and local memory as that back end reports them.

========  ======================================================  ==========================
target    compiler                                                figures read
========  ======================================================  ==========================
sm_80/90  clang-16 (nvptx64 + libclc) -> PTX -> NVIDIA ``ptxas -v``  registers, spill stores,
                                                                  stack frame, shared memory
gfx908/   clang-16's AMDGPU back end (the one ROCm uses), with     VGPRs, AGPRs, SGPRs,
gfx90a    ``-Rpass-analysis=kernel-resource-usage``              scratch per lane, LDS
pvc/dg2/  Intel ``ocloc`` (IGC, the compiler of Intel's driver),  GRF mode, SIMD width,
tgllp     with IGC's shader dumps                                 spill size, private memory
spir64    clang-16 -> SPIR (a portable front-end check only)      static local memory
========  ======================================================  ==========================

``scripts/gpu-toolchain.sh`` fetches ``ptxas`` (PyPI wheel ``nvidia-cuda-nvcc-cu12``) and
``ocloc`` (Debian packages extracted, not installed) into ``~/.cache/clts-gpu-toolchain`` (or
``$CLTS_GPU_TOOLCHAIN``); ``CLTS_PTXAS``, ``CLTS_PTXAS_SHIM``, ``CLTS_OCLOC`` and
``CLTS_OCLOC_LIBS`` override each path. Where ``ptxas`` is missing, sm_* stop at clang's PTX
(static shared memory only); where ``ocloc`` is missing, the Intel targets are skipped.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import options

#: what the real drivers declare (clang's nvptx target does not declare int64 atomics)
EXTENSIONS = "+cl_khr_fp64,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics"
#: target -> (compiler, clang triple, cpu flag, libclc bitcode)
TARGETS = {
    "gfx908": ("clang", "amdgcn-amd-amdhsa", "-mcpu=gfx908", "amdgcn--amdhsa.bc"),
    "gfx90a": ("clang", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "amdgcn--amdhsa.bc"),
    "sm_80": ("ptxas", "nvptx64-nvidia-nvcl", "-march=sm_80", "nvptx64--nvidiacl.bc"),
    "sm_90": ("ptxas", "nvptx64-nvidia-nvcl", "-march=sm_90", "nvptx64--nvidiacl.bc"),
    "spir64": ("clang", "spir64", None, None),
    "pvc": ("ocloc", None, None, None),
    "dg2": ("ocloc", None, None, None),
    "tgllp": ("ocloc", None, None, None),
}
#: seconds one compile may take by default (option ``compile_timeout``); beyond it the source is
#: reported as too slow to compile
COMPILE_TIMEOUT = options.OPTIONS["compile_timeout"].default


def _clang_exe() -> str:
    """The compiler (option ``clang``, ``CLTS_CLANG``)."""
    return options.get("clang")


def _libclc() -> Path:
    """libclc's bitcode directory (option ``libclc``, ``CLTS_LIBCLC``)."""
    return Path(options.get("libclc"))


def cache_dir() -> Path:
    return Path(options.get("gpu_toolchain") or Path.home() / ".cache" / "clts-gpu-toolchain")


def ptxas() -> str | None:
    p = options.get("ptxas") or str(cache_dir() / "nvcc/nvidia/cuda_nvcc/bin/ptxas")
    return p if os.access(p, os.X_OK) else None


def ptxas_shim() -> str | None:
    p = options.get("ptxas_shim") or str(cache_dir() / "atom_cmpxchg_nvptx.bc")
    return p if os.path.isfile(p) else None


def ocloc() -> tuple[str, str] | None:
    """(ocloc path, its LD_LIBRARY_PATH) or None."""
    root = cache_dir() / "igc"
    p = options.get("ocloc") or str(root / "usr/bin/ocloc")
    libs = options.get("ocloc_libs") or \
        f"{root}/usr/lib/x86_64-linux-gnu:{root}/usr/lib/llvm-14/lib"
    return (p, libs) if os.access(p, os.X_OK) else None


def missing_tools() -> str | None:
    """Why no offline compile can run here (clang-16 / libclc-16 missing), or None."""
    if shutil.which(_clang_exe()) is None:
        return f"{_clang_exe()} not found (apt-get install clang-16 libclc-16)"
    for name in ("amdgcn--amdhsa.bc", "nvptx64--nvidiacl.bc"):
        if not (_libclc() / name).is_file():
            return f"{_libclc() / name} not found (apt-get install libclc-16)"
    return None


def vendor_tools_missing() -> list[str]:
    """The vendor back ends not found (run scripts/gpu-toolchain.sh)."""
    out = []
    if ptxas() is None or ptxas_shim() is None:
        out.append("ptxas (NVIDIA)")
    if ocloc() is None:
        out.append("ocloc (Intel IGC)")
    return out


def available(target: str) -> bool:
    kind = TARGETS[target][0]
    if kind == "ocloc":
        return ocloc() is not None
    return True


@dataclass
class KernelUsage:
    name: str
    vgprs: int = 0           # registers per work-item: NVIDIA registers, AMD VGPRs, Intel GRF
    sgprs: int = 0
    agprs: int = 0
    scratch: int = 0         # AMD bytes per lane; NVIDIA stack frame; Intel private memory
    spill: int = 0           # bytes spilled: NVIDIA spill stores, AMD (scratch if VGPRs spill),
    occupancy: int = 0       # Intel "spill size"; occupancy: AMD remark, waves per SIMD
    lds: int = 0             # static local memory
    simd: int = 0            # Intel: the SIMD width IGC picked
    grf: int = 0             # Intel: the GRF mode (128 / 256)
    barrier: bool = False    # Intel: IGC's code synchronises the work-group (sync.bar)

    @property
    def regs(self) -> int:
        """What occupancy counts: AMD VGPRs + AGPRs (unified on gfx90a), else registers."""
        return self.vgprs + self.agprs


@dataclass
class CompileResult:
    template: str
    params: dict
    target: str
    ok: bool
    log: str = ""
    kernels: list = field(default_factory=list)    # KernelUsage
    local_mem: int = 0                              # the emulated device's local memory
    default: bool = True                            # rendered with a profile's own values
    source: str = ""
    devices: tuple = ()                             # the emulated GPUs it was rendered for


_REMARK = re.compile(r"remark:\s+(?:Function Name: (\S+)|\s*([A-Za-z ]+?)(?: \[[^\]]*\])?: (\d+))")
_REMARK_KEYS = {"VGPRs": "vgprs", "SGPRs": "sgprs", "AGPRs": "agprs", "ScratchSize": "scratch",
                "Occupancy": "occupancy", "LDS Size": "lds", "VGPRs Spill": "spill"}


def parse_remarks(text: str) -> list[KernelUsage]:
    """The per-kernel figures of clang's ``-Rpass-analysis=kernel-resource-usage`` remarks."""
    out, cur = [], None
    for m in _REMARK.finditer(text):
        if m.group(1):
            cur = KernelUsage(m.group(1))
            out.append(cur)
        elif cur is not None:
            k = _REMARK_KEYS.get(m.group(2).strip())
            if k:
                setattr(cur, k, int(m.group(3)))
    for k in out:       # a VGPR spill count -> the scratch bytes per lane it costs
        k.spill = k.scratch if k.spill else 0
    return out


_PTXAS_ENTRY = re.compile(r"Compiling entry function '(\w+)'")
_PTXAS_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill")
_PTXAS_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def parse_ptxas(text: str) -> list[KernelUsage]:
    """Per entry function: registers, spill stores, stack frame, shared memory (``ptxas -v``)."""
    out, cur = [], None
    for line in text.splitlines():
        m = _PTXAS_ENTRY.search(line)
        if m:
            cur = KernelUsage(m.group(1))
            out.append(cur)
            continue
        if cur is None:
            continue
        m = _PTXAS_PROPS.search(line)
        if m:
            cur.scratch, cur.spill = int(m.group(1)), int(m.group(2))
        m = _PTXAS_USED.search(line)
        if m:
            cur.vgprs = int(m.group(1))
            cur.lds = int(m.group(2) or 0)
    return out


_ASM_SIMD = re.compile(r"(?:_(\d+))?_simd(\d+)_entry")
_ASM_BARRIER = re.compile(r"^\s*(?:\(W\)\s*)?sync\.bar\b", re.M)


def parse_igc_dumps(files) -> list[KernelUsage]:
    """Per kernel, from IGC's ``.asm`` dumps: GRF mode, SIMD width, spill size, private memory,
    whether it waits at a work-group barrier (``sync.bar``: the occupancy model's barrier cap).
    A kernel IGC compiled more than once (a retry after a spill, dumped as
    ``OCL_asm<hash>_<retry>_simd<width>_entry_<n>.asm``) reports its last retry: the binary
    IGC keeps (ocloc's "spilled around N" warning counts its N GRFs of 64 B)."""
    out: dict = {}
    for f in sorted(files):
        text = Path(f).read_text(errors="replace")
        head = "\n".join(ln for ln in text.splitlines()[:80] if ln.startswith("//."))
        name = re.search(r"^//\.kernel (\w+)", head, re.M)
        if not name:
            continue
        grf = re.search(r"numGRF=(\d+)", head)
        spill = re.search(r"^//\.spill size (\d+)", head, re.M)
        priv = re.search(r"^//\.private memory size (\d+)", head, re.M)
        simd = _ASM_SIMD.search(Path(f).name)
        retry = int(simd.group(1) or 0) if simd else 0
        k = KernelUsage(name.group(1), vgprs=int(grf.group(1)) if grf else 0,
                        grf=int(grf.group(1)) if grf else 0,
                        spill=int(spill.group(1)) if spill else 0,
                        scratch=int(priv.group(1)) if priv else 0,
                        simd=int(simd.group(2)) if simd else 0,
                        barrier=bool(_ASM_BARRIER.search(text)))
        if k.name not in out or retry >= out[k.name][0]:
            out[k.name] = (retry, k)
    return [k for _, k in out.values()]


_PTX_SHARED = re.compile(r"\.shared\s+\.align\s+\d+\s+\.b8\s+(\w+?)_\$_\w+\[(\d+)\]")
_LL_LOCAL = re.compile(r"^@(\w+)\.[\w.]+ = .*?addrspace\(3\) global (.+?) (?:undef|zeroinitializer|poison)",
                       re.M)
_LL_SIZES = {"double": 8, "float": 4, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "half": 2,
             "ptr": 8}


def _ll_size(t: str) -> int:
    t = t.strip()
    m = re.fullmatch(r"\[(\d+) x (.+)\]", t) or re.fullmatch(r"<(\d+) x (.+)>", t)
    if m:
        return int(m.group(1)) * _ll_size(m.group(2))
    return _LL_SIZES.get(t, 8)


def static_local(asm: str, target: str) -> dict:
    """Bytes of statically declared local memory per kernel, from PTX or LLVM IR."""
    out: dict = {}
    if target.startswith("sm_"):
        for name, size in _PTX_SHARED.findall(asm):
            out[name] = out.get(name, 0) + int(size)
    elif target == "spir64":
        for name, t in _LL_LOCAL.findall(asm):
            out[name] = out.get(name, 0) + _ll_size(t)
    return out


def _run(cmd, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=options.get("compile_timeout"), **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 1, "", f"error: compile timed out after "
                                                       f"{options.get('compile_timeout')} s")


def _clang(source_path: Path, target: str, out: Path):
    _, triple, cpu, clc = TARGETS[target]
    cmd = [_clang_exe(), "-x", "cl", "-cl-std=CL1.2", "-Xclang", "-finclude-default-header",
           "-Xclang", f"-cl-ext={EXTENSIONS}", "-nogpulib", "-O2", "-S",
           "-Wno-linker-warnings", "-target", triple]
    if cpu:
        cmd.append(cpu)
    if clc:
        cmd += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang", str(_libclc() / clc)]
    if target.startswith("sm_") and ptxas_shim():
        cmd += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang", ptxas_shim()]
    if target.startswith("gfx"):
        cmd.append("-Rpass-analysis=kernel-resource-usage")
    if target == "spir64":
        cmd.append("-emit-llvm")
    return _run(cmd + [str(source_path), "-o", str(out)])


def compile_source(source: str, target: str, workdir: Path,
                   params=None) -> tuple[bool, str, list]:
    """(compiled, the compilers' messages, [KernelUsage]) of ``source`` for ``target``;
    ``params``: the program's parameters, whose build parameters give ocloc the options Intel's
    GPU driver gets (``clts.runtime.programs.intel_gpu_options``: ``grf``)."""
    kind = TARGETS[target][0]
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        tmp = Path(tmp)
        src = tmp / "kernel.cl"
        src.write_text(source)
        if kind == "ocloc":
            from ..runtime.programs import intel_gpu_options
            return _ocloc(src, target, tmp, intel_gpu_options(params or {}))
        out = tmp / "kernel.out"
        p = _clang(src, target, out)
        if p.returncode != 0:
            return False, p.stderr, []
        asm = out.read_text(errors="replace")
        if target.startswith("gfx"):
            return True, p.stderr, parse_remarks(p.stderr)
        if kind == "ptxas" and ptxas() and ptxas_shim():
            q = _run([ptxas(), f"-arch={target}", "-v", str(out), "-o", str(tmp / "k.cubin")])
            log = p.stderr + q.stderr + q.stdout
            if q.returncode != 0:
                return False, log, []
            return True, log, parse_ptxas(q.stdout + q.stderr)
        return True, p.stderr, [KernelUsage(k, lds=v)
                                for k, v in static_local(asm, target).items()]


def _ocloc(src: Path, target: str, tmp: Path, extra=()):
    tool = ocloc()
    if tool is None:
        return False, "error: ocloc not found (scripts/gpu-toolchain.sh)", []
    exe, libs = tool
    dump = tmp / "dump"
    env = options.child_environment(LD_LIBRARY_PATH=libs, IGC_ShaderDumpEnable="1",
                                    IGC_DumpToCustomDir=str(dump))
    p = _run([exe, "compile", "-file", str(src), "-device", target, "-options",
              " ".join(("-cl-std=CL1.2",) + tuple(extra)), "-output_no_suffix",
              "-output", str(tmp / "k"), "-out_dir", str(tmp)], env=env, cwd=tmp)
    log = p.stdout + p.stderr
    if p.returncode != 0 or "Build failed" in log:
        return False, log, []
    return True, log, parse_igc_dumps(dump.glob("*.asm"))


def warnings_of(log: str, target: str) -> list[str]:
    """The front end's warnings (not the back ends' spill notes)."""
    return [ln.split("warning:", 1)[1].strip() for ln in log.splitlines()
            if "warning:" in ln and "spilled" not in ln and "ptxas" not in ln]


def targets_of(desc) -> list[str]:
    """The offline targets of an emulated GPU description (``offline_target``)."""
    off = (desc or {}).get("offline_target") or {}
    triple, cpu = off.get("triple"), off.get("cpu")
    if triple == "spir64":
        return ["spir64"] + ([cpu] if cpu in TARGETS else [])
    if cpu in TARGETS:
        return [cpu]
    raise ValueError(f"device description {desc.get('_name')} names no offline target")
