"""Multi-accelerator deployments (econ/physics/deployment.py) and the collectives they add (econ/physics/communication.py).

Known answers come from the seeds (seed 001: ring all-reduce, the communication/computation ratios
of Table 11; seed 002: EP inside a rack, pipelines add capacity not bandwidth) and from published
figures (TensorRT-LLM DeepSeek-R1 on B200: KV capacity per GPU with attention-DP vs TP). The
reduction to the two orchestrators the engine replaced is in tests/engine/test_engine_regression.py.
"""

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from econ.assumptions import DEFAULT, IDEAL
from econ.physics.precision import WEIGHT_FORMATS
from econ.tables.catalog import load_catalog
from econ.physics.communication import (allreduce_time_s, alltoall_time_s, communication_computation_ratio,
                                hierarchical_allreduce_time_s, ring_allreduce_time_s, tier_link)
from econ.assumptions import DEFAULT_DEPLOYMENT, NEUTRAL_DEPLOYMENT, DeploymentAssumptions
from econ.physics.deployment import size_pools
from econ.engine import evaluate
from econ.errors import InvalidInputError, UnsupportedPrecisionError
from econ.physics.performance import pipeline_bubble_frac, pipeline_hops, routed_bytes_read_per_gpu

CATALOG = load_catalog()


def _one(**kw):
    base = dict(model="deepseek-v3", hardware="gb200-nvl72", precision="fp8", batch_size=64, tp=8, dp=1, ep=1, pp=1,
                input_len=1024, output_len=1024, spec_method="none")  # plain decoding: MTP has tests of its own
    base.update(kw)
    da = base.pop("deployment", DEFAULT_DEPLOYMENT)
    a = base.pop("assumptions", DEFAULT)
    schema = {k: pl.Int64 for k in ("scale_up_domain_size", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                                    "num_gpus", "context_tokens") if k in base}
    return evaluate(pl.DataFrame([base], schema_overrides=schema), CATALOG, a, deployment=da).row(0, named=True)


# ---------------------------------------------------------------- collectives (seed 001)

@pytest.mark.parametrize("n", [2, 4, 8, 72, 256])
def test_ring_allreduce_moves_2_n_minus_1_over_n_m_bytes(n):
    m, bw = 1e9, 1e11
    assert ring_allreduce_time_s(m, n, bw, 0.0) == pytest.approx(2 * (n - 1) / n * m / bw, rel=1e-12)
    # the latency term alone grows as 2 (N - 1) alpha (seed 001, "AllReduce overhead scaling")
    assert ring_allreduce_time_s(0.0, n, bw, 5e-6) == pytest.approx(2 * (n - 1) * 5e-6, rel=1e-12)


@pytest.mark.parametrize("params_b, t_comm_ms, t_compute_s, rho, tol_ms", [
    # M = params x 2 B (bf16 gradients), N = 256, IB NDR 50 GB/s, alpha 5 us (seed 001 Tables 3, 4, 11)
    pytest.param(7.0, 560.4, 5.0, 0.11, 0.5, id="dp-7b-256gpu-ib-ndr[seed001-table11: 560.4 ms, rho 0.11]"),
    # the seed prints 29.6 ms: ~3% below the formula at exactly 350M params (rounding of the size); rho ~3 holds
    pytest.param(0.35, 29.6, 0.010, 3.0, 1.0, id="dp-350m-256gpu-ib-ndr[seed001-table11: 29.6 ms, rho 3]"),
])
def test_seed_001_data_parallel_rho(params_b, t_comm_ms, t_compute_s, rho, tol_ms):
    t = ring_allreduce_time_s(params_b * 1e9 * 2.0, 256, 50e9, 5e-6)
    assert t * 1e3 == pytest.approx(t_comm_ms, abs=tol_ms)
    r = communication_computation_ratio(t, t_compute_s)
    assert round(r, 2 if rho < 1 else 0) == pytest.approx(rho)


