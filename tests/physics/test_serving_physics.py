"""Production serving physics (issue 9): speculative decoding, weight formats, grouped-GEMM padding,
redundant experts, queueing under Poisson arrivals; known answers from the issue, papers and releases."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from econ.assumptions import DEFAULT, Assumptions
from econ.tables.catalog import load_catalog
from econ.engine import evaluate
from econ.errors import InvalidInputError, UnsupportedPrecisionError
from econ.physics.performance import accepted_tokens_per_step, grouped_gemm_padded_rows
from econ.physics.serving import erlang_c, tpot_tail_at_percentile, waiting_time_quantile_s

CATALOG = load_catalog()


def one(strict=True, assumptions=DEFAULT, **kw):
    base = dict(model="llama-3.1-70b", hardware="h100-sxm", precision="fp8", batch_size=64, num_gpus=4, tp=4,
                input_len=1024, output_len=1024)
    base.update(kw)
    schema = {k: pl.String for k in ("weight_format", "expert_weight_format", "spec_method", "spec_draft_model")
              if k in base}
    return evaluate(pl.DataFrame([base], schema_overrides=schema), CATALOG, assumptions, strict=strict).row(0, named=True)


# ---------------------------------------------------------------- speculative decoding

@pytest.mark.parametrize("a, k, expected", [
    pytest.param(0.8, 1, 1.8, id="a0.8-k1[issue 9: 1.8]"),
    pytest.param(0.8, 3, 2.952, id="a0.8-k3[issue 9: 2.952]"),
    pytest.param(0.0, 4, 1.0, id="never-accepted"),
    pytest.param(0.5, 0, 1.0, id="no-draft"),
])
def test_accepted_tokens_per_step_known_answers(a, k, expected):
    # Leviathan et al. 2023, eq. 1: E = (1 - a^(k+1)) / (1 - a)
    assert accepted_tokens_per_step(a, k) == pytest.approx(expected, rel=1e-12)
    assert np.allclose(accepted_tokens_per_step(np.array([a, a]), np.array([k, k])), expected)


def test_deepseek_ships_mtp_and_uses_it_by_default():
    on = one(model="deepseek-v3", hardware="h200-sxm", num_gpus=8, tp=1, dp=8, ep=8, batch_size=512)
    off = one(model="deepseek-v3", hardware="h200-sxm", num_gpus=8, tp=1, dp=8, ep=8, batch_size=512,
              spec_method="none")
    assert on["spec_method"] == "mtp" and on["spec_draft_tokens"] == 1 and on["spec_acceptance"] == 0.85
    assert on["accepted_tokens_per_step"] == pytest.approx(1.85)
    # the verify pass runs 2 tokens per sequence: a longer step, but 1.85 tokens per step
    assert on["step_s"] > off["step_s"]
    assert on["tpot_s"] == pytest.approx(on["step_s"] / 1.85, rel=1e-12)
    assert on["tokens_per_s_per_user"] > off["tokens_per_s_per_user"]
    # the MTP module's weights (one MoE layer + projection, ~11.6B params) take HBM
    assert on["weight_bytes"] - off["weight_bytes"] == pytest.approx(11.6e9, rel=0.02)
    assert on["max_batch_size"] < off["max_batch_size"]
    plain = one()  # a model without MTP decodes plainly
    assert plain["spec_method"] == "none" and plain["accepted_tokens_per_step"] == 1.0


def test_eagle_head_and_draft_model_cost_their_own_passes():
    base = dict(batch_size=32)
    off = one(**base)
    eagle = one(spec_method="eagle", spec_draft_tokens=3, spec_acceptance=0.7, **base)
    draft = one(spec_method="draft", spec_draft_model="llama-3.1-8b", spec_draft_tokens=3, spec_acceptance=0.7,
                **base)
    e = accepted_tokens_per_step(0.7, 3)
    for r in (eagle, draft):
        assert r["accepted_tokens_per_step"] == pytest.approx(e)
        assert r["step_s"] > off["step_s"]
    # an 8B draft model costs more per drafted token than one decoder layer of the 70B target
    assert draft["step_s"] > eagle["step_s"]
    # at batch 32 a memory-bound 70B gains speed per user from either
    assert eagle["tokens_per_s_per_user"] > off["tokens_per_s_per_user"]
    assert draft["weight_bytes"] - off["weight_bytes"] == pytest.approx(CATALOG.model("llama-3.1-8b")["total_params"],
                                                                        rel=0.05)


@pytest.mark.parametrize("kw, pattern", [
    (dict(spec_method="eagle", spec_draft_tokens=2, spec_acceptance=1.0), r"spec_acceptance=1 is outside \[0, 1\)"),
    (dict(spec_method="eagle", spec_draft_tokens=2, spec_acceptance=-0.1), r"spec_acceptance=-0.1 is outside"),
    (dict(spec_method="eagle", spec_draft_tokens=17, spec_acceptance=0.5), r"spec_draft_tokens=17 is outside \[0, 16\]"),
    (dict(spec_method="eagle", spec_draft_tokens=-1, spec_acceptance=0.5), r"spec_draft_tokens=-1 is outside"),
    (dict(spec_method="mtp"), r"spec_method='mtp' is not available for llama-3.1-70b: it ships no "
                              r"multi-token-prediction module \(valid: none, draft\)"),
    (dict(spec_method="eagle", spec_draft_tokens=2), r"spec_method='eagle' needs spec_acceptance for llama-3.1-70b"),
    (dict(spec_method="draft", spec_draft_tokens=2, spec_acceptance=0.6), r"spec_method='draft' needs spec_draft_model"),
    (dict(spec_method="medusa"), r"spec_method='medusa' is not one of"),
])
def test_bad_speculation_names_field_value_and_range(kw, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        one(**kw)


# ---------------------------------------------------------------- weight formats

def test_gpt_oss_120b_fits_one_h100_with_its_mxfp4_experts():
    """Issue 9 known answer: feasible on one 80 GB H100, weights ~61-66 GB (OpenAI: MXFP4 MoE weights)."""
    r = one(model="gpt-oss-120b", hardware="h100-sxm", precision="bf16", num_gpus=1, tp=1, batch_size=16)
    assert r["feasible"] and r["weight_format"] == "bf16" and r["expert_weight_format"] == "mxfp4"
    assert 61e9 <= r["weight_bytes"] <= 66e9
    # an fp8 matmul on Hopper keeps the pinned formats; experts dequantize into it
    r8 = one(model="gpt-oss-120b", hardware="h100-sxm", precision="fp8", num_gpus=1, tp=1, batch_size=16)
    assert r8["feasible"] and r8["weight_bytes"] == pytest.approx(r["weight_bytes"])


def test_w4a16_stores_int4_and_multiplies_in_bf16():
    bf16 = one(precision="bf16")
    awq = one(precision="bf16", weight_format="int4")
    assert awq["weight_format"] == awq["expert_weight_format"] == "int4"
    p = CATALOG.model("llama-3.1-70b")
    non_embedding = p["total_params"] - p["embedding_params"] - p["lm_head_params"]
    assert bf16["weight_bytes"] - awq["weight_bytes"] == pytest.approx(non_embedding * (2.0 - 0.53125), rel=1e-9)
    assert awq["tpot_s"] < bf16["tpot_s"]  # fewer bytes per memory-bound step


@pytest.mark.parametrize("kw, pattern", [
    (dict(precision="fp8", weight_format="bf16"), r"weight_format='bf16' is wider than precision='fp8'"),
    (dict(precision="fp4", hardware="b200", expert_weight_format="fp8"),
     r"expert_weight_format='fp8' is wider than precision='fp4'"),
    (dict(weight_format="fp6"), r"weight_format='fp6' is not one of"),
])
def test_a_weight_format_wider_than_its_matmul_is_refused(kw, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        one(**kw)
    if "fp6" not in pattern:  # non-strict: an infeasible row with the reason (an unknown name stays an error)
        r = one(strict=False, **kw)
        assert not r["feasible"] and r["infeasible_reason"] == "weight format wider than the matmul precision"


def test_fp4_matmul_stays_refused_where_absent():
    with pytest.raises(UnsupportedPrecisionError, match=r"fp4.*not supported in hardware by h100-sxm"):
        one(precision="fp4")
    with pytest.raises(UnsupportedPrecisionError):  # MXFP4 experts do not make an fp4 matmul exist on Hopper
        one(model="gpt-oss-120b", precision="fp4", num_gpus=1, tp=1)


# ---------------------------------------------------------------- MoE kernels

def test_grouped_gemm_padding_known_answers():
    # 256 token-expert rows over 128 touched experts = 2 rows each; Hopper tiles of 64 rows -> 128 x 64
    assert grouped_gemm_padded_rows(256.0, 128.0, 64.0) == 128 * 64
    assert grouped_gemm_padded_rows(64 * 4096.0, 64.0, 64.0) == 64 * 4096  # whole tiles: no waste
    assert grouped_gemm_padded_rows(100.0, 10.0, 1.0) == 100.0  # tile 1: no padding
    np.testing.assert_allclose(grouped_gemm_padded_rows(np.array([256.0, 65.0]), np.array([128.0, 1.0]), 64.0),
                               [8192.0, 128.0])


def test_padding_costs_decode_compute_not_prefill():
    """Decode at batch 64 sees ~2 tokens per expert (padded to whole tiles), prefill thousands: the padding
    raises decode's routed FLOP time and leaves prefill ~unchanged."""
    kw = dict(model="deepseek-v3", hardware="h200-sxm", num_gpus=8, tp=1, dp=8, ep=8, batch_size=64,
              spec_method="none", input_len=8192)
    flat = one(assumptions=DEFAULT.with_overrides(moe_tile_rows=1.0), **kw)  # pinned: not the Hopper profile's 64
    tiled = one(assumptions=DEFAULT.with_overrides(moe_tile_rows=64.0), **kw)
    assert tiled["t_flop_s"] > 5 * flat["t_flop_s"]
    assert tiled["input_tokens_per_s_per_gpu"] == pytest.approx(flat["input_tokens_per_s_per_gpu"], rel=0.02)


