"""Long prompts (issue 22.3): ring-attention context parallelism, chunked prefill beside decode, a prefill part.

Measured comparison: Yang et al., "Context Parallelism for Scalable Million-Token Inference" (arXiv:2411.01783,
2024): a 1M-token Llama3-405B prefill in 77 s on 128 H100 (16 nodes x TP8, ring attention pass-KV)."""

from __future__ import annotations

import json

import dataclasses

import numpy as np
import polars as pl
import pytest

from econ.analyses.long_prompt import long_prompt
from econ.cli import main
from econ.errors import InvalidInputError
from econ.physics.long_context import chunked_prefill, disaggregated_prefill_ttft_s, ring_attention_prefill_s
from econ.tables.catalog import load_catalog

PUBLISHED_1M_405B_128_H100_S = 77.0


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_million_token_prefill_on_128_h100_is_near_the_published_77_s(catalog):
    r = long_prompt(catalog, model="llama-3.1-405b", hardware="h100-sxm", prompt_tokens=1_000_000, precision="fp8",
                    tp=8, cp_sizes=(1, 16)).plans
    one, cp16 = r.row(0, named=True), r.row(1, named=True)
    assert cp16["gpus"] == 128
    assert cp16["ttft_s"] == pytest.approx(PUBLISHED_1M_405B_128_H100_S, rel=0.25)  # 67.5 s from the engine (BF16 attention)
    assert cp16["exposed_comm_s"] == 0  # 400 Gb/s per GPU hides the KV ring behind attention
    assert one["ttft_s"] / cp16["ttft_s"] == pytest.approx(16, rel=0.01)
    assert not one["kv_fits"] and cp16["kv_fits"]  # 1M tokens of 405B KV do not fit one node beside the weights
    assert cp16["usd_per_prompt"] == pytest.approx(128 * cp16["ttft_s"] * cp16["usd_per_gpu_hour"] / 3600)


def test_a_slow_link_exposes_the_ring():
    t, exposed = ring_attention_prefill_s(1e15, 1e15, 8, 1e14, 1e14, 10e9, 1e9)
    assert exposed == pytest.approx(7 * 10 - 1e15 / 8 / 1e14)
    assert t == pytest.approx(1e15 / 8e14 + 70.0)
    t1, e1 = ring_attention_prefill_s(1e15, 1e15, 1, 1e14, 1e14, 10e9, 1e9)
    assert e1 == 0 and t1 == pytest.approx(20.0)


def test_chunked_prefill_small_chunks_ride_free_big_chunks_slow_decode():
    ttft, it, infl = chunked_prefill(100_000, 1000, decode_mem_s=0.030, decode_flop_s=0.010, chunk_flop_s=0.015)
    assert infl == pytest.approx(1.0) and it == pytest.approx(0.030) and ttft == pytest.approx(100 * 0.030)
    ttft, it, infl = chunked_prefill(100_000, 8000, decode_mem_s=0.030, decode_flop_s=0.010, chunk_flop_s=0.120)
    assert it == pytest.approx(0.130) and infl == pytest.approx(0.130 / 0.030) and ttft == pytest.approx(13 * 0.130)


def test_a_prefill_part_ships_the_kv_layer_by_layer(catalog):
    ttft, pre, xfer = disaggregated_prefill_ttft_s(10.0, 40e9, 100e9, overlap=True)
    assert ttft == pytest.approx(10.0) and xfer == pytest.approx(0.4)
    ttft, _, _ = disaggregated_prefill_ttft_s(10.0, 40e9, 100e9, overlap=False)
    assert ttft == pytest.approx(10.4)
    r = long_prompt(catalog, model="llama-3.3-70b", hardware="h100-sxm", prompt_tokens=131072, tp=2, cp_sizes=(1,),
                    prefill_hardware="l40s").plans
    part = r.filter(r["strategy"] == "prefill part").row(0, named=True)
    assert part["hardware"] == "l40s" and part["kv_transfer_s"] > 0 and part["usd_per_gpu_hour"] > 0


def test_chunked_prefill_from_the_engine_is_monotone_in_the_chunk(catalog):
    ch = long_prompt(catalog, model="llama-3.3-70b", hardware="h100-sxm", prompt_tokens=131072, tp=2, cp_sizes=(1,),
                     chunk_tokens=[512, 2048, 8192, 32768]).chunked
    ttft, infl, chunk_s = ch["ttft_s"].to_list(), ch["tpot_inflation"].to_list(), ch["chunk_s"].to_list()
    assert all(a > b for a, b in zip(ttft, ttft[1:]))  # a larger chunk lowers TTFT
    assert all(a < b for a, b in zip(infl, infl[1:]))  # and slows decode more
    assert all(a < b for a, b in zip(chunk_s, chunk_s[1:])) and infl[0] >= 1.0


