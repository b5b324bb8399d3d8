"""Device profiles: schema check on load, lookup order, matching, fallback, provenance."""
import logging
import uuid

import pytest
import yaml

import clts
from clts.errors import ProfileError
from clts.runtime import devices as devmod
from clts.runtime import profiles


def _info(name="Test GPU 9000", vendor="Acme Corp", typ="gpu", driver="3.1.4", platform="Acme CL"):
    return devmod.DeviceInfo(0, 0, 0, platform, name, vendor, typ, driver, "OpenCL 3.0",
                             frozenset(), 8, 65536, 256, 2**30, 2**32, True, "")


def _write(path, data):
    path.write_text(yaml.safe_dump(data))
    return path


def _some_leaf():
    """A (dotted key, value) that the shipped schema defines, if any algorithm added one."""
    flat = profiles.Profile(profiles.schema(), {}, [], 1).flat()
    return next(iter(flat.items()), (None, None))


def test_shipped_profiles_are_valid():
    files = sorted(profiles.shipped_dir().glob("*.yaml"))
    assert {f.name for f in files} >= {"generic-gpu.yaml", "generic-cpu.yaml",
                                       "generic-accelerator.yaml"}
    for f in files:
        profiles.load(f)


def test_unknown_key_is_an_error_naming_file_and_key(tmp_path):
    p = _write(tmp_path / "bad.yaml", {"schema": 1, "device": {"type": "gpu"},
                                       "no_such_algorithm": {"x": 1}})
    with pytest.raises(ProfileError, match=r"bad\.yaml.*'no_such_algorithm'"):
        profiles.load(p)
    p = _write(tmp_path / "bad2.yaml", {"schema": 1, "device": {"type": "gpu", "colour": "red"}})
    with pytest.raises(ProfileError, match=r"bad2\.yaml.*'device\.colour'"):
        profiles.load(p)



def test_renamed_key_names_its_new_name(tmp_path):
    """A key renamed when its meaning changed is an error naming the new key (its recorded
    value means something else, so it is not carried over)."""
    p = _write(tmp_path / "old.yaml", {"schema": 1, "device": {"type": "cpu"},
                                       "tridiag": {"coalesced": {"prefetch": 4}}})
    with pytest.raises(ProfileError, match=r"old\.yaml.*'tridiag\.coalesced\.prefetch' was "
                                           r"renamed 'tridiag\.coalesced\.prefetch_items'"):
        profiles.load(p)

def test_wrong_type_is_an_error(tmp_path):
    key, value = _some_leaf()
    if key is None:
        pytest.skip("no algorithm section in the schema yet")
    data = {"schema": 1, "device": {"type": "gpu"}}
    node = data
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = {"a": "mapping"} if not isinstance(value, dict) else 1
    p = _write(tmp_path / "typed.yaml", data)
    with pytest.raises(ProfileError, match=rf"typed\.yaml.*'{key}' must be"):
        profiles.load(p)


def test_schema_version_and_device_type_checked(tmp_path):
    with pytest.raises(ProfileError, match="schema"):
        profiles.load(_write(tmp_path / "a.yaml", {"schema": 7, "device": {"type": "gpu"}}))
    with pytest.raises(ProfileError, match="device.type"):
        profiles.load(_write(tmp_path / "b.yaml", {"schema": 1, "device": {"type": "fpga"}}))
    (tmp_path / "c.yaml").write_text("schema: 1\ndevice: [unclosed\n")
    with pytest.raises(ProfileError, match="not valid YAML"):
        profiles.load(tmp_path / "c.yaml")


