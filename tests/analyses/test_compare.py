"""econ.analyses.compare: the SLO-constrained hardware comparison and the frontier.

Known answers are checked against independent computations with the same public kernels
(``econ.analyses.sweep.evaluate`` on one configuration), at rel=1e-12 (the same floating-point operations) unless
stated. The cluster plan is tested in tests/analyses/test_cluster.py.
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
from econ.analyses.compare import (BEST_COLUMNS, COST_PARTS, DEFAULT_BATCH_SIZES, hardware_comparison, search_space,
                                   throughput_frontier)
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
# default inputs
# ---------------------------------------------------------------------------------------------

def test_default_scenario_inputs_give_finite_tables(catalog):
    cmp = hardware_comparison(catalog, model=MODEL, assumptions=DEFAULT)
    for frame in (cmp.best, cmp.frontier):
        for c, dt in frame.schema.items():
            if dt.is_float():
                assert frame[c].drop_nulls().is_finite().all(), c
    assert not math.isnan(cmp.best["usd_per_m_output_tokens"].drop_nulls().sum())
