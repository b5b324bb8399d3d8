"""``clts-tune``: measure a device profile for this machine.

    clts-tune                      tune every registered entry on the default device
    clts-tune --list               what can be tuned
    clts-tune --only stl,bfast     entries whose name starts with one of these
    clts-tune --quick              small workloads, fewer repeats (minutes, not hours)
    clts-tune --budget 10m         a time budget for the whole run (s, m, h)
    clts-tune --device 1           which device (index, name substring, slug, or all)
    clts-tune -o my.yaml           write here instead of the user config directory
    clts-tune --dry-run            show what would be measured, measure nothing
    clts-tune --report r.md        tune, then write a markdown report (device, profile, figures)
    clts-tune --only none --report r.md   the report alone, with the current profile

An interrupted run resumes from its cache of measured candidates (``--fresh`` ignores it).
After writing the profile, the common calls' kernels are built with it (as ``clts warmup``;
``--no-warmup`` skips that), so that the next process's first calls find them built.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import re
import sys

from .cache import MeasurementCache, default_path as cache_path
from .engine import Settings, Tuner
from .output import default_path, schema_problems, write_profile
from .registry import REGISTRY, load_all
from .search import STRATEGIES
from . import sizing


def parse_budget(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*([smh]?)\s*", text or "", re.I)
    if not m:
        raise argparse.ArgumentTypeError(f"budget {text!r}: give a number with s, m or h "
                                         "(e.g. 90s, 10m, 1.5h)")
    seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2).lower()]
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"budget {text!r}: must be more than 0 seconds")
    return seconds


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number >= 1")
    return value


def check_output(path, dev) -> str | None:
    """Why the profile cannot be written to ``path`` (checked before any measurement), or None."""
    import os
    import tempfile
    from pathlib import Path
    path = Path(path)
    if path.is_dir():
        return f"-o {path} is a directory; give a file name (e.g. {path / (dev.slug + '.yaml')})"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path.parent, prefix=".clts-tune-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"cannot write to {path.parent}: {exc.strerror or exc}"
    if path.exists():
        from ..runtime import ProfileError, profiles
        try:
            spec = profiles.load(path).get("device", {})
        except ProfileError as exc:
            return f"{path} exists and is not a valid profile ({exc}); use -o to write elsewhere"
        if spec.get("name") not in (None, dev.name) or spec.get("type") != dev.type:
            return (f"{path} is a profile for {spec.get('name')!r}, not for {dev.name!r}; "
                    "use -o to write elsewhere")
        if not os.access(path, os.W_OK):
            return f"{path} is not writable"
    return None


def select(entries, only: str | None):
    if not only:
        return list(entries)
    prefixes = [p.strip() for p in only.split(",") if p.strip()]

    def hits(p):
        """Dotted components first (``tridiag.flat`` is that entry and ``tridiag.flat.*``, not
        ``tridiag.flat_max_batch``); a plain string prefix when that matches nothing."""
        exact = [e for e in entries if e.name == p or e.name.startswith(p + ".")]
        return exact or [e for e in entries if e.name.startswith(p)]
    matched = {e.name for p in prefixes for e in hits(p)}
    chosen = [e for e in entries if e.name in matched]
    unknown = [p for p in prefixes if not hits(p)]
    if unknown:
        raise SystemExit(f"clts-tune: --only {','.join(unknown)} matches no entry "
                         f"(clts-tune --list shows them)")
    return chosen


def _entries():
    reg = load_all()
    return list(reg.tunables.values()) + list(reg.crossovers.values())


def _space_size(e) -> int:
    n = 1
    for v in e.params.values():
        n *= len(v)
    return n


def _table(rows, header) -> str:
    rows = [[str(c) for c in r] for r in rows]
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
         for i, h in enumerate(header)]
    line = lambda r: "  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * x for x in w])] + [line(r) for r in rows])


def list_entries(entries, width: int = 100) -> str:
    """One block per entry, within ``width`` columns: name, kind and space on the first line,
    the profile keys and the description wrapped below."""
    import textwrap
    blocks = []
    for e in entries:
        if hasattr(e, "params"):
            head = f"{e.name}  (tunable, {_space_size(e)} candidates)"
            keys = e.section + ".{" + ", ".join(e.params) + "}"
        else:
            head = (f"{e.name}  (crossover: {' vs '.join(e.versions)} over {len(e.values)} "
                    "values)")
            keys = e.key
        wrap = lambda t: textwrap.fill(t, width, initial_indent="    ",  # noqa: E731
                                       subsequent_indent="      ", break_on_hyphens=False)
        blocks.append("\n".join([textwrap.fill(head, width, subsequent_indent="    "),
                                 wrap("keys: " + keys), wrap(e.description)]))
    return "\n".join(blocks)


def _sizes_text(sizes) -> str:
    """``"batch=4000 n=115; batch=40 n=1000"`` (``Tunable.sizes``), "-" without them."""
    if not sizes:
        return "-"
    return "; ".join(" ".join(f"{k}={v}" for k, v in s.items()) for s in sizes)


def _fmt_s(x) -> str:
    if x is None:
        return "-"
    for unit, f in (("s", 1), ("ms", 1e3), ("us", 1e6)):
        if x * f >= 1:
            return f"{x * f:.3g} {unit}"
    return f"{x * 1e9:.3g} ns"


def summary(results) -> str:
    rows = []
    for r in results:
        n_ok = len([c for c in r.candidates if c.ok])
        if r.kind == "tunable":
            chosen = ",".join(f"{k}={v}" for k, v in r.best.params.items()) if r.best else "-"
            if r.too_small:
                chosen = "kept " + (",".join(f"{k}={v}" for k, v in r.kept.items()) or "-")
            t = _fmt_s(r.best.score if r.best else None)
            gain = (f"x{r.current.score / r.best.score:.2f}" if r.best and r.current
                    and r.current.ok else "-")
            how = f"{r.strategy}: {len(r.candidates)}/{r.n_space} measured"
        else:
            chosen = (f"{r.entry.key.rsplit('.', 1)[-1]}={r.threshold}"
                      if r.threshold is not None else "-")
            t, gain = "-", "-"
            how = "sweep: " + " ".join(f"{v}:{w or '?'}" for v, _, w in r.rows)
        rows.append([r.name, chosen, t, gain, how, f"{n_ok} ok, {len(r.wrong)} wrong, "
                     f"{len(r.unstable)} unstable", r.status])
    return _table(rows, ["entry", "chosen", "time", "vs previous", "search", "candidates",
                         "status"])


def _argument_problem(args) -> str | None:
    """What is wrong with the command line's own arguments (nothing measured yet), or None."""
    import os
    from .search import check_strategy
    try:
        check_strategy(args.strategy)
    except ValueError as exc:
        return f"--strategy: {exc}"
    for opt, path in (("--cache", args.cache), ("--report", args.report)):  # -o: check_output
        if path and os.path.isdir(path):
            return f"{opt} {path}: that is a folder; give a file name"
    if args.only is not None and args.only.strip() and not [
            p for p in args.only.split(",") if p.strip()]:
        return f"--only {args.only!r} names no entry (clts-tune --list shows them)"
    return None


