"""The tuner engine: check, time and choose candidates of registered entries.

For every candidate the engine first runs it once on each workload and compares the result with
the entry's reference check; a wrong candidate (or one whose build or launch fails) is recorded
with its reason and never timed or chosen. A correct one is run ``warmup`` more times, then
timed ``repeats`` times per round (OpenCL profiling events, through ``clts.runtime.timing``);
the cost of a workload is the median. Noise check: the relative standard error of that median,
estimated from the samples' interquartile range (``1.2533 * (IQR / 1.349) / sqrt(n) / median``),
must be at most ``noise``; otherwise another round is added, up to ``max_rounds``, unless the
candidate is clearly slower than the best one so far on that workload (its median minus three
standard errors above the best median: more samples cannot change the choice). A measurement
still noisy after that is kept but flagged unstable. A candidate's score is the geometric mean
of its workloads' medians.

Tunables are searched exhaustively when small (``exhaustive_max``), otherwise by a strategy
(see ``search.py``) under a time budget and an evaluation cap. Crossovers time both versions at
every swept value; the threshold is the split of the sweep that loses least (the first win of
``above`` on monotone data), with a warning when a later value flips back.
"""
from __future__ import annotations

import itertools
import logging
import math
import time

import numpy as np

from .. import options
from .search import get_strategy, label
from .space import Crossover, Tunable
from .results import (NEVER, CandidateResult, CrossoverResult, Settings,  # noqa: F401
                      TunableResult)
from .timer import EventTimer
from . import sizing
from .gate import MIN_OCCUPANCY

log = logging.getLogger("clts.tune")


def _geomean(xs) -> float:
    return float(math.exp(sum(math.log(max(x, 1e-15)) for x in xs) / len(xs)))


def _spread(times) -> float:
    """Relative spread of the samples: interquartile range / median."""
    med = float(np.median(times))
    if med <= 0:
        return 0.0
    q1, q3 = np.percentile(times, [25, 75])
    return float((q3 - q1) / med)


def _uncertainty(times) -> float:
    """Relative standard error of the median, from the IQR (normal approximation)."""
    return 1.2533 * _spread(times) / 1.349 / math.sqrt(len(times))