def test_the_prefill_part_ttft_includes_the_kv_shipment_over_a_slow_link(catalog):
    slow = dataclasses.replace(catalog, accelerators=catalog.accelerators.with_columns(
        pl.when(pl.col("id") == "h100-sxm").then(1e8).otherwise(pl.col("scale_out_bandwidth_bytes_per_s"))
        .alias("scale_out_bandwidth_bytes_per_s")))  # 0.1 GB/s per decode GPU
    part = long_prompt(slow, model="llama-3.3-70b", hardware="h100-sxm", prompt_tokens=131072, tp=2, cp_sizes=(1,),
                       prefill_hardware="l40s").plans.filter(pl.col("strategy") == "prefill part").row(0, named=True)
    assert part["kv_transfer_s"] > part["prefill_s"]
    assert part["ttft_s"] == pytest.approx(part["kv_transfer_s"]) and part["ttft_s"] > part["prefill_s"]


@pytest.mark.parametrize("kw, match", [
    ({"chunk_tokens": [0]}, r"chunk_tokens=0 is outside \[1, 16777216\] \(tokens\)"),
    ({"prefill_hardware": "no-such-gpu"}, r"prefill_hardware"),
])
def test_bad_long_prompt_arguments_name_field_value_and_range(catalog, kw, match):
    from econ.errors import EconError

    with pytest.raises(EconError, match=match):
        long_prompt(catalog, model="llama-3.3-70b", hardware="h100-sxm", prompt_tokens=131072, tp=2, cp_sizes=(1,),
                    **kw)


@pytest.mark.parametrize("call, match", [
    (lambda: ring_attention_prefill_s(1e15, 1e15, 0, 1e14, 1e14, 1e9, 1e9), r"cp=0 is outside \[1, 1000000\] \(ranks\)"),
    (lambda: ring_attention_prefill_s(1e15, 1e15, 2, 1e14, 1e14, 1e9, 0.0), r"link_bytes_per_s=0 is outside \(0"),
    (lambda: chunked_prefill(1000, 0, 0.03, 0.01, 0.01), r"chunk_tokens=0 is outside \[1"),
    (lambda: disaggregated_prefill_ttft_s(1.0, 1e9, -1.0), r"link_bytes_per_s=-1 is outside"),
])
def test_bad_long_prompt_inputs_name_field_value_and_range(call, match):
    with pytest.raises(InvalidInputError, match=match):
        call()


def test_cli_prefill(capsys):
    code = main(["prefill", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--input-len", "131072", "--cp",
                 "1,4", "--chunk", "2048", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    assert [p["cp"] for p in doc["plans"]] == [1, 4] and doc["chunked"][0]["chunk_tokens"] == 2048
    assert np.isfinite(doc["chunked"][0]["ttft_s"])
    assert main(["prefill", "--model", "llama-3.3-70b", "--hardware", "h100-sxm", "--input-len", "1000",
                 "--cp", "0"]) == 2
    assert "--cp" in capsys.readouterr().err


def test_a_wide_ep_moe_prompt_runs_on_one_attention_group(catalog):
    """DeepSeek-V3 on GB200: the cheapest batch-1 rank was EP64 x attention-DP64, an invalid batch-1 deployment, and
    its decode layout (attention-DP 8) made the chunk's batch-1 prefill invalid too; both came back null and
    long_prompt raised a TypeError. A lone prompt's rank and the decode batch beside the chunks are one attention
    group (dp = 1): every figure is finite, and chunking still costs TPOT."""
    from econ.analyses.long_prompt import chunked_prefill_row, chunked_prefill_rows

    r = long_prompt(catalog, model="deepseek-v3", hardware="gb200-nvl72", prompt_tokens=100_000, cp_sizes=(1, 2),
                    chunk_tokens=[512, 2048, 8192], decode_batch=64)
    plans, chunked = r.plans, r.chunked
    assert plans.height == 2 and chunked.height == 3
    for frame in (plans, chunked):
        num = frame.select(pl.col(pl.Float64)).to_numpy()
        assert np.isfinite(num).all()
    assert chunked["tpot_inflation"].is_sorted() and chunked["tpot_inflation"][0] > 1.0
    assert "ADP" not in chunked["layout"][0]  # the decode batch on one attention group
    # the batched rows equal the single-chunk function, row for row
    one = chunked_prefill_row(catalog, model="deepseek-v3", hardware="gb200-nvl72", prompt_tokens=100_000,
                              chunk_tokens=2048, decode_batch=64)
    assert one == chunked.row(1, named=True)
    assert chunked_prefill_rows(catalog, model="deepseek-v3", hardware="gb200-nvl72", prompt_tokens=100_000,
                                chunk_tokens=[2048], decode_batch=64) == [one]


def test_a_prompt_that_cannot_run_says_why_instead_of_a_type_error(catalog):
    """A pinned TP the heads do not divide is an infeasible lone prompt: the engine's reason, not a null turned into
    a TypeError (the failure DeepSeek-V3 on GB200 showed)."""
    from econ.errors import DoesNotFitError

    with pytest.raises(DoesNotFitError, match=r"lone prompt of llama-3.3-70b cannot run on TP3 x h100-sxm: no valid "
                                               r"layout"):
        long_prompt(catalog, model="llama-3.3-70b", hardware="h100-sxm", prompt_tokens=100_000, tp=3, cp_sizes=(1,))
