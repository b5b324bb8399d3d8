"""The Plan protocol and the one override keyword (CONTRIBUTING.md, "Plans"): every
algorithm's ``make_*plan(device, problem, **overrides)``, a frozen ``Problem``, Plans that
expose ``params`` / ``describe()`` / ``validate``, public functions that take their tuning
keywords as ``**plan_overrides`` and no underscore keyword, and one name from the tuning
keyword to the profile key."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest

import clts
from clts import vocabulary
from clts.runtime.plans import PlanBase

ALGORITHMS = ("stl", "bfast", "mp", "tridiag", "ocean", "trend")
NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")


def _plan_modules():
    for algo in ALGORITHMS:
        pkg = importlib.import_module(f"clts.{algo}")
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.name.endswith("plan"):
                yield importlib.import_module(f"clts.{algo}.{info.name}")


def _makers(module):
    return [(n, f) for n, f in vars(module).items()
            if inspect.isfunction(f) and f.__module__ == module.__name__
            and re.fullmatch(r"make_(\w+_)?plan", n)]


def test_every_algorithm_has_a_plan_module():
    assert {m.__name__.split(".")[1] for m in _plan_modules()} == set(ALGORITHMS)


@pytest.mark.parametrize("module", list(_plan_modules()), ids=lambda m: m.__name__)
def test_make_plan_signature(module):
    makers = _makers(module)
    assert makers, f"{module.__name__} has no make_plan"
    for name, fn in makers:
        params = list(inspect.signature(fn).parameters.values())
        assert [(p.name, p.kind) for p in params] == [
            ("device", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            ("problem", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            ("overrides", inspect.Parameter.VAR_KEYWORD)], f"{module.__name__}.{name}"
    problem = getattr(module, "Problem", None)
    assert dataclasses.is_dataclass(problem) and problem.__dataclass_params__.frozen
    for name, obj in vars(module).items():
        if (inspect.isclass(obj) and obj.__module__ == module.__name__
                and dataclasses.is_dataclass(obj) and obj is not problem):
            assert issubclass(obj, PlanBase), f"{module.__name__}.{name} is not a PlanBase"
            assert obj.__dataclass_params__.frozen, name


def _plans(device):
    from clts.bfast import breakpoints_plan, plan as bfast_plan
    from clts.mp import mass_plan, plan as mp_plan
    from clts.ocean import plan as ocean_plan
    from clts.stl import params as stl_params, plan as stl_plan
    from clts.trend import plan as trend_plan
    from clts.tridiag import plan as tridiag_plan
    settings = stl_params.check_arguments(96, 12)
    yield stl_plan.make_plan(device, stl_plan.Problem(settings, 4, 96))
    yield bfast_plan.make_plan(device, bfast_plan.Problem(80, 8))
    yield breakpoints_plan.make_plan(device, breakpoints_plan.Problem(100))
    yield mp_plan.make_plan(device, mp_plan.Problem(64))
    yield mass_plan.make_mass_plan(device, mass_plan.Problem())
    yield tridiag_plan.make_plan(device, tridiag_plan.Problem(115, 64, "natural",
                                                             np.float64, False))
    yield ocean_plan.make_superbee_plan(device, ocean_plan.Problem(8))
    yield ocean_plan.make_tke_plan(device, ocean_plan.Problem(8))
    yield trend_plan.make_plan(device, trend_plan.Problem(100, 1))


def test_plans_expose_params_and_describe(device):
    seen = set()
    for plan in _plans(device):
        seen.add(type(plan).__module__)
        assert isinstance(plan, PlanBase)
        params = plan.params
        assert isinstance(params, dict) and params, type(plan)
        for key in params:
            assert NAME.fullmatch(key), (type(plan), key)           # no LANES / TL / L
            assert key.split(".")[-1] not in vocabulary.NOT_PUBLIC, (type(plan), key)
        line = plan.describe()
        assert isinstance(line, str) and "\n" not in line
        assert all(f"{k}=" in line for k in params if k != "method")
        assert plan.validate(device) is plan or plan.validate(device) == plan
    assert len(seen) == 8


def test_a_given_version_and_tunable_override_the_profile(device):
    from clts.bfast import plan as bfast_plan
    from clts.trend import plan as trend_plan
    p = bfast_plan.make_plan(device, bfast_plan.Problem(80, 8), version="fused", wg=4)
    assert (p.version, p.wg) == ("fused", 4)
    assert trend_plan.make_plan(device, trend_plan.Problem(100, 1), lanes=1).lanes == 1
    with pytest.raises(TypeError, match="bogus"):
        trend_plan.make_plan(device, trend_plan.Problem(100, 1), bogus=1)


def _public_functions():
    for name in clts.__all__:
        obj = getattr(clts, name)
        if callable(obj) and not isinstance(obj, type):
            yield name, obj
    yield "ocean.superbee_fluxes", clts.ocean.superbee_fluxes
    yield "ocean.tke", clts.ocean.tke


#: the public functions that take tuning keywords (a Plan's fields) as ``**plan_overrides``
TUNED = {"stl", "matrix_profile", "mass", "match", "bfast_monitor", "bfast_breaks", "bfast01",
         "bfast_decompose",
         "trend_test", "solve_tridiagonal", "ocean.superbee_fluxes", "ocean.tke", "mstump"}


def test_one_override_keyword_and_no_underscore_keyword():
    for name, fn in _public_functions():
        sig = inspect.signature(fn).parameters
        assert not [p for p in sig if p.startswith("_")], name
        var_kw = [p for p, v in sig.items() if v.kind == v.VAR_KEYWORD]
        if name in TUNED:
            assert var_kw == [vocabulary.OVERRIDES], name
        else:
            assert var_kw in ([], ["kwargs"]), name            # passed on to a TUNED function


def test_a_deprecated_override_dict_warns_once_and_is_passed_on(device):
    import warnings
    y = np.random.default_rng(0).standard_normal((3, 48))
    vocabulary.reset_warned()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        old = [clts.stl(y, 12, device=device, version="outer", loess_params={"lanes": 1})
               for _ in range(2)]
    assert len([w for w in got if issubclass(w.category, DeprecationWarning)]) == 1
    new = clts.stl(y, 12, device=device, version="outer", lanes=1)
    for r in old:
        np.testing.assert_array_equal(r.trend, new.trend)
    with pytest.raises(TypeError, match="not both"):
        clts.stl(y, 12, device=device, lanes=1, loess_params={"lanes": 2})


def _keys_of(module):
    for attr in ("TUNABLE_KEYS", "KEYS", "PROFILE_KEYS", "SUPERBEE_KEYS", "TKE_KEYS"):
        yield from getattr(module, attr, {}).items()
    if hasattr(module, "profile_keys"):                          # tridiagonal: per version
        for method in module.VERSIONS:
            yield from module.profile_keys(method).items()


@pytest.mark.parametrize("module", list(_plan_modules()), ids=lambda m: m.__name__)
def test_a_tunable_keeps_its_profile_name(module):
    """The keyword of a tunable is its profile key's last component."""
    pairs = list(_keys_of(module))
    for name, key in pairs:
        assert name == key.split(".")[-1], (module.__name__, name, key)


