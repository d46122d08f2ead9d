"""Decode-step mechanisms of issue 17: kernel overheads that scale with their cause (17.3), two-batch overlap of
computation and communication (17.2), and pipelines paced by their busiest stage and largest micro-batch (17.4).

Each test pins the efficiencies (nothing calibrated) so that it checks the mechanism, not a fit, and compares the
step with the mechanism against the same step without it (each would fail if the mechanism were removed).
"""

from __future__ import annotations

import polars as pl
import pytest

from econ.assumptions import DEFAULT, IDEAL, Assumptions
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.physics.architecture import KERNELS_PER_PART
from econ.physics.inputs import Layout
from econ.physics.performance import (KERNEL_REFERENCE_WIDTH, KERNEL_WIDTH_INDEPENDENT_SHARE, kernel_width_factor,
                                      exposed_cpu_time_s, kernel_time_s, launch_gap_s,
                                      overlapped_time_s, pipeline_microbatch_tokens, pipeline_stage_imbalance,
                                      two_batch_overlap_on)
from econ.tables.catalog import load_catalog

PINNED = Assumptions(calibrated=frozenset())
"""The scalar efficiencies (no calibration profile): kernel latency 2.5 us, launch gap 1.3 us (graph) / 5 us."""
SUMMED = PINNED.with_overrides(cpu_overlap_frac=0.0)
"""The same with the host time added to the step (no overlap scheduler), so each term shows in the step."""


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def one(catalog, a=PINNED, **row):
    cols = ("step_s", "tpot_s", "t_comm_s", "two_batch_overlap", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
            "num_microbatches", "feasible")
    base = dict(precision="fp8", input_len=1024, output_len=1024)
    return evaluate(pl.DataFrame([base | row]), catalog, a, columns=cols).row(0, named=True)


# ---------------------------------------------------------------------------------------------------------------------
# 17.3 kernels
# ---------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("model, kernels", [
    pytest.param("llama-3.1-8b", 32 * 7 + 4, id="llama-3.1-8b: 32 GQA layers x (4 attention + 3 FFN) + 4"),
    pytest.param("gpt-oss-120b", 36 * 9 + 4, id="gpt-oss-120b: 36 x (4 attention + 5 MoE), no shared expert"),
    pytest.param("deepseek-v3", 61 * 9 + 58 * 7 + 3 * 3 + 4,
                 id="deepseek-v3: 61 MLA x 9 + 58 MoE x (5 + 2 shared) + 3 dense x 3 + 4"),
])
def test_forward_kernels_follow_the_architecture(catalog, model, kernels):
    assert catalog.model(model)["forward_kernels"] == kernels
    assert KERNELS_PER_PART["mla_attention"] == 9  # TensorRT-LLM tech blog 1's MLA modules


def test_kernel_time_is_kernels_times_width_scaled_latency_plus_gap():
    floor, launch = kernel_time_s(328.0, 2880.0, 2.5e-6, 1.3e-6)
    share = KERNEL_WIDTH_INDEPENDENT_SHARE  # affine in d: the share that does not grow with the width, the rest that does
    assert floor == pytest.approx(328 * 2.5e-6 * (share + (1 - share) * 2880 / KERNEL_REFERENCE_WIDTH), rel=1e-12)
    assert kernel_time_s(1.0, KERNEL_REFERENCE_WIDTH, 2.5e-6, 0.0)[0] == pytest.approx(2.5e-6)  # stated at d = 4096
    assert launch == pytest.approx(328 * 1.3e-6, rel=1e-12)
    assert launch_gap_s(512, 512, 1.3e-6, 5e-6) == 1.3e-6 and launch_gap_s(513, 512, 1.3e-6, 5e-6) == 5e-6