def test_redundant_experts_let_ep_divide_the_slots():
    """DeepSeek's decode: 256 routed + 32 redundant experts on EP144, 2 slots per GPU (DeepSeek-V3 report)."""
    with pytest.raises(InvalidInputError, match=r"ep=144 does not divide the 256 routed experts"):
        one(model="deepseek-v3", hardware="h800-sxm", num_gpus=144, tp=1, dp=144, ep=144, batch_size=144 * 64)
    r = one(model="deepseek-v3", hardware="h800-sxm", num_gpus=144, tp=1, dp=144, ep=144, batch_size=144 * 64,
            redundant_experts=32)
    assert r["feasible"] and r["redundant_experts"] == 32
    less = one(model="deepseek-v3", hardware="h800-sxm", num_gpus=128, tp=1, dp=128, ep=128, batch_size=128 * 64)
    assert r["weight_bytes_per_gpu"] > less["weight_bytes_per_gpu"] * 128 / 144  # the copies take HBM


def test_ep_larger_than_the_expert_slots_is_refused():
    with pytest.raises(InvalidInputError, match=r"ep=512 does not divide the 256 routed experts of deepseek-v3"):
        one(model="deepseek-v3", hardware="gb200-nvl72", num_gpus=512, tp=1, dp=512, ep=512, batch_size=512)


