"""Render Mako kernel templates, build them, cache the programs, explain build errors.

Templates live in ``clts/templates/<algo>/<kernel>.cl.mako`` and are rendered with explicit
parameters only (``real`` = ``"float"`` or ``"double"`` is always one of them). A built program
is cached in process per (device, template, parameters, options), looked up before rendering:
a repeated call neither renders nor rebuilds.
pyopencl's own binary cache also keeps built programs on disk between processes.

Across processes and upgrades the driver's binaries are kept on disk, keyed by the rendered
source, the options and the device (so an upgrade that changes a kernel rebuilds exactly
that one): pocl's kernel cache (``POCL_CACHE_DIR``, default ``~/.cache/pocl``) and, for other
drivers, pyopencl's binary cache (``~/.cache/pyopencl``). Once an algorithm's builds on a
device have lasted :data:`BUILD_NOTICE_SECONDS` in all (one long build, or several short ones:
a first call of BFAST or the ocean kernels builds a handful of programs of a second or less
each), one line on stderr says that kernels are being built, once per process, device and
algorithm, unless the ``progress`` option is off (``CLTS_NO_PROGRESS``); builds the driver
serves from its disk cache take milliseconds and say nothing. ``clts warmup`` builds the common
calls' kernels ahead.

Build options a program needs on one kind of device only are program parameters, not template
variables (:data:`BUILD_PARAMS`): ``grf``, the register file per hardware thread IGC gives the
program's kernels on Intel GPUs (128 / 256; 0 or absent: the driver's default), becomes
``-cl-intel-<grf>-GRF-per-thread`` on Intel's GPU driver only (:func:`driver_options`) and for
ocloc in the offline compiles (:func:`intel_gpu_options`); every other driver builds the same
source with the same options. A non-zero one is part of the cache key and is noted in a comment
at the end of the rendered source (so the offline collector, the disk caches and
``dump_sources`` tell the builds apart).

The option ``dump_sources=DIR`` (``CLTS_DUMP_SOURCES``) writes every rendered source to ``DIR`` for
inspection.
Build logs are shown only when a build fails, or when asked: the ``clts.programs`` logger
writes every non-empty driver log at DEBUG level, and lines of it that are compiler warnings
are kept in ``build_warnings`` (the tests require none).
"""
from __future__ import annotations

import hashlib
import logging
import re
import threading
from contextlib import contextmanager
from pathlib import Path

from ..options import get as get_option
from ..errors import CltsError, DeviceError, KernelBuildError

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates"
_lookup = None   # Mako's template lookup, made on first render (importing Mako costs a
#                 tenth of a second, which `clts --help` and calls served from cache skip)
_lock = threading.Lock()
stats = {"renders": 0, "builds": 0, "hits": 0}
log = logging.getLogger("clts.programs")
#: (template, device, warning lines) of every build whose driver log held a warning
build_warnings: list[tuple[str, str, list[str]]] = []
#: "warnings" a driver writes for every kernel of every program, whatever its source, kept out
#: of ``build_warnings`` (still in the DEBUG log): NVIDIA's OpenCL driver (550 and later, seen
#: with 580 on an H100) marks every function noinline itself and then reports, for each
#: ``__kernel``, "Function copy is a kernel, so overriding noinline attribute. The function may
#: be inlined when called." No clts template declares a noinline attribute.
DRIVER_NOTES = re.compile(r"Function \w+ is a kernel, so overriding noinline attribute")
#: the first line of every source built on pocl: its clang warns at every call and return of a
#: vector wider than the CPU's vector registers ("AVX vector argument of type 'double8' without
#: 'avx512f' enabled changes the ABI": hundreds per program on an AVX2 CPU, and "N warnings
#: generated." on stderr) about a calling convention between separately compiled units; an
#: OpenCL program is one unit. pocl refuses ``-Wno-psabi`` as a build option; the pragma works.
POCL_PREAMBLE = '#pragma clang diagnostic ignored "-Wpsabi"\n'


