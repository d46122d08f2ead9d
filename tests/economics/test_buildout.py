"""Tests of econ.economics.buildout: capex (all-in and itemized), energy, revenue, payback, training cost.

Known answers: seed 004 (100,000 H100 at ~$45k all-in = $4.5B, ~$5B per cluster), seed 001 (PUE savings),
E. Cheah's H100 cluster capex spreadsheet (network cost per GPU by fabric tier), DeepSeek-V3 (2.788M H800
GPU-hours x $2 = $5.576M). Tolerances: exact products at rel=1e-12; Cheah's network rows at 2.2%.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.assumptions import Economics
from econ.economics import buildout as bo
from econ.economics.buildout import (
    annual_energy_cost_usd,
    annual_energy_kwh,
    cluster_capex_usd,
    payback_years,
    revenue_per_year_usd,
    training_cost_usd,
)
from econ.errors import InvalidInputError
from econ.physics.fleet import facility_power_w, realized_flop_per_s, serving_tokens_per_day, training_flop, training_time_s
from econ.tables.catalog import load_catalog

TFLOP = 1e12
H100_FLOP_PER_S = 989 * TFLOP   # BF16 dense, seed 001
H100_POWER_W = 700.0            # TDP, seed 001 Table 9
BUILD = Economics().build_usd_per_mw_it   # the one default facility price per MW of IT load


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


# ------------------------------------------------------------------------------------------------
# Energy, capex, revenue, payback
# ------------------------------------------------------------------------------------------------

def test_pue_saving_is_millions_per_year_seed001():
    # Seed 001 Table 13 text: 10 MW IT at PUE 1.58 is 15.8 MW, at 1.06 is 10.6 MW, "a savings of 5.2 MW
    # ... millions of dollars per year". At Texas industrial 6.60 c/kWh (reference/power_prices.csv):
    # 5.2 MW x 8,760 h x 0.066 USD/kWh = 3,006,432 USD.
    legacy_w = facility_power_w(10e6, 1.58)
    liquid_w = facility_power_w(10e6, 1.06)
    assert legacy_w / 1e6 == pytest.approx(15.8, rel=1e-12)
    assert liquid_w / 1e6 == pytest.approx(10.6, rel=1e-12)
    saving_kwh = annual_energy_kwh(legacy_w) - annual_energy_kwh(liquid_w)
    assert saving_kwh == pytest.approx(5.2e3 * 8760, rel=1e-12)
    assert annual_energy_cost_usd(saving_kwh, 0.066) == pytest.approx(3_006_432, rel=1e-9)


def test_annual_energy_load_factor_scales_linearly():
    # 9.8 MW x 8,760 h = 85,848 MWh at full load; half load is half the energy.
    assert annual_energy_kwh(9.8e6) == pytest.approx(85_848_000, rel=1e-12)
    assert annual_energy_kwh(9.8e6, 0.5) == pytest.approx(42_924_000, rel=1e-12)


def test_capex_100k_h100_seed004():
    # Seed 004: H100 ~ $45,000 all-in incl. networking and infrastructure; 100,000 GPUs ~ $5B.
    capex = cluster_capex_usd(100_000, 45_000.0, H100_POWER_W, 0.0)
    assert capex.accelerators_usd == pytest.approx(4.5e9, rel=1e-12)
    assert capex.facility_usd == 0.0
    assert 4.5e9 <= capex.total_usd <= 5.0e9


def test_capex_facility_build_per_mw():
    # 100,000 x 700 W = 70 MW IT at $11.7M/MW (reference/facility.csv, C&W 2025) = $819M.
    capex = cluster_capex_usd(100_000, 45_000.0, H100_POWER_W, 11.7e6)
    assert capex.facility_usd == pytest.approx(819e6, rel=1e-12)
    assert capex.total_usd == pytest.approx(4.5e9 + 819e6, rel=1e-12)


def test_training_flop_time_cost():
    # GPT-3: 175B params x 300B tokens, 3.14e23 FLOP (Brown et al. 2020, arXiv:2005.14165 Table D.1);
    # 6 N D = 3.15e23.
    flop = training_flop(175e9, 300e9)
    assert flop == pytest.approx(3.15e23, rel=1e-12)
    assert flop == pytest.approx(3.14e23, rel=0.005)
    # On seed 001's 1,024-H100 cluster (194,951.7 TFLOP/s useful): 3.15e23 / 1.949517e17 = 1.6158e6 s.
    realized = realized_flop_per_s(1024, H100_FLOP_PER_S, 0.5, 0.5, 0.77)
    seconds = training_time_s(flop, realized)
    assert seconds == pytest.approx(3.15e23 / 194_951.68e12, rel=1e-9)
    assert seconds / 86400 == pytest.approx(18.7, abs=0.05)
    # 448.8 h x 1,024 GPUs x $2/GPU-hour.
    assert training_cost_usd(seconds, 1024, 2.0) == pytest.approx(seconds / 3600 * 1024 * 2.0, rel=1e-12)
    assert training_cost_usd(3600.0, 1, 2.5) == pytest.approx(2.5, rel=1e-12)


def test_serving_revenue_and_payback():
    # 1,000 GPUs x 1,000 tokens/s x 50 % x 86,400 s = 4.32e10 tokens/day;
    # x 365 d x $1 / 1e6 tokens = $15.768M/yr.
    tokens = serving_tokens_per_day(1000, 1000.0, 0.5)
    assert tokens == pytest.approx(4.32e10, rel=1e-12)
    assert revenue_per_year_usd(tokens, 1.0) == pytest.approx(15_768_000, rel=1e-12)
    assert payback_years(4.5e9, 1.0e9, 0.25e9) == pytest.approx(6.0, rel=1e-12)


@pytest.mark.parametrize(("capex", "revenue", "opex", "expected"), [
    pytest.param(1e9, 1e8, 1e8, math.inf, id="zero-margin-never"),
    pytest.param(1e9, 1e8, 2e8, math.inf, id="negative-margin-never"),
    pytest.param(0.0, 1e8, 2e8, 0.0, id="no-capex-zero-even-at-a-loss"),
    pytest.param(0.0, 0.0, 0.0, 0.0, id="all-zero-not-nan"),
])
def test_payback_edge_cases_are_documented_values_not_nan(capex, revenue, opex, expected):
    years = payback_years(capex, revenue, opex)
    assert not np.isnan(years)
    assert years == expected


def test_payback_vectorized():
    years = payback_years(np.array([4.5e9, 1e9, 0.0]), np.array([1e9, 1e8, 1e8]), 0.25e9)
    np.testing.assert_array_equal(years, [6.0, np.inf, 0.0])


@pytest.mark.parametrize(("args", "match"), [
    pytest.param((-1.0, 1e9, 0.0), r"capex_usd=-1 is outside \[0, inf\] \(USD\)", id="capex-negative"),
    pytest.param((1e9, -1.0, 0.0), r"annual_revenue_usd=-1 is outside \[0, inf\] \(USD/yr\)",
                 id="revenue-negative"),
    pytest.param((1e9, 1e9, np.nan), r"annual_opex_usd=nan is not a finite number", id="opex-nan"),
])
def test_payback_rejects_bad_input(args, match):
    with pytest.raises(InvalidInputError, match=match):
        payback_years(*args)


def test_gpu_hours_cost_deepseek_v3():
    # DeepSeek-V3 technical report (arXiv:2412.19437, Table 1): 2.788M H800 GPU-hours x $2 = $5.576M
    assert bo.gpu_hours_cost_usd(2.788e6, 2.0) == pytest.approx(5.576e6, rel=1e-12)


def test_facility_capex_is_mw_times_price():
    # 150 MW of IT at the Economics default $11.7M/MW (Cushman & Wakefield 2025) = $1.755B
    assert bo.facility_capex_usd(150e6, BUILD) == pytest.approx(150 * 11.7e6, rel=1e-12)
    assert cluster_capex_usd(100_000, 45_000.0, 1500.0, BUILD).facility_usd == bo.facility_capex_usd(150e6, BUILD)


# ------------------------------------------------------------------------------------------------
# Itemized build-out
# ------------------------------------------------------------------------------------------------

def test_buildout_table_sourced(catalog):
    t = catalog.buildout_capex
    assert set(bo.BUILDOUT_ITEMS.values()) <= set(t["id"])
    assert (t["source"].str.len_chars() > 10).all() and t["as_of"].null_count() == 0


@pytest.mark.parametrize(("g", "tiers", "cheah_network_usd_per_gpu"), [
    pytest.param(512, 1, (288_000 + 675_840) / 512, id="1-tier-512"),
    pytest.param(1024, 2, (1_728_000 + 2_621_440) / 1024, id="2-tier-1024"),
    pytest.param(32768, 3, (92_160_000 + 124_518_400) / 32768, id="3-tier-32768"),
])
def test_network_by_tier_vs_cheah_spreadsheet(catalog, g, tiers, cheah_network_usd_per_gpu):
    p = bo.buildout_prices(catalog, "h100-sxm", basis="itemized")
    sw, links, t = bo.network_usd_per_gpu(g, p.switch_usd, p.switch_radix, p.link_usd, p.rails)
    assert int(t) == tiers
    assert float(sw) == pytest.approx((2 * tiers - 1) / 64 * 36_000)        # Cheah's switch counts exactly
    assert float(sw + links) == pytest.approx(cheah_network_usd_per_gpu, rel=0.022)


def test_100k_h100_seed004(catalog):
    # seed 004's $45k all-in per H100: $4.5B before the building
    p = bo.buildout_prices(catalog, "h100-sxm", all_in_it_usd_per_gpu=45_000.0)
    row = bo.buildout_capex(100_000, p, it_power_w_per_gpu=1500.0, build_usd_per_mw_it=0.0).row(0, named=True)
    assert row["capex_it_usd"] == pytest.approx(4.5e9, rel=1e-12) and row["capex_total_usd"] == pytest.approx(4.5e9)
    # itemized: board 31,905 + host 6,845 + 3-tier network + storage 278 ~ $45.7k per GPU, $4.57B
    item = bo.buildout_capex(100_000, bo.buildout_prices(catalog, "h100-sxm", basis="itemized"),
                             it_power_w_per_gpu=1500.0, build_usd_per_mw_it=BUILD).row(0, named=True)
    assert item["it_capex_per_gpu_usd"] == pytest.approx(45_000, rel=0.02)
    # seed 004's ~$5B lies between IT only and IT + a full new build at 150 MW (the Economics default $/MW)
    assert item["capex_it_usd"] < 5e9 < item["capex_total_usd"]
    parts = ("capex_accelerators_usd", "capex_servers_usd", "capex_network_switches_usd", "capex_network_links_usd",
             "capex_storage_usd", "capex_it_all_in_usd")
    assert sum(item[c] for c in parts) == pytest.approx(item["capex_it_usd"], rel=1e-12)
    assert item["capex_facility_usd"] == pytest.approx(150 * 11.7e6, rel=1e-12)


def test_gpus_for_capex_across_a_tier_boundary(catalog):
    p = bo.buildout_prices(catalog, "h100-sxm", basis="itemized")
    kw = dict(it_power_w_per_gpu=1500.0, build_usd_per_mw_it=BUILD)
    cost_512 = bo.buildout_capex(512, p, **kw)["capex_total_usd"][0]
    assert bo.gpus_for_capex(cost_512, p, **kw) == 512
    assert bo.gpus_for_capex(cost_512 * 1.001, p, **kw) == 512   # 513 needs a 2nd tier
    # seed 004 basis: $45k all-in and no building -> 111,111 GPUs for $5B
    p45 = bo.buildout_prices(catalog, "h100-sxm", all_in_it_usd_per_gpu=45_000.0)
    assert bo.gpus_for_capex(5e9, p45, it_power_w_per_gpu=1500.0, build_usd_per_mw_it=0.0) == 111_111


def test_it_prices_are_all_in_or_itemized(catalog):
    allin = bo.buildout_prices(catalog, "h100-sxm")
    assert allin.basis == "all-in" and allin.all_in_it_usd_per_gpu == catalog.accelerator("h100-sxm")["all_in_capex_usd"]
    item = bo.buildout_prices(catalog, "h100-sxm", basis="itemized")
    assert item.basis == "itemized" and item.accelerator_usd_per_gpu == 31_905.0
    # a rack-scale system sold by the rack has no board price: the itemized basis falls back to its all-in price
    assert bo.buildout_prices(catalog, "gb200-nvl72", basis="itemized").basis == "all-in"
    # the facility is not an IT item: its price per MW is the build cost given (Economics, or a named facility)
    row = bo.buildout_capex(1000, item, it_power_w_per_gpu=1500.0, build_usd_per_mw_it=BUILD).row(0, named=True)
    assert row["facility_usd_per_mw_it"] == BUILD == 11.7e6
    assert row["capex_facility_usd"] == pytest.approx(1.5 * BUILD, rel=1e-12)
    bernstein = catalog.facility("liquid-cooled-ai-bernstein")
    assert (bernstein["build_usd_per_mw_it"], bernstein["cooling"]) == (14.83e6, "liquid")


# ------------------------------------------------------------------------------------------------
# Errors and properties
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "match"), [
    (lambda c: bo.buildout_prices(c, "h100-sxm", basis="itemized", switch_usd=-5.0), r"switch_usd=-5 is outside"),
    (lambda c: bo.buildout_prices(c, "h100-sxm", basis="rented"), r"it_capex_basis='rented' is not one of"),
    (lambda c: bo.buildout_prices(c, "h100-sxm", server_usd_per_gpu=5000.0), r"server_usd_per_gpu=5000 prices an itemized"),
    (lambda c: bo.buildout_prices(c, "h100-sxm", cooling="oil"), r"unknown build-out price\(s\) \['cooling'\]"),
    (lambda c: bo.buildout_prices(c, "tpu-v6e"), r"hardware=tpu-v6e has no all_in_capex_usd"),
    (lambda c: bo.buildout_capex(8, bo.buildout_prices(c, "h100-sxm"), it_power_w_per_gpu=1500.0,
                                 build_usd_per_mw_it=-1.0), r"build_usd_per_mw_it=-1 is outside \[0, 1000000000\] \(USD/MW\)"),
    (lambda c: bo.gpus_for_capex(0.0, bo.buildout_prices(c, "h100-sxm"), it_power_w_per_gpu=1500.0,
                                 build_usd_per_mw_it=BUILD), r"capex_budget_usd=0 is outside \(0"),
])
def test_bad_input_is_named(catalog, call, match):
    with pytest.raises(InvalidInputError, match=match):
        call(catalog)


@settings(max_examples=40, deadline=None)
@given(g=st.integers(1, 2_000_000))
def test_network_cost_per_gpu_never_falls_with_size(g):
    sw, links, t = bo.network_usd_per_gpu(np.array([g, g + 1, 2 * g]), 36_000.0, 64.0, 1280.0, 8.0)
    total = sw + links
    assert (np.diff(total) >= 0).all() and (t >= 1).all()
    assert (8 * 2 * 32.0 ** t >= np.array([g, g + 1, 2 * g])).all()          # the fabric holds the GPUs


@settings(max_examples=30, deadline=None)
@given(budget=st.floats(1e6, 5e10))
def test_capex_inverse_is_consistent(budget):
    p = bo.BuildoutPrices(accelerator_usd_per_gpu=31_905.0, server_usd_per_gpu=6_845.0, switch_usd=36_000.0,
                          switch_radix=64.0, link_usd=1280.0, rails=8.0, storage_usd_per_gpu=278.0)
    kw = dict(it_power_w_per_gpu=1500.0, build_usd_per_mw_it=11.7e6)
    g = bo.gpus_for_capex(budget, p, **kw)
    if g:
        assert bo.buildout_capex(g, p, **kw)["capex_total_usd"][0] <= budget * (1 + 1e-12)
    assert bo.buildout_capex(g + 1, p, **kw)["capex_total_usd"][0] > budget


# ------------------------------------------------------------------------------------------------
# Input-type triad: float, ndarray, pl.Series and pl.Expr give identical results
# ------------------------------------------------------------------------------------------------

TRIAD_CASES = [
    pytest.param(annual_energy_kwh, (9.8e6, 0.8), id="annual_energy_kwh"),
    pytest.param(annual_energy_cost_usd, (8.5848e7, 0.066), id="annual_energy_cost_usd"),
    pytest.param(bo.facility_capex_usd, (70e6, 11.7e6), id="facility_capex_usd"),
    pytest.param(lambda *a: cluster_capex_usd(*a).total_usd, (100_000, 45_000.0, 700.0, 11.7e6),
                 id="cluster_capex_usd"),
    pytest.param(training_cost_usd, (1.6e6, 1024, 2.0), id="training_cost_usd"),
    pytest.param(bo.gpu_hours_cost_usd, (2.788e6, 2.0), id="gpu_hours_cost_usd"),
    pytest.param(revenue_per_year_usd, (4.32e10, 1.0), id="revenue_per_year_usd"),
]


@pytest.mark.parametrize(("kernel", "args"), TRIAD_CASES)
def test_input_type_triad(kernel, args, input_type_triad):
    input_type_triad(kernel, args)
