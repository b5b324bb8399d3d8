"""Device profiles: load, check, match, merge and save the YAML files of ``devices/``.

Search path, first hit wins at each level: the ``profile_path`` option (``$CLTS_PROFILE_PATH``:
directories or files, ``os.pathsep``-separated), the user config directory (where ``clts-tune`` writes), the shipped
``devices/``. The generic ``generic-<type>.yaml`` files are the schema: every key a profile may
set exists there with its type. A device's effective profile merges type default <- vendor+type
default <- the device's own file; each value remembers the file it came from.
"""
from __future__ import annotations

import contextlib
import copy
import logging
import os
import re
from pathlib import Path

import yaml

from .. import options
from ..errors import ProfileError

log = logging.getLogger("clts.profiles")
SCHEMA_VERSION = 1
TYPES = ("gpu", "cpu", "accelerator")
DEVICE_KEYS = {"vendor": str, "name": str, "name_regex": str, "type": str, "platform": str,
               "driver_min": str, "driver_max": str}
META_KEYS = ("schema", "device", "provenance")


def shipped_dir() -> Path:
    try:
        from importlib.resources import files
        return Path(str(files("clts.devices")))
    except (ImportError, ModuleNotFoundError, TypeError):
        return Path(__file__).resolve().parents[1] / "devices"


def user_dir() -> Path:
    return Path(options.user_config_dir()) / "clts" / "devices"


_missing_warned: set = set()


def search_path() -> list[Path]:
    paths = [Path(p) for p in options.get("profile_path")]
    for p in paths:
        if not p.exists() and str(p) not in _missing_warned:    # a typo would go unnoticed
            _missing_warned.add(str(p))
            log.warning("profile_path (CLTS_PROFILE_PATH): %s does not exist; the profiles "
                        "are looked up in the others", p)
    return paths + [user_dir(), shipped_dir()]


def _yaml_files(paths) -> list[Path]:
    out = []
    for p in paths:
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(p.glob("*.yaml")))
    return out


# -- schema ------------------------------------------------------------------------------------
_schema_cache = None


def schema() -> dict:
    """Union of the shipped generic defaults: the tree of allowed keys and their values (one
    dict per process, the same object every call: tests add sections with
    ``monkeypatch.setitem(profiles.schema(), ...)``)."""
    global _schema_cache
    if _schema_cache is None:
        merged: dict = {}
        for t in TYPES:
            path = shipped_dir() / f"generic-{t}.yaml"
            data = _read(path)
            _check_meta(data, path)
            _deep_merge(merged, {k: v for k, v in data.items() if k not in META_KEYS})
        _schema_cache = merged
    return _schema_cache


#: libyaml's loader where PyYAML has it: the same data, faster (it was most of a first call's
#: start-up with the pure-Python one)
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read(path: Path) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.load(f, Loader=_Loader)
    except UnicodeDecodeError:
        raise ProfileError(f"{path}: not a text file (a profile is UTF-8 YAML)") from None
    except yaml.YAMLError as exc:
        raise ProfileError(f"{path}: not valid YAML: {exc}") from None
    except OSError as exc:
        raise ProfileError(f"{path}: cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: a profile must be a mapping at top level")
    return data


