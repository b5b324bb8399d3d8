"""The tuner engine on recorded timing tables (FakeTimer): no OpenCL device needed.

The tables below are shaped like real measurements (a work-group-size x lane-width space with a
clear optimum, noise, a wrong fast candidate); each test knows the winner in advance from the
table and checks that the engine picks it, never times or chooses a wrong candidate, repeats
noisy measurements, resumes an interrupted run and writes a profile that validates.
"""
from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import pytest
import yaml

from clts.runtime import profiles
from clts.tune import Crossover, Tunable
from clts.tune.cache import MeasurementCache
from clts.tune.engine import Settings, Tuner
from clts.tune.output import build_profile, schema_problems, write_profile
from clts.tune.search import kernel_tuner_available, label
from clts.tune.timer import FakeTimer

# A recorded table: seconds per candidate of a (wg, lanes) space (pocl-like: lanes=8 wins,
# mid-size work-groups best). wg=256,lanes=8 is over the constraint (wg*lanes <= 1024).
RECORDED = {
    "wg=16,lanes=1": 4.10e-3, "wg=16,lanes=4": 1.31e-3, "wg=16,lanes=8": 0.92e-3,
    "wg=64,lanes=1": 3.80e-3, "wg=64,lanes=4": 1.12e-3, "wg=64,lanes=8": 0.71e-3,
    "wg=128,lanes=1": 3.95e-3, "wg=128,lanes=4": 1.19e-3, "wg=128,lanes=8": 0.78e-3,
    "wg=256,lanes=1": 4.40e-3, "wg=256,lanes=4": 1.42e-3, "wg=256,lanes=8": 0.50e-3,
}


def _exact(result, workload):
    return result == workload


def small_entry(name="t.small", run=None, check=_exact, workloads=1):
    return Tunable(
        name=name, section="t.small",
        params={"wg": [16, 64, 128, 256], "lanes": [1, 4, 8]},
        workloads=lambda quick: list(range(workloads)),
        run=run or (lambda dev, p, w: w),
        check=check,
        constraint=lambda p, dev: p["wg"] * p["lanes"] <= 1024)


def quiet(**kw):
    base = dict(repeats=5, warmup=1, noise=0.05, max_rounds=3)
    base.update(kw)
    return Settings(**base)


def test_exhaustive_picks_recorded_winner():
    timer = FakeTimer(RECORDED)
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(small_entry())
    assert res.strategy == "exhaustive"
    assert res.n_space == 11 and res.n_rejected == 1
    assert res.best.params == {"wg": 64, "lanes": 8}
    assert res.best.score == pytest.approx(0.71e-3)
    assert res.values == {"t.small.wg": 64, "t.small.lanes": 8}
    assert "wg=256,lanes=8" not in timer.calls          # rejected by the constraint: never run
    assert all(timer.calls[k] == 5 for k in RECORDED if k != "wg=256,lanes=8")
    assert res.status == "ok" and not res.wrong and not res.unstable


def test_wrong_candidate_is_never_timed_nor_chosen():
    # the fastest recorded candidate returns a wrong result, another one fails to "build"
    def run(dev, p, w):
        if p == {"wg": 64, "lanes": 8}:
            return w + 1
        if p == {"wg": 128, "lanes": 8}:
            raise RuntimeError("clBuildProgram failed: out of registers")
        return w
    timer = FakeTimer(RECORDED)
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(small_entry(run=run))
    assert res.best.params == {"wg": 16, "lanes": 8}
    assert timer.calls["wg=64,lanes=8"] == 0 and timer.calls["wg=128,lanes=8"] == 0
    wrong = {c.label: c.error for c in res.wrong}
    assert set(wrong) == {"wg=64,lanes=8", "wg=128,lanes=8"}
    assert "differs from the reference" in wrong["wg=64,lanes=8"]
    assert "out of registers" in wrong["wg=128,lanes=8"]
    assert any("failed their check" in w for w in res.warnings)


