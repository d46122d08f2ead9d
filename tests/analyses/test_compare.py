"""econ.analyses.compare: the SLO-constrained hardware comparison, the frontier, and the cluster plan.

Known answers are checked against independent computations with the same public kernels
(``econ.analyses.sweep.evaluate`` on one configuration; ``econ.analyses.cluster`` formulas written out), at rel=1e-12
(the same floating-point operations) unless stated.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import econ.analyses.compare as compare
from econ.assumptions import DEFAULT, Economics
from econ.tables.catalog import load_catalog
from econ.analyses.compare import (BEST_COLUMNS, COST_PARTS, DEFAULT_BATCH_SIZES, cluster_plan, default_gpus_per_rack,
                          hardware_comparison, search_space, throughput_frontier)
from econ.errors import InvalidInputError, UnknownIdError
from econ.engine import evaluate

MODEL = "llama-3.3-70b"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def default_comparison(catalog):
    return hardware_comparison(catalog, model=MODEL, min_tokens_per_s_per_user=20.0)


def test_one_row_per_accelerator_and_the_contract_columns(catalog, default_comparison):
    best = default_comparison.best
    assert best.columns == list(BEST_COLUMNS)
    assert sorted(best["hardware"].to_list()) == sorted(catalog.accelerators["id"].to_list())
    ranked = best.filter(pl.col("rank").is_not_null())
    assert ranked["rank"].to_list() == list(range(1, ranked.height + 1))
    assert ranked["usd_per_m_output_tokens"].is_sorted()
    assert (ranked["tokens_per_s_per_user"] >= 20.0).all()
    unranked = best.filter(pl.col("rank").is_null())
    assert (unranked["status"].str.len_chars() > 0).all() and unranked["usd_per_m_output_tokens"].is_null().all()


def test_best_row_is_the_minimum_of_the_grid_and_matches_a_single_evaluation(catalog, default_comparison):
    best = default_comparison.best.filter(pl.col("hardware") == "h100-sxm").row(0, named=True)
    pts = default_comparison.points.filter((pl.col("hardware") == "h100-sxm") & pl.col("feasible")
                                           & (pl.col("tokens_per_s_per_user") >= 20.0))
    assert best["usd_per_m_output_tokens"] == pts["usd_per_m_output_tokens"].min()
    one = evaluate(pl.DataFrame({"model": [MODEL], "hardware": ["h100-sxm"], "precision": [best["precision"]],
                                 "num_gpus": [best["num_gpus"]], "batch_size": [best["batch_size"]]}), catalog)
    r = one.row(0, named=True)
    for c in ("usd_per_m_output_tokens", "usd_per_m_input_tokens", "tokens_per_s_per_user", "usd_per_gpu_hour"):
        assert best[c] == pytest.approx(r[c], rel=1e-12), c
    assert best["binding_wall"] == r["binding_wall"]


def test_cost_split_adds_up_to_the_ranked_cost(default_comparison):
    ranked = default_comparison.best.filter(pl.col("rank").is_not_null())
    parts = sum(ranked[f"usd_per_m_tokens_{p}"] for p in COST_PARTS)
    np.testing.assert_allclose(parts.to_numpy(), ranked["usd_per_m_output_tokens"].to_numpy(), rtol=1e-12)
    hour = sum(ranked[f"usd_per_gpu_hour_{p}"] for p in COST_PARTS)
    np.testing.assert_allclose(hour.to_numpy(), ranked["usd_per_gpu_hour"].to_numpy(), rtol=1e-12)


def test_rental_basis_puts_the_whole_cost_in_rental(catalog):
    best = hardware_comparison(catalog, model=MODEL, economics=Economics(basis="rental")).best
    ranked = best.filter(pl.col("rank").is_not_null())
    np.testing.assert_allclose(ranked["usd_per_m_tokens_rental"].to_numpy(),
                               ranked["usd_per_m_output_tokens"].to_numpy(), rtol=1e-12)
    assert (ranked["usd_per_m_tokens_capex"] == 0).all()


def test_blended_objective_ranks_by_blended_cost(catalog):
    ranked = hardware_comparison(catalog, model=MODEL, objective="blended").best.filter(pl.col("rank").is_not_null())
    assert ranked["usd_per_m_blended_tokens"].is_sorted()


@pytest.mark.parametrize("hardware, precisions, slo, status", [
    ("tpu-v6e", None, 20.0, "no capex in catalog (not sold; use a rental or TCO tier)"),
    ("a100-80gb-sxm", ["fp4"], 20.0, "no hardware support for fp4"),
    ("h100-sxm", None, 5000.0, "no deployment reaches 5000 tokens/s per user (fastest: "),
])
def test_why_an_accelerator_does_not_qualify(catalog, hardware, precisions, slo, status):
    best = hardware_comparison(catalog, model=MODEL, hardware=[hardware], precisions=precisions,
                               min_tokens_per_s_per_user=slo).best
    assert best.height == 1
    assert best["status"][0].startswith(status), best["status"][0]
    assert best["rank"][0] is None and not best["meets_slo"][0]


def test_weights_that_never_fit_are_named(catalog):
    best = hardware_comparison(catalog, model="deepseek-v3", hardware=["h100-sxm"], gpu_counts=[1, 2]).best
    assert best["status"][0] == "weights do not fit in HBM on up to 2 accelerators"


@settings(max_examples=8, deadline=None)
@given(lo=st.floats(1.0, 60.0), step=st.floats(0.0, 60.0))
def test_a_higher_floor_never_lowers_the_cost(catalog, lo, step):
    a = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200"], min_tokens_per_s_per_user=lo).best
    b = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200"],
                            min_tokens_per_s_per_user=lo + step).best
    for hw in ("h100-sxm", "b200"):
        ca = a.filter(pl.col("hardware") == hw)["usd_per_m_output_tokens"][0]
        cb = b.filter(pl.col("hardware") == hw)["usd_per_m_output_tokens"][0]
        if cb is not None:
            assert ca is not None and ca <= cb


def test_one_vectorized_evaluation(catalog, monkeypatch):
    calls = []

    def spy(points, *args, **kwargs):
        calls.append(points.height)
        return evaluate(points, *args, **kwargs)

    monkeypatch.setattr(compare, "evaluate", spy)
    hardware_comparison(catalog, model=MODEL)
    assert len(calls) == 1 and calls[0] > 10_000


def test_search_space_drops_pipelines_longer_than_the_model(catalog):
    pts = search_space(catalog, model="deepseek-v3", hardware=["h100-pcie"], gpu_counts=[64, 128], precisions=["fp8"])
    # h100-pcie: 2-GPU NVLink domain. 64 GPUs: stages of 2 (TP2, TP2 EP2 or ADP2 EP2) x pp 32 (<= 61 layers),
    # or wider attention-DP + EP stages across domains; 128 GPUs: TP2 x PP64 (> 61 layers) is dropped
    assert (pts["pp"] <= 61).all()
    assert pts.filter((pl.col("num_gpus") == 128) & (pl.col("tp") == 2) & (pl.col("dp") == 1)).height == 0
    at64 = pts.filter(pl.col("num_gpus") == 64).select("tp", "dp", "ep", "pp").unique().rows()
    assert {(2, 1, 1, 32), (2, 1, 2, 32), (1, 2, 2, 32), (1, 64, 64, 1)} <= set(at64)
    assert (pts["tp"] * pts["dp"] * pts["pp"] == pts["num_gpus"]).all() and (pts["batch_size"] >= pts["dp"]).all()


def test_frontier_is_non_dominated_and_sorted(default_comparison):
    f = default_comparison.frontier
    for hw, g in f.group_by("hardware"):
        x = g["tokens_per_s_per_user"].to_numpy()
        y = g["output_tokens_per_s_per_gpu"].to_numpy()
        assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) < 0), hw
    pts = default_comparison.points.filter(pl.col("feasible") & (pl.col("hardware") == "h100-sxm"))
    fx = f.filter(pl.col("hardware") == "h100-sxm")
    for x, y in fx.select("tokens_per_s_per_user", "output_tokens_per_s_per_gpu").rows():
        dominated = pts.filter((pl.col("tokens_per_s_per_user") >= x) & (pl.col("output_tokens_per_s_per_gpu") > y))
        assert dominated.height == 0


def test_frontier_of_a_hand_made_frame():
    pts = pl.DataFrame({"hardware": ["a"] * 4, "feasible": [True, True, True, False], "precision": ["fp8"] * 4,
                        "num_gpus": [1] * 4, "batch_size": [1, 2, 3, 4],
                        "tokens_per_s_per_user": [100.0, 50.0, 40.0, 10.0],
                        "output_tokens_per_s_per_gpu": [100.0, 300.0, 200.0, 900.0],
                        "usd_per_m_output_tokens": [1.0, 0.3, 0.5, None], "binding_wall": ["memory"] * 4})
    f = throughput_frontier(pts)
    assert f["batch_size"].to_list() == [2, 1]  # (40, 200) is beaten by (50, 300); row 4 is infeasible


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(model="nope"), UnknownIdError, r"unknown model id 'nope'"),
    (dict(model=MODEL, hardware=["h100"]), UnknownIdError, r"unknown hardware id 'h100'"),
    (dict(model=MODEL, objective="input"), InvalidInputError,
     r"objective='input' is not one of \['output', 'blended'\]"),
    (dict(model=MODEL, min_tokens_per_s_per_user=-1), InvalidInputError,
     r"min_tokens_per_s_per_user=-1 is outside \[0, 10000\] \(tokens/s\)"),
    (dict(model=MODEL, precisions=["int4"]), InvalidInputError, r"precision='int4' is not one of"),
    (dict(model=MODEL, gpu_counts=[0]), InvalidInputError, r"gpu_counts=0 is outside \[1, 65536\]"),
])
def test_bad_input_is_named(catalog, kwargs, error, match):
    with pytest.raises(error, match=match):
        hardware_comparison(catalog, **kwargs)


# ---------------------------------------------------------------------------------------------
# cluster plan
# ---------------------------------------------------------------------------------------------

def test_cluster_plan_known_answers(catalog):
    e = Economics()
    g = np.array([1024, 8192])
    plan = cluster_plan(catalog, hardware="h100-sxm", num_gpus=g, model=MODEL, economics=e)
    hw = catalog.accelerator("h100-sxm")
    m = catalog.model(MODEL)
    # capex: G x all-in + G x power / 1e6 x build $/MW (econ.analyses.cluster.cluster_capex_usd)
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
    reps = np.floor(g / best["num_gpus"])
    tokens = reps * best["num_gpus"] * best["output_tokens_per_s_per_gpu"] * e.utilization_frac * 86400
    np.testing.assert_allclose(plan["serving_tokens_per_day"].to_numpy(), tokens, rtol=1e-12)
    revenue = tokens * 365 * 0.90 / 1e6
    np.testing.assert_allclose(plan["revenue_per_year_usd"].to_numpy(), revenue, rtol=1e-12)
    opex = plan["annual_energy_cost_usd"].to_numpy() + e.opex_frac_of_capex_per_year * g * hw["all_in_capex_usd"]
    np.testing.assert_allclose(plan["payback_years"].to_numpy(), capex / (revenue - opex), rtol=1e-12)


def test_cluster_plan_never_paid_back_is_null_not_inf(catalog):
    plan = cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, model=MODEL, price_usd_per_m_output_tokens=0.0)
    assert plan["payback_years"][0] is None
    assert "never paid back" in compare.plan_status(plan.row(0, named=True))
    for c, dt in plan.schema.items():
        if dt.is_float():
            assert plan[c].drop_nulls().is_finite().all(), c


def test_cluster_plan_without_a_model_has_null_model_columns(catalog):
    plan = cluster_plan(catalog, hardware="h100-sxm", num_gpus=[8, 16])
    assert plan.height == 2 and plan["training_days"].is_null().all() and plan["capex_total_usd"].is_not_null().all()


def test_rack_scale_systems_fill_a_rack_with_their_domain():
    assert default_gpus_per_rack([72, 8, 36, 256]).tolist() == [72.0, 32.0, 36.0, 32.0]


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
        cluster_plan(catalog, **kwargs)


def test_default_scenario_inputs_give_finite_tables(catalog):
    cmp = hardware_comparison(catalog, model=MODEL, assumptions=DEFAULT)
    for frame in (cmp.best, cmp.frontier):
        for c, dt in frame.schema.items():
            if dt.is_float():
                assert frame[c].drop_nulls().is_finite().all(), c
    assert not math.isnan(cmp.best["usd_per_m_output_tokens"].drop_nulls().sum())


# ---------------------------------------------------------------------------------------------
# econ cluster (CLI over cluster_plan)
# ---------------------------------------------------------------------------------------------

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
    plan = cluster_plan(catalog, hardware="h100-sxm", num_gpus=1024, model=MODEL).row(0, named=True)
    for c in ("capex_total_usd", "facility_power_mw", "training_days", "serving_tokens_per_day", "payback_years"):
        assert data[c] == pytest.approx(plan[c], rel=1e-12), c


def test_cluster_cli_flags_reach_the_model(catalog, capsys):
    code, data, _ = _cli(capsys, "cluster", "--hardware", "h100-sxm", "--gpus", "8,1024", "--pue", "1.1",
                         "--usd-per-kwh", "0.05", "--mfu", "0.4", "--overheads", "0.1,0.1", "--format", "json")
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
    (("cluster", "--hardware", "h100-sxm", "--pue", "4"), "--pue=4 is outside [1, 3]"),
    (("cluster", "--hardware", "h100-sxm", "--overheads", "a,b"), "--overheads='a,b' is not a comma-separated"),
])
def test_cluster_cli_bad_input_exits_2_with_the_flag_named(capsys, argv, message):
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and message in err, err
