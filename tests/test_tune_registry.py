"""The tuner registry: duplicate names refused, a broken algorithm module reported, not fatal."""
from __future__ import annotations

import pytest

from clts.tune import Crossover, Tunable, registry
from clts.tune.space import Registry


def _t(name):
    return Tunable(name=name, section="x", params={"a": [1]}, workloads=lambda q: [0],
                   run=lambda d, p, w: w, check=lambda r, w: True)


def test_duplicate_entry_is_refused():
    reg = Registry()
    reg.add(_t("a.b"))
    reg.add(Crossover(name="a.c", key="x.y", versions=("p", "q"), values=[1, 2],
                      workload=lambda v: v, run=lambda d, v, w: w, check=lambda r, w: True))
    with pytest.raises(ValueError, match="registered twice"):
        reg.add(_t("a.b"))
    assert list(reg.tunables) == ["a.b"] and list(reg.crossovers) == ["a.c"]


def test_broken_module_is_recorded_not_fatal(monkeypatch):
    registry.load_all()                     # the real registry stays loaded after this test
    monkeypatch.setattr(registry, "ALGORITHM_MODULES", ("clts.no_such_algorithm.tuning",))
    monkeypatch.setattr(registry, "REGISTRY", Registry())
    assert not registry.load_all().errors   # loaded once per process: not imported again
    reg = registry.load_all(refresh=True)
    assert "clts.no_such_algorithm.tuning" in reg.errors
    assert "ModuleNotFoundError" in reg.errors["clts.no_such_algorithm.tuning"]
    with pytest.raises(ModuleNotFoundError):
        registry.load_all(strict=True, refresh=True)


def test_registered_algorithms_load_and_fit_the_schema(monkeypatch):
    """Every module in ALGORITHM_MODULES imports, and its profile keys exist in the generic
    profiles (so clts-tune can write what it measures)."""
    from clts.tune.output import schema_problems
    reg = registry.load_all(strict=True, refresh=True)
    assert not reg.errors
    entries = list(reg.tunables.values()) + list(reg.crossovers.values())
    assert schema_problems(entries) == {}


def test_only_selects_by_dotted_component_then_prefix():
    from clts.tune.cli import select
    es = [_t(n) for n in ("tridiag.flat", "tridiag.flat_max_batch", "tridiag.thomas",
                          "stl.loess", "stlx.other")]
    names = lambda sel: [e.name for e in sel]  # noqa: E731
    assert names(select(es, "tridiag.flat")) == ["tridiag.flat"]
    assert names(select(es, "tridiag")) == ["tridiag.flat", "tridiag.flat_max_batch",
                                            "tridiag.thomas"]
    assert names(select(es, "stl")) == ["stl.loess"]
    assert names(select(es, "tri,stl.lo")) == ["tridiag.flat", "tridiag.flat_max_batch",
                                               "tridiag.thomas", "stl.loess"]
    assert names(select(es, None)) == names(es)
    with pytest.raises(SystemExit, match="nosuch"):
        select(es, "stl,nosuch")
