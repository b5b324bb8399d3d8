"""One name per idea (CONTRIBUTING.md): public signatures and profile keys use the canonical
names; a deprecated alias is accepted through ``vocabulary.renamed`` only and warns once."""
from __future__ import annotations

import inspect
import re
import warnings
from pathlib import Path

import pytest
import yaml

import clts
from clts import vocabulary

ROOT = Path(__file__).resolve().parents[1]
ALGORITHMS = [clts.stl, clts.bfast_monitor, clts.matrix_profile, clts.solve_tridiagonal,
              clts.ocean.superbee_fluxes, clts.ocean.tke]


def _public_callables():
    for name in clts.__all__:
        obj = getattr(clts, name)
        if callable(obj) and not isinstance(obj, type):
            yield name, obj
    yield "ocean.superbee_fluxes", clts.ocean.superbee_fluxes
    yield "ocean.tke", clts.ocean.tke


def test_public_signatures_use_the_canonical_names():
    bad = []
    for name, fn in _public_callables():
        params = set(inspect.signature(fn).parameters)
        for p in params & vocabulary.NOT_PUBLIC:
            bad.append(f"{name}({p}=)")
    assert bad == []
    for fn in ALGORITHMS:
        assert "device" in inspect.signature(fn).parameters, fn
    for fn in (clts.stl, clts.bfast_monitor, clts.solve_tridiagonal, clts.ocean.superbee_fluxes):
        assert "version" in inspect.signature(fn).parameters, fn
    for fn in (clts.stl, clts.bfast_monitor, clts.matrix_profile):
        assert {"time_axis", "progress"} <= set(inspect.signature(fn).parameters), fn


def test_deprecated_aliases_are_the_documented_ones():
    documented = (ROOT / "docs" / "api-conventions.md").read_text(encoding="utf-8")
    seen = {}
    for name, fn in _public_callables():
        aliases = getattr(fn, "deprecated_aliases", None) or getattr(
            type(fn).__call__, "deprecated_aliases", {})             # matrix_profile: an object
        for old, new in aliases.items():
            seen[old] = new
            assert old in vocabulary.NOT_PUBLIC
            assert f"`{old}=`" in documented, old
    assert seen == {"loess_version": "version", "progress_bar": "progress", "devices": "device",
                    "method": "version", "prefetch": "prefetch_items",
                    "loess_params": "**plan_overrides"}


def test_a_deprecated_alias_warns_once():
    @vocabulary.renamed(old_name="new_name")
    def f(*, new_name=0):
        return new_name

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert [f(old_name=i) for i in range(3)] == [0, 1, 2]
        assert f(new_name=5) == 5
    assert len(got) == 1 and issubclass(got[0].category, DeprecationWarning)
    assert "old_name= is deprecated, use new_name=" in str(got[0].message)
    with pytest.raises(TypeError, match="not both"):
        f(old_name=1, new_name=2)


def _leaves(tree, prefix=""):
    for k, v in tree.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            yield from _leaves(v, key)
        else:
            yield key


@pytest.mark.parametrize("kind", ["cpu", "gpu", "accelerator"])
def test_profile_keys_use_the_canonical_names(kind):
    data = yaml.safe_load((ROOT / "clts" / "devices" / f"generic-{kind}.yaml").read_text())
    keys = [k for k in _leaves({k: v for k, v in data.items()
                                 if k not in ("schema", "device", "provenance")})]
    assert keys
    for key in keys:
        for part in key.split("."):
            assert re.fullmatch(r"[a-z][a-z0-9_]*", part), key        # no LANES / TL / L
            assert part not in vocabulary.NOT_PUBLIC, key