def test_seed_001_tensor_parallel_rho():
    """TP=8 over NVLink: one layer's activations (2048 tokens x 4096 x bf16 = 16.8 MB, a 7B-class layer) over
    900 GB/s (seed 001 Table 3) with the default 1 us hop: ~0.04 ms against ~1 ms of compute, rho ~0.04
    (seed: '~0.04 ms', rho 0.036). Assumption: the seed does not state the message; this one is typical."""
    t = allreduce_time_s(2048 * 4096 * 2.0, 8, 900e9, DEFAULT.scale_up_latency_s)
    assert t * 1e3 == pytest.approx(0.04, abs=0.005)
    r = communication_computation_ratio(t, 1e-3)
    assert 0.03 <= r <= 0.045 and r < 1  # rho << 1: TP belongs inside the node


def test_hierarchical_allreduce_equals_flat_inside_a_domain_and_is_slower_across():
    m = 8e6
    flat = allreduce_time_s(m, 8, 900e9, 1e-6)
    assert hierarchical_allreduce_time_s(m, 8, 8, 900e9, 1e-6, 50e9, 5e-6) == flat
    assert hierarchical_allreduce_time_s(m, 8, 72, 900e9, 1e-6, 50e9, 5e-6) == flat
    # 64 participants on 8-accelerator domains: intra ring + inter all-reduce of M/8 over 8 domains
    expect = ring_allreduce_time_s(m, 8, 900e9, 1e-6) + allreduce_time_s(m / 8, 8, 50e9, 5e-6)
    assert hierarchical_allreduce_time_s(m, 64, 8, 900e9, 1e-6, 50e9, 5e-6) == pytest.approx(expect, rel=1e-12)
    assert expect > allreduce_time_s(m, 64, 900e9, 1e-6)


def test_alltoall_two_tiers_known_answer():
    s = 7.3e6  # bytes one rank scatters (DeepEP low-latency: 128 tokens x top-8 x 7168 fp8)
    # 64 ranks on 8-GPU domains: 7/64 of the bytes on NVLink, 56/64 on the NIC, concurrently
    t = alltoall_time_s(s, 64, 8, 900e9, 10e-6, 50e9, 40e-6)
    assert t == pytest.approx(40e-6 + max(s * 7 / 64 / 900e9, s * 56 / 64 / 50e9), rel=1e-12)
    # the same 64 ranks inside one 72-GPU domain never touch the NIC
    t72 = alltoall_time_s(s, 64, 72, 900e9, 10e-6, 50e9, 40e-6)
    assert t72 == pytest.approx(10e-6 + s * 63 / 64 / 900e9, rel=1e-12)
    assert t / t72 > 8  # the ~18x bandwidth gap, less the latency floor
    assert alltoall_time_s(s, 1, 8, 900e9, 10e-6, 50e9, 40e-6) == 0.0


def test_collective_kernels_on_float_and_array():
    args = (np.array([1e6, 8e6]), np.array([8, 64]), np.array([8, 72]), 900e9, 1e-6, 50e9, 5e-6)
    for fn in (alltoall_time_s, hierarchical_allreduce_time_s):
        arr = fn(*args)
        scal = [fn(args[0][i], args[1][i], args[2][i], *args[3:]) for i in range(2)]
        np.testing.assert_allclose(arr, scal, rtol=1e-15)
    assert tier_link(8, 8, 1.0, 2.0) == 1.0 and tier_link(9, 8, 1.0, 2.0) == 2.0
    assert tier_link(pl.Series([8.0, 9.0]), 8, 1.0, 2.0).to_list() == [1.0, 2.0]


# ---------------------------------------------------------------- pipelines

