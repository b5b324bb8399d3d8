"""Cache of measured candidates, so an interrupted ``clts-tune`` run resumes where it stopped.

One JSON file per device fingerprint in ``<user cache dir>/tune/``. A record's key names the
entry, a hash of its search space and settings (so a changed space or clts version never reuses
stale numbers) and the candidate. The file is rewritten atomically after every measurement.
Records of an entry are dropped once a run that tuned it has written its profile. A candidate
is marked pending before it first runs: if the process dies there (driver segfault), the next
run reports it as failed instead of running it again.
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

    CRASHED = ("the process died while this candidate was being measured in an earlier run "
               "(a driver crash?); not measured again")

    def get(self, entry, shash, label):
        """The saved record, or None. A candidate left marked *pending* by an earlier run (the
        process died while measuring it: a segfault in the driver, an OOM kill) comes back as
        failed, so that resuming does not crash on it again."""
        rec = self.records.get(self.key(entry, shash, label))
        if rec is not None and rec.get("pending"):
            rec = {"ok": False, "error": self.CRASHED, "score": None, "medians": [],
                   "spread": 0.0, "stable": True, "samples": 0}
            self.put(entry, shash, label, rec)
        return rec

    def begin(self, entry, shash, label) -> None:
        """Mark a candidate as being measured (saved before its first run)."""
        self.put(entry, shash, label, {"pending": True})

    def abort(self, entry, shash, label) -> None:
        """Forget the pending mark of a measurement interrupted normally (Ctrl-C)."""
        k = self.key(entry, shash, label)
        if self.records.get(k, {}).get("pending"):
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