def test_decode_step_pays_each_kernel_and_more_past_the_graph_cap(catalog):
    row = dict(model="gpt-oss-120b", hardware="b200", precision="fp4", batch_size=4, num_gpus=8, tp=8, dp=1, ep=1,
               pp=1, spec_method="none")
    no_kernels = SUMMED.with_overrides(kernel_latency_s=0.0, kernel_launch_s=0.0, kernel_launch_eager_s=0.0)
    base = one(catalog, no_kernels, **row)["step_s"]
    with_k = one(catalog, SUMMED, **row)["step_s"]
    k = catalog.model("gpt-oss-120b")["forward_kernels"]
    expected = k * (PINNED.kernel_latency_s * kernel_width_factor(2880) + PINNED.kernel_launch_s)
    assert with_k - base == pytest.approx(expected, rel=1e-9)  # 328 kernels x (2.28 + 1.3) us = 1.2 ms
    eager = one(catalog, SUMMED.with_overrides(cuda_graph_max_batch=2), **row)["step_s"]
    assert eager - with_k == pytest.approx(k * (PINNED.kernel_launch_eager_s - PINNED.kernel_launch_s), rel=1e-9)


def test_small_and_large_moe_pay_kernels_in_proportion_to_their_count_and_width(catalog):
    """DeepSeek-V3 (968 kernels, d = 7,168) pays 3.6x the kernel floor of gpt-oss-120b (328 kernels, d = 2,880):
    the floor is affine in the width (kernel_width_factor)."""
    zero = SUMMED.with_overrides(kernel_latency_s=0.0, kernel_launch_s=0.0)
    a = dict(hardware="b200", precision="fp4", batch_size=1, num_gpus=8, tp=8, dp=1, ep=1, pp=1, spec_method="none")
    d = {m: one(catalog, SUMMED, model=m, **a)["step_s"] - one(catalog, zero, model=m, **a)["step_s"]
         for m in ("gpt-oss-120b", "deepseek-r1")}
    ratio = (968 * (2.5e-6 * kernel_width_factor(7168) + 1.3e-6)) / (328 * (2.5e-6 * kernel_width_factor(2880) + 1.3e-6))
    assert ratio == pytest.approx(3.6, abs=0.05)  # 5.5 with a floor proportional to d
    assert d["deepseek-r1"] / d["gpt-oss-120b"] == pytest.approx(ratio, rel=1e-9)


def test_host_time_shows_only_where_it_outlasts_the_gpu():
    """An overlap scheduler (TensorRT-LLM's PyTorch executor's, on by default there; SGLang's) prepares the next step while the GPU runs this
    one: the host time adds max(0, host - GPU time), not its whole length."""
    assert exposed_cpu_time_s(1e-3, 3e-3, 1.0) == 0.0
    assert exposed_cpu_time_s(3e-3, 1e-3, 1.0) == pytest.approx(2e-3)
    assert exposed_cpu_time_s(3e-3, 1e-3, 0.0) == pytest.approx(3e-3)
    assert exposed_cpu_time_s(3e-3, 2e-3, 0.5) == pytest.approx(2e-3)
    # calibrated per profile on the engines with an overlap scheduler (calibration.ENGINE_OVERLAP_SCHEDULER)
    assert "cpu_overlap_frac" in DEFAULT.calibrated_fields


def test_overlap_scheduler_hides_host_time_behind_long_steps_but_not_short_ones(catalog):
    """3 ms of host time per step: hidden under a long step (Llama-3.3-70B at 64 sequences on 4 H100, TP4), and
    only partly hidden under a short one (gpt-oss-120b at batch 1 on 8 B200), where the step is the host time."""
    long_row = dict(model="llama-3.3-70b", hardware="h100-sxm", batch_size=64, num_gpus=4, tp=4, dp=1, ep=1, pp=1,
                    spec_method="none")
    short_row = dict(model="gpt-oss-120b", hardware="b200", precision="fp4", batch_size=1, num_gpus=8, tp=8, dp=1,
                     ep=1, pp=1, spec_method="none")
    a = PINNED.with_overrides(overhead_s=3e-3, sequence_overhead_s=0.0, cpu_overlap_frac=1.0)
    for row in (long_row, short_row):
        hidden, summed = one(catalog, a, **row), one(catalog, a.with_overrides(cpu_overlap_frac=0.0), **row)
        bare = one(catalog, a.with_overrides(overhead_s=0.0), **row)
        assert summed["step_s"] == pytest.approx(bare["step_s"] + 3e-3, rel=1e-9)
        assert hidden["step_s"] == pytest.approx(max(bare["step_s"], 3e-3), rel=1e-9)
    assert one(catalog, a, **long_row)["step_s"] > 3e-3 > one(catalog, a.with_overrides(overhead_s=0.0),
                                                              **short_row)["step_s"]


