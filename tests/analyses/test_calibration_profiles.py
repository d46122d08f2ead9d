"""Efficiency profiles per (accelerator generation, matmul precision) in the one engine (issue 9).

The shipped data/calibration.csv may hold any fitted values, so these tests build catalogs whose profiles
are known (one profile changed) and check that the engine, the optimizer and the bands follow them, and
that a value a user sets beats the profile.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from econ.assumptions import DEFAULT, IDEAL, PROFILE_PARAMETERS, Assumptions, Decoding
from econ.tables.catalog import load_catalog
from econ.vocabulary import GENERATIONS
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.analyses.optimize import SearchSpace, search


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def with_profile(catalog, profile: str, **values):
    """A copy of ``catalog`` whose calibration profile ``profile`` has ``values`` (others unchanged)."""
    cal = catalog.calibration.with_columns(
        *(pl.when(pl.col("profile") == profile).then(pl.lit(float(v))).otherwise(pl.col(k)).alias(k)
          for k, v in values.items()))
    return replace(catalog, calibration=cal)


def row(catalog, assumptions=DEFAULT, **kw):
    base = dict(model="llama-3.1-70b", hardware="h100-sxm", precision="fp8", batch_size=64, spec_method="none",
                num_gpus=2)
    base.update(kw)
    return evaluate(pl.DataFrame({k: [v] for k, v in base.items()}), catalog, assumptions).row(0, named=True)


def test_every_accelerator_has_a_generation_and_every_profile_a_row(catalog):
    gens = catalog.accelerators["generation"]
    assert gens.null_count() == 0
    assert set(gens.to_list()) <= set(GENERATIONS)
    cal = catalog.calibration
    assert cal.height == cal["profile"].n_unique()
    used = {(g, p) for g in gens.unique().to_list() for p in ("bf16", "fp8", "fp4")}
    have = set(zip(cal["generation"].to_list(), cal["precision"].to_list()))
    assert used <= have, sorted(used - have)
    assert (cal["log_ratio_p10"] <= cal["log_ratio_p90"]).all()


def test_calibrated_fields_follow_what_the_user_set():
    assert DEFAULT.calibrated_fields == frozenset(PROFILE_PARAMETERS)
    assert IDEAL.calibrated_fields == frozenset()
    a = Assumptions(eta_bw=0.7)
    assert "eta_bw" not in a.calibrated_fields and "eta_flop" in a.calibrated_fields
    assert "eta_bw" not in replace(DEFAULT, eta_bw=0.71).calibrated_fields
    pinned = DEFAULT.with_overrides(eta_bw=DEFAULT.eta_bw)  # equal to the default, yet pinned
    assert "eta_bw" not in pinned.calibrated_fields
    assert pinned.assumed == ("eta_bw",)
    with pytest.raises(InvalidInputError, match="calibrated='eta_nonsense'"):
        Assumptions(calibrated=frozenset({"eta_nonsense"}))
    with pytest.raises(InvalidInputError, match="eta_bogus is not an assumption"):
        DEFAULT.with_overrides(eta_bogus=1.0)


def test_a_profile_moves_only_its_own_generation_and_precision(catalog):
    shipped = float(catalog.calibration.filter(pl.col("profile") == "hopper-fp8")["eta_bw"][0])
    fast = with_profile(catalog, "hopper-fp8", eta_bw=min(1.0, 1.6 * shipped), overhead_s=0.0, kernel_latency_s=0.0)
    base, tuned = row(catalog), row(fast)
    assert tuned["efficiency_profile"] == "hopper-fp8"
    # decode at batch 64 on 70B fp8 is HBM-bound: the step time falls with 1 / eta_bw (no fixed time left)
    assert tuned["tokens_per_s_per_user"] > base["tokens_per_s_per_user"] * 1.3
    assert tuned["usd_per_m_output_tokens"] < base["usd_per_m_output_tokens"]
    # other precisions and generations are untouched
    for kw in (dict(precision="bf16", num_gpus=4), dict(hardware="b200"), dict(hardware="mi300x")):
        assert row(fast, **kw)["tokens_per_s_per_user"] == pytest.approx(row(catalog, **kw)["tokens_per_s_per_user"],
                                                                         rel=1e-12), kw


def test_a_value_the_user_sets_beats_the_profile(catalog):
    fast = with_profile(catalog, "hopper-fp8", eta_bw=0.9)
    mine = Assumptions(eta_bw=0.5)
    assert row(fast, mine)["tokens_per_s_per_user"] == pytest.approx(row(catalog, mine)["tokens_per_s_per_user"],
                                                                     rel=1e-12)
    # pinned at the default value: the profile no longer applies either
    pinned = DEFAULT.with_overrides(eta_bw=DEFAULT.eta_bw)
    assert row(fast, pinned)["tokens_per_s_per_user"] == pytest.approx(row(catalog, pinned)["tokens_per_s_per_user"],
                                                                       rel=1e-12)


def test_bands_bracket_the_point_and_invert_for_costs(catalog):
    wide = with_profile(catalog, "hopper-fp8", log_ratio_p10=-0.3, log_ratio_p90=0.1)
    r = row(wide)
    t = r["tokens_per_s_per_user"]
    assert r["tokens_per_s_per_user_low"] == pytest.approx(t * math.exp(-0.3), rel=1e-12)
    assert r["tokens_per_s_per_user_high"] == pytest.approx(t * math.exp(0.1), rel=1e-12)
    c = r["usd_per_m_output_tokens"]
    # slower than predicted = dearer: the cost band's high end pairs with the throughput's low end
    assert r["usd_per_m_output_tokens_high"] == pytest.approx(c / math.exp(-0.3), rel=1e-12)
    assert r["usd_per_m_output_tokens_low"] == pytest.approx(c / math.exp(0.1), rel=1e-12)
    for k in ("output_tokens_per_s_per_gpu", "usd_per_m_input_tokens", "usd_per_m_blended_tokens"):
        assert r[f"{k}_low"] <= r[k] <= r[f"{k}_high"], k


def test_the_roofline_and_infeasible_rows_carry_no_band(catalog):
    ideal = row(catalog, IDEAL)
    assert ideal["efficiency_profile"] == "assumed"
    assert ideal["tokens_per_s_per_user_low"] is None and ideal["usd_per_m_output_tokens_high"] is None
    over = evaluate(
        pl.DataFrame({"model": ["llama-3.1-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"],
                      "batch_size": [100_000], "num_gpus": [1]}), catalog, strict=False).row(0, named=True)
    assert over["feasible"] is False
    assert over["tokens_per_s_per_user_low"] is None and over["usd_per_m_output_tokens_low"] is None


def test_optimizer_uses_the_same_profile_as_the_engine(catalog):
    fast = with_profile(catalog, "hopper-fp8", eta_bw=0.85, eta_flop=0.45, overhead_s=0.0008)
    res = search(fast, model="llama-3.1-70b", hardware="h100-sxm", input_len=1024, output_len=1024,
                 space=SearchSpace(num_gpus=2, tp=2, dp=1, ep=1, pp=1, precisions=("fp8",), modes=("aggregated",),
                                   decoding=Decoding(spec_method="none")))
    p = res.points.filter(pl.col("batch_size") == 64).row(0, named=True)
    e = evaluate(pl.DataFrame({"model": ["llama-3.1-70b"], "hardware": ["h100-sxm"], "precision": ["fp8"],
                               "batch_size": [64], "num_gpus": [2], "tp": [2], "spec_method": ["none"]}),
                 fast).row(0, named=True)
    assert p["decode_tokens_per_s_per_user"] == pytest.approx(e["tokens_per_s_per_user"], rel=1e-9)
    assert p["usd_per_m_output_tokens"] == pytest.approx(e["usd_per_m_output_tokens"], rel=1e-9)


def test_rows_of_many_generations_in_one_call_each_take_their_own_profile(catalog):
    fast = with_profile(with_profile(catalog, "hopper-fp8", eta_bw=0.9), "blackwell-fp8", eta_bw=0.3)
    hws = ["h100-sxm", "b200", "h200-sxm", "mi300x"]
    pts = pl.DataFrame({"model": ["llama-3.1-70b"] * 4, "hardware": hws, "precision": ["fp8"] * 4,
                        "batch_size": [64] * 4, "spec_method": ["none"] * 4, "num_gpus": [2] * 4})
    together = evaluate(pts, fast)["tokens_per_s_per_user"].to_numpy()
    alone = np.array([row(fast, hardware=h)["tokens_per_s_per_user"] for h in hws])
    np.testing.assert_allclose(together, alone, rtol=1e-12)
    assert evaluate(pts, fast)["efficiency_profile"].to_list() == ["hopper-fp8", "blackwell-fp8", "hopper-fp8",
                                                                   "cdna3-fp8"]


def test_decode_only_columns_skip_prefill_but_not_the_answer(catalog):
    """A request for decode and decode-cost columns only skips the prefill side (speed); same numbers."""
    cols = ("feasible", "binding_wall", "max_batch_size", "tpot_s", "tokens_per_s_per_user",
            "output_tokens_per_s_per_gpu", "usd_per_gpu_hour", "usd_per_m_output_tokens",
            "usd_per_m_output_tokens_low", "efficiency_profile", "sweet_spot_batch")
    pts = pl.DataFrame({"model": ["llama-3.1-70b", "deepseek-v3", "gpt-oss-120b", "llama-3.1-8b"],
                        "hardware": ["h100-sxm", "h200-sxm", "b200", "mi300x"], "precision": ["fp8", "fp8", "fp4", "bf16"],
                        "batch_size": [64, 4096, 256, 100_000]})
    fast = evaluate(pts, catalog, strict=False, columns=cols)
    full = evaluate(pts, catalog, strict=False, sweet_spot=True).select(cols)
    assert fast.equals(full)
