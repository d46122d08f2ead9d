"""The engine's hot path makes no reference cycles (issue 20.1): a block's arrays are freed when the block
ends, not when the cycle collector runs, so repeated large calls keep a flat peak."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from pathlib import Path

import pytest

from econ.engine import evaluate
from econ.tables.catalog import load_catalog

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "engine_speed"))
from record import DECODE_COST, cases  # noqa: E402


@pytest.fixture(scope="module")
def catalog_cases():
    catalog = load_catalog()
    return catalog, cases(catalog)


@pytest.mark.parametrize("name", ["grid", "layouts", "spec", "economics", "decode_cost", "small"])
def test_evaluate_leaves_no_reference_cycles(name, catalog_cases):
    catalog, all_cases = catalog_cases
    points, kw = all_cases[name]
    evaluate(points, catalog, **kw)  # warm the static tables
    gc.collect()
    gc.disable()
    try:
        evaluate(points, catalog, block_rows=512, **kw)
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0


def test_repeated_calls_keep_a_flat_peak(catalog_cases):
    """The traced peak of the third call is no higher than that of the first (no garbage carried over)."""
    catalog, all_cases = catalog_cases
    points, _ = all_cases["grid"]
    points = points.sample(40_000, with_replacement=True, seed=1)
    evaluate(points.head(100), catalog, strict=False)
    peaks = []
    gc.disable()
    try:
        for _ in range(3):
            tracemalloc.start()
            out = evaluate(points, catalog, strict=False, columns=DECODE_COST, block_rows=4096)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            del out
    finally:
        gc.enable()
    assert peaks[0] > 1e6
    assert peaks[2] <= peaks[0] * 1.05