def test_wrong_on_one_workload_is_wrong():
    def check(result, w):
        return not (w == 2 and result == 2 and check.p == "wg=16,lanes=8")

    def run(dev, p, w):
        check.p = label(p)
        return w
    check.p = None
    timer = FakeTimer({k: v if k != "wg=16,lanes=8" else 1e-6 for k, v in RECORDED.items()})
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(
        small_entry(run=run, check=check, workloads=3))
    assert res.best.params == {"wg": 64, "lanes": 8}
    assert [c.label for c in res.wrong] == ["wg=16,lanes=8"]
    assert timer.calls["wg=16,lanes=8"] == 0


def test_multiple_workloads_score_is_geometric_mean():
    table = {("wg=64,lanes=8", 0): 1e-3, ("wg=64,lanes=8", 1): 4e-3}
    table.update({(k, w): 1.0 for k in RECORDED for w in (0, 1)
                  if k != "wg=64,lanes=8"})
    res = Tuner(timer=FakeTimer(table), settings=quiet()).tune_tunable(
        small_entry(workloads=2))
    assert res.best.params == {"wg": 64, "lanes": 8}
    assert res.best.medians == [1e-3, 4e-3]
    assert res.best.score == pytest.approx(2e-3)


# -- noise ---------------------------------------------------------------------------------------
def test_noisy_measurement_is_repeated_until_stable():
    table = dict(RECORDED)
    # first round very noisy, then steady: the engine must add rounds until the spread is low
    table["wg=64,lanes=8"] = [0.7e-3, 2.1e-3, 0.7e-3, 3.0e-3, 1.4e-3] + [0.71e-3] * 50
    timer = FakeTimer(table)
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(small_entry())
    best = res.best
    assert best.params == {"wg": 64, "lanes": 8}
    assert best.stable and best.samples == 15 and timer.calls["wg=64,lanes=8"] == 15
    assert best.score == pytest.approx(0.71e-3)
    assert timer.calls["wg=16,lanes=8"] == 5          # stable ones are not repeated


def test_persistently_noisy_measurement_is_flagged_unstable():
    table = dict(RECORDED)
    table["wg=16,lanes=4"] = [1e-3, 3e-3] * 50
    timer = FakeTimer(table)
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(small_entry())
    unstable = {c.label: c for c in res.unstable}
    assert list(unstable) == ["wg=16,lanes=4"]
    assert unstable["wg=16,lanes=4"].samples == 15          # capped at max_rounds * repeats
    assert timer.calls["wg=16,lanes=4"] == 15
    assert any("unstable" in w for w in res.warnings)
    assert res.best.params == {"wg": 64, "lanes": 8}


# -- budgeted strategies on a large space ------------------------------------------------------
BIG_PARAMS = {"wg": [8, 16, 32, 64, 128, 256, 512, 1024], "unroll": [1, 2, 4, 8, 16, 32],
              "lanes": [1, 2, 4, 8, 16], "tile": [1, 2, 4, 8, 16, 32]}


def big_time(lab, wi):
    p = dict(kv.split("=") for kv in lab.split(","))
    wg, unroll, lanes, tile = (int(p[k]) for k in ("wg", "unroll", "lanes", "tile"))
    # smooth, unimodal in log2 space: optimum wg=128, unroll=4, lanes=8, tile=4
    return 1e-3 * (1 + 0.30 * abs(math.log2(wg) - 7) + 0.20 * abs(math.log2(unroll) - 2)
                   + 0.25 * abs(math.log2(lanes) - 3) + 0.15 * abs(math.log2(tile) - 2))


def big_entry():
    return Tunable(name="t.big", section="t.big", params=BIG_PARAMS,
                   workloads=lambda quick: [0], run=lambda d, p, w: w, check=_exact,
                   constraint=lambda p, dev: p["wg"] * p["tile"] <= 4096)


BIG_BEST = {"wg": 128, "unroll": 4, "lanes": 8, "tile": 4}


def test_random_local_search_finds_winner_within_eval_budget():
    timer = FakeTimer(big_time)
    s = quiet(repeats=3, strategy="random-local", max_evals=80)
    tuner = Tuner(timer=timer, settings=s)
    n_valid = len(tuner.candidates(big_entry())[0])
    res = tuner.tune_tunable(big_entry())
    assert n_valid > 1000 and res.n_space == n_valid
    assert res.strategy == "random-local"
    assert len(res.candidates) <= 80
    assert res.best.params == BIG_BEST


