"""Announced accelerators (issue 22.4): every roadmap row is sourced, dated and flagged, claimed by no calibration
profile, kept out of the priced catalog (so out of quote floors and default rankings), and projected only on request."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from econ.errors import DataError, UnknownIdError
from econ.tables.catalog import DEFAULT_DATA_DIR, load_calibration, load_catalog
from econ.tables.roadmap import COST_COLUMNS, ROADMAP_FILE, STATUSES, load_roadmap, with_projections


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def roadmap():
    return load_roadmap()


def test_every_row_has_a_vendor_source_an_as_of_and_a_status(roadmap):
    assert roadmap.height >= 8
    for r in roadmap.iter_rows(named=True):
        assert r["source"] and "http" in r["source"] or "aws-neuron" in r["source"], r["id"]
        assert r["as_of"] and r["announced_on"], r["id"]
        assert r["status"] in STATUSES, r["id"]
        assert r["remark"], r["id"]
    assert {"vr200-nvl72", "rubin-cpx", "mi455x", "trainium3", "tpu8t"} <= set(roadmap["id"])
    assert (roadmap["status"] == "announced").sum() >= 6


def test_no_calibration_profile_claims_a_roadmap_part(roadmap):
    assert roadmap["generation"].is_null().all()
    profiles = set(load_calibration()["generation"])
    assert not profiles & set(roadmap["generation"].drop_nulls())


def test_rubin_cpx_says_it_was_withdrawn(roadmap):
    cpx = roadmap.filter(pl.col("id") == "rubin-cpx").row(0, named=True)
    assert "withdrawn" in cpx["remark"] and "GTC 2026" in cpx["remark"]


def test_roadmap_parts_are_not_in_the_priced_catalog(catalog, roadmap):
    assert not set(roadmap["id"]) & set(catalog.accelerators["id"])


def test_a_projection_takes_physics_from_the_datasheet_and_cost_from_its_proxy(catalog, roadmap):
    projected, why = with_projections(catalog, roadmap, ["vr200-nvl72", "rubin-cpx"])
    vr = projected.accelerators.filter(pl.col("id") == "vr200-nvl72").row(0, named=True)
    gb = catalog.accelerators.filter(pl.col("id") == "gb300-nvl72").row(0, named=True)
    assert vr["hbm_bandwidth_tb_per_s"] == 22 and vr["fp4_dense_tflop_per_s"] == 35000
    assert vr["generation"] is None
    for c in COST_COLUMNS:
        assert vr[c] == gb[c], c
    assert vr["notes"].startswith("PROJECTION")
    reasons = dict(why.select("id", "not_computable").rows())
    assert reasons["vr200-nvl72"] == "" and "bf16_dense_tflop_per_s" in reasons["rubin-cpx"]
    assert "rubin-cpx" not in projected.accelerators["id"].to_list()
    assert catalog.accelerators.height + 1 == projected.accelerators.height


def test_unknown_roadmap_id_is_refused(catalog, roadmap):
    with pytest.raises(UnknownIdError, match="no-such-part"):
        with_projections(catalog, roadmap, ["no-such-part"])


def test_bad_status_is_a_data_error(tmp_path):
    text = (DEFAULT_DATA_DIR / ROADMAP_FILE).read_text().replace(",announced,", ",rumoured,", 1)
    (tmp_path / ROADMAP_FILE).write_text(text)
    with pytest.raises(DataError, match="status.*rumoured"):
        load_roadmap(tmp_path)


def test_a_generation_on_a_roadmap_row_is_a_data_error(tmp_path):
    shutil.copy(DEFAULT_DATA_DIR / ROADMAP_FILE, tmp_path / ROADMAP_FILE)
    df = pl.read_csv(tmp_path / ROADMAP_FILE, infer_schema_length=0)
    df.with_columns(generation=pl.lit("blackwell")).write_csv(tmp_path / ROADMAP_FILE)
    with pytest.raises(DataError, match="generation"):
        load_roadmap(tmp_path)


def test_cli_lists_the_roadmap_and_the_kv_tiers(capsys):
    import json

    from econ.cli import main

    assert main(["list", "roadmap", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    cpx = next(r for r in rows if r["id"] == "rubin-cpx")
    assert cpx["status"] == "announced" and "withdrawn" in cpx["remark"] and cpx["as_of"]
    assert main(["list", "kv-tiers", "--format", "json"]) == 0
    tiers = json.loads(capsys.readouterr().out)
    assert any(t["hardware"] == "gb200-nvl72" and "Grace" in t["medium"] for t in tiers)
