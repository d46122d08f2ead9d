"""A block evaluated whole equals the same rows evaluated one by one (issue 20.2).

A block of more than ``_SMALL_FRAME_ROWS`` rows whose layout inputs are uniform computes the decode constants and the
collectives once per distinct (model, accelerator, precision, KV precision, invalid layout, weight formats) and
broadcasts them (:attr:`econ.engine.EngineInputs.combos`); a single row computes them itself. Random catalog rows
(seeded) in several shapes of input must give the same frame either way: every column, value and null.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from econ import engine
from econ.engine import frame as engine_frame
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()
MODELS = CATALOG.models["id"].to_list()
HARDWARE = CATALOG.accelerators["id"].to_list()


def _rows(seed: int, n: int = 48, combos: int = 6) -> pl.DataFrame:
    """``n`` rows over ``combos`` random (model, accelerator, precision): each combination recurs with other batches
    and lengths (a combination's rows share the broadcast constants)."""
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, combos, n)
    return pl.DataFrame({
        "model": rng.choice(MODELS, combos)[pick], "hardware": rng.choice(HARDWARE, combos)[pick],
        "precision": rng.choice(["bf16", "fp8", "fp4"], combos)[pick],
        "batch_size": rng.choice([1, 3, 16, 64, 512, 4096], n),
        "input_len": rng.choice([128, 1024, 8192], n), "output_len": rng.choice([64, 1024], n),
    })


CASES = {
    "auto layout": lambda f: f,
    "given num_gpus (some layouts invalid)": lambda f: f.with_columns(num_gpus=pl.lit(8)),
    "given tp, dp, ep (MoE layouts, two-batch overlap on)": lambda f: f.with_columns(
        tp=pl.lit(1), dp=pl.lit(8), ep=pl.lit(8), num_gpus=pl.lit(8), two_batch_overlap=pl.lit(True)),
    "weight formats given per row": lambda f: f.with_columns(
        weight_format=pl.Series(np.where(np.arange(f.height) % 3 == 0, "fp8", None)),
        kv_precision=pl.Series(np.where(np.arange(f.height) % 2 == 0, "fp8", "bf16"))),
    "layouts varying per row (no combinations)": lambda f: f.with_columns(
        num_gpus=pl.Series(np.where(np.arange(f.height) % 2 == 0, 8, 16))),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_block_equals_rows_one_by_one(case, seed, monkeypatch):
    points = CASES[case](_rows(seed))
    assert points.height > engine_frame._SMALL_FRAME_ROWS
    calls = []

    def spy(code):
        calls.append(code)
        return combinations(code)

    combinations = engine_frame._combinations
    monkeypatch.setattr(engine_frame, "_combinations", spy)
    whole = engine.evaluate(points, CATALOG, strict=False, threads=1)
    assert bool(calls) == ("no combinations" not in case)  # the broadcast path ran where it should
    one_by_one = pl.concat([engine.evaluate(points.slice(i, 1), CATALOG, strict=False) for i in range(points.height)])
    assert whole.height == points.height
    assert whole["feasible"].sum() > 0  # some rows are priced: the comparison is not all nulls
    assert_frame_equal(whole, one_by_one, check_exact=False, rel_tol=1e-12, abs_tol=0.0)


def test_combinations_group_equal_rows():
    code = np.array([5, 2, 5, 9, 2, 2, 0])
    rows, index = engine_frame._combinations(code)
    assert len(rows) == 4
    np.testing.assert_array_equal(code[rows][index], code)  # each row's combination has the row's code
    np.testing.assert_array_equal(np.sort(code[rows]), [0, 2, 5, 9])
