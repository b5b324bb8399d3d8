"""The shipped GPU profiles (published figures): each parses and validates, says where its
figures come from, matches its recorded device description by name, and its values fit that
device's limits (the algorithms' runs under each emulated GPU are in test_emulation.py)."""
from __future__ import annotations

import logging

import pytest

from clts.runtime import emulation, profiles

#: shipped profile -> the recorded description of the device it is for
PROFILES = {"nvidia-a100.yaml": "a100", "amd-mi100.yaml": "mi100",
            "intel-gpu-max.yaml": "intel-max-1550", "intel-gpu-iris-xe.yaml": "intel-iris-xe",
            "nvidia-h100.yaml": "h100", "amd-mi200.yaml": "mi210",
            "intel-gpu-arc.yaml": "intel-arc-a770"}


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation runs on pocl; no pocl device here")
    return hits[0]


@pytest.mark.parametrize("fname", sorted(PROFILES))
def test_parses_cites_and_matches_by_name(fname):
    path = profiles.shipped_dir() / fname
    data = profiles.load(path)
    prov = data["provenance"]
    assert prov["source"] == "published" and prov["reference"]
    info = emulation.emulate(PROFILES[fname], _pocl()).info
    assert profiles.match_level(data["device"], info) == 3
    # and no other description matches it
    for other in set(PROFILES.values()) - {PROFILES[fname]}:
        assert profiles.match_level(data["device"],
                                    emulation.emulate(other, _pocl()).info) is None


@pytest.mark.parametrize("fname", sorted(PROFILES))
def test_values_fit_the_device(fname):
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    dev = emulation.emulate(PROFILES[fname], _pocl())
    prof = dev.profile
    assert prof.level == 3 and prof.files[-1].name == fname
    flat = prof.flat()
    for key, value in flat.items():
        if key.endswith(".wg"):
            assert value <= dev.max_work_group, key
    assert prof.get("stl.loess.intragroup_max_q") <= dev.max_work_group
    assert 8 * prof.get("stl.intragroup.wg") * 8 <= dev.local_mem - 1024
    assert prof.get("mp.diag.store") == "local" and prof.get("mp.diag.topk_store") == "local"


def test_paper_thresholds():
    """The STL paper's jump thresholds (16 on the A100, 5 on the MI100) decide ``auto``."""
    from clts.stl.plan import choose, read_choices
    a100 = read_choices(emulation.emulate("a100", _pocl()), None)
    mi100 = read_choices(emulation.emulate("mi100", _pocl()), None)
    # jump 8, q 129, plenty of fits: outer-parallel on the A100, intra-group on the MI100
    assert choose(a100, 10**5, 129, 8, 1000).version == "outer"
    assert choose(mi100, 10**5, 129, 8, 1000).version == "intragroup"
    # q beyond the MI100's 256 work-items: flat there, intra-group on the A100
    assert choose(mi100, 10**5, 513, 32, 1000).version == "flat"
    assert choose(a100, 10**5, 513, 32, 1000).version == "intragroup"


def test_float32_default_without_fp64():
    import numpy as np
    import clts
    iris = emulation.emulate("intel-iris-xe", _pocl())
    r = clts.matrix_profile(np.cumsum(np.random.default_rng(0).standard_normal(120)), 8,
                            device=iris)
    assert r.plan.precision == "single"
