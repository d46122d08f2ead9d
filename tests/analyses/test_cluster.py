"""Tests of econ.analyses.cluster: the kernel frame (size_cluster) and the one set of inputs of a cluster plan.

The kernels are tested in tests/physics/test_fleet.py and tests/economics/test_buildout.py; here the frame that
assembles them reproduces the seeds (000, 001, 004), broadcasts, and names every bad input; a plan sized by a budget
equals the plan of the GPUs it buys; PUE has one range and the economics one set of defaults.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.analyses import cluster
from econ.analyses.cluster import size_cluster
from econ.analyses.compare import hardware_comparison
from econ.assumptions import Economics
from econ.errors import EconError, InvalidInputError
from econ.vocabulary import bounds
from econ.tables.catalog import load_catalog

TFLOP = 1e12
H100_FLOP_PER_S = 989 * TFLOP   # BF16 dense, seed 001
H100_POWER_W = 700.0            # TDP, seed 001 Table 9

# Seed 000's illustrative accelerator: ~1 PFLOP/s and ~1.4 kW all-in per GPU.
SEED000 = dict(flop_per_s_per_gpu=1e15, power_w_per_gpu=1400.0, all_in_capex_usd_per_gpu=45_000.0,
               gpus_per_rack=32, pue=1.0, usd_per_kwh=0.066, build_usd_per_mw_it=0.0)
H100 = dict(flop_per_s_per_gpu=H100_FLOP_PER_S, power_w_per_gpu=H100_POWER_W,
            all_in_capex_usd_per_gpu=45_000.0, gpus_per_rack=8, pue=1.40, usd_per_kwh=0.066,
            build_usd_per_mw_it=0.0)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


# ------------------------------------------------------------------------------------------------
# size_cluster: the kernel frame reproduces the seeds and the kernels
# ------------------------------------------------------------------------------------------------

def test_size_cluster_seed000_sweep():
    df = size_cluster([1, 8, 512, 8192, 32768], **SEED000)
    assert df.height == 5
    assert df["num_gpus"].to_list() == [1, 8, 512, 8192, 32768]
    assert df["mfu_frac"].to_list() == pytest.approx([0.62, 0.56, 0.44, 0.36, 0.32], abs=1e-12)
    last = df.row(-1, named=True)
    assert last["peak_flop_per_s"] / 1e18 == pytest.approx(32.77, abs=0.005)
    assert last["realized_flop_per_s"] / 1e18 == pytest.approx(10.49, abs=0.005)
    assert last["facility_power_mw"] == pytest.approx(45.9, abs=0.05)   # PUE 1: seed 000's W is all-in


def test_size_cluster_seed001_h100():
    df = size_cluster([1024, 8192, 10_000], **H100, mfu_frac=0.5, scaling_efficiency_frac=0.5,
                      goodput_frac=0.77)
    r1024, r8192, r10k = df.rows(named=True)
    assert r1024["realized_flop_per_s"] / TFLOP == pytest.approx(194_951.7, abs=0.05)
    assert r1024["realized_frac_of_peak"] == pytest.approx(0.1925, rel=1e-12)
    assert r8192["cluster_mtbf_h"] * 60 == pytest.approx(366.2, abs=0.05)
    assert r8192["prob_failure_in_window_frac"] == pytest.approx(0.9804, abs=0.00005)
    assert r10k["it_power_mw"] == pytest.approx(7.0, rel=1e-12)
    assert r10k["facility_power_mw"] == pytest.approx(9.8, rel=1e-12)
    assert r10k["annual_energy_mwh"] == pytest.approx(85_848, rel=1e-12)
    assert r10k["annual_energy_cost_usd"] == pytest.approx(85_848_000 * 0.066, rel=1e-12)
    assert r10k["rack_count"] == 1250
    assert r10k["rack_power_kw"] == pytest.approx(5.6, rel=1e-12)
    assert r10k["air_cooling_ok"] is True


def test_size_cluster_seed004_capex_and_columns():
    df = size_cluster(100_000, **{**H100, "build_usd_per_mw_it": 11.7e6, "gpus_per_rack": 72,
                                  "power_w_per_gpu": 1000.0})
    assert df.columns == [
        "num_gpus", "peak_flop_per_s", "mfu_frac", "scaling_efficiency_frac", "goodput_frac",
        "realized_flop_per_s", "realized_frac_of_peak", "it_power_mw", "facility_power_mw",
        "annual_energy_mwh", "annual_energy_cost_usd", "rack_count", "rack_power_kw", "air_cooling_ok",
        "capex_accelerators_usd", "capex_facility_usd", "capex_total_usd", "cluster_mtbf_h",
        "failure_window_h", "prob_failure_in_window_frac",
    ]
    row = df.row(0, named=True)
    assert row["capex_accelerators_usd"] == pytest.approx(4.5e9, rel=1e-12)
    assert row["capex_facility_usd"] == pytest.approx(100.0 * 11.7e6, rel=1e-12)   # 100 MW IT
    assert row["capex_total_usd"] == pytest.approx(5.67e9, rel=1e-12)
    assert row["cluster_mtbf_h"] == pytest.approx(0.5, rel=1e-12)                  # 30 min, seed 001
    assert row["rack_power_kw"] == pytest.approx(72.0, rel=1e-12)
    assert row["air_cooling_ok"] is False
    assert df.schema["num_gpus"] == pl.Int64
    assert df.schema["rack_count"] == pl.Int64
    assert df.schema["air_cooling_ok"] == pl.Boolean


def test_size_cluster_broadcasts_other_inputs_to_rows():
    df = size_cluster(10_000, **{**H100, "pue": [1.06, 1.40, 1.58]})
    assert df["facility_power_mw"].to_list() == pytest.approx([7.42, 9.8, 11.06], rel=1e-12)
    assert df["num_gpus"].to_list() == [10_000] * 3


@pytest.mark.parametrize("as_type", [
    pytest.param(list, id="list"),
    pytest.param(np.array, id="ndarray"),
    pytest.param(pl.Series, id="series"),
])
def test_size_cluster_input_types_agree(as_type):
    gpus = [256, 2048, 8192]
    expected = size_cluster(gpus, **H100)
    got = size_cluster(as_type(gpus), **H100)
    assert got.equals(expected)
    scalar = size_cluster(2048, **H100)
    assert scalar.height == 1
    assert scalar.row(0) == expected.row(1)


# ------------------------------------------------------------------------------------------------
# Properties
# ------------------------------------------------------------------------------------------------

gpu_counts = st.integers(min_value=1, max_value=10_000_000)
fracs = st.floats(min_value=0.0, max_value=1.0)


@given(gpus=st.lists(gpu_counts, min_size=1, max_size=6), mfu=fracs, scaling=fracs, goodput=fracs,
       pue=st.floats(*bounds("pue")), build=st.floats(min_value=0.0, max_value=5e7))
def test_size_cluster_outputs_are_finite_and_consistent(gpus, mfu, scaling, goodput, pue, build):
    df = size_cluster(gpus, **{**H100, "pue": pue, "build_usd_per_mw_it": build}, mfu_frac=mfu,
                      scaling_efficiency_frac=scaling, goodput_frac=goodput)
    assert df.height == len(gpus)
    numeric = df.select(pl.col(pl.Float64)).to_numpy()
    assert np.isfinite(numeric).all()
    np.testing.assert_allclose(df["capex_total_usd"],
                               df["capex_accelerators_usd"] + df["capex_facility_usd"], rtol=1e-12)
    assert (df["realized_flop_per_s"] <= df["peak_flop_per_s"] * (1 + 1e-12)).all()
    assert (df["facility_power_mw"] >= df["it_power_mw"]).all()
    assert df["prob_failure_in_window_frac"].is_between(0.0, 1.0).all()
    assert (df["rack_count"] * 8 >= df["num_gpus"]).all()


# ------------------------------------------------------------------------------------------------
# Errors: name the field, value, range and unit
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("override", "match"), [
    pytest.param({"num_gpus": 0}, r"num_gpus=0 is outside \[1, inf\] \(GPUs\)", id="num_gpus-zero"),
    pytest.param({"num_gpus": [8, 0, 16]}, r"num_gpus=0 is outside \[1, inf\].*first bad row 1",
                 id="num_gpus-bad-row"),
    pytest.param({"num_gpus": [8, 16.5]}, r"num_gpus=16.5 must be a whole number; first bad row 1",
                 id="num_gpus-fractional"),
    pytest.param({"gpus_per_rack": 0}, r"gpus_per_rack=0 is outside \[1, inf\] \(GPUs/rack\)",
                 id="gpus_per_rack-zero"),
    pytest.param({"pue": 0.9}, r"pue=0.9 is outside \[1, 3\] \(ratio\)", id="pue-below-1"),
    pytest.param({"usd_per_kwh": -0.01}, r"usd_per_kwh=-0.01 is outside \[0, inf\] \(USD/kWh\)",
                 id="price-negative"),
    pytest.param({"all_in_capex_usd_per_gpu": -1.0}, r"all_in_capex_usd_per_gpu=-1 is outside \[0, inf\]",
                 id="capex-negative"),
    pytest.param({"build_usd_per_mw_it": -5.0}, r"build_usd_per_mw_it=-5 is outside \[0, inf\] \(USD/MW\)",
                 id="build-negative"),
    pytest.param({"goodput_frac": 1.2}, r"goodput_frac=1.2 is outside \[0, 1\]", id="goodput-over-1"),
    pytest.param({"mfu_frac": -0.1}, r"mfu_frac=-0.1 is outside \[0, 1\]", id="mfu-negative"),
    pytest.param({"scaling_efficiency_frac": 2.0}, r"scaling_efficiency_frac=2 is outside \[0, 1\]",
                 id="scaling-over-1"),
    pytest.param({"load_factor_frac": -0.5}, r"load_factor_frac=-0.5 is outside \[0, 1\]", id="load-negative"),
    pytest.param({"mtbf_h_per_gpu": 0.0}, r"mtbf_h_per_gpu=0 is outside \[1, inf\] \(h\)", id="mtbf-zero"),
    pytest.param({"failure_window_h": -1.0}, r"failure_window_h=-1 is outside \[0, inf\] \(h\)",
                 id="window-negative"),
    pytest.param({"flop_per_s_per_gpu": np.nan}, r"flop_per_s_per_gpu=nan is not a finite number",
                 id="flop-nan"),
    pytest.param({"power_w_per_gpu": np.inf}, r"power_w_per_gpu=inf is not a finite number", id="power-inf"),
    pytest.param({"num_gpus": [1, 2, 3], "pue": [1.1, 1.2]}, r"do not broadcast together: num_gpus\(3,\), pue\(2,\)",
                 id="shape-mismatch"),
    pytest.param({"num_gpus": [[1, 2], [3, 4]]}, r"size_cluster needs 1-D inputs", id="two-dimensional"),
])
def test_size_cluster_rejects_bad_input(override, match):
    kwargs = {"num_gpus": 1024, **H100, **override}
    with pytest.raises(InvalidInputError, match=match):
        size_cluster(**kwargs)


def test_invalid_input_error_is_a_value_error():
    assert issubclass(InvalidInputError, EconError)
    assert issubclass(InvalidInputError, ValueError)


# ------------------------------------------------------------------------------------------------
# One PUE range, one set of defaults, one plan for a size or a budget
# ------------------------------------------------------------------------------------------------

def test_one_pue_range_everywhere_in_the_fleet(catalog):
    lo, hi = bounds("pue")
    e = Economics(pue=hi)                       # the cost model's range is the fleet's: [1, 3] (econ.vocabulary)
    assert size_cluster(1024, **{**H100, "pue": hi})["facility_power_mw"][0] == pytest.approx(1024 * 700 * hi / 1e6)
    assert cluster.power_table(1024, pue=hi, gpus_per_rack=8, tdp_w=700.0)["facility_power_mw"][0] == pytest.approx(
        1024 * 700 * hi / 1e6)
    assert cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, economics=e).row(0, named=True)[
        "pue"] == hi
    for call in (lambda p: size_cluster(1024, **{**H100, "pue": p}),
                 lambda p: cluster.power_table(1024, pue=p, gpus_per_rack=8, tdp_w=700.0),
                 lambda p: cluster.scale_table(1024, flop_per_s_per_gpu=1e15, power_w_per_gpu=700.0, pue=p)):
        for bad in (lo - 0.01, hi + 0.01):
            with pytest.raises(InvalidInputError, match=rf"pue={bad:g} is outside \[1, 3\]"):
                call(bad)


def test_plan_defaults_are_the_economics_defaults(catalog):
    row = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024).row(0, named=True)
    d = Economics()
    assert (row["pue"], row["usd_per_kwh"], row["build_usd_per_mw_it"], row["utilization_frac"]) == (
        d.pue, d.usd_per_kwh, d.build_usd_per_mw_it, d.utilization_frac)
    assert row["facility"] == "default" and row["it_capex_basis"] == "all-in"
    # IT capex = the catalog's all-in capex per GPU (the capex of econ cost's owned $/GPU-hour)
    assert row["capex_accelerators_usd"] == pytest.approx(1024 * catalog.accelerator("h100-sxm")["all_in_capex_usd"])
    assert row["capex_facility_usd"] == pytest.approx(1024 * 1500.0 / 1e6 * d.build_usd_per_mw_it)


def test_a_named_facility_is_shown(catalog):
    from econ.analyses.sweep import make_economics
    e = make_economics(catalog, facility="liquid-cooled-ai")
    row = cluster.cluster_plan(catalog, hardware="gb200-nvl72", num_gpus=72, economics=e,
                               facility="liquid-cooled-ai").row(0, named=True)
    assert (row["facility"], row["pue"], row["build_usd_per_mw_it"]) == ("liquid-cooled-ai", 1.06, 11.7e6)
    assert cluster.facility_label(catalog, Economics(pue=1.2), "liquid-cooled-ai") == "liquid-cooled-ai, typed PUE/build"
    assert cluster.facility_label(catalog, Economics(pue=1.2)) == "typed"


@pytest.mark.parametrize("budget", [dict(power_w=100e6), dict(power_w=70e6, power_of="it"), dict(capex_usd=3e9)])
def test_a_budget_plan_is_the_plan_of_the_gpus_it_buys(catalog, budget):
    by_budget = cluster.cluster_plan(catalog, hardware="gb200-nvl72", **budget)
    g = by_budget["num_gpus"][0]
    by_size = cluster.cluster_plan(catalog, hardware="gb200-nvl72", num_gpus=g)
    assert by_budget.drop("budget").equals(by_size.drop("budget"))
    assert by_budget["budget"][0] and by_size["budget"][0] is None
    one_more = cluster.cluster_plan(catalog, hardware="gb200-nvl72", num_gpus=g + 1).row(0, named=True)
    if "power_w" in budget:
        limit_mw = budget["power_w"] / 1e6
        column = "facility_power_mw" if budget.get("power_of", "facility") == "facility" else "it_power_mw"
        assert by_size[column][0] <= limit_mw * (1 + 1e-12) < one_more[column]
    else:
        assert by_size["capex_total_usd"][0] <= budget["capex_usd"] < one_more["capex_total_usd"]


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(), r"give exactly one of num_gpus, a power budget"),
    (dict(num_gpus=8, power_w=1e6), r"give exactly one of num_gpus, a power budget"),
    (dict(power_w=-1.0), r"power_budget_w=-1 is outside"),
    (dict(power_w=1e6, power_of="grid"), r"power_of='grid' is not one of"),
    (dict(capex_usd=1000.0), r"does not buy one h100-sxm"),
    (dict(num_gpus=8, facility="nope"), r"unknown facility id 'nope'"),
])
def test_plan_budget_errors_are_named(catalog, kwargs, match):
    with pytest.raises(EconError, match=match):
        cluster.cluster_plan(catalog, hardware="h100-sxm", **kwargs)


# ------------------------------------------------------------------------------------------------
# The cluster plan (moved from tests/analyses/test_compare.py with the function)
# ------------------------------------------------------------------------------------------------

MODEL = "llama-3.3-70b"


def test_cluster_plan_known_answers(catalog):
    e = Economics()
    g = np.array([1024, 8192])
    plan = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=g, model=MODEL, economics=e)
    hw = catalog.accelerator("h100-sxm")
    m = catalog.model(MODEL)
    # capex: G x all-in + G x power / 1e6 x build $/MW (econ.economics.buildout.cluster_capex_usd)
    capex = g * hw["all_in_capex_usd"] + g * hw["all_in_power_w"] / 1e6 * e.build_usd_per_mw_it
    np.testing.assert_allclose(plan["capex_total_usd"].to_numpy(), capex, rtol=1e-12)
    np.testing.assert_allclose(plan["facility_power_mw"].to_numpy(), g * hw["all_in_power_w"] * e.pue / 1e6, rtol=1e-12)
    # default efficiency: seed 001's chain, MFU 50% x scaling efficiency (Table 5: 50% at 1,024, 35% at 8,192)
    # x goodput 1 - 0.23 = 0.77 (Table 8) (issue 13 made this the default; it was seed 000's curve x goodput)
    assert plan["mfu_frac"].to_list() == pytest.approx([0.5, 0.5], abs=1e-12)
    assert plan["scaling_efficiency_frac"].to_list() == pytest.approx([0.5, 0.35], abs=1e-12)
    assert plan["goodput_frac"][0] == pytest.approx(0.77, abs=1e-12)
    realized = g * hw["bf16_peak_flop_per_s"] * 0.5 * np.array([0.5, 0.35]) * 0.77
    days = 6 * m["active_matmul_params"] * 15e12 / realized / 86400
    np.testing.assert_allclose(plan["training_days"].to_numpy(), days, rtol=1e-12)
    assert plan["checkpoint_bytes"][0] == pytest.approx(14 * m["total_params"], rel=1e-12)
    assert plan["checkpoint_write_s"][0] == pytest.approx(14 * m["total_params"] / 100e9, rel=1e-12)
    # serving: whole replicas of the comparison's best deployment, at the utilization
    best = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm"]).best.row(0, named=True)
    reps = np.floor(g / best["total_gpus"])  # a serving unit is every GPU of the deployment (both pools)
    tokens = reps * best["total_gpus"] * best["output_tokens_per_s_per_gpu"] * e.utilization_frac * 86400
    np.testing.assert_allclose(plan["serving_tokens_per_day"].to_numpy(), tokens, rtol=1e-12)
    # revenue (issue 18.6): the output tokens at $0.90/M and the requests' input tokens (1,024 per 1,024 output) at
    # $0.90/M; every token the site can serve is sold by default (demand share 1), no cache hits
    revenue = tokens * 365 * (0.90 + 1024 / 1024 * 0.90) / 1e6
    np.testing.assert_allclose(plan["revenue_per_year_usd"].to_numpy(), revenue, rtol=1e-12)
    np.testing.assert_allclose(plan["revenue_capacity_sold_per_year_usd"].to_numpy(), revenue, rtol=1e-12)
    opex = plan["annual_energy_cost_usd"].to_numpy() + e.opex_frac_of_capex_per_year * g * hw["all_in_capex_usd"]
    np.testing.assert_allclose(plan["payback_years"].to_numpy(), capex / (revenue - opex), rtol=1e-12)
    # IRR over the accelerator life: capex = margin x (1 - (1 + r)^-5) / r
    r = plan["irr_frac"].to_numpy()
    np.testing.assert_allclose(capex, (revenue - opex) * (1 - (1 + r) ** -e.accelerator_life_years) / r, rtol=1e-9)


def test_demand_aware_payback_beside_the_capacity_sold_case(catalog):
    """Issue 18.6: revenue from a demand share and both token prices (cache hits at the cached price)."""
    e = Economics(cache_hit_frac=0.5)
    full = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, model=MODEL, economics=e,
                                price_usd_per_m_output_tokens=2.0, price_usd_per_m_input_tokens=1.0,
                                cached_price_frac=0.25).row(0, named=True)
    per_m = 2.0 + 1.0 * (1 - 0.5 + 0.5 * 0.25)  # 1,024 in per 1,024 out
    assert full["revenue_per_year_usd"] == pytest.approx(full["serving_tokens_per_day"] * 365 * per_m / 1e6, rel=1e-12)
    half = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, model=MODEL, economics=e,
                                price_usd_per_m_output_tokens=2.0, price_usd_per_m_input_tokens=1.0,
                                cached_price_frac=0.25, demand_share_frac=0.4).row(0, named=True)
    assert half["revenue_per_year_usd"] == pytest.approx(0.4 * full["revenue_per_year_usd"], rel=1e-12)
    assert half["revenue_capacity_sold_per_year_usd"] == pytest.approx(full["revenue_per_year_usd"], rel=1e-12)
    assert half["opex_per_year_usd"] == full["opex_per_year_usd"]  # energy billed at the utilization either way
    assert half["payback_capacity_sold_years"] == pytest.approx(full["payback_years"], rel=1e-12)
    assert half["payback_years"] > full["payback_years"] and half["irr_frac"] < full["irr_frac"]
    with pytest.raises(InvalidInputError, match=r"demand_share_frac=0 is outside \(0, 1\]"):
        cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=8, model=MODEL, demand_share_frac=0.0)
    with pytest.raises(InvalidInputError, match=r"demand_share_frac=1.5 is outside \(0, 1\]"):
        cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=8, model=MODEL, demand_share_frac=1.5)


def test_payback_carries_the_calibration_band(catalog):
    """Issue 18.1 / 18.6: a site's payback and IRR carry the band of the serving rate they rest on; revenue is linear
    in the rate, so each end is capex / (revenue x rate_end / rate - opex) and brackets the point."""
    kw = dict(hardware="h100-sxm", num_gpus=1024, model=MODEL, price_usd_per_m_output_tokens=0.9,
              demand_share_frac=0.5)
    r = cluster.cluster_plan(catalog, **kw).row(0, named=True)
    rate = cluster.serving_rate(catalog, MODEL, "h100-sxm", min_tokens_per_s_per_user=25.0, input_len=1024,
                                output_len=1024)
    fast, slow, tps = (rate[f"output_tokens_per_s_per_gpu{e}"] for e in ("_high", "_low", ""))
    assert slow < tps < fast
    for end, scale in (("low", fast / tps), ("high", slow / tps)):
        want = r["capex_total_usd"] / (r["revenue_per_year_usd"] * scale - r["opex_per_year_usd"])
        assert r[f"payback_years_{end}"] == pytest.approx(want, rel=1e-9)
    assert r["payback_years_low"] < r["payback_years"] < r["payback_years_high"]
    assert r["irr_frac_low"] < r["irr_frac"] < r["irr_frac_high"]


def test_cluster_plan_never_paid_back_is_null_not_inf(catalog):
    plan = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, model=MODEL, price_usd_per_m_output_tokens=0.0,
                                price_usd_per_m_input_tokens=0.0)
    assert plan["payback_years"][0] is None and plan["irr_frac"][0] is None
    assert "never paid back" in cluster.plan_status(plan.row(0, named=True))
    for c, dt in plan.schema.items():
        if dt.is_float():
            assert plan[c].drop_nulls().is_finite().all(), c


def test_cluster_plan_without_a_model_has_null_model_columns(catalog):
    plan = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=[8, 16])
    assert plan.height == 2 and plan["training_days"].is_null().all() and plan["capex_total_usd"].is_not_null().all()


def test_rack_scale_systems_fill_a_rack_with_their_domain():
    assert cluster.default_gpus_per_rack([72, 8, 36, 256]).tolist() == [72.0, 32.0, 36.0, 32.0]


@pytest.mark.parametrize("kwargs, match", [
    (dict(hardware="tpu-v6e"), r"hardware=tpu-v6e has no all_in_capex_usd in accelerators.csv \(it is not sold\)"),
    (dict(hardware="a100-80gb-sxm", training_precision="fp8"), r"hardware=a100-80gb-sxm has no dense fp8 peak"),
    (dict(hardware="h100-sxm", num_gpus=0), r"num_gpus=0 is outside \[1, 100000000\]"),
    (dict(hardware="h100-sxm", overhead_fracs=(0.6, 0.6)), r"goodput_frac \(1 - sum of overheads\)=-0.2 is outside"),
    (dict(hardware="h100-sxm", checkpoint_write_gb_per_s=0), r"checkpoint_write_gb_per_s=0 is outside \(0, inf\]"),
])
def test_cluster_plan_bad_input_is_named(catalog, kwargs, match):
    kwargs = {"num_gpus": 1024, **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        cluster.cluster_plan(catalog, **kwargs)


def _cli(capsys, *argv):
    import json

    from econ.cli import main
    code = main(list(argv))
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 and "--format" in argv else out.out), out.err


def test_cluster_cli_matches_cluster_plan(catalog, capsys):
    code, data, _ = _cli(capsys, "cluster", "--hardware", "h100-sxm", "--gpus", "1024", "--model", MODEL,
                         "--format", "json")
    assert code == 0
    plan = cluster.cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, model=MODEL).row(0, named=True)
    for c in ("capex_total_usd", "facility_power_mw", "training_days", "serving_tokens_per_day", "payback_years"):
        assert data[c] == pytest.approx(plan[c], rel=1e-12), c


def test_cluster_cli_flags_reach_the_model(catalog, capsys):
    code, data, _ = _cli(capsys, "cluster", "--hardware", "h100-sxm", "--gpus", "8,1024", "--pue", "1.1",
                         "--usd-per-kwh", "0.05", "--mfu", "0.4", "--overheads", "0.1,0.1,0,0", "--format", "json")
    assert code == 0 and [r["num_gpus"] for r in data] == [8, 1024]
    assert data[1]["mfu_frac"] == 0.4 and data[1]["goodput_frac"] == pytest.approx(0.8)
    hw = catalog.accelerator("h100-sxm")
    assert data[1]["facility_power_mw"] == pytest.approx(1024 * hw["all_in_power_w"] * 1.1 / 1e6, rel=1e-12)
    assert data[1]["annual_energy_cost_usd"] == pytest.approx(
        1024 * hw["all_in_power_w"] * 1.1 / 1e3 * 8760 * 0.7 * 0.05, rel=1e-12)


@pytest.mark.parametrize("argv, message", [
    (("cluster",), "--hardware is required (or give --scenario FILE)"),
    (("cluster", "--hardware", "tpu-v6e"), "has no all_in_capex_usd"),
    (("cluster", "--hardware", "h100-sxm", "--gpus", "0"), "--gpus=0 is outside [1, 100000000]"),
    (("cluster", "--hardware", "h100-sxm", "--pue", "6"), "--pue=6 is outside [1, 3]"),
    (("cluster", "--hardware", "h100-sxm", "--overheads", "a,b"), "--overheads='a,b' is not four comma-separated"),
])
def test_cluster_cli_bad_input_exits_2_with_the_flag_named(capsys, argv, message):
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and message in err, err


def test_serving_rate_reuse_equals_a_fresh_answer_and_follows_the_economics(catalog):
    """Issue 19.5: serving_rate keeps its answers (the Cluster page asks twice per rerun); a kept answer equals a fresh
    computation, a changed PUE, power price, tier or custom rate is a new answer, and a caller's change to the returned
    dict never reaches the kept one."""
    from dataclasses import replace

    kw = dict(min_tokens_per_s_per_user=25.0, input_len=1024, output_len=1024)
    base = Economics()
    first = cluster.serving_rate(catalog, MODEL, "h100-sxm", economics=base, **kw)
    first["batch_size"] = -1  # a caller's edit
    again = cluster.serving_rate(catalog, MODEL, "h100-sxm", economics=base, **kw)
    cluster._SERVING_CACHE._items.clear()
    fresh = cluster.serving_rate(catalog, MODEL, "h100-sxm", economics=base, **kw)
    assert again == fresh and again["batch_size"] != -1
    for econ in (replace(base, pue=1.377), replace(base, usd_per_kwh=0.123), replace(base, basis="neocloud"),
                 replace(base, basis="custom", usd_per_gpu_hour=3.21)):
        computed = cluster.serving_rate(catalog, MODEL, "h100-sxm", economics=econ, **kw)  # a new key
        assert cluster._SERVING_CACHE.get(catalog, next(k for _, k in reversed(cluster._SERVING_CACHE._items)))
        kept = cluster.serving_rate(catalog, MODEL, "h100-sxm", economics=econ, **kw)  # read back
        assert kept == computed
        assert kept["usd_per_m_output_tokens"] != fresh["usd_per_m_output_tokens"]
    assert len(cluster._SERVING_CACHE) <= cluster.SERVING_CACHE_ENTRIES
