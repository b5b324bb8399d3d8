"""A normal (non-editable) install carries the shipped profiles and the kernel templates."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_profiles_and_templates(tmp_path):
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-q", "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True,
                       timeout=300)
    except subprocess.CalledProcessError as exc:
        pytest.fail("building the wheel failed:\n" + exc.stderr.decode()[-3000:])
    wheel = next(tmp_path.glob("clts-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"clts/devices/{p.name}" for p in (ROOT / "clts" / "devices").glob("*.yaml")}
    assert shipped and shipped <= names
    assert "clts/devices/README.md" in names
    templates = {str(p.relative_to(ROOT)) for p in (ROOT / "clts" / "templates").rglob("*.mako")}
    assert templates <= names
    entry = [n for n in names if n.endswith("entry_points.txt")]
    text = zipfile.ZipFile(wheel).read(entry[0]).decode()
    assert "clts = clts.cli:main" in text and "clts-tune = clts.tune.cli:main" in text


def test_version_matches_pyproject():
    import re
    from pathlib import Path

    import clts
    from clts._version import __version__
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', text, re.M).group(1) == __version__
    assert clts.__version__ == __version__
