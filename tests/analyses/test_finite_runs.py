"""A trtllm-bench throughput table is a finite run (stop 34): its dataset of N identical requests is queued at once,
so the batch never exceeds N, and a dataset larger than the KV-cache capacity B ends in a partial wave.

Sources: the ``$num_requests`` / 'Number of Requests' tables of NVIDIA/TensorRT-LLM's perf-overview docs (v0.17
@258c754, v1.0 @00f3768, v1.1 @03e27c7d, release/1.2), quoted in ``econ.analyses.calibration.BENCH_REQUESTS``.
Known answer: Qwen3-235B-A22B FP8 on 8 H200 (attention DP 8, EP 8), 2,048 in / 2,048 out, TensorRT-LLM v1.0:
2,084 output tokens/s per GPU measured on a 1,500-request dataset, below the KV capacity (~2,000 sequences).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from econ.analyses import calibration as cal
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()
V1_0 = "NVIDIA/TensorRT-LLM:docs/source/performance/perf-overview.md (commit 00f3768, v1.0-era; 'Total Output ...')"
V1_2 = "NVIDIA/TensorRT-LLM:docs/source/developer-guide/perf-overview.md (release/1.2 version: ...)"
V1_1 = "NVIDIA/TensorRT-LLM:docs/source/developer-guide/perf-overview.md@03e27c7d5ff0c6e89f8328838c0a8e64f1b34f9d"
V0_17 = "NVIDIA/TensorRT-LLM:docs/source/performance/perf-overview.md (commit 258c754, data from v0.17)"
QWEN_2K = "trtllm-qwen3-235b-a22b-h200-fp8-2048-2048-v1.0"
QWEN_20K = "trtllm-qwen3-235b-a22b-h200-fp8-20000-2000-v1.0"


@pytest.fixture(scope="module")
def cases():
    meas = cal.load_measurements().filter(pl.col("case_id").is_in([QWEN_2K, QWEN_20K]))
    return cal.cases_to_points(meas, CATALOG)


@pytest.mark.parametrize("source, isl, osl, n", [
    (V1_0, 2048, 2048, 1500), (V1_0, 1000, 2000, 1500), (V1_0, 128, 128, 30000), (V0_17, 20000, 2000, 1000),
    (V1_1, 1024, 8192, 1500), (V1_2, 1024, 1024, 3000), (V1_2, 32768, 1024, 1000),
])
def test_each_table_states_its_dataset_size(source, isl, osl, n):
    assert cal.bench_requests("trtllm", "throughput", source, isl, osl) == n


@pytest.mark.parametrize("kind, scenario, source, isl, osl", [
    ("trtllm", "throughput", V0_17, 1000, 2000),  # v0.17's table has no 1000/2000 row
    ("trtllm", "throughput", V1_1, 1000, 1000),  # nor v1.1's a 1000/1000 one
    ("trtllm", "latency", V1_0, 2048, 2048),  # a latency row is not a finite throughput run
    ("mlperf-v5.0", "throughput", V1_0, 2048, 2048),
    ("trtllm", "throughput", "NVIDIA/TensorRT-LLM:docs/source/blogs/tech_blog/blog1...", 1024, 2048),
])
def test_other_rows_run_at_the_steady_state(kind, scenario, source, isl, osl):
    assert math.isnan(cal.bench_requests(kind, scenario, source, isl, osl))


def test_a_finite_run_is_waves_of_the_capacity_and_a_partial_last_one():
    # two full waves: the steady state's rate
    assert cal.finite_run_throughput(2000, 1000, 500.0, 123.0, 0) == pytest.approx(500.0)
    # 1.5 waves, the half wave at 300 tokens/s per GPU: 1500 / (1000 / 500 + 500 / 300)
    assert cal.finite_run_throughput(1500, 1000, 500.0, 300.0, 500) == pytest.approx(1500 / (2.0 + 500 / 300))
    # a partial wave never beats its full-wave rate when the rate rises with the batch
    assert cal.finite_run_throughput(1500, 1000, 500.0, 300.0, 500) < 500.0


def test_a_dataset_below_the_capacity_caps_the_batch(cases):
    t = cases.table.filter(pl.col("case_id") == QWEN_2K).row(0, named=True)
    assert t["bench_requests"] == 1500 and t["capacity_batch"] > 1500
    i = cases.table["case_id"].to_list().index(QWEN_2K)
    pts = cases.points.filter(pl.col("case") == i)
    assert pts.height == 1 and pts["batch_size"][0] == 1500


def test_a_dataset_above_the_capacity_adds_its_partial_wave(cases):
    t = cases.table.filter(pl.col("case_id") == QWEN_20K).row(0, named=True)
    cap, n = int(t["capacity_batch"]), int(t["bench_requests"])
    assert n == 1000 and cap < n
    i = cases.table["case_id"].to_list().index(QWEN_20K)
    pts = cases.points.filter(pl.col("case") == i).sort("layout_id")
    assert pts["layout_id"].to_list() == [0, 1]
    assert pts["batch_size"].to_list() == [cap, max(n - (n // cap) * cap, int(pts["dp"][0]))]


def test_the_finite_run_brings_the_published_figure_closer(cases):
    """Known answer: 2,084 output tokens/s per GPU (TensorRT-LLM v1.0 perf-overview, Qwen3-235B FP8 on 8 H200,
    2,048 / 2,048, 1,500 requests). The same engine at the KV-capacity batch (the steady state assumed before stop
    34) predicts more than the finite run, which is within 25% of the measured."""
    pred = cal.predict(cases, CATALOG)
    i = cases.table["case_id"].to_list().index(QWEN_2K)
    finite = pred["predicted"][i]
    steady = cases.subset(np.arange(cases.table.height) == i)
    cap = int(steady.table["capacity_batch"][0])
    steady = cal.Cases(steady.table.with_columns(pl.lit(float("nan")).alias("bench_requests")),
                       steady.points.with_columns(pl.lit(cap).cast(pl.Int64).alias("batch_size")))
    at_capacity = cal.predict(steady, CATALOG)["predicted"][0]
    measured = cases.table["measured"][i]
    assert measured == pytest.approx(2084.0)
    assert finite < at_capacity
    assert abs(finite / measured - 1) < abs(at_capacity / measured - 1)
    assert finite / measured == pytest.approx(1.0, abs=0.25)
