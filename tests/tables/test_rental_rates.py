"""data/rental_rates.csv (issue 18.4): sourced market rental rows, and the rule that picks the catalog's tier rates.

Known answers are rows of the table itself (AWS p5.48xlarge after the June-2025 cut: 55.04 / 8 = 6.88 per GPU-hour,
instances.vantage.sh data of 2026-01-21) and the rule's arithmetic on them.
"""

import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from econ.errors import DataError
from econ.tables.catalog import DEFAULT_DATA_DIR, TABLES, load_catalog
from econ.tables.rental_rates import (COMMITMENTS, PROVIDER_KINDS, RULE_COLUMNS, RULE_WINDOW_DAYS, load_rental_rates,
                                      median, period_start, provider_votes, spread, tier_rates_from_rows)

AS_OF = re.compile(r"^~?\d{4}(-\d{2}(-\d{2})?)?$")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def rates(catalog):
    return load_rental_rates(accelerator_ids=catalog.accelerators["id"])


def test_every_row_is_sourced_dated_and_known(rates, catalog):
    assert rates.height >= 150
    assert (rates["source"].str.len_chars() > 10).all()
    assert all(AS_OF.match(a) for a in rates["as_of"].to_list())
    assert set(rates["provider_kind"]) == set(PROVIDER_KINDS)
    assert set(rates["commitment"]) <= set(COMMITMENTS)
    assert set(rates["accelerator"]) <= set(catalog.accelerators["id"])
    assert rates["id"].is_unique().all()
    assert not rates["provider"].str.contains("(?i)together").any()  # managed inference endpoints are not GPU rentals


def test_aws_h100_after_the_june_2025_cut(rates):
    row = rates.filter((pl.col("accelerator") == "h100-sxm") & (pl.col("provider") == "AWS")
                       & (pl.col("commitment") == "on-demand") & (pl.col("as_of") == "2026-01-21")).row(0, named=True)
    assert row["usd_per_gpu_hour"] == pytest.approx(55.04 / 8, abs=5e-3)


def test_several_rows_where_the_market_spreads(rates):
    s = spread(rates).filter(pl.col("commitment") == "on-demand")
    h100 = {k: r for k, r in zip(s.filter(accelerator="h100-sxm")["provider_kind"],
                                 s.filter(accelerator="h100-sxm").iter_rows(named=True))}
    assert h100["gpu-cloud"]["providers"] >= 5 and h100["hyperscaler"]["providers"] >= 4
    assert h100["gpu-cloud"]["high_usd_per_gpu_hour"] >= 2 * h100["gpu-cloud"]["low_usd_per_gpu_hour"]  # a 2x spread
    assert h100["hyperscaler"]["median_usd_per_gpu_hour"] > 2 * h100["gpu-cloud"]["median_usd_per_gpu_hour"]
    for hw in ("h200-sxm", "b200", "mi300x"):
        assert s.filter((pl.col("accelerator") == hw) & (pl.col("provider_kind") == "gpu-cloud"))["providers"][0] >= 5


@pytest.mark.parametrize("text, day", [("2026-03-16", date(2026, 3, 16)), ("2026-07", date(2026, 7, 1)),
                                       ("~2026", date(2026, 1, 1)), ("~2025-08", date(2025, 8, 1))])
def test_period_start(text, day):
    assert period_start(text) == day


def test_median():
    assert median([3, 1, 2]) == 2 and median([4, 1, 3, 2]) == 2.5
    with pytest.raises(DataError):
        median([])


def _rows(*rows):
    cols = ("id", "accelerator", "provider", "provider_kind", "commitment", "usd_per_gpu_hour", "as_of")
    frame = pl.DataFrame([dict(zip(cols, r)) for r in rows], orient="row")
    return frame.with_columns(as_of_date=pl.Series([period_start(a) for a in frame["as_of"]], dtype=pl.Date))


