"""One name per idea across the public API (see docs/api-conventions.md): ``device=``,
``version=``, ``progress=``, ``time_axis=``. Older names stay accepted for one release as
deprecated aliases that warn (``DeprecationWarning``) and are passed on under the new name."""
from __future__ import annotations

import functools
import warnings


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
                    warnings.warn(f"{name}: {old}= is deprecated, use {new}= (the old name "
                                  "will be removed in the next release)", DeprecationWarning,
                                  stacklevel=2)
                    kw[new] = kw.pop(old)
            return fn(*args, **kw)
        wrapper.deprecated_aliases = dict(old_to_new)
        return wrapper
    return deco
