"""One name per idea across the public API (see docs/api-conventions.md): ``device=``,
``version=``, ``progress=``, ``time_axis=``. Older names stay accepted for one release as
deprecated aliases that warn (``DeprecationWarning``, once per function and alias in a process)
and are passed on under the new name."""
from __future__ import annotations

import functools
import threading
import warnings

#: (function, old keyword) pairs that have warned in this process
_warned: set = set()
_lock = threading.Lock()


def reset_warned() -> None:
    """Let every deprecated alias warn again (tests)."""
    with _lock:
        _warned.clear()


def renamed(_name: str | None = None, **old_to_new: str):
    """Decorator: keyword ``old=`` accepted as ``new=`` with a DeprecationWarning."""
    def deco(fn):
        name = _name or fn.__name__

        @functools.wraps(fn)
        def wrapper(*args, **kw):
            for old, new in old_to_new.items():
                if old in kw:
                    if new in kw:
                        raise TypeError(f"{name}: give {new}= or its deprecated name {old}=, "
                                        "not both")
                    with _lock:
                        first = (name, old) not in _warned
                        _warned.add((name, old))
                    if first:
                        warnings.warn(f"{name}: {old}= is deprecated, use {new}= (the old "
                                      "name will be removed in the next release)",
                                      DeprecationWarning, stacklevel=2)
                    kw[new] = kw.pop(old)
            return fn(*args, **kw)
        wrapper.deprecated_aliases = dict(old_to_new)
        return wrapper
    return deco


#: one keyword per idea in every public signature (CONTRIBUTING.md, "One name per idea")
CANONICAL = {"where to run": "device", "which code version": "version",
             "progress bar": "progress", "which axis is time": "time_axis",
             "an explicit Plan": "plan"}
#: names that never appear in a public signature: the deprecated aliases (accepted through
#: ``renamed`` only) and the drifting spellings of the ideas above
NOT_PUBLIC = {"dev", "devices", "loess_version", "method", "progress_bar", "prefetch",
              "show_progress", "axis_time", "time_dim"}
