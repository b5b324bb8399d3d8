"""Memory coalescing of the kernels ``auto`` chooses, measured from their own addresses.

For every launch of an ``auto`` workload (``workloads.auto_calls``) under an emulated GPU, an
instrumented copy of the kernel runs first on pocl, on copies of its buffers: every access
``p[i]`` through a ``__global`` pointer (kernel arguments, pointers derived from them, and the
same in helper functions) records its address, for the first ``ITEMS`` work-items of the first
``GROUPS`` work-groups and the first ``PER_SITE`` executions of each access site. Per site and
execution, the addresses of 32 (and 64) adjacent work-items (local ids in order, one warp /
wavefront) fall into some number of 128-byte segments: 1 is a perfectly coalesced access of
<= 128 bytes, 32 means every lane touches its own segment. A kernel's figure is its worst *hot*
site (executed more than once per work-item, i.e. in a loop; all sites if none is).

Seen as well: ``vloadN`` / ``vstoreN`` through such a pointer (one access of N elements at
``p + offset * N``), parameter lists written as object-like macros (``#define ARGS __global
const real *q, ...``: their pointers are the kernel's), and accesses inside function-like macros
(``#define LD(p, ptr) (ptr)[p * o_p]``: the calls in function bodies are expanded first, with
the definition in force there). Not seen: macros defined under ``#if`` / ``#ifdef`` (which
definition the compiler takes is its own business: ``STORE_STREAM``, ``NT_STORE``, prefetches),
a pointer handed to a macro that only dereferences it (``*(p) = v``) or passed as a plain
integer, and sites no traced work-item reaches.
A launched kernel with no traced access at all is reported with ``sites`` 0 and a ``note``
(``apply`` marks its gate rows ``untraced``, a check of its own), never as a perfect 0 segments.
Addresses are pocl's, so the segment counts assume buffers aligned to 128 bytes, as GPU drivers
allocate them.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np

from clts.runtime.kernel_objects import new_kernel

GROUPS, ITEMS, PER_SITE = 2, 64, 8
SEGMENT = 128

_HEADER = """
#define __CLTS_AT(site, p) ({ __typeof__(p) __clts_q = (p); \\
    __clts_log(__clts_trace, site, (ulong)__clts_q, sizeof(*__clts_q)); __clts_q; })
#define __CLTS_ATV(site, p, off, n) ({ __typeof__(p) __clts_v = (p); \\
    __clts_log(__clts_trace, site, (ulong)(__clts_v + (size_t)(off) * (n)), \\
               (n) * sizeof(*__clts_v)); __clts_v; })
static inline size_t __clts_gid(void) {
    return get_group_id(0) + get_num_groups(0) * (get_group_id(1)
        + get_num_groups(1) * get_group_id(2)); }
static inline size_t __clts_lid(void) {
    return get_local_id(0) + get_local_size(0) * (get_local_id(1)
        + get_local_size(1) * get_local_id(2)); }
