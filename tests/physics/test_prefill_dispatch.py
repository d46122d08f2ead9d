"""TTFT's host floor (stop 31, issue 17): a prefill pass runs outside CUDA graphs, so the host dispatches every layer
before the first token can leave; a prompt alone takes max(host, GPU time) (econ.physics.performance.
prefill_dispatch_s). And the calibration predicts each measurement with its engine's dispatch per layer and with
expert parallelism at routing's own imbalance (no load balancer stated).

Each test pins the efficiencies (nothing calibrated) so that it checks the mechanism, not a fit.
"""

from __future__ import annotations

import polars as pl
import pytest

from econ.analyses import calibration as cal
from econ.assumptions import DEFAULT_DEPLOYMENT, IDEAL, Assumptions
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.physics.performance import prefill_dispatch_s
from econ.vocabulary import PREFILL_LAYER_DISPATCH_BY_ENGINE_S, field_named as field

PINNED = Assumptions(calibrated=frozenset())
COLS = ("ttft_s", "input_tokens_per_s_per_gpu", "output_tokens_per_s_per_gpu", "tpot_s", "feasible")


def one(catalog, a=PINNED, **row):
    base = dict(model="llama-3.3-70b", hardware="h100-sxm", precision="fp8", input_len=1024, output_len=1024,
                batch_size=8, num_gpus=8, tp=8)
    return evaluate(pl.DataFrame([base | row]), catalog, a, columns=COLS).row(0, named=True)


def test_the_floor_is_layers_times_the_per_layer_dispatch(catalog):
    assert prefill_dispatch_s(80, 0.8e-3) == pytest.approx(0.064, rel=1e-12)
    # the default is vLLM's, NVIDIA AIConfigurator's 0.8 ms per layer (vllm_backend._prefill_dispatch_overhead_ms)
    assert PINNED.prefill_layer_dispatch_s == 0.8e-3
    assert IDEAL.prefill_layer_dispatch_s == 0.0


def test_a_short_prompt_at_high_tp_waits_for_the_host_and_stops_falling_with_tp(catalog):
    sglang = PINNED.with_overrides(prefill_layer_dispatch_s=4.7e-3)
    off = PINNED.with_overrides(prefill_layer_dispatch_s=0.0)
    floor = 80 * 4.7e-3  # Llama-3.3-70B's 80 layers on SGLang: 0.376 s
    t4, t8 = one(catalog, sglang, num_gpus=4, tp=4)["ttft_s"], one(catalog, sglang)["ttft_s"]
    g4, g8 = one(catalog, off, num_gpus=4, tp=4)["ttft_s"], one(catalog, off)["ttft_s"]
    assert g8 < g4 < floor  # the GPU's own prefill of 1K tokens is shorter than the host's dispatch at TP4 and TP8
    assert t4 == pytest.approx(floor, rel=1e-9) and t8 == pytest.approx(floor, rel=1e-9)


def test_a_long_prompt_is_gpu_bound_and_untouched(catalog):
    off = PINNED.with_overrides(prefill_layer_dispatch_s=0.0)
    on, base = one(catalog, input_len=16_384), one(catalog, off, input_len=16_384)
    assert base["ttft_s"] > 80 * 0.8e-3
    assert on["ttft_s"] == base["ttft_s"]


def test_the_floor_is_latency_not_throughput(catalog):
    """AIConfigurator charges it to TTFT, not to the step latencies: tokens/s do not move."""
    sglang = PINNED.with_overrides(prefill_layer_dispatch_s=4.7e-3)
    off = PINNED.with_overrides(prefill_layer_dispatch_s=0.0)
    a, b = one(catalog, sglang, batch_size=256), one(catalog, off, batch_size=256)
    for col in ("input_tokens_per_s_per_gpu", "output_tokens_per_s_per_gpu", "tpot_s"):
        assert a[col] == b[col]
    assert a["ttft_s"] > b["ttft_s"]


def test_the_dispatch_outside_its_range_is_refused_with_its_name():
    with pytest.raises(InvalidInputError, match="prefill_layer_dispatch_s"):
        PINNED.with_overrides(prefill_layer_dispatch_s=-1e-3)
    with pytest.raises(InvalidInputError, match="prefill_layer_dispatch_s"):
        PINNED.with_overrides(prefill_layer_dispatch_s=1.0)