def _type_ok(value, ref) -> bool:
    if isinstance(ref, bool):
        return isinstance(value, bool)
    if isinstance(ref, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(ref, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(ref, str):
        return isinstance(value, str)
    if isinstance(ref, list):
        return isinstance(value, list)
    if isinstance(ref, dict):
        return isinstance(value, dict)
    return ref is None or type(value) is type(ref)


#: keys renamed because their meaning changed (old -> new): a value recorded under the old
#: name is not carried over; the new key needs re-tuning (docs/tuning.md)
RENAMED_KEYS = {"tridiag.thomas.prefetch": "tridiag.thomas.prefetch_items",
                "tridiag.coalesced.prefetch": "tridiag.coalesced.prefetch_items"}


def _check_tree(data: dict, ref: dict, path: Path, prefix: str) -> None:
    for key, value in data.items():
        full = f"{prefix}{key}"
        if full in RENAMED_KEYS:
            raise ProfileError(f"{path}: key {full!r} was renamed {RENAMED_KEYS[full]!r} when "
                               f"its meaning changed; remove it and re-run clts-tune for the "
                               f"new key")
        if key not in ref:
            raise ProfileError(f"{path}: unknown key {full!r} (allowed here: "
                               f"{', '.join(sorted(map(str, ref))) or 'none'})")
        if not _type_ok(value, ref[key]):
            raise ProfileError(f"{path}: key {full!r} must be {type(ref[key]).__name__}, "
                               f"got {value!r}")
        if isinstance(value, dict):
            _check_tree(value, ref[key], path, full + ".")


def _check_meta(data: dict, path: Path) -> None:
    if data.get("schema") != SCHEMA_VERSION:
        raise ProfileError(f"{path}: key 'schema' must be {SCHEMA_VERSION}, "
                           f"got {data.get('schema')!r}")
    dev = data.get("device")
    if not isinstance(dev, dict):
        raise ProfileError(f"{path}: key 'device' must be a mapping")
    for k, v in dev.items():
        if k not in DEVICE_KEYS:
            raise ProfileError(f"{path}: unknown key 'device.{k}' (allowed: "
                               f"{', '.join(DEVICE_KEYS)})")
        if not isinstance(v, str):
            raise ProfileError(f"{path}: key 'device.{k}' must be str, got {v!r}")
    if dev.get("type") not in TYPES:
        raise ProfileError(f"{path}: key 'device.type' must be one of {TYPES}")
    if "name_regex" in dev:
        try:
            re.compile(dev["name_regex"])
        except re.error as exc:
            raise ProfileError(f"{path}: key 'device.name_regex' is not a regex: {exc}") from None
    prov = data.get("provenance", {})
    if not isinstance(prov, dict):
        raise ProfileError(f"{path}: key 'provenance' must be a mapping")


def validate(data: dict, path="<profile>") -> dict:
    """Check a profile mapping; raise ProfileError naming file and key on any problem."""
    path = Path(str(path))
    _check_meta(data, path)
    body = {k: v for k, v in data.items() if k not in META_KEYS}
    _check_tree(body, schema(), path, "")
    return data


def load(path) -> dict:
    path = Path(path)
    return validate(_read(path), path)


# -- matching ----------------------------------------------------------------------------------
def _version_tuple(s: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", s or ""))


def match_level(dev_spec: dict, info) -> int | None:
    """3 = this device, 2 = vendor + type default, 1 = type default, None = no match."""
    if dev_spec.get("type") != info.type:
        return None
    if "vendor" in dev_spec and dev_spec["vendor"].lower() not in info.vendor.lower():
        return None
    if "platform" in dev_spec and dev_spec["platform"].lower() not in info.platform.lower():
        return None
    v = _version_tuple(info.driver)
    if "driver_min" in dev_spec and v < _version_tuple(dev_spec["driver_min"]):
        return None
    if "driver_max" in dev_spec and v >= _version_tuple(dev_spec["driver_max"]):
        return None
    if "name" in dev_spec:
        return 3 if dev_spec["name"] == info.name else None
    if "name_regex" in dev_spec:
        return 3 if re.search(dev_spec["name_regex"], info.name) else None
    if "vendor" in dev_spec or "platform" in dev_spec:
        return 2
    return 1


def _deep_merge(dst: dict, src: dict, sources: dict | None = None, origin: str = "",
                prefix: str = "") -> dict:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _deep_merge(dst[k], v, sources, origin, f"{prefix}{k}.")
        elif isinstance(v, dict):
            dst[k] = {}
            _deep_merge(dst[k], v, sources, origin, f"{prefix}{k}.")
        else:
            dst[k] = copy.deepcopy(v)
            if sources is not None:
                sources[f"{prefix}{k}"] = origin
    return dst


class Profile:
    """The effective profile of one device, with the file each value came from."""

    def __init__(self, values: dict, sources: dict, files: list, level: int):
        self.values = values
        self.sources = sources
        self.files = files
        self.level = level

    def get(self, key: str, default=None):
        node = self.values
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if default is not None:
                    return default
                raise KeyError(f"profile has no value {key!r}")
            node = node[part]
        return node

    def section(self, name: str) -> dict:
        return copy.deepcopy(self.values.get(name, {}))

    @contextlib.contextmanager
    def overlay(self, dotted: str, **values):
        """``values`` over the sub-section ``dotted`` ("section.sub") while the block runs (a
        candidate of clts-tune, a test): the section is a new dict, so Plans cached under the
        old one are made again, and the old one is back afterwards."""
        name, sub = dotted.split(".")
        old = self.values[name]
        self.values[name] = dict(old, **{sub: dict(old[sub], **values)})
        try:
            yield self
        finally:
            self.values[name] = old

    def source_of(self, key: str) -> str:
        return self.sources.get(key, "?")

    def flat(self) -> dict:
        out = {}

        def walk(node, prefix):
            for k, v in node.items():
                if isinstance(v, dict):
                    walk(v, f"{prefix}{k}.")
                else:
                    out[f"{prefix}{k}"] = v
        walk(self.values, "")
        return out


_warned = set()


def _candidates(files, info):
    """{level: [(path, data), ...]} of the files in ``files`` that match ``info``, in search
    order (the first one found has the last word at its level).

    A file that cannot be read, or whose ``device`` section is malformed, cannot say which device
    it is for: it is skipped with a warning (a broken file meant for another device must not
    stop this one). A file that matches is then checked in full: an error in it is raised,
    naming the file and the key."""
    best = {}
    for path in files:
        try:
            data = _read(path)
            _check_meta(data, path)
        except ProfileError as exc:
            if path not in _skipped:
                _skipped.add(path)
                log.warning("clts: ignoring device profile %s", exc)
            continue
        level = match_level(data["device"], info)
        if level is not None:
            validate(data, path)
            best.setdefault(level, []).append((path, data))
    return best


_skipped: set = set()
def effective_profile(device, paths=None) -> Profile:
    """The merged profile of ``device``: the shipped generic file of its type (the defaults of
    every key), then, key by key, every matching type default, vendor + type default and device
    file found on the search path, from the least specific to the most specific and, at one
    level, from the last in the search path to the first (a file that sets one value changes
    only that value)."""
    info = device.info if hasattr(device, "info") else device
    if info.type not in TYPES:
        raise ProfileError(f"device type {info.type!r} has no generic profile (one of {TYPES})")
    base_path = shipped_dir() / f"generic-{info.type}.yaml"
    base = load(base_path)
    best = _candidates(_yaml_files(paths if paths is not None else search_path()), info)
    values, sources, used = {}, {}, [base_path]
    _deep_merge(values, {k: v for k, v in base.items() if k not in META_KEYS}, sources,
                str(base_path))
    for level in (1, 2, 3):
        for path, data in reversed(best.get(level, [])):   # earlier in the search path wins
            if path == base_path:
                continue
            body = {k: v for k, v in data.items() if k not in META_KEYS}
            _deep_merge(values, body, sources, str(path))
            used.append(path)
    top = max(best, default=1)
    if top < 3 and info.fingerprint not in _warned:
        _warned.add(info.fingerprint)
        log.warning("clts: no tuned profile for %s (%s); using %s defaults. Run `clts-tune` "
                    "to measure one.", info.name, info.platform,
                    "vendor" if top == 2 else "generic " + info.type)
    return Profile(values, sources, used, top)


def value_error(profile, key: str, message: str, forced: bool = False) -> Exception:
    """The error for a bad value of ``key``: a ``ProfileError`` naming the file it came from,
    or a ``ValueError`` when the caller forced it (``forced``) or no file set it."""
    src = None if forced or profile is None else profile.sources.get(key)
    if src:
        return ProfileError(f"{src}: key {key!r}: {message}")
    return ValueError(message)


def save(data: dict, path) -> Path:
    """Validate and write a profile atomically."""
    path = Path(path)
    validate(data, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=None))
    os.replace(tmp, path)
    return path
