"""A per-row ``all_in_capex_usd`` replaces the catalog's capex on that row (issue 18.5: sensitivity moves capex
through the one engine). Known answer: the owned chain's capex and opex parts are proportional to capex
(econ.economics.tco.gpu_hour_cost_components), so doubling it doubles them and leaves facility and power."""

import polars as pl
import pytest

from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.tables.catalog import load_catalog

COLS = ("usd_per_gpu_hour", "usd_per_gpu_hour_capex", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_facility",
        "usd_per_gpu_hour_power", "usd_per_m_output_tokens")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _points(capex):
    n = len(capex)
    return pl.DataFrame({"model": ["llama-3.3-70b"] * n, "hardware": ["h100-sxm"] * n, "precision": ["fp8"] * n,
                         "batch_size": [16] * n, "num_gpus": [4] * n, "all_in_capex_usd": capex},
                        schema_overrides={"all_in_capex_usd": pl.Float64})


def test_per_row_capex_scales_capex_and_opex_only(catalog):
    res = evaluate(_points([None, 50_000.0, 100_000.0]), catalog, columns=COLS)
    base, same, double = res.row(0, named=True), res.row(1, named=True), res.row(2, named=True)
    assert same == pytest.approx(base, rel=1e-12)  # the catalog's H100 capex is 50,000
    assert double["usd_per_gpu_hour_capex"] == pytest.approx(2 * base["usd_per_gpu_hour_capex"], rel=1e-12)
    assert double["usd_per_gpu_hour_opex"] == pytest.approx(2 * base["usd_per_gpu_hour_opex"], rel=1e-12)
    assert double["usd_per_gpu_hour_facility"] == base["usd_per_gpu_hour_facility"]
    assert double["usd_per_gpu_hour_power"] == base["usd_per_gpu_hour_power"]
    assert catalog.accelerator("h100-sxm")["all_in_capex_usd"] == 50_000  # the catalog is untouched


def test_per_row_capex_prices_an_accelerator_without_one(catalog):
    pts = _points([30_000.0]).with_columns(hardware=pl.lit("mi325x"), num_gpus=pl.lit(2))
    assert evaluate(pts, catalog, columns=("feasible",))["feasible"][0]
    with pytest.raises(InvalidInputError, match="no capex"):
        evaluate(pts.with_columns(all_in_capex_usd=pl.lit(None, pl.Float64)), catalog)


@pytest.mark.parametrize("bad", [0.0, -5.0, 2e7])
def test_bad_capex_names_the_field_and_range(catalog, bad):
    # the column's one range (issue 21.1: a custom chip's capex and the catalog rule agree on [100, 1e7])
    with pytest.raises(InvalidInputError, match=r"all_in_capex_usd=.* is outside \[100, 10000000\] \(USD\)"):
        evaluate(_points([bad]), catalog)