def test_auto_is_exhaustive_only_for_small_spaces():
    res = Tuner(timer=FakeTimer(big_time), settings=quiet(repeats=1, max_evals=30)).tune_tunable(
        big_entry())
    assert res.strategy != "exhaustive"
    assert res.strategy == "random-local"
    assert len(res.candidates) <= 30


def test_time_budget_stops_the_search():
    timer = FakeTimer(big_time, overhead=0.0)
    s = quiet(repeats=3, strategy="random-local", max_evals=500)
    res = Tuner(timer=timer, settings=s).tune_tunable(big_entry(), budget_s=0.2)
    # every candidate costs >= 3 ms of fake clock, so 0.2 s allows at most ~67 of them
    assert 10 <= len(res.candidates) <= 70
    assert res.partial and res.status == "partial (budget)"
    assert res.best is not None
    assert timer.now <= 0.2 + 3 * 4e-3


@pytest.mark.skipif(not kernel_tuner_available(), reason="Kernel Tuner not installed")
@pytest.mark.parametrize("strategy,slack", [("kt:simulated_annealing", 1.0),
                                            ("kt:genetic_algorithm", 1.0),
                                            ("kt:random_sample", 1.5)])
def test_kernel_tuner_strategies_drive_our_cost_function(strategy, slack):
    timer = FakeTimer(big_time)
    s = quiet(repeats=1, strategy=strategy, max_evals=80, seed=1)
    res = Tuner(timer=timer, settings=s).tune_tunable(big_entry())
    assert res.strategy == strategy
    assert 0 < len(res.candidates) <= 80
    # every measured candidate went through our check + timer; seeded runs reach the optimum
    assert set(timer.calls) == {c.label for c in res.candidates}
    assert res.best.score <= slack * big_time(label(BIG_BEST), 0) * (1 + 1e-9)
    if slack == 1.0:
        assert res.best.params == BIG_BEST


@pytest.mark.skipif(not kernel_tuner_available(), reason="Kernel Tuner not installed")
def test_kernel_tuner_strategy_never_picks_a_wrong_candidate():
    def run(d, p, w):
        return w + (p == BIG_BEST)
    entry = big_entry()
    entry.run = run
    timer = FakeTimer(big_time)
    res = Tuner(timer=timer, settings=quiet(repeats=1, strategy="kt:greedy_ils",
                                            max_evals=150)).tune_tunable(entry)
    assert res.best.params != BIG_BEST
    assert timer.calls[label(BIG_BEST)] == 0


def test_unknown_strategy_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown strategy"):
        Tuner(timer=FakeTimer(big_time), settings=quiet(strategy="magic")).tune_tunable(
            big_entry())


# -- crossover -------------------------------------------------------------------------------------
def cross(values=(256, 1024, 4096, 16384, 65536), check=_exact, run=None, quick_values=None):
    return Crossover(name="t.cross", key="t.small.flat_max", versions=("flat", "tiled"),
                     values=list(values), quick_values=quick_values,
                     workload=lambda v: v, run=run or (lambda d, version, w: w), check=check)


def xtable(flat, tiled, values=(256, 1024, 4096, 16384, 65536)):
    t = {f"flat@{v}": s for v, s in zip(values, flat)}
    t.update({f"tiled@{v}": s for v, s in zip(values, tiled)})
    return t


def test_crossover_finds_recorded_threshold():
    timer = FakeTimer(xtable([1e-5, 3e-5, 1.2e-4, 5e-4, 2e-3], [4e-5, 6e-5, 1.0e-4, 3e-4, 1e-3]))
    res = Tuner(timer=timer, settings=quiet()).tune_crossover(cross())
    assert [w for _, _, w in res.rows] == ["flat", "flat", "tiled", "tiled", "tiled"]
    assert res.threshold == 4096 and res.values == {"t.small.flat_max": 4096}
    assert res.status == "ok" and not res.warnings


def test_crossover_warns_when_not_monotonic():
    timer = FakeTimer(xtable([1e-5, 3e-5, 1.2e-4, 2e-4, 2e-3], [4e-5, 2e-5, 1.3e-4, 3e-4, 1e-3]))
    res = Tuner(timer=timer, settings=quiet()).tune_crossover(cross())
    # winners flat, tiled, flat, flat, tiled: flat up to 16384 loses 50 % at 1024 only, while
    # the first win of tiled (1024) would lose 8 % at 4096 and 50 % at 16384
    assert res.threshold == 65536
    assert any("not monotonic" in w and "4096" in w and "16384" in w for w in res.warnings)
    assert "not monotone" in res.status


