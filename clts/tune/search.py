"""Search strategies over a Tunable's candidates.

A strategy gets the valid candidates (parameter dicts, cartesian order), the parameter lists,
``evaluate(candidate) -> score or None`` (None: the candidate failed its check or its build;
the engine memoises, checks, times and records) and ``should_stop() -> bool`` (the time
budget). It returns nothing: every measurement is recorded by the engine.

- ``exhaustive``: every candidate (the current profile value first, then a seeded shuffle).
- ``random-local`` (built in, no dependency): seeded random sample of about a third of the
  evaluation budget (plus the profile's current value), then iterated steepest descent over
  neighbours (one parameter moved one step in its list), restarting from the best point not
  yet used as a start, until the budget is spent or nothing is left.
- ``kt:<name>``: a Kernel Tuner strategy (``pip install clts[tune]``), e.g.
  ``kt:genetic_algorithm``, ``kt:simulated_annealing``, ``kt:random_sample``,
  ``kt:greedy_ils``, driven through a Kernel Tuner ``Runner`` that calls our ``evaluate``;
  Kernel Tuner never builds or launches anything. Revisits are not counted against the cap.
"""
from __future__ import annotations

import random
import sys


def label(params: dict) -> str:
    """Canonical text of a candidate: ``"wg=64,lanes=8"`` (parameter order of the entry)."""
    return ",".join(f"{k}={v}" for k, v in params.items())


def kernel_tuner_available() -> bool:
    try:
        import kernel_tuner  # noqa: F401
        from kernel_tuner.interface import strategy_map  # noqa: F401
        from kernel_tuner.runners.runner import Runner  # noqa: F401
        return True
    except Exception:  # noqa: BLE001 - any import problem means: not usable
        return False


STRATEGIES = ("auto", "exhaustive", "random-local", "kt:<name>")


def exhaustive(candidates, params, evaluate, should_stop, max_evals=None, seed=0, start=None):
    """Every candidate: the profile's current value first, then the others in a seeded random
    order, so that a run cut short by the budget is a fair sample that includes the previous
    value (the chosen one is then never slower than what the profile had)."""
    order = list(candidates)
    random.Random(seed).shuffle(order)
    if start is not None:
        order.sort(key=lambda c: label(c) != label(start))     # stable: start first
    for c in order:
        if should_stop():
            return
        evaluate(c)


def random_local(candidates, params, evaluate, should_stop, max_evals=48, seed=0, start=None):
    rng = random.Random(seed)
    index = {label(c): c for c in candidates}
    seen: dict[str, float | None] = {}
    max_evals = min(max_evals or len(candidates), len(candidates))

    def ev(c):
        k = label(c)
        if k not in seen:
            seen[k] = evaluate(c)
        return seen[k]

    def left():
        return len(seen) < max_evals and not should_stop()

    order = list(candidates)
    rng.shuffle(order)
    if start is not None and label(start) in index and left():
        ev(index[label(start)])
    for c in order[:max(2, max_evals // 3)]:
        if not left():
            break
        ev(c)

    def neighbours(c):
        for name, values in params.items():
            i = values.index(c[name])
            for j in (i - 1, i + 1):
                if 0 <= j < len(values):
                    n = dict(c)
                    n[name] = values[j]
                    if label(n) in index:
                        yield index[label(n)]

    started = set()
    while left():
        good = sorted((s, k) for k, s in seen.items() if s is not None and k not in started)
        if not good:
            rest = [c for c in order if label(c) not in seen]
            if not rest:
                return
            ev(rest[0])
            continue
        cur = index[good[0][1]]
        started.add(label(cur))
        while left():
            best = None
            for nb in neighbours(cur):
                if not left():
                    break
                s = ev(nb)
                if s is not None and s < seen[label(cur)] and (
                        best is None or s < seen[label(best)]):
                    best = nb
            if best is None:
                break
            cur = best
            started.add(label(cur))


def kernel_tuner_strategy(name, candidates, params, evaluate, should_stop, max_evals=48, seed=0,
                          start=None):
    """Drive Kernel Tuner's strategy ``name`` with our own cost function."""
    import numpy as np
    from kernel_tuner import util as ktu
    from kernel_tuner.interface import Options, strategy_map
    from kernel_tuner.runners.runner import Runner
    from kernel_tuner.searchspace import Searchspace

    if name not in strategy_map:
        raise ValueError(f"unknown Kernel Tuner strategy {name!r}; known: "
                         f"{', '.join(sorted(strategy_map))}")
    names = list(params)
    valid = {label(c) for c in candidates}
    max_evals = min(max_evals or len(candidates), len(candidates))

    def restriction(p):
        return label({k: p[k] for k in names}) in valid

    visited = set()

    class _Runner(Runner):
        def get_device_info(self):
            return Options(max_threads=sys.maxsize)

        def get_environment(self, tuning_options):
            return {}

        def run(self, parameter_space, tuning_options):
            out = []
            for element in parameter_space:
                if tuning_options.budget.is_done() or should_stop():
                    out.append(None)
                    continue
                p = dict(zip(names, element))
                s = evaluate(p)
                if label(p) not in visited:      # revisits are free (as in Kernel Tuner's cache)
                    visited.add(label(p))
                    tuning_options.budget.add_evaluations(1)
                r = dict(p, compile_time=0.0, verification_time=0.0, benchmark_time=0.0)
                if s is None:
                    r["__error__"] = ktu.RuntimeFailedConfig()
                else:
                    r["time"] = float(s)
                out.append(r)
            return out

    searchspace = Searchspace(params, [restriction], sys.maxsize)
    options = Options(strategy_options=Options(max_fevals=max_evals), objective=["time"],
                      objective_higher_is_better=[False], verbose=False, tune_params=params,
                      restrictions=[restriction], cache={}, metrics=None, simulated_time=0,
                      eps=1e-6, budget=ktu.TuningBudget(None, max_evals))
    state = random.getstate(), np.random.get_state()
    random.seed(seed)
    np.random.seed(seed)
    try:
        strategy_map[name].tune(searchspace, _Runner(), options)
    except ktu.StopCriterionReached:
        pass
    finally:
        random.setstate(state[0])
        np.random.set_state(state[1])


def check_strategy(name: str) -> None:
    """A ValueError for a strategy name :func:`get_strategy` cannot run (unknown, or a Kernel
    Tuner strategy without Kernel Tuner installed)."""
    if name in ("auto", "exhaustive", "random-local"):
        return
    if name.startswith("kt:"):
        if not kernel_tuner_available():
            raise ValueError(f"strategy {name!r} needs Kernel Tuner: pip install 'clts[tune]'")
        return
    raise ValueError(f"unknown strategy {name!r}; accepted: {', '.join(STRATEGIES)}")


def get_strategy(name: str, n_candidates: int, exhaustive_max: int):
    """Resolve a strategy name; ``auto`` = exhaustive for small spaces, else the built-in
    random-local (on recorded tables it found the optimum more reliably than Kernel Tuner's
    strategies at the same evaluation cap, and needs no dependency)."""
    if name == "auto":
        if n_candidates <= exhaustive_max:
            return "exhaustive", exhaustive
        name = "random-local"
    if name == "exhaustive":
        return name, exhaustive
    if name == "random-local":
        return name, random_local
    check_strategy(name)                 # what is left: a Kernel Tuner strategy, kt:<name>
    kt_name = name[3:]

    def run(*a, **kw):
        return kernel_tuner_strategy(kt_name, *a, **kw)
    return name, run
