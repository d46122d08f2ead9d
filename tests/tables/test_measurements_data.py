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
WEIGHT_FORMATS = {"bf16", "fp8", "int4", "mxfp4", "nvfp4", "fp8_block"}
GENERATIONS = {"ampere", "hopper", "blackwell", "ada", "cdna3", "cdna4", "tpu", "gaudi", "trainium"}
NUMERIC = ["num_gpus", "nodes", "tp", "pp", "ep", "dp", "input_len", "output_len", "ttft_limit_s",
           "tpot_limit_s", "latency_percentile", "tokens_per_s_per_user_target", "value", "system_value",
           "output_tokens_per_s_per_gpu", "samples_per_s", "measured_mean_ttft_s", "measured_mean_tpot_s",
           "measured_p99_tpot_s", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances",
           "decode_instances"]
SOURCES = REPO / "data" / "measurement_sources"
NEW_KINDS = {"atom", "aiconfigurator", "moreh"}

RESERVED = [  # (regex on the source column, what it is): reserved for independent evaluation (issue 17)
    (r"inference_results_v(5\.[1-9]|[6-9])", "MLPerf Inference rounds after v5.0"),
    (r"mlperf[ _-]*(inference[ _-]*)?v?(5\.[1-9]|[6-9]\.[0-9])", "MLPerf Inference rounds after v5.0"),
    (r"inference(x|max)[^;]*v2", "SemiAnalysis InferenceX v2 blog"),
    (r"cost[- _]per[- _](million[- _])?tokens?", "NVIDIA GB300-vs-H200 cost-per-token blog"),
    (r"lmsys\.org", "LMSYS blog"),
    (r"sglang\.ai/blog|sgl-project\.github\.io", "SGLang blog"),
    (r"blog\.vllm\.ai|vllm\.ai/blog|vllm-project\.github\.io", "vLLM blog"),
    (r"gpustack", "gpustack performance lab"),
    (r"ml\.energy|ml-energy", "ML.ENERGY"),
    (r"baseten", "Baseten blog"),
    (r"blogs\.oracle\.com", "Oracle MI300X blog"),
    (r"day[_ -]?6|one_more_thing|open-infra-index", "DeepSeek day-6 disclosure (known-answer test only)"),
]


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


def test_every_row_has_source_and_as_of(df):
    assert df["source"].null_count() == 0 and (df["source"].str.strip_chars() != "").all()
    assert df["as_of"].null_count() == 0
    assert df["as_of"].str.contains(r"^~?[0-9]{4}(-[0-9]{2}){0,2}$").all()


def test_no_row_cites_a_reserved_source(df):
    for pattern, what in RESERVED:
        hits = df.filter(pl.col("source").str.contains("(?i)" + pattern))
        assert hits.height == 0, f"{what}: {hits['case_id'].to_list()[:5]}"
    # SemiAnalysis InferenceX DeepSeek-R1 results are reserved (its gpt-oss / Llama points are not)
    ix = df.filter(pl.col("source").str.contains("(?i)inference(x|max)|semianalysis"),
                   pl.col("model").str.contains("deepseek"))
    assert ix.height == 0, ix["case_id"].to_list()[:5]


def test_source_table_rows_are_sourced_and_in_the_catalog(df):
    new = df.filter(pl.col("source").str.contains("measurement_sources/"))
    table = pl.read_csv(SOURCES / "moe_2026.csv", infer_schema_length=0)
    assert new.height == table.height > 400
    assert set(new["source_kind"].to_list()) >= NEW_KINDS
    cat = load_catalog()
    assert set(new["model"].to_list()) <= set(cat.models["id"].to_list())  # excluded rows too
    assert set(new["hardware"].to_list()) <= set(cat.accelerators["id"].to_list())
    for c in ("source", "as_of"):
        assert table[c].null_count() == 0 and (table[c].str.strip_chars() != "").all(), c
    assert (new["source"] == new["source"].str.extract(r"^(.*); data/measurement_sources/moe_2026\.csv$") +
            "; data/measurement_sources/moe_2026.csv").all()
    inc = new.filter(pl.col("include") == "true")
    assert inc.height > 300 and inc["precision"].null_count() == 0 and inc["tp"].null_count() == 0


