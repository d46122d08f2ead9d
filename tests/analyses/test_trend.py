"""``econ trend`` (issue 22.4): $/M tokens by generation from the one search, projections apart."""

from __future__ import annotations

import json
from dataclasses import replace

import polars as pl
import pytest

from econ.analyses.compare import hardware_comparison
from econ.analyses.trend import LINEUPS, trend
from econ.assumptions import DEFAULT
from econ.cli import main
from econ.errors import InvalidInputError, UnknownIdError
from econ.tables.catalog import load_catalog
from econ.tables.roadmap import load_roadmap, with_projections

MODEL = "llama-3.1-8b"
COST = "usd_per_m_output_tokens_all_in"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def amd(catalog):
    return trend(catalog, model=MODEL, vendor="amd")


def test_catalog_rows_are_the_hardware_comparison_answers(catalog, amd):
    best = hardware_comparison(catalog, model=MODEL, hardware=["mi300x", "mi355x"]).best
    want = dict(best.select("hardware", COST).rows())
    got = dict(amd.table.filter(pl.col("basis") == "catalog").select("hardware", COST).rows())
    assert got["mi300x"] == pytest.approx(want["mi300x"]) and got["mi355x"] == pytest.approx(want["mi355x"])


def test_projection_is_flagged_and_scaled_by_its_proxys_realized_share(catalog, amd):
    t = amd.table
    assert t["hardware"].to_list() == list(LINEUPS["amd"])
    row = t.filter(pl.col("hardware") == "mi455x").row(0, named=True)
    assert row["basis"] == "projection" and row["availability"] == "announced" and row["as_of"] == "2026-07-23"
    assert "mi355x" in row["cost_from"] and "iso-price" in row["cost_from"]
    projected, _ = with_projections(catalog, load_roadmap(), ["mi455x"])
    plain = replace(DEFAULT, calibrated=frozenset())
    u = dict(hardware_comparison(projected, model=MODEL, hardware=["mi455x", "mi355x"], assumptions=plain)
             .best.select("hardware", COST).rows())
    cal = t.filter(pl.col("hardware") == "mi355x")[COST][0]
    assert row[COST] == pytest.approx(u["mi455x"] * cal / u["mi355x"], rel=1e-9)
    assert row["usd_per_m_uncalibrated"] == pytest.approx(u["mi455x"])
    assert row[COST + "_low"] is None  # no calibration band is claimed for a projection


def test_not_computable_parts_keep_their_row_with_the_reason(catalog):
    t = trend(catalog, model=MODEL, hardware=["h100-sxm", "rubin-cpx"]).table
    cpx = t.filter(pl.col("hardware") == "rubin-cpx").row(0, named=True)
    assert cpx[COST] is None and "not computable" in cpx["remark"] and "withdrawn" in cpx["remark"]


def test_bad_inputs_name_the_problem(catalog):
    with pytest.raises(InvalidInputError, match="vendor='intel'"):
        trend(catalog, model=MODEL, vendor="intel")
    with pytest.raises(UnknownIdError, match="nope"):
        trend(catalog, model=MODEL, hardware=["nope"])


def test_cli_trend_json_and_table(capsys):
    assert main(["trend", MODEL, "--vendor", "aws", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["hardware"]: r for r in doc["rows"]}
    assert rows["trainium3"]["basis"] == "projection" and rows["trainium2"]["basis"] == "catalog"
    assert main(["trend", MODEL, "--vendor", "aws"]) == 0
    out = capsys.readouterr().out
    assert "PROJECTIONS" in out and "NOT measurements" in out and "trainium3" in out.split("PROJECTIONS")[1]