def test_crossover_when_above_never_wins():
    timer = FakeTimer(xtable([1e-5] * 5, [2e-5] * 5))
    res = Tuner(timer=timer, settings=quiet()).tune_crossover(cross())
    from clts.tune.engine import NEVER
    assert res.threshold == NEVER  # never switch: not "just past the sweep"
    assert any("never wins" in w for w in res.warnings)


def test_crossover_wrong_version_never_wins():
    def run(d, version, w):
        return w + 1 if (version == "tiled" and w == 16384) else w
    timer = FakeTimer(xtable([1e-5, 3e-5, 1.2e-4, 5e-4, 2e-3], [4e-5, 6e-5, 1.0e-4, 3e-4, 1e-3]))
    res = Tuner(timer=timer, settings=quiet()).tune_crossover(cross(run=run))
    assert res.rows[3][2] == "flat" and timer.calls["tiled@16384"] == 0
    assert any("tiled fails its check at 16384" in w for w in res.warnings)
    assert any("not monotonic" in w for w in res.warnings)


def test_crossover_quick_values():
    timer = FakeTimer(xtable([1e-5, 3e-5, 1.2e-4, 5e-4, 2e-3], [4e-5, 6e-5, 1.0e-4, 3e-4, 1e-3]))
    res = Tuner(timer=timer, settings=quiet(quick=True)).tune_crossover(
        cross(quick_values=[1024, 65536]))
    assert [v for v, _, _ in res.rows] == [1024, 65536] and res.threshold == 65536
    with pytest.raises(ValueError, match="must increase"):
        Tuner(timer=timer, settings=quiet()).tune_crossover(cross(values=[8, 4]))


def test_run_shares_a_total_budget():
    timer = FakeTimer(lambda lab, wi: big_time(lab, wi) if "tile" in lab else RECORDED.get(
        lab, 1e-3))
    tuner = Tuner(timer=timer, settings=quiet(repeats=3, strategy="random-local",
                                              max_evals=1000))
    r_small, r_big = tuner.run([small_entry(), big_entry()], budget_s=0.5)
    assert r_small.status == "ok" and r_small.best.params == {"wg": 64, "lanes": 8}
    assert r_big.partial and timer.now <= 0.5 + 0.02


# -- resume ------------------------------------------------------------------------------------
def test_interrupted_run_resumes_from_cache(tmp_path):
    path = tmp_path / "cache.json"
    ran = []

    def run(dev, p, w):
        ran.append(label(p))
        if len(set(ran)) == 6 and interrupt[0]:
            raise KeyboardInterrupt
        return w
    interrupt = [True]
    with pytest.raises(KeyboardInterrupt):
        Tuner(timer=FakeTimer(RECORDED), cache=MeasurementCache(path),
              settings=quiet()).tune_tunable(small_entry(run=run))
    saved = MeasurementCache(path)
    assert len(saved) == 5 and not list(tmp_path.glob(".*tmp*"))
    interrupt[0] = False
    timer = FakeTimer(RECORDED)
    res = Tuner(timer=timer, cache=MeasurementCache(path), settings=quiet()).tune_tunable(
        small_entry(run=run))
    assert sum(c.cached for c in res.candidates) == 5
    assert len(timer.calls) == 6                     # only the 6 not measured before
    assert not set(timer.calls) & {c.label for c in res.candidates if c.cached}
    assert res.best.params == {"wg": 64, "lanes": 8} and len(res.candidates) == 11
    # a different space (or settings) never reuses those records
    timer2 = FakeTimer(RECORDED)
    Tuner(timer=timer2, cache=MeasurementCache(path), settings=quiet(repeats=3)).tune_tunable(
        small_entry())
    assert len(timer2.calls) == 11
    c = MeasurementCache(path)
    c.drop_entry("t.small")
    assert len(c) == 0 and not path.exists()


