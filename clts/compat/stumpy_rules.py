"""stumpy's argument rules shared by the ``clts.compat.stumpy`` wrappers: a user-defined
constant-window rule is refused, ``k`` checked, the self-join / AB-join decision with stumpy's
warnings, stumpy's ``device_id`` as a clts device."""
from __future__ import annotations


import numpy as np
from ..errors import warn_caller


def _missing(what, instead=None):
    msg = f"clts.compat.stumpy: {what} is not implemented in clts"
    if instead:
        msg += f"; {instead}"
    raise NotImplementedError(msg)


def _no_isconstant(**kwargs):
    for name, v in kwargs.items():
        if v is not None:
            _missing(f"{name} (a user-defined constant-window rule)",
                     "clts treats exactly the windows with zero standard deviation as constant: "
                     f"drop {name}")


def _check_k(k):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    return int(k)


def _arrays_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"
                                                      and b.dtype.kind == "f"))


def _join(T_A, T_B, ignore_trivial):
    """(self_join, T_B for clts) with stumpy's rules: no T_B is a self-join whatever
    ``ignore_trivial`` says (with stumpy's warning); a T_B equal to T_A with
    ``ignore_trivial=True`` is a self-join."""
    if T_B is None:
        if not ignore_trivial:
            warn_caller("`ignore_trivial` cannot be `False` for a self-join and has been "
                        "automatically overridden and set to `True`.")
        return True, None
    equal = _arrays_equal(T_A, T_B)
    if ignore_trivial and equal:
        return True, None
    if ignore_trivial:
        # stumpy warns and runs its self-join loop over two different series; clts runs the
        # AB-join that the warning asks for
        warn_caller("Arrays T_A, T_B are not equal, which implies an AB-join. "
                    "`ignore_trivial` has been set to `False`.")
    elif equal:
        warn_caller("Arrays T_A, T_B are equal, which implies a self-join. "
                    "Try setting `ignore_trivial = True`.")
    return False, T_B


def _gpu_device(device_id, device, one=False):
    """stumpy's ``device_id`` as a clts device: 0 (stumpy's default) is clts's default device,
    another int or a list are clts device indices (``clts devices``); ``device=`` wins.
    ``one``: a list's first device."""
    if device is not None:
        return device[0] if one and isinstance(device, list) else device
    if isinstance(device_id, (list, tuple)):
        return device_id[0] if one else list(device_id)
    return None if device_id == 0 else device_id
