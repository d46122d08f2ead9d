"""KV-cache formats beyond bf16 / fp8 (issue 19 part 3): int8, int4, mxfp4, nvfp4 from the one table
:data:`econ.physics.precision.KV_BYTES_PER_ELEMENT`, their bytes with block scales, and the known answer on
Llama-3.3-70B bf16 weights on 4 x H100 (TP4)."""

from __future__ import annotations

import math

import polars as pl
import pytest

from econ import vocabulary as V
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.physics import precision as prec
from econ.tables.catalog import load_catalog

FORMATS = ("bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_one_table_of_kv_formats():
    assert tuple(prec.KV_BYTES_PER_ELEMENT) == FORMATS
    assert V.KV_PRECISIONS == tuple(prec.KV_BYTES_PER_ELEMENT)
    assert V.FIELDS["kv_precision"].choices == V.KV_PRECISIONS
    assert set(prec.KV_ATTENTION_PRECISION) == set(FORMATS) == set(prec.KV_NATIVE_GENERATIONS)


def test_bytes_include_block_scales():
    b = prec.KV_BYTES_PER_ELEMENT
    assert b["mxfp4"] == pytest.approx((4 + 8 / 32) / 8)     # OCP MX v1.0: E8M0 scale per 32 -> 4.25 bits
    assert b["nvfp4"] == pytest.approx((4 + 8 / 16) / 8)     # NVFP4: E4M3 scale per 16 -> 4.5 bits
    assert b["int4"] == pytest.approx((4 + 32 / 128) / 8)    # fp16 scale + zero per 128-element head vector
    assert b["int8"] == pytest.approx((8 + 32 / 128) / 8)
    assert b["bf16"] == 2.0 and b["fp8"] == 1.0


def _llama_h100(catalog, kv: str, batch: int = 8) -> dict:
    pts = pl.DataFrame(dict(model=["llama-3.3-70b"], hardware=["h100-sxm"], precision=["bf16"], kv_precision=[kv],
                            num_gpus=[4], tp=[4], pp=[1], batch_size=[batch], input_len=[1024], output_len=[1024]))
    return evaluate(pts, catalog, strict=False).row(0, named=True)


def test_known_answer_llama70b_h100_tp4(catalog):
    rows = {k: _llama_h100(catalog, k) for k in FORMATS}
    bf16 = rows["bf16"]
    # the KV bytes per sequence scale with the bytes per element: nvfp4 is 0.5625 / 2 of bf16's
    assert rows["nvfp4"]["kv_bytes_per_sequence"] / bf16["kv_bytes_per_sequence"] == pytest.approx(0.5625 / 2)
    for k in FORMATS:
        assert rows[k]["kv_bytes_per_sequence"] / bf16["kv_bytes_per_sequence"] == pytest.approx(
            prec.KV_BYTES_PER_ELEMENT[k] / 2.0)
        assert rows[k]["kv_precision"] == k
        assert rows[k]["feasible"]
    # the max batch rises as the bytes say: the KV room left by the weights holds room / bytes-per-sequence
    room_lo = bf16["max_batch_size"] * bf16["kv_bytes_per_sequence"]
    room_hi = (bf16["max_batch_size"] + 1) * bf16["kv_bytes_per_sequence"]
    for k in FORMATS:
        per_seq = rows[k]["kv_bytes_per_sequence"]
        assert math.floor(room_lo / per_seq) <= rows[k]["max_batch_size"] <= math.floor(room_hi / per_seq)
    mb = {k: rows[k]["max_batch_size"] for k in FORMATS}
    assert mb["int4"] > mb["fp8"] > mb["bf16"]
    assert mb["int4"] == mb["mxfp4"] > mb["nvfp4"] > mb["fp8"] > mb["int8"] > mb["bf16"]


def test_narrow_kv_dequantized_attention(catalog):
    """int8 / int4 / mxfp4 caches attend at bf16 (dequantized), nvfp4 at fp8 (TensorRT-LLM), fp8 at fp8: a chip
    pair is never refused, the bytes change."""
    assert prec.KV_ATTENTION_PRECISION == {"bf16": "bf16", "fp8": "fp8", "int8": "bf16", "int4": "bf16",
                                           "mxfp4": "bf16", "nvfp4": "fp8"}
    for hw in ("a100-80gb-sxm", "h100-sxm", "b200", "mi300x"):
        pts = pl.DataFrame(dict(model=["llama-3.3-70b"] * 6, hardware=[hw] * 6, precision=["bf16"] * 6,
                                kv_precision=list(FORMATS), batch_size=[8] * 6, input_len=[1024] * 6,
                                output_len=[1024] * 6))
        res = evaluate(pts, catalog, strict=False)
        assert res["feasible"].all(), hw


def test_unknown_kv_format_is_refused(catalog):
    pts = pl.DataFrame(dict(model=["llama-3.3-70b"], hardware=["h100-sxm"], precision=["bf16"], kv_precision=["fp6"],
                            batch_size=[8], input_len=[1024], output_len=[1024]))
    with pytest.raises(InvalidInputError, match="kv_precision"):
        evaluate(pts, catalog)
