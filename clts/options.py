"""Options: behaviour a user may change, globally or for one ``with`` block of one thread.

``clts.set_options(max_chunk=64)`` changes an option for the whole process (every thread);
``with clts.set_options(max_chunk=64): ...`` changes it only inside the block and only in the
thread that runs it (other threads keep theirs), as xarray's ``set_options`` is used.
``clts.get_options()`` returns the options in effect in the calling thread.

The environment gives the defaults: each option's ``CLTS_*`` variable is read once, when clts
is imported, here and nowhere else in the library (the OpenCL loader set-up in
``clts.runtime.icd`` reads the loader's own variables). Booleans read from the environment
accept ``1 / true / yes / on`` and ``0 / false / no / off`` (any case); another value is
reported with a warning that names the variable, and the default is kept. docs/options.md
lists every option.

This module imports nothing of clts: every layer may read it.
"""
from __future__ import annotations

import dis
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Callable

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


def parse_bool(text, name: str) -> bool:
    """``text`` (a string from the environment or a bool) as a bool; ``name`` (the variable or
    option) is named in the ValueError for anything else."""
    if isinstance(text, bool):
        return text
    s = str(text).strip().lower()
    if s in TRUE:
        return True
    if s in FALSE:
        return False
    raise ValueError(f"{name} must be one of {'/'.join(TRUE)} or {'/'.join(FALSE)} "
                     f"(any case), got {text!r}")


# -- validators: the value given to set_options (or parsed from the environment) -> stored value
def _bool(name, v):
    if isinstance(v, str):
        return parse_bool(v, name)
    if isinstance(v, bool) or (isinstance(v, int) and v in (0, 1)):
        return bool(v)
    raise TypeError(f"option {name} must be a bool, got {type(v).__name__}")


def _device_spec(name, v):
    """A device index (an int, kept an int) or a name substring / slug (a str)."""
    if not isinstance(v, (bool, str)) and hasattr(v, "__index__"):     # int, numpy ints
        return v.__index__()
    if v is not None and (isinstance(v, bool) or not isinstance(v, (str, os.PathLike))):
        raise TypeError(f"option {name} must be a device index (int), a name or slug (str) "
                        f"or None, got {type(v).__name__}")
    return _optional_str(name, v)


def _optional_str(name, v):
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return None
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise TypeError(f"option {name} must be a str or None, got {type(v).__name__}")
    return str(v).strip()


def _str(name, v):
    v = _optional_str(name, v)
    if v is None:
        raise ValueError(f"option {name} must be a non-empty string")
    return v


def _staging(name, v):
    v = _optional_str(name, v)
    if v is not None and v not in ("pinned", "pageable"):
        raise ValueError(f"option {name} must be 'pinned', 'pageable' or None, got {v!r}")
    return v


def _threads(name, v):
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return None
    try:
        n = int(v.strip()) if isinstance(v, str) else v
    except ValueError:
        n = 0
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{name} must be a positive integer (host threads) or None, got {v!r}")
    return int(n)


_UNITS = {"max_chunk": "batch items per chunk", "compile_timeout": "seconds",
          "CLTS_MAX_CHUNK": "batch items per chunk", "CLTS_COMPILE_TIMEOUT": "seconds"}


def _positive_int(name, v):
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return None
    given = v
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            v = None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        unit = f" ({_UNITS[name]})" if name in _UNITS else ""
        raise ValueError(f"{name} must be a positive integer{unit} or None, got {given!r}")
    return int(v)


def _paths(name, v):
    if v is None:
        return ()
    if isinstance(v, (str, os.PathLike)):
        v = os.fspath(v).split(os.pathsep)
    try:
        return tuple(os.fspath(p) for p in v if os.fspath(p))
    except TypeError:
        raise TypeError(f"option {name} must be a path, a {os.pathsep!r}-separated string of "
                        f"paths or a list of paths, got {v!r}") from None


@dataclass(frozen=True)
class Option:
    name: str
    env: str
    default: Any
    check: Callable
    doc: str
    inverted: bool = False      # the variable says the opposite (CLTS_NO_PROGRESS)


