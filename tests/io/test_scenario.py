"""econ.io.scenario: exact round trips (dict, URL, TOML) and forgiving reads (warnings + defaults, never a traceback)."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from econ.assumptions import Assumptions, Economics
from econ.tables.catalog import load_catalog
from econ.errors import InvalidInputError
from econ.presets import workload_of
from econ.io.scenario import SCENARIO_FIELDS, SPECS, Scenario, from_mapping, from_query_params, from_toml, load_toml_file


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_specs_and_fields_name_the_same_things():
    assert set(SPECS) == set(SCENARIO_FIELDS)
    assert len(SCENARIO_FIELDS) == len(set(SCENARIO_FIELDS))


def test_defaults_are_the_cores_defaults():
    sc = Scenario()
    assert sc.assumptions() == Assumptions()
    assert sc.economics() == Economics()
    assert (sc.model, sc.hardware, sc.precision, sc.input_len, sc.output_len) == (
        "llama-3.3-70b", "h100-sxm", "fp8", 1024, 1024)


@pytest.mark.parametrize("name", [f.name for f in fields(Assumptions) if f.name != "calibrated"])
def test_scenario_ranges_are_accepted_by_assumptions(name):
    spec = SPECS[name]
    if spec.kind == "bool":
        values = (False, True)
    elif spec.kind == "str":  # a choice (kv_memory_rule)
        values = spec.choices
    else:
        values = (int(spec.lo), int(spec.hi)) if spec.kind == "int" else (spec.lo, spec.hi)
    for v in values:
        assert getattr(Assumptions(**{name: v}), name) == v  # must not raise


@pytest.mark.parametrize("name", [f.name for f in fields(Economics) if f.name != "basis"])
def test_scenario_ranges_are_accepted_by_economics(name):
    spec = SPECS[name]
    for v in (spec.lo, spec.hi):
        Economics(**{name: v})


def test_region_sets_the_power_price(catalog):
    region = catalog.power_prices.row(0, named=True)
    sc = Scenario(region=region["region_id"], usd_per_kwh=5.0)
    assert sc.economics(catalog).usd_per_kwh == pytest.approx(region["usd_per_kwh"])
    assert Scenario(usd_per_kwh=5.0).economics(catalog).usd_per_kwh == 5.0


def _value(spec):
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "int":
        base = st.integers(int(spec.lo), int(min(spec.hi, 1 << 40)))
    elif spec.kind == "float":
        base = st.floats(spec.lo, spec.hi, allow_nan=False, allow_infinity=False, exclude_min=spec.lo_open)
    elif spec.kind == "ids":
        return st.just(())
    elif spec.kind == "floats":
        return st.lists(st.floats(spec.lo, spec.hi, allow_nan=False, allow_infinity=False), min_size=1,
                        max_size=4).map(lambda xs: tuple(sorted(set(xs))))
    elif spec.kind == "text":
        return st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=20)
    elif spec.choices:
        base = st.sampled_from(spec.choices)
    else:
        return st.nothing()
    return st.one_of(st.none(), base) if spec.none_token else base


_SCENARIOS = st.fixed_dictionaries({k: _value(s) for k, s in SPECS.items() if s.kind != "str" or s.choices}).map(
    lambda v: {**v, "workload": workload_of(v["input_len"], v["output_len"])})  # the lengths name the workload


@settings(max_examples=60)
@given(values=_SCENARIOS)
def test_any_valid_scenario_round_trips_through_url_and_toml(values):
    assume(not (values["basis"] == "custom" and values["usd_per_gpu_hour"] is None))  # custom needs its rate
    sc = replace(Scenario(), **values)
    back, warnings = from_query_params(sc.to_query_params())
    assert warnings == [] and back == sc
    back, warnings = from_toml(sc.to_toml())
    assert warnings == [] and back == sc
    back, warnings = from_mapping(sc.to_dict())
    assert warnings == [] and back == sc


def test_ids_round_trip_with_a_catalog(catalog):
    hw = tuple(catalog.accelerators["id"].to_list()[:3])
    sc = Scenario(model="deepseek-v3", hardware=hw[1], region=catalog.power_prices["region_id"][2],
                  compare_hardware=hw, compare_precisions=("fp8", "fp4"), num_gpus=16, mfu_frac=0.4)
    assert from_query_params(sc.to_query_params(), catalog) == (sc, [])
    assert from_toml(sc.to_toml(), catalog) == (sc, [])


def test_url_holds_only_changed_fields():
    assert Scenario().to_query_params() == {}
    assert Scenario(pue=1.2, num_gpus=8).to_query_params() == {"pue": "1.2", "num_gpus": "8"}


@pytest.mark.parametrize("params, field, default, message", [
    ({"model": "llama-3.3-7b"}, "model", "llama-3.3-70b", r"unknown model id 'llama-3.3-7b'; closest: llama-3.3-70b"),
    ({"hardware": "h100"}, "hardware", "h100-sxm", r"unknown hardware id 'h100'"),
    ({"region": "mars"}, "region", None, r"unknown region id 'mars'"),
    ({"pue": "7"}, "pue", 1.4, r"pue=7 is outside \[1, 3\] \(ratio\)"),
    ({"pue": "nan"}, "pue", 1.4, r"pue=nan is outside"),
    ({"num_gpus": "abc"}, "num_gpus", None, r"num_gpus='abc' is not a number"),
    ({"input_len": "1.5"}, "input_len", 1024, r"input_len=1.5 is not a whole number"),
    ({"precision": "int4"}, "precision", "fp8", r"precision='int4' is not one of \['bf16', 'fp8', 'fp4'\]"),
    ({"basis": "leased"}, "basis", "owned", r"basis='leased' is not one of"),
    ({"stream_input_embedding": "maybe"}, "stream_input_embedding", False, r"is not true/false"),
    ({"compare_hardware": "h100-sxm,xx"}, "compare_hardware", (), r"compare_hardware has unknown id\(s\) \['xx'\]"),
    ({"utilization_frac": "0"}, "utilization_frac", 0.7, r"utilization_frac=0 is outside \[0.01, 1\]"),
])
def test_bad_values_warn_and_fall_back_to_the_default(catalog, params, field, default, message):
    sc, warnings = from_query_params(params, catalog)
    assert len(warnings) == 1
    assert __import__("re").search(message, warnings[0]), warnings[0]
    assert "using the default" in warnings[0]
    assert getattr(sc, field) == default


def test_unknown_field_is_ignored_with_a_hint():
    sc, warnings = from_mapping({"pue_value": "1.2", "pue": "1.3"})
    assert sc.pue == 1.3
    assert warnings == ["unknown scenario field 'pue_value' ignored (did you mean 'pue'?)"]


def test_repeated_url_parameter_takes_the_last_value():
    sc, warnings = from_query_params({"pue": ["1.1", "1.2"]})
    assert sc.pue == 1.2 and warnings == []


def test_default_missing_from_the_catalog_falls_back_to_the_first_id(catalog):
    from dataclasses import replace as dc_replace
    import polars as pl
    small = dc_replace(catalog, models=catalog.models.filter(pl.col("id") == "llama-3.1-8b"))
    sc, warnings = from_query_params({"model": "nope"}, small)
    assert sc.model == "llama-3.1-8b"
    assert "using the default 'llama-3.1-8b'" in warnings[0]
    sc, warnings = from_mapping({}, small)  # the default itself is stale against this catalog
    assert sc.model == "llama-3.1-8b" and "not in the catalog" in warnings[0]


@pytest.mark.parametrize("text, message", [
    ("model = [", "not valid TOML"),
    (b"\xff\xfe", "not UTF-8"),
    ("scenario = 3", "must be a table"),
])
def test_broken_files_give_defaults_and_one_warning(text, message):
    sc, warnings = from_toml(text)
    assert sc == Scenario()
    assert len(warnings) == 1 and message in warnings[0]


def test_toml_accepts_top_level_keys_and_reports_extra_tables():
    sc, warnings = from_toml('model = "llama-3.1-8b"\npue = 1.25\n')
    assert (sc.model, sc.pue, warnings) == ("llama-3.1-8b", 1.25, [])
    sc, warnings = from_toml('[scenario]\npue = 1.25\n[other]\nx = 1\n')
    assert sc.pue == 1.25 and warnings == ["unknown top-level key 'other' ignored"]


def test_toml_file_is_commented_and_complete(tmp_path):
    text = Scenario(num_gpus=None).to_toml()
    assert 'num_gpus = "auto"  # accelerators' in text
    assert all(f"\n{f} = " in text for f in SCENARIO_FIELDS)
    path = tmp_path / "s.toml"
    path.write_text(Scenario(pue=1.1).to_toml())
    assert load_toml_file(path) == (Scenario(pue=1.1), [])
    with pytest.raises(InvalidInputError, match=r"--scenario='.*missing.toml': cannot read the file"):
        load_toml_file(tmp_path / "missing.toml")


def test_floats_survive_text_exactly():
    sc = Scenario(usd_per_kwh=0.1 + 0.2, overhead_s=1.7e-3)
    back, _ = from_query_params(sc.to_query_params())
    assert back.usd_per_kwh == sc.usd_per_kwh and math.isclose(back.overhead_s, 1.7e-3, rel_tol=0)


# ---------------------------------------------------------------------------------------------
# econ cost --scenario FILE
# ---------------------------------------------------------------------------------------------

def _cost(capsys, *argv):
    import json

    from econ.cli import main
    code = main(["cost", *argv, "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out), out.err


def test_cost_reads_the_scenario_file_and_flags_override_it(catalog, tmp_path, capsys):
    from econ.analyses.sweep import cost_table
    sc = Scenario(model="llama-3.1-8b", hardware="h200-sxm", precision="fp8", num_gpus=2, pue=1.2,
                  region="us-tx-industrial", eta_bw=0.7, utilization_frac=0.5, input_len=2048)
    path = tmp_path / "s.toml"
    path.write_text(sc.to_toml())
    data, _ = _cost(capsys, "--scenario", str(path))
    from econ.analyses.compare import auto_batch_row  # batch auto: the sweet spot, or the largest batch at the file's floor
    want = auto_batch_row(catalog, min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, **sc.cost_kwargs(),
                          assumptions=sc.assumptions(), economics=sc.economics(catalog))[0].row(0, named=True)
    for c in ("num_gpus", "batch_size", "usd_per_m_output_tokens", "usd_per_m_input_tokens", "tokens_per_s_per_user"):
        assert data[c] == pytest.approx(want[c], rel=1e-12), c
    data, _ = _cost(capsys, "--scenario", str(path), "--hardware", "h100-sxm", "--batch", "16", "--usd-per-kwh", "0.2")
    want = cost_table(catalog, **{**sc.cost_kwargs(), "hardware": "h100-sxm"}, batch_sizes=[16],
                      assumptions=sc.assumptions(),
                      economics=replace(sc, region=None, usd_per_kwh=0.2).economics(catalog)).row(0, named=True)
    assert (data["hardware"], data["batch_size"]) == ("h100-sxm", 16)
    assert data["usd_per_m_output_tokens"] == pytest.approx(want["usd_per_m_output_tokens"], rel=1e-12)


def test_cost_scenario_with_an_unusable_field_is_refused(tmp_path, capsys):
    """A scenario file on the command line is refused, not priced with a substituted default (issue 21)."""
    from econ.cli import main
    path = tmp_path / "s.toml"
    path.write_text('[scenario]\nmodel = "llama-3.1-8b"\nhardware = "h100-sxm"\npue = 9\nnum_gpus = "two"\n')
    assert main(["cost", "--scenario", str(path), "--format", "json"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert "pue=9 is outside [1, 3] (ratio)" in out.err and "num_gpus='two' is not a number" in out.err
    assert "using the default" not in out.err


def test_cost_without_model_or_scenario_names_the_flag(capsys):
    from econ.cli import main
    assert main(["cost", "--hardware", "h100-sxm"]) == 2
    assert "--model is required (or give --scenario FILE)" in capsys.readouterr().err
