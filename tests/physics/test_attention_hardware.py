"""Attention as a kernel of its own, bound by KV reads, matmuls or softmax exponentials (issue 17.7).

Known answers: FlashAttention-3 (arXiv:2407.08608 sec. 3.2): H100 SXM runs 989 TFLOP/s of BF16 matmul and 3.9 T
exponentials/s, so at head dim 128 (512 FLOP per score) the exponentials take half the matmul time; B200 doubled the
tensor cores and kept the SFUs (FlashAttention-4), so they take as long; Blackwell Ultra (B300, GB300) doubles the
SFU rate (NVIDIA). accelerators.csv carries the rates (exp_tera_per_s, derived from those ratios).
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

from econ.assumptions import DEFAULT, Economics
from econ.engine import evaluate
from econ.physics.performance import attention_time_s
from econ.tables.catalog import load_catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_attention_is_bound_by_the_slowest_of_reads_matmuls_and_exponentials():
    bw, peak, exps = 3.35e12, 989e12, 3.863e12
    # prefill tile of head dim 128 on H100 BF16: 512 FLOP per score -> matmul-bound, exps at half
    flop, n_exp = 512e12, 1e12
    assert attention_time_s(0.0, flop, n_exp, bw, 1.0, peak, exps, 1.0) == pytest.approx(flop / peak)
    assert n_exp / exps == pytest.approx(0.5 * flop / peak, rel=0.01)
    # with FP8 matmuls (twice the peak) the exponentials bind
    assert attention_time_s(0.0, flop, n_exp, bw, 1.0, 2 * peak, exps, 1.0) == pytest.approx(n_exp / exps)
    # decode: reading the KV cache binds
    assert attention_time_s(1e9, 1e9, 1e6, bw, 0.8, peak, exps, 0.4) == pytest.approx(1e9 / (bw * 0.8))


def test_exponential_rates_follow_the_sm_ratios(catalog):
    acc = {r["id"]: r for r in catalog.accelerators.select("id", "bf16_peak_flop_per_s", "exp_per_s").iter_rows(
        named=True)}
    assert acc["h100-sxm"]["exp_per_s"] == pytest.approx(3.87e12, rel=0.01)  # 16 x 132 SMs x 1.83 GHz
    assert acc["b200"]["exp_per_s"] == pytest.approx(acc["b200"]["bf16_peak_flop_per_s"] / 512, rel=1e-3)
    assert acc["gb300-nvl72"]["exp_per_s"] == pytest.approx(2 * acc["gb200-nvl72"]["exp_per_s"], rel=1e-3)
    assert acc["mi355x"]["exp_per_s"] is None  # CDNA 4 rate not found: not modelled


def _prefill(catalog, hardware, input_len, kv="fp8"):
    pts = pl.DataFrame(dict(model=["llama-3.3-70b"], hardware=[hardware], precision=["fp8"], kv_precision=[kv],
                            batch_size=[1], num_gpus=[4], tp=[4], input_len=[input_len], output_len=[1000]))
    return evaluate(pts, catalog, DEFAULT, Economics(basis="custom", usd_per_gpu_hour=1.0),
                    columns=("ttft_s", "input_tokens_per_s_per_gpu")).row(0, named=True)


@pytest.mark.parametrize("input_len", [100_000, 128_000])
def test_gb300_prefills_long_prompts_faster_than_gb200(catalog, input_len):
    """At 100K+ prompts attention dominates prefill; with FP8 attention GB200 is bound by its exponentials and
    GB300's doubled SFU rate makes it the faster chip (same FP8 peak, same HBM bandwidth)."""
    gb200, gb300 = _prefill(catalog, "gb200-nvl72", input_len), _prefill(catalog, "gb300-nvl72", input_len)
    assert gb300["ttft_s"] < 0.8 * gb200["ttft_s"]
    # without the exponentials (the pure FLOP/s roofline) the two are within a few percent
    flat = replace(catalog, accelerators=catalog.accelerators.with_columns(pl.lit(None, pl.Float64).alias("exp_per_s")))
    a, b = _prefill(flat, "gb200-nvl72", input_len), _prefill(flat, "gb300-nvl72", input_len)
    assert abs(b["ttft_s"] / a["ttft_s"] - 1.0) < 0.05


def test_short_prompts_do_not_feel_the_exponentials(catalog):
    """At 1K tokens the GEMMs dominate: GB200 and GB300 prefill alike."""
    gb200, gb300 = _prefill(catalog, "gb200-nvl72", 1024), _prefill(catalog, "gb300-nvl72", 1024)
    assert gb300["ttft_s"] == pytest.approx(gb200["ttft_s"], rel=0.1)