#: the abbreviations template variables had before they took the Plan fields' names
DRIFTED = {"LANES", "L", "W", "VW", "TL", "CTL", "OTL", "TILE", "TX", "TY", "TZ", "WG", "CH",
           "PT", "U", "CHAINS", "BLOCKED", "STREAM", "FIXED_N", "PREFETCH_ITEMS", "ADVECTION",
           "UNROLL", "ILV", "G"}


def test_template_variables_carry_the_plan_names(device, monkeypatch):
    """What every public function renders: a tunable's template variable is its keyword
    (``lanes``, ``tile``, ``wg``, ...), never an abbreviation."""
    from clts.runtime import programs
    seen = []
    key = programs._key

    def recording(template, params, options=()):
        # every lookup of a program, built or prebuilt, goes through the cache key
        seen.append((template, set(params)))
        return key(template, params, options)
    monkeypatch.setattr(programs, "_key", recording)
    # the look-ups of this test's calls, not the memos of earlier ones (Plans and their
    # programs per problem, the programs by their parameters as given)
    monkeypatch.setattr(device.state, "constants", {})
    monkeypatch.setattr(device.state, "program_index", {})
    rng = np.random.default_rng(3)
    y = rng.standard_normal((4, 60))
    for v in ("outer", "intragroup", "flat"):
        clts.stl(y, 12, device=device, version=v, seasonal_jump=2, robust=True, outer_iter=1)
    cube = rng.standard_normal((60, 2, 3))
    for v in ("fused", "multi"):
        clts.bfast_monitor(cube, np.arange(60.0) / 12, 3.5, freq=1, device=device, version=v,
                           progress=False)
    clts.bfast_breaks(cube[:, 0, :2].copy(), np.arange(60.0), breaks=2, progress=False,
                      device=device)
    T = rng.standard_normal(200)
    clts.matrix_profile(T, 16, device=device, progress=False)
    clts.matrix_profile(T, 16, k=2, device=device, progress=False)
    clts.mass(T[:16], T, device=device)
    a, b, c, d = (rng.standard_normal((8, 20)) for _ in range(4))
    for v in ("thomas", "thomas-coalesced", "thomas-unrolled", "pcr", "flat"):
        clts.solve_tridiagonal(a, b + 4, c, d, version=v, device=device)
    clts.trend_test(y, device=device)
    assert len({t for t, _ in seen}) >= 15
    bad = sorted({(t, k) for t, keys in seen for k in keys & DRIFTED})
    assert bad == []