static void __clts_log(__global ulong *t, uint site, ulong addr, uint size) {
    size_t g = __clts_gid(), l = __clts_lid();
    if (g >= %(groups)d || l >= %(items)d) return;
    __global ulong *s = t + ((g * %(items)d + l) * %(nsites)d + site) * (%(per)d + 2);
    ulong n = s[0];
    if (n < %(per)d) s[2 + n] = addr;
    s[0] = n + 1; s[1] = size;
}
"""
_FUNC = re.compile(r"\b(\w+)\s*\(")
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else"}
_GLOBAL_PTR = re.compile(r"(?:__)?global\b[^,;(){}=]*?\*\s*(?:(?:restrict|const|volatile)\s+)*"
                         r"(\w+)")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(\()?((?:[^\n\\]|\\.|\\\n)*)", re.M)
_VEC = re.compile(r"\b(vload|vstore)(\d+)\s*\(")


def _defines(src: str):
    """(object-like macros {name: body}, the spans of every #define) of ``src``."""
    obj, spans = {}, []
    for m in _DEFINE.finditer(src):
        spans.append(m.span())
        if not m.group(2):
            obj[m.group(1)] = m.group(3).replace("\\\n", " ")
    return obj, spans


def _expand(text: str, obj: dict) -> str:
    """``text`` with the object-like macros of ``obj`` expanded (a parameter list)."""
    if not obj:
        return text
    pat = re.compile(r"\b(" + "|".join(sorted(obj)) + r")\b")
    for _ in range(8):
        new = pat.sub(lambda m: obj[m.group(1)], text)
        if new == text:
            break
        text = new
    return text


def _args(text: str, i: int) -> list:
    """(start, end) of each top-level argument of the call whose "(" is at ``i``."""
    j = _match(text, i, "(", ")")
    out, depth, a = [], 0, i + 1
    for k in range(i + 1, j):
        c = text[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append((a, k))
            a = k + 1
    out.append((a, j))
    return out


_PP = re.compile(r"^[ \t]*#[ \t]*(define|undef|if|ifdef|ifndef|endif)\b[ \t]*(\w*)(\()?"
                 r"((?:[^\n\\]|\\.|\\\n)*)", re.M)
_ACCESS = re.compile(r"\[|\bv(?:load|store)\d+\s*\(")


def _fn_macros(src: str) -> dict:
    """Function-like macros an access may hide in: {name: [(position, params, body)]}, a
    ``#undef`` as params None. Left out: macros defined under a preprocessor conditional
    (``#if``: what the compiler picks is its business), with ``#`` / ``##`` in the body, and
    those whose body reaches no ``[`` or ``vloadN`` / ``vstoreN`` (directly or through another
    such macro)."""
    table, cond, depth = {}, set(), 0
    for m in _PP.finditer(src):
        kind, name = m.group(1), m.group(2)
        if kind in ("if", "ifdef", "ifndef"):
            depth += 1
        elif kind == "endif":
            depth = max(0, depth - 1)
        elif kind == "undef":
            table.setdefault(name, []).append((m.start(), None, ""))
        elif m.group(3):             # function-like: NAME(params) body
            rest = m.group(4)
            close = rest.find(")")
            params = [a.strip() for a in rest[:close].split(",") if a.strip()]
            body = rest[close + 1:].replace("\\\n", " ")
            if depth or "#" in body:
                cond.add(name)
            table.setdefault(name, []).append((m.start(), params, body))
    ok = {n for n, ds in table.items() if n not in cond
          and any(p is not None and _ACCESS.search(b) for _, p, b in ds)}
    while True:       # macros expanding into such macros
        more = {n for n, ds in table.items() if n not in cond and n not in ok and any(
            p is not None and re.search(r"\b(?:" + "|".join(ok) + r")\s*\(", b)
            for _, p, b in ds)} if ok else set()
        if not more:
            return {n: table[n] for n in ok}
        ok |= more


def _expand_calls(text: str, at: int, macros: dict, depth: int = 0) -> str:
    """``text`` (found at ``at`` in the source) with the calls of ``macros`` replaced by their
    bodies (the definition in force there), as the preprocessor would; definitions skipped."""
    if not macros or depth > 8:
        return text
    pat = re.compile(r"\b(" + "|".join(sorted(macros)) + r")\s*\(")
    spans = [m.span() for m in _PP.finditer(text)]
    out, i = [], 0
    for m in pat.finditer(text):
        if m.start() < i or any(a <= m.start() < b for a, b in spans):
            continue
        defs = [d for d in macros[m.group(1)] if d[0] < at + m.start()]
        if not defs or defs[-1][1] is None:
            continue
        _, params, body = defs[-1]
        try:
            args = [text[a:b].strip() for a, b in _args(text, m.end() - 1)]
        except ValueError:
            continue
        if len(args) != len(params) and not (params == [] and args == [""]):
            continue
        if params:          # all parameters at once (an argument may spell another's name);
            # a plain name or number goes in bare, so that (p)[i] becomes p[i], an access
            # naming its pointer; any other argument in parentheses
            val = {prm: arg if re.fullmatch(r"[\w.]+", arg) else f"({arg})"
                   for prm, arg in zip(params, args)}
            alt = "|".join(re.escape(prm) for prm in params)
            body = re.sub(r"(?<![\w\])])\(\s*(" + alt + r")\s*\)|\b(" + alt + r")\b",
                          lambda q: (f"({val[q.group(1)]})" if q.group(1) and
                                     not re.fullmatch(r"[\w.]+", val[q.group(1)]) else
                                     val[q.group(1) or q.group(2)]), body)
        out.append(text[i:m.start()])
        out.append(_expand_calls(body, at + m.start(), macros, depth + 1))
        i = _match(text, m.end() - 1, "(", ")") + 1
    out.append(text[i:])
    return "".join(out)


def _rewrite_vec(text: str, names: set, sites: list) -> str:
    """``vloadN(off, p)`` / ``vstoreN(v, off, p)`` through a traced pointer ``p``: logged as
    one access of N elements at ``p + off * N``."""
    if not names:
        return text
    out, i = [], 0
    while True:
        m = _VEC.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        args = _args(text, m.end() - 1)
        need = 2 if m.group(1) == "vload" else 3
        lead = re.match(r"[\s(]*(\w+)", text[slice(*args[-1])]) if len(args) == need else None
        if lead is None or lead.group(1) not in names:
            out.append(text[i:m.end()])
            i = m.end()
            continue
        (o0, o1), (p0, p1) = args[-2], args[-1]
        sid = len(sites)
        ptr, off = text[p0:p1].strip(), text[o0:o1].strip()
        sites.append(f"{m.group(1)}{m.group(2)}({' '.join(ptr.split())} + {off})")
        out.append(text[i:p0])
        out.append(f"__CLTS_ATV({sid}u, {ptr}, {off}, {m.group(2)})")
        i = p1


def _match(text: str, i: int, open_: str, close: str) -> int:
    """Index of the bracket closing the one at ``i``."""
    depth = 0
    for j in range(i, len(text)):
        c = text[j]
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError("unbalanced brackets")


@dataclass
class _Fn:
    name: str
    kernel: bool
    params: tuple          # (start, end) of the parameter list, without the parentheses
    body: tuple            # (start, end) of the body, without the braces


def _functions(src: str) -> list[_Fn]:
    out = []
    spans = _defines(src)[1]
    for m in _FUNC.finditer(src):
        name = m.group(1)
        if name in _KEYWORDS or any(a <= m.start() < b for a, b in spans):
            continue     # (a function-like macro whose body is a brace block is no function)
        # a definition: at file scope (depth 0), parameter list followed by "{"
        if src.count("{", 0, m.start()) != src.count("}", 0, m.start()):
            continue
        p0 = m.end() - 1
        try:
            p1 = _match(src, p0, "(", ")")
        except ValueError:
            continue
        rest = src[p1 + 1:p1 + 200]
        if not re.match(r"\s*\{", rest):
            continue
        b0 = p1 + 1 + rest.index("{")
        b1 = _match(src, b0, "{", "}")
        head = src[max(0, src.rfind(";", 0, m.start()), src.rfind("}", 0, m.start())):m.start()]
        out.append(_Fn(name, bool(re.search(r"\b(?:__)?kernel\b", head)), (p0 + 1, p1),
                       (b0 + 1, b1)))
    return out


def _rewrite(text: str, names: set, sites: list) -> str:
    if not names:
        return text
    pat = re.compile(r"\b(" + "|".join(sorted(names)) + r")\s*\[")
    out, i = [], 0
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        b0 = m.end() - 1
        b1 = _match(text, b0, "[", "]")
        inner = _rewrite(text[b0 + 1:b1], names, sites)
        sid = len(sites)
        sites.append(f"{m.group(1)}[{' '.join(text[b0 + 1:b1].split())}]")
        out.append(text[i:m.start()])
        out.append(f"(*__CLTS_AT({sid}u, &{m.group(1)}[{inner}]))")
        i = b1 + 1


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _strip_comments(src: str) -> str:
    """``src`` without its comments (each a space, or its newlines for a block comment): a
    bracket in a comment (``a[0..mm)``) must not unbalance the parsing below."""
    return _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n") or " ", src)


def instrument(src: str) -> tuple[str, list]:
    """(the instrumented source, the text of every access site); every kernel gets one more
    argument, ``__global ulong *__clts_trace``, and returns at once outside the traced groups."""
    src = _strip_comments(src)
    fns = _functions(src)
    obj = _defines(src)[0]
    params_of = {f.name: _expand(src[slice(*f.params)], obj) for f in fns}
    macros = _fn_macros(src)
    traced = {f.name for f in fns if not f.kernel and _GLOBAL_PTR.search(params_of[f.name])}
    changed = True
    while changed:          # helpers calling traced helpers need the trace pointer too
        changed = False
        for f in fns:
            if f.kernel or f.name in traced:
                continue
            body = src[slice(*f.body)]
            if any(re.search(rf"\b{h}\s*\(", body) for h in traced):
                traced.add(f.name)
                changed = True
    sites: list = []
    pieces, pos = [], 0
    call = re.compile(r"\b(" + "|".join(sorted(traced)) + r")\s*\(") if traced else None
    for f in fns:
        params, body = src[slice(*f.params)], src[slice(*f.body)]
        names = set(_GLOBAL_PTR.findall(params_of[f.name])) | set(_GLOBAL_PTR.findall(body))
        names.discard("__clts_trace")
        body = _expand_calls(body, f.body[0], macros)
        new_body = _rewrite(_rewrite_vec(body, names, sites), names, sites)
        if call is not None:
            new_body = call.sub(lambda m: m.group(0) + "__clts_trace, ", new_body)
        if f.kernel:
            new_params = params + ", __global ulong *__clts_trace"
            new_body = f"\n    if (__clts_gid() >= {GROUPS}) return;" + new_body
        elif f.name in traced:
            new_params = "__global ulong *__clts_trace, " + params.strip()
            new_params = new_params.rstrip(", ") if params.strip() in ("", "void") else new_params
            if params.strip() == "void":
                new_params = "__global ulong *__clts_trace"
        else:
            new_params = params
        pieces += [src[pos:f.params[0]], new_params, src[f.params[1]:f.body[0]], new_body]
        pos = f.body[1]
    pieces.append(src[pos:])
    head = _HEADER % dict(groups=GROUPS, items=ITEMS, nsites=max(1, len(sites)), per=PER_SITE)
    body = "".join(pieces)
    # after the extension pragmas (a double in a helper needs cl_khr_fp64 enabled first)
    m = list(re.finditer(r"^#pragma OPENCL EXTENSION.*$", body, re.M))
    at = m[-1].end() if m else 0
    return body[:at] + "\n" + head + body[at:], sites


def segments(addrs: np.ndarray, size: int, width: int) -> float:
    """Mean 128-byte segments per access of ``width`` adjacent work-items; ``addrs`` is
    [work-items, executions] with 0 where a work-item did not execute that access."""
    vals = []
    for w0 in range(0, addrs.shape[0], width):
        block = addrs[w0:w0 + width]
        for j in range(block.shape[1]):
            a = block[:, j]
            a = a[a != 0]
            if a.size:
                segs = set((a // SEGMENT).tolist()) | set(((a + size - 1) // SEGMENT).tolist())
                vals.append(len(segs))
    return float(np.mean(vals)) if vals else 0.0


@dataclass
class Coalescing:
    gpu: str
    template: str
    kernel: str
    itemsize: int
    segments32: float
    segments64: float
    worst: str
    sites: int
    source: str = ""
    note: str = ""             # why no access was traced (sites 0), else empty


class Tracer:
    """The launch hook: runs the instrumented copy of each launched kernel before it."""

    def __init__(self, device, gpu: str):
        self.device, self.gpu = device, gpu
        self.seen: dict = {}          # (source, kernel) -> Coalescing
        self._programs: dict = {}

    def _program(self, source):
        p = self._programs.get(source)
        if p is None:
            import pyopencl as cl
            text, sites = instrument(source)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # with the device's own extra options (the collector's -cl-opt-disable)
                p = (cl.Program(self.device.context, text).build(
                    options=["-w", *self.device.state.build_options]), sites)
            self._programs[source] = p
        return p

    def __call__(self, kernel, global_size, local_size, args):
        import pyopencl as cl
        prg = next((p for p in list(self.device.state.programs.values())
                    if p.owns(kernel)), None)
        if prg is None:
            return
        name = kernel.function_name
        key = (prg.source, name)
        if key in self.seen:
            return
        try:
            built, sites = self._program(prg.source)
        except cl.Error as exc:
            self.seen[key] = Coalescing(self.gpu, prg.template, name, 0, 0.0, 0.0, "-", 0,
                                        source=prg.source, note="the instrumented copy did not "
                                        f"build: {str(exc).strip().splitlines()[0][:100]}")
            return
        trace = run_traced(self.device, built, name, len(sites), global_size, local_size, args)
        c = summarize(trace, sites)
        note = "" if c[-1] else ("no global access traced" + (
            "" if sites else " (no access site found in the source)"))
        self.seen[key] = Coalescing(self.gpu, prg.template, name, *c, source=prg.source,
                                    note=note)


def run_traced(device, program, name, nsites, global_size, local_size, args) -> np.ndarray:
    """Run kernel ``name`` of the instrumented ``program`` on copies of ``args``' buffers;
    the trace as [work-items, sites, 2 + PER_SITE] (count, element size, addresses)."""
    import pyopencl as cl
    nsites = max(1, nsites)
    trace = np.zeros(GROUPS * ITEMS * nsites * (PER_SITE + 2), np.uint64)
    q = device.queue
    mf = cl.mem_flags
    tbuf = cl.Buffer(device.context, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=trace)
    copies = []
    for a in args:
        if isinstance(a, cl.Buffer):
            c = cl.Buffer(device.context, mf.READ_WRITE, max(1, a.size))
            cl.enqueue_copy(q, c, a)
            copies.append(c)
        else:
            copies.append(a)
    k = new_kernel(program, name)
    k.set_args(*copies, tbuf)
    cl.enqueue_nd_range_kernel(q, k, global_size, local_size)
    cl.enqueue_copy(q, trace, tbuf)
    q.finish()
    return trace.reshape(GROUPS * ITEMS, nsites, PER_SITE + 2)


def summarize(t: np.ndarray, sites: list) -> tuple:
    """(element size, segments per 32, per 64, worst site, hot sites) of one kernel's trace."""
    counts = t[:, :, 0].max(axis=0)
    hot = [s for s in range(t.shape[1]) if counts[s] > 1] or \
          [s for s in range(t.shape[1]) if counts[s] > 0]
    worst = (0.0, 0.0, 0, "-")
    for s in hot:
        size = int(t[:, s, 1].max())
        addrs = t[:, s, 2:].astype(np.int64)
        per_group = [addrs[g * ITEMS:(g + 1) * ITEMS] for g in range(GROUPS)]
        s32 = max(segments(a, size, 32) for a in per_group)
        s64 = max(segments(a, size, 64) for a in per_group)
        if (s32, s64) > worst[:2]:
            worst = (s32, s64, size, sites[s] if s < len(sites) else "?")
    return worst[2], worst[0], worst[1], worst[3], len(hot)




def trace_gpu(name: str, scale: float = 0.25, calls=None) -> list[Coalescing]:
    """Run ``auto``'s realistic workloads under the emulated GPU ``name`` with the tracer, in
    float64 (where the GPU has it) and float32 (``calls``: the option ``gpu_gate_calls`` of the
    parent process)."""
    if calls:
        from .. import options
        options.set_options(gpu_gate_calls=calls)
    import logging
    from ..runtime import emulation
    from ..runtime.devices import Device
    from . import workloads
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    emu = emulation.emulate(name)
    dev = Device(emu.info, description=emu.description)
    tracer = Tracer(dev, name)
    dev.state.launch_hook = tracer
    # both precisions where the GPU has float64, as the collector (tune.offline) builds them:
    # a float32 source it compiled and no trace measured would pass the gate unmeasured
    dtypes = [np.float64, np.float32] if dev.fp64 else [np.float32]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dt in dtypes:
            for _, fn in workloads.auto_calls(dev, dt, scale):
                try:
                    fn()
                except Exception:    # noqa: BLE001 - the resource run reports failures
                    continue
    dev.state.launch_hook = None
    return list(tracer.seen.values())


def measure(names, scale: float = 0.25, jobs: int = 1) -> list[Coalescing]:
    """``trace_gpu`` under each emulated GPU ``names``, ``jobs`` at once (processes). (The
    gate, ``offline.run``, traces in its collector's own ``auto`` runs instead:
    ``offline.collect(trace=True)``, the same figures without running the workloads twice.)"""
    from .. import options
    calls = options.get("gpu_gate_calls")
    if jobs <= 1 or len(names) == 1:
        return [c for n in names for c in trace_gpu(n, scale)]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(min(jobs, len(names)), mp_context=mp.get_context("spawn")) as pool:
        return [c for cs in pool.map(trace_gpu, names, [scale] * len(names),
                                     [calls] * len(names)) for c in cs]


def apply(results, table) -> dict:
    """Put each measured kernel's 32-wide figure on the gate's rows of the targets of its GPU
    (matched by rendered source); returns {(template, kernel, target): element size}. A row
    whose kernel was traced without any access seen, or that ``auto`` launched under a traced
    GPU (``row.extra["auto_gpus"]``, from ``gate.rows``) with no trace at all, gets
    ``row.extra["untraced"]`` (why) and no figure: the gate's ``untraced`` check."""
    from ..runtime import emulation, occupancy
    from .backends import targets_of
    by, traced = {}, {}
    for c in results:
        if c.gpu not in traced:
            traced[c.gpu] = {t for t in targets_of(emulation.load(c.gpu)) if t in occupancy.LIMITS}
        for t in traced[c.gpu]:          # GPU targets (not the portable SPIR check)
            by[(c.source, c.kernel, t)] = c
    sizes = {}
    for row in table:
        c = by.get((getattr(row, "source", None), row.kernel, row.target))
        if c is None:
            gpus = [g for g in row.extra.get("auto_gpus", ()) if row.target in traced.get(g, ())]
            if gpus:
                row.extra["untraced"] = f"the tracer saw no launch of it under {', '.join(gpus)}"
        elif not c.sites:
            row.extra["untraced"] = c.note or "no global access traced"
        else:
            row.segments = c.segments32
            sizes[row.key] = c.itemsize
            row.extra["itemsize"] = c.itemsize   # this row's own (rows of a key differ)
    return sizes
