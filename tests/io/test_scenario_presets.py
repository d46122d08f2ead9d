"""Scenario fields of issue 11: workload preset, the one speed floor, interactivity levels, head-to-head set-ups and
the custom accelerator, through URL and TOML round trips, with warnings (never exceptions) for bad values."""

from __future__ import annotations

import pytest

from econ.tables.catalog import load_catalog
from econ.tables.custom import CUSTOM_ID
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER, INTERACTIVITY_LEVELS
from econ.io.scenario import Scenario, from_mapping, from_query_params, from_toml


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_defaults():
    sc = Scenario()
    assert (sc.workload, sc.input_len, sc.output_len) == ("chat", 1024, 1024)
    assert sc.min_tokens_per_s_per_user == DEFAULT_MIN_TOKENS_PER_S_PER_USER
    assert sc.interactivity_levels == INTERACTIVITY_LEVELS
    assert sc.custom_spec() is None and not sc.custom_accelerator


@pytest.mark.parametrize("data, want", [
    ({"workload": "reasoning"}, ("reasoning", 1024, 8192)),
    ({"workload": "summarization"}, ("summarization", 8192, 1024)),
    ({"input_len": "8192"}, ("summarization", 8192, 1024)),          # lengths that match a preset name it
    ({"input_len": "4000"}, ("custom", 4000, 1024)),                 # lengths that match none are "custom"
    ({"workload": "reasoning", "output_len": "512"}, ("custom", 1024, 512)),  # explicit lengths win
    ({"workload": "custom"}, ("chat", 1024, 1024)),                  # "custom" with the default lengths is chat
])
def test_workload_and_lengths_stay_consistent(data, want):
    sc, warnings = from_mapping(data)
    assert warnings == [] and (sc.workload, sc.input_len, sc.output_len) == want
    assert from_query_params(sc.to_query_params()) == (sc, [])


def test_with_workload():
    assert Scenario().with_workload("reasoning").output_len == 8192
    assert Scenario(input_len=3000).with_workload("custom").input_len == 3000


@pytest.mark.parametrize("text, want, warns", [
    ("10,50,200", (10.0, 50.0, 200.0), False), ("100, 20", (20.0, 100.0), False), ("20,20,50", (20.0, 50.0), False),
    ("20,abc", INTERACTIVITY_LEVELS, True), ("", INTERACTIVITY_LEVELS, True),
    ("1,2,3,4,5,6,7,8,9", INTERACTIVITY_LEVELS, True), ("-5", INTERACTIVITY_LEVELS, True),
])
def test_interactivity_levels(text, want, warns):
    sc, warnings = from_mapping({"interactivity_levels": text})
    assert sc.interactivity_levels == want and bool(warnings) == warns
    if warns:
        assert "interactivity_levels" in warnings[0]


def test_custom_accelerator_round_trips_and_is_an_id(catalog):
    sc, warnings = from_mapping({"custom_accelerator": "true", "custom_name": "X1 (what-if)", "custom_hbm_gib": "192",
                                 "custom_fp4_tflop_per_s": "9000", "hardware": CUSTOM_ID,
                                 "compare_hardware": f"h100-sxm,{CUSTOM_ID}", "h2h_b_hardware": CUSTOM_ID}, catalog)
    assert warnings == []
    assert sc.hardware == CUSTOM_ID and CUSTOM_ID in sc.compare_hardware and sc.h2h_b_hardware == CUSTOM_ID
    assert sc.catalog(catalog).accelerator(CUSTOM_ID)["hbm_capacity_gib"] == 192.0
    assert from_query_params(sc.to_query_params(), catalog) == (sc, [])
    assert from_toml(sc.to_toml(), catalog) == (sc, [])


def test_custom_id_without_the_accelerator_warns_and_falls_back(catalog):
    sc, warnings = from_mapping({"hardware": CUSTOM_ID}, catalog)
    assert sc.hardware == "h100-sxm" and any(CUSTOM_ID in w for w in warnings)
    sc, warnings = from_mapping({"custom_accelerator": "true", "custom_capex_usd": "none", "hardware": CUSTOM_ID},
                                catalog)  # no price at all: the row is refused, the link still opens
    assert not sc.custom_accelerator and sc.hardware == "h100-sxm"
    assert any("custom accelerator not used" in w for w in warnings)


def test_custom_name_is_checked_text(catalog):
    sc, warnings = from_mapping({"custom_name": "a\x1bb"})
    assert sc.custom_name == Scenario().custom_name and "printable" in warnings[0]
    sc, warnings = from_mapping({"custom_name": "x" * 61})
    assert warnings and sc.custom_name == Scenario().custom_name


def test_head_to_head_setups(catalog):
    sc, warnings = from_mapping({"h2h_a_model": "deepseek-v3", "h2h_a_hardware": "h200-sxm", "h2h_b_precision": "fp4",
                                 "h2h_b_basis": "owned-custom", "h2h_a_basis": "neocloud"}, catalog)
    assert warnings == [] and (sc.h2h_a_model, sc.h2h_b_basis, sc.h2h_a_basis) == ("deepseek-v3", "owned", "neocloud")
    sc, warnings = from_mapping({"h2h_b_hardware": "h100"}, catalog)
    assert sc.h2h_b_hardware == "b200" and "unknown h2h_b_hardware id 'h100'" in warnings[0]
