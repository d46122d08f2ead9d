"""Serving-engine classes of the calibration (stop 27, issue 17.3): which measurements hide their host time under an
overlap scheduler, and the SLO grid either side of the CUDA-graph cap."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.analyses import calibration as cal
from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT
from econ.engine import evaluate
from econ.tables.catalog import load_catalog

CATALOG = load_catalog()
MEASUREMENTS = cal.load_measurements()


@pytest.mark.parametrize("row, expected", [
    (("mlperf-v5.0", "trtllm", "TensorRT 10.8, CUDA 12.8", "x"), "tensorrt-llm-cpp"),
    (("trtllm", "trtllm", "v0.17", "x"), "tensorrt-llm-cpp"),
    (("nim", "trtllm", "NIM 1.8.0 (TensorRT-LLM profile)", "x"), "tensorrt-llm-cpp"),
    (("trtllm", "trtllm", "release/1.2 perf-overview (trtllm-bench)", "x"), "tensorrt-llm-pytorch"),
    (("trtllm", "trtllm", "Best_perf_practice_on_DeepSeek-R1 guide (trtllm-bench)", "x"), "tensorrt-llm-pytorch"),
    (("aiconfigurator", None, None, "aic-llama-3.1-70b-b200-trtllm-fp4-agg-1024-1024-c4-tpot"), "tensorrt-llm-pytorch"),
    (("aiconfigurator", None, None, "aic-llama-3.1-70b-h100-sxm-vllm-fp8-agg-1024-1024-c4-tpot"), "vllm-async"),
    (("aiconfigurator", "sglang", "sglang 0.5.9 (AIConfigurator silicon sample)", "x"), "sglang"),
    (("aiconfigurator", "vllm", "vllm 0.12.0 (AIConfigurator silicon sample)", "x"), "vllm-sync"),
    (("aiconfigurator", "vllm", "vllm 0.15.1 (AIConfigurator silicon sample)", "x"), "vllm-async"),
    (("moreh", "vllm", "Moreh vLLM 0.11.0rc2.moreh20251212", "x"), "vllm-sync"),
    (("mlperf-v4.1", "vllm", "vLLM 0.4.3+rocm614, PyTorch 2.3.0, ROCm 6.1.0", "x"), "vllm-sync"),
    (("atom", "vllm", "vLLM 0.19 with the ATOM out-of-tree backend (ATOM nightly CI)", "x"), "vllm-async"),
    (("atom", "atom", "ROCm ATOM nightly CI", "x"), "unknown"),
    (("inferencex", None, None, "ix-gptoss"), "unknown"),
])
def test_engine_class_of_a_row(row, expected):
    assert cal.engine_class(*row) == expected


def test_every_included_measurement_has_an_engine_class_with_a_source():
    cases = cal.cases_to_points(MEASUREMENTS.head(40), CATALOG)
    assert set(cases.table["engine_class"].unique().to_list()) <= set(cal.ENGINE_OVERLAP_SCHEDULER)
    for cls in MEASUREMENTS.select("source_kind", "framework", "framework_version", "case_id").iter_rows():
        assert cal.engine_class(*cls) in cal.ENGINE_OVERLAP_SCHEDULER
    assert all(len(src) > 40 for _, src in cal.ENGINE_OVERLAP_SCHEDULER.values())


def test_an_engine_without_an_overlap_scheduler_is_predicted_with_its_host_time_added():
    """A TensorRT-LLM C++-runtime point (no overlap scheduler) is predicted at cpu_overlap_frac = 0, a PyTorch-executor
    point at the held 1 (ENGINE_CPU_OVERLAP_HELD); both equal a direct engine call with those assumptions."""
    m = MEASUREMENTS.filter(pl.col("metric") == "output_tokens_per_s_per_gpu", pl.col("scenario") == "throughput")
    cls = [cal.engine_class(*r) for r in m.select("source_kind", "framework", "framework_version", "case_id").iter_rows()]
    # rows predicted at one steady-state point (a trtllm-bench table's finite run adds a partial wave: test_finite_runs)
    finite = [not np.isnan(cal.bench_requests(*r)) for r in
              m.select("source_kind", "scenario", "source", "input_len", "output_len").iter_rows()]
    m = m.with_columns(pl.Series("cls", cls)).filter(~pl.Series(finite))
    pick = pl.concat([m.filter(pl.col("cls") == "tensorrt-llm-cpp").head(1),
                      m.filter(pl.col("cls") == "tensorrt-llm-pytorch").head(1)]).drop("cls")
    cases = cal.cases_to_points(pick, CATALOG)
    assert cases.table["engine_class"].to_list() == ["tensorrt-llm-cpp", "tensorrt-llm-pytorch"]
    got = cal.predict(cases, CATALOG)["predicted"].to_numpy()
    pts = cases.points.drop("case", "layout_id")
    # each as calibrate predicts it: its engine's assumptions, the measured deployments' EP imbalance (stop 31); a
    # TensorRT-LLM run's KV pool is sized by TensorRT-LLM's free-memory rule (stop 35; the engine's kv_memory_rule
    # "free" since stop 36)
    assert DEFAULT.with_overrides(cpu_overlap_frac=0.0, prefill_layer_dispatch_s=0.0, kv_memory_rule="free") == \
        cal._engine_assumptions(DEFAULT, "tensorrt-llm-cpp")
    for i, cls in enumerate(("tensorrt-llm-cpp", "tensorrt-llm-pytorch")):
        direct = evaluate(pts[i:i + 1], CATALOG, cal._engine_assumptions(DEFAULT, cls), cal.PHYSICS_ECONOMICS,
                          cal._measured_deployment(DEFAULT_DEPLOYMENT), strict=False,
                          columns=("served_output_tokens_per_s_per_gpu",))
        assert got[i] == pytest.approx(direct["served_output_tokens_per_s_per_gpu"][0], rel=1e-12)
    assert "cpu_overlap_frac" in DEFAULT.calibrated_fields


def test_the_slo_grid_holds_both_sides_of_the_cuda_graph_cap():
    g = cal._geometric_grid(2000, steps=(512.0,))
    assert 512 in g and 513 in g and g[0] == 1 and g[-1] == 2000 and np.all(np.diff(g) > 0)
    assert 512 not in cal._geometric_grid(400, steps=(512.0,))  # beyond the capacity: nothing added
    assert np.array_equal(cal._geometric_grid(300), cal._geometric_grid(300, steps=()))


def test_the_fitted_overlap_share_is_a_fraction_on_every_profile():
    cal_table = CATALOG.calibration
    f = cal_table["cpu_overlap_frac"].to_numpy()
    assert np.all((f >= 0.0) & (f <= 1.0))
    fitted = cal_table.filter(pl.col("fallback_from").is_null())
    assert (fitted["cpu_overlap_frac"] > 0.3).all()  # the engines with an overlap scheduler do hide host time


def test_a_users_zero_overlap_is_a_value_of_its_own_not_the_calibrated_default():
    """An engine without an overlap scheduler is cpu_overlap_frac = 0 in a scenario file or on the Assumptions page:
    it must pin 0, not read as "left at the default" (the scalar default is the shared fitted 0.67). gpt-oss-120b on
    8 x B200 TP8 at batch 1: 2.53 ms per token with the calibrated share (0.32 at the stop-31 refit; 2.10 ms at 0.66
    before), 2.98 ms with the host time added."""
    from econ.io.scenario import from_toml

    scenario, _ = from_toml('model = "gpt-oss-120b"\nhardware = "b200"\nprecision = "fp4"\ncpu_overlap_frac = 0.0\n',
                            CATALOG)
    pinned = scenario.assumptions()
    assert "cpu_overlap_frac" not in pinned.calibrated_fields and pinned.cpu_overlap_frac == 0.0
    row = pl.DataFrame([dict(model="gpt-oss-120b", hardware="b200", precision="fp4", batch_size=1, num_gpus=8, tp=8,
                             dp=1, ep=1, pp=1, spec_method="none")])
    cols = ("tpot_s",)
    hidden = evaluate(row, CATALOG, DEFAULT, columns=cols)["tpot_s"][0]
    added = evaluate(row, CATALOG, pinned, columns=cols)["tpot_s"][0]
    assert added > 1.15 * hidden
    assert DEFAULT.cpu_overlap_frac > 0.0  # so that 0 is never mistaken for the default


def test_engine_error_table_groups_the_held_out_errors_by_engine_and_inverts_times():
    """Two made-up cases per engine: a rate predicted 1.5x and a time predicted 0.5x are both 'faster than
    measured' (speed ratio 1.5 and 2.0), and the errors are those the error table counts."""
    preds = pl.DataFrame({
        "case_id": ["a", "b", "c", "d", "e"], "group_id": ["g1", "g1", "g2", "g3", "g3"],
        "moe": [True, True, False, True, True],
        "metric": ["output_tokens_per_s_per_gpu", "tpot_s", "ttft_s", "tpot_s", "tpot_s"],
        "predicted_over_measured": [1.5, 0.5, 2.0, 1.0, 1.0], "abs_error_frac": [0.5, 0.5, 1.0, 0.0, 0.0],
        "in_error_table": [True, True, True, True, False]})
    meas = pl.DataFrame({
        "case_id": ["a", "b", "c", "d", "e"], "source_kind": ["aiconfigurator", "aiconfigurator", "mlperf-v5.0",
                                                              "vllm", "vllm"],
        "framework": ["sglang", "sglang", "trtllm", None, None], "framework_version": [None, None, None, None, None]})
    t = cal.engine_error_table(preds, meas)
    rows = {(r["engine_class"], r["moe"]): r for r in t.iter_rows(named=True)}
    assert set(rows) == {("sglang", "moe"), ("tensorrt-llm-cpp", "dense"), ("unknown", "moe")}
    sg = rows[("sglang", "moe")]
    assert sg["n_cases"] == 2 and sg["n_groups"] == 1
    assert sg["median_abs_error_frac"] == pytest.approx(0.5)
    assert sg["median_speed_ratio"] == pytest.approx(np.sqrt(1.5 * 2.0))  # geometric median of 1.5 and 2.0
    assert rows[("tensorrt-llm-cpp", "dense")]["median_speed_ratio"] == pytest.approx(0.5)  # TTFT 2x: slower
    assert rows[("unknown", "moe")]["n_cases"] == 1  # the case outside the error table is not counted
    assert t["engine_class"].to_list() == ["tensorrt-llm-cpp", "sglang", "unknown"]  # ENGINE_TITLES order


def test_engine_error_table_of_the_shipped_predictions_counts_every_case_of_the_error_table():
    from econ.tables.catalog import load_calibration_errors, load_calibration_predictions
    t = cal.engine_error_table(load_calibration_predictions(), cal.load_measurements())
    every = load_calibration_errors().filter(pl.col("by") == "all").row(0, named=True)
    assert int(t["n_cases"].sum()) == every["n_cases"]
    assert list(cal.ENGINE_TITLES) == list(cal.ENGINE_OVERLAP_SCHEDULER)
    assert set(t["engine_class"].to_list()) <= set(cal.ENGINE_TITLES)
    assert ((t["median_speed_ratio"] > 0) & t["median_speed_ratio"].is_finite()).all()