OPTIONS = {o.name: o for o in (
    Option("device", "CLTS_DEVICE", None, _device_spec,
           "device used when a call's device= is None (index, name substring or slug)"),
    Option("emulate", "CLTS_EMULATE", None, _optional_str,
           "a recorded GPU description laid over every device lookup (docs/devices.md)"),
    Option("progress", "CLTS_NO_PROGRESS", True, _bool,
           "progress bars of long calls (tqdm); CLTS_NO_PROGRESS=1 turns them off",
           inverted=True),
    Option("max_chunk", "CLTS_MAX_CHUNK", None, _positive_int,
           "cap on the batch items per chunk (tests, memory use); None: the device's limits"),
    Option("zero_copy", "CLTS_ZERO_COPY", True, _bool,
           "CPU devices use numpy memory in place where they can; False: always copy"),
    Option("staging", "CLTS_STAGING", None, _staging,
           "transfers of a device with its own memory: pinned | pageable; None: the "
           "profile's runtime.staging (pinned on GPUs)"),
    Option("copy_threads", "CLTS_COPY_THREADS", None, _threads,
           "host threads that copy between numpy and pinned staging memory; None: the CPUs "
           "this process may use, at most 16"),
    Option("pipeline", "CLTS_PIPELINE", True, _bool,
           "chunk loops overlap transfers and compute; False: one chunk after another"),
    Option("dump_sources", "CLTS_DUMP_SOURCES", None, _optional_str,
           "directory every rendered kernel source is written to"),
    Option("profile_path", "CLTS_PROFILE_PATH", (), _paths,
           "directories of device profiles searched before the user's and the shipped ones"),
    Option("mp_record_runs", "CLTS_MP_RECORD_RUNS", False, _bool,
           "matrix_profile records its run times into the run-time estimate's calibration"),
    Option("clang", "CLTS_CLANG", "clang-16", _str,
           "the clang of clts-tune's offline GPU compiles"),
    Option("libclc", "CLTS_LIBCLC", "/usr/lib/clc", _str,
           "libclc's bitcode directory for the offline GPU compiles"),
    Option("gpu_gate_calls", "CLTS_GPU_GATE_CALLS", None, _optional_str,
           "the offline compiles' workloads to run, by label prefix (comma-separated: mp,tke); "
           "None: all of them and the tuner's candidates"),
    Option("compile_timeout", "CLTS_COMPILE_TIMEOUT", 900, _positive_int,
           "seconds one offline GPU compile may take (the resource gate)"),
    Option("gpu_toolchain", "CLTS_GPU_TOOLCHAIN", None, _optional_str,
           "where scripts/gpu-toolchain.sh put ptxas and ocloc; None: ~/.cache/clts-gpu-toolchain"),
    Option("ptxas", "CLTS_PTXAS", None, _optional_str,
           "NVIDIA's ptxas for the offline compiles; None: the one in gpu_toolchain"),
    Option("ptxas_shim", "CLTS_PTXAS_SHIM", None, _optional_str,
           "bitcode defining the 64-bit atom_cmpxchg libclc lacks; None: gpu_toolchain's"),
    Option("ocloc", "CLTS_OCLOC", None, _optional_str,
           "Intel's ocloc (IGC) for the offline compiles; None: the one in gpu_toolchain"),
    Option("ocloc_libs", "CLTS_OCLOC_LIBS", None, _optional_str,
           "LD_LIBRARY_PATH of ocloc; None: gpu_toolchain's extracted libraries"),
)}


def child_environment(**extra) -> dict:
    """This process's environment with ``extra`` over it, for a child process (the offline
    compilers): the library reads the environment nowhere else."""
    return {**os.environ, **extra}


def from_environ(environ, *, strict: bool = True) -> dict:
    """The option values the variables of ``environ`` (a mapping) give; unset or empty ones
    are left out. ``strict``: a bad value raises ValueError naming the variable, else it is
    reported with a warning and left out."""
    out = {}
    for o in OPTIONS.values():
        text = environ.get(o.env)
        if text is None or not str(text).strip():
            continue
        try:
            if o.check is _bool:
                value = parse_bool(text, o.env)
                out[o.name] = (not value) if o.inverted else value
            else:
                out[o.name] = o.check(o.env, text)
        except (TypeError, ValueError) as exc:
            if strict:
                raise ValueError(str(exc)) from None
            warnings.warn(f"clts: {exc}; using the default {o.default!r}", RuntimeWarning,
                          stacklevel=2)
    return out


#: the process's options: defaults, overlaid by the environment at import, then set_options
_global = {o.name: o.default for o in OPTIONS.values()}
_global.update(from_environ(os.environ, strict=False))
_lock = threading.Lock()
_local = threading.local()        # .layers: the calling thread's with-block options, innermost last

#: read once at import, for the two places that need them
_XDG_CONFIG_HOME = os.environ.get("XDG_CONFIG_HOME") or ""
_HAS_DISPLAY = bool(os.environ.get("DISPLAY") or os.environ.get("MPLBACKEND"))


def get(name: str):
    """The value of option ``name`` in the calling thread (hot paths call this)."""
    for layer in reversed(getattr(_local, "layers", ())):
        if name in layer:
            return layer[name]
    return _global[name]


def get_options() -> dict:
    """Every option's value in effect in the calling thread.

    Examples
    --------
    >>> import clts
    >>> with clts.set_options(max_chunk=8):
    ...     clts.get_options()["max_chunk"]
    8
    """
    return {name: get(name) for name in OPTIONS}