def test_pipeline_hops_and_bubbles():
    """Pipeline hops inside a domain stay on NVLink (stages are contiguous), and a batch smaller than
    the stage count leaves a bubble."""
    # tp=2, pp=8 on 8-GPU domains: stages 0-3 and 4-7 share a domain -> 1 hop out, 6 hops in
    assert pipeline_hops(8, 2, 8) == (1.0, 6.0)
    assert pipeline_hops(4, 8, 8) == (3.0, 0.0)     # one stage per domain: every hop leaves it
    assert pipeline_hops(4, 16, 72) == (0.0, 3.0)   # 64 GPUs inside one NVL72
    r = _one(model="llama-3.1-70b", hardware="h100-sxm", precision="bf16", tp=2, pp=8, batch_size=64)
    one_domain = _one(model="llama-3.1-70b", hardware="h100-sxm", precision="bf16", tp=2, pp=4, batch_size=64)
    assert r["t_comm_pp_s"] > one_domain["t_comm_pp_s"] * 7 / 3  # the 8-stage pipeline leaves the domain once
    # bubble: one sequence on a 4-stage pipeline keeps 3 of 4 stage-slots idle
    b = _one(model="llama-3.1-70b", hardware="h100-sxm", precision="bf16", tp=2, pp=4, batch_size=1)
    assert b["bubble_frac"] == 0.75 and b["num_microbatches"] == 1
    assert pipeline_bubble_frac(4, 8) == 0.0


# ---------------------------------------------------------------- memory layout

def test_attention_dp_shards_mla_kv_and_replicates_attention_weights():
    """DeepSeek-V3 fp8 on 8 GPUs: TP8 replicates the MLA latent on all 8 ranks (kv_shard_heads = 1);
    attention-DP holds each sequence once, at the price of replicating the non-routed weights."""
    m = CATALOG.model("deepseek-v3")
    tp8 = _one(tp=8, dp=1, ep=8, batch_size=64)
    adp = _one(tp=1, dp=8, ep=8, batch_size=64)
    routed = m["routed_params_total"] * WEIGHT_FORMATS["fp8_block"]  # DeepSeek's fp8: its 128 x 128 block-scaled release
    non_routed = tp8["weight_bytes"] - routed
    assert tp8["weight_bytes_per_gpu"] == pytest.approx(non_routed / 8 + routed / 8, rel=1e-12)
    assert adp["weight_bytes_per_gpu"] == pytest.approx(non_routed + routed / 8, rel=1e-12)
    assert tp8["kv_bytes_per_gpu"] == pytest.approx(8 * adp["kv_bytes_per_gpu"], rel=1e-12)
    assert adp["max_batch_size"] > 6 * tp8["max_batch_size"]


@pytest.mark.parametrize("layout, measured_total, tol", [
    pytest.param(dict(tp=1, dp=8, ep=8), 4000, 0.15, id="adp8-ep8[TRT-LLM DSR1 B200: ~500 per GPU, 4000 per node]"),
    # "would give 500" is a rounded what-if in the blog, not a measurement: +-20%
    pytest.param(dict(tp=8, dp=1, ep=1), 500, 0.20, id="tp8[TRT-LLM DSR1 B200: 'TP8 attention would give 500 total']"),
])
def test_deepseek_r1_b200_kv_capacity(layout, measured_total, tol):
    """Published: ~100 GB free per B200 for KV, ~200 MB per 1K/2K request (bf16 latent), 500 concurrent
    requests per GPU with attention-DP (../shared/reference/validation_public.csv, trt-dsr1-b200-*)."""
    r = _one(model="deepseek-r1", hardware="b200", precision="fp4", kv_precision="bf16", input_len=1024,
             output_len=2048, batch_size=8, **layout)
    assert r["kv_bytes_per_sequence"] / 1e6 == pytest.approx(216, rel=0.1)  # published "~200 MB"
    assert r["max_batch_size"] == pytest.approx(measured_total, rel=tol)


def test_expert_bytes_read_per_gpu():
    # 256 experts, top-8, EP8: at a huge batch every expert is touched, each rank reads its 32
    full = routed_bytes_read_per_gpu(1e6, 58, 256, 8, 44e6, 1.0, 8, 1, imbalance=1.5)
    assert full == pytest.approx(58 * 32 * 44e6, rel=1e-9)  # imbalance cannot read more than a rank holds
    # one token: 8 experts touched of 256 -> 1/8 of them per rank on average, 1.5x on the busiest rank
    one = routed_bytes_read_per_gpu(1, 58, 256, 8, 44e6, 1.0, 8, 1, imbalance=1.5)
    assert one == pytest.approx(58 * 1.5 * 1.0 * 44e6, rel=1e-9)
    # ep = 1: no imbalance, every rank reads 1/expert_tp of each touched expert
    assert routed_bytes_read_per_gpu(1, 58, 256, 8, 44e6, 1.0, 1, 8, imbalance=1.5) == pytest.approx(58 * 8 * 44e6 / 8)


