"""data/measurements.csv: the public measurements econ is calibrated and validated on.

Checks the committed table against the catalog and its own rules, and that
scripts/build_measurements.py rebuilds it byte for byte from ../shared/reference.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

from econ.tables.catalog import load_catalog

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "data" / "measurements.csv"
REFERENCE = REPO.parent / "shared" / "reference"

SCENARIOS = {"offline", "server", "interactive", "latency", "throughput", "fixed-concurrency"}
PRECISIONS = {"bf16", "fp8", "fp4"}
WEIGHT_FORMATS = {"bf16", "fp8", "int4", "mxfp4", "nvfp4"}
GENERATIONS = {"ampere", "hopper", "blackwell", "ada", "cdna3", "cdna4", "tpu", "gaudi", "trainium"}
NUMERIC = ["num_gpus", "nodes", "tp", "pp", "ep", "dp", "input_len", "output_len", "ttft_limit_s",
           "tpot_limit_s", "latency_percentile", "tokens_per_s_per_user_target", "value", "system_value",
           "output_tokens_per_s_per_gpu", "samples_per_s", "measured_mean_ttft_s", "measured_mean_tpot_s",
           "measured_p99_tpot_s"]


@pytest.fixture(scope="module")
def df() -> pl.DataFrame:
    table = pl.read_csv(TABLE, infer_schema_length=0)
    return table.with_columns([pl.col(c).cast(pl.Float64) for c in NUMERIC])


@pytest.fixture(scope="module")
def included(df) -> pl.DataFrame:
    return df.filter(pl.col("include") == "true")


def _load_builder():
    spec = importlib.util.spec_from_file_location("build_measurements", REPO / "scripts" / "build_measurements.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_columns_match_the_builder(df):
    assert df.columns == _load_builder().COLUMNS


def test_case_ids_unique_and_groups_present(df):
    assert df["case_id"].n_unique() == df.height
    assert df["group_id"].null_count() == 0
    assert (df["group_id"].str.count_matches(r"\|") == 1).all()


def test_include_flag_and_reasons(df):
    assert set(df["include"].unique()) == {"true", "false"}
    excluded = df.filter(pl.col("include") == "false")
    assert excluded["exclude_reason"].null_count() == 0
    assert df.filter(pl.col("include") == "true")["exclude_reason"].null_count() == df.filter(
        pl.col("include") == "true").height


def test_included_ids_exist_in_catalog(included):
    cat = load_catalog()
    models = set(cat.models["id"].to_list())
    hardware = set(cat.accelerators["id"].to_list())
    assert set(included["model"].to_list()) <= models
    assert set(included["hardware"].to_list()) <= hardware
    assert (included["group_id"] == included["model"] + "|" + included["hardware"]).all()


def test_vocabularies(df, included):
    assert set(df["scenario"].drop_nulls().to_list()) <= SCENARIOS
    assert set(df["hardware_generation"].drop_nulls().to_list()) <= GENERATIONS
    assert set(df["precision"].drop_nulls().to_list()) <= PRECISIONS
    assert set(df["weight_format"].drop_nulls().to_list()) <= WEIGHT_FORMATS
    assert set(df["kv_precision"].drop_nulls().to_list()) <= {"bf16", "fp8"}
    assert included["precision"].null_count() == 0, "an included row needs its matmul precision"
    assert included["hardware_generation"].null_count() == 0


def test_values_positive_and_finite(df):
    for c in NUMERIC:
        col = df[c].drop_nulls()
        assert col.is_finite().all(), c
        assert (col > 0).all(), c
    assert df["value"].null_count() == 0


def test_latency_limits_only_on_server_rows(df):
    limited = df["scenario"].is_in(["server", "interactive"]) & df["source_kind"].str.starts_with("mlperf")
    for c in ("ttft_limit_s", "tpot_limit_s", "latency_percentile"):
        assert df.filter(limited)[c].null_count() == 0, c
        assert df.filter(~limited)[c].null_count() == df.filter(~limited).height, c
    assert (df.filter(limited)["latency_percentile"] == 99).all()
    srv = df.filter(limited)
    # MLPerf limits (loadgen mlperf.conf): interactive 450 ms / 40 ms, others 2-6 s / 175-200 ms
    inter = srv.filter(pl.col("scenario") == "interactive")
    assert (inter["ttft_limit_s"] == 0.45).all() and (inter["tpot_limit_s"] == 0.04).all()
    # a valid server run's p99 TPOT is within its limit
    p99 = srv.filter(pl.col("measured_p99_tpot_s").is_not_null())
    assert (p99["measured_p99_tpot_s"] <= p99["tpot_limit_s"] * 1.0001).all()


def test_per_gpu_normalization(df):
    sysrows = df.filter(pl.col("system_metric") == "output_tokens_per_s_system")
    per_gpu = sysrows["system_value"] / sysrows["num_gpus"]
    rel = ((sysrows["output_tokens_per_s_per_gpu"] - per_gpu).abs() / per_gpu)
    assert (rel < 1e-3).all()


def test_mlperf_known_answers(df):
    # MLPerf v4.1 AMD 8x MI300X llama2-70b-99 Offline: 23514.8 output tok/s for 8 GPUs
    row = df.filter(pl.col("case_id") == "mlperf-v4.1-closed-amd-8xmi300x-2xepyc-9374f-llama2-70b-99-offline")
    assert row.height == 1
    assert row["value"][0] == pytest.approx(23514.8 / 8, rel=1e-4)
    assert row["tp"][0] == 1 and row["dp"][0] == 8 and row["precision"][0] == "fp8"
    # GB200 NVL72 405B: 72 GPUs, TP2 PP2 -> 18 data-parallel copies
    gb = df.filter(pl.col("hardware") == "gb200-nvl72", pl.col("source_kind") == "mlperf-v5.0")
    assert gb.height == 2 and (gb["num_gpus"] == 72).all() and (gb["dp"] == 18).all()
    # MLPerf llama2-70b realized output length ~292 tokens/sample (reference README)
    l2 = df.filter(pl.col("benchmark").str.starts_with("llama2-70b"), pl.col("division") == "closed")
    assert 265 < l2["output_len"].median() < 300


def test_dedup_twins_excluded(df):
    twins = df.filter(pl.col("exclude_reason").str.contains("dedup-twin"))
    assert twins.height > 100
    kept = df.filter(pl.col("include") == "true", pl.col("source_kind").str.starts_with("mlperf"))
    key = ["source_kind", "source_case_id"]
    assert kept.select(key).n_unique() == kept.height
    # no two included MLPerf rows of one system and scenario share the same throughput
    k = kept.with_columns(pl.col("source_case_id").str.replace(r"/[^/]+/(Offline|Server|offline|server)/.*$", "")
                          .alias("sys"))
    assert k.select("sys", "scenario", "system_value").n_unique() == k.height


def test_validation_cases_are_covered(df):
    vc = pl.read_csv(REPO / "data" / "validation_cases.csv", infer_schema_length=0)
    linked = df.filter(pl.col("validation_case_id").is_not_null())
    assert sorted(linked["validation_case_id"].to_list()) == sorted(vc["case_id"].to_list())


def test_no_reserved_mlperf_rounds(df):
    kinds = set(df["source_kind"].to_list())
    assert not {k for k in kinds if k.startswith("mlperf")} - {"mlperf-v4.0", "mlperf-v4.1", "mlperf-v5.0"}
    assert not df["source"].str.contains(r"inference_results_v(5\.[1-9]|[6-9])").any()


@pytest.mark.skipif(not (REFERENCE / "validation_public.csv").is_file(),
                    reason="../shared/reference is not beside this checkout")
def test_build_script_reproduces_committed_file():
    text = _load_builder().build(REFERENCE, REPO / "data" / "validation_cases.csv")
    assert text.encode("utf-8") == TABLE.read_bytes(), "rerun: python scripts/build_measurements.py"


def test_readme_counts_match_the_table(df, included):
    readme = (REPO / "data" / "README.md").read_text(encoding="utf-8")
    assert f"{df.height} rows, {included.height} with `include = true`" in readme
    assert f"in {included['group_id'].n_unique()} model x hardware groups" in readme