@pytest.mark.parametrize("engine, expected", [
    ("sglang", 4.7e-3), ("tensorrt-llm-pytorch", 1.8e-3), ("tensorrt-llm-cpp", 0.0),
    ("vllm-async", 0.8e-3), ("vllm-sync", 0.8e-3), ("unknown", 0.8e-3),
])
def test_each_measurement_is_predicted_with_its_engines_dispatch(engine, expected):
    a = cal._engine_assumptions(PINNED, engine)
    assert a.prefill_layer_dispatch_s == expected
    overlap = PINNED.cpu_overlap_frac if cal.ENGINE_OVERLAP_SCHEDULER[engine][0] else 0.0
    assert a.cpu_overlap_frac == cal.ENGINE_CPU_OVERLAP_HELD.get(engine, (overlap,))[0]
    assert cal.ENGINE_CPU_OVERLAP_HELD["tensorrt-llm-pytorch"][0] == 1.0  # its loop launches on device-side tokens
    assert cal._engine_assumptions(IDEAL, engine).prefill_layer_dispatch_s == 0.0  # a pure roofline stays one
    assert set(cal.ENGINE_PREFILL_DISPATCH_S) == set(cal.ENGINE_OVERLAP_SCHEDULER)


def test_the_per_engine_values_have_one_home():
    """The calibration's table, the field's default and its shown source read the vocabulary's per-engine values."""
    table = {"vllm": 0.8e-3, "sglang": 4.7e-3, "tensorrt-llm-pytorch": 1.8e-3, "tensorrt-llm-cpp": 0.0}
    assert PREFILL_LAYER_DISPATCH_BY_ENGINE_S == table
    assert field("prefill_layer_dispatch_s").default == table["vllm"]
    for engine in ("sglang", "tensorrt-llm-pytorch", "tensorrt-llm-cpp"):
        assert cal.ENGINE_PREFILL_DISPATCH_S[engine][0] is PREFILL_LAYER_DISPATCH_BY_ENGINE_S[engine]
    source = field("prefill_layer_dispatch_s").source
    for ms in ("0.8 ms", "4.7 ms", "1.8 ms"):
        assert ms in source


def test_measurements_run_expert_parallelism_at_routings_own_imbalance():
    """No measurement states a load balancer, so each is predicted at 1.56 (AIConfigurator's power-law over balanced
    EP8 kernels), not at the product's load-balanced 1.2; a perfectly balanced caller keeps 1."""
    assert DEFAULT_DEPLOYMENT.expert_imbalance_factor == 1.2
    assert cal._measured_deployment(DEFAULT_DEPLOYMENT).expert_imbalance_factor == cal.MEASURED_EXPERT_IMBALANCE == 1.56
    ideal = DEFAULT_DEPLOYMENT.__class__(expert_imbalance_factor=1.0)
    assert cal._measured_deployment(ideal).expert_imbalance_factor == 1.0


def test_the_measured_imbalance_is_the_kernel_tables_median():
    """Recomputed from data/kernels/moe_efficiency.csv: EP8, >= 256 tokens per expert, Mixtral (1 expert per rank)
    left out; the median latency ratio of power-law over balanced routing rounds to the constant."""
    k = pl.read_csv("data/kernels/moe_efficiency.csv", infer_schema_length=10_000).filter(pl.col("moe_ep_size") == 8)
    key = ["system", "backend", "quant", "model_id", "num_tokens", "tokens_per_expert"]
    d = k.pivot(on="distribution", index=key, values="latency_s", aggregate_function="first").drop_nulls()
    d = d.filter((pl.col("tokens_per_expert") >= 256) & (pl.col("model_id") != "mixtral-8x7b"))
    ratio = (d["power_law_1.01"] / d["balanced"]).median()
    assert d.height >= 100
    assert ratio == pytest.approx(cal.MEASURED_EXPERT_IMBALANCE, abs=0.005)


def test_a_lone_prompt_on_attention_dp_is_one_groups_prefill(catalog):
    """A prompt prefilled alone on attention DP runs its attention on one group while the expert-parallel MoE carries
    its tokens only: its TTFT is below the step in which every group prefills a prompt (the throughput step at one
    prompt per group), and equal to it without DP."""
    a = PINNED.with_overrides(prefill_layer_dispatch_s=0.0, prefill_chunk_tokens=8192)

    def both(**layout):
        r = one(catalog, a, model="deepseek-v3", hardware="h200-sxm", input_len=8192, output_len=1024,
                batch_size=64, num_gpus=8, **layout)
        return r["ttft_s"], 8192 / (r["input_tokens_per_s_per_gpu"] * layout["tp"])

    lone, all_groups = both(tp=1, dp=8, ep=8)
    assert lone < 0.9 * all_groups
    lone_tp, step_tp = both(tp=8, dp=1, ep=8)
    assert lone_tp == pytest.approx(step_tp, rel=1e-9)
