"""Tests' way to change a device profile's values for one test: ``set_values(monkeypatch,
device, "mp.mpdist", first_items=4)`` puts the values into the section's copy (the section
itself is restored after the test by monkeypatch)."""
from __future__ import annotations


def set_values(monkeypatch, device, dotted: str, **values) -> None:
    """``values`` over the profile's ``dotted`` sub-section (``"section.sub"``) of ``device``,
    for the rest of the test."""
    section, sub = dotted.split(".")
    top = dict(device.profile.values[section])
    monkeypatch.setitem(device.profile.values, section, dict(top, **{sub: dict(top[sub], **values)}))
