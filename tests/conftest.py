"""Test set-up: every test that takes ``device`` runs on every working OpenCL device.

``pytest --oclgrind`` runs only the tests marked ``oclgrind`` (tiny cases), on the Oclgrind
simulator, with data-race, uninitialised-read and out-of-bounds checks on; any report fails the
test. ``CLTS_TEST_DEVICES`` (comma-separated substrings) narrows the device list;
``CLTS_TEST_DEVICE_TESTS_ONLY=1`` keeps only the tests that take the ``device`` fixture;
``CLTS_TEST_HOST_TESTS_ONLY=1`` only the others, once (to split a run by hand: scripts/test.sh
spreads the files over pytest-xdist workers instead).
"""
from __future__ import annotations

import os
import re

import pytest

OCLGRIND_REPORT = re.compile(
    r"(Invalid (read|write)|Data race|Uninitiali[sz]ed|out of bounds|Work-group divergence|"
    r"barrier divergence|Invalid (memory|access))", re.I)


def pytest_addoption(parser):
    parser.addoption("--oclgrind", action="store_true",
                     help="run the oclgrind-marked kernel cases on the Oclgrind simulator")


#: templates built during an --oclgrind run (reported at the end)
BUILT_TEMPLATES: set = set()


def pytest_configure(config):
    if config.getoption("--oclgrind"):
        from clts.runtime import programs
        real_render = programs.render

        def recording_render(template, params):      # every build renders its template once
            BUILT_TEMPLATES.add(template)
            return real_render(template, params)
        programs.render = recording_render
        os.environ["CLTS_OCLGRIND"] = "1"
        os.environ.setdefault("OCLGRIND_DATA_RACES", "1")
        os.environ.setdefault("OCLGRIND_UNINITIALIZED", "1")
        os.environ.pop("OCL_ICD_VENDORS", None)
    import clts
    clts.set_options(progress=False)


@pytest.fixture(autouse=True)
def _restore_options():
    """A test may call ``clts.set_options(...)``: the global options are restored after it.
    Deprecated aliases warn again in each test (they warn once per process)."""
    from clts import options as opts, vocabulary
    vocabulary.reset_warned()
    saved = dict(opts._global)
    yield
    with opts._lock:
        opts._global.clear()
        opts._global.update(saved)


@pytest.fixture(autouse=True)
def _close_figures():
    """The figures a test's ``plot()`` opened are closed after it (pyplot keeps them, and an
    xdist worker that runs many plotting tests warned past 20 open figures)."""
    import sys
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


def _test_devices(config):
    from clts.runtime import usable
    infos = usable()
    if config.getoption("--oclgrind"):
        infos = [i for i in infos if i.simulator]
    else:
        infos = [i for i in infos if not i.simulator]
    want = os.environ.get("CLTS_TEST_DEVICES")
    if want:
        subs = [w.strip().lower() for w in want.split(",") if w.strip()]
        infos = [i for i in infos if any(s in (i.name + i.platform + i.slug).lower()
                                         for s in subs)]
    return infos


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        infos = _test_devices(metafunc.config)
        if not infos:
            raise pytest.UsageError("no working OpenCL device to test on (see `clts devices`)")
        if metafunc.definition.get_closest_marker("gpu_layout") and len(infos) > 1:
            # a GPU profile's layout or tiles forced on a CPU driver: what it checks is the
            # indexing (bit-identical to the CPU path), which one CPU compiler shows; no user
            # runs these builds on a CPU, so the second driver would compile them for nothing.
            # The vendors' own compilers check them in the GPU resource gate, Oclgrind runs the
            # tiny cases (CONTRIBUTING, "Tests")
            # Intel's CPU runtime where it works: it compiled the marked tests in 163 s of
            # CPU from a cold cache, pocl in 202 s
            intel = [i for i in infos if i.platform.lower().startswith("intel(r) opencl")
                     and i.type == "cpu"]
            infos = intel[:1] or infos[:1]
        metafunc.parametrize("device_info", infos, ids=[i.slug for i in infos], scope="session")


@pytest.fixture
def device(device_info, request):
    """The device; under --oclgrind a fresh context per test (Oclgrind's shadow memory would
    otherwise carry state from one test's buffers into the next one's reports)."""
    from clts.runtime import devices, get_device
    if request.config.getoption("--oclgrind"):
        return devices.Device(device_info)
    return get_device(device_info)


