"""What the CLI prints: numbers as an analyst reads them, tables that fit the terminal, errors in flag words.

Known answers for econ.formatting (the one formatting module of the CLI and the dashboard), the table
renderer of econ/commands/_common.py at several widths, "did you mean" on mistyped flags, and the
translation of core field names into flags (econ.cli.cli_message).
"""

from __future__ import annotations

import math

import polars as pl
import pytest

from econ import formatting as f
from econ.cli import cli_message, main
from econ.commands._common import render, render_table


@pytest.mark.parametrize("column, value, shown", [
    ("capex_total_usd", 6.755e9, "$6.76B"),          # not "$6,755.0M"
    ("capex_total_usd", 69.2e6, "$69.2M"),
    ("training_cost_usd", 12_345.0, "$12.3K"),
    ("usd_per_gpu_hour", 3.074, "$3.07"),
    ("usd_per_m_output_tokens", 0.2563, "$0.256"),
    ("usd_per_m_output_tokens", 0.01331, "$0.0133"),
    ("usd_per_m_output_tokens", 33.193, "$33.19"),
    ("price_usd_per_m_blended_tokens", 0.025, "$0.0250"),
    ("peak_flop_per_s", 9.89e19, "98.9 EFLOP/s"),    # not 98,900,000,000,000,000,000
    ("realized_flop_per_s", 1.01e18, "1.01 EFLOP/s"),
    ("bf16_dense_tflop_per_s", 989.0, "989 TFLOP/s"),  # datasheet unit scaled to SI
    ("hbm_bandwidth_tb_per_s", 3.35, "3.35 TB/s"),
    ("hbm_capacity_gib", 80.0, "80 GiB"),
    ("checkpoint_bytes", 5.7e12, "5.70 TB"),
    ("it_power_mw", 1.54, "1.54 MW"),
    ("annual_energy_mwh", 13_200.0, "13.2 GWh"),
    ("rack_power_kw", 48.0, "48.0 kW"),
    ("hbm_used_frac", 0.4234, "42.3%"),
    ("tpot_s", 0.0194, "19.4 ms"),
    ("cluster_mtbf_h", 0.5, "30.0 min"),
    ("tokens_per_s_per_user", 27.71, "27.7"),
    ("output_tokens_per_s_per_gpu", 3383.2, "3,383"),
    ("serving_tokens_per_day", 212.7e9, "213B"),
    ("batch_size", 24764, "24,764"),
    ("training_flop", 3.8e25, "3.80e25 FLOP"),
    ("feasible", True, "yes"),
])
def test_cells_read_as_an_analyst_expects(column, value, shown):
    assert f.cell(column, value) == shown


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf])
def test_missing_is_a_dash_never_none(value):
    for column in ("capex_total_usd", "tpot_s", "usd_per_m_output_tokens", "name", "batch_size"):
        assert f.cell(column, value) == f.MISSING
    assert f.usd(value) == f.pct(value) == f.flops(value) == f.seconds(value) == f.MISSING


def test_compact_rounds_before_choosing_the_suffix():
    assert f.usd_compact(999_999) == "$1M" and f.compact(999_999) == "1M"


def _frame(n_cols: int = 14) -> pl.DataFrame:
    cols = {"hardware": ["h100-sxm", "b200", "mi300x"]}
    for i in range(n_cols):
        cols[f"usd_per_m_output_tokens_variant_{i}"] = [0.25 + i, None, 1e-3 * (i + 1)]
    cols["reason"] = ["a long explanation " * 8, None, "short"]
    return pl.DataFrame(cols)


@pytest.mark.parametrize("width", [60, 80, 100, 160])
def test_table_fits_the_terminal_width_and_repeats_the_key_column(width):
    import io
    buf = io.StringIO()
    frame = _frame()
    render_table(frame, buf, width=width)
    text = buf.getvalue()
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= width, [ln for ln in lines if len(ln) > width][:2]
    assert "None" not in text and "nan" not in text
    blocks = text.strip("\n").split("\n\n")
    assert all("hardware" in b.splitlines()[0] or "hardware" in b for b in blocks)
    assert all("h100-sxm" in b and "mi300x" in b for b in blocks)  # every block names the rows
    assert text.count("variant_") == 14  # no column is lost; long headers wrap after underscores
    assert "$0.25" in text and f.MISSING in text


