"""``clts.compat.stumpy``'s anytime profile and pan matrix profile: stumpy's ``scrump``,
``scraamp``, ``prescrump``, ``prescraamp``, ``stimp``, ``aamp_stimp``, ``gpu_stimp``,
``gpu_aamp_stimp``, ``stimped``, ``aamp_stimped``, by :func:`clts.scrump`,
:func:`clts.prescrump` and :func:`clts.stimp` (re-exported by ``clts.compat.stumpy``)."""
from __future__ import annotations

from .. import mp as _mp
from .stumpy_rules import _check_k, _gpu_device, _join, _no_isconstant

#: the names this module gives ``clts.compat.stumpy``
ANYTIME = ["scrump", "scraamp", "prescrump", "prescraamp", "stimp", "aamp_stimp", "gpu_stimp",
           "gpu_aamp_stimp", "stimped", "aamp_stimped"]


def scrump(T_A, m, T_B=None, ignore_trivial=True, percentage=0.01, pre_scrump=False, s=None,
           normalize=True, p=2.0, k=1, T_A_subseq_isconstant=None, T_B_subseq_isconstant=None,
           *, device=None):
    """stumpy.scrump, by :func:`clts.scrump` (stumpy's ``np.random`` order: seeded alike, each
    ``update()`` gives stumpy's profile); ``normalize=False``: any p >= 1."""
    _no_isconstant(T_A_subseq_isconstant=T_A_subseq_isconstant,
                   T_B_subseq_isconstant=T_B_subseq_isconstant)
    B = _join(T_A, T_B, ignore_trivial)[1]
    return _mp.scrump(T_A, m, B, percentage=percentage, pre_scrump=pre_scrump, s=s,
                      k=_check_k(k), normalize=normalize, p=p, device=device)


def scraamp(T_A, m, T_B=None, ignore_trivial=True, percentage=0.01, pre_scraamp=False, s=None,
            p=2.0, k=1, *, device=None):
    """stumpy.scraamp: :func:`scrump` with plain distances."""
    return scrump(T_A, m, T_B, ignore_trivial, percentage, pre_scraamp, s, False, p, k,
                  device=device)


def prescrump(T_A, m, T_B=None, s=None, normalize=True, p=2.0, k=1, T_A_subseq_isconstant=None,
              T_B_subseq_isconstant=None, *, device=None):
    """stumpy.prescrump: ``(P, I)`` of preSCRIMP, by :func:`clts.prescrump`."""
    _no_isconstant(T_A_subseq_isconstant=T_A_subseq_isconstant,
                   T_B_subseq_isconstant=T_B_subseq_isconstant)
    return _mp.prescrump(T_A, m, T_B, s=s, k=_check_k(k), normalize=normalize, p=p, device=device)


def prescraamp(T_A, m, T_B=None, s=None, p=2.0, k=1, *, device=None):
    """stumpy.prescraamp: :func:`prescrump` with plain Minkowski distances."""
    return prescrump(T_A, m, T_B, s, False, p, k, device=device)


def stimp(T, min_m=3, max_m=None, step=1, percentage=0.01, pre_scrump=True, normalize=True,
          p=2.0, T_subseq_isconstant_func=None, *, device=None):
    """stumpy.stimp (``update()``, ``PAN_``, ``M_``, ``P_``), by :func:`clts.stimp`."""
    _no_isconstant(T_subseq_isconstant_func=T_subseq_isconstant_func)
    return _mp.stimp(T, min_m, max_m, step, percentage=percentage, pre_scrump=pre_scrump,
                     normalize=normalize, p=p, device=device)


def aamp_stimp(T, min_m=3, max_m=None, step=1, percentage=0.01, pre_scraamp=True, p=2.0, *,
               device=None):
    """stumpy.aamp_stimp: :func:`stimp` with plain Minkowski distances of order ``p`` (stumpy
    1.14's computes p = 2 whatever ``p`` is given)."""
    return stimp(T, min_m, max_m, step, percentage, pre_scraamp, False, p, device=device)


def gpu_stimp(T, min_m=3, max_m=None, step=1, device_id=0, normalize=True, p=2.0,
              T_subseq_isconstant_func=None, *, device=None):
    """stumpy.gpu_stimp: :func:`stimp` at ``percentage=1`` (``device_id`` as :func:`gpu_mpdist`)."""
    dev = _gpu_device(device_id, device, one=True)
    return stimp(T, min_m, max_m, step, 1.0, False, normalize, p, T_subseq_isconstant_func,
                 device=dev)


def gpu_aamp_stimp(T, min_m=3, max_m=None, step=1, device_id=0, p=2.0, *, device=None):
    """stumpy.gpu_aamp_stimp: :func:`gpu_stimp` with plain Minkowski distances."""
    return gpu_stimp(T, min_m, max_m, step, device_id, False, p, device=device)


def stimped(client, T, min_m=3, max_m=None, step=1, normalize=True, p=2.0,
            T_subseq_isconstant_func=None, *, device=None):
    """stumpy.stimped: :func:`stimp` at ``percentage=1``; ``client`` (dask / ray): unused."""
    return stimp(T, min_m, max_m, step, 1.0, False, normalize, p, T_subseq_isconstant_func,
                 device=device)


def aamp_stimped(client, T, min_m=3, max_m=None, step=1, p=2.0, *, device=None):
    """stumpy.aamp_stimped: :func:`stimped` with plain Minkowski distances."""
    return stimped(client, T, min_m, max_m, step, False, p, device=device)