class Program:
    """A built program with a per-name kernel cache."""

    def __init__(self, cl_program, template, params, source, pool=True):
        self.cl_program = cl_program
        self.template = template
        self.params = params
        self.source = source
        self._kernels = {}
        #: kernel objects of prepared launches (``checkout``) given back, per name; None on a
        #: simulator (Oclgrind's uninitialised-value checker loses track of the arguments of a
        #: kernel object re-used by a later call: a fresh one each time there)
        self._pool = {} if pool else None
        #: id -> name of every kernel object this program made, shared or checked out (the
        #: offline collector's and the coalescing tracer's look-up of a launched kernel)
        self.made = {}

    def kernel(self, name: str):
        """The program's kernel ``name``, one object shared by every caller (``launch`` sets its
        arguments and enqueues it under one lock)."""
        k = self._kernels.get(name)
        if k is None:
            with _lock:
                k = self._kernels.get(name)
                if k is None:
                    from .kernel_objects import new_kernel
                    k = self._kernels[name] = new_kernel(self.cl_program, name)
                    self.made[id(k)] = name
        return k

    def checkout(self, name: str):
        """A kernel object ``name`` for one prepared launch alone (``runtime.launch.prepare``):
        ``(kernel, give_back)``; ``give_back()`` returns it to the program's pool. A fresh
        kernel object costs ~0.1 ms (clCreateKernel), a pooled one nothing."""
        pool = None if self._pool is None else self._pool.setdefault(name, [])
        try:
            k = pool.pop()          # atomic: threads check out different objects
        except (AttributeError, IndexError):
            from .kernel_objects import new_kernel
            k = new_kernel(self.cl_program, name)
            self.made[id(k)] = name
        if pool is None:
            return k, None
        return k, lambda: pool.append(k)

    def owns(self, kernel) -> bool:
        """Whether ``kernel`` is one of this program's kernel objects (shared or checked out)."""
        return id(kernel) in self.made

    __getattr__ = kernel  # prg.my_kernel


#: program parameters that are build options on some devices, not template variables
BUILD_PARAMS = ("grf",)


def _normal(params) -> dict:
    """``params`` with ``real`` defaulted and a zero / None build parameter dropped (the
    driver's default: the same program as without it)."""
    params = dict(params)
    params.setdefault("real", "float")
    for name in BUILD_PARAMS:
        if not params.get(name):
            params.pop(name, None)
    return params


def intel_gpu_options(params) -> tuple:
    """The build options ``params`` ask of Intel's GPU compiler (IGC): the register-file mode
    ``grf``."""
    grf = params.get("grf")
    return (f"-cl-intel-{int(grf)}-GRF-per-thread",) if grf else ()


def _intel_gpu(info) -> bool:
    """Whether the driver that builds for ``info`` is Intel's GPU driver, the compute runtime
    (platform "Intel(R) OpenCL Graphics" / "... HD Graphics"; not Mesa's rusticl on an Intel
    GPU, nor an emulated device, built by its real CPU driver)."""
    return info.type == "gpu" and not info.emulates and "intel" in info.platform.lower()


def driver_options(device, params) -> tuple:
    """The build options of ``params``' build parameters for ``device``'s driver: Intel's GPU
    driver gets :func:`intel_gpu_options`, every other driver none."""
    return intel_gpu_options(params) if _intel_gpu(device.info) else ()


def render(template: str, params: dict) -> str:
    params = _normal(params)
    if params["real"] not in ("float", "double"):
        raise ValueError(f"template parameter real must be 'float' or 'double', "
                         f"not {params['real']!r}")
    stats["renders"] += 1
    source = _template_lookup().get_template(template).render(
        **{k: v for k, v in params.items() if k not in BUILD_PARAMS})
    notes = [f"{k}={params[k]}" for k in BUILD_PARAMS if k in params]
    if notes:
        source += (f"// build parameters {', '.join(notes)}: "
                   f"{' '.join(intel_gpu_options(params))} on Intel GPUs\n")
    return source


