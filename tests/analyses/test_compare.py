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
from econ.analyses.compare import BEST_COLUMNS, COST_PARTS, OBJECTIVES, hardware_comparison, throughput_frontier
from econ.analyses.optimize import SLO, SearchSpace, search
from econ.errors import InvalidInputError, UnknownIdError
from econ.engine import evaluate

MODEL = "llama-3.3-70b"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def default_comparison(catalog):
    return hardware_comparison(catalog, model=MODEL, min_tokens_per_s_per_user=20.0)


ALL_IN = OBJECTIVES["output"]


def test_one_row_per_accelerator_and_the_contract_columns(catalog, default_comparison):
    best = default_comparison.best
    assert best.columns == list(BEST_COLUMNS)
    assert sorted(best["hardware"].to_list()) == sorted(catalog.accelerators["id"].to_list())
    ranked = best.filter(pl.col("rank").is_not_null())
    assert ranked["rank"].to_list() == list(range(1, ranked.height + 1))
    assert ranked[ALL_IN].is_sorted()
    assert (ranked["tokens_per_s_per_user"] >= 20.0).all()
    unranked = best.filter(pl.col("rank").is_null())
    assert (unranked["status"].str.len_chars() > 0).all() and unranked[ALL_IN].is_null().all()


def test_best_row_is_the_cheapest_of_the_one_search_and_matches_a_single_evaluation(catalog, default_comparison):
    """One question, one search: the winner is the optimizer's cheapest all-in deployment meeting the floor, and
    re-evaluating that deployment alone gives the same numbers (issue 16)."""
    best = default_comparison.best.filter(pl.col("hardware") == "h100-sxm").row(0, named=True)
    res = search(catalog, model=MODEL, hardware=["h100-sxm"], slo=SLO(min_tokens_per_s_per_user=20.0))
    ok = res.points.filter(pl.col("meets_slo"))
    assert best[ALL_IN] == ok[ALL_IN].min()
    keys = ("model", "hardware", "precision", "batch_size", "num_gpus", "tp", "dp", "ep", "pp", "disaggregated",
            "scale_up_domain_size", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances",
            "decode_instances")
    row = pl.DataFrame({k: [best[k]] for k in keys})
    r = evaluate(row, catalog).row(0, named=True)
    assert best[ALL_IN] == pytest.approx(r["usd_per_m_output_tokens_all_in"], rel=1e-12)
    assert best["tokens_per_s_per_user"] == pytest.approx(r["served_tokens_per_s_per_user"], rel=1e-12)
    assert best["usd_per_gpu_hour"] == pytest.approx(r["usd_per_gpu_hour"], rel=1e-12)


def test_cost_split_adds_up_to_the_ranked_cost(default_comparison):
    ranked = default_comparison.best.filter(pl.col("rank").is_not_null())
    parts = sum(ranked[f"usd_per_m_tokens_{p}"] for p in COST_PARTS)
    np.testing.assert_allclose(parts.to_numpy(), ranked[ALL_IN].to_numpy(), rtol=1e-12)
    hour = sum(ranked[f"usd_per_gpu_hour_{p}"] for p in COST_PARTS)
    np.testing.assert_allclose(hour.to_numpy(), ranked["usd_per_gpu_hour"].to_numpy(), rtol=1e-12)


def test_rental_basis_puts_the_whole_cost_in_rental(catalog):
    best = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200"],
                               economics=Economics(basis="rental")).best
    ranked = best.filter(pl.col("rank").is_not_null())
    assert ranked.height == 2
    np.testing.assert_allclose(ranked["usd_per_m_tokens_rental"].to_numpy(), ranked[ALL_IN].to_numpy(), rtol=1e-12)
    assert (ranked["usd_per_m_tokens_capex"] == 0).all()


def test_blended_objective_ranks_by_blended_cost(catalog):
    ranked = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200", "mi300x"],
                                 objective="blended").best.filter(pl.col("rank").is_not_null())
    assert ranked.height >= 2 and ranked["usd_per_m_blended_tokens"].is_sorted()


@pytest.mark.parametrize("hardware, precisions, slo, status", [
    ("tpu-v6e", None, 20.0, "no capex in catalog (not sold; use a rental or TCO tier)"),
    ("a100-80gb-sxm", ["fp4"], 20.0, "precision not supported by hardware"),
    ("h100-sxm", None, 5000.0, "no deployment reaches 5000 tokens/s per user (fastest: "),
])
def test_why_an_accelerator_does_not_qualify(catalog, hardware, precisions, slo, status):
    best = hardware_comparison(catalog, model=MODEL, hardware=[hardware], precisions=precisions,
                               min_tokens_per_s_per_user=slo).best
    assert best.height == 1
    assert best["status"][0].startswith(status), best["status"][0]
    assert best["rank"][0] is None and not best["meets_slo"][0]


def test_weights_that_never_fit_are_named(catalog):
    best = hardware_comparison(catalog, model="deepseek-v3", hardware=["h100-sxm"],
                               space=SearchSpace(max_gpus=2)).best
    assert best["status"][0].startswith("weights do not fit in HBM"), best["status"][0]


@settings(max_examples=6, deadline=None)
@given(lo=st.floats(1.0, 60.0), step=st.floats(0.0, 60.0))
def test_a_higher_floor_never_lowers_the_cost(catalog, lo, step):
    a = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200"], min_tokens_per_s_per_user=lo).best
    b = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200"],
                            min_tokens_per_s_per_user=lo + step).best
    for hw in ("h100-sxm", "b200"):
        ca = a.filter(pl.col("hardware") == hw)[ALL_IN][0]
        cb = b.filter(pl.col("hardware") == hw)[ALL_IN][0]
        if cb is not None:
            assert ca is not None and ca <= cb


def test_winners_are_re_evaluated_in_one_engine_call(catalog, monkeypatch):
    calls = []

    def spy(points, *args, **kwargs):
        calls.append(points.height)
        return evaluate(points, *args, **kwargs)

    monkeypatch.setattr(compare, "evaluate", spy)
    best = hardware_comparison(catalog, model=MODEL, hardware=["h100-sxm", "b200"]).best
    assert calls == [best["rank"].drop_nulls().len()]  # the search is array-native; one frame call for the winners


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