def test_wrong_candidates_are_cached_as_wrong(tmp_path):
    path = tmp_path / "cache.json"

    def run(dev, p, w):
        return w + 1 if p["lanes"] == 1 else w
    Tuner(timer=FakeTimer(RECORDED), cache=MeasurementCache(path),
          settings=quiet()).tune_tunable(small_entry(run=run))
    timer = FakeTimer(RECORDED)
    res = Tuner(timer=timer, cache=MeasurementCache(path), settings=quiet()).tune_tunable(
        small_entry(run=lambda d, p, w: w))
    assert not timer.calls and len(res.wrong) == 4


# -- output ------------------------------------------------------------------------------------
FAKE_DEVICE = SimpleNamespace(vendor="Example Inc.", name="Example Device 9000", type="cpu",
                              platform="Example OpenCL", driver="1.2.3",
                              fingerprint="0123456789abcdef", slug="example-cpu-9000")


@pytest.fixture
def test_schema(monkeypatch):
    """The generic profiles' schema plus the sections of the test entries."""
    monkeypatch.setitem(profiles.schema(), "t", {"small": {"wg": 64, "lanes": 1, "flat_max": 1024},
                                                 "other": {"kept": 3}})
    return profiles.schema()


def test_profile_written_validates_and_keeps_other_values(tmp_path, test_schema):
    assert schema_problems([small_entry(), cross()]) == {}
    assert "t.big" in schema_problems([big_entry()])
    s = quiet()
    tuner = Tuner(timer=FakeTimer({**RECORDED, **xtable(
        [1e-5, 3e-5, 1.2e-4, 5e-4, 2e-3], [4e-5, 6e-5, 1.0e-4, 3e-4, 1e-3])}), settings=s)
    results = tuner.run([small_entry(), cross()])
    path = tmp_path / "dev.yaml"
    path.write_text(yaml.safe_dump({
        "schema": 1, "device": {"vendor": "Example Inc.", "name": "Example Device 9000",
                                "type": "cpu"},
        "provenance": {"source": "clts-tune", "entries": {"t.other": {"date": "earlier"}}},
        "t": {"other": {"kept": 7}, "small": {"wg": 16}}}))
    write_profile(FAKE_DEVICE, results, s, path)
    data = profiles.load(path)                  # validates against the (patched) schema
    assert data["t"] == {"other": {"kept": 7}, "small": {"wg": 64, "lanes": 8, "flat_max": 4096}}
    assert data["device"] == {"vendor": "Example Inc.", "name": "Example Device 9000",
                              "type": "cpu", "platform": "Example OpenCL"}
    prov = data["provenance"]
    assert prov["source"] == "clts-tune" and prov["fingerprint"] == "0123456789abcdef"
    assert prov["driver"] == "1.2.3" and prov["clts_version"] and prov["date"]
    assert prov["entries"]["t.other"] == {"date": "earlier"}
    small = prov["entries"]["t.small"]
    assert small["chosen"] == {"wg": 64, "lanes": 8}
    assert small["times"]["wg=64,lanes=8"] == pytest.approx(0.71e-3)
    assert len(small["times"]) == 11
    assert prov["entries"]["t.cross"]["threshold"] == 4096
    assert not list(tmp_path.glob(".*tmp*"))


def test_profile_for_another_device_is_not_overwritten(tmp_path, test_schema):
    path = tmp_path / "dev.yaml"
    path.write_text(yaml.safe_dump({"schema": 1, "device": {"name": "Other", "type": "cpu"}}))
    res = Tuner(timer=FakeTimer(RECORDED), settings=quiet()).run([small_entry()])
    with pytest.raises(ValueError, match="not for"):
        write_profile(FAKE_DEVICE, res, quiet(), path)


def test_invalid_value_is_refused_before_writing(tmp_path, test_schema):
    test_schema["t"]["small"]["lanes"] = "scalar"            # lanes must now be a str
    res = Tuner(timer=FakeTimer(RECORDED), settings=quiet()).run([small_entry()])
    with pytest.raises(profiles.ProfileError, match="t.small.lanes"):
        write_profile(FAKE_DEVICE, res, quiet(), tmp_path / "x.yaml")
    assert not (tmp_path / "x.yaml").exists()


