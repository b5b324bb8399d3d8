"""clts.set_options / get_options: global and per-thread ``with`` blocks, the environment as the
defaults (read once, at import), one way to read a boolean, and no other reader of os.environ."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import clts
from clts import options

ROOT = Path(__file__).resolve().parents[1]


def test_with_block_is_thread_local():
    inside, checked = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with clts.set_options(max_chunk=3, pipeline=False):
            seen["inside"] = clts.get_options()
            inside.set()
            checked.wait(10)
        seen["after"] = clts.get_options()

    t = threading.Thread(target=worker)
    t.start()
    assert inside.wait(10)
    other = clts.get_options()            # this thread, while the worker is in its block
    checked.set()
    t.join(10)
    assert seen["inside"]["max_chunk"] == 3 and seen["inside"]["pipeline"] is False
    assert other["max_chunk"] is None and other["pipeline"] is True
    assert seen["after"]["max_chunk"] is None and seen["after"]["pipeline"] is True


def test_with_block_never_touches_the_global_options():
    before = dict(options._global)
    with clts.set_options(max_chunk=5) as s, clts.set_options(progress=True):
        assert options._global == before
        assert clts.get_options()["max_chunk"] == 5
        with clts.set_options(max_chunk=2):          # nested: innermost wins, then unwinds
            assert clts.get_options()["max_chunk"] == 2
        assert clts.get_options()["max_chunk"] == 5
    assert isinstance(s, clts.set_options)
    assert options._global == before and clts.get_options()["max_chunk"] is None


def test_global_setting_reaches_every_thread():
    clts.set_options(max_chunk=9)
    got = []
    t = threading.Thread(target=lambda: got.append(clts.get_options()["max_chunk"]))
    t.start()
    t.join(10)
    assert got == [9] and clts.get_options()["max_chunk"] == 9
    with clts.set_options(max_chunk=4):       # a block over a global value, then back to it
        assert clts.get_options()["max_chunk"] == 4
    assert clts.get_options()["max_chunk"] == 9


def test_set_then_used_as_context_manager_restores():
    s = clts.set_options(max_chunk=6)
    assert options._global["max_chunk"] == 6
    with s:
        pass
    assert options._global["max_chunk"] is None


def test_bad_values_name_the_option():
    before = clts.get_options()
    with pytest.raises(ValueError, match="no_such_option"):
        clts.set_options(no_such_option=1)
    with pytest.raises(ValueError, match="max_chunk"):
        clts.set_options(max_chunk=-1)
    with pytest.raises(ValueError, match="max_chunk"):
        clts.set_options(max_chunk=True)
    with pytest.raises(TypeError, match="progress"):
        clts.set_options(progress=2.5)
    with pytest.raises(ValueError, match="zero_copy"):
        clts.set_options(zero_copy="maybe")
    with pytest.raises(TypeError, match="device"):
        clts.set_options(device=[0])
    assert clts.get_options() == before           # nothing half-set


@pytest.mark.parametrize("text,value", [(t, True) for t in ("1", "true", "TRUE", "Yes", "on",
                                                            " On ")]
                         + [(t, False) for t in ("0", "false", "False", "NO", "off")])
def test_boolean_parsing(text, value):
    assert options.parse_bool(text, "X") is value
    assert options.from_environ({"CLTS_ZERO_COPY": text}) == {"zero_copy": value}
    assert options.from_environ({"CLTS_NO_PROGRESS": text}) == {"progress": not value}
    assert options.from_environ({"CLTS_MP_RECORD_RUNS": text}) == {"mp_record_runs": value}


@pytest.mark.parametrize("text", ["2", "y", "enable", "-1", "tru"])
def test_bad_boolean_names_the_variable(text):
    with pytest.raises(ValueError, match="CLTS_PIPELINE"):
        options.from_environ({"CLTS_PIPELINE": text})
    with pytest.warns(RuntimeWarning, match="CLTS_PIPELINE"):
        assert options.from_environ({"CLTS_PIPELINE": text}, strict=False) == {}


def test_every_variable_maps_to_an_option():
    env = {"CLTS_DEVICE": "pocl", "CLTS_EMULATE": "mi100", "CLTS_NO_PROGRESS": "1",
           "CLTS_MAX_CHUNK": "12", "CLTS_ZERO_COPY": "off", "CLTS_PIPELINE": "no",
           "CLTS_STAGING": "pinned", "CLTS_COPY_THREADS": "3", "CLTS_DUMP_SOURCES": "/tmp/x", "CLTS_PROFILE_PATH": os.pathsep.join(["/a", "/b"]),
           "CLTS_MP_RECORD_RUNS": "yes", "CLTS_CLANG": "clang-17", "CLTS_LIBCLC": "/opt/clc",
           "CLTS_COMPILE_TIMEOUT": "60", "CLTS_GPU_TOOLCHAIN": "/opt/tc", "CLTS_PTXAS": "/p",
           "CLTS_PTXAS_SHIM": "/s.bc", "CLTS_OCLOC": "/o", "CLTS_OCLOC_LIBS": "/l",
           "CLTS_GPU_GATE_CALLS": "mp,tke", "CLTS_EMPTY": "", "CLTS_DEVICE_UNRELATED": "x"}
    assert options.from_environ(env) == {
        "device": "pocl", "emulate": "mi100", "progress": False, "max_chunk": 12,
        "zero_copy": False, "pipeline": False, "staging": "pinned", "copy_threads": 3, "dump_sources": "/tmp/x",
        "profile_path": ("/a", "/b"), "mp_record_runs": True, "clang": "clang-17",
        "libclc": "/opt/clc", "compile_timeout": 60, "gpu_toolchain": "/opt/tc", "ptxas": "/p",
        "ptxas_shim": "/s.bc", "ocloc": "/o", "ocloc_libs": "/l", "gpu_gate_calls": "mp,tke"}
    assert set(options.from_environ(env)) == set(options.OPTIONS)
    assert options.from_environ({"CLTS_MAX_CHUNK": " ", "CLTS_DEVICE": ""}) == {}


def _options_in_child(env):
    code = "import json, clts; print(json.dumps(clts.get_options()))"
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True,
                         text=True, env={**_base_env(), **env}, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def _base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLTS_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_environment_gives_the_defaults_at_import():
    got, _ = _options_in_child({"CLTS_MAX_CHUNK": "5", "CLTS_NO_PROGRESS": "true",
                                "CLTS_PIPELINE": "Off"})
    assert got["max_chunk"] == 5 and got["progress"] is False and got["pipeline"] is False
    assert got["zero_copy"] is True
    got, err = _options_in_child({"CLTS_ZERO_COPY": "sometimes", "CLTS_MAX_CHUNK": "0"})
    assert got["zero_copy"] is True and got["max_chunk"] is None      # defaults kept
    assert "CLTS_ZERO_COPY" in err and "CLTS_MAX_CHUNK" in err        # and both reported


def test_environment_is_read_once():
    saved = os.environ.get("CLTS_MAX_CHUNK")
    os.environ["CLTS_MAX_CHUNK"] = "2"
    try:
        assert clts.get_options()["max_chunk"] is None
    finally:
        if saved is None:
            del os.environ["CLTS_MAX_CHUNK"]
        else:
            os.environ["CLTS_MAX_CHUNK"] = saved


def test_only_the_options_module_and_the_loader_read_the_environment():
    readers = set()
    for path in (ROOT / "clts").rglob("*.py"):
        if re.search(r"os\.environ|os\.getenv|putenv", path.read_text(encoding="utf-8")):
            readers.add(path.relative_to(ROOT).as_posix())
    assert readers == {"clts/options.py", "clts/runtime/icd.py"}


def test_docs_list_every_option():
    text = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    for o in options.OPTIONS.values():
        assert f"`{o.name}`" in text and f"`{o.env}`" in text, o.name