# ---------------------------------------------------------------- seed 002 claims at the deployment level

def test_ep_inside_one_nvl72_beats_ep_across_hgx_nodes():
    """Same chip, same layout (ADP64 EP64, batch 2048): on a 72-GPU domain the all-to-all stays on NVLink;
    on 8-GPU domains 7/8 of it crosses InfiniBand. Same memory time, slower step, dearer tokens."""
    kw = dict(tp=1, dp=64, ep=64, batch_size=2048)
    nvl = _one(**kw)
    hgx = _one(scale_up_domain_size=8, **kw)
    assert nvl["t_mem_s"] == hgx["t_mem_s"]
    assert hgx["t_comm_ep_s"] > 4 * nvl["t_comm_ep_s"]
    assert hgx["tokens_per_s_per_user"] < nvl["tokens_per_s_per_user"]
    assert hgx["usd_per_m_output_tokens"] > nvl["usd_per_m_output_tokens"]


def test_pipeline_adds_capacity_not_bandwidth():
    """Llama-3.1-405B fp8 on TP8: doubling the stages doubles the KV room (capacity) but a single stream
    is no faster (each GPU still reads its TP8 share of every layer it holds per token)."""
    rows = [_one(model="llama-3.1-405b", hardware="h100-sxm", tp=8, pp=pp, batch_size=pp) for pp in (1, 2, 4)]
    assert rows[0]["max_batch_size"] < rows[1]["max_batch_size"] < rows[2]["max_batch_size"]
    assert rows[2]["max_batch_size"] > 2 * rows[1]["max_batch_size"]
    b1 = [_one(model="llama-3.1-405b", hardware="h100-sxm", tp=8, pp=pp, batch_size=1)["tokens_per_s_per_user"]
          for pp in (1, 2, 4)]
    assert b1[0] >= b1[1] >= b1[2]  # hops add latency; no bandwidth is gained
    # while a wider TP group (scale-up) does raise single-stream speed
    tp_speed = [_one(model="llama-3.1-405b", hardware="gb200-nvl72", tp=tp, batch_size=1)["tokens_per_s_per_user"]
                for tp in (8, 16, 32)]
    assert tp_speed[0] < tp_speed[1] < tp_speed[2]


# ---------------------------------------------------------------- disaggregation

def test_size_pools_known_answers():
    # a prefill instance serves 2 req/s, a decode instance 1 req/s, 8 GPUs each: 1P2D serves 2 req/s on 24 GPUs
    p = size_pools(np.array([2.0]), np.array([1.0]), 8, 8)
    assert (p["prefill_instances"][0], p["decode_instances"][0], p["served_requests_per_s"][0]) == (1, 2, 2.0)
    assert p["utilization_frac"][0] == pytest.approx(1.0)
    # an arrival rate of 5 req/s: ceil(5/2) = 3 prefill, 5 decode instances; 5 of 6 prefill req/s used
    q = size_pools(np.array([2.0]), np.array([1.0]), 8, 8, arrival_rate_per_s=np.array([5.0]))
    assert (q["prefill_instances"][0], q["decode_instances"][0], q["served_requests_per_s"][0]) == (3, 5, 5.0)
    assert q["utilization_frac"][0] == pytest.approx((5 / 2 * 8 + 5 * 8) / (3 * 8 + 5 * 8))
    # explicit x, y win
    e = size_pools(np.array([2.0]), np.array([1.0]), 8, 8, prefill_instances=np.array([4.0]),
                   decode_instances=np.array([1.0]))
    assert (e["prefill_instances"][0], e["decode_instances"][0], e["served_requests_per_s"][0]) == (4, 1, 1.0)