def test_rule_one_vote_per_provider_latest_and_recent():
    rates = _rows(
        ("a1", "x", "A", "gpu-cloud", "on-demand", 4.0, "2025-01-01"),   # A's older price: superseded
        ("a2", "x", "A", "gpu-cloud", "on-demand", 2.0, "2026-03-01"),
        ("b1", "x", "B", "gpu-cloud", "on-demand", 3.0, "2026-02-01"),
        ("b2", "x", "B", "gpu-cloud", "on-demand", 5.0, "2026-02-01"),   # B's two regions that day: one vote, 4.0
        ("c1", "x", "C", "gpu-cloud", "on-demand", 9.0, "2024-12-01"),   # more than a year before the newest: no vote
        ("d1", "x", "D", "gpu-cloud", "on-demand", 6.0, "~2026"),        # approximate: counts as 2026-01-01
        ("e1", "x", "E", "gpu-cloud", "spot", 0.5, "2026-03-01"),         # spot: no tier reads it
        ("f1", "x", "F", "marketplace", "on-demand", 0.9, "2026-03-01"),  # marketplace: no tier reads it
    )
    assert provider_votes(rates.filter(pl.col("provider") == "B"), ("accelerator",))["usd_per_gpu_hour"][0] == 4.0
    got = tier_rates_from_rows(rates).row(0, named=True)
    assert got["column"] == "rental_on_demand_neocloud_usd_per_hour" and got["providers"] == 3
    assert got["usd_per_gpu_hour"] == 4.0  # median of A 2.0, B 4.0, D 6.0
    assert (got["low_usd_per_gpu_hour"], got["high_usd_per_gpu_hour"], got["as_of"]) == (2.0, 6.0, "2026-03-01")
    assert tier_rates_from_rows(rates).height == 1  # no hyperscaler rows: no hyperscaler rate, never a borrowed one
    assert RULE_WINDOW_DAYS == 365


def test_catalog_tier_rates_follow_the_rule(catalog, rates):
    """Every on-demand tier of accelerators.csv is the rule's median, and empty where no offer of its kind exists."""
    rule = {(r["accelerator"], r["column"]): r["usd_per_gpu_hour"] for r in tier_rates_from_rows(rates).iter_rows(named=True)}
    acc = catalog.accelerators
    for column in RULE_COLUMNS:
        for hw, value in acc.select("id", column).iter_rows():
            want = rule.get((hw, column))
            assert (value is None) == (want is None), (hw, column)
            if want is not None:
                assert value == pytest.approx(want, abs=1e-9), (hw, column)


def test_h100_tiers_are_2026_medians(catalog):
    h = catalog.accelerator("h100-sxm")
    assert h["rental_on_demand_neocloud_usd_per_hour"] == pytest.approx(2.81)  # 2.29 / 2.69 / 2.81 / 3.99 / 6.16
    assert h["rental_on_demand_hyperscaler_usd_per_hour"] == pytest.approx(10.0)  # 6.88 / 7.48 / 10.0 / 10.98 / 12.29
    assert h["as_of_rental_tiers"] >= "2026"
    b300 = catalog.accelerator("b300")  # its on-demand tier used to fall back to a hyperscaler list price
    assert b300["rental_on_demand_neocloud_usd_per_hour"] == pytest.approx((6.59 + 6.99) / 2)


def test_update_script_agrees_with_the_shipped_table():
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "update_rental_tiers.py"), "--check"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr


def _copy(tmp_path):
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    shutil.copy(DEFAULT_DATA_DIR / "rental_rates.csv", tmp_path / "rental_rates.csv")
    return pl.read_csv(tmp_path / "rental_rates.csv", infer_schema=False)


@pytest.mark.parametrize("column, value, pattern", [
    ("provider_kind", "cloud", r"column provider_kind: 'cloud' not in \['hyperscaler', 'gpu-cloud', 'marketplace'\]"),
    ("commitment", "forever", r"column commitment: 'forever' not in"),
    ("accelerator", "h900", r"column accelerator: 'h900' is not an accelerator id"),
    ("usd_per_gpu_hour", "-2", r"column usd_per_gpu_hour: -2 is outside \[0.01, 1000\]"),
    ("as_of", "2026-13-01", r"column as_of: '2026-13-01' is not YYYY"),
])
def test_bad_rows_are_refused_naming_row_and_column(tmp_path, catalog, column, value, pattern):
    df = _copy(tmp_path)
    first = df["id"][0]
    df.with_columns(pl.when(pl.col("id") == first).then(pl.lit(value)).otherwise(pl.col(column)).alias(column)) \
        .write_csv(tmp_path / "rental_rates.csv")
    with pytest.raises(DataError, match=rf"row {re.escape(first)}, {pattern}"):
        load_rental_rates(tmp_path, catalog.accelerators["id"])
