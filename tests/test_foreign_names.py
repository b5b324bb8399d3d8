"""Unknown keywords name the function's parameters, and ours for a name of R / statsmodels /
stumpy (one table, printed in docs/api-conventions.md)."""
import inspect
import pathlib

import numpy as np
import pytest

import clts
from clts.vocabulary import FOREIGN_NAMES, foreign_names_table

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "api-conventions.md"
FUNCS = {"bfast_monitor": clts.bfast_monitor, "stl": clts.stl,
         "matrix_profile": clts.matrix_profile.__call__,
         "solve_tridiagonal": clts.solve_tridiagonal}


def test_table_is_in_the_docs_and_names_real_parameters():
    assert foreign_names_table() in DOCS.read_text()
    for lib, theirs, ours, fn in FOREIGN_NAMES:
        params = inspect.signature(FUNCS[fn]).parameters
        assert theirs not in params or theirs == ours, (lib, theirs)
        first = ours.replace(",", " ").split()[0]
        assert first in params, (lib, theirs, ours)


def _bfast(**kw):
    y = np.random.default_rng(0).random((40, 3))
    return clts.bfast_monitor(y, np.arange(40.0), 30.0, freq=12.0, k=1, **kw)


@pytest.mark.parametrize("call, kw, says", [
    (_bfast, dict(order=3), "order is R bfastmonitor's name: use k="),
    (_bfast, dict(h=0.5), "use hfrac="),
    (_bfast, dict(start=3), "use start_monitor="),
    (lambda **kw: clts.stl(np.ones(48), 12, **kw), {"s.window": 7}, "use seasonal="),
    (lambda **kw: clts.matrix_profile(np.ones(64), 8, **kw), dict(excl_zone=2),
     "use exclusion_zone="),
])
def test_foreign_names_suggest_ours(call, kw, says):
    with pytest.raises(TypeError, match=says) as e:
        call(**kw)
    assert "parameters: " in str(e.value)


def test_unknown_keyword_lists_parameters_and_tuning_keywords(device):
    with pytest.raises(TypeError) as e:
        _bfast(colour=1, device=device)
    msg = str(e.value)
    assert msg.startswith("bfast_monitor: unknown parameter(s) colour; parameters: y, dates, "
                          "start_monitor, k, freq")
    assert "tuning keywords" in msg and "lanes" in msg
    with pytest.raises(TypeError, match="stl: unknown parameter.*parameters: y, period"):
        clts.stl(np.ones(48), 12, colour=1)
    with pytest.raises(TypeError, match="matrix_profile: unknown .*parameters: T_A, m, .*tile"):
        clts.matrix_profile(np.random.default_rng(0).random(64), 8, colour=1, device=device)


def test_every_public_function_names_its_parameters(device):
    """Every function of the clts namespace (and clts.ocean's) goes through vocabulary.renamed:
    an unknown keyword lists its parameters, under its own name (aamp said matrix_profile,
    trend_test listed only its tuning keywords, mstl gave Python's bare message)."""
    import inspect
    helpers = {"get_options", "get_device", "to_numpy", "set_options"}
    fns = [(n, getattr(clts, n)) for n in clts.__all__ if inspect.isfunction(getattr(clts, n))
           and n not in helpers] + [("tke", clts.ocean.tke),
                                    ("superbee_fluxes", clts.ocean.superbee_fluxes)]
    assert len(fns) > 30
    for name, fn in fns:
        assert hasattr(fn, "deprecated_aliases"), name
    rng = np.random.default_rng(0)
    T, Y = rng.standard_normal(200), rng.standard_normal((3, 60))
    calls = {"aamp": lambda **kw: clts.aamp(T, 8, device=device, **kw),
             "trend_test": lambda **kw: clts.trend_test(Y, device=device, **kw),
             "mann_kendall": lambda **kw: clts.mann_kendall(Y, device=device, **kw),
             "mstl": lambda **kw: clts.mstl(Y, [5], device=device, **kw),
             "scrump": lambda **kw: clts.scrump(T, 8, device=device, **kw),
             "mass": lambda **kw: clts.mass(T[:8], T, device=device, **kw),
             "bfastts": lambda **kw: clts.bfastts(Y[0], np.arange(60.0), **kw)}
    for name, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{name}: unknown parameter\(s\) colour; "
                                            r"parameters: \w+"):
            call(colour=1)
    with pytest.raises(TypeError, match=r"mann_kendall: .*parameters: y, variant, period.*"
                                        r"tuning keywords \(device profile\): chunk_bytes"):
        clts.mann_kendall(Y, colour=1, device=device)
