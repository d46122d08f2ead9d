"""The width-independent share of a decode kernel's latency floor (econ.physics.performance.
KERNEL_WIDTH_INDEPENDENT_SHARE) recomputed from its source, NVIDIA's per-kernel GEMM tables for TensorRT-LLM
(AIConfigurator 0.12, data/kernels/gemm_efficiency.csv), and what it does to the floors of a narrow and a wide model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from econ.physics.performance import KERNEL_REFERENCE_WIDTH, KERNEL_WIDTH_INDEPENDENT_SHARE, kernel_width_factor
from econ.physics.precision import WEIGHT_FORMATS
from econ.tables.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
FORMATS = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block", "nvfp4": "nvfp4"}  # the tables' quant -> econ's


def _shares() -> dict[tuple[str, str], float]:
    """a0 / (a0 + a1) of latency - weight bytes / HBM bandwidth = a0 + a1 K / 4096 (least squares), per accelerator
    and weight format, over the TensorRT-LLM rows with m <= 4 tokens."""
    g = pl.read_csv(ROOT / "data" / "kernels" / "gemm_efficiency.csv").filter(
        pl.col("m") <= 4, pl.col("backend") == "trtllm", pl.col("accelerator_id") != "a100-80gb-sxm")
    catalog = load_catalog()
    out = {}
    for accelerator in g["accelerator_id"].unique(maintain_order=True):
        bw = catalog.accelerator(accelerator)["hbm_bandwidth_bytes_per_s"]  # datasheet (data/accelerators.csv)
        for quant, fmt in FORMATS.items():
            x = g.filter(pl.col("accelerator_id") == accelerator, pl.col("quant") == quant)
            if x.height < 5:
                continue
            k = x["k"].to_numpy().astype(float)
            y = x["latency_s"].to_numpy() - x["n"].to_numpy() * k * WEIGHT_FORMATS[fmt] / bw
            (a0, a1), *_ = np.linalg.lstsq(np.c_[np.ones_like(k), k / KERNEL_REFERENCE_WIDTH], y, rcond=None)
            out[accelerator, quant] = a0 / (a0 + a1)
    return out


def test_the_share_is_the_median_of_the_per_kernel_tables():
    shares = _shares()
    assert len(shares) == 22  # 6 accelerators x 4 formats, less NVFP4 on the two Hoppers
    assert all(0.3 < v < 0.9 for v in shares.values())  # every fit has both a fixed and a width-growing part
    assert KERNEL_WIDTH_INDEPENDENT_SHARE == pytest.approx(float(np.median(list(shares.values()))), abs=0.01)
    nvfp4 = [v for (_, q), v in shares.items() if q == "nvfp4"]
    assert 0.5 < min(nvfp4) and max(nvfp4) < 0.6  # the format of the batch-1 known answers on Blackwell


def test_floors_of_a_narrow_and_a_wide_model_differ_as_the_measured_operators_do():
    """gpt-oss-120b (d = 2,880) against DeepSeek-R1 (d = 7,168): per kernel 1.34 times (2.49 when the floor was
    proportional to d); NVIDIA's measured per-operator latencies at one token on B200 differ by 1.2 (decode attention,
    11 vs 13 us) to 2.3 (fused MoE, 19 vs 44 us) times (data/kernels/attention_efficiency.csv, moe_efficiency.csv)."""
    assert kernel_width_factor(KERNEL_REFERENCE_WIDTH) == 1.0
    ratio = kernel_width_factor(7168.0) / kernel_width_factor(2880.0)
    assert 1.2 < ratio < 2.3
    assert np.all(np.diff(kernel_width_factor(np.array([1024.0, 2880.0, 4096.0, 7168.0]))) > 0)