@pytest.mark.parametrize("disaggregated", [False, True])
def test_cost_split_identity(disaggregated):
    """All-in $/M output = output $/M + input $/M x (prompt tokens per output token), in both modes."""
    kw = dict(model="llama-3.1-70b", hardware="h200-sxm", tp=4, batch_size=128, input_len=3000, output_len=500,
              disaggregated=disaggregated, prefill_tp=2)
    r = _one(**kw)
    assert r["usd_per_m_output_tokens_all_in"] == pytest.approx(
        r["usd_per_m_output_tokens"] + r["usd_per_m_input_tokens"] * 3000 / 500, rel=1e-9)
    assert r["served_output_tokens_per_s_per_gpu"] <= r["output_tokens_per_s_per_gpu"]


def test_aggregated_served_rate_matches_end_to_end_formula():
    """Aggregated: output rate over all work = 1 / (1/out + (in/out)/in_rate): the end-to-end throughput
    of econ.analyses.calibration's offline cases (and of trtllm-bench / MLPerf offline)."""
    r = _one(model="llama-3.1-70b", hardware="h100-sxm", tp=8, batch_size=256, input_len=2048, output_len=128)
    e2e = 128 / (2048 / r["input_tokens_per_s_per_gpu"] + 128 / r["output_tokens_per_s_per_gpu"])
    assert r["served_output_tokens_per_s_per_gpu"] == pytest.approx(e2e, rel=1e-9)
    assert r["served_tpot_s"] == pytest.approx(r["tpot_s"] + r["prefill_stall_s"], rel=1e-12)


def test_disaggregation_removes_the_prefill_stall_and_adds_kv_transfer():
    kw = dict(model="llama-3.1-70b", hardware="h100-sxm", tp=8, batch_size=256, input_len=8000, output_len=256)
    agg = _one(**kw)
    dis = _one(disaggregated=True, prefill_tp=8, **kw)
    assert agg["prefill_stall_s"] > 0 and dis["prefill_stall_s"] == 0
    assert dis["served_tokens_per_s_per_user"] > agg["served_tokens_per_s_per_user"]
    assert dis["kv_transfer_s"] > 0 and dis["served_ttft_s"] == pytest.approx(dis["ttft_s"] + dis["kv_transfer_s"])
    m = CATALOG.model("llama-3.1-70b")
    kv = 2 * 80 * 8 * 128 * 1.0 * 8000  # 2 x L x h_kv x d_h x fp8 x tokens
    assert dis["kv_transfer_bytes"] == pytest.approx(kv, rel=1e-12) and m["num_kv_heads"] == 8
    # 8 KV shards over 8 NICs at 50 GB/s x 0.8, + 0.5 ms + one launch
    expect = kv / (8 * 50e9 * 0.8) + 0.5e-3 + 2e-6
    assert dis["kv_transfer_s"] == pytest.approx(expect, rel=1e-9)
    assert dis["total_gpus"] == 8 * (dis["prefill_instances"] + dis["decode_instances"])


# ---------------------------------------------------------------- properties

@given(model=st.sampled_from(["deepseek-v3", "qwen3-235b-a22b", "kimi-k2", "gpt-oss-120b", "llama-4-maverick"]),
       ep_pow=st.integers(1, 6), batch_per_group=st.integers(1, 512), imb=st.floats(1.0, 3.0),
       domain=st.sampled_from([8, 16, 36, 72]))
@settings(max_examples=40, deadline=None)
def test_imbalance_and_domain_are_monotone(model, ep_pow, batch_per_group, imb, domain):
    m = CATALOG.model(model)
    ep = 2 ** ep_pow
    assume(m["num_experts"] % ep == 0)
    kw = dict(model=model, hardware="gb200-nvl72", tp=1, dp=ep, ep=ep, batch_size=batch_per_group * ep)
    base = _one(scale_up_domain_size=domain, deployment=replace(DEFAULT_DEPLOYMENT, expert_imbalance_factor=1.0), **kw)
    worse = _one(scale_up_domain_size=domain, deployment=replace(DEFAULT_DEPLOYMENT, expert_imbalance_factor=imb), **kw)
    bigger = _one(scale_up_domain_size=2 * domain, deployment=replace(DEFAULT_DEPLOYMENT, expert_imbalance_factor=1.0),
                  **kw)
    if base["feasible"]:
        assert worse["tpot_s"] >= base["tpot_s"] * (1 - 1e-12)
        assert bigger["tpot_s"] <= base["tpot_s"] * (1 + 1e-12)
        for r in (base, worse, bigger):
            assert all(np.isfinite(v) for k, v in r.items() if isinstance(v, float))


