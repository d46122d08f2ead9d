"""Data consistency at load (issue 12, findings 5, 8 and the data parts of 9): every seeded corruption of the
shipped tables is refused with file, row id, column, value and valid range, counted per rule; normal edits
(a trailing blank line, a notes column) load; a folder named like a table is an error; tables are bounded.
"""

from __future__ import annotations

import shutil
import warnings

import polars as pl
import pytest

from econ.tables.catalog import DEFAULT_DATA_DIR, TABLES, load_catalog, validate_table
from econ.cli import main
from econ.errors import DataError
from econ.tables.rules import PLAUSIBLE, ROW_RULES, DataWarning
from econ.tables.uploads import MAX_TABLE_ROWS


@pytest.fixture()
def data_dir(tmp_path):
    for f, _, _ in TABLES.values():
        shutil.copy(DEFAULT_DATA_DIR / f, tmp_path / f)
    return tmp_path


def _set(path, row_id, column, value, id_col="id"):
    df = pl.read_csv(path, infer_schema=False)
    df = df.with_columns(pl.when(pl.col(id_col) == row_id).then(pl.lit(value, pl.String)).otherwise(pl.col(column))
                         .alias(column))
    df.write_csv(path)


CORRUPTIONS = [
    # (file, row, column, value, expected message) -- the cases of issue 12 finding 5, then more
    ("models.csv", "deepseek-v3", "kv_lora_rank", "",
     r"models\.csv, row deepseek-v3, column kv_lora_rank: None \(valid: a whole number >= 1 .*\) "
     r"\[rule: mla rows need kv_lora_rank\]"),
    ("models.csv", "mixtral-8x7b", "experts_per_token", "16",
     r"row mixtral-8x7b, column experts_per_token: 16 \(valid: \[0, 8\] \(num_experts\)\) "
     r"\[rule: experts_per_token <= num_experts\]"),
    ("models.csv", "llama-3.1-8b", "num_kv_heads", "64",
     r"row llama-3.1-8b, column num_kv_heads: 64 \(valid: a divisor of num_attention_heads = 32"),
    ("models.csv", "llama-3.1-8b", "num_kv_heads", "5", r"column num_kv_heads: 5 .*divides num_attention_heads"),
    ("models.csv", "llama-3.3-70b", "total_params_b", "1e-09",
     r"row llama-3.3-70b, column total_params_b: 1e-09 \(valid: 70\.5\d* B \+- 3% \(counted from the architecture"),
    ("models.csv", "llama-3.3-70b", "total_params_b", "80",
     r"row llama-3.3-70b, column total_params_b: 80 \(valid: 70\.5\d* B \+- 3%"),
    ("models.csv", "gpt-oss-120b", "num_sliding_layers", "40",
     r"row gpt-oss-120b, column num_sliding_layers: 40 \(valid: \[0, 36\] \(num_layers\)\)"),
    ("models.csv", "gpt-oss-120b", "sliding_window_tokens", "",
     r"column sliding_window_tokens: None .*\[rule: sliding layers need sliding_window_tokens\]"),
    ("models.csv", "llama-3.1-8b", "active_params_b", "9",
     r"column active_params_b: 9 \(valid: <= total_params_b = 8\.03\)"),
    ("models.csv", "deepseek-v3", "qk_rope_head_dim", "", r"\[rule: mla rows need qk_rope_head_dim\]"),
    ("models.csv", "mixtral-8x7b", "moe_intermediate_size", "0", r"\[rule: moe rows need moe_intermediate_size\]"),
    ("models.csv", "llama-3.1-8b", "as_of", "2024-13-45",
     r"row llama-3.1-8b, column as_of: '2024-13-45' is not YYYY\[-MM\[-DD\]\] \(optional ~\), a real calendar date"),
    ("models.csv", "llama-3.1-8b", "as_of", "2023-02-29", r"'2023-02-29' is not YYYY"),
    ("accelerators.csv", "h100-sxm", "hbm_bandwidth_tb_per_s", "1e-300",
     r"row h100-sxm, column hbm_bandwidth_tb_per_s: 1e-300 is outside the plausible range \[0\.01, 100\] TB/s"),
    ("accelerators.csv", "h100-sxm", "bf16_dense_tflop_per_s", "1e-6",
     r"column bf16_dense_tflop_per_s: 1e-06 is outside the plausible range \[0\.1, 100000\] TFLOP/s"),
    ("accelerators.csv", "h100-sxm", "tdp_w", "0.001", r"column tdp_w: 0\.001 is outside the plausible range"),
    ("accelerators.csv", "h100-sxm", "all_in_power_w", "500",
     r"column all_in_power_w: 500 \(valid: >= tdp_w = 700"),
    ("accelerators.csv", "h100-sxm", "rental_usd_per_hour", "0.0001",
     r"column rental_usd_per_hour: 0\.0001 is outside the plausible range \[0\.01, 1000\] USD/h"),
    ("accelerators.csv", "h100-sxm", "as_of", "2024-02-30", r"column as_of: '2024-02-30' is not YYYY"),
    ("accelerators.csv", "h100-sxm", "display_name", "H100\x00SXM",
     r"row h100-sxm, column display_name: 'H100\\x00SXM' holds a control character"),
    ("accelerators.csv", "b200", "notes", "bell\x07", r"row b200, column notes: .* holds a control character"),
    ("power_prices.csv", None, "usd_per_kwh", "1e-9", r"column usd_per_kwh: 1e-09 is outside the plausible range"),
    ("facilities.csv", None, "pue", "4.5", r"column pue: 4\.5 is outside the plausible range \[1, 3\]"),
]


