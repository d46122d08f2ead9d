"""The quotes file: reading and validating it (econ/tables/quote_files.py; `econ quotes check --file`, the dashboard upload).

Known answers: every problem of a file in one DataError, as ``file, row <quote_id>, column <col>: reason`` (bad cells,
unknown ids with the closest ones, contradicting formats, a cached price above the uncached one); the weight-format
rule fills an empty ``weight_format``; an XLSX upload reads back equal to the CSV; the size and row limits hold.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import polars as pl
import pytest

from econ.errors import DataError
from econ.tables.catalog import DEFAULT_DATA_DIR, load_catalog
from econ.tables.quote_files import (MAX_QUOTE_FILE_BYTES, MAX_QUOTE_ROWS, QUOTE_SCHEMA, load_quotes, read_quotes,
                                     validate_quotes)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quote_rows import quote_row as _q, raw_quotes as _raw  # noqa: E402  (tests/tables/quote_rows.py)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_shipped_quotes_file_has_sources():
    raw = pl.read_csv(DEFAULT_DATA_DIR / "quotes.csv", infer_schema=False)
    assert raw.height == 116 and raw.columns == list(QUOTE_SCHEMA)
    assert raw["source"].is_not_null().all() and raw["as_of"].is_not_null().all()


# ------------------------------------------------------------------------------------------ bad input

def _one_error(catalog, raw, match):
    with pytest.raises(DataError, match=match):
        validate_quotes(raw, catalog, "quotes.csv")


def test_missing_column(catalog):
    _one_error(catalog, _raw([_q()]).drop("usd_per_m_output_tokens"),
               r"quotes\.csv: missing column\(s\) \['usd_per_m_output_tokens'\].*required")


def test_unknown_column(catalog):
    _one_error(catalog, _raw([_q()]).with_columns(pl.lit("x").alias("usd_per_m_outptu_tokens")),
               r"unknown column\(s\) \['usd_per_m_outptu_tokens'\] \(misspelled\?\)")


def test_optional_columns_may_be_absent(catalog):
    raw = _raw([_q(), _q("q2")]).select("provider", "model", "usd_per_m_input_tokens", "usd_per_m_output_tokens")
    q = validate_quotes(raw, catalog)
    assert q["quote_id"].to_list() == ["quote-1", "quote-2"]


def test_non_numeric_and_negative_prices_listed_together(catalog):
    raw = _raw([_q("q1"), _q("q2"), _q("q3")]).with_columns(
        pl.Series("usd_per_m_input_tokens", ["abc", "-0.5", "0.1"]), pl.Series("usd_per_m_output_tokens", ["1", "1", "0"]))
    with pytest.raises(DataError) as exc:
        validate_quotes(raw, catalog, "quotes.csv")
    msg = str(exc.value)
    assert "3 problem(s)" in msg
    assert "row q1, column usd_per_m_input_tokens: 'abc' is not a number" in msg
    assert re.search(r"row q2, column usd_per_m_input_tokens: -0\.5 is outside \(0, 10000\]", msg)
    assert re.search(r"row q3, column usd_per_m_output_tokens: 0 is outside \(0, 10000\]", msg)


def test_unknown_model_lists_closest_ids_and_rows(catalog):
    raw = _raw([_q("q1", model="llama-3-70b"), _q("q2", model="llama-3-70b"), _q("q3", model="deepsek-v3")])
    with pytest.raises(DataError) as exc:
        validate_quotes(raw, catalog, "quotes.csv")
    msg = str(exc.value)
    assert re.search(r"row\(s\) q1, q2, column model: unknown model id 'llama-3-70b'; closest: .*llama-3\.1-70b", msg)
    assert re.search(r"row\(s\) q3, column model: unknown model id 'deepsek-v3'; closest: deepseek-v3", msg)


def test_unknown_model_and_bad_price_in_one_error(catalog):
    raw = _raw([_q("q1", model="nope-model"), _q("q2", p_in=-1.0)])
    with pytest.raises(DataError, match=r"(?s)q2, column usd_per_m_input_tokens.*q1, column model: unknown model id"):
        validate_quotes(raw, catalog, "quotes.csv")


def test_too_many_rows(catalog):
    raw = pl.concat([_raw([_q()])] * (MAX_QUOTE_ROWS + 1))
    _one_error(catalog, raw, r"quotes\.csv: 10,001 rows; at most 10,000 quotes per file")


def test_duplicate_quote_id_and_bad_quantization(catalog):
    raw = _raw([_q("q1"), _q("q1", quantization="q3_k_m")])
    with pytest.raises(DataError) as exc:
        validate_quotes(raw, catalog, "quotes.csv")
    assert "row q1, column quote_id: duplicate id" in str(exc.value)
    assert "column quantization: 'q3_k_m' is not one of" in str(exc.value)


def test_unreadable_and_missing_files(catalog, tmp_path):
    with pytest.raises(DataError, match="file not found"):
        read_quotes(tmp_path / "nope.csv", catalog)
    with pytest.raises(DataError, match=r"upload\.csv: missing column"):
        read_quotes(b"a,b\n1,2\n", catalog, name="upload.csv")


def test_xlsx_upload_round_trip(catalog):
    typed = pl.read_csv(DEFAULT_DATA_DIR / "quotes.csv").head(12)
    buf = io.BytesIO()
    typed.write_excel(buf)
    from_xlsx = read_quotes(buf.getvalue(), catalog, name="quotes.xlsx")
    from_csv = load_quotes(catalog).head(12)
    assert from_xlsx.equals(from_csv)


def test_file_size_limit(catalog, tmp_path):
    with pytest.raises(DataError, match=r"big\.csv: 20\.0 MB; at most 20 MB"):
        read_quotes(b"x" * (MAX_QUOTE_FILE_BYTES + 1), catalog, name="big.csv")


# ------------------------------------------------------------------------------------------ issue 10: bad input

def test_unknown_provider_hardware_lists_catalog_and_systems(catalog):
    with pytest.raises(DataError, match=r"row\(s\) q1, column hardware: unknown hardware id 'groq'; closest: groq-lpu"):
        validate_quotes(_raw([_q(hardware="groq")]), catalog)


def test_cached_price_above_the_uncached_one_is_refused(catalog):
    with pytest.raises(DataError, match=r"row q1, column usd_per_m_cached_input_tokens: 0\.6 is above the uncached "
                                        r"usd_per_m_input_tokens 0\.5"):
        validate_quotes(_raw([_q(p_in=0.5, usd_per_m_cached_input_tokens=0.6)]), catalog)


@pytest.mark.parametrize("col, value, match", [
    ("usd_per_m_input_tokens", "nan", r"column usd_per_m_input_tokens: nan is not finite"),
    ("usd_per_m_output_tokens", "-2", r"column usd_per_m_output_tokens: -2 is outside \(0, 10000\]"),
    ("output_tokens_per_s_per_user", "0", r"column output_tokens_per_s_per_user: 0 is outside \(0, 100000\]"),
    ("output_tokens_per_s_per_user", "-5", r"column output_tokens_per_s_per_user: -5 is outside \(0, 100000\]"),
])
def test_bad_cells_of_a_quotes_file(catalog, col, value, match):
    raw = _raw([_q()]).with_columns(pl.lit(value).alias(col))
    with pytest.raises(DataError, match=match):
        validate_quotes(raw, catalog)


def test_stated_quantization_that_contradicts_the_weight_format(catalog):
    with pytest.raises(DataError, match=r"column weight_format: 'bf16' contradicts the stated quantization 'fp8'"):
        validate_quotes(_raw([_q(quantization="fp8", weight_format="bf16")]), catalog)


def test_missing_optional_columns_get_the_rule(catalog):
    raw = _raw([_q(provider_model_name="Qwen2.5-72B-Instruct-Turbo", model="qwen2.5-72b")]).select(
        "provider", "model", "provider_model_name", "usd_per_m_input_tokens", "usd_per_m_output_tokens")
    q = validate_quotes(raw, catalog)
    assert (q["weight_format"][0], q["weight_format_basis"][0], q["hardware"][0]) == ("fp8", "slug-turbo", None)


# ------------------------------------------------------------------------------------------ provider speeds (issue 18.3)

def test_provider_speeds_table_is_sourced_and_written_into_quotes(catalog):
    """data/provider_speeds.csv is the one sourced table of speeds and stated formats; quotes.csv carries it."""
    import importlib.util

    from econ.tables.quote_files import SPEED_KINDS, load_provider_speeds
    sp = load_provider_speeds()
    speeds = sp.filter(pl.col("output_tokens_per_s_per_user").is_not_null())
    assert speeds.height >= 21 and set(speeds["speed_kind"]) <= set(SPEED_KINDS)
    assert (sp["source"].str.len_chars() > 20).all()
    shipped = load_quotes(catalog)
    assert set(sp["quote_id"]) <= set(shipped["quote_id"])
    by = dict(shipped.select("quote_id", "output_tokens_per_s_per_user").iter_rows())
    for qid, v in speeds.select("quote_id", "output_tokens_per_s_per_user").iter_rows():
        assert by[qid] == v, qid
    # the research pass's corrections: Groq's pricing page gives 394 for Llama-3.3-70B (560 was a secondary figure)
    assert by["groq-llama-3.3-70b"] == 394 and by["cerebras-llama-3.3-70b"] == 2100
    assert by["aws-bedrock-llama-3.1-405b"] is None  # 340 t/s with a 76 s first token: doubtful, left out
    spec = importlib.util.spec_from_file_location("uqs", Path(__file__).resolve().parents[2] / "scripts" /
                                                  "update_quote_speeds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--check"]) == 0  # quotes.csv equals the table's columns


def test_fp8_release_rule_serves_llama_405b_in_fp8(catalog):
    q = load_quotes(catalog).filter(pl.col("model") == "llama-3.1-405b")
    assert (q["weight_format"] == "fp8").all() and (q["reference_precision"] == "fp8").all()
    assert set(q["weight_format_basis"]) == {"fp8-release", "provider-stated"}
    raw = _raw([_q(model="llama-3.1-405b", provider_model_name="meta-llama/Llama-3.1-405B-Instruct")]).drop(
        "weight_format", "weight_format_basis")
    one = validate_quotes(raw, catalog)
    assert (one["weight_format"][0], one["weight_format_basis"][0]) == ("fp8", "fp8-release")


def test_bad_provider_speed_rows_are_named(tmp_path):
    from econ.tables.quote_files import load_provider_speeds
    text = (DEFAULT_DATA_DIR / "provider_speeds.csv").read_text().splitlines()
    header = text[0]
    (tmp_path / "provider_speeds.csv").write_text(
        header + "\nq1,50,,rumour,,,,https://example.com/x (a page),2026-01,\nq2,60,,,,,,https://example.com/y (a page),2026-01,\n")
    with pytest.raises(DataError, match=r"row q1, column speed_kind: 'rumour' not in .*\n.*row q2, column speed_kind: "
                                        r"empty for a speed"):
        load_provider_speeds(tmp_path)


def test_fp8_of_a_block_scaled_release_is_that_release_unless_given_bare(catalog):
    """DeepSeek "in FP8" by the rule, a provider statement or a stated quantization is its 128 x 128 block-scaled
    release (fp8_block); a weight format a user writes without a basis is taken as written (fp8 = per-tensor); a
    bf16 release's fp8 stays fp8."""
    raw = _raw([_q("rule", model="deepseek-v3"), _q("stated", model="deepseek-v3", quantization="fp8"),
                _q("given", model="deepseek-v3", weight_format="fp8"), _q("llama", quantization="fp8"),
                _q("block", model="deepseek-r1", weight_format="fp8_block")])
    q = validate_quotes(raw, catalog)
    got = dict(zip(q["quote_id"], zip(q["weight_format"], q["weight_format_basis"], q["reference_precision"])))
    assert got == {"rule": ("fp8_block", "native", "fp8"), "stated": ("fp8_block", "stated", "fp8"),
                   "given": ("fp8", "given", "fp8"), "llama": ("fp8", "stated", "fp8"),
                   "block": ("fp8_block", "given", "fp8")}
