"""The recorded GPU descriptions laid over this machine's pocl device: for the tests of what a
Plan chooses on each GPU (clts.runtime.emulation)."""
from __future__ import annotations

import logging


def gpus_over_pocl() -> dict:
    """{name: emulated device} for every recorded GPU description (clts/devices/emulated), each
    over the pocl device; {} where pocl is not usable here."""
    from clts.runtime import emulation
    from clts.runtime.devices import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        return {}
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return {name: emulation.emulate(name, hits[0]) for name in emulation.names()}