def test_wrapped_headers_break_after_underscores():
    import io
    buf = io.StringIO()
    render_table(_frame(6), buf, width=70)
    header_words = " ".join(buf.getvalue().split())
    assert "usd_per_m_output_tokens_variant_0" not in buf.getvalue() or "variant_0" in header_words


def test_one_row_prints_name_value_lines(capsys):
    assert main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    assert "usd_per_m_output_tokens" in out and "$0." in out
    assert "None" not in out


def test_cluster_prints_compact_units(capsys):
    assert main(["cluster", "--hardware", "h100-sxm", "--gpus", "100000"]) == 0
    out = capsys.readouterr().out
    assert "EFLOP/s" in out and "000,000,000" not in out
    row = {ln.split()[0]: " ".join(ln.split()[1:]) for ln in out.splitlines() if ln.strip()}
    assert row["capex_total_usd"].startswith("$") and row["capex_total_usd"][-1] in "MB"


def test_csv_and_json_keep_stored_units(capsys):
    assert main(["cluster", "--hardware", "h100-sxm", "--gpus", "1024", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "EFLOP" not in out and "$" not in out


@pytest.mark.parametrize("argv, hint", [
    (["cost", "--model", "llama-3.1-8b", "--hardwre", "h100-sxm"], "did you mean --hardware?"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--utilisation", "0.5"],
     "did you mean --utilization?"),
    (["cots", "--model", "llama-3.1-8b"], "did you mean 'cost'"),
    (["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--precision", "fp16"], "did you mean"),
    (["optimize", "--model", "llama-3.1-8b", "--max-gpu", "8", "--min-tokens-per-s-per-usr", "20"],
     "did you mean --min-tokens-per-s-per-user?"),
])
def test_typos_get_suggestions(capsys, argv, hint):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert hint in capsys.readouterr().err


@pytest.mark.parametrize("core, cli", [
    ("precision='fp4' is not supported in hardware by h100-sxm; first bad row 0",
     "--precision='fp4' is not supported in hardware by h100-sxm"),
    ("hardware=tpu-v5p has no all_in_capex_usd (it is not sold; use basis=rental); first bad row 3 of 10",
     "--hardware=tpu-v5p has no all_in_capex_usd (it is not sold; use --rental)"),
    ("output file 'x.csv' exists; not overwriting it (use force=True)",
     "output file 'x.csv' exists; not overwriting it (use --force)"),
    ("num_gpus=3 is outside [1, 8]", "--gpus=3 is outside [1, 8]"),
    ("cache_hit_frac=2 is outside [0, 1]", "--cache-hit-rate=2 is outside [0, 1]"),
    ("column usd_per_kwh=x", "column --usd-per-kwh=x"),
])
def test_core_messages_speak_in_flags(core, cli):
    assert cli_message(core) == cli


def test_a_field_is_renamed_only_to_a_flag_the_command_has():
    assert cli_message("pue=9 is outside [1, 3]", {"--model"}) == "pue=9 is outside [1, 3]"
    assert cli_message("pue=9 is outside [1, 3]", {"--pue"}) == "--pue=9 is outside [1, 3]"


def test_cli_errors_from_the_core_carry_no_internals(capsys):
    code = main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--precision", "fp4"])
    err = capsys.readouterr().err
    assert code == 2 and "--precision" in err and "first bad row" not in err


def test_progress_is_silent_off_a_terminal(capsys):
    from econ.commands._common import progress
    with progress("Searching", total=3) as advance:
        for _ in range(3):
            advance()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_render_table_format_flag_dispatch(capsys):
    frame = pl.DataFrame({"hardware": ["a", "b"], "capex_total_usd": [6.755e9, None]})
    render(frame, "table")
    out = capsys.readouterr().out
    assert "$6.76B" in out and "None" not in out and f.MISSING in out
