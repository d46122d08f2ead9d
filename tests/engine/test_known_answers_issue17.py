"""Known answers of issue 17 with the calibrated profiles: wide-EP decode and prefill as DeepSeek runs them, small and
large MoE models at batch 1 on 8 B200.

- DeepSeek day 6 (deepseek-ai/open-infra-index 202502OpenSourceWeek/day_6_one_more_thing..., 2025-03-01;
  data/provider_disclosures.csv): decode on EP144 with 32 redundant experts (18 nodes of 8 H800), ~14.8k output
  tokens/s per node = 1,850 per H800; the mean KV length per output token 4,989; BF16 MLA cache and FP8 matmuls
  on 128 x 128 block-scaled FP8 weights (DeepSeek-V3 report sec. 3.3.2: the engine's default weight format for
  DeepSeek at fp8, ``fp8_block``); MTP on (one module); 128 requests per GPU (deepseek-ai/profile-data's decode
  profile).
  Prefill on EP32 with 32 redundant experts (4 nodes), ~73.7k input tokens/s per node incl. cache hits = 9,212 per
  H800, 56.3% of input tokens hitting the on-disk KV cache; 16K tokens per GPU per step (profile-data). A request's
  mean prompt and answer follow from the day's totals: 608B input / 168B output tokens = 3.62 input per output, and
  ISL + OSL / 2 = 4,989, so ISL = 4,384 and OSL = 1,211 (derived). The day-6 disclosure is a known-answer test, never
  a fit input.
- gpt-oss-120b at batch 1 on 8 Blackwell GPUs, TP8 (MoE TP8), no speculative decoding: mean TPOT 1.868 ms = 535
  tokens/s per user, ISL 8,192 / OSL 1,024, concurrency 1, on the decode worker (TP8, MoE TP8) of a disaggregated
  GB200 deployment, TensorRT-LLM in ai-dynamo tensorrtllm-runtime 0.7.0.post2 (NVIDIA's AIConfigurator silicon
  sample, ai-dynamo/aiconfigurator aic-core/src/aiconfigurator_core/systems/silicon_sample.csv@095f58a5, rows
  2026_03_25_gpt_oss_120b_gb200_trtllm_fp4_disagg_8192x1024_c1_tp1_0_ep1_0_1287 and its 2026_04_06 copy _1215;
  measured 2026-01-07). A GB200 is a B200 die with the same 8 TB/s of HBM3e at 1,200 W; a batch-1 decode step of
  this model streams ~0.4 GB per GPU (50 us at 8 TB/s) and is otherwise kernel and all-reduce latency, so it is
  the published batch-1 figure nearest to 8 x B200 TP8 (none for the HGX B200 itself was found in a source not
  reserved). Not a fit input (data/measurements.csv holds AIConfigurator's vLLM gpt-oss rows
  only). On 8 x B200 itself, TP8, ISL 1,024 / OSL 1,024, 4 concurrent requests: mean TPOT 2.289 ms = 437 tokens/s
  per user (same silicon sample, row 2026_03_25_gpt_oss_120b_b200_sxm_trtllm_fp4_agg_1024x1024_c4_tp8_0_ep1_0_*,
  TensorRT-LLM 1.2.0rc2.post2), which bounds batch 1 from below.
- DeepSeek-R1 on 8 B200 at batch 1 without MTP: 111 tokens/s per user (TensorRT-LLM tech blog 1, 'Without MTP' row;
  TP8 attention, MoE TP4 x EP2, NVFP4 experts, BF16 attention, ISL 1K / OSL 2K).
"""

from __future__ import annotations

import polars as pl
import pytest

from econ.assumptions import DEFAULT, Economics
from econ.engine import evaluate
from econ.tables.catalog import load_catalog

PRICE = Economics(basis="custom", usd_per_gpu_hour=2.0)  # day 6: $2 per H800-hour; physics columns only
DAY6_ISL, DAY6_OSL, DAY6_KV = 4384, 1211, 4989


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _one(catalog, assumptions=DEFAULT, columns=("output_tokens_per_s_per_gpu",), **row):
    return evaluate(pl.DataFrame([row]), catalog, assumptions, PRICE, columns=columns).row(0, named=True)


def test_day6_workload_follows_from_the_disclosure():
    assert 608 / 168 == pytest.approx(DAY6_ISL / DAY6_OSL, rel=0.01)
    assert DAY6_ISL + DAY6_OSL / 2 == pytest.approx(DAY6_KV, abs=1)


