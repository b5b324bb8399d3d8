"""Rename the Mako variables of the kernel templates to the Plan fields' names (CONTRIBUTING.md,
"One name per idea"), in Mako code only (``${...}``, ``<% %>`` blocks, ``%`` lines, ``##``
comments, tag attributes), never in a template's plain OpenCL text, so the rendered sources
stay byte-identical; and the same keys in the recorded GPU resource figures
(``clts/devices/resources/*.yaml``). Idempotent: run it again after merging a branch that
still used the old names, then rename the ``dev.program(...)`` keywords the merge brought.

    python scripts/rename_template_vars.py            # rename
    python scripts/rename_template_vars.py --check    # exit 1 if an old name is left

Check that nothing rendered changed: ``CLTS_DUMP_SOURCES=DIR`` before and after on the same
tests; the file names are the sources' SHA-1.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "clts" / "templates"

_TRIDIAG = dict(LANES="lanes", CHAINS="chains", WG="wg", TILE="tile", TY="tile_y",
                STREAM="stream", FIXED_N="fixed_n", BLOCKED="block",
                PREFETCH_ITEMS="prefetch_items")
_DIAG = dict(WG="wg", UNROLL="unroll", ILV="interleave")
#: template (relative to clts/templates, without .cl.mako) -> old name -> new name
RENAMES = {
    "tridiag/thomas": _TRIDIAG, "tridiag/thomas_unrolled": _TRIDIAG, "tridiag/rows": _TRIDIAG,
    "tridiag/pcr": _TRIDIAG, "tridiag/transpose": _TRIDIAG,
    "ocean/superbee": dict(LANES="lanes", TX="tile_x", TY="tile_y", TZ="tile_z"),
    "ocean/tke": dict(LANES="lanes", STREAM="stream", ADVECTION="advection"),
    "ocean/common": dict(LANES="lanes"),
    "trend/pairs": dict(W="lanes"),
    "mp/mass": dict(VW="lanes", U="chains"),
    "mp/stats": dict(VW="lanes", U="chains"),
    "mp/exact": dict(VW="lanes"),
    "mp/diag_common": _DIAG, "mp/diag_top1": _DIAG, "mp/diag_topk": _DIAG,
    "stl/gather": dict(TL="lanes", CTL="consumer_lanes"),
    "stl/ma": dict(TL="lanes"), "stl/robust": dict(TL="lanes", WG="wg"),
    "stl/nns": dict(WG="wg"),
    "stl/interp": dict(OTL="out_lanes"), "stl/loess_common": dict(OTL="out_lanes"),
    "stl/loess_flat": dict(OTL="out_lanes", CH="chunk", PT="interleave"),
    "stl/loess_intragroup": dict(OTL="out_lanes", WG="wg"),
    "stl/loess_outer": dict(OTL="out_lanes", LANES="lanes"),
    "bfast/breakpoints": dict(W="lanes", G="interleave"),
    **{f"bfast/{t}": dict(W="lanes") for t in ("common", "fused", "multi", "roc", "sweep")},
}
#: Mako-local aliases of an old name, removed before the rename (``L = LANES``)
ALIASES = {"stl/loess_outer": ("    L = LANES\n", "L", "LANES")}
#: Mako locals that would collide with a new name, renamed first (while an old name is left)
LOCALS = {"tridiag/thomas": {"chains": "chain_ids"}}


def mako_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every span of Mako code in ``text``."""
    spans, pos = [], 0
    for line in text.splitlines(keepends=True):
        s = line.lstrip()
        if (s.startswith("%") and not s.startswith("%%")) or s.startswith("##"):
            spans.append((pos, pos + len(line)))
        pos += len(line)
    i = 0
    while (j := text.find("${", i)) >= 0:
        depth, k = 0, j + 1
        while k < len(text):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        spans.append((j, k + 1))
        i = k + 1
    spans += [(m.start(), m.end()) for m in re.finditer(r"<%!?(?=\s).*?%>", text, re.S)]
    spans += [(m.start(), m.end()) for m in re.finditer(r"<%[a-z]+\b[^>]*>", text)]
    return spans


def rename(text: str, mapping: dict) -> str:
    inside = bytearray(len(text))
    for a, b in mako_spans(text):
        inside[a:b] = b"\x01" * (b - a)
    pat = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")
    return pat.sub(lambda m: mapping[m.group(1)] if inside[m.start()] else m.group(0), text)


def _old_names_left(text: str, mapping: dict) -> list[str]:
    code = "".join(text[a:b] for a, b in mako_spans(text) if not text[a:b].lstrip().startswith("##"))
    return sorted({m.group(1) for m in re.finditer(
        r"\b(" + "|".join(map(re.escape, mapping)) + r")\b", code)})


def rename_resources(check: bool) -> list[str]:
    left = []
    for path in sorted((ROOT / "clts" / "devices" / "resources").glob("*.yaml")):
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            m = re.search(r"template: ([\w/]+)\.cl\.mako", line)
            pm = re.search(r"params: \{([^}]*)\}", line)
            if not m or not pm or m.group(1) not in RENAMES:
                continue
            mp = RENAMES[m.group(1)]
            items = [kv.split(": ", 1) for kv in pm.group(1).split(", ")] if pm.group(1) else []
            if check:
                left += [f"{path.name}: {m.group(1)} {k}" for k, _ in items if k in mp]
                continue
            items = sorted((mp.get(k, k), v) for k, v in items)
            lines[i] = (line[:pm.start()] + "params: {" + ", ".join(f"{k}: {v}" for k, v in items)
                        + "}" + line[pm.end():])
        if not check:
            path.write_text("\n".join(lines))
    return left


def main(argv) -> int:
    check = "--check" in argv
    left = []
    for name, mapping in RENAMES.items():
        path = TEMPLATES / f"{name}.cl.mako"
        if not path.exists():
            continue
        text = path.read_text()
        if check:
            left += [f"{name}: {o}" for o in _old_names_left(text, mapping)]
            continue
        if name in LOCALS and _old_names_left(text, mapping):
            text = rename(text, LOCALS[name])
        if name in ALIASES:
            line, alias, old = ALIASES[name]
            if line in text:
                text = rename(text.replace(line, ""), {alias: old})
        new = rename(text, mapping)
        if new != text:
            path.write_text(new)
            print(f"renamed in {path.relative_to(ROOT)}")
    left += rename_resources(check)
    for item in left:
        print(f"old template variable left: {item}")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