def test_ideal_has_no_kernel_terms():
    assert IDEAL.kernel_latency_s == IDEAL.kernel_launch_s == IDEAL.kernel_launch_eager_s == 0.0


# ---------------------------------------------------------------------------------------------------------------------
# 17.2 two-batch overlap
# ---------------------------------------------------------------------------------------------------------------------

def test_overlapped_time_is_the_sum_less_the_hidden_share_of_the_shorter():
    assert overlapped_time_s(3.0, 1.0, 0.0) == 4.0
    assert overlapped_time_s(3.0, 1.0, 1.0) == 3.0  # max(computation, communication)
    assert overlapped_time_s(1.0, 3.0, 0.5) == pytest.approx(3.5)


@pytest.mark.parametrize("tp, dp, ep, domain, on", [
    pytest.param(1, 144, 144, 8, 1.0, id="DeepSeek decode EP144 over 18 nodes: on"),
    pytest.param(1, 32, 32, 8, 1.0, id="DeepSeek prefill EP32 over 4 nodes: on"),
    pytest.param(1, 8, 8, 8, 0.0, id="EP8 inside one NVLink domain (TensorRT-LLM DEP8): off"),
    pytest.param(1, 32, 32, 72, 0.0, id="EP32 inside an NVL72 domain: off"),
    pytest.param(8, 1, 1, 8, 0.0, id="TP8 dense: off"),
    pytest.param(8, 2, 1, 8, 0.0, id="replicas without experts: off"),
])
def test_two_batch_overlap_default_is_wide_expert_parallelism(tp, dp, ep, domain, on):
    assert two_batch_overlap_on(Layout(tp=tp, dp=dp, ep=ep, pp=1, scale_up_domain_size=domain)) == on
    assert two_batch_overlap_on(Layout(tp=tp, dp=dp, ep=ep, pp=1, scale_up_domain_size=domain,
                                       two_batch_overlap=1.0 - on)) == 1.0 - on  # a given value wins


def test_two_batch_overlap_hides_the_all_to_all_of_wide_ep_decode(catalog):
    """DeepSeek's decode layout: with two half-batches and full overlap the step is shorter than as one batch with
    its all-to-all exposed (by more than a quarter of the communication: the halves read the weights twice); with no
    overlap it is longer."""
    row = dict(model="deepseek-v3", hardware="h800-sxm", kv_precision="bf16", batch_size=128 * 144, num_gpus=144,
               tp=1, dp=144, ep=144, pp=1, redundant_experts=32, context_tokens=4989, spec_method="none")
    off = one(catalog, PINNED, two_batch_overlap=False, **row)
    full = one(catalog, PINNED.with_overrides(overlap_frac=1.0), **row)
    none = one(catalog, PINNED.with_overrides(overlap_frac=0.0), **row)
    assert full["two_batch_overlap"] and not off["two_batch_overlap"]
    assert full["step_s"] < off["step_s"] - 0.25 * off["t_comm_s"]
    assert none["step_s"] > off["step_s"]


def test_two_batch_prefill_computes_on_the_sms_its_all_to_all_leaves(catalog):
    """DeepSeek's prefill layout (EP32, 16K tokens per GPU): DeepEP's normal all-to-all kernels hold 24 of an H800's
    132 SMs while the other micro-batch computes, so with its communication hidden the step is the computation at
    132 / 108 of its time; decode's low-latency all-to-all holds none (its step does not change)."""
    assert DEFAULT.comm_sm_frac == pytest.approx(24 / 132)
    a = PINNED.with_overrides(overlap_frac=1.0, prefill_chunk_tokens=16_384)
    row = dict(model="deepseek-v3", hardware="h800-sxm", kv_precision="bf16", batch_size=32, num_gpus=32, tp=1,
               dp=32, ep=32, pp=1, redundant_experts=32, input_len=4096, output_len=1024, spec_method="none")
    cols = ("input_tokens_per_s_per_gpu", "two_batch_overlap", "step_s")

    def run(assumptions):
        return evaluate(pl.DataFrame([row | dict(precision="fp8")]), catalog, assumptions,
                        columns=cols).row(0, named=True)

    held, free = run(a), run(a.with_overrides(comm_sm_frac=0.0))
    assert held["two_batch_overlap"]
    assert held["input_tokens_per_s_per_gpu"] < 0.9 * free["input_tokens_per_s_per_gpu"]
    assert held["input_tokens_per_s_per_gpu"] > (1 - 24 / 132) * 0.99 * free["input_tokens_per_s_per_gpu"]
    assert run(a)["step_s"] == run(a.with_overrides(comm_sm_frac=0.0))["step_s"]  # decode: no SM held
    one_batch = dict(row, two_batch_overlap=False)
    off = [evaluate(pl.DataFrame([one_batch | dict(precision="fp8")]), catalog, x, columns=cols).row(0, named=True)
           for x in (a, a.with_overrides(comm_sm_frac=0.0))]
    assert off[0]["input_tokens_per_s_per_gpu"] == off[1]["input_tokens_per_s_per_gpu"]  # one batch: SMs all its own