def test_profile_of_untuned_run_keeps_previous(test_schema):
    data = build_profile(FAKE_DEVICE, [], quiet(), existing={
        "schema": 1, "device": {"name": "Example Device 9000", "type": "cpu"},
        "t": {"small": {"wg": 16}}})
    profiles.validate(data)
    assert data["t"] == {"small": {"wg": 16}}


def test_exhaustive_enumeration_matches_cartesian_product():
    cands, rej = Tuner(settings=quiet(), timer=FakeTimer({})).candidates(big_entry())
    full = list(itertools.product(*BIG_PARAMS.values()))
    assert len(cands) + rej == len(full)
    assert all(c["wg"] * c["tile"] <= 4096 for c in cands)


def test_tuple_and_numpy_values_are_written_as_plain_yaml(tmp_path, test_schema):
    import numpy as np
    test_schema["t"]["tiles"] = {"tile": [4, 4], "wg": 64}
    entry = Tunable(name="t.tiles", section="t.tiles",
                    params={"tile": [(4, 4), (8, 2)], "wg": list(np.array([32, 64]))},
                    workloads=lambda q: [0], run=lambda d, p, w: w, check=_exact)
    table = {"tile=(4, 4),wg=32": 2.0, "tile=(4, 4),wg=64": 3.0, "tile=(8, 2),wg=32": 1.0,
             "tile=(8, 2),wg=64": 4.0}
    res = Tuner(timer=FakeTimer(table), settings=quiet()).run([entry])
    path = write_profile(FAKE_DEVICE, res, quiet(), tmp_path / "p.yaml")
    data = profiles.load(path)
    assert data["t"]["tiles"] == {"tile": [8, 2], "wg": 32}
    assert type(data["t"]["tiles"]["wg"]) is int


# -- tables recorded on pocl (tests/data/tune_tables_pocl.json) ----------------------------------
def _recorded():
    import json
    from pathlib import Path
    return json.loads((Path(__file__).parent / "data" / "tune_tables_pocl.json").read_text())


def test_recorded_pocl_table_exhaustive_picks_its_fastest():
    table = _recorded()["copy_width_wg"]
    params = {"width": [1, 2, 4, 8, 16], "wg": [8, 16, 32, 64, 128, 256]}
    entry = Tunable(name="copy", section="x", params=params, workloads=lambda q: [0],
                    run=lambda d, p, w: w, check=_exact)
    res = Tuner(timer=FakeTimer(table), settings=quiet()).tune_tunable(entry)
    fastest = min(table, key=table.get)
    assert res.strategy == "exhaustive" and res.best.label == fastest
    assert res.table() == pytest.approx(table)


def test_recorded_pocl_crossover_threshold_and_flip_warning():
    table = _recorded()["copy_w1_vs_w8"]
    values = sorted({int(k.split("@")[1]) for k in table})
    entry = Crossover(name="copy.vec", key="x.vec_min_n", versions=("w1", "w8"), values=values,
                      workload=lambda v: v, run=lambda d, version, w: w, check=_exact)
    res = Tuner(timer=FakeTimer(table), settings=quiet()).tune_crossover(entry)
    w8_wins = [v for v in values if table[f"w8@{v}"] < table[f"w1@{v}"]]
    assert res.threshold == w8_wins[0]
    flips = [v for v in values if v > w8_wins[0] and v not in w8_wins]
    assert bool(flips) == any("not monotonic" in w for w in res.warnings)


def test_budget_cut_exhaustive_run_measures_previous_value_first():
    class Dev:                      # a device whose profile holds the previous value
        profile = SimpleNamespace(get=lambda key: {"t.small.wg": 128, "t.small.lanes": 4}[key])
    timer = FakeTimer(RECORDED)
    res = Tuner(Dev(), timer=timer, settings=quiet()).tune_tunable(small_entry(),
                                                                   budget_s=0.02)
    assert res.partial and 0 < len(res.candidates) < 11
    assert res.candidates[0].label == "wg=128,lanes=4"
    assert res.current is res.candidates[0]
    assert res.best.score <= res.current.score
    # the rest is a sample, not the first rows of the cartesian product
    full = Tuner(Dev(), timer=FakeTimer(RECORDED), settings=quiet()).tune_tunable(small_entry())
    assert full.current.label == "wg=128,lanes=4" and full.best.params == {"wg": 64, "lanes": 8}
    assert [c.label for c in full.candidates][1:4] != ["wg=16,lanes=1", "wg=16,lanes=4",
                                                        "wg=16,lanes=8"]