def _template_lookup():
    global _lookup
    with _lock:
        if _lookup is None:
            from mako.lookup import TemplateLookup
            _lookup = TemplateLookup(directories=[str(TEMPLATE_DIR)], strict_undefined=True,
                                     input_encoding="utf-8")
    return _lookup


def _source_excerpt(source: str, log: str, context: int = 6) -> str:
    lines = source.splitlines()
    m = re.search(r"(?:<(?:kernel|source)>|input\.cl|^|\s):(\d+):(\d+):\s*error", log, re.M)
    if not m:
        m = re.search(r":(\d+):(\d+):", log)
    if not m:
        return "\n".join(f"{i + 1:5d}  {ln}" for i, ln in enumerate(lines[:40]))
    line = int(m.group(1))
    lo, hi = max(1, line - context), min(len(lines), line + context)
    return "\n".join(f"{'>>' if i == line else '  '}{i:4d}  {lines[i - 1]}"
                     for i in range(lo, hi + 1))


#: an algorithm's builds on a device lasting this many seconds in all print the one-line notice
BUILD_NOTICE_SECONDS = 1.0
_noticed: set = set()
#: (device, algorithm) -> seconds its builds have taken in this process so far
_build_seconds: dict = {}


def _notice(device, template, show=True) -> None:
    """The "building kernels" line, once per process, device and algorithm (the template's
    directory: each algorithm's first call says it), on stderr so that it is seen while the
    call waits (through tqdm when it is loaded: a bar on screen is redrawn below the line);
    the clts.programs logger has it at INFO too."""
    import sys
    algorithm = template.split("/")[0]
    with _lock:
        if (str(device), algorithm) in _noticed:
            return
        _noticed.add((str(device), algorithm))
    msg = (f"clts: building OpenCL kernels ({algorithm}) for {device} (first use; kept in the "
           "driver's disk cache afterwards; 'clts warmup' builds the common ones ahead)")
    log.info(msg)
    if show:
        tqdm = sys.modules.get("tqdm")
        if tqdm is not None and hasattr(tqdm, "tqdm"):
            tqdm.tqdm.write(msg, file=sys.stderr)
        else:
            print(msg, file=sys.stderr, flush=True)


def build_program(device, template: str, params: dict, options=()) -> Program:
    """Render and build ``template`` for ``device``; cached per (device, template, parameters,
    options), looked up before anything is rendered. Safe to call from several threads: a
    program is built once, the other callers wait for it."""
    fast = _fast_key(template, params, options)
    if fast is not None:
        prg = device.state.program_index.get(fast)
        if prg is not None:
            stats["hits"] += 1
            return prg
    params = _normal(params)
    if params["real"] == "double" and not device.fp64:
        raise DeviceError(f"device {device} lacks cl_khr_fp64 (double precision), needed by "
                          f"{template}; use float32 data")
    options = tuple(options)
    key = _key(template, params, options)
    cache = device.state.programs
    prg = cache.get(key)
    if prg is not None:
        stats["hits"] += 1
    else:
        with device.state.build_lock(key):
            prg = cache.get(key)
            if prg is None:
                prg = _build(device, template, params, options)
                cache[key] = prg
            else:
                stats["hits"] += 1
    if fast is not None:
        device.state.program_index[fast] = prg
    return prg


def _fast_key(template, params, options):
    """The key of :attr:`DeviceState.program_index`: the parameters as given (None where one
    is unhashable)."""
    try:
        key = (template, tuple(sorted(params.items())), tuple(options))
        hash(key)
    except TypeError:
        return None
    return key


def build_threads(device) -> int:
    """Threads that build programs at once: the CPU count; one on NVIDIA's OpenCL driver, where
    several threads building on a cold program cache crashed the process (driver 580, H100;
    docs/devices.md, "Known driver problems"), and one on pocl, which gains nothing from them."""
    import os
    names = f"{device.info.platform} {device.info.vendor}".lower()
    if "nvidia" in names:
        return 1
    if "portable computing language" in names or "pocl" in names:
        # pocl builds one program at a time inside: threads only contend (quiet 2-core Zen 4,
        # bench/startup.py --only builds: STL's 10 programs 1.77 s at once, 1.28 s in turn)
        return 1
    return os.cpu_count() or 2


