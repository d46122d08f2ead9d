"""Tests of econ.physics.fleet: seed known answers, the input-type triad, properties, and errors.

Tolerances: the seeds print results rounded to 0.1 of their unit (195.3 h, 11.6 %, 9.7x, 2.3 min),
so a rounded figure is checked with abs = half a unit of its last printed digit; exact products
(7 MW, 98 GB, 194,951.7 TFLOP/s) are checked at rel=1e-9.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.errors import InvalidInputError
from econ.physics import fleet
from econ.physics.communication import communication_computation_ratio
from econ.physics.fleet import (
    AIR_COOLING_LIMIT_KW_PER_RACK,
    air_cooling_ok,
    amdahl_speedup,
    checkpoint_bytes,
    checkpoint_write_time_s,
    cluster_mtbf_h,
    facility_power_w,
    goodput_frac,
    it_power_w,
    mfu_at_scale,
    peak_flop_per_s,
    prob_at_least_one_failure,
    rack_count,
    rack_power_kw,
    realized_flop_per_s,
    serving_tokens_per_day,
    training_flop,
    training_time_s,
)
from econ.tables.catalog import load_catalog

TFLOP = 1e12
GB = 1e9
H100_FLOP_PER_S = 989 * TFLOP   # BF16 dense, seed 001
H100_POWER_W = 700.0            # TDP, seed 001 Table 9
HOURS_PER_MIN = 1 / 60


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


# ------------------------------------------------------------------------------------------------
# Known answers
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("num_gpus", "expected", "tol"), [
    pytest.param(1, 0.62, 1e-12, id="mfu-1[seed000]"),
    pytest.param(8, 0.56, 1e-12, id="mfu-8[seed000]"),
    pytest.param(512, 0.44, 1e-12, id="mfu-512[seed000]"),
    pytest.param(8192, 0.36, 1e-12, id="mfu-8192[seed000]"),
    pytest.param(32768, 0.32, 1e-12, id="mfu-32768[seed000-text-32pct]"),
    pytest.param(2**40, fleet.MFU_FLOOR_FRAC, 0.0, id="mfu-floor-2^40[documented-floor]"),
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


@pytest.mark.parametrize(("num_gpus", "mtbf_h", "mtbf_tol_h", "p24", "p24_tol"), [
    pytest.param(256, 195.3, 0.05, 0.116, 0.0005, id="mtbf-256[seed001]"),
    pytest.param(2048, 24.4, 0.05, 0.626, 0.0005, id="mtbf-2048[seed001]"),
    pytest.param(8192, 366.2 * HOURS_PER_MIN, 0.05 * HOURS_PER_MIN, 0.9804, 0.00005, id="mtbf-8192[seed001]"),
    pytest.param(100_000, 30 * HOURS_PER_MIN, 1e-12, 1.0, 0.0005, id="mtbf-100k[seed001]"),
])
def test_mtbf_and_failure_probability_seed001(num_gpus, mtbf_h, mtbf_tol_h, p24, p24_tol):
    assert fleet.MTBF_H_PER_GPU == 50_000.0
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


@pytest.mark.parametrize(("comm_s", "per_gpu_compute_s", "rho", "tol"), [
    pytest.param(0.5604, 5.0, 0.112, 0.0005, id="rho-dp-7b-256[seed001-table11]"),
    pytest.param(0.0296, 0.010, 3.0, 0.05, id="rho-dp-350m-256[seed001-table11]"),
])
def test_comm_compute_ratio_seed001(comm_s, per_gpu_compute_s, rho, tol):
    # the one ratio (econ.physics.communication): T_comm(N) over the compute time of ONE GPU per step, T_compute / N
    assert communication_computation_ratio(comm_s, per_gpu_compute_s) == pytest.approx(rho, abs=tol)


def test_power_basis_names_and_typed_value(catalog):
    hw = catalog.accelerator("h100-sxm")
    assert fleet.power_w_per_gpu(hw, "tdp") == 700.0
    assert fleet.power_w_per_gpu(hw, "all-in") == hw["all_in_power_w"] == 1500.0
    assert fleet.power_w_per_gpu(hw, "1400") == 1400.0 and fleet.power_w_per_gpu(hw, 1234.5) == 1234.5


@pytest.mark.parametrize(("kw", "cls"), [(12.0, "air"), (30.0, "air"), (30.1, "liquid"), (70.0, "liquid"),
                                         (120.0, "liquid, high-density")])
def test_rack_cooling_classes_seed001(kw, cls):
    assert fleet.rack_cooling(kw) == cls


def test_seed001_chain_1024_gpus():
    row = fleet.efficiency_chain(1024, "seed001").row(0, named=True)
    assert (row["mfu_frac"], row["scaling_efficiency_frac"], row["goodput_frac"]) == pytest.approx((0.5, 0.5, 0.77))
    assert row["realized_frac_of_peak"] == pytest.approx(0.1925, rel=1e-12)
    assert row["chain"] == "MFU 50.0% x scaling 50.0% x goodput 77.0% = 19.25% of peak"


@pytest.mark.parametrize(("g", "eta"), [(1, 1.0), (32, 0.90), (256, 0.70), (1024, 0.50), (8192, 0.35),
                                        (100_000, 0.35)])
def test_scaling_efficiency_table5(g, eta):
    assert fleet.scaling_efficiency_frac(g) == pytest.approx(eta, abs=1e-12)


def test_young_interval_and_waste():
    # tau = sqrt(2 x 24.5 s x 6.1 h): the waste at tau is the minimum of write/tau + tau/(2M)
    m = 50_000 / 8192 * 3600
    tau = fleet.young_checkpoint_interval_s(24.5, m)
    assert tau == pytest.approx(np.sqrt(2 * 24.5 * m))
    w = fleet.checkpoint_failure_overhead_frac(tau, 24.5, m, 0.0)
    assert w == pytest.approx(np.sqrt(2 * 24.5 / m), rel=1e-12)
    for other in (tau * 0.5, tau * 2):
        assert fleet.checkpoint_failure_overhead_frac(other, 24.5, m, 0.0) > w


def test_training_flop_and_time():
    # GPT-3: 175B params x 300B tokens, 3.14e23 FLOP (Brown et al. 2020, arXiv:2005.14165 Table D.1); 6 N D = 3.15e23.
    flop = training_flop(175e9, 300e9)
    assert flop == pytest.approx(3.15e23, rel=1e-12)
    # On seed 001's 1,024-H100 cluster (194,951.7 TFLOP/s useful): 18.7 days.
    seconds = training_time_s(flop, realized_flop_per_s(1024, H100_FLOP_PER_S, 0.5, 0.5, 0.77))
    assert seconds / 86400 == pytest.approx(18.7, abs=0.05)


def test_implied_mfu_of_a_published_run():
    # DeepSeek-V3 pre-training: 2.664M H800 GPU-hours for 14.8T tokens at ~37B active params, 989 TFLOP/s BF16
    flop = training_flop(37e9, 14.8e12)
    assert fleet.implied_mfu_frac(flop, 2.664e6, 989e12) == pytest.approx(flop / (2.664e6 * 3600 * 989e12), rel=1e-12)


def test_pue_range_is_the_cost_models():
    from econ.assumptions import Economics
    from econ.vocabulary import bounds
    assert bounds("pue") == (1.0, 3.0)                      # the one range (econ.vocabulary)
    Economics(pue=bounds("pue")[1])                         # the cost model accepts the top of the range
    with pytest.raises(InvalidInputError, match=r"pue=3.01 is outside \[1, 3\]"):
        Economics(pue=3.01)


# ------------------------------------------------------------------------------------------------
# Input-type triad: float, ndarray, pl.Series and pl.Expr give identical results
# ------------------------------------------------------------------------------------------------

TRIAD_CASES = [
    pytest.param(mfu_at_scale, (8192,), id="mfu_at_scale"),
    pytest.param(peak_flop_per_s, (1024, H100_FLOP_PER_S), id="peak_flop_per_s"),
    pytest.param(realized_flop_per_s, (1024, H100_FLOP_PER_S, 0.5, 0.5, 0.77), id="realized_flop_per_s"),
    pytest.param(amdahl_speedup, (256, 0.1), id="amdahl_speedup"),
    pytest.param(communication_computation_ratio, (0.5604, 5.0), id="communication_computation_ratio"),
    pytest.param(it_power_w, (10_000, 700.0), id="it_power_w"),
    pytest.param(facility_power_w, (7e6, 1.4), id="facility_power_w"),
    pytest.param(rack_count, (10_001, 8), id="rack_count"),
    pytest.param(rack_power_kw, (72, 1000.0), id="rack_power_kw"),
    pytest.param(air_cooling_ok, (72.0,), id="air_cooling_ok"),
    pytest.param(cluster_mtbf_h, (8192,), id="cluster_mtbf_h"),
    pytest.param(prob_at_least_one_failure, (2048, 24.0), id="prob_at_least_one_failure"),
    pytest.param(checkpoint_bytes, (175e9,), id="checkpoint_bytes"),
    pytest.param(checkpoint_write_time_s, (2.45e12, 1e11), id="checkpoint_write_time_s"),
    pytest.param(goodput_frac, (0.05, 0.03, 0.10, 0.05), id="goodput_frac"),
    pytest.param(lambda *a: goodput_frac(*a, compound=True), (0.05, 0.03, 0.10, 0.05), id="goodput_frac-compound"),
    pytest.param(training_flop, (175e9, 300e9), id="training_flop"),
    pytest.param(training_time_s, (3.15e23, 1.9495168e17), id="training_time_s"),
    pytest.param(serving_tokens_per_day, (1000, 1000.0, 0.5), id="serving_tokens_per_day"),
    pytest.param(fleet.young_checkpoint_interval_s, (24.5, 21972.0), id="young_checkpoint_interval_s"),
    pytest.param(fleet.checkpoint_failure_overhead_frac, (1000.0, 24.5, 21972.0, 600.0),
                 id="checkpoint_failure_overhead_frac"),
    pytest.param(fleet.littles_law_concurrency, (100.0, 20.0), id="littles_law_concurrency"),
    pytest.param(fleet.implied_mfu_frac, (3.3e24, 2.664e6, 989e12), id="implied_mfu_frac"),
]


@pytest.mark.parametrize(("kernel", "args"), TRIAD_CASES)
def test_input_type_triad(kernel, args, input_type_triad):
    input_type_triad(kernel, args)


def test_kernels_broadcast_arrays_against_scalars():
    gpus = np.array([256, 2048, 8192])
    np.testing.assert_allclose(cluster_mtbf_h(gpus), 50_000.0 / gpus, rtol=1e-15)
    grid = prob_at_least_one_failure(gpus[:, None], np.array([1.0, 24.0]))
    assert grid.shape == (3, 2)


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
       pue=st.floats(*__import__("econ.vocabulary").vocabulary.bounds("pue")))
def test_power_scales_linearly_with_gpus(n, k, power, pue):
    assert it_power_w(k * n, power) == pytest.approx(k * it_power_w(n, power), rel=1e-12)
    assert facility_power_w(it_power_w(k * n, power), pue) == pytest.approx(
        k * facility_power_w(it_power_w(n, power), pue), rel=1e-12)
    assert facility_power_w(it_power_w(n, power), pue) >= it_power_w(n, power)


@given(n1=gpu_counts, n2=gpu_counts)
def test_mfu_never_rises_with_scale_and_stays_above_floor(n1, n2):
    lo, hi = sorted((n1, n2))
    assert fleet.MFU_FLOOR_FRAC <= mfu_at_scale(hi) <= mfu_at_scale(lo) <= 0.62


@given(overheads=st.lists(st.floats(min_value=0.0, max_value=0.25), max_size=4))
def test_goodput_compound_is_at_least_additive(overheads):
    additive = goodput_frac(*overheads)
    compound = goodput_frac(*overheads, compound=True)
    assert compound >= additive - 1e-12
    assert 0.0 <= additive <= 1.0


@settings(max_examples=60, deadline=None)
@given(g1=st.integers(1, 10_000_000), g2=st.integers(1, 10_000_000))
def test_scaling_efficiency_never_rises(g1, g2):
    lo, hi = sorted((g1, g2))
    assert 0.35 - 1e-12 <= fleet.scaling_efficiency_frac(hi) <= fleet.scaling_efficiency_frac(lo) <= 1.0


# ------------------------------------------------------------------------------------------------
# Errors: name the field, value and range
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("call", "match"), [
    (lambda: fleet.efficiency_chain(8, "seed002"), r"efficiency_model='seed002' is not one of"),
    (lambda: fleet.efficiency_chain(8, mfu_frac=0.0), r"mfu_frac=0 is outside \(0, 1\]"),
    (lambda: fleet.efficiency_chain(0), r"num_gpus=0 is outside \[1, 1000000000\]"),
    (lambda: fleet.power_w_per_gpu({"tdp_w": 700.0, "all_in_power_w": 1500.0}, "bogus"),
     r"power_basis='bogus' is not one of"),
    (lambda: fleet.power_w_per_gpu({"tdp_w": 700.0, "all_in_power_w": 1500.0}, -700.0),
     r"power_w_per_gpu=-700 is outside \(0, 100000\]"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()
