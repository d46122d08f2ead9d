"""``econ sensitivity cost|quote|site`` (issue 18.5): the tornado and Monte Carlo band on the command line."""

import io
import json

import polars as pl
import pytest

from econ.cli import main


def _run(capsys, *argv):
    code = main(["sensitivity", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cost_table_names_the_answer_the_bars_and_the_band(capsys):
    code, out, _ = _run(capsys, "cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--samples", "50")
    assert code == 0
    # the point is econ cost's answer at the floor (the one search's cheapest all-in unit), whatever the fit
    from econ.analyses.sensitivity import cost_sensitivity
    from econ.commands.sensitivity import _answer
    from econ.tables.catalog import load_catalog
    r = cost_sensitivity(load_catalog(), model="llama-3.3-70b", hardware="h100-sxm", samples=0)
    st = r.setup
    assert out.startswith(f"llama-3.3-70b on h100-sxm: fp8, {st['layout']}, batch {st['batch_size']}, 25 tokens/s per "
                          f"user, owned tier\n$/M output tokens: {_answer(r, r.point)}\n")
    for label in ("Utilization", "Efficiency (calibration band)", "Capex", "Minimum tokens/s per user"):
        assert label in out
    assert "Monte Carlo, 50 samples (seed 18): p5 $" in out


def test_cost_json_and_csv_keep_stored_units(capsys):
    code, out, _ = _run(capsys, "cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--samples", "20",
                        "--format", "json", "--range", "utilization_frac=0.6:0.8")
    rec = json.loads(out)
    assert code == 0 and rec["answer"] == "cost" and rec["monte_carlo"]["samples"] == 20
    u = next(r for r in rec["tornado"] if r["assumption"] == "utilization_frac")
    assert (u["low"], u["high"], u["source"]) == (0.6, 0.8, "your range")
    assert [p["percentile"] for p in rec["monte_carlo"]["percentiles"]] == [5.0, 10.0, 50.0, 90.0, 95.0]
    code, out, _ = _run(capsys, "cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--samples", "0",
                        "--format", "csv", "--tco", "on-demand")
    frame = pl.read_csv(io.StringIO(out))
    assert code == 0 and frame["section"].to_list()[0] == "point"
    assert "pue" not in frame["name"].to_list()  # a rental rate has no PUE in it


def test_quote_and_site(capsys):
    code, out, _ = _run(capsys, "quote", "--quote", "together-llama-3.3-70b-turbo", "--samples", "0")
    assert code == 0 and out.startswith("together-llama-3.3-70b-turbo at $1.04/M blended, floor on ")
    assert "\nblended gross margin: " in out
    code, out, _ = _run(capsys, "site", "--hardware", "h100-sxm", "--model", "llama-3.3-70b", "--power-mw", "100",
                        "--samples", "0", "--demand-share", "0.5")
    assert code == 0 and "50% of the capacity sold" in out and "Selling price" in out
    assert "\nsimple payback: " in out


@pytest.mark.parametrize("argv, pattern", [
    (["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--range", "pue=1.5:1.2"],
     r"sensitivity range of pue: low=1.5 is above high=1.2 \(valid: low <= high, both in \[1, 3\]"),
    (["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--range", "pue"], "is not NAME=LOW:HIGH"),
    (["site", "--hardware", "h100-sxm", "--model", "llama-3.3-70b", "--power-mw", "100", "--demand-share", "0"],
     r"--demand-share=0 is outside \(0, 1\]"),
    (["site", "--hardware", "h100-sxm", "--model", "llama-3.3-70b", "--power-mw", "100", "--demand-share", "2"],
     r"--demand-share=2 is outside \(0, 1\]"),
    (["cost", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--samples", "100000"], r"samples=100000"),
    (["quote", "--quote", "nope"], "quote_id='nope' is not in the quotes"),
])
def test_bad_input_exits_2_naming_field_value_and_range(capsys, argv, pattern):
    import re
    code, _, err = _run(capsys, *argv)
    assert code == 2 and re.search(pattern, err), err
