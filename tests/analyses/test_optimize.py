"""The deployment optimizer (econ/analyses/optimize.py) and its CLI (`econ optimize`, `econ frontier`).

Seed claims checked on the optimizer's own output (seed 002): for DeepSeek-V3 at the same tokens/s per
user, expert parallelism inside one 72-GPU domain costs less per token than across 8-GPU domains; a
larger scale-up domain lowers the latency floor (higher max tokens/s per user).
"""

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.assumptions import Decoding, Economics
from econ.tables.catalog import load_catalog
from econ.cli import main
from econ.errors import InvalidInputError, UnknownIdError
from econ.analyses.search import pareto_frontier
from econ.analyses.optimize import (POINT_COLUMNS, SLO, SearchSpace, frontier, optimize, rejected_summary,
                           search)

CATALOG = load_catalog()
REQUIRED_JSON = ("num_gpus", "tp", "ep", "pp", "dp", "batch_size", "precision", "disaggregated",
                 "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "usd_per_m_output_tokens", "binding_wall")


@pytest.fixture(scope="module")
def dsv3_domains():
    """DeepSeek-V3 fp8 on the GB200 chip drawn with an 8-GPU (HGX-like) and a 72-GPU (NVL72) domain."""
    return search(CATALOG, model="deepseek-v3", hardware="gb200-nvl72", input_len=1024, output_len=1024,
                  space=SearchSpace(scale_up_domain_sizes=(8, 72), precisions=("fp8",), decoding=Decoding(spec_method="none")))


def _cheapest_at(points, domain, speed):
    ok = points.filter((pl.col("scale_up_domain_size") == domain) & (pl.col("tokens_per_s_per_user") >= speed))
    return ok["usd_per_m_output_tokens_all_in"].min()


@pytest.mark.parametrize("speed", [40, 50, 60])
def test_ep_inside_nvl72_costs_less_at_the_same_speed(dsv3_domains, speed):
    """Speeds below DeepSeek-V3's calibrated latency floor (~85 tokens/s per user: 58 MoE layers x
    moe_layer_overhead_s + overhead_s), where wide EP is what buys speed (plain decoding: MTP would move the
    floor by its accepted tokens per step)."""
    nvl, hgx = _cheapest_at(dsv3_domains.points, 72, speed), _cheapest_at(dsv3_domains.points, 8, speed)
    assert nvl is not None and hgx is not None
    assert nvl < hgx / 1.5  # the all-to-all leaves the 8-GPU domain over InfiniBand


def test_small_ep_does_not_care_about_the_domain(dsv3_domains):
    """At 20 tokens/s per user EP8 fits in either domain: the two costs agree within 5%. (Wider EP, which only the
    72-GPU domain keeps on NVLink, is cheaper still at this speed: the experts' grouped GEMM costs bytes plus
    FLOPs per rank, econ.physics.performance.grouped_gemm_time_s, so spreading them always pays.)"""
    ep8 = dsv3_domains.points.filter(pl.col("ep") == 8)
    nvl, hgx = _cheapest_at(ep8, 72, 20), _cheapest_at(ep8, 8, 20)
    assert nvl == pytest.approx(hgx, rel=0.05)
    assert _cheapest_at(dsv3_domains.points, 72, 20) <= nvl


@pytest.mark.parametrize("model, gain", [("deepseek-v3", 1.01), ("llama-3.1-405b", 1.05), ("llama-3.1-70b", 1.05)])
def test_larger_domain_raises_max_tokens_per_user(model, gain):
    """Seed 002: a larger scale-up domain lowers the latency floor. For DeepSeek-V3 the fixed per-MoE-layer
    kernel time (moe_layer_overhead_s, calibrated) dominates the floor, so the gain is small but positive."""
    res = search(CATALOG, model=model, hardware="gb200-nvl72", space=SearchSpace(scale_up_domain_sizes=(8, 72),
                                                                                  precisions=("fp8",)))
    fastest = res.points.group_by("scale_up_domain_size").agg(pl.col("tokens_per_s_per_user").max())
    by = dict(fastest.rows())
    assert by[72] > by[8] * gain


def test_optimize_returns_the_cheapest_point_meeting_the_slo():
    slo = SLO(min_tokens_per_s_per_user=40, max_ttft_s=2.0)
    res = optimize(CATALOG, model="qwen3-235b-a22b", hardware="h200-sxm", slo=slo)
    assert res.best is not None and res.reason == ""
    pts = search(CATALOG, model="qwen3-235b-a22b", hardware="h200-sxm", slo=slo).points
    ok = pts.filter((pl.col("tokens_per_s_per_user") >= 40) & (pl.col("ttft_s") <= 2.0))
    assert res.best["usd_per_m_output_tokens_all_in"] == pytest.approx(ok["usd_per_m_output_tokens_all_in"].min())
    assert res.best["tokens_per_s_per_user"] >= 40 and res.best["ttft_s"] <= 2.0
    assert set(POINT_COLUMNS) <= set(res.top.columns)
    assert res.top["usd_per_m_output_tokens_all_in"].is_sorted()
    # every point's flag agrees with its numbers
    flag = (pts["tokens_per_s_per_user"] >= 40) & (pts["ttft_s"] <= 2.0)
    assert (flag == pts["meets_slo"]).all()
    assert pts.select(pl.all().is_null().any()).row(0) == (False,) * pts.width


def test_optimizer_covers_modes_and_layouts():
    pts = search(CATALOG, model="deepseek-v3", hardware="h200-sxm").points
    assert set(pts["disaggregated"].unique()) == {False, True}
    assert (pts["ep"] > 1).any() and (pts["dp"] > 1).any() and (pts["pp"] > 1).any() and (pts["tp"] > 1).any()
    assert set(pts["precision"].unique()) == {"bf16", "fp8"}  # no fp4 on Hopper
    # per-GPU figures: tp x dp x pp = num_gpus, and the unit counts both pools
    assert (pts["tp"] * pts["dp"] * pts["pp"] == pts["num_gpus"]).all()
    dis = pts.filter(pl.col("disaggregated"))
    assert (dis["total_gpus"] == dis["prefill_instances"] * dis["prefill_num_gpus"]
            + dis["decode_instances"] * dis["num_gpus"]).all()


def _dominated(frame, x="tokens_per_s_per_user", y="usd_per_m_output_tokens_all_in"):
    xs, ys = frame[x].to_numpy(), frame[y].to_numpy()
    return [bool(((xs >= xs[i]) & (ys <= ys[i]) & ((xs > xs[i]) | (ys < ys[i]))).any()) for i in range(len(xs))]


@given(st.lists(st.tuples(st.floats(1, 1000), st.floats(0.01, 100), st.sampled_from(["a", "b"])), min_size=1,
                max_size=60))
@settings(max_examples=100)
def test_pareto_frontier_matches_brute_force(rows):
    frame = pl.DataFrame(rows, schema=["tokens_per_s_per_user", "usd_per_m_output_tokens_all_in", "hardware"],
                         orient="row").with_columns(scale_up_domain_size=pl.lit(8))
    front = pareto_frontier(frame)
    for hw in ("a", "b"):
        sub = frame.filter(pl.col("hardware") == hw).unique()
        dom = _dominated(sub)
        expect = sub.filter(~pl.Series(dom, dtype=pl.Boolean)).sort("tokens_per_s_per_user")
        got = front.filter(pl.col("hardware") == hw).unique().sort("tokens_per_s_per_user")
        assert sorted(got.rows()) == sorted(expect.rows())


def test_frontier_every_accelerator_is_pareto_and_monotone():
    front, rejected = frontier(CATALOG, model="llama-3.1-70b")
    assert front["hardware"].n_unique() >= 10
    for (hw, dom), g in front.group_by("hardware", "scale_up_domain_size"):
        g = g.sort("tokens_per_s_per_user")
        # faster per user -> dearer per token, strictly, along the frontier
        assert np.all(np.diff(g["usd_per_m_output_tokens_all_in"].to_numpy()) > 0), hw
    # accelerators that are not sold are rejected with the reason, not dropped silently
    assert (rejected.filter(pl.col("hardware") == "tpu-v6e")["reason"] == "no capex in catalog (not sold; use a rental or TCO tier)").all()
    front_r, _ = frontier(CATALOG, model="llama-3.1-70b", hardware="tpu-v6e", economics=Economics(basis="rental"))
    assert front_r.height > 0


# ---------------------------------------------------------------- bad input: errors or empty with reasons

@pytest.mark.parametrize("space, reason", [
    (SearchSpace(tp=16), "tp=16 exceeds the scale-up domain of 8"),
    (SearchSpace(ep=3), "ep=3 does not divide the 256 routed experts"),
    (SearchSpace(pp=64), "pp=64 exceeds the 61 layers"),
    (SearchSpace(tp=256), "tp=256 exceeds the 128 attention heads"),
    (SearchSpace(num_gpus=2, precisions=("bf16",)), "weights do not fit in HBM"),
])
def test_pinned_impossible_layouts_give_reasons_not_tracebacks(space, reason):
    res = optimize(CATALOG, model="deepseek-v3", hardware="h100-sxm", space=space)
    assert res.best is None and res.top.height == 0
    assert reason in res.reason
    assert (res.rejected["reason"].str.contains(reason, literal=True)).any()
    assert rejected_summary(res.rejected).height >= 1


@pytest.mark.parametrize("model, hardware", [("llama-3.1-405b", "h200-sxm"), ("deepseek-v3", "h200-sxm")])
def test_every_point_is_labelled_with_the_layout_it_was_evaluated_with(model, hardware):
    """Issue 17 regression: when a layout family is dropped for not fitting in HBM, the families after it
    were evaluated with another family's layout under their own label (all 775 points of 405B on H200,
    1,932 DeepSeek-V3 points with batch < dp)."""
    from econ.physics.deployment import layout_labels
    pts = search(CATALOG, model=model, hardware=hardware, space=SearchSpace(modes=("aggregated",))).points
    assert pts.height > 100
    assert pts["family"].n_unique() > 5
    evaluated = layout_labels(*(pts[c].to_numpy() for c in ("tp", "dp", "ep", "pp")))
    assert (evaluated == pts["layout"]).all()
    assert (evaluated == pts["family"]).all()
    assert (pts["batch_size"] >= pts["dp"]).all()
    assert (pts["num_gpus"] == pts["tp"] * pts["dp"] * pts["pp"]).all()


def test_dense_model_with_ep_is_rejected():
    res = optimize(CATALOG, model="llama-3.1-8b", hardware="h100-sxm", space=SearchSpace(ep=2))
    assert res.best is None and "ep=2 on a dense model" in res.reason


def test_slo_nothing_can_meet_is_an_empty_answer_with_the_best_achieved():
    res = optimize(CATALOG, model="llama-3.1-8b", hardware="h100-sxm", slo=SLO(min_tokens_per_s_per_user=5000))
    assert res.best is None
    assert res.reason.startswith("nothing meets the SLOs (SLO: tokens/s per user below min): at most ")
    assert (res.rejected["reason"] == "SLO: tokens/s per user below min").all()
    assert res.frontier.height > 0  # the frontier still shows what is possible
    ttft = optimize(CATALOG, model="llama-3.1-405b", hardware="h100-sxm", input_len=32_000, output_len=100,
                    slo=SLO(max_ttft_s=0.05))
    assert ttft.best is None and "TTFT" in ttft.reason


def test_unsupported_precision_pinned_is_rejected_with_reason():
    res = optimize(CATALOG, model="llama-3.1-8b", hardware="h100-sxm", space=SearchSpace(precisions=("fp4",)))
    assert res.best is None
    assert res.rejected.row(0, named=True)["reason"] == "precision not supported by hardware"


@pytest.mark.parametrize("kwargs, error, pattern", [
    (dict(model="deepseek-v4"), UnknownIdError, r"unknown model id 'deepseek-v4'"),
    (dict(hardware="h100"), UnknownIdError, r"unknown hardware id 'h100'.*closest"),
    (dict(input_len=0), InvalidInputError, r"input_len=0 is outside \[1, 16777216\] \(tokens\)"),
    (dict(model="llama-3.1-8b", input_len=100_000, output_len=100_000), InvalidInputError,
     r"input_len \+ output_len = 200,000 is outside \[2, 131,072\]"),
])
def test_bad_arguments_raise_clear_errors(kwargs, error, pattern):
    base = dict(model="deepseek-v3", hardware="h100-sxm")
    base.update(kwargs)
    with pytest.raises(error, match=pattern):
        optimize(CATALOG, **base)


@pytest.mark.parametrize("build, pattern", [
    (lambda: SearchSpace(num_gpus=1024, max_gpus=256), r"num_gpus=1024 is outside \[1, 256\] \(max_gpus\)"),
    (lambda: SearchSpace(tp=0), r"tp=0 is outside \[1, 65536\]"),
    (lambda: SearchSpace(modes=("hybrid",)), r"mode='hybrid' is not one of"),
    (lambda: SearchSpace(scale_up_domain_sizes=(0,)), r"scale_up_domain_size=0 is outside"),
    (lambda: SLO(min_tokens_per_s_per_user=-1), r"min_tokens_per_s_per_user=-1 is outside \[0, 1000000\]"),
    (lambda: SLO(max_ttft_s=0), r"max_ttft_s=0 is outside \(0, inf\]"),
])
def test_bad_space_or_slo(build, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        build()


# ---------------------------------------------------------------- CLI

def test_cli_optimize_json_has_the_required_fields(capsys):
    code = main(["optimize", "--model", "deepseek-v3", "--hardware", "gb200-nvl72", "--min-tokens-per-s-per-user",
                 "30", "--max-ttft-s", "2", "--format", "json", "--top", "3"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["best"] is not None and doc["reason"] == ""
    for key in REQUIRED_JSON:
        assert key in doc["best"] and all(key in p for p in doc["frontier"])
    assert doc["best"]["tokens_per_s_per_user"] >= 30 and len(doc["top"]) == 3
    assert "served" in doc["conventions"]


def test_cli_frontier_json_and_domain_override(capsys):
    code = main(["frontier", "--model", "deepseek-v3", "--hardware", "gb200-nvl72", "--scale-up-domain", "8,72",
                 "--precision", "fp8", "--format", "json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert {p["scale_up_domain_size"] for p in doc["points"]} == {8, 72}
    assert all(all(k in p for k in REQUIRED_JSON) for p in doc["points"])


def test_cli_optimize_table_and_empty_answer(capsys):
    assert main(["optimize", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--tp", "16"]) == 0
    out = capsys.readouterr().out
    assert "No deployment of llama-3.1-8b meets the SLOs" in out and "tp=16 exceeds the scale-up domain" in out
    assert main(["optimize", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--top", "2"]) == 0
    assert "Cheapest deployment of llama-3.1-8b" in capsys.readouterr().out


@pytest.mark.parametrize("argv, pattern", [
    (["--max-ttft-s", "0"], r"--max-ttft-s=0 is outside \(0, inf\]"),
    (["--gpus", "512"], r"--gpus=512 is outside \[1, 256\] \(raise --max-gpus\)"),
    (["--precision", "int4"], r"--precision='int4' is not one of"),
    (["--scale-up-domain", "8,x"], r"--scale-up-domain='x' is not a whole number"),
    (["--hardware", "h1000"], r"unknown hardware id 'h1000'"),
    (["--expert-imbalance", "0.5"], r"--expert-imbalance=0.5 is outside \[1, 64\]"),
])
def test_cli_bad_flags_exit_2_with_the_flag_named(capsys, argv, pattern):
    assert main(["optimize", "--model", "deepseek-v3", "--hardware", "h100-sxm", *argv]) == 2
    assert __import__("re").search(pattern, capsys.readouterr().err)
