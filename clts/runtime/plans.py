"""What the algorithms' Plans share: tunables read from the device profile, forced by keyword,
and checked against the device before anything is built.

Every algorithm's ``plan.py`` defines a frozen dataclass ``Problem`` (the data shape of one
call, built by the api from the checked input), a frozen dataclass ``Plan`` (every code version
and template parameter of one call) deriving from :class:`PlanBase`, and
``make_plan(device, problem, **overrides)``; the overrides are the public tuning keywords
(``version`` and the tunables, None = not given). The
tunables come from the device's effective profile, whose defaults are the shipped
``generic-<type>.yaml`` files: no tunable has a literal default in the code. A tunable keeps one
name from the profile key (its last component) through the Plan field and the public keyword to
the template variable.

A bad value is reported where it came from: ``ProfileError`` naming the profile file and key,
or ``ValueError`` naming the keyword the caller forced. Resource limits (work-group size, local
memory) are checked here, before a kernel is built, so a kernel that cannot fit a device is
never built for it.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, is_dataclass

from .profiles import value_error

#: bytes of local memory kept free for the driver (pocl and Intel reserve some per work-group)
LOCAL_MEM_RESERVE = 1024
#: the largest unroll factor a template is asked for (a huge one hangs the kernel compiler)
UNROLL_MAX = 64
#: lane widths of the OpenCL vector types (realN)
LANE_WIDTHS = (1, 2, 4, 8, 16)
#: sub-group sizes a kernel may require on Intel GPUs (``intel_reqd_sub_group_size``; 0: the
#: compiler picks)
SUBGROUPS = (0, 8, 16, 32)
#: register-file modes a program may ask of Intel GPUs' compiler (GRF registers per hardware
#: thread, the program parameter ``grf``: ``clts.runtime.programs.driver_options``; 0: the
#: driver's default)
GRF_MODES = (0, 128, 256)


class _FieldParams:
    """``Plan.params`` of a Plan that has no ``params`` field: its fields but the problem's,
    nested Plans flattened as ``name.field`` (a non-data descriptor: a field named ``params``,
    the tridiagonal Plan's, takes precedence)."""

    def __get__(self, plan, owner=None):
        if plan is None:
            return self
        out = {}
        for f in fields(plan):
            if f.name in plan.PROBLEM_FIELDS:
                continue
            v = getattr(plan, f.name)
            if is_dataclass(v) and isinstance(v, PlanBase):
                out.update({f"{f.name}.{k}": x for k, x in v.params.items()})
            else:
                out[f.name] = v
        return out


class PlanBase:
    """What every algorithm's Plan exposes (CONTRIBUTING.md, "Plans"): ``params``, a dict of
    every code version and template parameter, named as the public keywords and profile keys
    (what the tuner varies and a report shows); ``describe()``, the same on one line;
    ``validate(device)``, the Plan itself or a ``PlanValueError`` naming the field."""

    #: fields that describe the problem (the data shape), not a choice: left out of ``params``
    PROBLEM_FIELDS: tuple = ()
    params = _FieldParams()

    def describe(self) -> str:
        """``"<algorithm> Plan: name=value ..."``, one line (diagnostics, reports)."""
        algo = type(self).__module__.split(".")[1]
        items = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{algo} {type(self).__name__}: {items}"

    def validate(self, device=None, **kw):
        """The Plan itself when it fits ``device``; a ``PlanValueError`` names a bad field."""
        return self


@dataclass
class Tunables:
    """The tunables of one Plan: value, profile key and whether the caller forced it."""

    device: object
    keys: dict                      # name -> dotted profile key
    values: dict = field(default_factory=dict)
    forced: set = field(default_factory=set)

    def __getitem__(self, name):
        return self.values[name]

    def error(self, name: str, message: str) -> Exception:
        """A ``ProfileError`` naming the file and key of ``name``'s value, or a ``ValueError``
        naming the keyword when the caller forced it."""
        key = self.keys.get(name, name)
        forced = name in self.forced
        prefix = f"{name} "
        return value_error(getattr(self.device, "profile", None), key, prefix + message,
                           forced=forced)

    # -- checks ----------------------------------------------------------------------------
    def int_in(self, name, low=None, high=None, *, power_of_two=False, choices=None) -> int:
        v = self.values[name]
        if isinstance(v, bool) or not isinstance(v, int):
            try:
                import numpy as np
                if isinstance(v, np.integer):
                    v = int(v)
                    self.values[name] = v
                else:
                    raise TypeError
            except TypeError:
                raise self.error(name, f"must be an integer, got {v!r}") from None
        if choices is not None and v not in choices:
            raise self.error(name, f"must be one of {', '.join(map(str, choices))}, got {v}")
        if low is not None and v < low:
            raise self.error(name, f"must be >= {low}, got {v}")
        if high is not None and v > high:
            raise self.error(name, f"must be <= {high}, got {v}")
        if power_of_two and (v < 1 or v & (v - 1)):
            raise self.error(name, f"must be a power of two, got {v}")
        return v

    def choice(self, name, choices) -> str:
        """A value among ``choices`` (a code version, a method)."""
        v = self.values[name]
        if v not in choices:
            raise self.error(name, f"must be one of {', '.join(map(repr, choices))}, got {v!r}")
        return v

    def work_group(self, name, *, power_of_two=False) -> int:
        """A work-group size: >= 1 and within the device's maximum."""
        limit = int(self.device.max_work_group)
        return self.int_in(name, 1, limit, power_of_two=power_of_two)


def read_tunables(device, keys: dict, overrides: dict, *, extra=()) -> Tunables:
    """The values of ``keys`` (name -> dotted profile key) from ``device``'s profile, with the
    caller's ``overrides`` (None = not given) put over them. A keyword that is neither a key
    nor in ``extra`` is a ``TypeError`` listing the accepted ones."""
    overrides = {k: v for k, v in overrides.items() if v is not None}
    unknown = sorted(set(overrides) - set(keys) - set(extra))
    if unknown:
        from ..vocabulary import UnknownParameterError
        accepted = sorted(set(keys) | set(extra))
        raise UnknownParameterError(f"unknown parameter(s) {', '.join(unknown)}; accepted: "
                                    f"{', '.join(accepted)}", unknown, accepted)
    t = Tunables(device, dict(keys))
    for name, key in keys.items():
        if name in overrides:
            t.values[name] = overrides[name]
            t.forced.add(name)
        else:
            t.values[name] = profile_value(device, key)
    return t


def profile_value(device, key: str):
    """The value of the dotted ``key`` in ``device``'s effective profile; a key the profile
    lacks is a ``ProfileError`` naming it (the generic files define every key)."""
    try:
        return device.profile.get(key)
    except KeyError:
        from ..errors import ProfileError
        raise ProfileError(f"device {device}: profile key {key!r} is missing (every key needs "
                           f"a default in clts/devices/generic-*.yaml)") from None


def local_memory_budget(device) -> int:
    """Bytes of local memory one work-group may use."""
    return max(0, int(device.local_mem) - LOCAL_MEM_RESERVE)


def local_memory_share(device, groups: int, wg: int, regs: int = 0) -> int:
    """Bytes of local memory one work-group of ``wg`` work-items may use so that ``groups``
    work-groups (or as many as ``regs`` registers and the wave limit allow) fit on one compute
    unit together, by the occupancy model of the device's GPU family
    (:func:`clts.runtime.occupancy.max_local_mem`: a group that takes all of a CU's local
    memory leaves it one group); ``groups`` <= 0, CPUs and unknown devices: the whole
    per-group budget (:func:`local_memory_budget`)."""
    budget = local_memory_budget(device)
    if groups <= 0:
        return budget
    from . import occupancy
    lim = occupancy.limits_for(device)
    if lim is None:
        return budget
    return max(0, min(budget, occupancy.max_local_mem(lim, work_group=max(wg, 1), regs=regs,
                                                      groups=groups)))


class PlanValueError(ValueError):
    """A bad Plan field, raised by a Plan's ``validate``: ``name`` (the field) and the message."""

    def __init__(self, name, message):
        super().__init__(f"{name} {message}")
        self.name = name


def check_int(plan, name: str, lo: int = 1, hi: int | None = None, note: str = "") -> None:
    """Raise :class:`PlanValueError` unless ``plan``'s field ``name`` is an int (not a bool)
    from ``lo`` (to ``hi``); ``note`` says what a special value means (", 0: ...")."""
    v = getattr(plan, name)
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        span = f">= {lo}" if hi is None else f"from {lo} to {hi}"
        raise PlanValueError(name, f"must be an integer {span}{note}, got {v!r}")


def check_choice(plan, name: str, choices) -> None:
    """Raise :class:`PlanValueError` unless ``plan``'s field ``name`` is one of ``choices``
    (a bool never is, even where 0 / 1 are)."""
    v = getattr(plan, name)
    if isinstance(v, bool) or v not in choices:
        raise PlanValueError(name, f"must be one of {tuple(choices)}, got {v!r}")


def check_work_group(plan, dev, *names: str) -> None:
    """Raise :class:`PlanValueError` where a field of ``names`` exceeds ``dev``'s largest
    work-group (no check without a device)."""
    limit = getattr(dev, "max_work_group", None)
    for name in names:
        v = getattr(plan, name)
        if limit is not None and v > limit:
            raise PlanValueError(name, f"must be <= {limit} (the device's largest work-group), "
                                       f"got {v}")


def check_subgroup(value, name: str = "subgroup") -> None:
    """Raise :class:`PlanValueError` naming ``name`` unless ``value`` is one of
    :data:`SUBGROUPS` (the sub-group size a kernel requires on Intel GPUs)."""
    if isinstance(value, bool) or value not in SUBGROUPS:
        raise PlanValueError(name, f"must be one of {SUBGROUPS}, got {value!r}")


def check_waves(value, name: str = "waves") -> None:
    """Raise :class:`PlanValueError` naming ``name`` unless ``value`` is an int from 0 (the
    compiler's choice) to 10: the fewest waves per SIMD a kernel must fit on AMD GPUs
    (``amdgpu_waves_per_eu``, ``common/subgroup.cl.mako``'s ``waves``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10:
        raise PlanValueError(name, f"must be an integer from 0 (the compiler's choice) to 10, "
                                   f"got {value!r}")


def validated(plan, device, keys: dict, forced=(), **kw):
    """``plan.validate(device, **kw)`` (every Plan's one check against the device); a bad
    field is a ``ProfileError`` naming the file and key it came from (``keys``: field -> dotted
    profile key), or a ``ValueError`` naming the keyword when the caller forced it
    (``forced``)."""
    try:
        return plan.validate(device, **kw)
    except PlanValueError as exc:
        raise value_error(getattr(device, "profile", None), keys.get(exc.name, exc.name),
                          str(exc), forced=exc.name in forced) from None


def from_profile(cls, device, keys: dict, overrides: dict, *, fixed=None, over_plan=None):
    """A ``cls`` Plan from ``device``'s profile (``keys``: field -> dotted profile key) with
    the caller's keywords over it, or the ``plan=`` in ``overrides`` as given (keywords still
    override its fields); ``fixed``: fields that come from the problem, not the profile;
    ``over_plan``: those of them also put over a given plan. Validated (:func:`validated`)."""
    from dataclasses import replace
    plan = overrides.pop("plan", None)
    if plan is not None and not isinstance(plan, cls):
        raise TypeError(f"plan must be a {cls.__module__}.{cls.__name__}, got "
                        f"{type(plan).__name__}")
    if plan is None:
        t = read_tunables(device, keys, overrides)
        return validated(cls(**(fixed or {}), **t.values), device, keys, t.forced)
    bad = set(overrides) - set(keys)
    if bad:
        raise TypeError(f"unknown parameter(s) {sorted(bad)}; accepted: {sorted(keys)}")
    given = {k: v for k, v in overrides.items() if v is not None}
    return validated(replace(plan, **(over_plan or {}), **given), device, keys, set(keys))


def cached_under_profile(dev, cache_name: str, key, section: str, make, size: int = 256):
    """``make()`` once per device, ``key`` and state of the profile's ``section`` (a tuner or
    a test may change it in memory): the value made under an equal section (a deep comparison
    with a copy kept beside it, ~1 µs; the section's ``repr`` in the key cost ~20) is given
    again. Up to ``size`` values per cache, then it starts again. A repeated call (a model's
    time loop) skips its Plan's profile reads and checks."""
    values = dev.profile.values.get(section)
    cache = dev.state.constant(cache_name, dict)
    hit = cache.get(key)
    if hit is not None and hit[1] == values:
        return hit[0]
    value = make()
    if len(cache) >= size:
        cache.clear()
    cache[key] = (value, copy.deepcopy(values))
    return value


def plan_once(dev, section: str, make_plan, problem, **overrides):
    """``make_plan(dev, problem, **overrides)`` made once per device, problem, keywords and
    state of the profile's ``section`` (:func:`cached_under_profile`); a keyword value that
    cannot be hashed makes the Plan for this call. Plans are frozen: one serves every call."""
    try:
        key = (make_plan, problem, tuple(sorted(overrides.items())))
        hash(key)
    except TypeError:
        return make_plan(dev, problem, **overrides)
    return cached_under_profile(dev, f"{section}.plans", key, section,
                                lambda: make_plan(dev, problem, **overrides))

