"""Cache of measured candidates, so an interrupted ``clts-tune`` run resumes where it stopped.

One JSON file per device fingerprint in ``<user cache dir>/tune/``. A record's key names the
entry, a hash of its search space and settings (so a changed space or clts version never reuses
stale numbers) and the candidate. The file is rewritten atomically after every measurement.
Records of an entry are dropped once a run that tuned it has written its profile. A candidate
is marked pending before it first runs: if the process dies there (driver segfault), the next
run measures it once more, and reports it as failed after a second death. Interruptions (Ctrl-C,
SIGTERM, SIGHUP) are caught by ``clts-tune`` and never count as a death.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def default_path(device) -> Path:
    from ..runtime.icd import cache_dir
    return cache_dir() / "tune" / f"{device.fingerprint}.json"


def space_hash(*parts) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]


class MeasurementCache:
    VERSION = 1

    def __init__(self, path):
        self.path = Path(path)
        self.records: dict[str, dict] = {}
        try:
            data = json.loads(self.path.read_text())
            if data.get("version") == self.VERSION:
                self.records = dict(data.get("records", {}))
        except (OSError, ValueError, AttributeError):
            pass

    @staticmethod
    def key(entry: str, shash: str, label: str) -> str:
        return f"{entry}|{shash}|{label}"

    CRASHED = ("the process died twice while this candidate was being measured (a driver "
               "crash, or killed with SIGKILL); not measured again")

    def get(self, entry, shash, label):
        """The saved record, or None (measure it). A candidate left marked *pending* by an
        earlier run was being measured when that process died without a chance to say so (a
        driver segfault, an OOM or SIGKILL; Ctrl-C, SIGTERM and SIGHUP are caught and clear the
        mark): it is measured once more, and a second death marks it failed, so that resuming
        does not crash on it for ever."""
        k = self.key(entry, shash, label)
        rec = self.records.get(k)
        if rec is not None and rec.get("pending"):
            deaths = int(rec.get("deaths", 0)) + 1
            if deaths < 2:
                self.records[k] = {"pending": False, "deaths": deaths, "retry": True}
                self._write()
                return None
            rec = {"ok": False, "error": self.CRASHED, "score": None, "medians": [],
                   "spread": 0.0, "stable": True, "samples": 0}
            self.put(entry, shash, label, rec)
        if rec is not None and rec.get("retry"):
            return None
        return rec

    def begin(self, entry, shash, label) -> None:
        """Mark a candidate as being measured (saved before its first run)."""
        prev = self.records.get(self.key(entry, shash, label)) or {}
        self.put(entry, shash, label, {"pending": True, "deaths": int(prev.get("deaths", 0))})

    def abort(self, entry, shash, label) -> None:
        """Forget the pending mark of a measurement interrupted normally (Ctrl-C)."""
        k = self.key(entry, shash, label)
        rec = self.records.get(k, {})
        if rec.get("pending"):
            if rec.get("deaths"):
                self.records[k] = {"pending": False, "deaths": rec["deaths"], "retry": True}
            else:
                del self.records[k]
            self._write()

    def put(self, entry, shash, label, record: dict) -> None:
        self.records[self.key(entry, shash, label)] = record
        self._write()

    def drop_entry(self, entry: str) -> None:
        pre = f"{entry}|"
        keys = [k for k in self.records if k.startswith(pre)]
        for k in keys:
            del self.records[k]
        if keys:
            self._write()

    def __len__(self):
        return len(self.records)

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.records:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            return
        tmp = self.path.with_name(f".{self.path.name}.tmp{os.getpid()}")
        tmp.write_text(json.dumps({"version": self.VERSION, "records": self.records}, indent=0))
        os.replace(tmp, self.path)
