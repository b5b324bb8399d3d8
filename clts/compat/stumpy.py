"""``clts.compat.stumpy``: stumpy 1.14's API over clts's matrix-profile functions.

``import clts.compat.stumpy as stumpy`` keeps a stumpy script's calls: the same names,
positional order, defaults and return layouts (``stump`` / ``aamp`` / ``gpu_stump`` /
``gpu_aamp``: an ``(l, 2k + 2)`` object array with ``P_`` / ``I_`` / ``left_I_`` /
``right_I_``; ``mstump``: the ``(P_, I_)`` named tuple; ``motifs``: the padded
``(motif_distances, motif_indices)`` pair; ``fluss`` with stumpy's idealised arc curve), with
the distances computed by clts on an OpenCL device (every function here also takes a
keyword-only ``device=``). Wrappers only: the work is done by :func:`clts.matrix_profile`,
:func:`clts.aamp`, :func:`clts.mstump`, :func:`clts.mass`, :func:`clts.match`,
:func:`clts.stumpi`, :func:`clts.mdl`, :func:`clts.subspace`, :func:`clts.fluss`,
:func:`clts.mpdist`, :func:`clts.ostinato`, :func:`clts.snippets`, :func:`clts.allc`,
:func:`clts.atsc`, :func:`clts.floss`, :func:`clts.mmotifs`, :func:`clts.scrump`,
:func:`clts.prescrump` and :func:`clts.stimp` (those three in ``stumpy_anytime.py``).

stumpy functions that clts does not have (the dask ``*ed`` variants, ...) are
present and raise ``NotImplementedError`` naming what is missing, as do the
``*_subseq_isconstant`` arguments (clts's constant-window rule is fixed: a window with zero
standard deviation). See docs/migrating-from-stumpy.md.

Examples
--------
>>> import numpy as np
>>> import clts.compat.stumpy as stumpy
>>> T = np.cumsum(np.random.default_rng(0).standard_normal(300))
>>> mp = stumpy.stump(T, 20)
>>> mp.shape, mp.dtype, mp.P_.dtype, mp.I_.dtype
((281, 4), dtype('O'), dtype('float64'), dtype('int64'))
>>> P, I = stumpy.mstump(np.stack([T, T[::-1]]), 20)
>>> P.shape
(2, 281)
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import mp as _mp
from ..mp.fluss import stumpy_iac
from ..mp.mass import find_matches
from ..runtime.arrays import to_numpy
from .stumpy_anytime import ANYTIME, aamp_stimp, aamp_stimped, gpu_aamp_stimp, gpu_stimp  # noqa: F401
from .stumpy_anytime import prescraamp, prescrump, scraamp, scrump, stimp, stimped  # noqa: F401
from .stumpy_rules import _check_k, _gpu_device, _join, _missing, _no_isconstant
from ..errors import warn_caller

#: stumpy's ``config.STUMPY_EXCL_ZONE_DENOM``: the exclusion zone is ceil(m / 4)
EXCL_ZONE_DENOM = 4


class mparray(np.ndarray):
    """stumpy's matrix-profile array: an ``(l, 2k + 2)`` object array whose first ``k``
    columns are the top-k distances, the next ``k`` their indices, then the left and right
    nearest-neighbour indices (-1 where none, and throughout for an AB-join); ``P_``, ``I_``,
    ``left_I_``, ``right_I_`` give them as float64 / int64 (1-D for k = 1)."""

    def __new__(cls, input_array, m, k, excl_zone_denom=EXCL_ZONE_DENOM):
        obj = np.asarray(input_array).view(cls)
        obj._m, obj._k, obj._excl_zone_denom = m, k, excl_zone_denom
        return obj

    def __array_finalize__(self, obj):
        if obj is None:
            return
        self._m = getattr(obj, "_m", None)
        self._k = getattr(obj, "_k", None)
        self._excl_zone_denom = getattr(obj, "_excl_zone_denom", None)

    def _cols(self, a, b, dtype):
        v = np.asarray(self)[:, a:b].astype(dtype)
        return v[:, 0] if b - a == 1 else v

    @property
    def P_(self):
        """The top-k distances (1-D for k = 1)."""
        return self._cols(0, self._k, np.float64)

    @property
    def I_(self):
        """The top-k indices (1-D for k = 1)."""
        return self._cols(self._k, 2 * self._k, np.int64)

    @property
    def left_I_(self):
        """The nearest neighbour before each window (-1: none)."""
        return self._cols(2 * self._k, 2 * self._k + 1, np.int64)

    @property
    def right_I_(self):
        """The nearest neighbour after each window (-1: none)."""
        return self._cols(2 * self._k + 1, 2 * self._k + 2, np.int64)


#: stumpy.mstump's result: ``P, I = mstump(T, m)`` unpacks it
MParray = namedtuple("mparray", "P_,I_")


def _layout(res, m, k, self_join):
    P, I = np.asarray(res.P), np.asarray(res.I)
    l = P.shape[0]
    if self_join and res.left_I is not None:
        IL, IR = np.asarray(res.left_I, np.int64), np.asarray(res.right_I, np.int64)
    else:
        IL = IR = np.full(l, -1, np.int64)
    out = np.empty((l, 2 * k + 2), dtype=object)
    out[:, :k] = P
    out[:, k:] = np.column_stack((I, IL, IR))
    return mparray(out, m, k, EXCL_ZONE_DENOM)


def stump(T_A, m, T_B=None, ignore_trivial=True, normalize=True, p=2.0, k=1,
          T_A_subseq_isconstant=None, T_B_subseq_isconstant=None, *, device=None):
    """stumpy.stump: the (top-k) z-normalised matrix profile (``normalize=False``: stumpy's
    ``aamp`` with ``p``), computed by :func:`clts.matrix_profile`.

    Returns
    -------
    mparray, shape (l, 2k + 2), dtype object
        Distances, indices, left and right indices, as stumpy.
    """
    _no_isconstant(T_A_subseq_isconstant=T_A_subseq_isconstant,
                   T_B_subseq_isconstant=T_B_subseq_isconstant)
    if not normalize:
        return aamp(T_A, m, T_B, ignore_trivial, p, k, device=device)
    k = _check_k(k)
    self_join, B = _join(T_A, T_B, ignore_trivial)
    res = _mp.matrix_profile(T_A, m, B, k=k, device=device, progress=False)
    return _layout(res, res.m, k, self_join)


def aamp(T_A, m, T_B=None, ignore_trivial=True, p=2.0, k=1, *, device=None):
    """stumpy.aamp: the non-normalised (Minkowski ``p``) matrix profile, by :func:`clts.aamp`;
    stumpy's ``(l, 2k + 2)`` layout. A list of devices splits p = 2 only (other p: the first
    device)."""
    k = _check_k(k)
    self_join, B = _join(T_A, T_B, ignore_trivial)
    if isinstance(device, (list, tuple)) and p != 2.0:
        device = device[0]          # distance profiles run on one device
    res = _mp.aamp(T_A, m, B, p=p, k=k, device=device, progress=False)
    return _layout(res, res.m, k, self_join)


def gpu_stump(T_A, m, T_B=None, ignore_trivial=True, device_id=0, normalize=True, p=2.0, k=1,
              T_A_subseq_isconstant=None, T_B_subseq_isconstant=None, *, device=None):
    """stumpy.gpu_stump: :func:`stump` on an OpenCL device. ``device_id`` 0 (the default) is
    clts's default device; another int, or a list (several devices split the diagonals), are
    indices of ``clts devices``."""
    return stump(T_A, m, T_B, ignore_trivial, normalize, p, k, T_A_subseq_isconstant,
                 T_B_subseq_isconstant, device=_gpu_device(device_id, device))


def gpu_aamp(T_A, m, T_B=None, ignore_trivial=True, device_id=0, p=2.0, k=1, *, device=None):
    """stumpy.gpu_aamp: :func:`aamp` on an OpenCL device (``device_id`` as :func:`gpu_stump`;
    a list is not split for p != 2: its first device runs it)."""
    return aamp(T_A, m, T_B, ignore_trivial, p, k, device=_gpu_device(device_id, device))


def mstump(T, m, include=None, discords=False, normalize=True, p=2.0, T_subseq_isconstant=None,
           *, device=None):
    """stumpy.mstump: the multi-dimensional matrix profile, by :func:`clts.mstump`.

    Returns
    -------
    mparray named tuple ``(P_, I_)``, each (d, l): ``P, I = mstump(T, m)``.
    """
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant)
    P, I = _mp.mstump(T, m, include=include, discords=discords, normalize=normalize, p=p,
                      device=device)
    return MParray(P_=P, I_=I)


def maamp(T, m, include=None, discords=False, p=2.0, *, device=None):
    """stumpy.maamp: :func:`mstump` with plain Minkowski distances."""
    return mstump(T, m, include, discords, False, p, device=device)


def mdl(T, m, subseq_idx, nn_idx, include=None, discords=False, discretize_func=None, n_bit=8,
        normalize=True, p=2.0, T_subseq_isconstant=None, *, device=None):
    """stumpy.mdl, by :func:`clts.mdl` (host work: ``device`` is accepted for symmetry and
    unused)."""
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant)
    return _mp.mdl(T, m, subseq_idx, nn_idx, include, discords, discretize_func, n_bit,
                   normalize, p)


def maamp_mdl(T, m, subseq_idx, nn_idx, include=None, discords=False, discretize_func=None,
              n_bit=8, p=2.0, *, device=None):
    """stumpy.maamp_mdl: :func:`mdl` with plain distances."""
    return mdl(T, m, subseq_idx, nn_idx, include, discords, discretize_func, n_bit, False, p)


def subspace(T, m, subseq_idx, nn_idx, k, include=None, discords=False, discretize_func=None,
             n_bit=8, normalize=True, p=2.0, T_subseq_isconstant=None, *, device=None):
    """stumpy.subspace, by :func:`clts.subspace` (host work)."""
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant)
    return _mp.subspace(T, m, subseq_idx, nn_idx, k, include, discords, discretize_func, n_bit,
                        normalize, p)


def maamp_subspace(T, m, subseq_idx, nn_idx, k, include=None, discords=False,
                   discretize_func=None, n_bit=8, p=2.0, *, device=None):
    """stumpy.maamp_subspace: :func:`subspace` with plain distances."""
    return subspace(T, m, subseq_idx, nn_idx, k, include, discords, discretize_func, n_bit,
                    False, p)


def _one_d(x, name):
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"{name} is {a.ndim}-dimensional and must be 1-dimensional")
    return a


def mass(Q, T, M_T=None, Σ_T=None, normalize=True, p=2.0, T_subseq_isfinite=None,
         T_subseq_isconstant=None, Q_subseq_isconstant=None, query_idx=None, *, device=None):
    """stumpy.mass: the distance profile of one query against one series, by
    :func:`clts.mass` (computed directly, O(m) per window: no cancellation on near matches).
    ``M_T``, ``Σ_T`` and ``T_subseq_isfinite`` (statistics stumpy reuses) are accepted and not
    needed: clts derives them from ``T``."""
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant,
                   Q_subseq_isconstant=Q_subseq_isconstant)
    Q, T = _one_d(Q, "Q"), _one_d(T, "T")
    return np.asarray(_mp.mass(Q, T, normalize=normalize, p=p, query_idx=query_idx,
                               device=device, progress=False), dtype=np.float64)


def _match(Q, T, max_distance, max_matches, atol, query_idx, normalize, p, device):
    Qa, Ta = np.asarray(Q, dtype=np.float64), np.asarray(T, dtype=np.float64)
    if not np.all(np.isfinite(Qa)):
        raise ValueError("Q contains illegal values (NaN or inf)")
    if Qa.ndim == 1 and Ta.ndim == 1:
        return _stumpy_empty(_mp.match(Qa, Ta, max_distance=max_distance,
                                       max_matches=max_matches, atol=atol, query_idx=query_idx,
                                       normalize=normalize, p=p, device=device,
                                       progress=False))
    # stumpy's multi-dimensional match: dimension i of Q against dimension i of T, the
    # distance profiles averaged
    Q2, T2 = np.atleast_2d(Qa), np.atleast_2d(Ta)
    if Q2.ndim != 2 or T2.ndim != 2 or len(Q2) != len(T2):
        raise ValueError(f"Q and T must have the same number of dimensions (rows), got "
                         f"shapes {Qa.shape} and {Ta.shape}")
    D = np.asarray(_mp.mass(Q2, T2, normalize=normalize, p=p, query_idx=query_idx,
                            device=device, progress=False), dtype=np.float64)
    D = np.mean(D.reshape(len(Q2), -1), axis=0)
    ez = int(math.ceil(Q2.shape[-1] / EXCL_ZONE_DENOM))
    return _stumpy_empty(find_matches(D, ez, max_distance, max_matches, query_idx, atol))


def _stumpy_empty(matches):
    """No match: stumpy's empty object array, shape (0,) (clts.match's is (0, 2))."""
    return np.array([], dtype=object) if len(matches) == 0 else matches


def match(Q, T, M_T=None, Σ_T=None, max_distance=None, max_matches=None, atol=1e-8,
          query_idx=None, normalize=True, p=2.0, T_subseq_isfinite=None,
          T_subseq_isconstant=None, Q_subseq_isconstant=None, *, device=None):
    """stumpy.match: the windows of ``T`` within ``max_distance`` of ``Q`` (default
    max(mean - 2 std, min) of the distance profile), best first, as an object array of
    (distance, index) rows; a (d, m) query against a (d, n) series averages the d distance
    profiles, as stumpy. ``M_T`` / ``Σ_T`` / ``T_subseq_isfinite`` are not needed."""
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant,
                   Q_subseq_isconstant=Q_subseq_isconstant)
    return _match(Q, T, max_distance, max_matches, atol, query_idx, normalize, p, device)


def aamp_match(Q, T, T_subseq_isfinite=None, max_distance=None, max_matches=None, atol=1e-8,
               query_idx=None, p=2.0, *, device=None):
    """stumpy.aamp_match: :func:`match` with plain Minkowski distances."""
    return _match(Q, T, max_distance, max_matches, atol, query_idx, False, p, device)


def _jagged(rows, fill, dtype):
    if not rows:
        return np.array([[]])
    out = np.full((len(rows), max(len(r) for r in rows)), fill, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def motifs(T, P, min_neighbors=1, max_distance=None, cutoff=None, max_matches=10, max_motifs=1,
           atol=1e-8, normalize=True, p=2.0, T_subseq_isconstant=None, *, device=None):
    """stumpy.motifs, by :func:`clts.motifs` (whose default is stumpy's procedure): the top
    motifs from a matrix profile ``P`` (1-D, e.g. ``mp[:, 0]``, or a clts result).

    Returns
    -------
    motif_distances : numpy.ndarray, float64, (motifs, matches), NaN-padded
    motif_indices : numpy.ndarray, int64, (motifs, matches), -1-padded
        ``np.array([[]])`` each when no motif is found (with stumpy's warning).
    """
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant)
    T = _one_d(np.asarray(T, dtype=np.float64), "T")
    if hasattr(P, "self_join") and hasattr(P, "P"):     # a clts MatrixProfileResult
        P = np.asarray(P.P)[:, 0]
    P = np.asarray(P)
    if P.ndim != 1:
        raise ValueError(f"P is {P.ndim}-dimensional and must be 1-dimensional. "
                         "Multidimensional motif discovery is not yet supported.")
    if max_motifs < 1:
        warn_caller("The maximum number of motifs, `max_motifs`, must be greater than or "
                    "equal to 1.\n`max_motifs` has been set to `1`")
        max_motifs = 1
    found = _mp.motifs(T, P.astype(np.float64), max_motifs, min_neighbors=min_neighbors,
                       max_distance=max_distance, cutoff=cutoff,
                       max_matches=max_matches,
                       atol=atol, normalize=normalize, p=p, device=device)
    return (_jagged([f["distances"] for f in found], np.nan, np.float64),
            _jagged([f["indices"] for f in found], -1, np.int64))


def aamp_motifs(T, P, min_neighbors=1, max_distance=None, cutoff=None, max_matches=10,
                max_motifs=1, atol=1e-8, p=2.0, *, device=None):
    """stumpy.aamp_motifs: :func:`motifs` with plain Minkowski distances."""
    return motifs(T, P, min_neighbors, max_distance, cutoff, max_matches, max_motifs, atol,
                  False, p, device=device)


def fluss(I, L, n_regimes, excl_factor=5, custom_iac=None):
    """stumpy.fluss: the corrected arc curve and regime boundaries, by :func:`clts.fluss` with
    ``iac="stumpy"`` (stumpy's idealised arc curve, :func:`stumpy_iac`, a seeded beta fit:
    needs scipy), so the curve and the boundaries are stumpy's; :func:`clts.fluss`'s own
    default is the closed form 2 i (k - i) / k of the FLUSS paper."""
    if not (hasattr(I, "I") and hasattr(I, "self_join")):     # a result: clts.fluss reads it
        I = np.asarray(to_numpy(I))
        if I.dtype == object:           # stumpy's mp[:, 1]
            I = I.astype(np.int64)
    return _mp.fluss(I, L, n_regimes, excl_factor=excl_factor, custom_iac=custom_iac,
                     iac="stumpy")


def stumpi(T, m, egress=True, normalize=True, p=2.0, k=1, mp=None,
           T_subseq_isconstant_func=None, *, device=None):
    """stumpy.stumpi: the incremental matrix profile (``update(t)``, ``P_``, ``I_``,
    ``left_P_``, ``left_I_``, ``T_``; ``P_`` / ``I_`` [l, k] for ``k > 1``), by
    :func:`clts.stumpi`. A precomputed ``mp`` raises NotImplementedError."""
    _check_k(k)
    if mp is not None:
        _missing("stumpi's mp= (starting from a precomputed profile)",
                 "drop mp=: clts.stumpi computes the initial profile itself")
    _no_isconstant(T_subseq_isconstant_func=T_subseq_isconstant_func)
    return _mp.stumpi(T, m, egress=egress, normalize=normalize, p=p, k=int(k), device=device)


def aampi(T, m, egress=True, p=2.0, k=1, mp=None, *, device=None):
    """stumpy.aampi: :func:`stumpi` with plain Minkowski distances."""
    return stumpi(T, m, egress, False, p, k, mp, device=device)


def _one_series_f8(x, name):
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} is {a.ndim}-dimensional and must be 1-dimensional")
    return a


def mpdist(T_A, T_B, m, percentage=0.05, k=None, normalize=True, p=2.0,
           T_A_subseq_isconstant=None, T_B_subseq_isconstant=None, *, device=None):
    """stumpy.mpdist: the MPdist of two series (a float), by :func:`clts.mpdist` (both joins in
    one device kernel; ``normalize=False`` is :func:`aampdist`)."""
    _no_isconstant(T_A_subseq_isconstant=T_A_subseq_isconstant,
                   T_B_subseq_isconstant=T_B_subseq_isconstant)
    return float(_mp.mpdist(_one_series_f8(T_A, "T_A"), _one_series_f8(T_B, "T_B"), m,
                            percentage=percentage, k=k, normalize=normalize, p=p,
                            device=device))


def aampdist(T_A, T_B, m, percentage=0.05, k=None, p=2.0, *, device=None):
    """stumpy.aampdist: :func:`mpdist` with plain Minkowski distances."""
    return mpdist(T_A, T_B, m, percentage, k, False, p, device=device)


def gpu_mpdist(T_A, T_B, m, percentage=0.05, k=None, device_id=0, normalize=True, p=2.0,
               T_A_subseq_isconstant=None, T_B_subseq_isconstant=None, *, device=None):
    """stumpy.gpu_mpdist: :func:`mpdist` on an OpenCL device (``device_id`` as
    :func:`gpu_stump`; a list: its first device)."""
    dev = _gpu_device(device_id, device, one=True)
    return mpdist(T_A, T_B, m, percentage, k, normalize, p, T_A_subseq_isconstant,
                  T_B_subseq_isconstant, device=dev)


def gpu_aampdist(T_A, T_B, m, percentage=0.05, k=None, device_id=0, p=2.0, *, device=None):
    """stumpy.gpu_aampdist: :func:`gpu_mpdist` with plain Minkowski distances."""
    return gpu_mpdist(T_A, T_B, m, percentage, k, device_id, False, p, device=device)


def ostinato(Ts, m, normalize=True, p=2.0, Ts_subseq_isconstant=None, *, device=None):
    """stumpy.ostinato: the consensus motif of a list of series, ``(central_radius,
    central_Ts_idx, central_subseq_idx)``, by :func:`clts.ostinato` (lower bounds from one
    batched join kernel, candidates' distance profiles by batched :func:`clts.mass`)."""
    if not isinstance(Ts, list):
        raise ValueError(f"`Ts` is of type `{type(Ts)}` but a `list` is expected")
    if Ts_subseq_isconstant is not None and any(x is not None for x in Ts_subseq_isconstant):
        _no_isconstant(Ts_subseq_isconstant=Ts_subseq_isconstant)
    r = _mp.ostinato(Ts, m, normalize=normalize, p=p, device=device)
    return np.float64(r.radius), int(r.series), np.int64(r.index)


def aamp_ostinato(Ts, m, p=2.0, *, device=None):
    """stumpy.aamp_ostinato: :func:`ostinato` with plain Minkowski distances."""
    return ostinato(Ts, m, False, p, device=device)


def gpu_ostinato(Ts, m, device_id=0, normalize=True, p=2.0, Ts_subseq_isconstant=None, *,
                 device=None):
    """stumpy.gpu_ostinato: :func:`ostinato` on an OpenCL device (``device_id`` as
    :func:`gpu_stump`; a list: its first device)."""
    dev = _gpu_device(device_id, device, one=True)
    return ostinato(Ts, m, normalize, p, Ts_subseq_isconstant, device=dev)


def gpu_aamp_ostinato(Ts, m, device_id=0, p=2.0, *, device=None):
    """stumpy.gpu_aamp_ostinato: :func:`gpu_ostinato` with plain Minkowski distances."""
    return gpu_ostinato(Ts, m, device_id, False, p, device=device)


def snippets(T, m, k, percentage=1.0, s=None, mpdist_percentage=0.05, mpdist_k=None,
             normalize=True, p=2.0, mpdist_T_subseq_isconstant=None, *, device=None):
    """stumpy.snippets: ``(snippets, snippets_indices, snippets_profiles, snippets_fractions,
    snippets_areas, snippets_regimes)``, by :func:`clts.snippets` (every segment's distance
    matrix from batched :func:`clts.mass` calls)."""
    _no_isconstant(mpdist_T_subseq_isconstant=mpdist_T_subseq_isconstant)
    return _mp.snippets(_one_series_f8(T, "T"), m, k, percentage=percentage, s=s,
                        mpdist_percentage=mpdist_percentage, mpdist_k=mpdist_k,
                        normalize=normalize, p=p, device=device)


def aampdist_snippets(T, m, k, percentage=1.0, s=None, mpdist_percentage=0.05, mpdist_k=None,
                      p=2.0, *, device=None):
    """stumpy.aampdist_snippets: :func:`snippets` with plain Minkowski distances."""
    return snippets(T, m, k, percentage, s, mpdist_percentage, mpdist_k, False, p,
                    device=device)


def atsc(IL, IR, j):
    """stumpy.atsc: the anchored time-series chain from window ``j``, by :func:`clts.atsc`
    (``IL`` / ``IR``: ``mp[:, 2]`` / ``mp[:, 3]`` or ``mp.left_I_`` / ``mp.right_I_``)."""
    return _mp.atsc((IL, IR), j)


def allc(IL, IR):
    """stumpy.allc: ``(S, C)``, the all-chain set and the longest chain, by :func:`clts.allc`;
    ``S`` in stumpy's order (the iteration order of the Python set stumpy collects the chains
    in, filled in the same order)."""
    S, C = _mp.allc((IL, IR))
    by_head = {int(s[0]): s for s in S}
    flat = np.concatenate(S).tolist() if S else []
    tuples, a = [], 0
    for s in S:                                  # stumpy's set, filled in the same order
        tuples.append(tuple(flat[a:a + len(s)]))
        a += len(s)
    return [by_head[t[0]] for t in set(tuples)], C


def floss(mp, T, m, L, excl_factor=5, n_iter=1000, n_samples=1000, custom_iac=None,
          normalize=True, p=2.0, T_subseq_isconstant_func=None, *, device=None):
    """stumpy.floss: streaming semantic segmentation (``update(t)``, ``cac_1d_``, ``P_``,
    ``I_``, ``T_``), by :func:`clts.floss` from ``mp``'s right index (``mp[:, 3]``), with
    stumpy's idealised arc curve when no ``custom_iac`` is given (a seeded beta fit of
    ``n_iter`` resamplings: needs scipy); :func:`clts.floss`'s own default is the exact closed
    form."""
    _no_isconstant(T_subseq_isconstant_func=T_subseq_isconstant_func)
    return _mp.floss(T, m, L, mp=mp, excl_factor=excl_factor, custom_iac=custom_iac,
                     iac="stumpy", n_iter=n_iter, n_samples=n_samples, normalize=normalize,
                     p=p, device=device)


def mmotifs(T, P, I, min_neighbors=1, max_distance=None, cutoffs=None, max_matches=10,
            max_motifs=1, atol=1e-8, k=None, include=None, normalize=True, p=2.0,
            T_subseq_isconstant=None, *, device=None):
    """stumpy.mmotifs: multi-dimensional motifs from :func:`mstump`'s ``P``, ``I``, by
    :func:`clts.mmotifs`.

    Returns
    -------
    motif_distances : numpy.ndarray, float64, (motifs, matches), NaN-padded
    motif_indices : numpy.ndarray, int64, (motifs, matches), -1-padded
    motif_subspaces : list of numpy.ndarray
    motif_mdls : list of numpy.ndarray
    """
    _no_isconstant(T_subseq_isconstant=T_subseq_isconstant)
    found = _mp.mmotifs(T, P, I, min_neighbors, max_distance, cutoffs, max_matches,
                        max_motifs, atol, k, include, normalize, p, device=device)
    return (_jagged([f["distances"] for f in found], np.nan, np.float64),
            _jagged([f["indices"] for f in found], -1, np.int64),
            [f["subspace"] for f in found], [f["mdl"] for f in found])


def aamp_mmotifs(T, P, I, min_neighbors=1, max_distance=None, cutoffs=None, max_matches=10,
                 max_motifs=1, atol=1e-8, k=None, include=None, p=2.0, *, device=None):
    """stumpy.aamp_mmotifs: :func:`mmotifs` with plain Minkowski distances."""
    return mmotifs(T, P, I, min_neighbors, max_distance, cutoffs, max_matches, max_motifs,
                   atol, k, include, False, p, device=device)


def _absent(name, what, instead):
    def f(*args, **kwargs):
        _missing(f"stumpy.{name} ({what})", instead)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"stumpy.{name} ({what}): not implemented in clts; calling it raises "
                 f"NotImplementedError. {instead[0].upper() + instead[1:]}.")
    return f


_ABSENT = {
    "ostinatoed": ("the distributed consensus motif", "use ostinato (batched on one device)"),
    "aamp_ostinatoed": ("the distributed non-normalised consensus motif",
                        "use aamp_ostinato"),
    "mpdisted": ("the distributed MPdist", "use mpdist (batched on one device)"),
    "aampdisted": ("the distributed non-normalised MPdist", "use aampdist"),
    "stumped": ("the dask / ray distributed matrix profile",
                "use stump(..., device=[...]) for several devices, or clts.distributed"),
    "aamped": ("the distributed non-normalised matrix profile", "use aamp"),
    "mstumped": ("the distributed multi-dimensional matrix profile", "use mstump"),
    "maamped": ("the distributed non-normalised multi-dimensional profile", "use maamp"),
}

for _name, (_what, _instead) in _ABSENT.items():
    globals()[_name] = _absent(_name, _what, _instead)
del _name, _what, _instead

__all__ = ["mparray", "stump", "gpu_stump", "aamp", "gpu_aamp", "mstump", "maamp", "mdl",
           "maamp_mdl", "subspace", "maamp_subspace", "mass", "match", "aamp_match", "motifs",
           "aamp_motifs", "fluss", "stumpi", "aampi", "stumpy_iac", "mpdist", "aampdist",
           "gpu_mpdist", "gpu_aampdist", "ostinato", "aamp_ostinato",
           "gpu_ostinato", "gpu_aamp_ostinato", "snippets", "aampdist_snippets", "atsc", "allc",
           "floss", "mmotifs", "aamp_mmotifs"] + ANYTIME + sorted(_ABSENT)
