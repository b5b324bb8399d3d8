"""version="auto"'s fused lanes under the profile's ``bfast.fused.max_lanes_k``: lanes 1 above
that many regressors, the profile's lanes up to it, lanes a caller gives kept. Plans only: no
kernel is built (the wide builds this rule avoids take minutes on Intel's CPU runtime)."""
from __future__ import annotations

import copy
import types

import pytest

from clts.bfast.plan import Problem, capped_lanes, make_plan
from clts.errors import ProfileError
from clts.runtime.profiles import Profile


def _fake(device, max_lanes_k, lanes=16):
    values = copy.deepcopy(device.profile.values)
    values["bfast"]["fused"].update(lanes=lanes, wg=4, max_lanes_k=max_lanes_k)
    values["bfast"]["auto"]["multi_min_n"] = 1 << 30          # auto: always fused
    return types.SimpleNamespace(profile=Profile(values, {}, [], 0), max_work_group=1024)


def test_capped_lanes():
    assert capped_lanes(16, 18, 12) == 1
    assert capped_lanes(16, 12, 12) == 16
    assert capped_lanes(8, 18, 0) == 8                         # 0: no cap
    for bad in (-1, 1.5, True, "12"):
        with pytest.raises(ProfileError, match="max_lanes_k"):
            capped_lanes(16, 18, bad)


def test_auto_lanes_by_k(device):
    fake = _fake(device, 12)
    for k, lanes in ((1, 16), (3, 16), (5, 16), (8, 1)):      # K = 2k + 2: 4, 8, 12, 18
        K = 2 * k + 2
        plan = make_plan(fake, Problem(100, K))
        assert (plan.version, plan.lanes) == ("fused", lanes), K
        assert make_plan(fake, Problem(100, K), lanes=8).lanes == 8    # forced: kept
        assert make_plan(fake, Problem(100, K), version="fused", lanes=4).lanes == 4
    assert make_plan(_fake(device, 0), Problem(100, 18)).lanes == 16   # no cap
    multi = make_plan(fake, Problem(100, 18), version="multi")        # multi: not capped
    assert multi.lanes == fake.profile.get("bfast.multi.lanes")