def test_overlap_outside_its_range_is_refused():
    with pytest.raises(InvalidInputError, match=r"overlap_frac=1\.5 is outside \[0, 1\]"):
        Assumptions(overlap_frac=1.5)
    with pytest.raises(InvalidInputError, match=r"single_batch_overlap_frac=-0\.1 is outside \[0, 1\]"):
        DEFAULT.with_overrides(single_batch_overlap_frac=-0.1)
    with pytest.raises(InvalidInputError, match=r"comm_sm_frac=0\.95 is outside \[0, 0\.9\]"):
        DEFAULT.with_overrides(comm_sm_frac=0.95)


def test_two_batch_overlap_column_must_be_a_boolean(catalog):
    pts = pl.DataFrame(dict(model=["deepseek-v3"], hardware=["h800-sxm"], precision=["fp8"], batch_size=[8],
                            two_batch_overlap=[2.0]))
    with pytest.raises(InvalidInputError, match=r"two_batch_overlap=2 must be true or false"):
        evaluate(pts, catalog)


# ---------------------------------------------------------------------------------------------------------------------
# 17.4 pipelines
# ---------------------------------------------------------------------------------------------------------------------

def test_busiest_stage_and_largest_micro_batch_pace_the_pipeline():
    assert pipeline_stage_imbalance(126, 8) == pytest.approx(16 / 15.75)  # Llama-3.1-405B on 8 stages
    assert pipeline_stage_imbalance(80, 2) == 1.0 and pipeline_stage_imbalance(61, 1) == 1.0
    assert pipeline_microbatch_tokens(9, 2, 2) == 5 and pipeline_microbatch_tokens(9, 1, 1) == 9


def test_each_micro_batch_pays_the_step_overhead(catalog):
    row = dict(model="llama-3.3-70b", hardware="h100-sxm", batch_size=64, num_gpus=4, tp=2, dp=1, ep=1, pp=2)
    a = SUMMED.with_overrides(overhead_s=0.0)
    b = SUMMED.with_overrides(overhead_s=1e-3)
    r0, r1 = one(catalog, a, **row), one(catalog, b, **row)
    assert r0["num_microbatches"] == 2
    assert r1["step_s"] - r0["step_s"] == pytest.approx(2e-3, rel=1e-9)


def test_on_one_node_tensor_parallelism_beats_pipelines_at_interactive_batches(catalog):
    """Llama-3.1-405B FP8 on 8 H200 at 8 sequences: TP8 is faster per user and cheaper than TP4 PP2, TP2 PP4, PP8
    (TensorRT-LLM issue #1144: PP2 TP2 p90 latency 10.2 s vs TP4 6.4 s; its maintainer: 'PP cannot bring benefit
    on latency'); pipelines buy capacity, not speed."""
    rows = [dict(model="llama-3.1-405b", hardware="h200-sxm", batch_size=8, num_gpus=8, tp=tp, dp=1, ep=1, pp=pp)
            for tp, pp in ((8, 1), (4, 2), (2, 4), (1, 8))]
    out = evaluate(pl.DataFrame([r | dict(precision="fp8") for r in rows]), catalog,
                   columns=("tokens_per_s_per_user", "usd_per_m_output_tokens"))
    speed = out["tokens_per_s_per_user"].to_list()
    cost = out["usd_per_m_output_tokens"].to_list()
    assert speed[0] > max(speed[1:]) and cost[0] < min(cost[1:])
    assert speed == sorted(speed, reverse=True)