@pytest.mark.parametrize("fname, row, column, value, pattern", CORRUPTIONS,
                         ids=[f"{c[0].split('.')[0]}-{c[2]}={c[3]!r}" for c in CORRUPTIONS])
def test_corruption_is_refused_naming_file_row_column_value_and_range(data_dir, fname, row, column, value, pattern):
    id_col = next(i for f, _, i in TABLES.values() if f == fname)
    if row is None:
        row = pl.read_csv(data_dir / fname, infer_schema=False)[id_col][0]
    _set(data_dir / fname, row, column, value, id_col)
    with pytest.raises(DataError, match=pattern):
        load_catalog(data_dir)


def test_failures_are_counted_per_rule(data_dir):
    for m in ("mixtral-8x7b", "mixtral-8x22b"):
        _set(data_dir / "models.csv", m, "experts_per_token", "16")
    _set(data_dir / "models.csv", "llama-3.1-8b", "as_of", "2024-13-45")
    with pytest.raises(DataError) as e:
        load_catalog(data_dir)
    head = str(e.value).splitlines()[0]
    assert head.startswith("models.csv: 3 problem(s) (per rule: ")
    assert "experts_per_token <= num_experts: 2" in head and "as_of is an ISO date: 1" in head


def test_the_shipped_data_passes_every_rule():
    cat = load_catalog()
    assert cat.models.height and cat.accelerators.height  # loading ran every rule
    assert {r.table for r in ROW_RULES} <= set(TABLES) and set(PLAUSIBLE) <= set(TABLES)


def test_the_bandwidth_typo_no_longer_reaches_the_cli(data_dir, capsys):
    """Finding 5: 1e-300 TB/s printed a TPOT of 3.2e297 s on a 'feasible' row; now the table is refused."""
    _set(data_dir / "accelerators.csv", "h100-sxm", "hbm_bandwidth_tb_per_s", "1e-300")
    code = main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--data-dir", str(data_dir)])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "plausible range" in err and "Traceback" not in err


# ----------------------------------------------------------------------------------------- normal edits (finding 8)

@pytest.mark.parametrize("tail", ["\n", "\n\n\n", "\r\n", ",,,\n", "   \n"], ids=["blank", "blanks", "crlf",
                                                                             "commas", "spaces"])