def test_matching_levels_and_driver_ranges():
    info = _info()
    assert profiles.match_level({"type": "gpu"}, info) == 1
    assert profiles.match_level({"type": "cpu"}, info) is None
    assert profiles.match_level({"type": "gpu", "vendor": "acme"}, info) == 2
    assert profiles.match_level({"type": "gpu", "vendor": "Other"}, info) is None
    assert profiles.match_level({"type": "gpu", "name": "Test GPU 9000"}, info) == 3
    assert profiles.match_level({"type": "gpu", "name": "Test GPU"}, info) is None
    assert profiles.match_level({"type": "gpu", "name_regex": r"GPU \d+"}, info) == 3
    assert profiles.match_level({"type": "gpu", "name": "Test GPU 9000",
                                 "driver_min": "3.0", "driver_max": "3.2"}, info) == 3
    assert profiles.match_level({"type": "gpu", "name": "Test GPU 9000",
                                 "driver_min": "3.2"}, info) is None
    assert profiles.match_level({"type": "gpu", "name": "Test GPU 9000",
                                 "driver_max": "3.1.4"}, info) is None


def test_fallback_order_sources_and_one_warning(tmp_path, monkeypatch, caplog):
    key, value = _some_leaf()
    generic = {"schema": 1, "device": {"type": "gpu"}}
    vendor = {"schema": 1, "device": {"type": "gpu", "vendor": "Acme"}}
    own = {"schema": 1, "device": {"type": "gpu", "name": "Test GPU 9000"}}
    d_user, d_env = tmp_path / "user", tmp_path / "env"
    d_user.mkdir(), d_env.mkdir()
    _write(d_env / "vendor.yaml", vendor)
    clts.set_options(profile_path=str(d_env))
    monkeypatch.setattr(profiles, "user_dir", lambda: d_user)
    info = _info()
    info.name = f"Unseen GPU {uuid.uuid4().hex}"     # a new fingerprint: not warned about yet
    with caplog.at_level(logging.WARNING, logger="clts.profiles"):
        p = profiles.effective_profile(info)
        profiles.effective_profile(info)
    assert p.level == 2 and [f.name for f in p.files] == ["generic-gpu.yaml", "vendor.yaml"]
    warnings = [r for r in caplog.records if "clts-tune" in r.getMessage()]
    assert len(warnings) == 1
    info.name = "Test GPU 9000"
    if key is not None and not isinstance(value, dict) and isinstance(value, (int, float)):
        node = own
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value + 1
    _write(d_user / "own.yaml", own)
    p = profiles.effective_profile(info)
    assert p.level == 3 and p.files[-1].name == "own.yaml"
    if key is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        assert p.get(key) == value + 1 and p.source_of(key).endswith("own.yaml")
    # CLTS_PROFILE_PATH comes before the user directory
    _write(d_env / "own-env.yaml", own)
    assert profiles.effective_profile(info).files[-1].name == "own-env.yaml"
    del generic


def test_save_is_validated_and_atomic(tmp_path):
    good = {"schema": 1, "device": {"type": "cpu", "name": "x"}, "provenance": {"source": "t"}}
    path = profiles.save(good, tmp_path / "sub" / "x.yaml")
    assert profiles.load(path)["device"]["name"] == "x"
    with pytest.raises(ProfileError):
        profiles.save({**good, "bogus": 1}, tmp_path / "y.yaml")
    assert not (tmp_path / "y.yaml").exists()
    assert not list(tmp_path.glob("**/.*.tmp*"))


def test_every_working_device_has_an_effective_profile(device):
    p = device.profile
    assert p.level in (1, 2, 3)
    assert p.files[0].name == f"generic-{device.type}.yaml"


def test_missing_profile_path_entry_is_reported_once(tmp_path, caplog):
    """A CLTS_PROFILE_PATH entry that does not exist (a typo) is logged once, not silent."""
    gone = tmp_path / f"no-such-{uuid.uuid4().hex}"
    with clts.set_options(profile_path=[str(gone), str(tmp_path)]):
        with caplog.at_level(logging.WARNING, logger="clts.profiles"):
            profiles.search_path()
            profiles.search_path()
    said = [r.getMessage() for r in caplog.records if str(gone) in r.getMessage()]
    assert len(said) == 1 and "does not exist" in said[0]
    assert not any(str(tmp_path) + " does" in r.getMessage() for r in caplog.records)