# ---------------------------------------------------------------- queueing

def test_erlang_c_known_answers():
    # M/M/1: a request waits with probability rho
    assert erlang_c(1, 0.7) == pytest.approx(0.7, rel=1e-12)
    # M/M/2 at a = 1 (rho 0.5): C = (1/2 x 2/1) / (1 + 1 + 1) = 1/3 (textbook value)
    assert erlang_c(2, 1.0) == pytest.approx(1 / 3, rel=1e-12)
    # large systems do not overflow: c = 500 servers at rho 0.9
    c = erlang_c(500, 450.0)
    assert 0.0 < c < 1.0


def test_waiting_time_quantile_known_answer():
    # M/M/1, lambda 0.5/s, mu 1/s: P(W > t) = 0.5 exp(-0.5 t); p99: ln(0.5 / 0.01) / 0.5 = 7.824 s
    assert waiting_time_quantile_s(0.5, 1.0, 1, 0.99) == pytest.approx(math.log(50) / 0.5, rel=1e-12)
    assert waiting_time_quantile_s(0.001, 1.0, 1, 0.5) == 0.0  # almost nobody waits: the median wait is 0


def test_percentile_ttft_grows_with_load_and_percentile():
    rows = [one(batch_size=b, input_len=2048, output_len=256) for b in (8, 64, 256)]
    p99 = [r["ttft_percentile_s"] for r in rows]
    assert p99 == sorted(p99) and p99[0] >= rows[0]["ttft_s"]
    assert all(r["latency_percentile"] == 99.0 for r in rows)
    median = one(batch_size=64, input_len=2048, output_len=256, assumptions=Assumptions(latency_percentile=50.0))
    assert median["ttft_percentile_s"] < rows[1]["ttft_percentile_s"]
    assert rows[1]["tpot_percentile_s"] >= rows[1]["served_tpot_s"]  # the profile's tail factor >= 1
    pinned = one(batch_size=64, input_len=2048, output_len=256,
                 assumptions=DEFAULT.with_overrides(tpot_tail_factor=1.0))
    assert pinned["tpot_percentile_s"] == pytest.approx(pinned["served_tpot_s"], rel=1e-12)  # tail factor 1


