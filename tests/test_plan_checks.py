"""The Plans' shared field checks (clts.runtime.plans: check_int, check_choice,
check_work_group): every Plan refuses a bool, a float or an out-of-range value of its integer
and choice fields with a PlanValueError naming the field, and a work-group beyond the device's."""
import dataclasses

import pytest

from clts.bfast import breakpoints_plan, plan as bfast_plan
from clts.mp import mass_plan, mstump_plan, plan as mp_plan, stream_plan
from clts.ocean import plan as ocean_plan
from clts.runtime.plans import PlanValueError, check_choice, check_int, check_work_group


@dataclasses.dataclass(frozen=True)
class _P:
    a: object = 1
    b: object = "x"


class _Dev:
    max_work_group = 256


@pytest.mark.parametrize("value, lo, hi, ok", [(1, 1, None, True), (0, 1, None, False),
                                               (0, 0, 1, True), (2, 0, 1, False),
                                               (True, 0, 1, False), (1.0, 1, None, False),
                                               ("1", 1, None, False)])
def test_check_int(value, lo, hi, ok):
    p = _P(a=value)
    if ok:
        check_int(p, "a", lo=lo, hi=hi)
    else:
        with pytest.raises(PlanValueError, match=r"^a must be an integer") as e:
            check_int(p, "a", lo=lo, hi=hi, note=" (0: none)")
        assert e.value.name == "a"


def test_check_choice_and_work_group():
    check_choice(_P(b="x"), "b", ("x", "y"))
    check_choice(_P(a=1), "a", (0, 1))
    for bad in (True, "z", None):
        with pytest.raises(PlanValueError, match=r"^a must be one of \(0, 1\)"):
            check_choice(_P(a=bad), "a", (0, 1))
    check_work_group(_P(a=256), _Dev(), "a")
    check_work_group(_P(a=10 ** 6), None, "a")          # no device: no limit to check
    with pytest.raises(PlanValueError, match=r"^a must be <= 256 \(the device's largest"):
        check_work_group(_P(a=257), _Dev(), "a")


def _plans(device):
    """(Plan made for ``device``, its integer fields, its choice fields, its work-group fields)."""
    yield (mp_plan.make_plan(device, mp_plan.Problem(m=32, precision="single")),
           ("tile", "segment", "wg", "block_rows", "unroll", "groups_per_cu", "interleave"),
           ("lanes", "store", "topk_store", "keep", "merge", "precision"), ("wg",))
    yield (mstump_plan.make_mstump_plan(device, mstump_plan.Problem(precision="single")),
           ("groups", "segment", "wg", "interleave"), ("lanes", "coop", "precision"), ("wg",))
    yield (mass_plan.make_mass_plan(device, mass_plan.Problem(precision="single")),
           ("chains", "wg"), ("lanes", "precision"), ("wg",))
    yield stream_plan.make_stream_plan(device, stream_plan.Problem()), \
        ("host_points", "lazy_points"), (), ()
    yield (bfast_plan.make_plan(device, bfast_plan.Problem(n_hist=64, K=4)),
           ("chunk_bytes", "wg", "roc_wg"), ("lanes", "scratch", "matrix", "bounds"),
           ("wg", "roc_wg"))
    yield (breakpoints_plan.make_plan(device, breakpoints_plan.Problem(length=100, regressors=2)),
           ("chunk_bytes", "split", "scan"), ("lanes", "grf", "fit_grf"), ("wg", "dp_wg"))
    oc = ocean_plan.Problem(itemsize=4)
    yield ocean_plan.make_tke_plan(device, oc), ("wg", "tile"), \
        ("lanes", "advection", "stream", "transfer"), ("wg",)


def test_every_plan_refuses_bad_fields(device):
    for plan, ints, choices, groups in _plans(device):
        plan.validate(device)
        for name in ints + choices:
            for bad in (True, 1.5, -7, "x"):
                if bad == -7 and name in choices and isinstance(getattr(plan, name), str):
                    continue
                with pytest.raises(PlanValueError) as e:
                    dataclasses.replace(plan, **{name: bad}).validate(device)
                assert e.value.name == name, (type(plan).__name__, name, bad, e.value)
        for name in groups:
            with pytest.raises(PlanValueError, match="largest work-group") as e:
                dataclasses.replace(plan, **{name: device.max_work_group * 2}).validate(device)
            assert e.value.name == name
