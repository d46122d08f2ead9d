"""Tests of econ.analyses.cluster: seed known answers, the input-type triad, properties, and errors.

Tolerances: the seeds print results rounded to 0.1 of their unit (195.3 h, 11.6 %, 9.7x, 2.3 min),
so a rounded figure is checked with abs = half a unit of its last printed digit; exact products
(7 MW, 98 GB, 194,951.7 TFLOP/s) are checked at rel=1e-9.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from econ.analyses import cluster
from econ.analyses.cluster import (
    AIR_COOLING_LIMIT_KW_PER_RACK,
    air_cooling_ok,
    amdahl_speedup,
    annual_energy_cost_usd,
    annual_energy_kwh,
    checkpoint_bytes,
    checkpoint_write_time_s,
    cluster_capex_usd,
    cluster_mtbf_h,
    comm_compute_ratio,
    facility_power_w,
    goodput_frac,
    it_power_w,
    mfu_at_scale,
    payback_years,
    peak_flop_per_s,
    prob_at_least_one_failure,
    rack_count,
    rack_power_kw,
    realized_flop_per_s,
    revenue_per_year_usd,
    serving_tokens_per_day,
    size_cluster,
    training_cost_usd,
    training_flop,
    training_time_s,
)
from econ.errors import EconError, InvalidInputError

TFLOP = 1e12
GB = 1e9
H100_FLOP_PER_S = 989 * TFLOP   # BF16 dense, seed 001
H100_POWER_W = 700.0            # TDP, seed 001 Table 9
HOURS_PER_MIN = 1 / 60

# Seed 000's illustrative accelerator: ~1 PFLOP/s and ~1.4 kW all-in per GPU.
SEED000 = dict(flop_per_s_per_gpu=1e15, power_w_per_gpu=1400.0, all_in_capex_usd_per_gpu=45_000.0,
               gpus_per_rack=32, pue=1.0, usd_per_kwh=0.066, build_usd_per_mw_it=0.0)
H100 = dict(flop_per_s_per_gpu=H100_FLOP_PER_S, power_w_per_gpu=H100_POWER_W,
            all_in_capex_usd_per_gpu=45_000.0, gpus_per_rack=8, pue=1.40, usd_per_kwh=0.066,
            build_usd_per_mw_it=0.0)


# ------------------------------------------------------------------------------------------------
# Known answers
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("num_gpus", "expected", "tol"), [
    pytest.param(1, 0.62, 1e-12, id="mfu-1[seed000]"),
    pytest.param(8, 0.56, 1e-12, id="mfu-8[seed000]"),
    pytest.param(512, 0.44, 1e-12, id="mfu-512[seed000]"),
    pytest.param(8192, 0.36, 1e-12, id="mfu-8192[seed000]"),
    pytest.param(32768, 0.32, 1e-12, id="mfu-32768[seed000-text-32pct]"),
    pytest.param(2**40, cluster.MFU_FLOOR_FRAC, 0.0, id="mfu-floor-2^40[documented-floor]"),
])
def test_mfu_at_scale_seed000(num_gpus, expected, tol):
    assert mfu_at_scale(num_gpus) == pytest.approx(expected, abs=tol)


def test_seed000_32768_gpu_cluster_peak_realized_power():
    # Seed 000 prints: "32768 GPUs: peak 32.77 EF  MFU 32.0%  realized 10.49 EF  power 45.9 MW".
    peak = peak_flop_per_s(32768, 1e15)
    mfu = mfu_at_scale(32768)
    assert peak / 1e18 == pytest.approx(32.77, abs=0.005)
    assert realized_flop_per_s(32768, 1e15, mfu) / 1e18 == pytest.approx(10.49, abs=0.005)
    assert it_power_w(32768, 1400.0) / 1e6 == pytest.approx(45.9, abs=0.05)


def test_seed001_compound_utilization_1024_h100():
    # Seed 001, Systems Perspective 1.4: 1,012,736 TFLOP/s x 0.5 x 0.5 x 0.77 = 194,951.7 TFLOP/s, 19.2 %.
    peak = peak_flop_per_s(1024, H100_FLOP_PER_S)
    realized = realized_flop_per_s(1024, H100_FLOP_PER_S, 0.50, 0.50, 0.77)
    assert peak / TFLOP == pytest.approx(1_012_736, rel=1e-12)
    assert realized / TFLOP == pytest.approx(194_951.7, abs=0.05)
    # 0.50 x 0.50 x 0.77 = 0.1925 exactly; the seed prints it truncated as "19.2 percent".
    assert realized / peak == pytest.approx(0.1925, rel=1e-12)
    assert math.floor(realized / peak * 1000) / 10 == 19.2


@pytest.mark.parametrize(("overheads", "compound", "expected"), [
    pytest.param((0.05, 0.03, 0.10, 0.05), False, 0.77, id="table8-sum-77pct[seed001]"),
    pytest.param((0.05, 0.03, 0.10, 0.05), True, 0.95 * 0.97 * 0.90 * 0.95, id="table8-compound[formula]"),
    pytest.param((), False, 1.0, id="no-overheads"),
])
def test_goodput_frac(overheads, compound, expected):
    assert goodput_frac(*overheads, compound=compound) == pytest.approx(expected, rel=1e-12)


def test_goodput_frac_default_is_seed001_additive():
    assert goodput_frac(0.05, 0.03, 0.10, 0.05) == pytest.approx(0.77, rel=1e-12)


@pytest.mark.parametrize(("num_gpus", "it_mw", "pue", "facility_mw"), [
    pytest.param(10_000, 7.0, 1.40, 9.8, id="10k-h100-pue1.40[seed001]"),
    pytest.param(10_000, 7.0, 1.06, 7.42, id="10k-h100-pue1.06[seed001-table13]"),
])
def test_it_and_facility_power(num_gpus, it_mw, pue, facility_mw):
    it_w = it_power_w(num_gpus, H100_POWER_W)
    assert it_w / 1e6 == pytest.approx(it_mw, rel=1e-12)
    assert facility_power_w(it_w, pue) / 1e6 == pytest.approx(facility_mw, rel=1e-12)


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


@pytest.mark.parametrize(("rack_kw", "ok"), [
    pytest.param(12.0, True, id="traditional-12kw[seed001-table12]"),
    pytest.param(30.0, True, id="at-air-limit-30kw[seed001-table12]"),
    pytest.param(30.01, False, id="just-over-air-limit"),
    pytest.param(70.0, False, id="ai-rack-70kw[seed001-table12]"),
    pytest.param(100.0, False, id="high-density-100kw[seed001-table12]"),
])
def test_air_cooling_ok(rack_kw, ok):
    assert AIR_COOLING_LIMIT_KW_PER_RACK == 30.0
    assert bool(air_cooling_ok(rack_kw)) is ok


def test_rack_power_and_count():
    assert rack_power_kw(8, H100_POWER_W) == pytest.approx(5.6, rel=1e-12)
    assert rack_power_kw(72, 1000.0) == pytest.approx(72.0, rel=1e-12)
    assert rack_count(10_000, 8) == 1250
    assert rack_count(10_001, 8) == 1251   # the last rack is partly filled
    assert rack_count(1, 72) == 1


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


@pytest.mark.parametrize(("num_gpus", "mtbf_h", "mtbf_tol_h", "p24", "p24_tol"), [
    pytest.param(256, 195.3, 0.05, 0.116, 0.0005, id="mtbf-256[seed001]"),
    pytest.param(2048, 24.4, 0.05, 0.626, 0.0005, id="mtbf-2048[seed001]"),
    pytest.param(8192, 366.2 * HOURS_PER_MIN, 0.05 * HOURS_PER_MIN, 0.9804, 0.00005, id="mtbf-8192[seed001]"),
    pytest.param(100_000, 30 * HOURS_PER_MIN, 1e-12, 1.0, 0.0005, id="mtbf-100k[seed001]"),
])
def test_mtbf_and_failure_probability_seed001(num_gpus, mtbf_h, mtbf_tol_h, p24, p24_tol):
    assert cluster.MTBF_H_PER_GPU == 50_000.0
    assert cluster_mtbf_h(num_gpus) == pytest.approx(mtbf_h, abs=mtbf_tol_h)
    assert prob_at_least_one_failure(num_gpus, 24.0) == pytest.approx(p24, abs=p24_tol)


def test_mtbf_256_in_minutes_seed001():
    assert cluster_mtbf_h(256) * 60 == pytest.approx(11_718.8, abs=0.05)
    assert cluster_mtbf_h(2048) * 60 == pytest.approx(1_464.8, abs=0.05)


def test_failure_probability_zero_window_and_tiny_rate():
    assert prob_at_least_one_failure(100_000, 0.0) == 0.0
    # expm1 keeps precision where 1 - exp(-x) would round to 0: x = 1e-17.
    assert prob_at_least_one_failure(1, 5e-13, 50_000.0) == pytest.approx(1e-17, rel=1e-9, abs=0.0)


@pytest.mark.parametrize(("params", "size_gb", "write_s", "write_tol_s"), [
    pytest.param(7e9, 98, 0.98, 1e-9, id="ckpt-7b[seed001]"),
    pytest.param(70e9, 980, 9.8, 1e-9, id="ckpt-70b[seed001]"),
    pytest.param(175e9, 2450, 24.5, 1e-9, id="ckpt-175b[seed001]"),
    pytest.param(1e12, 14_000, 2.3 * 60, 0.05 * 60, id="ckpt-1t-2.3min[seed001]"),
])
def test_checkpoint_size_and_write_time_seed001(params, size_gb, write_s, write_tol_s):
    size = checkpoint_bytes(params)
    assert size / GB == pytest.approx(size_gb, rel=1e-12)
    assert checkpoint_write_time_s(size, 100 * GB) == pytest.approx(write_s, abs=write_tol_s)


@pytest.mark.parametrize(("num_gpus", "speedup"), [
    pytest.param(32, 7.8, id="amdahl-32[seed001]"),
    pytest.param(256, 9.7, id="amdahl-256[seed001]"),
    pytest.param(1024, 9.9, id="amdahl-1024[seed001]"),
    pytest.param(8192, 10.0, id="amdahl-8192[seed001]"),
    pytest.param(1, 1.0, id="amdahl-1[identity]"),
])
def test_amdahl_speedup_seed001(num_gpus, speedup):
    assert amdahl_speedup(num_gpus, 0.10) == pytest.approx(speedup, abs=0.05)


@pytest.mark.parametrize(("comm_s", "per_gpu_compute_s", "num_gpus", "rho", "tol"), [
    pytest.param(0.5604, 5.0, 256, 0.112, 0.0005, id="rho-dp-7b-256[seed001-table11]"),
    pytest.param(0.0296, 0.010, 256, 3.0, 0.05, id="rho-dp-350m-256[seed001-table11]"),
])
def test_comm_compute_ratio_seed001(comm_s, per_gpu_compute_s, num_gpus, rho, tol):
    total_compute_s = per_gpu_compute_s * num_gpus
    assert comm_compute_ratio(comm_s, total_compute_s, num_gpus) == pytest.approx(rho, abs=tol)


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


# ------------------------------------------------------------------------------------------------
# size_cluster: the orchestrator reproduces the seeds and the kernels
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


# ------------------------------------------------------------------------------------------------
# Input-type triad: float, ndarray, pl.Series and pl.Expr give identical results
# ------------------------------------------------------------------------------------------------

TRIAD_CASES = [
    pytest.param(mfu_at_scale, (8192,), id="mfu_at_scale"),
    pytest.param(peak_flop_per_s, (1024, H100_FLOP_PER_S), id="peak_flop_per_s"),
    pytest.param(realized_flop_per_s, (1024, H100_FLOP_PER_S, 0.5, 0.5, 0.77), id="realized_flop_per_s"),
    pytest.param(amdahl_speedup, (256, 0.1), id="amdahl_speedup"),
    pytest.param(comm_compute_ratio, (0.5604, 1280.0, 256), id="comm_compute_ratio"),
    pytest.param(it_power_w, (10_000, 700.0), id="it_power_w"),
    pytest.param(facility_power_w, (7e6, 1.4), id="facility_power_w"),
    pytest.param(annual_energy_kwh, (9.8e6, 0.8), id="annual_energy_kwh"),
    pytest.param(annual_energy_cost_usd, (8.5848e7, 0.066), id="annual_energy_cost_usd"),
    pytest.param(rack_count, (10_001, 8), id="rack_count"),
    pytest.param(rack_power_kw, (72, 1000.0), id="rack_power_kw"),
    pytest.param(air_cooling_ok, (72.0,), id="air_cooling_ok"),
    pytest.param(lambda *a: cluster_capex_usd(*a).total_usd, (100_000, 45_000.0, 700.0, 11.7e6),
                 id="cluster_capex_usd"),
    pytest.param(cluster_mtbf_h, (8192,), id="cluster_mtbf_h"),
    pytest.param(prob_at_least_one_failure, (2048, 24.0), id="prob_at_least_one_failure"),
    pytest.param(checkpoint_bytes, (175e9,), id="checkpoint_bytes"),
    pytest.param(checkpoint_write_time_s, (2.45e12, 1e11), id="checkpoint_write_time_s"),
    pytest.param(goodput_frac, (0.05, 0.03, 0.10, 0.05), id="goodput_frac"),
    pytest.param(lambda *a: goodput_frac(*a, compound=True), (0.05, 0.03, 0.10, 0.05), id="goodput_frac-compound"),
    pytest.param(training_flop, (175e9, 300e9), id="training_flop"),
    pytest.param(training_time_s, (3.15e23, 1.9495168e17), id="training_time_s"),
    pytest.param(training_cost_usd, (1.6e6, 1024, 2.0), id="training_cost_usd"),
    pytest.param(serving_tokens_per_day, (1000, 1000.0, 0.5), id="serving_tokens_per_day"),
    pytest.param(revenue_per_year_usd, (4.32e10, 1.0), id="revenue_per_year_usd"),
]


def _same(a, b):
    assert a == pytest.approx(b, rel=1e-12, abs=0.0)


@pytest.mark.parametrize(("kernel", "args"), TRIAD_CASES)
def test_input_type_triad(kernel, args):
    scalar = kernel(*args)
    as_array = kernel(*(np.array([a, a]) for a in args))
    as_series = kernel(*(pl.Series([a, a]) for a in args))
    expr = kernel(*(pl.lit(a) for a in args))
    assert isinstance(expr, pl.Expr)
    as_expr = pl.select(expr.alias("out"))["out"]
    assert np.ndim(scalar) == 0
    assert isinstance(as_array, np.ndarray) and as_array.shape == (2,)
    assert isinstance(as_series, pl.Series) and as_series.len() == 2
    for value in (*as_array.tolist(), *as_series.to_list(), as_expr.item()):
        _same(value, scalar)


def test_kernels_broadcast_arrays_against_scalars():
    gpus = np.array([256, 2048, 8192])
    np.testing.assert_allclose(cluster_mtbf_h(gpus), 50_000.0 / gpus, rtol=1e-15)
    grid = prob_at_least_one_failure(gpus[:, None], np.array([1.0, 24.0]))
    assert grid.shape == (3, 2)


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
positive = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(n1=gpu_counts, n2=gpu_counts, mtbf=st.floats(min_value=1.0, max_value=1e7))
def test_mtbf_falls_as_gpus_rise(n1, n2, mtbf):
    lo, hi = sorted((n1, n2))
    if lo < hi:
        assert cluster_mtbf_h(hi, mtbf) < cluster_mtbf_h(lo, mtbf)
    assert cluster_mtbf_h(hi, mtbf) * hi == pytest.approx(mtbf, rel=1e-12)


@given(n1=gpu_counts, n2=gpu_counts, window=st.floats(min_value=0.0, max_value=1e6),
       mtbf=st.floats(min_value=1.0, max_value=1e7))
def test_failure_probability_is_in_unit_interval_and_rises_with_gpus(n1, n2, window, mtbf):
    lo, hi = sorted((n1, n2))
    p_lo = prob_at_least_one_failure(lo, window, mtbf)
    p_hi = prob_at_least_one_failure(hi, window, mtbf)
    assert 0.0 <= p_lo <= p_hi <= 1.0


@given(n=gpu_counts, serial=st.floats(min_value=1e-6, max_value=1.0))
def test_amdahl_speedup_bounded(n, serial):
    s = amdahl_speedup(n, serial)
    assert 1.0 - 1e-12 <= s <= 1.0 / serial * (1 + 1e-12)
    assert s <= n * (1 + 1e-12)


@given(n=gpu_counts, k=st.integers(min_value=1, max_value=1000), power=positive,
       pue=st.floats(min_value=1.0, max_value=3.0))
def test_power_scales_linearly_with_gpus(n, k, power, pue):
    assert it_power_w(k * n, power) == pytest.approx(k * it_power_w(n, power), rel=1e-12)
    assert facility_power_w(it_power_w(k * n, power), pue) == pytest.approx(
        k * facility_power_w(it_power_w(n, power), pue), rel=1e-12)
    assert facility_power_w(it_power_w(n, power), pue) >= it_power_w(n, power)


@given(n1=gpu_counts, n2=gpu_counts)
def test_mfu_never_rises_with_scale_and_stays_above_floor(n1, n2):
    lo, hi = sorted((n1, n2))
    assert cluster.MFU_FLOOR_FRAC <= mfu_at_scale(hi) <= mfu_at_scale(lo) <= 0.62


@given(overheads=st.lists(st.floats(min_value=0.0, max_value=0.25), max_size=4))
def test_goodput_compound_is_at_least_additive(overheads):
    additive = goodput_frac(*overheads)
    compound = goodput_frac(*overheads, compound=True)
    assert compound >= additive - 1e-12
    assert 0.0 <= additive <= 1.0


@given(gpus=st.lists(gpu_counts, min_size=1, max_size=6), mfu=fracs, scaling=fracs, goodput=fracs,
       pue=st.floats(min_value=1.0, max_value=3.0), build=st.floats(min_value=0.0, max_value=5e7))
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


@pytest.mark.parametrize(("args", "match"), [
    pytest.param((-1.0, 1e9, 0.0), r"capex_usd=-1 is outside \[0, inf\] \(USD\)", id="capex-negative"),
    pytest.param((1e9, -1.0, 0.0), r"annual_revenue_usd=-1 is outside \[0, inf\] \(USD/yr\)",
                 id="revenue-negative"),
    pytest.param((1e9, 1e9, np.nan), r"annual_opex_usd=nan is not a finite number", id="opex-nan"),
])
def test_payback_rejects_bad_input(args, match):
    with pytest.raises(InvalidInputError, match=match):
        payback_years(*args)


def test_invalid_input_error_is_a_value_error():
    assert issubclass(InvalidInputError, EconError)
    assert issubclass(InvalidInputError, ValueError)