def test_the_tpot_tail_follows_the_percentile_asked_for():
    """Issue 19.1 (p50/p90/p99 SLOs): the measured p99 / mean ratio f99 holds at p99, p50 is the served TPOT, p90 is
    f99 ** (z_0.90 / z_0.99) under the log-normal of econ.physics.serving.tpot_tail_at_percentile."""
    assert tpot_tail_at_percentile(1.6, 99.0) == pytest.approx(1.6, rel=1e-12)
    assert tpot_tail_at_percentile(1.6, 50.0) == pytest.approx(1.0, abs=1e-12)
    assert tpot_tail_at_percentile(1.6, 90.0) == pytest.approx(1.6 ** (1.2815515655 / 2.3263478740), rel=1e-9)
    assert tpot_tail_at_percentile(1.0, 99.9) == 1.0  # no measured tail: none at any percentile
    a = DEFAULT.with_overrides(tpot_tail_factor=1.5)
    rows = {p: one(batch_size=64, input_len=2048, output_len=256, assumptions=a.with_overrides(latency_percentile=p))
            for p in (50.0, 90.0, 99.0)}
    served = rows[99.0]["served_tpot_s"]
    assert rows[50.0]["tpot_percentile_s"] == pytest.approx(served, rel=1e-12)
    assert served < rows[90.0]["tpot_percentile_s"] < rows[99.0]["tpot_percentile_s"]
    assert rows[99.0]["tpot_percentile_s"] == pytest.approx(1.5 * served, rel=1e-12)


@pytest.mark.parametrize("p", [0.0, 100.0, -5.0, 150.0])
def test_percentile_outside_0_100_is_refused(p):
    with pytest.raises(InvalidInputError, match=rf"latency_percentile={p:g} is outside \[0.001, 99.999\] \(%\)"):
        Assumptions(latency_percentile=p)


def test_engine_limit_is_a_named_assumption():
    assert DEFAULT.max_batch_per_group == 4096
    with pytest.raises(InvalidInputError, match=r"max_batch_per_group=0 is outside"):
        Assumptions(max_batch_per_group=0)


# ---------------------------------------------------------------------------------------------------------------------
# issue 17.6: chunked FIFO prefill of fixed-length prompts is an M/G/c queue, not an M/M/c one
# ---------------------------------------------------------------------------------------------------------------------

def test_allen_cunneen_scales_the_mmc_wait_by_the_service_variability():
    from econ.physics.serving import prefill_wait_quantile_s, service_variability_factor

    assert service_variability_factor(0.0) == 0.5 and service_variability_factor(1.0) == 1.0
    mmc = waiting_time_quantile_s(3.0, 1.0, 4, 0.99)
    assert prefill_wait_quantile_s(3.0, 1.0, 4, 0.99, 1.0) == pytest.approx(mmc, rel=1e-12)  # M/M/c
    assert prefill_wait_quantile_s(3.0, 1.0, 4, 0.99, 0.0) == pytest.approx(0.5 * mmc, rel=1e-12)  # M/D/c
    # M/D/1 mean wait (Pollaczek-Khinchine) is half the M/M/1 one: rho / (2 mu (1 - rho)); the tail follows it
    rho = 0.8
    assert service_variability_factor(0.0) * rho / (1.0 * (1 - rho)) == pytest.approx(rho / (2 * (1 - rho)))


def test_fixed_length_prompts_wait_half_as_long_as_exponential_ones():
    """Llama-3.1-405B FP8 on 8 H200 at batch 8 with 8K prompts under Poisson load near the replica's rate: the p99
    TTFT's queueing part halves when every prompt has input_len tokens (econ's workload) instead of exponentially
    spread lengths (the M/M/c of issue 12); the lone prefill is the same."""
    catalog = CATALOG
    base = dict(model="llama-3.1-405b", hardware="h200-sxm", precision="fp8", batch_size=8, num_gpus=8, tp=8,
                input_len=8192, output_len=512)
    probe = evaluate(pl.DataFrame([base]), catalog, columns=("served_requests_per_s",))
    rate = 0.9 * float(probe["served_requests_per_s"][0])
    pts = pl.DataFrame([base | dict(arrival_rate_per_s=rate, input_len_cv=cv) for cv in (0.0, 1.0)])
    out = evaluate(pts, catalog, columns=("ttft_s", "ttft_percentile_s", "kv_transfer_s"))
    wait = (out["ttft_percentile_s"] - out["ttft_s"] - out["kv_transfer_s"]).to_list()
    assert out["ttft_s"][0] == out["ttft_s"][1]
    assert wait[1] > 0 and wait[0] == pytest.approx(0.5 * wait[1], rel=1e-9)
    with pytest.raises(InvalidInputError, match=r"input_len_cv=11 is outside \[0, 10\]"):
        evaluate(pts.with_columns(input_len_cv=pl.lit(11.0)), catalog)