@pytest.fixture
def replays(monkeypatch):
    """Counts the replays of recorded launches (``clts.runtime.replay``)."""
    from clts.runtime import replay
    count = [0]
    play = replay.Recording.replay

    def counted(self, slots):
        count[0] += 1
        return play(self, slots)
    monkeypatch.setattr(replay.Recording, "replay", counted)
    return count


@pytest.fixture
def any_device(request):
    """One device, the first test device, for tests of what wraps the kernels (files, commands,
    streaming): they run once, in the host-tests process (scripts/test.sh), not once per driver;
    the kernels they call are the ``device`` tests'."""
    from clts.runtime import get_device
    infos = _test_devices(request.config)
    if not infos:
        pytest.skip("no working OpenCL device")
    return get_device(infos[0])


def pytest_collection_modifyitems(config, items):
    device_only = bool(os.environ.get("CLTS_TEST_DEVICE_TESTS_ONLY"))
    host_only = bool(os.environ.get("CLTS_TEST_HOST_TESTS_ONLY"))
    if (device_only or host_only) and not config.getoption("--oclgrind"):
        # scripts/test.sh: one process per driver runs the tests that take the device fixture,
        # one more the rest once (on 2 cores the two halves of the first driver's old single
        # process overlap with each other and with the other drivers' runs)
        keep = [it for it in items
                if ("device" in getattr(it, "fixturenames", ())) == device_only]
        kept = set(map(id, keep))
        drop = [it for it in items if id(it) not in kept]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep
    if config.getoption("--oclgrind"):
        keep = [it for it in items if it.get_closest_marker("oclgrind")]
        drop = [it for it in items if not it.get_closest_marker("oclgrind")]
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(autouse=True)
def _oclgrind_reports(request):
    """Under --oclgrind, fail a test whose kernels made Oclgrind report anything."""
    check = request.config.getoption("--oclgrind") and not request.node.get_closest_marker(
        "oclgrind_selftest")
    capfd = request.getfixturevalue("capfd") if check else None
    yield
    if check:
        out, err = capfd.readouterr()
        text = out + err
        if OCLGRIND_REPORT.search(text):
            pytest.fail("Oclgrind reported a problem:\n" + text[-4000:])


def _tried_lines():
    """This process's lines of "what was tried": what the property, soak, fault and offline
    compile tests recorded, and the templates built under Oclgrind."""
    import sys
    lines = []
    props = sys.modules.get("test_properties") or sys.modules.get("tests.test_properties")
    if props is not None and getattr(props, "COUNTS", None):
        lines.append("hypothesis examples per function (all devices): " + ", ".join(
            f"{k} {v}" for k, v in sorted(props.COUNTS.items())))
    for name in ("test_faults", "test_soak", "test_offline_compile"):
        mod = sys.modules.get(name) or sys.modules.get("tests." + name)
        for line in getattr(mod, "REPORT", []) if mod is not None else []:
            lines.append(line)
    off = sys.modules.get("clts.tune.offline")
    if off is not None and (off.STATS or off.PHASES):
        lines.append(f"[offline compiles] {off.stats_line()}")
    if BUILT_TEMPLATES:
        lines.append(f"kernels built and run under Oclgrind in this process: "
                     f"{len(BUILT_TEMPLATES)} templates ({', '.join(sorted(BUILT_TEMPLATES))}); "
                     "the matrix-profile cases run in child processes")
    return lines


#: lines the pytest-xdist workers sent back (the controller prints them with its own)
_WORKER_LINES: list = []


def pytest_sessionfinish(session):
    """An xdist worker hands its "what was tried" lines to the controller."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["clts_tried"] = _tried_lines()


@pytest.hookimpl(optionalhook=True)         # pytest-xdist's hook (absent without it)
def pytest_testnodedown(node, error):
    """The controller keeps the lines of each xdist worker that finished."""
    _WORKER_LINES.extend(getattr(node, "workeroutput", {}).get("clts_tried", []))


def pytest_terminal_summary(terminalreporter):
    """What the property, soak and fault tests tried (their figures), at the end of a run."""
    lines = _tried_lines() + _WORKER_LINES
    if lines:
        terminalreporter.section("what was tried")
        for line in lines:
            terminalreporter.write_line(line)