def _reason(exc) -> str:
    """One line saying why a candidate failed (first lines of the exception, shortened)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = "; ".join(lines)
    return f"{type(exc).__name__}: {text[:300]}{'...' if len(text) > 300 else ''}"


def _py(v):
    """numpy scalars -> plain Python (profiles are YAML)."""
    return v.item() if isinstance(v, np.generic) else v


class _Bar:
    """A tqdm bar when tqdm is installed and progress is wanted, else nothing."""

    def __init__(self, enabled, total, desc):
        self.bar = None
        if enabled and options.get("progress"):
            try:
                from tqdm.auto import tqdm
                import sys
                self.bar = tqdm(total=total, desc=desc, unit="cand", file=sys.stderr,
                                leave=False)
            except ImportError:
                pass

    def show(self, what):
        if self.bar is not None:
            self.bar.set_postfix_str(what[:60], refresh=True)

    def step(self):
        if self.bar is not None:
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


class Tuner:
    """Measures registered entries on one device.

    ``timer``: ``EventTimer(device)`` by default; tests pass a ``FakeTimer``. ``cache``: a
    ``MeasurementCache`` (resume) or None. ``on_measure(entry_name, CandidateResult)`` is
    called after each candidate (the CLI prints from it in verbose mode). ``apply=True``
    writes each entry's chosen values into the device's in-memory profile as soon as the entry
    is done, so later entries (crossovers run after tunables) time every version with its
    freshly tuned parameters; ``clts-tune`` does this and restores the profile afterwards.
    """

    def __init__(self, device=None, timer=None, cache=None, settings: Settings | None = None,
                 progress: bool = False, on_measure=None, apply: bool = False):
        self.device = device
        self.apply = apply          # put each entry's chosen values into the device's profile
        self.timer = timer if timer is not None else EventTimer(device)
        self.cache = cache
        self.settings = settings or Settings()
        self.progress = progress
        self.on_measure = on_measure
        self.low_occupancy: dict[str, list] = {}   # entry -> candidates skipped on a GPU

    # -- one candidate ------------------------------------------------------------------------
    def measure(self, entry_name: str, shash: str, lab: str, params: dict, jobs,
                mode: str = "kernel", best_medians=None) -> CandidateResult:
        """``jobs``: list of (run() -> result, check(result) -> bool), one per workload;
        ``mode``: the timer's mode (``Tunable.timing``); ``best_medians``: per-workload medians
        of the best candidate so far (noise rounds are skipped for clear losers)."""
        if self.cache is not None:
            rec = self.cache.get(entry_name, shash, lab)
            if rec is not None:
                return CandidateResult.from_record(lab, params, rec)
            self.cache.begin(entry_name, shash, lab)
        try:
            res = self._measure(entry_name, lab, params, jobs, mode, best_medians)
        except BaseException:
            if self.cache is not None:
                self.cache.abort(entry_name, shash, lab)
            raise
        if self.cache is not None:
            self.cache.put(entry_name, shash, lab, res.record())
        return res

    def _measure(self, entry_name, lab, params, jobs, mode="kernel",
                 best_medians=None) -> CandidateResult:
        for wi, (run, check) in enumerate(jobs):          # correctness first, never timed
            try:
                ok = bool(check(run()))
                why = "" if ok else f"result differs from the reference (workload {wi})"
            except Exception as exc:  # noqa: BLE001 - a failing candidate is a result, not a crash
                ok, why = False, _reason(exc)
            if not ok:
                log.info("%s %s rejected: %s", entry_name, lab, why)
                return CandidateResult(label=lab, params=params, ok=False, error=why)
        try:
            return self._time(entry_name, lab, params, jobs, mode, best_medians)
        except Exception as exc:  # noqa: BLE001 - passed its check, then failed when re-run
            why = "failed when run again after passing its check: " + _reason(exc)
            log.warning("%s %s %s", entry_name, lab, why)
            return CandidateResult(label=lab, params=params, ok=False, error=why)

    def _time(self, entry_name, lab, params, jobs, mode, best_medians) -> CandidateResult:
        s = self.settings
        medians, spreads, stable, samples = [], [], True, 0
        for wi, (run, _check) in enumerate(jobs):
            for _ in range(s.warmup):
                run()
            times = []
            loser = False
            for _round in range(s.max_rounds):
                times += [self.timer.time(run, (entry_name, lab, wi), mode)
                          for _ in range(s.repeats)]
                unc = _uncertainty(times)
                if unc <= s.noise:
                    break
                if best_medians is not None and \
                        float(np.median(times)) * (1 - 3 * unc) > best_medians[wi]:
                    loser = True          # clearly slower: more rounds cannot change the choice
                    break
            sp = _spread(times)
            if _uncertainty(times) > s.noise and not loser:
                stable = False
                log.info("%s %s workload %d unstable: median uncertain by %.0f%% (spread "
                         "%.0f%%) after %d samples", entry_name, lab, wi,
                         100 * _uncertainty(times), 100 * sp, len(times))
            medians.append(float(np.median(times)))
            spreads.append(sp)
            samples += len(times)
        return CandidateResult(label=lab, params=params, ok=True, score=_geomean(medians),
                               medians=medians, spread=max(spreads), stable=stable,
                               samples=samples)

    # -- entries --------------------------------------------------------------------------------
    def space(self, entry: Tunable) -> dict:
        """The entry's candidate lists on this device: ``entry.params`` on a CPU; on a GPU
        work-groups narrower than the SIMD width are replaced (``sizing.space``)."""
        return sizing.space(entry, self.device)

    def candidates(self, entry: Tunable):
        """(valid candidates, number rejected by the constraint); on a GPU also the
        sub-SIMD work-groups of ``entry.work_group`` and the candidates the entry's occupancy
        rating puts under the gate's ``MIN_OCCUPANCY`` (all kept when every one is rated
        under it); the latter count as rejected and are listed in
        ``self.low_occupancy[entry.name]``."""
        params = self.space(entry)
        names = list(params)
        fit, rejected = [], 0
        for combo in itertools.product(*(params[n] for n in names)):
            p = {n: _py(v) for n, v in zip(names, combo)}
            ok = True
            if entry.constraint is not None:
                try:
                    ok = bool(entry.constraint(p, self.device))
                except Exception as exc:  # noqa: BLE001
                    log.warning("%s: constraint raised on %s: %s", entry.name, label(p), exc)
                    ok = False
            if ok and not sizing.sub_simd(entry, p, self.device):
                fit.append(p)
            else:
                rejected += 1
        low = [p for p in fit if self._low_occupancy(entry, p)]
        if low and len(low) == len(fit):
            log.warning("%s: every candidate is rated below %.0f %% occupancy; measuring them "
                        "anyway", entry.name, 100 * MIN_OCCUPANCY)
            low = []
        self.low_occupancy[entry.name] = [label(p) for p in low]
        skip = {label(p) for p in low}
        return [p for p in fit if label(p) not in skip], rejected + len(low)

    def _low_occupancy(self, entry, p) -> bool:
        rate = getattr(entry, "occupancy", None)
        if rate is None or not sizing.is_gpu(self.device):
            return False
        try:
            occ = rate(p, self.device)
        except Exception as exc:  # noqa: BLE001 - no rating: keep the candidate
            log.warning("%s: occupancy rating raised on %s: %s", entry.name, label(p), exc)
            return False
        return occ is not None and occ < MIN_OCCUPANCY

    def _current(self, entry: Tunable):
        if self.device is None:
            return None
        try:
            prof = self.device.profile
            return {k: prof.get(f"{entry.section}.{k}") for k in entry.params}
        except Exception:  # noqa: BLE001 - no value yet: no start point
            return None

    def _stopper(self, budget_s):
        t0 = self.timer.clock()
        if budget_s is None:
            return lambda: False
        return lambda: self.timer.clock() - t0 >= budget_s

    def tune_tunable(self, entry: Tunable, budget_s: float | None = None) -> TunableResult:
        t_wall = time.monotonic()
        s = self.settings
        cands, rejected = self.candidates(entry)
        params = self.space(entry)
        sname, strategy = get_strategy(s.strategy, len(cands), s.exhaustive_max)
        res = TunableResult(entry=entry, strategy=sname, n_space=len(cands), n_rejected=rejected,
                            sizes=sizing.sizes(entry, s.quick, self.device),
                            low_occupancy=len(self.low_occupancy.get(entry.name, ())))
        if not cands:
            res.warnings.append("the constraint rejects every candidate")
            return res
        workloads = sizing.workloads(entry, s.quick, self.device)
        if not workloads:
            raise ValueError(f"tuner entry {entry.name!r}: workloads({s.quick}) is empty")
        from .cache import space_hash
        shash = space_hash(params, len(workloads), s.fingerprint(), _clts_version(),
                           getattr(entry, "timing", "kernel"), res.sizes)
        should_stop = self._stopper(budget_s)
        fallbacks = getattr(self.timer, "wall_fallbacks", 0)
        done: dict[str, CandidateResult] = {}
        total = len(cands) if sname == "exhaustive" else min(s.max_evals, len(cands))
        bar = _Bar(self.progress, total, entry.name)

        def evaluate(p):
            lab = label(p)
            if lab not in done:
                bar.show(lab)
                jobs = [(_bind_run(entry, self.device, p, w), _bind_check(entry, w))
                        for w in workloads]
                good = [c for c in done.values() if c.ok]
                best = min(good, key=lambda c: c.score).medians if good else None
                done[lab] = self.measure(entry.name, shash, lab, p, jobs,
                                         getattr(entry, "timing", "kernel"), best)
                bar.step()
                if self.on_measure:
                    self.on_measure(entry.name, done[lab])
            c = done[lab]
            return c.score if c.ok else None

        current = self._current(entry)
        start = current if current is not None and label(current) in {label(c) for c in cands} \
            else None
        try:
            strategy(cands, params, evaluate, should_stop, max_evals=s.max_evals,
                     seed=s.seed, start=start)
        finally:
            bar.close()
        res.candidates = list(done.values())
        good = [c for c in res.candidates if c.ok]
        res.best = min(good, key=lambda c: c.score) if good else None
        if start is not None:
            res.current = done.get(label(start))
        res.partial = should_stop() and len(done) < (len(cands) if sname == "exhaustive"
                                                     else min(s.max_evals, len(cands)))
        if res.wrong:
            res.warnings.append(f"{len(res.wrong)} candidate(s) failed their check: "
                                + "; ".join(f"{c.label}: {c.error}" for c in res.wrong[:3]))
        if res.unstable:
            res.warnings.append(f"{len(res.unstable)} candidate(s) measured unstable (median "
                                "still uncertain beyond the noise threshold after all rounds)")
        self._fallback_warning(res, fallbacks)
        self._guard(res, current)
        res.seconds = time.monotonic() - t_wall
        return res

    def _guard(self, res: TunableResult, current) -> None:
        """On a GPU, a best time under ``sizing.min_seconds`` is launch overhead: the entry is
        not decided and keeps the profile's previous value (``res.kept``)."""
        limit = sizing.min_seconds(self.device, self.settings)
        if res.best is None or not limit or res.best.score >= limit:
            return
        res.too_small = True
        res.kept = {k: v for k, v in (current or {}).items() if v is not None}
        res.warnings.append(
            f"best time {res.best.score * 1e6:.1f} us is under {limit * 1e6:.0f} us: launch "
            "overhead decides, not the kernel; the previous value is kept (larger workloads "
            "or the full run decide it)")

    def _fallback_warning(self, res, before):
        n = getattr(self.timer, "wall_fallbacks", 0) - before
        if n:
            res.warnings.append(f"{n} timed run(s) launched no kernel through "
                                "clts.runtime.launch: timed by the host wall clock instead")

    def sweep_values(self, entry: Crossover) -> list:
        """The values ``entry`` sweeps on this device: its (quick) values less those its
        ``sweepable`` hook rules out here."""
        s = self.settings
        values = list(entry.quick_values if (s.quick and entry.quick_values) else entry.values)
        ok = getattr(entry, "sweepable", None)
        if ok is not None and self.device is not None:
            values = [v for v in values if ok(v, self.device)]
        return values

    def tune_crossover(self, entry: Crossover, budget_s: float | None = None) -> CrossoverResult:
        t_wall = time.monotonic()
        s = self.settings
        values = self.sweep_values(entry)
        if any(b <= a for a, b in zip(values, values[1:])):
            raise ValueError(f"tuner entry {entry.name!r}: swept values must increase: {values}")
        below, above = entry.versions
        from .cache import space_hash
        shash = space_hash(tuple(values), tuple(entry.versions), s.fingerprint(), _clts_version(),
                           getattr(entry, "timing", "kernel"))
        should_stop = self._stopper(budget_s)
        fallbacks = getattr(self.timer, "wall_fallbacks", 0)
        res = CrossoverResult(entry=entry)
        if not values:
            res.warnings.append("no swept value is one auto can use on this device (its "
                                "profile caps a version below them); the threshold is kept")
        bar = _Bar(self.progress, len(values) * 2, entry.name)
        try:
            for value in values:
                if should_stop():
                    res.partial = True
                    break
                w = entry.workload(value)
                by = {}
                for version in (below, above):
                    lab = f"{version}@{value}"
                    bar.show(lab)
                    job = (_bind_xrun(entry, self.device, version, w), _bind_check(entry, w))
                    by[version] = self.measure(entry.name, shash, lab,
                                               {"version": version, "value": _py(value)}, [job],
                                               getattr(entry, "timing", "kernel"))
                    bar.step()
                    if self.on_measure:
                        self.on_measure(entry.name, by[version])
                ok = {v: c for v, c in by.items() if c.ok}
                winner = min(ok, key=lambda v: ok[v].score) if ok else None
                for v, c in by.items():
                    if not c.ok:
                        res.warnings.append(f"{v} fails its check at {value}: {c.error}")
                res.rows.append((_py(value), by, winner))
        finally:
            bar.close()
        if not res.partial:
            self._remeasure_disputed(entry, res, below, above, should_stop)
        res.threshold = self._threshold(res, values, below, above)
        self._fallback_warning(res, fallbacks)
        res.seconds = time.monotonic() - t_wall
        return res

    #: most swept values measured again when a sweep is not monotone
    MAX_REMEASURE = 8

    def _remeasure_disputed(self, entry, res, below, above, should_stop):
        """A sweep that is not monotone (``above`` wins, then ``below`` again) on a noisy host:
        measure both versions once more at every value of the disputed stretch (from the first
        win of ``above`` to the last win of ``below`` after it) and keep each version's smaller
        time (noise on a shared host only adds time), so that the threshold rests on repeated
        evidence rather than one stray round."""
        winners = [w for _, _, w in res.rows]
        first = next((i for i, w in enumerate(winners) if w == above), None)
        if first is None:
            return
        back = [i for i in range(first + 1, len(winners)) if winners[i] == below]
        if not back:
            return
        disputed = list(range(first, back[-1] + 1))[:self.MAX_REMEASURE]
        changed = []
        for i in disputed:
            if should_stop():
                break
            value, by, old = res.rows[i]
            w = entry.workload(value)
            for version in (below, above):
                c = by.get(version)
                if c is None or not c.ok:
                    continue
                job = (_bind_xrun(entry, self.device, version, w), _bind_check(entry, w))
                again = self._measure(entry.name, f"{version}@{value}",
                                      {"version": version, "value": value}, [job],
                                      getattr(entry, "timing", "kernel"))
                if again.ok and again.score < c.score:
                    c.score, c.medians = again.score, again.medians
                c.samples += again.samples
            ok = {v: c for v, c in by.items() if c.ok}
            winner = min(ok, key=lambda v: ok[v].score) if ok else None
            res.rows[i] = (value, by, winner)
            if winner != old:
                changed.append(f"{value}: {old} -> {winner}")
        res.warnings.append(
            f"disputed points (winner flipped back): re-measured {', '.join(str(res.rows[i][0]) for i in disputed)}"
            + (f"; winner changed at {'; '.join(changed)}" if changed else "; same winners"))

    @staticmethod
    def _threshold(res: CrossoverResult, values, below, above):
        """The split of the sweep that loses least: ``below`` runs under the threshold, ``above``
        from it on; each swept value costs (time of the version used) / (time of the winner) - 1
        (a value where a version failed its check forbids using it there). With monotone
        measurements this is the first win of ``above``; with noise it is the split that the
        measurements as a whole favour, not the first stray win."""
        seq = [(v, by, w) for v, by, w in res.rows if w is not None]
        if not seq:
            return None

        def loss(by, version, winner):
            c = by.get(version)
            if c is None or not c.ok:
                return math.inf
            return c.score / by[winner].score - 1.0

        last = _py(values[-1])
        # "past the sweep" means never, as far as measured: extrapolating a switch just beyond
        # the last value once sent large tridiagonal batches to a much slower version
        past = NEVER if isinstance(last, int) and not isinstance(last, bool) else (
            math.inf if isinstance(last, float) else None)
        splits = [v for v, _, _ in seq] + ([past] if not res.partial else [])
        costs = []
        for k, t in enumerate(splits):
            costs.append(sum(loss(by, below if i < k else above, w)
                             for i, (v, by, w) in enumerate(seq)))
        best = min(range(len(splits)), key=lambda k: (costs[k], k))
        wins = [v for v, _, w in seq if w == above]
        first = next((i for i, (_, _, w) in enumerate(seq) if w == above), None)
        if first is not None and any(w == below for _, _, w in seq[first + 1:]):
            back = [v for v, _, w in seq[first + 1:] if w == below]
            res.warnings.append(
                f"not monotonic: {above} wins at {', '.join(map(str, wins))} and {below} at "
                f"{', '.join(map(str, back))} after it; threshold {splits[best]} loses least "
                f"({costs[best]:.3g} summed relative time over the sweep)")
        if best == len(seq):
            if not wins:
                res.warnings.append(f"{above} never wins up to {last}; threshold set to "
                                    f"never ({past})")
            return past
        if best == 0:
            res.warnings.append(f"{above} already wins at the smallest swept value "
                                f"{seq[0][0]}; the true crossover may be lower")
        return splits[best]

    def run(self, entries, budget_s: float | None = None) -> list:
        """Tune ``entries`` in order; a total ``budget_s`` is shared out as it goes (each entry
        may use the remaining budget divided by the entries left)."""
        results = []
        t0 = self.timer.clock()
        entries = list(entries)
        for i, entry in enumerate(entries):
            share = None
            if budget_s is not None:
                left = budget_s - (self.timer.clock() - t0)
                share = max(left, 0.0) / (len(entries) - i)
            if isinstance(entry, Tunable):
                results.append(self.tune_tunable(entry, share))
            else:
                results.append(self.tune_crossover(entry, share))
            if self.apply:
                apply_values(self.device, results[-1].values)
        return results


def apply_values(device, values: dict) -> None:
    """Set dotted ``values`` in ``device``'s effective profile (in memory only)."""
    if device is None or not values:
        return
    prof = device.profile
    for key, value in values.items():
        node = prof.values
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
        prof.sources[key] = "clts-tune (this run)"


def _bind_run(entry, device, params, workload):
    return lambda: entry.run(device, dict(params), workload)


def _bind_xrun(entry, device, version, workload):
    return lambda: entry.run(device, version, workload)


def _bind_check(entry, workload):
    return lambda result: entry.check(result, workload)


def _clts_version() -> str:
    try:
        from .._version import __version__
        return __version__
    except ImportError:
        return "?"