def test_clear_losers_get_no_extra_noise_rounds():
    table = {k: [10e-3, 14e-3, 10e-3, 14e-3, 12e-3] * 10 for k in RECORDED}
    table["wg=64,lanes=8"] = 1e-3
    timer = FakeTimer(table)
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(small_entry())
    order = [c.label for c in res.candidates]              # measurement order
    first = order.index("wg=64,lanes=8")
    assert res.best.params == {"wg": 64, "lanes": 8}
    assert 0 < first < len(order) - 1                        # seeded order: losers on both sides
    for lab in order[:first]:                                # no best yet: repeated, unstable
        assert timer.calls[lab] == 15
    for lab in order[first + 1:]:                            # clearly slower: one round only
        assert timer.calls[lab] == 5
    assert {c.label for c in res.unstable} == set(order[:first])


def test_entry_timing_mode_reaches_the_timer():
    timer = FakeTimer(RECORDED)
    entry = small_entry()
    Tuner(timer=timer, settings=quiet()).tune_tunable(entry)
    assert timer.modes == {"kernel"}
    entry.timing = "wall"
    timer = FakeTimer(RECORDED)
    Tuner(timer=timer, settings=quiet()).tune_tunable(entry)
    assert timer.modes == {"wall"}


def test_apply_lets_later_entries_run_with_freshly_tuned_values():
    dev = SimpleNamespace(profile=profiles.Profile({"t": {"small": {"wg": 16, "lanes": 1}}},
                                                   {}, [], 1))
    seen = []

    def run(d, version, w):
        seen.append((d.profile.get("t.small.wg"), d.profile.get("t.small.lanes")))
        return w
    table = {**RECORDED, **xtable([1e-5, 3e-5, 1.2e-4, 5e-4, 2e-3],
                                  [4e-5, 6e-5, 1.0e-4, 3e-4, 1e-3])}
    r1, r2 = Tuner(dev, timer=FakeTimer(table), settings=quiet(), apply=True).run(
        [small_entry(), cross(run=run)])
    assert r1.current.label == "wg=16,lanes=1"            # started from the profile's value
    assert set(seen) == {(64, 8)}                          # the crossover saw the tuned values
    assert dev.profile.source_of("t.small.wg") == "clts-tune (this run)"
    assert dev.profile.get("t.small.flat_max") == 4096
    dev2 = SimpleNamespace(profile=profiles.Profile({"t": {"small": {"wg": 16}}}, {}, [], 1))
    Tuner(dev2, timer=FakeTimer(RECORDED), settings=quiet()).run([small_entry()])
    assert dev2.profile.get("t.small.wg") == 16            # apply is off by default


def test_candidate_failing_after_its_check_is_rejected_not_fatal():
    calls = {}

    def run(dev, p, w):
        k = label(p)
        calls[k] = calls.get(k, 0) + 1
        if k == "wg=64,lanes=8" and calls[k] > 1:
            raise TypeError("set_args() missing 1 required positional argument")
        return w
    timer = FakeTimer(RECORDED)
    res = Tuner(timer=timer, settings=quiet()).tune_tunable(small_entry(run=run))
    assert res.best.params == {"wg": 128, "lanes": 8}
    wrong = {c.label: c.error for c in res.wrong}
    assert "failed when run again" in wrong["wg=64,lanes=8"] and "set_args" in wrong[
        "wg=64,lanes=8"]


CRASHING_CHILD = r"""
import os, signal, sys
sys.path.insert(0, {tests!r})
from test_tune_engine import RECORDED, quiet, small_entry
from clts.tune.cache import MeasurementCache
from clts.tune.engine import Tuner
from clts.tune.timer import FakeTimer

def run(dev, p, w):
    if p == {{"wg": 64, "lanes": 8}}:
        os.kill(os.getpid(), signal.SIGSEGV)          # a driver crash while building/running
    return w
Tuner(timer=FakeTimer(RECORDED), cache=MeasurementCache({path!r}),
      settings=quiet()).tune_tunable(small_entry(run=run))
"""