def _validated(kwargs) -> dict:
    out = {}
    for name, value in kwargs.items():
        o = OPTIONS.get(name)
        if o is None:
            raise ValueError(f"unknown option {name!r}; options: {', '.join(OPTIONS)}")
        out[name] = o.check(name, value)
    if out.get("emulate") is not None:     # a recorded description: checked now as well
        if not isinstance(kwargs["emulate"], (str, os.PathLike)):
            raise TypeError(f"option emulate must be the name of a recorded GPU description "
                            f"(str) or None, got {type(kwargs['emulate']).__name__}")
        if emulate_check is not None:
            try:
                emulate_check(out["emulate"])
            except Exception as exc:        # the description's DeviceError, as a ValueError
                raise ValueError(f"option emulate: {exc}") from None
    if out.get("device") is not None and device_check is not None:
        try:                # now, not at the next call (every later call failed)
            device_check(out["device"])
        except Exception as exc:            # the lookup's DeviceError, as a ValueError
            raise ValueError(f"option device: {exc}") from None
    return out


#: set by ``clts.runtime.devices`` when it is imported (``import clts`` does): raises when no
#: working device matches a ``device`` option given to :class:`set_options`
device_check = None
#: set by ``clts.runtime.descriptions`` when it is imported: raises for an ``emulate`` option
#: that names no recorded GPU description
emulate_check = None


_WITH_OPS = ("BEFORE_WITH", "SETUP_WITH", "BEFORE_ASYNC_WITH", "SETUP_ASYNC_WITH")
_with_sites: dict = {}


def _opens_with_block(frame) -> bool:
    """Whether the call being made at ``frame``'s current instruction is a ``with`` statement's
    context expression (then set_options changes nothing global, not even for an instant)."""
    key = (frame.f_code, frame.f_lasti)
    hit = _with_sites.get(key)
    if hit is None:
        ops = [i.opname for i in dis.get_instructions(frame.f_code) if i.offset > frame.f_lasti]
        hit = bool(ops) and (ops[0] in _WITH_OPS
                             or (ops[0] == "COPY" and ops[1:2] == ["LOAD_SPECIAL"]))
        _with_sites[key] = hit
    return hit


class set_options:
    """Set options globally, or for a ``with`` block in the calling thread only.

    Parameters
    ----------
    device : int or str, optional
        The device a call with ``device=None`` uses (``clts devices`` lists them); default
        ``$CLTS_DEVICE``, else the best working device.
    emulate : str, optional
        Every device lookup returns the device emulating this recorded GPU (docs/devices.md).
    progress : bool
        Progress bars of long calls (tqdm, when installed).
    max_chunk : int, optional
        Cap on the batch items per chunk (None: the device's memory limits alone).
    zero_copy : bool
        CPU devices work on numpy memory in place where the driver allows it.
    staging : {'pinned', 'pageable'}, optional
        How numpy data reach a device with its own memory: through reusable pinned host
        buffers, or straight from numpy's memory; None: the profile's ``runtime.staging``.
    copy_threads : int, optional
        Host threads that copy between numpy and the pinned buffers (None: the CPUs this
        process may use, at most 16).
    pipeline : bool
        Chunk loops overlap uploads and downloads with compute.
    dump_sources : str, optional
        Directory where every rendered kernel source is written.
    profile_path : str or list of str
        Directories of device profiles, searched before the user's and the shipped ones.
    mp_record_runs : bool
        ``matrix_profile`` records its run times for its run-time estimate.
    clang, libclc : str
        Compiler and libclc directory of ``clts-tune``'s offline GPU compiles.

    Raises
    ------
    ValueError
        An unknown option or a value out of range (the message names it).
    TypeError
        A value of the wrong type.

    Examples
    --------
    >>> import clts
    >>> with clts.set_options(progress=False, max_chunk=4):
    ...     clts.get_options()["max_chunk"]
    4
    >>> clts.get_options()["max_chunk"] is None
    True
    """

    def __init__(self, **kwargs):
        import sys
        self._values = _validated(kwargs)
        self._layer = None
        self._saved = None
        if not _opens_with_block(sys._getframe(1)):
            self._apply_globally()

    def _apply_globally(self):
        with _lock:
            self._saved = {k: _global[k] for k in self._values}
            _global.update(self._values)

    def __enter__(self):
        if self._saved is None:          # a with block: this thread only
            self._layer = dict(self._values)
            if not hasattr(_local, "layers"):
                _local.layers = []
            _local.layers.append(self._layer)
        return self

    def __exit__(self, *exc):
        if self._layer is not None:
            layers = _local.layers
            for i in range(len(layers) - 1, -1, -1):
                if layers[i] is self._layer:
                    del layers[i]
                    break
            self._layer = None
        elif self._saved is not None:    # set globally, then used as a context manager
            with _lock:
                _global.update(self._saved)
            self._saved = None
        return False


def user_config_dir() -> str:
    """``$XDG_CONFIG_HOME`` (as at import), else ``~/.config``."""
    return _XDG_CONFIG_HOME or os.path.join(os.path.expanduser("~"), ".config")


def display_available() -> bool:
    """Whether ``DISPLAY`` or ``MPLBACKEND`` was set at import (plots fall back to Agg)."""
    return _HAS_DISPLAY
