"""Block-scaled FP8 weights (``fp8_block``, issue 17): the format, its sourced expert-GEMM speed, the defaults.

A 128 x 128 block-scaled FP8 expert GEMM runs at 0.568x the per-tensor FP8 speed on Hopper and 0.797x on Blackwell
where it is compute-bound (econ.physics.precision.BLOCK_FP8_MOE_FLOP_FRAC, from NVIDIA's fused-MoE kernel tables in
data/kernels/moe_efficiency.csv); its bytes are FP8's; DeepSeek-V3/R1 at an fp8 precision default to it.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import polars as pl
import pytest

from econ.analyses.calibration import PHYSICS_ECONOMICS
from econ.assumptions import IDEAL
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.physics.precision import BLOCK_FP8_MOE_FLOP_FRAC, NATIVE_FP8_FORMAT, WEIGHT_FORMATS
from econ.tables.catalog import load_catalog

KERNELS = Path(__file__).resolve().parents[2] / "data" / "kernels" / "moe_efficiency.csv"
GENERATION = {"h100-sxm": "hopper", "h200-sxm": "hopper", "b200": "blackwell", "gb200-nvl72": "blackwell",
              "b300": "blackwell", "gb300-nvl72": "blackwell"}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _one(catalog, assumptions=IDEAL, columns=("tpot_s", "input_tokens_per_s_per_gpu", "weight_format",
                                              "expert_weight_format", "weight_bytes"), **row):
    base = dict(model="deepseek-v3", hardware="h200-sxm", precision="fp8", num_gpus=8, tp=1, dp=8, ep=8,
                input_len=4096, output_len=1024, batch_size=8, spec_method="none")
    return evaluate(pl.DataFrame([{**base, **row}]), catalog, assumptions, PHYSICS_ECONOMICS,
                    columns=columns).row(0, named=True)


def test_the_speed_factors_are_the_kernel_tables_medians():
    """The constants are what their stated rule gives on the shipped kernel table: per matched row (accelerator,
    model, MoE TP/EP, routing, token count), per-tensor FP8 latency / fp8_block latency, at >= 1,024 tokens per
    expert; the median per generation."""
    rows = pl.read_csv(KERNELS, infer_schema_length=0)
    pairs: dict[tuple, dict] = {}
    for r in rows.iter_rows(named=True):
        if r["quant"] in ("fp8", "fp8_block") and r["accelerator_id"] in GENERATION:
            key = (r["accelerator_id"], r["model_id"], r["moe_tp_size"], r["moe_ep_size"], r["distribution"],
                   r["num_tokens"])
            pairs.setdefault(key, {})[r["quant"]] = (float(r["latency_s"]), float(r["tokens_per_expert"]))
    ratios: dict[str, list] = {}
    for key, q in pairs.items():
        if len(q) == 2 and q["fp8"][1] >= 1024:
            ratios.setdefault(GENERATION[key[0]], []).append(q["fp8"][0] / q["fp8_block"][0])
    assert set(ratios) == set(BLOCK_FP8_MOE_FLOP_FRAC)
    for gen, values in ratios.items():
        assert statistics.median(values) == pytest.approx(BLOCK_FP8_MOE_FLOP_FRAC[gen], abs=0.001), gen
    assert len(ratios["hopper"]) >= 10 and len(ratios["blackwell"]) >= 20
    assert BLOCK_FP8_MOE_FLOP_FRAC["hopper"] < BLOCK_FP8_MOE_FLOP_FRAC["blackwell"] < 1.0


def test_bytes_are_fp8_plus_one_fp32_scale_per_block():
    assert WEIGHT_FORMATS["fp8_block"] == 1.0 + 4.0 / (128 * 128)


def test_deepseek_at_fp8_defaults_to_its_block_release_and_per_tensor_is_a_choice(catalog):
    assert NATIVE_FP8_FORMAT == {"fp8_block": "fp8_block"}
    assert catalog.model("deepseek-v3")["native_weight_dtype"] == "fp8_block"
    auto = _one(catalog)
    assert (auto["weight_format"], auto["expert_weight_format"]) == ("fp8_block", "fp8_block")
    given = _one(catalog, weight_format="fp8")
    assert (given["weight_format"], given["expert_weight_format"]) == ("fp8", "fp8")
    assert _one(catalog, precision="fp4", hardware="b200")["expert_weight_format"] == "nvfp4"  # not pinned at fp4
    llama = _one(catalog, model="llama-3.3-70b", num_gpus=1, dp=1, ep=1, batch_size=8)
    assert llama["weight_format"] == "fp8"  # a bf16 release's fp8 stays per-tensor


def test_compute_bound_prefill_slows_by_the_factor_on_hopper_and_not_on_cdna3(catalog):
    """Prefill of 4K-token prompts on ADP8 EP8 under the ideal roofline: the routed GEMMs are compute-bound, so the
    block format costs exactly their FLOP time / factor - FLOP time; decode at batch 8 is memory-bound (unchanged
    to 1%); on MI300X (no measurement) nothing changes."""
    per_tensor = _one(catalog, weight_format="fp8")
    block = _one(catalog, weight_format="fp8_block")
    slow = per_tensor["input_tokens_per_s_per_gpu"] / block["input_tokens_per_s_per_gpu"]
    assert 1.15 < slow < 1.0 / BLOCK_FP8_MOE_FLOP_FRAC["hopper"]  # the experts are part of the step, not all of it
    assert block["tpot_s"] == pytest.approx(per_tensor["tpot_s"], rel=0.01)
    assert block["weight_bytes"] / per_tensor["weight_bytes"] == pytest.approx(WEIGHT_FORMATS["fp8_block"], rel=1e-3)
    mi = [_one(catalog, hardware="mi300x", weight_format=w)["input_tokens_per_s_per_gpu"] for w in ("fp8", "fp8_block")]
    assert mi[0] == pytest.approx(mi[1], rel=1e-3)
    b200 = [_one(catalog, hardware="b200", weight_format=w)["input_tokens_per_s_per_gpu"] for w in ("fp8", "fp8_block")]
    assert 1.0 < b200[0] / b200[1] < slow  # Blackwell scales blocks in its tensor cores: a smaller cost


def test_dense_matmuls_and_w8a16_experts_keep_their_peak(catalog):
    """Only FP8 expert GEMMs slow down: a dense model's step changes by the scale bytes alone, and block FP8 experts
    multiplied in bf16 (dequantized, W8A16) run at the bf16 peak."""
    dense = [_one(catalog, model="llama-3.3-70b", num_gpus=1, dp=1, ep=1, weight_format=w)
             for w in ("fp8", "fp8_block")]
    assert dense[1]["input_tokens_per_s_per_gpu"] == pytest.approx(dense[0]["input_tokens_per_s_per_gpu"], rel=1e-3)
    w8a16 = [_one(catalog, precision="bf16", expert_weight_format=w)["input_tokens_per_s_per_gpu"]
             for w in ("fp8", "fp8_block")]
    assert w8a16[1] == pytest.approx(w8a16[0], rel=1e-3)


def test_block_fp8_under_an_fp4_precision_is_refused_as_too_wide(catalog):
    with pytest.raises(InvalidInputError, match="weight_format='fp8_block' is wider than precision='fp4'"):
        _one(catalog, hardware="b200", precision="fp4", weight_format="fp8_block")


def test_a_quote_served_in_fp8_is_the_models_own_fp8(catalog):
    from econ.tables.quote_files import fp8_flavour
    df = pl.DataFrame({"w": ["fp8", "fp8", "nvfp4", None], "native": ["fp8_block", "bf16", "fp8_block", "fp8_block"]})
    got = df.select(fp8_flavour(pl.col("w"), pl.col("native")).alias("w"))["w"].to_list()
    assert got == ["fp8_block", "fp8", "nvfp4", None]