def main(argv=None) -> int:
    from ..cli import plain
    ap = argparse.ArgumentParser(prog="clts-tune",
                                 description=plain(__doc__.split("\n\n")[0]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=plain(__doc__.split("\n\n", 1)[1]))
    ap.add_argument("--list", action="store_true", help="list the registered entries and exit")
    ap.add_argument("--only", metavar="PREFIXES",
                    help="comma-separated entry names or prefixes (stl,bfast,tridiag.thomas); "
                         "whole dotted components first, plain prefixes otherwise")
    ap.add_argument("--budget", type=parse_budget, metavar="TIME",
                    help="time budget for the whole run, e.g. 90s, 10m, 1h")
    ap.add_argument("--quick", action="store_true",
                    help="small workloads, short sweeps, fewer repeats")
    ap.add_argument("--device", metavar="D",
                    help="device index, name substring or slug; 'all' tunes every working "
                         "device in turn (the budget applies to each)")
    ap.add_argument("-o", "--output", metavar="FILE",
                    help="profile to write (default: the user config directory)")
    ap.add_argument("--strategy", default="auto",
                    help=f"search strategy for large spaces: {', '.join(STRATEGIES)} "
                         "(kt:* needs pip install 'clts[tune]')")
    ap.add_argument("--repeats", type=positive_int, help="timed runs per round (default 7, quick 3)")
    ap.add_argument("--cache", metavar="FILE",
                    help="resume cache of measured candidates (default: the user cache "
                         "directory, one file per device)")
    ap.add_argument("--fresh", action="store_true",
                    help="ignore the cache of an interrupted run and measure everything again")
    ap.add_argument("--dry-run", action="store_true",
                    help="show the candidates that would be measured; measure nothing")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every measurement")
    ap.add_argument("--report", metavar="FILE",
                    help="after tuning, write a markdown report (device, profile, %% of copy "
                         "bandwidth per algorithm, anchors); with --only none, the report only")
    ap.add_argument("--no-warmup", action="store_true",
                    help="after writing the profile, do not build the common calls' kernels "
                         "with it (clts warmup does that later)")
    args = ap.parse_args(argv)
    bad = _argument_problem(args)
    if bad:                 # before any device is opened or anything measured
        print(f"clts-tune: {bad}", file=sys.stderr)
        return 2
    if args.report and (args.only or "").strip().lower() == "none":
        return _report_only(args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(message)s")

    entries = _entries()
    for mod, err in getattr(REGISTRY, "errors", {}).items():
        print(f"clts-tune: warning: {mod} failed to register: {err}", file=sys.stderr)
    if args.list:
        print(list_entries(entries) if entries else "no tuner entries registered")
        return 0
    entries = select(entries, args.only)
    if not entries:
        print("clts-tune: no tuner entries registered; nothing to do", file=sys.stderr)
        return 1
    bad = schema_problems(entries)
    for name, why in bad.items():
        print(f"clts-tune: skipping {name}: {why}", file=sys.stderr)
    entries = [e for e in entries if e.name not in bad]
    if not entries:
        return 1

    from ..runtime import DeviceError, get_device, usable
    kw = {"strategy": args.strategy}
    if args.repeats:
        kw["repeats"] = args.repeats
    settings = Settings.quick_settings(**kw) if args.quick else Settings(**kw)
    try:
        if (args.device or "").strip().lower() == "all":
            if args.output or args.cache:
                print("clts-tune: --device all writes one profile per device to the user "
                      "config directory; -o and --cache need a single device", file=sys.stderr)
                return 2
            devices = [get_device(i) for i in usable() if not i.simulator]
        else:
            devices = [get_device(args.device)]
    except DeviceError as exc:
        print(f"clts-tune: {exc}", file=sys.stderr)
        return 2
    rc = 0
    for dev in devices:
        status = tune_device(dev, entries, settings, args)
        if status == 130:                   # interrupted: stop, do not go on to the next device
            return status
        rc = max(rc, status)
        if args.report and not args.dry_run:
            _write_report(dev, args, len(devices) > 1)
    return rc


def _write_report(dev, args, several):
    from pathlib import Path

    from .report import write_report
    path = Path(args.report)
    if several:
        path = path.with_name(f"{path.stem}-{dev.slug}{path.suffix or '.md'}")
    with _written_profile(args):
        dev.reload_profile()                # the profile just written, not the one tuned from
        write_report(dev, path, quick=args.quick)
    dev.reload_profile()
    print(f"clts-tune: report written to {path}", file=sys.stderr)


@contextlib.contextmanager
def _written_profile(args):
    """``-o FILE`` searched first (``profile_path``: a private folder holding a link to it
    alone, not FILE's folder and whatever else lies there) while the report and the warm-up
    run: they use the profile just written, wherever it lies, not the one tuned from."""
    import tempfile
    from pathlib import Path

    from ..options import get, set_options
    if not args.output:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="clts-tune-profile-") as tmp:
        src = Path(args.output).resolve()
        (Path(tmp) / src.name).symlink_to(src)
        with set_options(profile_path=(tmp,) + tuple(get("profile_path") or ())):
            yield


def _report_only(args) -> int:
    from ..runtime import DeviceError, get_device
    try:
        dev = get_device(args.device)
    except DeviceError as exc:
        print(f"clts-tune: {exc}", file=sys.stderr)
        return 2
    _write_report(dev, args, False)
    return 0


class _interrupts_as_keyboard_interrupt:
    """SIGTERM and SIGHUP (``timeout``, a closed terminal) raise KeyboardInterrupt like Ctrl-C,
    so the candidate being measured is recorded as interrupted, not as a crash."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __enter__(self):
        import signal
        import threading
        self.old = {}
        if threading.current_thread() is not threading.main_thread():
            return self

        def raise_interrupt(signum, _frame):
            raise KeyboardInterrupt(signal.Signals(signum).name)
        for name in self.SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                self.old[sig] = signal.signal(sig, raise_interrupt)
        return self

    def __exit__(self, *exc):
        import signal
        for sig, handler in self.old.items():
            signal.signal(sig, handler)
        return False


def tune_device(dev, entries, settings, args) -> int:
    """Tune ``entries`` on one device and write its profile; returns the exit status."""
    from ..runtime import ProfileError
    if dev.info.simulator:
        print(f"clts-tune: {dev} is a simulator; its timings mean nothing", file=sys.stderr)
        return 2
    if dev.info.emulates and not args.dry_run:
        print(f"clts-tune: {dev} emulates the recorded GPU {dev.info.emulates!r} on a CPU "
              "driver: its timings would be the CPU's, written as the GPU's profile. Tune on "
              "the GPU itself (--dry-run lists the workloads it would run)", file=sys.stderr)
        return 2
    plog = logging.getLogger("clts.profiles")      # no "run clts-tune" hint from clts-tune
    level = plog.level
    plog.setLevel(logging.ERROR)     # setLevel, not assignment: it clears logging's level cache
    try:
        dev.profile
    finally:
        plog.setLevel(level)
    out = args.output or default_path(dev)
    if not args.dry_run:
        why = check_output(out, dev)
        if why:
            print(f"clts-tune: {why}", file=sys.stderr)
            return 2
    print(f"clts-tune: {dev.platform} / {dev.name} ({dev.slug}, fingerprint {dev.fingerprint})"
          f" -> {out}", file=sys.stderr)

    tuner = Tuner(dev, settings=settings, progress=True, apply=True)
    if args.dry_run:
        rows = []
        for e in entries:
            if hasattr(e, "params"):
                cands, rej = tuner.candidates(e)
                from .search import get_strategy
                try:
                    sname = get_strategy(settings.strategy, len(cands), settings.exhaustive_max)[0]
                except ValueError as exc:
                    sname = str(exc)
                rows.append([e.name, f"{len(cands)} valid, {rej} rejected by constraint", sname,
                             _sizes_text(sizing.sizes(e, settings.quick, dev))])
            else:
                vals = tuner.sweep_values(e)
                rows.append([e.name, f"{' vs '.join(e.versions)} at {list(vals)}", "sweep", "-"])
        print(_table(rows, ["entry", "candidates", "search", "workloads"]))
        return 0

    cache = MeasurementCache(args.cache or cache_path(dev))
    if args.fresh:
        for e in entries:
            cache.drop_entry(e.name)
    elif len(cache):
        print(f"clts-tune: resuming: {len(cache)} measured candidate(s) in {cache.path}",
              file=sys.stderr)
    tuner.cache = cache
    if args.verbose:
        tuner.on_measure = lambda name, c: print(
            f"  {name} {c.label}: " + (f"{_fmt_s(c.score)}" + ("" if c.stable else " unstable")
                                       + (" (cached)" if c.cached else "")
                                       if c.ok else f"WRONG {c.error}"), file=sys.stderr)
    import copy
    saved = copy.deepcopy(dev.profile.values), dict(dev.profile.sources)
    try:
        with _interrupts_as_keyboard_interrupt():
            results = tuner.run(entries, budget_s=args.budget)
    except KeyboardInterrupt as exc:
        how = f" by {exc.args[0]}" if exc.args else ""
        print(f"\nclts-tune: interrupted{how}; measurements so far are kept in {cache.path}; "
              "run the same command again to resume", file=sys.stderr)
        return 130
    finally:          # the tuned values were applied in memory while tuning; undo that
        dev.profile.values, dev.profile.sources = saved
    print(summary(results))
    if not any(r.values for r in results):
        print("clts-tune: nothing was measured successfully, so no profile was written "
              "(see the table above; -v prints every measurement)", file=sys.stderr)
        return 1
    try:
        path = write_profile(dev, results, settings, out, budget=args.budget)
    except (ProfileError, ValueError) as exc:
        print(f"clts-tune: not written: {exc}\nThe measurements are kept in {cache.path}: "
              "fix the file or pass -o, and run the same command again.", file=sys.stderr)
        return 2
    for e in entries:
        cache.drop_entry(e.name)
    for r in results:
        for w in r.warnings:
            print(f"warning: {r.name}: {w}", file=sys.stderr)
    print(f"clts-tune: wrote {path}", file=sys.stderr)
    if not args.no_warmup:
        with _written_profile(args):
            _warm(dev)
        dev.reload_profile()
    return 0


def _warm(dev) -> None:
    """Build the common calls' kernels with the profile just written (``clts warmup``): the
    next process's first calls find them in the driver's disk cache."""
    from ..warmup import warmup
    dev.reload_profile()
    if getattr(dev.info, "simulator", False):     # Oclgrind keeps no binaries
        return
    print("clts-tune: building the common calls' kernels with the tuned profile "
          "(--no-warmup skips this)", file=sys.stderr)
    t = warmup(dev, verbose=False)
    print(f"clts-tune: {t['programs built']} programs built in {t['total']:.1f} s",
          file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
