"""The few-row result frame (built row-wise for speed) equals the column-wise one, column for column.

Slices of at most ``_SMALL_FRAME_ROWS`` rows take the row-wise path; the whole grid takes the column-wise
path; the same rows must come back with the same columns, dtypes, values and nulls (infeasible rows,
disaggregated rows, speculative decoding, explicit layouts and every label column included).
"""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from econ import engine
from econ.engine import frame as engine_frame
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()


def _grid() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    models = CATALOG.models["id"].to_list()
    hws = CATALOG.accelerators["id"].to_list()
    n = 96
    f = pl.DataFrame({
        "model": rng.choice(models, n), "hardware": rng.choice(hws, n),
        "precision": rng.choice(["bf16", "fp8", "fp4"], n),
        "batch_size": rng.choice([1, 8, 64, 512, 4096], n),
        "context_tokens": rng.choice([512, 8192, 131072, 10 ** 6], n),
    })
    extra = pl.DataFrame({  # a second block: explicit layouts, disaggregation, speculative decoding
        "model": ["deepseek-v3"] * 4 + ["llama-3.1-70b"] * 4, "hardware": ["h200-sxm"] * 4 + ["h100-sxm"] * 4,
        "precision": ["fp8"] * 8, "batch_size": [64, 256, 1, 32] * 2, "context_tokens": [4096] * 8,
        "tp": [1, 8, 3, 8, 8, 4, 2, 8], "ep": [8, 8, 1, 8, 1, 1, 1, 1], "dp": [8, 1, 1, 1, 1, 2, 1, 1],
        "mode": ["aggregated", "disaggregated"] * 4,
    })
    return pl.concat([f, extra], how="diagonal_relaxed")


def test_few_rows_equal_the_column_wise_frame():
    points = _grid()
    assert points.height > engine_frame._SMALL_FRAME_ROWS  # the whole grid takes the column-wise path
    whole = engine.evaluate(points, CATALOG, strict=False)
    assert whole["feasible"].any() and not whole["feasible"].all()  # both kinds of rows are compared
    step = engine_frame._SMALL_FRAME_ROWS
    for start in range(0, points.height, step):
        part = engine.evaluate(points.slice(start, step), CATALOG, strict=False)
        assert_frame_equal(part, whole.slice(start, step))


def test_an_empty_selection_keeps_the_schema():
    points = _grid().slice(0, 3)
    full = engine.evaluate(points, CATALOG, strict=False)
    assert engine.evaluate(points.slice(0, 1), CATALOG, strict=False).schema == full.schema