def test_deepseek_day6_decode_within_10_percent(catalog):
    r = _one(catalog, model="deepseek-v3", hardware="h800-sxm", precision="fp8", kv_precision="bf16",
             batch_size=128 * 144, num_gpus=144, tp=1, dp=144, ep=144, pp=1, redundant_experts=32,
             context_tokens=DAY6_KV, input_len=DAY6_ISL, output_len=DAY6_OSL,
             columns=("output_tokens_per_s_per_gpu", "two_batch_overlap", "spec_method", "expert_weight_format"))
    assert r["two_batch_overlap"] and r["spec_method"] == "mtp" and r["expert_weight_format"] == "fp8_block"
    assert r["output_tokens_per_s_per_gpu"] == pytest.approx(14.8e3 / 8, rel=0.10)


def test_deepseek_day6_prefill_within_15_percent(catalog):
    r = _one(catalog, DEFAULT.with_overrides(prefill_chunk_tokens=16_384), model="deepseek-v3", hardware="h800-sxm",
             precision="fp8", kv_precision="bf16", batch_size=32, num_gpus=32, tp=1, dp=32, ep=32, pp=1,
             redundant_experts=32, input_len=DAY6_ISL, output_len=DAY6_OSL, spec_method="none",
             columns=("input_tokens_per_s_per_gpu", "two_batch_overlap", "expert_weight_format"))
    assert r["two_batch_overlap"] and r["expert_weight_format"] == "fp8_block"
    computed = r["input_tokens_per_s_per_gpu"]
    with_hits = computed / (1.0 - 0.563)  # cache hits load from disk: 2.3 prompt tokens served per computed one
    assert with_hits == pytest.approx(73.7e3 / 8, rel=0.15)


def test_gpt_oss_120b_on_8_b200_tp8_at_batch_1_within_15_percent(catalog):
    """Passes since the stop-37 refit: 1.861 ms on B200 and GB200 (-0.3%), fixed share 23%, concurrency 4 at 2.00 ms
    (-12.8%). Missed at stops 31-36 (+32% to +36%, fixed share 60%): the kernel floors were proportional to the model
    width, which left gpt-oss's narrow layers (d = 2,880) 2.5 times less than DeepSeek's per kernel, and one
    overlap share served vLLM's and TensorRT-LLM's steps (econ.physics.performance.KERNEL_WIDTH_INDEPENDENT_SHARE,
    econ.analyses.calibration.ENGINE_CPU_OVERLAP_HELD)."""
    row = dict(model="gpt-oss-120b", precision="fp4", num_gpus=8, tp=8, dp=1, ep=1, pp=1, spec_method="none")
    cols = ("tpot_s", "step_s", "spec_method")
    at1 = _one(catalog, batch_size=1, hardware="b200", input_len=8192, output_len=1024, columns=cols, **row)
    assert at1["spec_method"] == "none"
    assert at1["tpot_s"] == pytest.approx(1.868e-3, rel=0.15)  # the published batch-1 TPOT on GB200, TP8
    gb200 = _one(catalog, batch_size=1, hardware="gb200-nvl72", input_len=8192, output_len=1024, columns=cols, **row)
    assert gb200["tpot_s"] == pytest.approx(1.868e-3, rel=0.15)  # on the GB200 it was measured on
    at4 = _one(catalog, batch_size=4, hardware="b200", input_len=1024, output_len=1024, columns=cols, **row)
    assert at4["tpot_s"] == pytest.approx(2.289e-3, rel=0.15)  # 8 x B200 itself at concurrency 4
    # the fixed overhead (per-step time and launch gaps: what no kernel works on) is at most a third of the step
    no_fixed = DEFAULT.with_overrides(overhead_s=0.0, kernel_launch_s=0.0, kernel_launch_eager_s=0.0)
    bare = _one(catalog, no_fixed, batch_size=1, hardware="b200", input_len=8192, output_len=1024,
                columns=("step_s",), **row)
    assert at1["step_s"] - bare["step_s"] <= at1["step_s"] / 3.0


def test_deepseek_r1_on_8_b200_at_batch_1_without_mtp_within_15_percent(catalog):
    """Passes since the stop-37 refit, at the edge: 127.6 tokens/s per user against 111 (+14.97%; +19% at stops
    27-36). The 2025 blog's 9.0 ms step is slower than TensorRT-LLM's own 2026 batch-1 DeepSeek-R1 decode in the
    calibration (NVIDIA's AIConfigurator silicon sample: 6.1-6.6 ms per step on GB200/GB300 decode workers, TP8 or
    TP4 with EP), so software newer than this figure pulls the profile faster."""
    r = _one(catalog, model="deepseek-r1", hardware="b200", precision="fp4", kv_precision="bf16", batch_size=1,
             num_gpus=8, tp=8, dp=1, ep=2, pp=1, input_len=1024, output_len=2048, spec_method="none",
             columns=("tokens_per_s_per_user",))
    assert r["tokens_per_s_per_user"] == pytest.approx(111.0, rel=0.15)
