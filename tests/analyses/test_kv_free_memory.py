"""A TensorRT-LLM measurement's KV cache is a share of the *free* memory (stop 35).

TensorRT-LLM sizes its KV-cache pool as ``free_gpu_memory_fraction`` (default 0.9) of the memory left once the
weights, activations and runtime are allocated; vLLM and SGLang take a share of the *total* memory, econ's
``usable_hbm_frac`` rule. On a nearly full accelerator the two differ by 2x: Llama-3.1-70B FP8 on one H100
(weights 72.7 GB of 85.9 GB) holds 30 sequences of 2,000 tokens under TensorRT-LLM's rule and 14 under econ's.

Sources: nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html (default 0.9); AIConfigurator
sdk/memory.py @095f58a5 (TRT-LLM of free, vLLM/SGLang of total), its TensorRT-LLM activation coefficients
(sdk/backends/trtllm_backend.py) and per-rank NCCL / runtime memory (systems/h100_sxm.yaml).
Known answer: NVIDIA/TensorRT-LLM perf-overview @258c754 (v0.17), Llama-3.1-70B FP8, H100 TP1, 1,000 / 1,000:
839.97 output tokens/s per GPU.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.analyses import calibration as cal
from econ.assumptions import DEFAULT
from econ.engine import evaluate
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()
LLAMA70_TP1 = "trtllm-llama31-70b-h100-tp1-1000-1000-v0.17"


def test_reserved_memory_is_aiconfigurators_count():
    # Llama-3.1-70B (hidden 8,192) at TP1 and 8,192 tokens per pass: activations 2 x 8,192 x 8,192 x 11 B, no NCCL
    # buffer at TP1, 551 MiB of runtime
    got = cal.trtllm_reserved_bytes([8192], [False], [1], 8192)[0]
    assert got == pytest.approx(2 * 8192 * 8192 * 11 + 551 * 2**20)
    # an MoE rank at TP8 (clamped: TP16 reads the TP8 entry): coefficient 10 and 392 MiB of NCCL buffers
    moe = cal.trtllm_reserved_bytes([7168, 7168], [True, True], [8, 16], 8192)
    assert moe[0] == pytest.approx(2 * 8192 * 7168 * 10 + 411_041_792 + 551 * 2**20)
    assert moe[1] == moe[0]


def test_a_nearly_full_h100_holds_twice_the_batch():
    """The v0.17 table's Llama-3.1-70B FP8 on one H100 (TensorRT-LLM C++ runtime): 0.9 x (85.9 GB - 72.7 GB of
    weights - 2.05 GB reserved) / (2,000 tokens x 163,840 B) = 30 sequences; econ's 0.9 x 85.9 GB - 72.7 GB gives
    14."""
    meas = cal.load_measurements().filter(pl.col("case_id") == LLAMA70_TP1)
    cases = cal.cases_to_points(meas, CATALOG)
    hbm = CATALOG.accelerator("h100-sxm")["hbm_capacity_bytes"]
    kv_per_seq = 2000 * 80 * 8 * 128 * 2 * 1.0  # layers x KV heads x head dim x (K, V) x FP8
    res = evaluate(cases.points.drop("case", "layout_id"), CATALOG, DEFAULT, cal.PHYSICS_ECONOMICS, strict=False,
                   columns=("weight_bytes_per_gpu",))
    w = res["weight_bytes_per_gpu"][0]
    want = np.floor(cal.KV_FREE_MEMORY_FRAC * (hbm - w - cal.trtllm_reserved_bytes([8192], [False], [1], 8192)[0])
                    / kv_per_seq)
    assert want == 30
    assert cases.table["capacity_batch"][0] == pytest.approx(want, abs=1)
    assert np.floor((hbm * DEFAULT.usable_hbm_frac - w) / kv_per_seq) == 14  # the total-memory rule


def test_only_tensorrt_llm_measurements_use_the_free_memory_rule():
    """vLLM and SGLang keep the total-memory rule: their capacity is the engine's own max_batch_size."""
    meas = cal.load_measurements()
    cases = cal.cases_to_points(meas, CATALOG)
    t = cases.table.with_row_index("i")
    other = t.filter(~pl.col("engine_class").str.starts_with("tensorrt-llm"), pl.col("representable"),
                     pl.col("capacity_batch").is_finite())
    base = cases.points.filter(pl.col("case").is_in(other["i"].to_list()), pl.col("layout_id") == 0) \
        .unique("case", keep="first", maintain_order=True)
    plain = cal._capacity([r for r in base.drop("case", "layout_id", "batch_size").iter_rows(named=True)], CATALOG,
                          DEFAULT)
    assert other.height > 200
    np.testing.assert_array_equal(plain, other.filter(pl.col("i").is_in(base["case"].to_list()))["capacity_batch"])


def test_a_tensorrt_llm_prediction_runs_at_that_batch():
    """predict accepts the free-memory batch: the engine's own wall is lifted to the whole HBM for TensorRT-LLM
    classes (the case's batch is the pool), so the row is predicted, not infeasible."""
    meas = cal.load_measurements().filter(pl.col("case_id") == LLAMA70_TP1)
    cases = cal.cases_to_points(meas, CATALOG)
    assert cal._engine_assumptions(DEFAULT, "tensorrt-llm-cpp").usable_hbm_frac == 1.0
    assert cal._engine_assumptions(DEFAULT, "vllm-async").usable_hbm_frac == DEFAULT.usable_hbm_frac
    got = cal.predict(cases, CATALOG)["predicted"][0]
    assert np.isfinite(got) and got > 0