def _crash_child(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    path = tmp_path / "cache.json"
    code = CRASHING_CHILD.format(tests=str(Path(__file__).parent), path=str(path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == -11, p.stderr[-2000:]
    return path


def test_candidate_that_crashed_the_process_twice_is_skipped_on_resume(tmp_path):
    """One death is measured again (it may have been a kill, not the candidate); a second death
    of the same candidate marks it failed so that resuming does not crash for ever."""
    path = _crash_child(tmp_path)
    before = MeasurementCache(path)
    assert any(r.get("pending") for r in before.records.values())
    path = _crash_child(tmp_path)             # the resumed run measures it again: dies again
    ran = []
    timer = FakeTimer(RECORDED)
    res = Tuner(timer=timer, cache=MeasurementCache(path), settings=quiet()).tune_tunable(
        small_entry(run=lambda d, p, w: ran.append(label(p)) or w))
    assert "wg=64,lanes=8" not in ran and timer.calls["wg=64,lanes=8"] == 0
    wrong = {c.label: c.error for c in res.wrong}
    assert "died twice" in wrong["wg=64,lanes=8"]
    assert res.best.params == {"wg": 128, "lanes": 8}


def test_candidate_that_crashed_once_is_measured_again(tmp_path):
    path = _crash_child(tmp_path)
    ran = []
    res = Tuner(timer=FakeTimer(RECORDED), cache=MeasurementCache(path),
                settings=quiet()).tune_tunable(
        small_entry(run=lambda d, p, w: ran.append(label(p)) or w))
    assert "wg=64,lanes=8" in ran
    assert "wg=64,lanes=8" not in {c.label for c in res.wrong}


def test_interrupt_is_not_a_crash(tmp_path):
    """Ctrl-C (and SIGTERM / SIGHUP, which clts-tune turns into KeyboardInterrupt) while a
    candidate is measured leaves no pending mark: the next run measures it normally."""
    path = tmp_path / "cache.json"

    def run(dev, p, w):
        if p == {"wg": 64, "lanes": 8}:
            raise KeyboardInterrupt("SIGTERM")
        return w
    with pytest.raises(KeyboardInterrupt):
        Tuner(timer=FakeTimer(RECORDED), cache=MeasurementCache(path),
              settings=quiet()).tune_tunable(small_entry(run=run))
    assert not any(r.get("pending") for r in MeasurementCache(path).records.values())
    ran = []
    res = Tuner(timer=FakeTimer(RECORDED), cache=MeasurementCache(path),
                settings=quiet()).tune_tunable(
        small_entry(run=lambda d, p, w: ran.append(label(p)) or w))
    assert "wg=64,lanes=8" in ran and not res.wrong


@pytest.mark.skipif(not kernel_tuner_available(), reason="Kernel Tuner not installed")
def test_kernel_tuner_strategy_respects_the_time_budget():
    timer = FakeTimer(big_time)
    s = quiet(repeats=3, strategy="kt:genetic_algorithm", max_evals=500)
    res = Tuner(timer=timer, settings=s).tune_tunable(big_entry(), budget_s=0.1)
    assert 5 <= len(res.candidates) <= 35 and res.partial
    assert timer.now <= 0.1 + 3 * 4e-3


def test_crossover_remeasures_disputed_points():
    """A stray slow measurement of ``flat`` at 4096 (the host was busy) makes the sweep
    non-monotone (winners flat, flat, tiled, flat, tiled); measured again, flat wins there and
    the threshold is the true crossover, with no stray win left."""
    t = xtable([1e-5, 3e-5, [5e-4, 1e-4], 2e-4, 2e-3], [4e-5, 6e-5, 1.3e-4, 3e-4, 1e-3])
    timer = FakeTimer(t)
    res = Tuner(timer=timer, settings=quiet(repeats=1, warmup=0, max_rounds=1)).tune_crossover(
        cross())
    assert [w for _, _, w in res.rows] == ["flat", "flat", "flat", "flat", "tiled"]
    assert res.threshold == 65536
    assert any("re-measured 4096, 16384" in w and "4096: tiled -> flat" in w
               for w in res.warnings)
    assert not any("not monotonic" in w for w in res.warnings) and res.status == "ok"
