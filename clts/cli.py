"""The ``clts`` command: ``clts devices``, ``clts profile``, ``clts demo``."""
from __future__ import annotations

import argparse
import logging
import sys


def _gb(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} B"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def cmd_devices(args) -> int:
    from .runtime import devices, profiles
    infos = devices.discover(refresh=args.refresh)
    if not infos:
        print("no OpenCL platform found; on Debian: apt-get install pocl-opencl-icd")
        return 1
    default = devices.usable()[0].index if devices.usable() else None
    rows = []
    for i in infos:
        prof = "-"
        if i.ok:
            logging.getLogger("clts.profiles").disabled = True
            try:
                p = profiles.effective_profile(i)
                names = [f.name for f in p.files]
                prof = names[-1] + ("" if p.level == 3 else " (no tuned profile)")
            except Exception as exc:  # show, don't crash the listing
                prof = f"error: {exc}"
            finally:
                logging.getLogger("clts.profiles").disabled = False
        status = ("ok" + (" (default)" if i.index == default else "")) if i.ok else \
            f"UNUSABLE: {i.reason}"
        rows.append([str(i.index), i.platform, i.name, i.type, i.driver,
                     "yes" if i.fp64 else "no", _gb(i.local_mem),
                     _gb(i.max_alloc), _gb(i.global_mem), status, prof])
    print(_table(rows, ["#", "platform", "device", "type", "driver", "fp64", "local",
                        "max alloc", "global", "status", "profile"]))
    return 0


def cmd_profile(args) -> int:
    from .runtime import get_device
    dev = get_device(args.device)
    prof = dev.profile
    print(f"device: {dev.info.index}: {dev} [{dev.slug}, fingerprint {dev.fingerprint}]")
    print("files:  " + ", ".join(str(f) for f in prof.files))
    flat = prof.flat()
    if not flat:
        print("(no tunable values)")
        return 0
    rows = [[k, repr(v), prof.source_of(k)] for k, v in flat.items()]
    print(_table(rows, ["key", "value", "from"]))
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(args.device, quick=args.quick)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="clts", description=__doc__)
    ap.add_argument("-v", "--verbose", action="store_true", help="log probing and profile lookup")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("devices", help="list every OpenCL device, its status and its profile")
    p.add_argument("--refresh", action="store_true", help="probe again instead of using the cache")
    p.set_defaults(fn=cmd_devices)
    p = sub.add_parser("profile", help="print a device's effective profile and each value's file")
    p.add_argument("--device", "-d", default=None, help="index or name substring (clts devices)")
    p.set_defaults(fn=cmd_profile)
    p = sub.add_parser("demo", help="run every algorithm on synthetic data on a device")
    p.add_argument("--device", "-d", default=None)
    p.add_argument("--quick", action="store_true", help="smaller problem sizes")
    p.set_defaults(fn=cmd_demo)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(message)s")
    try:
        return args.fn(args)
    except Exception as exc:
        from .errors import CltsError
        if isinstance(exc, CltsError):
            print(f"clts: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
