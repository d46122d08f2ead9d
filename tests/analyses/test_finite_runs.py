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
from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT
from econ.engine import evaluate
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()
V1_0 = "NVIDIA/TensorRT-LLM:docs/source/performance/perf-overview.md (commit 00f3768, v1.0-era; 'Total Output ...')"
V1_2 = "NVIDIA/TensorRT-LLM:docs/source/developer-guide/perf-overview.md (release/1.2 version: ...)"
V1_1 = "NVIDIA/TensorRT-LLM:docs/source/developer-guide/perf-overview.md@03e27c7d5ff0c6e89f8328838c0a8e64f1b34f9d"
V0_17 = "NVIDIA/TensorRT-LLM:docs/source/performance/perf-overview.md (commit 258c754, data from v0.17)"
QWEN_2K = "trtllm-qwen3-235b-a22b-h200-fp8-2048-2048-v1.0"
QWEN_20K = "trtllm-qwen3-235b-a22b-h200-fp8-20000-2000-v1.0"
QWEN_H100_500 = "trtllm-qwen3-235b-a22b-h100-fp8-500-2000-v1.0"


@pytest.fixture(scope="module")
def cases():
    meas = cal.load_measurements().filter(pl.col("case_id").is_in([QWEN_2K, QWEN_20K, QWEN_H100_500]))
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
    # whole waves (N a multiple of B), or one wave at batch N (N <= B): the rate of the batch evaluated
    assert cal.finite_run_throughput(2000, 1000, 500.0, 123.0, 1) == 500.0
    assert cal.finite_run_throughput(800, 800, 410.0, float("nan"), 0) == 410.0
    # 1.5 waves, separate (prompts quick beside decode): the half wave alone at its own 300 tokens/s per GPU
    assert cal.finite_run_throughput(1500, 1000, 500.0, 300.0, 500, sync=1.0) == pytest.approx(1500 / (2.0 + 500 / 300))
    # ... a steady flow (prompts as long as decode): the last 500 fill slots as they free, at the full rate
    assert cal.finite_run_throughput(1500, 1000, 500.0, 300.0, 500, sync=0.0) == pytest.approx(500.0)
    # in between, in between; never above the full rate when the rate rises with the batch
    half = cal.finite_run_throughput(1500, 1000, 500.0, 300.0, 500, sync=0.5)
    assert 1500 / (2.0 + 500 / 300) < half < 500.0
    # a last wave below the attention groups runs at the groups' batch: its time is that batch's
    assert cal.finite_run_throughput(1010, 1000, 500.0, 50.0, 8) == pytest.approx(1010 / (2.0 + 8 / 50.0))


@pytest.mark.parametrize("requests, capacity", [(0, 100), (100, 0), (float("nan"), 100)])
def test_a_run_without_requests_or_capacity_is_refused(requests, capacity):
    with pytest.raises(ValueError, match="must both be >= 1"):
        cal.finite_run_throughput(requests, capacity, 1.0, 1.0, 1)


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
    pts = cases.points.filter(pl.col("case") == i)  # in the order predict reads them: the full wave first
    assert pts["layout_id"].to_list() == [0, 1]
    assert pts["batch_size"].to_list() == [cap, max(n - (n // cap) * cap, int(pts["dp"][0]))]


@pytest.mark.parametrize("case_id, separate", [(QWEN_H100_500, True), (QWEN_20K, False)])
def test_the_prediction_combines_the_two_waves(cases, case_id, separate):
    """End to end: a case with a partial last wave is the full waves' and the last wave's engine rates combined, with
    the synchronisation of its prompts (1 - prefill_stall_s / tpot_s at the full batch). Qwen3-235B on 8 H100 at 500 /
    2,000 (3,000 requests: two full waves of ~1,380 and a sixth of one; prompts quick beside decode) runs its last wave
    apart and loses throughput; Qwen3-235B at 20,000 / 2,000 (prompts longer than decode) flows steadily: the full
    wave's rate."""
    i = cases.table["case_id"].to_list().index(case_id)
    n = int(cases.table["bench_requests"][i])
    pts = cases.points.filter(pl.col("case") == i)
    assert pts["layout_id"].to_list() == [0, 1]
    engine = cases.table["engine_class"][i]
    res = evaluate(pts.drop("case", "layout_id"), CATALOG, cal._engine_assumptions(DEFAULT, engine),
                   cal.PHYSICS_ECONOMICS, cal._measured_deployment(DEFAULT_DEPLOYMENT), strict=False,
                   columns=("served_output_tokens_per_s_per_gpu", "prefill_stall_s", "tpot_s"))
    full, rest = res["served_output_tokens_per_s_per_gpu"].to_list()
    sync = 1.0 - res["prefill_stall_s"][0] / res["tpot_s"][0]
    want = cal.finite_run_throughput(n, pts["batch_size"][0], full, rest, pts["batch_size"][1], sync)
    got = cal.predict(cases, CATALOG)["predicted"][i]
    assert got == pytest.approx(want, rel=1e-12)
    assert rest < full
    if separate:
        assert sync > 0.5 and got < 0.95 * full  # the last wave runs alone at its small batch
    else:
        assert sync <= 0.0 and got == pytest.approx(full, rel=1e-12)


def test_every_trtllm_bench_row_has_its_dataset_size():
    """All 278 throughput rows of the perf-overview tables (v0.17 31, v1.0 133, v1.1 21, release/1.2 93) find their
    (ISL, OSL) in their doc's table; the other TensorRT-LLM throughput rows (v0.6.1's static batches, the DeepSeek-R1
    guide's runs) are not read as finite runs."""
    m = cal.load_measurements().filter(pl.col("source_kind") == "trtllm", pl.col("scenario") == "throughput")
    n = np.array([cal.bench_requests(*r) for r in
                  m.select("source_kind", "scenario", "source", "input_len", "output_len").iter_rows()])
    perf = m["source"].str.contains("perf-overview.md").to_numpy()
    assert perf.sum() == 278 and np.isfinite(n[perf]).all()
    assert (~perf).sum() == 11 and np.isnan(n[~perf]).all()
