"""The Examples sections of the public docstrings run as doctests on the default device."""
from __future__ import annotations

import doctest
import importlib

import pytest

PUBLIC_MODULES = ["clts.errors", "clts.runtime.devices", "clts.stl.api", "clts.stl.hastl",
                  "clts.bfast.api", "clts.bfast.breaks_api", "clts.bfast.bfast01",
                  "clts.mp.api", "clts.mp.motifs", "clts.tridiag.api", "clts.ocean.api",
                  "clts.options"]
PUBLIC_MODULES += ["clts.stl.mstl", "clts.trend.api"]
PUBLIC_MODULES += ["clts.mp.mass", "clts.mp.fluss", "clts.mp.stream", "clts.mp.aamp", "clts.mp.mstump",
                   "clts.mp.mdl", "clts.mp.mpdist", "clts.mp.ostinato",
                   "clts.mp.snippets"]
PUBLIC_MODULES += ["clts.compat.stumpy", "clts.compat.pymannkendall"]
PUBLIC_MODULES += ["clts.bfast.decompose"]
PUBLIC_MODULES += ["clts.bfast.maps"]
PUBLIC_MODULES += ["clts.mp.scrump", "clts.mp.prescrump", "clts.mp.stimp"]
PUBLIC_MODULES += ["clts.mp.chains", "clts.mp.floss", "clts.mp.mmotifs"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples]
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_readme_examples():
    """Every ```python block of README.md runs (each in a fresh namespace)."""
    import pathlib
    import re
    readme = pathlib.Path(__file__).resolve().parents[1] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert blocks
    for i, block in enumerate(blocks):
        exec(compile(block, f"README.md, python block {i + 1}", "exec"), {})