def _key(template, params, options=()):
    params = _normal(params)
    return template, repr(sorted(params.items())), tuple(options)


def built(device, template: str, params: dict, options=()) -> bool:
    """Whether this program is already built on ``device`` in this process (a caller skips
    listing its programs for :func:`prebuild` on every call after the first)."""
    fast = _fast_key(template, params, options)
    if fast is not None and fast in device.state.program_index:
        return True
    return _key(template, params, options) in device.state.programs


def prebuild(device, specs) -> None:
    """Build the programs a call is about to ask for, from several threads at once, so that a
    first call's builds overlap (drivers build with the GIL released); a later
    :func:`build_program` of the same program finds it built. ``specs``: ``(template, params)``
    or ``(template, params, options)``, the same arguments the call gives
    :meth:`Device.program`. Programs already built are skipped; with one build thread
    (:func:`build_threads`: NVIDIA) they are built here one after the other; nothing is done on
    the simulator (the call builds each program when it first needs it there). A spec that
    fails to build raises here, as the call would."""
    if getattr(device.info, "simulator", False):
        return
    todo = [spec for spec in specs if not built(device, *spec)]
    threads = min(len(todo), build_threads(device))
    if threads < 2:             # one build thread (NVIDIA) or one program: here, in turn
        for spec in todo:
            build_program(device, *spec)
        return
    from concurrent.futures import ThreadPoolExecutor

    from ..options import get_options, set_options
    opts = get_options()            # the caller's (a with block's) options in the builders

    def build(spec):
        with set_options(**opts):
            build_program(device, *spec)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="clts-build") as pool:
        for f in [pool.submit(build, t) for t in todo]:
            f.result()


class DumpSourcesError(CltsError, OSError):
    """``CLTS_DUMP_SOURCES`` names a directory the sources cannot be written to (an OSError
    naming it, not a device failure)."""

    def __str__(self):
        return self.strerror or super().__str__()


def _build(device, template, params, options) -> Program:
    from . import faults
    faults.check("build")
    source = render(template, params)
    dump = get_option("dump_sources")
    if dump:
        digest = hashlib.sha1(source.encode()).hexdigest()[:10]
        name = template.replace("/", "__").replace(".cl.mako", "")
        try:
            Path(dump).mkdir(parents=True, exist_ok=True)
            (Path(dump) / f"{name}-{digest}.cl").write_text(source)
        except OSError as exc:
            raise DumpSourcesError(exc.errno, f"dump_sources={dump} (CLTS_DUMP_SOURCES): cannot write the "
                                   f"kernel sources there ({exc.strerror or exc}); make the "
                                   "directory writable or unset the option") from None
    import time

    import pyopencl as cl
    # the notice once this algorithm's builds on this device reach BUILD_NOTICE_SECONDS in all,
    # during this build if it gets there (the progress option of the building thread: the
    # timer's thread sees only the global one)
    show = get_option("progress")
    spent_key = (str(device), template.split("/")[0])
    with _lock:
        timer = None if spent_key in _noticed else threading.Timer(
            max(0.0, BUILD_NOTICE_SECONDS - _build_seconds.get(spent_key, 0.0)), _notice,
            (device, template, show))
    if timer is not None:
        timer.daemon = True
        timer.start()
    used = options + driver_options(device, params) + tuple(device.state.build_options)
    text = POCL_PREAMBLE + source if real_pocl(device) else source
    t0 = time.perf_counter()
    try:
        _quiet_compiler_output()
        _building.depth = getattr(_building, "depth", 0) + 1
        try:
            built = cl.Program(device.context, text).build(options=list(used))
        finally:
            _building.depth -= 1
    except cl.RuntimeError as exc:
        driver_log = str(exc)  # pyopencl puts the driver's build log in the message
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()))
        raise KernelBuildError(
            f"building {template} for {device} failed\nparameters: {shown}\n"
            f"options: {' '.join(used) or '(none)'}\n"
            f"--- driver log ---\n{driver_log.strip()}\n"
            f"--- rendered source ---\n{_source_excerpt(text, driver_log)}",
            template=template, params=params, log=driver_log, source=source) from None
    finally:
        if timer is not None:
            timer.cancel()
    seconds = time.perf_counter() - t0
    with _lock:
        spent = _build_seconds[spent_key] = _build_seconds.get(spent_key, 0.0) + seconds
    if timer is not None and spent >= BUILD_NOTICE_SECONDS:
        _notice(device, template, show)     # the timer's race lost at the threshold: say it now
    if seconds > BUILD_NOTICE_SECONDS:
        log.info("built %s for %s in %.1f s", template, device, seconds)
    stats["builds"] += 1
    _record_log(device, template, built)
    return Program(built, template, params, source,
                   pool=not getattr(device.info, "simulator", False))


