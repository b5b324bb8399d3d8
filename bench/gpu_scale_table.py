"""The markdown of bench/gpu_scale.py's JSON lines: one run's table, and several runs (source
trees) side by side (``python bench/gpu_scale.py --compare A.jsonl B.jsonl``)."""
from __future__ import annotations

import json
from pathlib import Path

#: the sections that are calls (the others: the device, the link, anchors)
CALLS = ("stl", "stl_small", "bfast_monitor", "tridiag", "tke", "trend_test", "matrix_profile")


def describe(r) -> str:
    s = r["section"]
    if s in ("stl", "stl_small"):
        what = (f"STL {r['batch']:,} x {r['n']}, period {r['period']}, "
                f"{'robust, ' if r.get('robust') else ''}{r['dtype']}")
        if r.get("out"):
            what += ", out="
    elif s == "bfast_monitor":
        what = f"BFAST-Monitor {r['pixels']:,} px x {r['dates']} dates, {r['dtype']}"
    elif s == "tridiag":
        what = f"tridiagonal {r['batch']:,} x {r['n']} {r['dtype']}"
    elif s == "tke":
        what = f"TKE {r['size']}"
    elif s == "trend_test":
        what = f"trend_test {r['batch']:,} x {r['n']} {r['dtype']}"
    elif s == "matrix_profile":
        what = f"matrix profile {r['n']:,}, m={r['m']}"
    else:
        what = s
    return what + (", device arrays" if r.get("inputs") == "device arrays" else "")


def ms(v):
    return "-" if v is None else f"{v * 1e3:.3g}"


def table(rows) -> str:
    anchors = {}
    for r in rows:
        if r["section"].endswith("_anchor") and "anchor_s" in r:
            key = (r["section"][:-7], r.get("batch"), r.get("n"), r.get("size"))
            anchors[key] = f"{r['anchor'].split(' (')[0]} {ms(r['anchor_s'])} ms"
    out = ["| call | kernel ms | span ms | launches | wall ms (first) | wall / kernel | "
           "bytes | PCIe bound ms | goal ms | wall / goal | anchor |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if r["section"] not in CALLS or "inputs" not in r:
            continue
        what = describe(r)
        if "wall_s" not in r:
            why = r.get("unsupported") and "unsupported" or r.get("error") or r.get("skipped")
            out.append(f"| {what} | {why[:120]} |" + " |" * 9)
            continue
        key = (r["section"], r.get("batch"), r.get("n"), r.get("size"))
        wk = f"{r['wall_over_kernel']:.1f}x" if r["wall_over_kernel"] else "-"
        wg = f"{r['wall_over_goal']:.2f}" if r["wall_over_goal"] else "-"
        out.append(f"| {what} | {ms(r['kernel_s'])} | {ms(r['span_s'])} | {r['launches']} | "
                   f"{ms(r['wall_s'])} ({ms(r['first_s'])}) | {wk} | {r['bytes'] / 1e6:,.1f} MB "
                   f"| {ms(r['bound_s'])} | {ms(r['goal_s'])} | {wg} | {anchors.get(key, '')} |")
    extra = []
    for r in rows:
        if r["section"] == "link":
            extra.append(
                f"Link ({r['bytes'] / 2**20:.0f} MiB): pinned {r['pinned_h2d_GBps']:.1f} GB/s "
                f"to the device, {r['pinned_d2h_GBps']:.1f} back; pageable "
                f"{r['pageable_h2d_GBps']:.1f} / {r['pageable_d2h_GBps']:.1f}; numpy into pinned "
                + ", ".join(f"{r[k]:.1f} ({k.split('_')[2]} threads)" for k in r
                            if k.startswith("host_fill_")) + " GB/s.")
        elif r["section"] == "copy_bw" and "GBps" in r:
            extra.append(f"Device copy bandwidth: {r['GBps']:.0f} GB/s.")
        elif r["section"].endswith("_anchor") and "unavailable" in r:
            extra.append(f"{r['anchor']}: unavailable ({r['unavailable'][:160]}).")
        elif r["section"].endswith("_anchor"):
            d = r.get("maxdiff_vs_clts", r.get("maxreldiff_vs_clts"))
            extra.append(f"{r['anchor']}: {ms(r['anchor_s'])} ms"
                         + (f" on {r['jax_device']}" if r.get("jax_device") else "")
                         + f", largest difference from clts {d:.2g}.")
    extra = list(dict.fromkeys(extra))
    return "\n".join(out) + "\n\n" + "\n".join(f"- {e}" for e in extra) + "\n"


def row_key(r):
    keys = ("section", "config", "batch", "n", "period", "dtype", "robust", "out", "pixels",
            "size", "m", "inputs")
    return tuple((k, r.get(k)) for k in keys)


def compare(paths) -> str:
    """Side by side: the calls of several runs' JSON lines (e.g. a baseline tree and the new
    one, in that order), wall and kernel ms each, and wall of the first / wall of each."""
    runs = [[json.loads(line) for line in Path(p).read_text().splitlines() if line.strip()]
            for p in paths]
    names = []
    for p, rows in zip(paths, runs):
        dev = next((r for r in rows if r["section"] == "device"), {})
        names.append(f"{Path(p).stem} ({dev.get('clts_path', '?')})")
    order, by = [], [dict() for _ in runs]
    for i, rows in enumerate(runs):
        for r in rows:
            if r["section"] in CALLS and "inputs" in r:
                k = row_key(r)
                by[i][k] = r
                if k not in order:
                    order.append(k)
    head = "| call | " + " | ".join(f"{chr(65 + i)}: wall ms (kernel ms, launches)"
                                     for i in range(len(runs)))
    head += "".join(f" | A / {chr(65 + i)}" for i in range(1, len(runs))) + " |"
    out = ["Runs: " + "; ".join(f"{chr(65 + i)} = {n}" for i, n in enumerate(names)), "",
           head, "|---|" + "---:|" * (2 * len(runs) - 1)]
    for k in order:
        rs = [b.get(k) for b in by]
        first = next(r for r in rs if r)
        cells = []
        for r in rs:
            if r is None:
                cells.append("-")
            elif "wall_s" in r:
                cells.append(f"{ms(r['wall_s'])} ({ms(r['kernel_s'])}, {r['launches']})")
            else:
                cells.append("unsupported" if "unsupported" in r else
                             (r.get("error") or r.get("skipped") or "?")[:60])
        ratios = []
        for r in rs[1:]:
            ok = rs[0] and r and "wall_s" in rs[0] and "wall_s" in r
            ratios.append(f"{rs[0]['wall_s'] / r['wall_s']:.2f}" if ok else "-")
        out.append(f"| {describe(first)} | " + " | ".join(cells + ratios) + " |")
    return "\n".join(out) + "\n"