def test_trailing_blank_lines_are_a_normal_edit(data_dir, tail):
    p = data_dir / "accelerators.csv"
    p.write_bytes(p.read_bytes() + tail.encode())
    cat = load_catalog(data_dir)
    assert cat.accelerators.height == load_catalog().accelerators.height


def test_an_extra_notes_column_is_kept_warned_and_ignored(data_dir, capsys):
    p = data_dir / "accelerators.csv"
    df = pl.read_csv(p, infer_schema=False).with_columns(pl.lit("bought 2024").alias("my_notes"))
    df.write_csv(p)
    with pytest.warns(DataWarning, match=r"accelerators\.csv: column\(s\) 'my_notes' not in the schema; kept in the "
                                         r"file, ignored"):
        cat = load_catalog(data_dir)
    assert "my_notes" not in cat.accelerators.columns
    assert cat.accelerators.drop_nulls("id").height == load_catalog().accelerators.height
    assert "my_notes" in pl.read_csv(p, infer_schema=False).columns  # the user's file is untouched
    assert main(["list", "hardware", "--data-dir", str(data_dir)]) == 0
    err = capsys.readouterr().err
    assert err.count("econ: warning: accelerators.csv: column(s) 'my_notes' not in the schema") == 1


def test_a_folder_named_like_a_table_is_an_error_not_a_fallback(tmp_path, capsys):
    (tmp_path / "accelerators.csv").mkdir()
    with pytest.raises(DataError, match=r"accelerators\.csv: is a folder, not a CSV file"):
        load_catalog(tmp_path)
    assert main(["list", "hardware", "--data-dir", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err


@pytest.mark.parametrize("make, pattern", [
    pytest.param(lambda d: d / ("d" * 300), r"data folder .*: cannot be read \(the file name is longer", id="long"),
    pytest.param(lambda d: d / "nope", r"data folder .*nope does not exist", id="missing"),
    pytest.param(lambda d: (d / "file").write_text("x") or d / "file", r"does not exist", id="a-file"),
])
def test_bad_data_dir_is_one_line(tmp_path, capsys, make, pattern):
    assert main(["list", "models", "--data-dir", str(make(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    import re
    assert re.search(pattern, err), err


# ----------------------------------------------------------------------------------------- bounded tables

def test_row_cap_stops_reading(data_dir):
    p = data_dir / "facilities.csv"
    df = pl.read_csv(p, infer_schema=False)
    big = pl.concat([df] * (MAX_TABLE_ROWS // df.height + 2)).with_columns(
        pl.format("f-{}", pl.int_range(0, pl.len())).alias("id"))
    big.write_csv(p)
    with pytest.raises(DataError, match=rf"facilities\.csv: more than {MAX_TABLE_ROWS:,} rows"):
        load_catalog(data_dir)


def test_oversized_table_is_refused_before_parsing(data_dir):
    p = data_dir / "facilities.csv"
    with open(p, "ab") as fh:
        fh.truncate(30_000_000)  # a sparse 30 MB file: refused from its size alone
    with pytest.raises(DataError, match=r"facilities\.csv: 30\.0 MB; at most 20 MB"):
        load_catalog(data_dir)


def test_validate_table_is_the_one_place_for_uploads_too():
    """An upload name ('uploaded accelerators.csv') still gets the accelerator rules (table found by schema)."""
    _, schema, id_col = TABLES["accelerators"]
    raw = pl.read_csv(DEFAULT_DATA_DIR / "accelerators.csv", infer_schema=False).head(1).with_columns(
        pl.lit("1e-300").alias("hbm_bandwidth_tb_per_s"))
    with pytest.raises(DataError, match=r"uploaded accelerators\.csv, row .*plausible range"):
        validate_table(raw, schema, id_col, "uploaded accelerators.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert validate_table(raw.with_columns(pl.lit("3.35").alias("hbm_bandwidth_tb_per_s")), schema, id_col,
                              "x.csv").height == 1
