"""Long reasoning decode (issue 17.5): the mean context over an answer whose length varies, and DeepSeek-V3.2's
sparse attention (DSA: a lightning indexer over the whole context, MLA over its top 2,048 keys) as a model of its own.

Known answers: DeepSeek-V3.2-Exp's released config (index_n_heads 64, index_head_dim 128, index_topk 2048; FP8 keys
with one 4-byte scale per 128 values: 132 B per token per layer) gives 2,048 x 1,152 B + 131,072 x 132 B = 19.66 MB of
KV read per layer at a 128K context against 151 MB dense with a BF16 latent (7.7x fewer); the tech report's cost
curves put V3.2's decode nearly flat in the context and well below V3.1's at 128K, and equal below ~2K.
"""

from __future__ import annotations

import polars as pl
import pytest

from econ.assumptions import DEFAULT, Economics
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.physics.architecture import INDEXER_BYTES_PER_ELEMENT, kv_bytes_per_sequence, kv_bytes_read_per_query
from econ.physics.performance import causal_attended_tokens
from econ.physics.serving import mean_decode_context_tokens
from econ.tables.catalog import load_catalog

PRICE = Economics(basis="custom", usd_per_gpu_hour=2.0)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_mean_decode_context_is_length_biased():
    assert mean_decode_context_tokens(1000, 2000, 0.0) == 2000.0  # ISL + OSL / 2 (DESIGN.md)
    assert mean_decode_context_tokens(1000, 2000, 1.0) == 3000.0  # exponential answers: ISL + OSL
    assert mean_decode_context_tokens(1000, 2000, 0.5) == pytest.approx(2250.0)


def test_a_spread_of_answer_lengths_slows_long_reasoning_decode(catalog):
    base = dict(model="deepseek-r1", hardware="h200-sxm", precision="fp8", batch_size=256, num_gpus=8, tp=1, dp=8,
                ep=8, pp=1, input_len=4000, output_len=16000, spec_method="none")
    pts = pl.DataFrame([base | dict(output_len_cv=0.0), base | dict(output_len_cv=1.0)])
    out = evaluate(pts, catalog, DEFAULT, PRICE, columns=("tpot_s", "context_tokens"))
    assert out["tpot_s"][1] > out["tpot_s"][0] * 1.05
    assert out["context_tokens"].to_list() == [20000, 20000]  # the KV cache is sized for ISL + OSL either way
    with pytest.raises(InvalidInputError, match=r"output_len_cv=-1 is outside \[0, 10\]"):
        evaluate(pts.with_columns(output_len_cv=pl.lit(-1.0)), catalog, DEFAULT, PRICE)


def test_dsa_columns_of_the_catalog(catalog):
    m = catalog.model("deepseek-v3.2")
    assert (m["index_topk"], m["indexer_flop_per_context_token"]) == (2048, 2 * 64 * 128)
    assert m["indexer_bytes_per_token_per_layer"] == pytest.approx(128 * INDEXER_BYTES_PER_ELEMENT) == 132.0
    assert not catalog.model("deepseek-v3")["index_topk"]  # dense MLA (empty in models.csv)


def test_dsa_reads_seven_times_fewer_kv_bytes_at_128k():
    ctx, layer = 131_072, dict(num_global_layers=1, num_sliding_layers=0, sliding_window_tokens=0)
    dense = kv_bytes_per_sequence(ctx, 576, 2.0, **layer)
    sparse = kv_bytes_read_per_query(ctx, 576, 2.0, **layer, index_topk=2048, indexer_bytes_per_token_per_layer=132)
    assert dense == pytest.approx(151.0e6, rel=0.01)
    assert sparse == pytest.approx(2048 * 1152 + ctx * 132, rel=1e-12) == pytest.approx(19.66e6, rel=0.01)
    held = kv_bytes_per_sequence(ctx, 576, 2.0, **layer, indexer_bytes_per_token_per_layer=132)
    assert held == pytest.approx(dense + ctx * 132, rel=1e-12)  # the cache holds every latent and indexer key
    # prefill: the main attention's causal pairs are capped by the top-k like a window
    assert causal_attended_tokens(1000, 1, 0, 0, 2048) == 1000 * 1000 / 2
    assert causal_attended_tokens(10_000, 1, 0, 0, 2048) == 2048 * 2048 / 2 + (10_000 - 2048) * 2048


def _v3_vs_v32(catalog, context_tokens, batch=48):
    rows = [dict(model=m, hardware="h200-sxm", precision="fp8", batch_size=batch, num_gpus=8, tp=1, dp=8, ep=8, pp=1,
                 context_tokens=context_tokens, input_len=max(context_tokens - 1000, 1), output_len=1000,
                 spec_method="none") for m in ("deepseek-v3", "deepseek-v3.2")]
    out = evaluate(pl.DataFrame(rows), catalog, DEFAULT, PRICE, columns=("tpot_s", "ttft_s"))
    return out.row(0, named=True), out.row(1, named=True)


def test_dsa_decode_is_nearly_flat_in_the_context_where_dense_mla_grows(catalog):
    (v3_short, v32_short), (v3_long, v32_long) = _v3_vs_v32(catalog, 1024), _v3_vs_v32(catalog, 131_072)
    assert v32_short["tpot_s"] == pytest.approx(v3_short["tpot_s"], rel=0.01)  # below 2K the same attention
    growth_v3 = v3_long["tpot_s"] - v3_short["tpot_s"]
    growth_v32 = v32_long["tpot_s"] - v32_short["tpot_s"]
    assert growth_v3 > 5.0 * growth_v32 > 0.0
    assert v32_long["ttft_s"] < 0.6 * v3_long["ttft_s"]  # prefill: O(L k) attention plus a cheap O(L^2) indexer
