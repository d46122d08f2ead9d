"""Data rules at load (issue 21, part 4): each corruption the reliability run found accepted is refused with the file,
the row and the column: a duplicated alias in model_aliases.csv (the last row won: an 8B price checked against the
70B floor), an empty alias source, calibration.csv with p10 > p90 (band low above the point above the high), a
missing calibration profile (assumed efficiencies without a band or a word), a fallback_from naming no profile, a
negative measurement, unknown hardware in measurements.csv (no file or row named), native_weight_dtype = fp3.
"""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from econ.cli import main
from econ.errors import DataError
from econ.tables.catalog import DEFAULT_DATA_DIR, TABLES, load_calibration, load_catalog
from econ.tables.litellm import load_aliases
from econ.tables import measured


@pytest.fixture()
def data_dir(tmp_path):
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    for f in ("model_aliases.csv", "calibration.csv", "measurements.csv"):
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    return tmp_path


def _edit(path, fn):
    df = pl.read_csv(path, infer_schema=False)
    fn(df).write_csv(path)


def test_a_duplicated_alias_is_refused_naming_both_rows(data_dir):
    path = data_dir / "model_aliases.csv"
    df = pl.read_csv(path, infer_schema=False)
    first = df.row(0, named=True)
    dup = {**first, "alias": first["alias"].upper(), "model": "llama-3.1-8b"}
    pl.concat([df, pl.DataFrame([dup])]).write_csv(path)
    cat = load_catalog(data_dir)
    with pytest.raises(DataError, match=rf"model_aliases\.csv, row {first['alias'].upper()}, column alias: the same "
                                        rf"name as row {first['alias']}"):
        load_aliases(cat)


def test_an_exact_duplicate_alias_is_refused(data_dir):
    path = data_dir / "model_aliases.csv"
    df = pl.read_csv(path, infer_schema=False)
    pl.concat([df, df.head(1)]).write_csv(path)
    with pytest.raises(DataError, match=r"model_aliases\.csv, row .*, column alias: duplicate id"):
        load_aliases(load_catalog(data_dir))


def test_an_empty_alias_source_is_refused(data_dir):
    path = data_dir / "model_aliases.csv"
    _edit(path, lambda d: d.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("source"))
                                         .alias("source")))
    alias = pl.read_csv(path, infer_schema=False)["alias"][3]
    with pytest.raises(DataError, match=rf"model_aliases\.csv, row {alias}, column source: empty \(required\)"):
        load_aliases(load_catalog(data_dir))


def test_the_cli_names_the_alias_file_row_and_column(data_dir, tmp_path, capsys):
    path = data_dir / "model_aliases.csv"
    df = pl.read_csv(path, infer_schema=False)
    pl.concat([df, df.head(1)]).write_csv(path)
    js = tmp_path / "l.json"
    js.write_text('{"together_ai/x": {"litellm_provider": "together_ai", "mode": "chat", "input_cost_per_token": 1e-7,'
                  ' "output_cost_per_token": 2e-7}}')
    assert main(["quotes", "import", "--litellm", str(js), "--data-dir", str(data_dir)]) == 2
    err = capsys.readouterr().err
    assert "model_aliases.csv, row" in err and "column alias" in err


def _cal(data_dir, fn):
    _edit(data_dir / "calibration.csv", fn)


def test_a_band_out_of_order_is_refused(data_dir):
    _cal(data_dir, lambda d: d.with_columns(pl.when(pl.col("profile") == "hopper-fp8").then(pl.lit("0.5"))
                                            .otherwise(pl.col("log_ratio_p10")).alias("log_ratio_p10")))
    with pytest.raises(DataError, match=r"calibration\.csv, row hopper-fp8, column log_ratio_p10: 0\.5 is above "
                                        r"log_ratio_p90 = .*\(valid: p10 <= p90\)"):
        load_calibration(data_dir)
    with pytest.raises(DataError, match="column log_ratio_p10"):
        load_catalog(data_dir)


def test_a_missing_profile_is_refused(data_dir):
    _cal(data_dir, lambda d: d.filter(pl.col("profile") != "hopper-bf16"))
    with pytest.raises(DataError, match=r"calibration\.csv, row hopper-bf16, column profile: missing"):
        load_calibration(data_dir)


def test_a_dangling_fallback_is_refused(data_dir):
    _cal(data_dir, lambda d: d.with_columns(pl.when(pl.col("profile") == "ampere-bf16").then(pl.lit("hopper-fp16"))
                                            .otherwise(pl.col("fallback_from")).alias("fallback_from")))
    with pytest.raises(DataError, match=r"calibration\.csv, row ampere-bf16, column fallback_from: 'hopper-fp16' is "
                                        r"not a profile"):
        load_calibration(data_dir)


def test_the_cli_refuses_a_broken_calibration_table(data_dir, capsys):
    _cal(data_dir, lambda d: d.filter(pl.col("profile") != "hopper-fp8"))
    assert main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--data-dir", str(data_dir)]) == 2
    assert "calibration.csv, row hopper-fp8, column profile: missing" in capsys.readouterr().err


def test_native_weight_dtype_outside_the_formats_is_refused(data_dir):
    _edit(data_dir / "models.csv", lambda d: d.with_columns(
        pl.when(pl.col("id") == "llama-3.1-8b").then(pl.lit("fp3")).otherwise(pl.col("native_weight_dtype"))
        .alias("native_weight_dtype")))
    with pytest.raises(DataError, match=r"models\.csv, row llama-3\.1-8b, column native_weight_dtype: 'fp3' not in"):
        load_catalog(data_dir)


def _first_included(data_dir):
    df = pl.read_csv(data_dir / "measurements.csv", infer_schema=False)
    return df.filter(pl.col("include").str.to_lowercase() == "true")["case_id"][0]


@pytest.mark.parametrize("column", ["value", "output_tokens_per_s_per_gpu"])
def test_a_negative_measurement_is_refused(data_dir, column, capsys):
    case = _first_included(data_dir)
    _edit(data_dir / "measurements.csv", lambda d: d.with_columns(
        pl.when(pl.col("case_id") == case).then(pl.lit("-5")).otherwise(pl.col(column)).alias(column)))
    with pytest.raises(DataError, match=rf"measurements\.csv, case {case}, column {column}: '-5' is not a number > 0"):
        measured.load(data_dir)
    from econ.analyses.calibration import load_measurements
    with pytest.raises(DataError, match=rf"measurements\.csv, case {case}, column {column}: -5 must be > 0"):
        load_measurements(data_dir / "measurements.csv")


def test_unknown_hardware_in_measurements_names_file_and_row(data_dir, capsys):
    case = _first_included(data_dir)
    _edit(data_dir / "measurements.csv", lambda d: d.with_columns(
        pl.when(pl.col("case_id") == case).then(pl.lit("h100-sxn")).otherwise(pl.col("hardware")).alias("hardware")))
    code = main(["calibrate", "--data-dir", str(data_dir), "--check"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"measurements.csv, case {case}, column hardware: unknown hardware id 'h100-sxn'" in err
