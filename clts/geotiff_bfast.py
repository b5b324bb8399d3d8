"""``clts.bfast_decompose`` (R's ``bfast()``) and ``clts.bfast01`` on a GeoTIFF stack, their
per-pixel maps (``clts.bfast.maps``) as GeoTIFFs, by the rules of :mod:`clts.geotiff` (the
stack and its dates, blocks of rows, the nodata values, the safe output folder)."""
from __future__ import annotations

import numpy as np

#: the GeoTIFFs of :func:`bfast_decompose_geotiff` (``clts.bfast.maps.DECOMPOSE_MAP_FIELDS``)
DECOMPOSE_OUTPUTS = [("n_trend_breaks", "int16"), ("first_trend_break_date", "float32"),
                     ("largest_break_date", "float32"), ("largest_magnitude", "float32"),
                     ("n_season_breaks", "int16"), ("first_season_break_date", "float32"),
                     ("status", "int16")]
#: the GeoTIFFs of :func:`bfast01_geotiff` (``clts.bfast.maps.BFAST01_MAP_FIELDS``)
BFAST01_OUTPUTS = [("breaks", "int16"), ("break_date", "float32"), ("magnitude", "float32"),
                   ("flag_type", "int16"), ("flag_significance", "int16"), ("status", "int16")]


def _run(fn, inputs, out_dir, outputs, compute, dates, block_rows, date_format, progress,
         overwrite, kwargs, refused):
    """``compute(y, dates)`` -> maps on each block of the stack, written as ``outputs``."""
    from .geotiff import open_run, run_blocks, date_values, probe_arguments
    w, st = open_run(fn, inputs, out_dir, dates, block_rows, date_format, overwrite, kwargs,
                      refused, outputs)
    probe_arguments(lambda: compute(np.random.default_rng(0).normal(size=(st.dates.size, 1)),
                                    st.dates))

    def one_block(r0, y):
        maps = compute(y, st.dates)
        for name, _ in outputs:
            v = np.asarray(maps[name])
            w.write(name, r0, date_values(v, date_format) if name.endswith("_date") else v)
    return run_blocks(fn, w, st, block_rows, progress, one_block)


def bfast_decompose_geotiff(inputs, freq, out_dir, *, dates=None, block_rows=256,
                            date_format="decimal_year", progress=True, overwrite=False,
                            **kwargs) -> dict:
    """:func:`clts.bfast_decompose` on a GeoTIFF stack (a regular series: one image per
    ``1 / freq`` of a season; ``kwargs`` as there), in blocks of ``block_rows`` rows; the maps
    of ``clts.bfast.maps.decompose_maps`` as GeoTIFFs in ``out_dir``: ``n_trend_breaks.tif``,
    ``n_season_breaks.tif`` (-1 not analysed), ``first_trend_break_date.tif``,
    ``largest_break_date.tif`` and ``first_season_break_date.tif`` (decimal year or day of
    year; nodata NaN: no break), ``largest_magnitude.tif`` (R's ``Magnitude``) and
    ``status.tif``, on the input's grid, by the rules of
    :func:`clts.geotiff.bfast_breaks_geotiff`. Returns {name: path}."""
    from .bfast.decompose import bfast_decompose
    from .bfast.maps import result_maps

    def compute(y, d):
        return result_maps(bfast_decompose(y, freq, d, progress=False, **kwargs))
    return _run("bfast_decompose_geotiff", inputs, out_dir, DECOMPOSE_OUTPUTS, compute, dates,
                block_rows, date_format, progress, overwrite, kwargs,
                ("dates", "time_axis", "confint"))


def bfast01_geotiff(inputs, out_dir, *, dates=None, block_rows=256,
                    date_format="decimal_year", progress=True, overwrite=False,
                    **kwargs) -> dict:
    """:func:`clts.bfast01` on a GeoTIFF stack (``kwargs`` as there; ``freq`` in days, the
    stack's dates being dates), in blocks of ``block_rows`` rows; the maps of
    ``clts.bfast.maps.bfast01_maps`` as GeoTIFFs in ``out_dir``: ``breaks.tif`` (1, 0; -1 not
    analysed), ``break_date.tif`` and ``magnitude.tif`` (where ``breaks`` is 1; nodata NaN
    elsewhere), ``flag_type.tif`` and ``flag_significance.tif`` (``bfast01classify``'s; -1:
    none) and ``status.tif``, by the rules of :func:`clts.geotiff.bfast_breaks_geotiff`.
    Returns {name: path}."""
    from .bfast.bfast01 import bfast01
    from .bfast.maps import result_maps

    def compute(y, d):
        return result_maps(bfast01(y, d, progress=False, **kwargs))
    return _run("bfast01_geotiff", inputs, out_dir, BFAST01_OUTPUTS, compute, dates,
                block_rows, date_format, progress, overwrite, kwargs,
                ("dates", "time_axis", "confint"))