#: per thread: inside one of clts' own builds (pyopencl's report of their logs is dropped)
_building = threading.local()
_wrapped = False


@contextmanager
def quiet_pyopencl_builds():
    """In this thread, pyopencl's report of a build log is dropped, as for clts' own builds:
    around pyopencl's own kernels that a clts call runs (``astype``, arithmetic), whose first
    use builds a program; Intel's CPU runtime logs every build, and pyopencl turned that into
    a ``CompilerWarning`` in the user's output."""
    _quiet_compiler_output()
    _building.depth = getattr(_building, "depth", 0) + 1
    try:
        yield
    finally:
        _building.depth -= 1


def _quiet_compiler_output() -> None:
    """pyopencl turns every non-empty build log into a ``CompilerWarning`` ("Non-empty compiler
    output encountered"), and Intel's CPU runtime writes a log ("Compilation started ...
    Done.") for every build. clts reads its builds' logs itself (:func:`_record_log`: real
    compiler warnings go to ``build_warnings``, which the tests require empty; the rest is not
    news). A ``warnings.catch_warnings`` block around the build would change the filters of the
    whole process, not of the building thread: builds in other threads, and the caller's own
    filters, raced with it (a warning escaped while several threads built). So the function
    pyopencl reports through, ``pyopencl.compiler_output``, is wrapped once: it stays silent in
    a thread inside a clts build and does as before everywhere else (a user's own programs)."""
    global _wrapped
    if _wrapped:
        return
    import pyopencl as cl
    with _lock:
        if _wrapped:
            return
        report = getattr(cl, "compiler_output", None)
        if report is not None:
            def compiler_output(text, *args, **kwargs):
                if getattr(_building, "depth", 0):
                    log.debug("pyopencl's report of a clts build: %s", text)
                    return None
                return report(text, *args, **kwargs)
            compiler_output.__wrapped__ = report
            cl.compiler_output = compiler_output
        _wrapped = True


def real_pocl(device) -> bool:
    """Whether ``device``'s real driver (under an emulated description too) is pocl."""
    try:
        name = device.cl_device.platform.name   # the real driver, under an emulation too
    except AttributeError:                      # a stand-in device of a unit test
        name = getattr(device, "platform", "") or ""
    return "portable computing" in name.lower()


def _record_log(device, template, built) -> None:
    import pyopencl as cl
    try:
        text = built.get_build_info(device.cl_device, cl.program_build_info.LOG) or ""
    except cl.Error:
        return
    text = text.strip()
    if not text:
        return
    log.debug("build log of %s on %s:\n%s", template, device, text)
    lines = [ln.strip() for ln in text.splitlines()
             if "warning" in ln.lower() and not DRIVER_NOTES.search(ln)]
    if lines:
        with _lock:
            build_warnings.append((template, str(device), lines))
