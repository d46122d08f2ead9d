"""Issue 10 data groundwork: cost tiers per accelerator, one capex basis, quote columns, provider disclosures.

Known answers are the published figures themselves: SemiAnalysis InferenceX owning cost as a hyperscaler
(``SemiAnalysisAI/InferenceX-app:packages/app/src/lib/constants.ts`` GPU_SPECS ``costh``: H100 1.30, H200 1.41,
B200 1.95, GB200 2.21 $/GPU-hour) and DeepSeek's "Day 6 - One More Thing" serving statistics (2025-03-01).
"""

import re

import polars as pl
import pytest

from econ.catalog import (CAPEX_BASES, COMMON_CAPEX_BASIS, DEFAULT_DATA_DIR, RENTAL_TIERS, TABLES, load_catalog,
                          read_raw_csv)
from econ.errors import DataError

AS_OF = re.compile(r"^~?\d{4}(-\d{2}(-\d{2})?)?$")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def acc(catalog):
    return catalog.accelerators


# ------------------------------------------------------------------------------------------ accelerators

@pytest.mark.parametrize("hw, usd", [("h100-sxm", 1.30), ("h200-sxm", 1.41), ("b200", 1.95), ("gb200-nvl72", 2.21)])
def test_hyperscaler_tier_is_the_inferencex_figure(catalog, hw, usd):
    assert catalog.accelerator(hw)["tco_hyperscaler_usd_per_hour"] == pytest.approx(usd, abs=1e-9)


def test_other_sourced_tiers_spot_checks(catalog):
    h = catalog.accelerator("h100-sxm")
    assert (h["tco_neocloud_usd_per_hour"], h["rental_3yr_usd_per_hour"], h["sa_all_in_power_w"]) == (1.69, 1.30, 1730)
    assert (h["rental_on_demand_hyperscaler_usd_per_hour"], h["rental_contract_usd_per_hour"]) == (12.29, 4.86)
    assert catalog.accelerator("h800-sxm")["rental_contract_usd_per_hour"] == 2.00  # DeepSeek's stated lease
    assert catalog.accelerator("mi355x")["tco_hyperscaler_usd_per_hour"] == 1.48
    # never guessed: SemiAnalysis publishes no tier for these
    for hw in ("a100-80gb-sxm", "h800-sxm", "tpu-v6e", "trainium2"):
        assert catalog.accelerator(hw)["tco_hyperscaler_usd_per_hour"] is None, hw


def test_tiers_ordered_as_the_source_orders_them(acc):
    sa = acc.filter(pl.col("tco_hyperscaler_usd_per_hour").is_not_null())
    assert sa.height == 9
    assert (sa["tco_hyperscaler_usd_per_hour"] < sa["tco_neocloud_usd_per_hour"]).all()  # neocloud owns at a premium
    assert (sa["sa_all_in_power_w"] > sa["all_in_power_w"]).all()  # utility (incl. facility) > critical IT


TIER_GROUPS = {
    ("source_tco", "as_of_tco"): ("tco_hyperscaler_usd_per_hour", "tco_neocloud_usd_per_hour",
                                  "rental_3yr_usd_per_hour", "sa_all_in_power_w"),
    ("source_rental_tiers", "as_of_rental_tiers"): ("rental_on_demand_hyperscaler_usd_per_hour",
                                                    "rental_on_demand_neocloud_usd_per_hour",
                                                    "rental_contract_usd_per_hour"),
}


@pytest.mark.parametrize("group", list(TIER_GROUPS), ids=lambda g: g[0])
def test_every_filled_tier_has_a_source_and_date(acc, group):
    src, as_of = group
    filled = acc.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in TIER_GROUPS[group]))
    assert filled.height >= 9
    assert (filled[src].str.len_chars() > 10).all(), filled.filter(pl.col(src).is_null())["id"].to_list()
    assert all(AS_OF.match(a or "") for a in filled[as_of].to_list()), filled[as_of].to_list()
    empty = acc.filter(~pl.any_horizontal(pl.col(c).is_not_null() for c in TIER_GROUPS[group]))
    assert empty[src].null_count() == empty.height  # no orphan sources


def test_contract_rate_states_its_basis(acc):
    c = acc.filter(pl.col("rental_contract_usd_per_hour").is_not_null())
    assert c.height >= 5 and c["rental_contract_basis"].null_count() == 0


def test_legacy_rental_column_names_its_tier(acc):
    has = acc.filter(pl.col("rental_usd_per_hour").is_not_null())
    assert has["rental_tier"].null_count() == 0 and set(has["rental_tier"]) <= RENTAL_TIERS
    same = {"on-demand-neocloud": "rental_on_demand_neocloud_usd_per_hour",
            "on-demand-hyperscaler": "rental_on_demand_hyperscaler_usd_per_hour", "rental-3yr": "rental_3yr_usd_per_hour"}
    for tier, col in same.items():
        rows = has.filter(pl.col("rental_tier") == tier)
        assert (rows["rental_usd_per_hour"] == rows[col]).all(), tier


def test_one_capex_basis_with_flagged_exceptions(acc):
    has = acc.filter(pl.col("all_in_capex_usd").is_not_null())
    assert has["capex_basis"].null_count() == 0 and set(has["capex_basis"]) <= CAPEX_BASES
    assert acc.filter(pl.col("all_in_capex_usd").is_null())["capex_basis"].null_count() == \
        acc.filter(pl.col("all_in_capex_usd").is_null()).height
    flagged = set(has.filter(pl.col("capex_basis") != COMMON_CAPEX_BASIS)["id"])
    assert flagged == {"gb200-nvl72", "b300", "l40s", "gaudi3", "h20"}
    assert {"h100-sxm", "h200-sxm", "b200", "mi300x"} <= set(has.filter(pl.col("capex_basis") == COMMON_CAPEX_BASIS)["id"])


def test_unknown_capex_basis_is_an_error(tmp_path):
    import shutil
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    df = pl.read_csv(tmp_path / "accelerators.csv", infer_schema=False)
    df.with_columns(pl.when(pl.col("id") == "b200").then(pl.lit("guess")).otherwise(pl.col("capex_basis"))
                    .alias("capex_basis")).write_csv(tmp_path / "accelerators.csv")
    with pytest.raises(DataError, match=r"row b200, column capex_basis: 'guess' not in"):
        load_catalog(tmp_path)


def test_negative_tier_is_an_error(tmp_path):
    import shutil
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    df = pl.read_csv(tmp_path / "accelerators.csv", infer_schema=False)
    df.with_columns(pl.when(pl.col("id") == "h100-sxm").then(pl.lit("-1.3"))
                    .otherwise(pl.col("tco_hyperscaler_usd_per_hour")).alias("tco_hyperscaler_usd_per_hour")
                    ).write_csv(tmp_path / "accelerators.csv")
    with pytest.raises(DataError, match=r"row h100-sxm, column tco_hyperscaler_usd_per_hour: -1.3 is outside"):
        load_catalog(tmp_path)
