"""Data tables: every CSV loads, ids unique, units positive, sources and dates present; broken tables fail."""

import shutil

import polars as pl
import pytest

from econ.tables.catalog import DEFAULT_DATA_DIR, TABLES, load_catalog
from econ.errors import DataError

REQUIRED_MODELS = ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b", "deepseek-v3",
                   "qwen3-235b-a22b", "qwen3-30b-a3b", "mixtral-8x7b", "gpt-oss-120b", "kimi-k2", "llama-4-maverick"]
REQUIRED_HW = ["a100-80gb-sxm", "h100-sxm", "h800-sxm", "h200-sxm", "h20", "b200", "gb200-nvl72", "gb300-nvl72",
               "mi300x", "mi325x", "mi355x", "tpu-v5e", "tpu-v6e", "gaudi3", "trainium2"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_required_rows_present(catalog):
    assert set(REQUIRED_MODELS) <= set(catalog.models["id"])
    assert set(REQUIRED_HW) <= set(catalog.accelerators["id"])
    assert catalog.power_prices.height >= 10 and catalog.facilities.height >= 4


@pytest.mark.parametrize("table", list(TABLES))
def test_every_row_sourced_and_dated(catalog, table):
    df = getattr(catalog, table)
    assert df.height > 0
    assert (df["source"].str.len_chars() > 5).all()
    assert df["as_of"].null_count() == 0


def test_units_positive(catalog):
    a = catalog.accelerators
    for c in ("bf16_peak_flop_per_s", "hbm_capacity_bytes", "hbm_bandwidth_bytes_per_s", "all_in_power_w",
              "scale_up_bandwidth_bytes_per_s", "scale_out_bandwidth_bytes_per_s"):
        assert (a[c] > 0).all(), c
    assert (catalog.facilities["pue"] >= 1).all()


def test_datasheet_spot_checks(catalog):
    h = catalog.accelerator("h100-sxm")
    assert (h["bf16_dense_tflop_per_s"], h["fp8_dense_tflop_per_s"], h["hbm_capacity_gib"], h["hbm_bandwidth_tb_per_s"],
            h["tdp_w"]) == (989, 1979, 80, 3.35, 700)
    assert h["fp4_dense_tflop_per_s"] is None
    assert catalog.accelerator("a100-80gb-sxm")["fp8_dense_tflop_per_s"] is None
    d = catalog.model("deepseek-v3")
    assert (d["num_layers"], d["hidden_size"], d["kv_lora_rank"], d["qk_rope_head_dim"], d["num_experts"]) == (61, 7168, 512, 64, 256)


def _copy(tmp_path):
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    return tmp_path


def _edit(path, fn):
    df = pl.read_csv(path, infer_schema=False)
    fn(df).write_csv(path)


@pytest.mark.parametrize("mutate, pattern", [
    # an extra column alone loads (with a warning; tests/tables/test_reliability_data.py); a misspelled one is missing
    (lambda d: d.rename({"tdp_w": "tdp_watts"}), r"missing column\(s\) \['tdp_w'\] \(misspelled\? unknown column\(s\) \['tdp_watts'\]\)"),
    (lambda d: d.drop("hbm_bandwidth_tb_per_s"), r"missing column\(s\) \['hbm_bandwidth_tb_per_s'\]"),
    (lambda d: d.with_columns(pl.when(pl.col("id") == "h100-sxm").then(pl.lit("-3.35")).otherwise(pl.col("hbm_bandwidth_tb_per_s")).alias("hbm_bandwidth_tb_per_s")),
     r"accelerators.csv, row h100-sxm, column hbm_bandwidth_tb_per_s: -3.35 is outside the plausible range \[0.01, 100\] TB/s"),
    (lambda d: d.with_columns(pl.when(pl.col("id") == "b200").then(pl.lit("fast")).otherwise(pl.col("tdp_w")).alias("tdp_w")),
     r"row b200, column tdp_w: 'fast' is not a number"),
    (lambda d: d.with_columns(pl.when(pl.col("id") == "mi300x").then(pl.lit("")).otherwise(pl.col("source")).alias("source")),
     r"row mi300x, column source: empty \(required\)"),
    (lambda d: pl.concat([d, d.head(1)]), r"row a100-80gb-sxm, column id: duplicate id"),
])
def test_broken_accelerator_table_fails_with_file_row_column(tmp_path, mutate, pattern):
    d = _copy(tmp_path)
    _edit(d / "accelerators.csv", mutate)
    with pytest.raises(DataError, match=pattern):
        load_catalog(d)


def test_user_data_dir_overrides_one_file(tmp_path):
    d = tmp_path
    shutil.copy(DEFAULT_DATA_DIR / "accelerators.csv", d / "accelerators.csv")
    _edit(d / "accelerators.csv", lambda df: df.with_columns(
        pl.when(pl.col("id") == "h100-sxm").then(pl.lit("96")).otherwise(pl.col("hbm_capacity_gib")).alias("hbm_capacity_gib")))
    cat = load_catalog(d)
    assert cat.accelerator("h100-sxm")["hbm_capacity_gib"] == 96
    assert cat.models.height == load_catalog().models.height  # other files fall back to the shipped ones


# ------------------------------------------------------------------------- calibration error tables (issue 9)

def test_calibration_error_tables_are_shipped_sourced_and_complete(catalog):
    """calibration_errors.csv has every family of the README's table, finite errors, P90 >= median, and the
    calibrated held-out error below the pure roofline's overall; calibration_predictions.csv has one row per
    included measurement and gives the same overall median."""
    import numpy as np

    from econ.tables.catalog import load_calibration_errors, load_calibration_predictions

    e, p = load_calibration_errors(), load_calibration_predictions()
    assert e.height >= 10 and p.height >= 400
    for t in (e, p):
        assert (t["source"].str.len_chars() > 5).all() and t["as_of"].null_count() == 0
        assert t["fit_date"].n_unique() == 1 and t["fit_date"][0] == catalog.calibration["fit_date"][0]
    fams = set(zip(e["by"].to_list(), e["family"].to_list()))
    want = {("all", "all"), ("family", "offline"), ("family", "server"), ("family", "interactive"),
            ("moe", "dense"), ("moe", "moe"), ("profile", "hopper-fp8"), ("profile", "blackwell-fp4")}
    assert want <= fams
    assert fams >= {("profile", q) for q in p["profile"].unique().to_list()}  # every profile with a case
    for s in ("cv", "roofline", "v1"):
        med, p90 = e[f"{s}_median_abs_error_frac"].to_numpy(), e[f"{s}_p90_abs_error_frac"].to_numpy()
        assert np.isfinite(med).all() and np.isfinite(p90).all() and (p90 >= med).all()
    every = e.filter(pl.col("by") == "all").row(0, named=True)
    assert every["cv_median_abs_error_frac"] < every["roofline_median_abs_error_frac"]
    counted = p.filter(pl.col("in_error_table"))
    assert counted.height == every["n_cases"] and counted["group_id"].n_unique() == every["n_groups"]
    assert counted["abs_error_frac"].median() == pytest.approx(every["cv_median_abs_error_frac"], rel=1e-4)
    r = counted["predicted_over_measured"].to_numpy()
    assert np.allclose(np.abs(r - 1), counted["abs_error_frac"].to_numpy(), rtol=1e-4, atol=1e-5)  # 6 digits
    fb = {r["family"]: r["fallback_from"] for r in e.filter(pl.col("by") == "profile").iter_rows(named=True)}
    cal_fb = dict(catalog.calibration.select("profile", "fallback_from").rows())
    assert all(fb[k] == cal_fb[k] for k in fb)


def test_calibration_error_tables_are_optional_and_validated(tmp_path, monkeypatch):
    """A data folder without them falls back to the shipped files; with no file anywhere the loaders give an
    empty frame with the schema's columns (no crash); a broken file names the row and column."""
    import econ.tables.catalog as catalog_module
    from econ.tables.catalog import (CALIBRATION_ERRORS_SCHEMA, CALIBRATION_PREDICTIONS_SCHEMA, load_calibration_errors,
                              load_calibration_predictions)

    assert load_calibration_errors(tmp_path).height > 0  # the shipped file
    monkeypatch.setattr(catalog_module, "DEFAULT_DATA_DIR", tmp_path / "nowhere")
    e, p = load_calibration_errors(tmp_path), load_calibration_predictions(tmp_path)
    assert e.height == 0 and e.columns == list(CALIBRATION_ERRORS_SCHEMA)
    assert p.height == 0 and p.columns == list(CALIBRATION_PREDICTIONS_SCHEMA)
    bad = pl.read_csv(DEFAULT_DATA_DIR / "calibration_errors.csv", infer_schema_length=0)
    bad.with_columns(cv_median_abs_error_frac=pl.when(pl.col("id") == "all").then(pl.lit("lots"))
                     .otherwise(pl.col("cv_median_abs_error_frac"))).write_csv(tmp_path / "calibration_errors.csv")
    with pytest.raises(DataError, match="row all, column cv_median_abs_error_frac"):
        load_calibration_errors(tmp_path)
    bad.with_columns(by=pl.lit("chip")).write_csv(tmp_path / "calibration_errors.csv")
    with pytest.raises(DataError, match="column by"):
        load_calibration_errors(tmp_path)
    preds = pl.read_csv(DEFAULT_DATA_DIR / "calibration_predictions.csv", infer_schema_length=0)
    preds.vstack(preds.head(1)).write_csv(tmp_path / "calibration_predictions.csv")
    with pytest.raises(DataError, match="duplicate id"):
        load_calibration_predictions(tmp_path)