def test_source_table_known_answers(df):
    def row(cid):
        r = df.filter(pl.col("case_id") == cid)
        assert r.height == 1, cid
        return r.row(0, named=True)

    # TensorRT-LLM release/1.2: DeepSeek-R1 on 4 B200, DEP4 = attention DP4 + EP4, 5757 output tok/s per GPU
    r = row("trt12-deepseek-r1-b200-dep4-fp4-1024-1024")
    assert (r["tp"], r["dp"], r["ep"], r["value"], r["scenario"]) == (1, 4, 4, 5757, "throughput")
    assert (r["precision"], r["weight_format"], r["kv_precision"]) == ("fp4", "nvfp4", "fp8")
    # AIConfigurator wide-EP decode on GB300: 4 prefill (DP4 EP4) + 1 decode (DP32 EP32), 128 per rank
    r = row("aic-deepseek-r1-gb300-nvl72-sglang-fp4-disagg-1024-1024-c4096-wide-tpot")
    assert r["disaggregated"] == "true" and (r["tp"], r["dp"], r["ep"]) == (1, 32, 32)
    assert (r["prefill_dp"], r["prefill_ep"], r["prefill_instances"], r["decode_instances"]) == (4, 4, 4, 1)
    assert r["concurrency_or_batch"] == "4096" and r["value"] == pytest.approx(0.02104)
    # its derived per-decode-GPU restatement is kept but excluded
    r = row("aic-deepseek-r1-gb300-nvl72-sglang-fp4-disagg-1024-1024-c4096-wide-decgpu")
    assert r["include"] == "false" and "restatement" in r["exclude_reason"]
    # ATOM CI on MI355X: lengths drawn in [0.8 L, L] -> mean 0.9 L; 5640.31 tok/s over 4 GPUs
    r = row("atomci-dsr1-mi355x-tp4-mxfp4-c256-1024-1024-outgpu")
    assert r["input_len"] == pytest.approx(921.6) and r["value"] == pytest.approx(5640.31 / 4, abs=0.01)
    # doubted hardware label (ATOM DeepSeek-R1 recipe "8x MI300X"): kept, excluded with the reason
    r = row("atom-recipe-dsr1-mi300x-tp8-fp8-c128-1k1k-tpot")
    assert r["include"] == "false" and "hardware label possibly stale" in r["exclude_reason"]
    # Kimi-K2-Thinking rows map to their own catalog id; native INT4 runs are W4A16 (bf16 matmuls)
    assert row("atomci-kimik2t-mi355x-tp4-vllm-atom-c4-1024-1024-tpot")["model"] == "kimi-k2-thinking"
    r = row("aic-kimi-k2.5-h200-sxm-vllm-int4-agg-1024-1024-c4-tpot")
    assert (r["precision"], r["weight_format"]) == ("bf16", "int4")
    # MTP rows say so (their acceptance is not published)
    assert row("trtbp-dsr1-b200-tp8ep2-mtp3-bs1-1k2k-tpsuser")["speculative_decoding"] == "mtp"
    # H200 NVL is in the catalog: HPE's MLPerf v5.0 Mixtral runs are TP1 FP8 (Hopper base config)
    r = row("mlperf-v5.0-closed-hpe-hpe-proliant-dl380a-h200-nvl-141gbx8-trt-mixtral-8x7b-server")
    assert (r["hardware"], r["include"], r["tp"], r["precision"]) == ("h200-nvl", "true", 1, "fp8")
    # FP8 scaling as the source states it: AIConfigurator's 'moe fp8_block' and a block release are fp8_block,
    # its 'moe fp8' per-tensor; NVIDIA's ModelOpt Qwen3 FP8 is per-tensor
    assert row("aic-deepseek-r1-h200-sxm-sglang-fp8-agg-1024-1024-c4-tpot")["weight_format"] in ("fp8", "fp8_block")
    block = df.filter(pl.col("precision_basis").str.contains("moe fp8_block"))
    assert block.height >= 40 and set(block["weight_format"]) == {"fp8_block"}
    per_tensor = df.filter(pl.col("precision_basis").str.contains("moe fp8)", literal=True))
    assert per_tensor.height >= 30 and set(per_tensor["weight_format"]) == {"fp8"}
    assert row("trt12-qwen3-235b-a22b-h200-sxm-dep4-fp8-1024-1024")["weight_format"] == "fp8"
    assert set(df.filter(pl.col("model").is_in(["deepseek-r1", "kimi-k2"]) & (pl.col("precision") == "fp8")
                         & ~pl.col("precision_basis").str.contains("moe fp8\\)"))["weight_format"]) == {"fp8_block"}
    # gpt-oss on Hopper in TensorRT-LLM's tables: BF16 activations x MXFP4 experts (TRITON MoE backend), KV auto = bf16
    for cid in ("trt11-gpt-oss-120b-h100-sxm-dep4-fp8-1024-1024", "trt12-gpt-oss-20b-h200-sxm-tp1-fp8-1024-1024"):
        r = row(cid)
        assert (r["precision"], r["weight_format"], r["kv_precision"]) == ("bf16", "mxfp4", "bf16"), cid
        assert "TRITON" in r["precision_basis"]


def test_builder_refuses_a_reserved_source(tmp_path):
    builder = _load_builder()
    table = pl.read_csv(SOURCES / "moe_2026.csv", infer_schema_length=0).head(1)
    bad = table.with_columns(pl.lit("https://lmsys.org/blog/2025-05-05-large-scale-ep/").alias("source"))
    bad.write_csv(tmp_path / "moe_2026.csv")
    with pytest.raises(ValueError, match="reserved source"):
        builder.moe_rows(tmp_path)
    assert builder.reserved_source("vllm-project/vllm-project.github.io:_posts/2026-02-03-dsr1-gb200-part1.md")
    assert builder.reserved_source("https://inferencex.semianalysis.com/compare/x", "deepseek-r1")
    assert not builder.reserved_source("https://inferencex.semianalysis.com/compare/x", "gpt-oss-120b")
    assert not builder.reserved_source("vllm-project/recipes:DeepSeek/DeepSeek-V3_2.md@8959cf6")