@given(hw=st.sampled_from(["h100-sxm", "b200", "mi300x"]), batch=st.integers(1, 512), ideal=st.booleans())
@settings(max_examples=30, deadline=None)
def test_neutral_deployment_is_at_least_as_fast(hw, batch, ideal):
    a = IDEAL if ideal else DEFAULT
    kw = dict(model="qwen3-235b-a22b", hardware=hw, tp=1, dp=8, ep=8, batch_size=8 * batch, assumptions=a)
    r = _one(**kw)
    n = _one(deployment=NEUTRAL_DEPLOYMENT, **kw)
    if r["feasible"]:
        assert n["tokens_per_s_per_user"] >= r["tokens_per_s_per_user"] * (1 - 1e-12)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("kw, pattern", [
    (dict(ep=3), r"ep=3 does not divide the 256 routed experts of deepseek-v3"),
    (dict(tp=1, dp=4, ep=8), r"ep=8 does not divide tp x dp = 4"),
    (dict(model="llama-3.1-70b", ep=2), r"ep=2 but llama-3.1-70b is dense .*valid: ep=1"),
    (dict(tp=256), r"tp=256 exceeds the 128 attention heads of deepseek-v3 \(valid: 1-128\)"),
    (dict(tp=16, hardware="h100-sxm"), r"tp=16 exceeds the scale-up domain of 8 accelerators"),
    (dict(tp=8, scale_up_domain_size=4), r"tp=8 exceeds the scale-up domain of 4 accelerators"),
    (dict(pp=64, tp=1), r"pp=64 exceeds the 61 layers of deepseek-v3 \(valid: 1-61\)"),
    (dict(num_gpus=12, tp=8, pp=1), r"num_gpus=12 must equal tp x dp x pp = 8 x 1 x 1"),
    (dict(tp=1, dp=8, ep=8, batch_size=4), r"batch_size=4 is smaller than dp=8"),
    (dict(dp=0), r"dp=0 is outside \[1, 65536\]"),
    (dict(disaggregated=True, prefill_ep=3), r"prefill_ep=3 does not divide the 256 routed experts"),
    (dict(scale_up_domain_size=0), r"scale_up_domain_size=0 is outside \[1, 1048576\] \(accelerators\)"),
    (dict(arrival_rate_per_s=-1.0), r"arrival_rate_per_s=-1 is outside \(0, 1000000000\] \(requests/s\)"),
    (dict(disaggregated=True, decode_instances=0), r"decode_instances=0 is outside \[1, 65536\]"),
])
def test_bad_deployments_name_field_value_and_range(kw, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        _one(**kw)


def test_kv_head_replication_off_rejects_wide_tp():
    with pytest.raises(InvalidInputError, match=r"tp=16 exceeds the 8 KV heads of llama-3.1-70b and KV-head replication"):
        _one(model="llama-3.1-70b", tp=16, deployment=replace(DEFAULT_DEPLOYMENT, kv_head_replication=False))
    assert _one(model="llama-3.1-70b", tp=16)["feasible"]  # replicated heads by default


def test_unsupported_precision_and_assumption_ranges():
    with pytest.raises(UnsupportedPrecisionError, match=r"fp4.*h100-sxm"):
        _one(hardware="h100-sxm", precision="fp4")
    with pytest.raises(InvalidInputError, match=r"expert_imbalance_factor=0.5 is outside \[1, 64\]"):
        DeploymentAssumptions(expert_imbalance_factor=0.5)
    with pytest.raises(InvalidInputError, match=r"kv_transfer_eta=0 is outside"):
        DeploymentAssumptions(kv_transfer_eta=0)


def test_capacity_wall_is_a_typed_row_not_nan():
    r = _one(model="deepseek-v3", hardware="h100-sxm", precision="bf16", tp=8, batch_size=1)
    assert not r["feasible"] and r["binding_wall"] == "capacity"
    assert r["infeasible_reason"] == "weights do not fit in HBM" and r["tokens_per_s_per_user"] is None
