"""New kernel objects without pyopencl's per-object look-up of its argument setters.

pyopencl gives every kernel object it makes a generated argument setter and enqueue function
(``pyopencl.invoker.generate_enqueue_and_set_args``), fetched from an on-disk cache with no
copy kept in memory: a SQLite read, an unpickling and a compilation of the module's code,
~0.2-0.3 ms of a kernel object's ~0.25-0.35 ms on a 2-core VM (pocl and the Intel CPU
runtime), where ``clCreateKernel`` itself takes microseconds. clts makes kernel objects for
each program's first callers, for every prepared launch that finds its pool empty and for
every launch of a recording (``runtime.replay``: a shape's second call), so a call that makes
a few dozen paid milliseconds for it.

:func:`new_kernel` makes them after :func:`install` has put a memo in front of that function:
the same arguments give the same generated functions, which hold no state of their own (they
take the kernel object as their first argument), as a cache with a copy in memory would
(pyopencl dropped its in-memory copy on the grounds that an entry is read once per kernel;
its open issue 112 proposes keeping the generated code per program instead). The memo serves
every kernel object the process makes, clts' or not, and is installed only where the
function has the parameters it was written for; otherwise pyopencl's own path runs.
"""
from __future__ import annotations

import functools
import inspect
import threading

#: the parameters of ``pyopencl.invoker.generate_enqueue_and_set_args`` the memo was written for
PARAMETERS = ("function_name", "num_passed_args", "num_cl_args", "arg_types",
              "work_around_arg_count_bug", "warn_about_arg_count_bug", "devs")
#: most entries kept (kernel names x argument counts x types), then the memo starts again
MEMO_SIZE = 4096

_lock = threading.Lock()
_state = {"installed": None}


def install() -> bool:
    """Put the memo in front of pyopencl's generator (once per process); whether it is."""
    done = _state["installed"]
    if done is not None:
        return done
    with _lock:
        if _state["installed"] is None:
            _state["installed"] = _install()
    return _state["installed"]


def _install() -> bool:
    try:
        from pyopencl import invoker
        gen = invoker.generate_enqueue_and_set_args
        if tuple(inspect.signature(gen).parameters) != PARAMETERS:
            return False
    except Exception:       # noqa: BLE001 - another pyopencl: its own path
        return False
    if getattr(gen, "_clts_memo", False):
        return True
    memo: dict = {}

    @functools.wraps(gen)
    def generate(function_name, num_passed_args, num_cl_args, arg_types,
                 work_around_arg_count_bug, warn_about_arg_count_bug, devs):
        args = (function_name, num_passed_args, num_cl_args, arg_types,
                work_around_arg_count_bug, warn_about_arg_count_bug, devs)
        try:
            key = (function_name, num_passed_args, num_cl_args,
                   None if arg_types is None else tuple(arg_types),
                   work_around_arg_count_bug, warn_about_arg_count_bug,
                   tuple(d.int_ptr for d in devs))
            hit = memo.get(key)
        except (TypeError, AttributeError):     # an argument type it cannot key
            return gen(*args)
        if hit is None:
            hit = gen(*args)
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            memo[key] = hit
        return hit
    generate._clts_memo = True
    invoker.generate_enqueue_and_set_args = generate
    return True


def new_kernel(program, name: str):
    """``pyopencl.Kernel(program, name)`` (``program`` a ``pyopencl.Program``), made through
    the memo."""
    import pyopencl as cl
    install()
    return cl.Kernel(program, name)
