#!/usr/bin/env python3
"""Build data/measurements.csv: one sourced row per public performance measurement econ can predict.

Inputs (read only):

* ``../shared/reference/validation_public.csv`` (TensorRT-LLM tables, NIM tables, InferenceX points,
  vLLM and NVIDIA blog figures, MLPerf v4.1 rows),
* ``../shared/reference/mlperf_v4.0_llm.csv``, ``mlperf_v4.1_llm.csv``, ``mlperf_v5.0_llm.csv`` and the
  ``*_provenance.csv`` sidecars (MLPerf Inference submission logs),
* ``data/validation_cases.csv`` (the cases the current calibration uses; its rows not in
  validation_public.csv were read directly from their upstream source, which each row names),
* ``data/measurement_sources/moe_2026.csv`` (issue 17: sourced MoE serving measurements of 2025-2026, with the
  columns of validation_public.csv; rules in :func:`moe_rows`).

Sources reserved for independent evaluation (MLPerf rounds after v5.0, SemiAnalysis InferenceX DeepSeek-R1 results
and its v2 blog, NVIDIA's GB300-vs-H200 cost-per-token blog, LMSYS/SGLang and vLLM blog posts, gpustack, ML.ENERGY,
Baseten, Oracle's MI300X blog; DeepSeek's day-6 disclosure, a known-answer test) are never read here:
:data:`RESERVED_SOURCES`.

Output: ``data/measurements.csv``; same inputs give a byte-identical file (rows sorted by
``source_kind`` then ``case_id``, numbers formatted by fixed rules, ``\\n`` line ends).

Usage::

    python scripts/build_measurements.py [--reference-dir DIR] [--sources-dir DIR] [--out PATH]

Layouts (tp/pp) and precisions of MLPerf runs come from the submitters' harness configs, read from
stored copies of the public results repositories; each such fact is listed in ``MLPERF_SOURCES``
below with the file and commit it was read from, and every row's ``layout_basis`` /
``precision_basis`` says whether the value is *stated* for that system or *inferred* (and from what).
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = REPO.parent / "shared" / "reference"
DEFAULT_OUT = REPO / "data" / "measurements.csv"

COLUMNS = [
    "case_id", "group_id", "source_kind", "source_case_id",
    "model", "model_upstream", "hardware", "hardware_upstream", "hardware_generation",
    "num_gpus", "nodes", "tp", "pp", "ep", "dp", "layout_basis",
    "disaggregated", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances", "decode_instances",
    "precision", "weight_format", "kv_precision", "precision_basis",
    "framework", "framework_version", "speculative_decoding",
    "scenario", "benchmark", "input_len", "input_len_basis", "output_len", "output_len_basis",
    "concurrency_or_batch", "ttft_limit_s", "tpot_limit_s", "latency_percentile",
    "tokens_per_s_per_user_target",
    "metric", "value", "system_metric", "system_value", "output_tokens_per_s_per_gpu",
    "samples_per_s", "measured_mean_ttft_s", "measured_mean_tpot_s", "measured_p99_tpot_s",
    "division", "status", "include", "exclude_reason",
    "validation_case_id", "in_validation_fit",
    "source", "source_commit", "as_of", "notes",
]

# ---------------------------------------------------------------------------------------------
# Catalog mappings
# ---------------------------------------------------------------------------------------------

GENERATION = {
    "a100-80gb-sxm": "ampere", "h100-sxm": "hopper", "h100-pcie": "hopper", "h800-sxm": "hopper",
    "h200-sxm": "hopper", "h20": "hopper", "b200": "blackwell", "b300": "blackwell",
    "gb200-nvl72": "blackwell", "gb300-nvl72": "blackwell", "l40s": "ada", "mi300x": "cdna3",
    "mi325x": "cdna3", "mi355x": "cdna4", "tpu-v5e": "tpu", "tpu-v5p": "tpu", "tpu-v6e": "tpu",
    "tpu7x-ironwood": "tpu", "gaudi3": "gaudi", "trainium2": "trainium", "h200-nvl": "hopper",
    "h100-sxm-4gpu": "hopper",
}

# MLPerf systems-JSON accelerator name -> (catalog id or None, short key, generation, label)
MLPERF_ACCEL = {
    "NVIDIA H100-SXM-80GB": ("h100-sxm", "h100-sxm", "hopper", None),
    "H100-SXM-80GB": ("h100-sxm", "h100-sxm", "hopper", None),
    "Virtualized NVIDIA H100-SXM-80GB": ("h100-sxm", "h100-sxm", "hopper", None),
    "NVIDIA H100-PCIe-80GB": ("h100-pcie", "h100-pcie", "hopper", None),
    "NVIDIA H100 NVL": (None, "h100-nvl", "hopper", "H100 NVL 94GB"),
    "NVIDIA H100-NVL-94GB": (None, "h100-nvl", "hopper", "H100 NVL 94GB"),
    "NVIDIA H200-SXM-141GB": ("h200-sxm", "h200-sxm", "hopper", None),
    "NVIDIA H200-SXM-141GB-CTS": ("h200-sxm", "h200-cts", "hopper", None),
    "NVIDIA H200-NVL-141GB": ("h200-nvl", "h200-nvl", "hopper", None),
    "NVIDIA GH200-GraceHopper-Superchip": (None, "gh200-144gb", "hopper", "GH200 144GB"),
    "NVIDIA GH200 Grace Hopper Superchip 144GB": (None, "gh200-144gb", "hopper", "GH200 144GB"),
    "NVIDIA GH200 Grace Hopper Superchip 96GB": (None, "gh200-96gb", "hopper", "GH200 96GB"),
    "NVIDIA B200-SXM-180GB": ("b200", "b200", "blackwell", None),
    "NVIDIA GB200": ("gb200-nvl72", "gb200", "blackwell", None),
    "NVIDIA L40S": ("l40s", "l40s", "ada", None),
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": ("mi300x", "mi300x", "cdna3", None),
    "AMD MI300X-NPS1-SPX-192GB-750W": ("mi300x", "mi300x", "cdna3", None),
    "AMD Instinct MI300X 192GB HBM3": ("mi300x", "mi300x", "cdna3", None),
    "AMD Instinct MI325X 256GB HBM3E": ("mi325x", "mi325x", "cdna3", None),
    "Intel® Gaudi® 2 AI Accelerator": (None, "gaudi2", "gaudi", "Intel Gaudi 2"),
    "A100-SXM-80GB": ("a100-80gb-sxm", "a100", "ampere", None),
    "NVIDIA GeForce RTX 4090": (None, "rtx-4090", "ada", "GeForce RTX 4090"),
    "NVIDIA Jetson AGX Orin 64G": (None, "jetson-agx-orin", "ampere", "Jetson AGX Orin 64GB"),
    "NVIDIA Jetson AGX Thor 128G": (None, "jetson-agx-thor", "blackwell", "Jetson AGX Thor 128GB"),
}

MLPERF_MODEL = {
    "llama2-70b-99": "llama-2-70b", "llama2-70b-99.9": "llama-2-70b",
    "llama2-70b-interactive-99": "llama-2-70b", "llama2-70b-interactive-99.9": "llama-2-70b",
    "mixtral-8x7b": "mixtral-8x7b", "llama3_1-405b": "llama-3.1-405b",
}

# validation_public.csv hardware strings -> catalog id
VP_HARDWARE = {
    "h100-sxm": "h100-sxm", "h100": "h100-sxm", "h200": "h200-sxm", "h200-sxm": "h200-sxm",
    "b200": "b200", "b200-sxm": "b200", "gb200": "gb200-nvl72", "mi300x": "mi300x",
    "mi325x": "mi325x", "mi355x": "mi355x", "h100-pcie": "h100-pcie", "b300": "b300",
    "gb300": "gb300-nvl72", "h200 (CoreWeave, IB CX-7)": "h200-sxm",
}

# ---------------------------------------------------------------------------------------------
# MLPerf benchmark facts (reference README: loadgen mlperf.conf limits, dataset reference lengths)
# ---------------------------------------------------------------------------------------------

MLPERF_LIMITS = {  # benchmark family -> (ttft p99 s, tpot p99 s)
    "llama2-70b": (2.0, 0.2), "llama2-70b-interactive": (0.45, 0.04),
    "llama3_1-405b": (6.0, 0.175), "mixtral-8x7b": (2.0, 0.2),
}
LIMITS_SOURCE = ("mlcommons/inference:loadgen/mlperf.conf (*.Server.ttft_latency / tpot_latency, "
                 "target_latency_percentile = 99), as printed in every summary's 'Test Parameters Used'")
DATASET_OUTPUT_MEDIAN = {  # reference README: median realized output tokens/sample over closed rows
    "llama2-70b": (291.9, "OpenOrca subset, 24,576 samples"),
    "llama2-70b-interactive": (291.9, "OpenOrca subset, 24,576 samples"),
    "llama3_1-405b": (648.4, "8,313 samples (QA, math, code)"),
    "mixtral-8x7b": (145.5, "15,000 samples: OpenOrca, GSM8K, MBXP"),
}
INPUT_BASIS = {
    "llama2-70b": ("mean prompt length of the MLPerf OpenOrca subset not found in sources read; prompts "
                   "are capped at 1024 tokens (max_input_len 1024 in NVIDIA's v5.0 llama2-70b base config, "
                   "ntuhpc/mlperf_inference_results_v5.0:closed/Dell/configs/llama2-70b/__init__.py, commit "
                   "cf354115)"),
    "llama3_1-405b": "mean prompt length of the 405B dataset not found in sources read",
    "mixtral-8x7b": "mean prompt length of the Mixtral dataset not found in sources read",
}
INPUT_BASIS["llama2-70b-interactive"] = INPUT_BASIS["llama2-70b"]
AS_OF = {"v4.0": "2024-03-27", "v4.1": "2024-08-28", "v5.0": "2025-04-02"}
ROUND_REPO = {
    "v4.0": ("mlcommons/inference_results_v4.0", "3c4a1cf196b70175cfe7c59e067cd1d923aa4f3f"),
    "v4.1": ("mlcommons/inference_results_v4.1", ""),
    "v5.0": ("ntuhpc/mlperf_inference_results_v5.0 (fork of mlcommons/inference_results_v5.0)",
             "cf354115915ea369f05db424b051da8c5bf957dc"),
}

# Harness configs read for layouts and precisions (stored copies of the public result repositories).
V40 = "mlcommons/inference_results_v4.0"
V41 = "mlcommons/inference_results_v4.1"
V50 = "ntuhpc/mlperf_inference_results_v5.0"
MLPERF_SOURCES = {
    "v40_l2": f"{V40}:closed/NVIDIA/configs/llama2-70b/{{Offline,Server}}/__init__.py (commit 8121a811)",
    "v41_l2": f"{V41}:closed/NVIDIA/configs/llama2-70b/{{Offline,Server}}/__init__.py (commit a2f5d66d)",
    "v41_mix": (f"{V41}:closed/Supermicro/configs/mixtral-8x7b/Offline/__init__.py (NVIDIA-authored base "
                "config; commit a2f5d66d)"),
    "v41_amd": (f"{V41}:closed/AMD/code/llama2-70b-99.9/test_VllmFp8/test_VllmFp8_SyncServer_audit.sh "
                "(TP=1, DP=8, --quantization fp8, --kv-cache-dtype fp8) and closed/AMD/code/llama2-70b-99/"
                "README.md (quant scheme w_fp8_a_fp8_o_fp8); commit a2f5d66d"),
    "v50_l2": (f"{V50}:closed/Lenovo/configs/llama2-70b/{{Offline,Server}}/__init__.py (NVIDIA-authored "
               "base config: Hopper fp8 + fp8 KV TP1 PP1, Blackwell fp4 + fp8 KV TP1 PP1, H100-SXM PP2, "
               "H100-NVL TP2; commit cf354115)"),
    "v50_l2_dell": f"{V50}:closed/Dell/configs/llama2-70b/{{Offline,Server}}/custom.py (commit cf354115)",
    "v50_l2_qct": (f"{V50}:closed/Quanta_Cloud_Technology/configs/llama2-70b/Offline/__init__.py "
                   "(commit cf354115)"),
    "v50_int": (f"{V50}:closed/GigaComputing/configs/llama2-70b-interactive/Server/__init__.py (NVIDIA-"
                "authored base config: H200 fp8 TP1 PP1, B200 fp4 TP1 PP1; commit cf354115) and "
                "closed/Dell/configs/llama2-70b-interactive/Server/custom.py"),
    "v50_405_off": (f"{V50}:closed/GigaComputing/configs/llama3_1-405b/Offline/__init__.py (NVIDIA-authored "
                    "base config: H200x8 TP4 PP2, B200 TP2 PP2, GB200 TP2 PP2 x18; commit cf354115)"),
    "v50_405_srv": (f"{V50}:closed/HPE/configs/llama3_1-405b/Server/__init__.py (NVIDIA-authored base "
                    "config: H200x8 TP8 PP1, B200 TP2 PP2, GB200 TP2 PP2; commit cf354115)"),
    "v50_405_dell": f"{V50}:closed/Dell/configs/llama3_1-405b/Offline/custom.py (H100x8 TP8 PP1; commit cf354115)",
    "v50_405_json": (f"{V50}:closed/NVIDIA/measurements/B200-SXM-180GBx8_TRT/llama3_1-405b/Server/"
                     "B200-SXM-180GBx8_TRT_Server.json (weight_data_types fp4; commit cf354115)"),
    "v50_mix": (f"{V50}:closed/Lenovo/configs/mixtral-8x7b/Offline/__init__.py and closed/Quanta_Cloud_"
                "Technology/configs/mixtral-8x7b/Offline/__init__.py (NVIDIA-authored base config: Hopper "
                "fp8 + fp8 KV TP1, Blackwell fp4 + fp8 KV TP1; commit cf354115)"),
    "v50_nvl_hpe": (f"{V50}:closed/HPE/configs/{{llama2-70b/Offline,llama2-70b/Server,mixtral-8x7b/Offline,"
                    "mixtral-8x7b/Server}/custom.py (HPE_PROLIANT_DL380A_H200_NVL_141GBX8 derives from NVIDIA's "
                    "HopperOfflineGPUBaseConfig / HopperServerGPUBaseConfig: precision fp8, kv_cache_dtype fp8, "
                    "tensor_parallelism 1, pipeline_parallelism 1, as the same files show in comments; its own "
                    "trtllm_build_flags set only max_num_tokens (and gemm_swiglu_plugin fp8), so TP and PP stay at 1; "
                    "commit cf354115)"),
    "v50_nvl_dell_srv": (f"{V50}:closed/Dell/configs/llama2-70b/Server/custom.py (XE7745_H200_NVL_141GBx8 derives "
                         "from HopperServerGPUBaseConfig: fp8, fp8 KV, TP1 PP1; build flags set only max_num_tokens "
                         "and gemm_swiglu_plugin fp8; commit cf354115)"),
    "v50_nvl_dell_off": (f"{V50}:closed/Dell/configs/llama2-70b/Offline/custom.py (XE7745_H200_NVL_141GBx8 derives "
                         "from OfflineGPUBaseConfig with trtllm_build_flags max_num_tokens 1536 and gemm_swiglu_plugin "
                         "'fp8', no tensor/pipeline parallelism set (default 1); commit cf354115)"),
    "v50_amd": (f"{V50}:closed/AMD/setup/vllm/vllm/model_executor/layers/quantization/quark/schemes/"
                "quark_w8a8_fp8.py (AMD's v5.0 vLLM build ships the FP8 W8A8 scheme; commit cf354115)"),
}


def _bench_family(benchmark: str) -> str:
    return re.sub(r"-99(\.9)?$", "", benchmark)


def mlperf_layout(version: str, submitter: str, system: str, benchmark: str, scenario: str,
                  hw_key: str, num_gpus: int, fw: str = "", system_name: str = "") -> dict:
    """Return tp, pp, layout basis, precision, weight format, KV precision and their basis for one run.

    Every value is either *stated* in a config read for this very system, or *inferred* from the
    NVIDIA-authored base config of the same round (which partners' TensorRT-LLM submissions copy), or
    left empty (unknown).
    """
    fam = _bench_family(benchmark)
    out = dict(tp="", pp="", layout_basis="unknown: no harness config for this system was read",
               precision="", weight_format="", kv_precision="", precision_basis="not stated in sources read")
    nv_sub = submitter == "NVIDIA"

    def lay(tp, pp, how, src):
        out.update(tp=str(tp), pp=str(pp), layout_basis=f"{how}: {src}")

    def prec(p, w, kv, how, src):
        out.update(precision=p, weight_format=w, kv_precision=kv, precision_basis=f"{how}: {src}")

    trt = hw_key not in ("mi300x", "mi325x", "gaudi2")
    if "vLLM, FP8" in system_name:
        prec("fp8", "fp8", "", "stated in the system description", f"system_name '{system_name}'")
    if version in ("v4.0", "v4.1") and fam == "llama2-70b" and trt:
        src = MLPERF_SOURCES["v40_l2" if version == "v4.0" else "v41_l2"]
        how = "stated" if nv_sub else "inferred from NVIDIA's base config of the round"
        if hw_key in ("h100-sxm", "h100-nvl"):
            lay(2, 1, how, src + " (H100 TP2 PP1)")
        elif hw_key in ("h200-sxm", "gh200-144gb", "gh200-96gb"):
            lay(1, 1, how, src + " (H200/GH200 TP1)")
        elif hw_key == "h200-cts":
            lay(1, 1, "inferred", src + " (every single-GPU-instance H200 config there is TP1)")
        if hw_key in ("h100-sxm", "h100-nvl", "h200-sxm", "h200-cts", "gh200-144gb", "gh200-96gb"):
            prec("fp8", "fp8", "", how, src + " (use_fp8 = True; KV dtype not stated)")
        if hw_key == "b200":
            prec("fp4", "nvfp4", "", "reference table",
                 "validation_public.csv lists FP4 for this preview run (its v4.1 config is not in the index)")
        if hw_key in ("h100-pcie", "l40s") and "TensorRT" in fw:
            prec("fp8", "fp8", "", "inferred",
                 src + " (NVIDIA's TensorRT-LLM harness builds llama2-70b with use_fp8 for every GPU it configures)")
    if version == "v4.1" and fam == "mixtral-8x7b" and trt:
        src = MLPERF_SOURCES["v41_mix"]
        if hw_key in ("h100-sxm", "h200-sxm", "h200-cts", "gh200-144gb", "gh200-96gb"):
            stated = hw_key == "h100-sxm" and num_gpus in (1, 8) or hw_key in ("h200-sxm", "gh200-144gb")
            lay(1, 1, "stated in the NVIDIA base config for this GPU" if stated else "inferred", src + " (TP1)")
            prec("fp8", "fp8", "", "inferred from NVIDIA's base config", src + " (use_fp8 = True)")
    if hw_key == "mi300x" and version == "v4.1":
        how = "stated" if submitter == "AMD" else "inferred (same AMD vLLM 0.4.3+rocm614 build)"
        lay(1, 1, how, MLPERF_SOURCES["v41_amd"])
        prec("fp8", "fp8", "fp8", how, MLPERF_SOURCES["v41_amd"])
    if hw_key in ("mi325x", "mi300x") and version == "v5.0":
        lay(1, 1, "inferred (AMD's v4.1 MI300X script ran TP=1 per GPU; v5.0 run scripts not read)",
            MLPERF_SOURCES["v41_amd"])
        prec("fp8", "fp8", "fp8", "inferred", MLPERF_SOURCES["v50_amd"] + "; " + MLPERF_SOURCES["v41_amd"])
    if version == "v5.0" and trt:
        hop = hw_key in ("h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "h200-cts", "h200-nvl",
                         "gh200-144gb", "gh200-96gb")
        bw = hw_key in ("b200", "gb200")
        if fam in ("llama2-70b", "llama2-70b-interactive"):
            src = MLPERF_SOURCES["v50_l2"]
            if hop:
                prec("fp8", "fp8", "fp8", "stated in the NVIDIA base config for Hopper", src)
            if bw:
                prec("fp4", "nvfp4", "fp8", "stated in the NVIDIA base config for Blackwell", src)
            if hw_key == "l40s" and submitter == "Dell":
                prec("fp8", "fp8", "", "stated", MLPERF_SOURCES["v50_l2_dell"] + " (precision fp8)")
        if fam == "llama2-70b":
            src = MLPERF_SOURCES["v50_l2"]
            if hw_key in ("h200-sxm", "h200-cts", "gh200-144gb", "gh200-96gb", "b200"):
                lay(1, 1, "stated in the NVIDIA base config for this GPU", src)
            elif hw_key == "h100-nvl":
                lay(2, 1, "stated in the NVIDIA base config (H100-NVL TP2)", src)
            elif hw_key == "h100-sxm" and submitter == "Dell":
                lay(1, 2, "stated", MLPERF_SOURCES["v50_l2_dell"] + " (TP1 PP2)")
            elif hw_key == "h100-sxm" and submitter == "Quanta_Cloud_Technology":
                lay(1, 2, "stated", MLPERF_SOURCES["v50_l2_qct"] + " (TP1 PP2)")
            elif hw_key == "h100-sxm":
                lay(1, 2, "inferred: the Offline base config registers only PP2 (TP1 PP2) for H100-SXM; the "
                    "Server base registers PP2 (target 103 QPS) and TP2 (75 QPS), PP2 assumed", src)
            elif hw_key == "h100-pcie" and submitter == "Quanta_Cloud_Technology":
                lay(1, 2, "stated", MLPERF_SOURCES["v50_l2_qct"] + " (H100 PCIe x4: TP1 PP2)")
                prec("fp8", "fp8", "fp8", "stated", MLPERF_SOURCES["v50_l2_qct"] + " (Hopper base: fp8, fp8 KV)")
            elif hw_key == "l40s" and submitter == "Dell":
                lay(2, 1, "stated", MLPERF_SOURCES["v50_l2_dell"] + " (L40S TP2 PP1)")
            elif hw_key == "h200-nvl" and submitter == "HPE":
                lay(1, 1, "stated (Hopper base config)", MLPERF_SOURCES["v50_nvl_hpe"])
                prec("fp8", "fp8", "fp8", "stated (Hopper base config)", MLPERF_SOURCES["v50_nvl_hpe"])
            elif hw_key == "h200-nvl" and submitter == "Dell" and scenario == "Server":
                lay(1, 1, "stated (Hopper base config)", MLPERF_SOURCES["v50_nvl_dell_srv"])
                prec("fp8", "fp8", "fp8", "stated (Hopper base config)", MLPERF_SOURCES["v50_nvl_dell_srv"])
            elif hw_key == "h200-nvl" and submitter == "Dell":
                lay(1, 1, "stated: no tensor/pipeline parallelism set, default 1", MLPERF_SOURCES["v50_nvl_dell_off"])
                prec("fp8", "fp8", "", "inferred from gemm_swiglu_plugin 'fp8' (and the same system's Server config, "
                     "fp8 Hopper base); KV dtype not stated for Offline", MLPERF_SOURCES["v50_nvl_dell_off"] + "; "
                     + MLPERF_SOURCES["v50_nvl_dell_srv"])
        if fam == "llama2-70b-interactive":
            src = MLPERF_SOURCES["v50_int"]
            if hw_key in ("h200-sxm", "b200"):
                lay(1, 1, "stated in the NVIDIA base config for this GPU" if scenario == "Server" else
                    "inferred (Offline run of the interactive benchmark; the Server base config is TP1)", src)
            elif hw_key == "h100-sxm":
                out["layout_basis"] = ("ambiguous: Dell's interactive Server config for H100 sets TP1 PP2 and then "
                                       "overwrites trtllm_build_flags without them (" + src + ")")
        if fam == "llama3_1-405b":
            src = MLPERF_SOURCES["v50_405_off" if scenario == "Offline" else "v50_405_srv"]
            if hw_key == "h200-sxm":
                if scenario == "Offline":
                    lay(4, 2, "stated in the NVIDIA base config (H200x8 TP4 PP2)", src)
                else:
                    lay(8, 1, "stated in the NVIDIA base config (H200x8 TP8 PP1)", src)
                prec("fp8", "fp8", "fp8", "stated in the NVIDIA base config for Hopper", src)
            elif hw_key == "h100-sxm":
                if scenario == "Offline":
                    how = "stated" if submitter == "Dell" else "inferred from Dell's H100x8 config"
                    lay(8, 1, how, MLPERF_SOURCES["v50_405_dell"])
                prec("fp8", "fp8", "fp8", "inferred from the NVIDIA Hopper base config", src)
            elif hw_key in ("b200", "gb200"):
                lay(2, 2, "stated in the NVIDIA base config (TP2 PP2, data-parallel copies)", src)
                prec("fp4", "nvfp4", "fp8", "stated in the NVIDIA base config for Blackwell",
                     src + "; " + MLPERF_SOURCES["v50_405_json"])
        if fam == "mixtral-8x7b":
            src = MLPERF_SOURCES["v50_mix"]
            if hw_key in ("h100-sxm", "h100-pcie", "h200-sxm", "h200-cts", "gh200-144gb", "gh200-96gb", "b200"):
                stated = hw_key in ("h200-sxm", "gh200-144gb", "gh200-96gb", "b200", "h100-pcie") or (
                    hw_key == "h100-sxm" and "Virtualized" not in system)
                lay(1, 1, "stated in the NVIDIA base config for this GPU" if stated else "inferred", src + " (TP1)")
            if hop:
                prec("fp8", "fp8", "fp8", "stated in the NVIDIA base config for Hopper", src)
            if bw:
                prec("fp4", "nvfp4", "fp8", "stated in the NVIDIA base config for Blackwell", src)
            if hw_key == "h200-nvl" and submitter == "HPE":
                lay(1, 1, "stated (Hopper base config)", MLPERF_SOURCES["v50_nvl_hpe"])
                prec("fp8", "fp8", "fp8", "stated (Hopper base config)", MLPERF_SOURCES["v50_nvl_hpe"])
    return out


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def num(x, nd: int = 4) -> str:
    """Format a number deterministically: rounded to ``nd`` decimals, no trailing zeros, '' for None."""
    if x is None or x == "":
        return ""
    v = round(float(x), nd)
    if v == int(v):
        return str(int(v))
    return f"{v:.{nd}f}".rstrip("0").rstrip(".")


def slug(s: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", s.lower()).strip("-")


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def blank_row() -> dict:
    return {c: "" for c in COLUMNS}


def finish(row: dict, reasons: list[str]) -> dict:
    row["include"] = "false" if reasons else "true"
    row["exclude_reason"] = "; ".join(reasons)
    if not row["group_id"]:
        row["group_id"] = f"{row['model'] or slug(row['model_upstream']) or 'unknown'}|" \
                          f"{row['hardware'] or slug(row['hardware_upstream']) or 'unknown'}"
    return row


# ---------------------------------------------------------------------------------------------
# MLPerf
# ---------------------------------------------------------------------------------------------

BENCH_PRIORITY = {"llama2-70b-99.9": 0, "llama2-70b-99": 1, "llama2-70b-interactive-99.9": 2,
                  "llama2-70b-interactive-99": 3, "mixtral-8x7b": 4, "llama3_1-405b": 5}


def mlperf_rows(ref: Path) -> list[dict]:
    runs = []
    for version, fname, prov_name in (("v4.0", "mlperf_v4.0_llm.csv", "mlperf_v4.0_llm_provenance.csv"),
                                      ("v4.1", "mlperf_v4.1_llm.csv", None),
                                      ("v5.0", "mlperf_v5.0_llm.csv", "mlperf_v5.0_llm_provenance.csv")):
        prov = {p["path"]: p for p in read_csv(ref / prov_name)} if prov_name else {}
        for r in read_csv(ref / fname):
            runs.append((version, fname, r, prov.get(r["path"], {})))

    # Twins: the same run filed under several benchmarks (identical tokens/s and samples/s in the same
    # system and scenario folder). Keep one: the directly read summary first, then benchmark priority.
    twin_of = {}
    groups: dict[tuple, list] = {}
    for version, fname, r, p in runs:
        key = (version, r["division"], r["submitter"], r["system"], r["scenario"].lower(),
               r["tokens_per_s"], r["samples_per_s"])
        groups.setdefault(key, []).append((version, fname, r, p))
    for members in groups.values():
        if len(members) < 2:
            continue
        members = sorted(members, key=lambda m: (m[3].get("method", "direct") != "direct",
                                                 BENCH_PRIORITY.get(m[2]["model"], 9), m[2]["path"]))
        for m in members[1:]:
            twin_of[(m[0], m[2]["path"])] = members[0][2]["path"]

    rows = []
    seen = set()
    for version, fname, r, p in runs:
        bench = r["model"]
        fam = _bench_family(bench)
        model = MLPERF_MODEL[bench]
        hw, hw_key, gen, label = MLPERF_ACCEL[r["accelerator"]]
        nodes = int(r["nodes"])
        num_gpus = int(r["acc_per_node"]) * nodes
        board4 = hw == "h100-sxm" and int(r["acc_per_node"]) == 4
        if board4:  # 4 H100 SXM per node: the HGX H100 4-GPU board (direct NVLink mesh, no NVSwitch)
            hw = "h100-sxm-4gpu"
        scen_folder = r["scenario"].capitalize()
        scenario = "offline" if scen_folder == "Offline" else (
            "interactive" if fam == "llama2-70b-interactive" else "server")
        lay = mlperf_layout(version, r["submitter"], r["system"], bench, scen_folder, hw_key, num_gpus,
                            r["framework"], r["system_name"])
        row = blank_row()
        cid = f"mlperf-{version}-{r['division']}-{slug(r['submitter'])}-{slug(r['system'])}-{bench}-{r['scenario'].lower()}"
        assert cid not in seen, cid
        seen.add(cid)
        tps = float(r["tokens_per_s"])
        sps = float(r["samples_per_s"]) if r["samples_per_s"] else None
        per_gpu = tps / num_gpus
        notes = [f"output tokens/s per GPU = {r['tokens_per_s']} / {num_gpus} GPUs = {num(per_gpu, 2)}"]
        if sps:
            out_len = tps / sps
            row["output_len"] = num(out_len, 1)
            row["output_len_basis"] = (f"realized mean output tokens/sample of this run = tokens_per_s / "
                                       f"samples_per_s = {r['tokens_per_s']} / {r['samples_per_s']}; dataset: "
                                       f"{DATASET_OUTPUT_MEDIAN[fam][1]}")
        else:
            row["output_len"] = num(DATASET_OUTPUT_MEDIAN[fam][0], 1)
            row["output_len_basis"] = (f"no samples/s in the source: median realized output tokens/sample of "
                                       f"the round's closed rows (reference README); dataset: {DATASET_OUTPUT_MEDIAN[fam][1]}")
        tp, pp = lay["tp"], lay["pp"]
        dp = ""
        if tp and pp:
            dp = num(num_gpus / (int(tp) * int(pp)), 3)
            notes.append(f"dp = {num_gpus} / (tp {tp} x pp {pp}) = {dp}")
        repo, commit = ROUND_REPO[version]
        commit = p.get("commit") or commit
        src = f"{repo}:{r['path']}"
        if p.get("method") == "dedup-twin":
            src += f" (numbers read from the byte-identical twin {p['read_from']})"
        elif p.get("method") == "readme-table-only":
            src += " (value from the system README 'Results Table'; summary not in the index)"
        src += f"; ../shared/reference/{fname}"
        if p.get("system_info_from"):
            notes.append(f"system info: {p['system_info_from']}")
        fw = r["framework"]
        framework = ("trtllm" if "TensorRT" in fw or "TRT" in r["system"] else
                     "vllm" if "vLLM" in fw else "pytorch" if fw.startswith("PyTorch") else "")
        row.update({
            "case_id": cid, "source_kind": f"mlperf-{version}", "source_case_id": r["path"],
            "model": model, "model_upstream": bench, "hardware": hw or "", "hardware_upstream": r["accelerator"],
            "hardware_generation": gen, "num_gpus": str(num_gpus), "nodes": str(nodes), "tp": tp, "pp": pp,
            "ep": "1" if tp and pp else "", "dp": dp, "layout_basis": lay["layout_basis"],
            "precision": lay["precision"], "weight_format": lay["weight_format"],
            "kv_precision": lay["kv_precision"], "precision_basis": lay["precision_basis"],
            "framework": framework, "framework_version": fw, "speculative_decoding": "none",
            "scenario": scenario, "benchmark": bench,
            "input_len": "", "input_len_basis": INPUT_BASIS[fam],
            "metric": "output_tokens_per_s_per_gpu", "value": num(per_gpu, 2),
            "system_metric": "output_tokens_per_s_system", "system_value": r["tokens_per_s"],
            "output_tokens_per_s_per_gpu": num(per_gpu, 2), "samples_per_s": r["samples_per_s"],
            "division": r["division"], "status": r["status"].lower(),
            "source": src, "source_commit": commit, "as_of": AS_OF[version],
        })
        if scenario != "offline":
            ttft, tpot = MLPERF_LIMITS[fam]
            row.update(ttft_limit_s=num(ttft), tpot_limit_s=num(tpot), latency_percentile="99")
            notes.append(f"latency limits p99 TTFT {num(ttft)} s, p99 TPOT {num(tpot)} s ({LIMITS_SOURCE})")
            for col, src_col in (("measured_mean_ttft_s", "mean_ttft_ns"), ("measured_mean_tpot_s", "mean_tpot_ns"),
                                 ("measured_p99_tpot_s", "p99_tpot_ns")):
                if r[src_col]:
                    row[col] = num(float(r[src_col]) / 1e9, 6)
            if r["mean_tpot_ns"]:
                notes.append(f"mean TPOT {r['mean_tpot_ns']} ns = {row['measured_mean_tpot_s']} s")
        if scenario != "offline":
            notes.append("server-type throughput is loadgen 'Completed tokens per second' at the highest "
                         "Poisson arrival rate that met the p99 limits")
        if hw_key == "h200-cts":
            notes.append("H200-SXM-141GB-CTS: H200 SXM with NVIDIA's custom thermal solution (higher power "
                         "limit than the 700 W HGX H200); mapped to h200-sxm")
        if board4:
            notes.append("4 H100-SXM-80GB per node: the HGX H100 4-GPU board, whose GPUs link directly (no NVSwitch); "
                         "mapped to h100-sxm-4gpu")
        if "Virtualized" in r["accelerator"]:
            notes.append("virtualized H100 (VM); mapped to h100-sxm")
        if "Triton" in r["system"]:
            notes.append("served through Triton Inference Server")
        if version == "v4.0" and r["submitter"] == "JuniperNetworks":
            notes.append("systems JSON declares 16 accelerators per node x 2 nodes (reference README); "
                         "the system name suggests 2 nodes of 8")
        reasons = []
        if r["division"] == "open":
            reasons.append("open division (model or dataset changes allowed, not comparable with closed)")
        if r["status"].lower() == "preview":
            reasons.append("preview status (hardware not available at submission)")
        if hw is None:
            reasons.append(f"hardware not in catalog: {label}")
        if "MaxQ" in r["system"]:
            reasons.append("power-capped MaxQ submission (power limit below TDP)")
        if (version, r["path"]) in twin_of:
            reasons.append(f"duplicate/dedup-twin: same run as {twin_of[(version, r['path'])]}")
        if not reasons:
            if not tp:
                reasons.append("unknown layout (tp/pp not stated in sources read)")
            if not lay["precision"]:
                reasons.append("matmul precision not stated in sources read")
        row["notes"] = "; ".join(notes)
        rows.append(finish(row, reasons))
    return rows


# ---------------------------------------------------------------------------------------------
# validation_public.csv (non-MLPerf) and data/validation_cases.csv
# ---------------------------------------------------------------------------------------------

RESERVED_SOURCES: tuple[tuple[str, str], ...] = (
    (r"inference_results_v(5\.[1-9]|[6-9])|mlperf[ _-]*(inference[ _-]*)?v?(5\.[1-9]|[6-9]\.[0-9])",
     "MLPerf Inference rounds after v5.0"),
    (r"inference(x|max)[^;]*v2|inference(x|max)-v2", "SemiAnalysis InferenceX v2 blog"),
    (r"cost[- _]per[- _](million[- _])?tokens?", "NVIDIA's GB300-vs-H200 cost-per-token blog"),
    (r"lmsys\.org|sglang\.ai/blog|sgl-project\.github\.io", "LMSYS / SGLang blog posts"),
    (r"blog\.vllm\.ai|vllm\.ai/blog|vllm-project\.github\.io", "vLLM blog posts"),
    (r"gpustack", "gpustack's performance lab"),
    (r"ml\.energy|ml-energy|mlenergy", "ML.ENERGY"),
    (r"baseten", "Baseten's blog"),
    (r"blogs\.oracle\.com|oracle\.com/[^; ]*blog", "Oracle's MI300X blog"),
    (r"day[_ -]?6|one_more_thing|open-infra-index", "DeepSeek's day-6 disclosure (a known-answer test only)"),
)
"""(regex on a row's source, what it is): sources reserved for independent evaluation (issue 17, DEVELOPERS rules).
A row citing one is never read into measurements.csv. SemiAnalysis InferenceX DeepSeek-R1 results are reserved
too: :func:`reserved_source` also refuses an InferenceX/InferenceMAX source for a DeepSeek model."""


def reserved_source(source: str, model: str = "") -> str:
    """The reserved source a row cites ('' if none): :data:`RESERVED_SOURCES`, or InferenceX on DeepSeek."""
    for pat, what in RESERVED_SOURCES:
        if re.search(pat, source or "", flags=re.IGNORECASE):
            return what
    if re.search(r"inference(x|max)|semianalysis", source or "", flags=re.IGNORECASE) and \
            "deepseek" in (model or "").lower():
        return "SemiAnalysis InferenceX DeepSeek-R1 results"
    return ""


VP_SKIP_PREFIX = ("price-", "rent-", "ix-tco", "ix-power", "math-", "ix-v1-", "mlperf-")
VP_SKIP_METRIC = {"usd_per_m_total_tokens_hyperscaler_tco", "kv_free_gb_per_gpu", "kv_mb_per_request",
                  "max_concurrency_per_gpu"}


def _precision(text: str) -> tuple[str, str, str]:
    """(matmul precision, weight format, kv precision) from a validation_public precision string."""
    t = text.lower()
    if t.startswith("nvfp4 moe, fp8 kv"):
        return "fp4", "nvfp4", "fp8"
    if t.startswith("nvfp4"):
        return "fp4", "nvfp4", "bf16"
    if t.startswith("mxfp4"):
        return "fp4", "mxfp4", ""
    if t == "fp4":
        return "fp4", "nvfp4", ""
    if t.startswith("fp8 (weights+kv)"):
        return "fp8", "fp8", "fp8"
    if t.startswith("fp8/"):
        return "", "", ""
    if t.startswith("fp8"):
        return "fp8", "fp8", ""
    if t.startswith("bf16"):
        return "bf16", "bf16", "bf16"
    return "", "", ""


def vp_rows(ref: Path, vcases: list[dict]) -> list[dict]:
    vp = read_csv(ref / "validation_public.csv")
    by_id = {x["case_id"]: x for x in vp}
    rows = []
    vp_src = "../shared/reference/validation_public.csv row "

    def base(x, cid, kind):
        row = blank_row()
        hw = VP_HARDWARE.get(x["hardware"], "")
        model = x["model"]
        model_id = {"deepseek-r1 (671B)": "deepseek-r1", "deepseek-v3 (671B MoE)": "deepseek-v3",
                    "deepseek-r1/v3": "deepseek-r1", "llama-3-70b": "llama-3.1-70b",
                    "llama-3.3-70b (3.1-70B in companion blog)": "llama-3.3-70b"}.get(model, model)
        row.update({
            "case_id": cid, "source_kind": kind, "source_case_id": x["case_id"], "model": model_id,
            "model_upstream": model, "hardware": hw, "hardware_upstream": x["hardware"],
            "hardware_generation": GENERATION.get(hw, ""), "num_gpus": x["num_gpus"],
            "input_len": x["input_len"], "output_len": x["output_len"],
            "source": x["source"] + "; " + vp_src + x["case_id"],
            "as_of": re.match(r"[0-9]{4}(-[0-9]{2})?(-[0-9]{2})?", x["as_of"]).group(0),
            "speculative_decoding": "none",
        })
        if x["input_len"]:
            row["input_len_basis"] = "fixed synthetic input length stated by the source"
        if x["output_len"]:
            row["output_len_basis"] = "fixed output length stated by the source"
        p, w, kv = _precision(x["precision"])
        row.update(precision=p, weight_format=w, kv_precision=kv,
                   precision_basis=f"source precision '{x['precision']}'" if p else "")
        return row

    for x in vp:
        cid0, metric = x["case_id"], x["metric"]
        if cid0.startswith(VP_SKIP_PREFIX) or metric in VP_SKIP_METRIC:
            continue
        if reserved_source(x["source"], x["model"]):
            continue  # reserved for independent evaluation: never read, used or kept (RESERVED_SOURCES)
        if cid0.startswith("ix-") and cid0.endswith("-out"):
            continue  # folded into the matching -tput row
        reasons: list[str] = []
        notes: list[str] = []
        if cid0.startswith(("trt-perf-", "trt17-")):
            row = base(x, "trtllm-" + cid0.removeprefix("trt-perf-").removeprefix("trt17-")
                       + ("-v0.17" if cid0.startswith("trt17-") else "-v1.0"), "trtllm")
            n = int(x["num_gpus"])
            m = re.match(r"TP(\d+)$", x["parallelism"])
            if m:
                row.update(tp=m.group(1), pp="1", ep="1", dp="1", layout_basis="stated: " + x["parallelism"])
            else:
                row.update(tp="1", pp="1", ep=str(n), dp=str(n),
                           layout_basis=f"inferred: '{x['parallelism']}' (MoE recipe with attention DP{n} and "
                                        f"expert parallel EP{n}, as data/validation_cases.csv reads the page)")
            row["kv_precision"] = "fp8"
            row["precision_basis"] += "; FP8 KV cache as data/validation_cases.csv reads the page"
            row["weight_format"] = "nvfp4" if row["precision"] == "fp4" else row["weight_format"]
            sysv = float(x["value"])
            row.update(framework="trtllm", framework_version=("v1.0-era perf-overview" if cid0.startswith("trt-perf")
                                                              else "v0.17"),
                       scenario="throughput", concurrency_or_batch="max",
                       metric="output_tokens_per_s_per_gpu", value=num(sysv / n, 2),
                       system_metric="output_tokens_per_s_system", system_value=x["value"],
                       output_tokens_per_s_per_gpu=num(sysv / n, 2))
            notes.append(f"trtllm-bench at infinite request rate (batch up to engine limits); per GPU = "
                         f"{x['value']} / {n} = {num(sysv / n, 2)}")
        elif cid0.startswith("trt061-"):
            row = base(x, "trtllm-v0.6.1-" + cid0.removeprefix("trt061-"), "trtllm")
            tp = re.match(r"TP(\d+)", x["parallelism"]).group(1)
            row.update(tp=tp, pp="1", ep="1", dp=str(int(x["num_gpus"]) // int(tp)), layout_basis="stated: " + x["parallelism"],
                       framework="trtllm", framework_version="v0.6.1 (gptSessionBenchmark)",
                       scenario="throughput", concurrency_or_batch=x["concurrency_or_batch"],
                       metric="output_tokens_per_s_per_gpu", value=num(x["value"], 2),
                       output_tokens_per_s_per_gpu=num(x["value"], 2))
            notes.append("static batching of a fixed batch (gptSessionBenchmark); the table value is already "
                         "per GPU ('out tok/s/GPU')")
        elif cid0.startswith("trt05-"):
            row = base(x, "trtllm-v0.5-" + cid0.removeprefix("trt05-"), "trtllm")
            tp = re.match(r"TP(\d+)", x["parallelism"]).group(1)
            row.update(tp=tp, pp="1", ep="1", dp="1", layout_basis="stated: " + x["parallelism"],
                       framework="trtllm", framework_version="v0.5", scenario="latency",
                       concurrency_or_batch="1", metric="ttft_s", value=num(float(x["value"]) / 1000, 6))
            notes.append(f"first-token latency {x['value']} ms at batch 1 -> {num(float(x['value']) / 1000, 6)} s")
        elif cid0.startswith("nim-llama33-"):
            if metric != "itl_ms":
                continue  # the -tput twin is read together with the -itl row below
            tput = by_id[cid0.removesuffix("-itl") + "-tput"]
            ttft_ms = float(re.search(r"TTFT ([0-9.]+) ms", x["notes"]).group(1))
            n = int(x["num_gpus"])
            common = dict(tp="2", pp="1", ep="1", dp="1", layout_basis="stated: TP2", kv_precision="fp8",
                          precision_basis="source precision 'FP8'; FP8 KV as data/validation_cases.csv reads the NIM profile",
                          framework="trtllm", framework_version="NIM 1.8.0 (TensorRT-LLM profile)",
                          scenario="fixed-concurrency", concurrency_or_batch=x["concurrency_or_batch"])
            stem = "nim-" + cid0.removeprefix("nim-").removesuffix("-itl")
            for suffix, met, val, note in (
                    ("tpot", "tpot_s", float(x["value"]) / 1000, f"published ITL {x['value']} ms -> s"),
                    ("ttft", "ttft_s", ttft_ms / 1000, f"published TTFT {num(ttft_ms, 2)} ms -> s (client side; "
                     "at high concurrency it includes queueing behind other prefills)"),
                    ("tput", "output_tokens_per_s_per_gpu", float(tput["value"]) / n,
                     f"published {tput['value']} output tok/s for the TP2 system / {n} GPUs")):
                row = base(x, f"{stem}-{suffix}", "nim")
                row.update(common)
                row.update(metric=met, value=num(val, 6 if met != "output_tokens_per_s_per_gpu" else 2))
                if met == "output_tokens_per_s_per_gpu":
                    row.update(system_metric="output_tokens_per_s_system", system_value=tput["value"],
                               output_tokens_per_s_per_gpu=num(val, 2), source_case_id=tput["case_id"],
                               source=tput["source"] + "; " + vp_src + tput["case_id"])
                row["notes"] = note
                rows.append(finish(row, []))
            continue
        elif cid0.startswith("nim-llama31-"):
            row = base(x, "nim-" + cid0.removeprefix("nim-"), "nim")
            row.update(framework="trtllm", scenario="fixed-concurrency",
                       concurrency_or_batch=x["concurrency_or_batch"], metric="tpot_s",
                       value=num(float(x["value"]) / 1000, 6))
            reasons.append("hardware, GPU count and precision unverified in the source capture")
            notes.append(x["notes"])
        elif cid0.startswith("nv-specdec-"):
            row = base(x, "nv-" + cid0.removeprefix("nv-"), "nvidia-blog")
            row.update(tp="1", pp="1", ep="1", dp="1", layout_basis="stated: TP1 (one GPU)", kv_precision="fp8",
                       precision_basis=row["precision_basis"] + "; FP8 KV as data/validation_cases.csv reads the blog",
                       framework="trtllm", scenario="latency", concurrency_or_batch="1",
                       metric="tokens_per_s_per_user", value=num(x["value"], 2),
                       input_len="128", output_len="1024",
                       input_len_basis="as data/validation_cases.csv reads the blog",
                       output_len_basis="as data/validation_cases.csv reads the blog",
                       speculative_decoding="draft-model" if cid0.endswith("-draft") else "none")
            if cid0.endswith("-draft"):
                notes.append("draft-target speculative decoding with a Llama-3.2-1B draft model")
            notes.append(x["notes"])
        elif cid0.startswith("vllm-ci-"):
            row = base(x, "vllm-" + cid0.removeprefix("vllm-"), "vllm")
            tp = re.match(r"TP(\d+)", x["parallelism"]).group(1)
            row.update(tp=tp, pp="1", ep="1", dp="1", layout_basis="stated: " + x["parallelism"],
                       framework="vllm", framework_version="vLLM CI performance benchmark build 9515",
                       scenario="latency", concurrency_or_batch=x["concurrency_or_batch"],
                       metric="e2e_latency_s", value=num(float(x["value"]) / 1000, 6))
            notes.append(f"mean end-to-end latency {x['value']} ms for a batch of {x['concurrency_or_batch']} "
                         f"({x['input_len']} in / {x['output_len']} out); per output token "
                         f"{x['value']} / {x['output_len']} = {num(float(x['value']) / float(x['output_len']), 3)} ms "
                         "including the one prefill step")
            if x["model"] == "llama-3-70b":
                notes.append("Llama-3-70B: same architecture as llama-3.1-70b (shorter context)")
        elif cid0.startswith("trt-dsr1-"):
            row = base(x, "trtllm-dsr1-" + cid0.removeprefix("trt-dsr1-"), "trtllm")
            row.update(framework="trtllm", framework_version="TensorRT-LLM tech blog 2025")
            par = x["parallelism"]
            if metric == "tok_per_s_per_user":
                ep = {"trt-dsr1-b200-minlat-baseline": "8", "trt-dsr1-b200-minlat-mtp3-gtc": "4",
                      "trt-dsr1-b200-minlat-final": "2"}.get(cid0, "")
                row.update(tp="8", pp="1", ep=ep, dp="1",
                           layout_basis=f"stated: '{par}' (attention TP8; MoE expert parallel as stated)"
                           + ("" if ep else "; MoE split ('mixed ETP') not stated"),
                           scenario="latency", concurrency_or_batch="1", metric="tokens_per_s_per_user",
                           value=num(x["value"], 2),
                           speculative_decoding="mtp" if "MTP3" in par else "none")
                if "MTP3" in par:
                    notes.append("3 MTP draft tokens per step")
            else:
                row.update(tp="1", pp="1", ep="8", dp="8", layout_basis=f"stated: '{par}'",
                           scenario="throughput", concurrency_or_batch="max", metric="output_tokens_per_s_per_gpu",
                           value=num(x["value"], 2), output_tokens_per_s_per_gpu=num(x["value"], 2))
                reasons.append("approximate blog figure ('~4600'); the exact trtllm-bench output of the "
                               "max-throughput B200 setup is row trtllm-deepseek-r1-b200x8-adp8-ep8-b3072-in1024-"
                               "out2048-fp4 (Best_perf guide, 4548.0)")
            notes.append(x["notes"])
        elif cid0.startswith("ix-") and metric == "total_tok_per_s_per_gpu_at_interactivity":
            row = base(x, cid0.removesuffix("-tput"), "inferencex")
            out = by_id[cid0.removesuffix("-tput") + "-out"]
            at = re.search(r"-at(\d+)-", cid0 + "-").group(1)
            row.update(layout_basis="unknown: InferenceX reports the best configuration per GPU (may be "
                                    "disaggregated, multi-node or MTP); econ should optimise the layout",
                       framework="", scenario="fixed-concurrency",
                       concurrency_or_batch=x["concurrency_or_batch"], tokens_per_s_per_user_target=at,
                       metric="total_tokens_per_s_per_gpu", value=num(x["value"], 2),
                       output_tokens_per_s_per_gpu=num(out["value"], 2), speculative_decoding="unknown",
                       input_len_basis="nominal ISL; InferenceX samples the input length uniformly in 80-100% "
                                       "of nominal (validation_public row ix-v1-isl-jitter)")
            if row["precision"] == "fp4" and row["hardware"] == "mi355x":
                row["weight_format"] = ""  # AMD's FP4 checkpoint format is not stated by the source
            if row["precision"] == "fp4" and row["hardware"] == "mi325x":
                row.update(precision="", precision_basis="MXFP4 weights; CDNA3 has no FP4 matmul (catalog "
                           "fp4_dense_tflops empty), the wider matmul precision used is not stated")
                reasons.append("matmul precision not stated (MXFP4 weights on a GPU without FP4 matmul)")
            notes.append(f"at {at} tok/s/user; value = input+output tok/s per GPU (InferenceX tpPerGpu), "
                         "interpolated from measured sweep points")
            notes.append(f"output_tokens_per_s_per_gpu from row {out['case_id']}: {out['notes']}")
        elif cid0.startswith("nv-imax-"):
            row = base(x, cid0, "nvidia-blog")
            row.update(framework="trtllm", scenario="throughput",
                       metric={"output_tok_per_s_per_gpu_max": "output_tokens_per_s_per_gpu",
                               "tok_per_s_per_gpu_max": "tokens_per_s_per_gpu",
                               "usd_per_m_tokens": "usd_per_m_tokens"}[metric], value=num(x["value"], 4))
            reasons.append("vendor marketing claim via a secondary copy; configuration and workload not stated")
            notes.append(x["notes"])
        elif cid0.startswith("vllm-wideep-") or cid0.startswith("vllm-gb200-"):
            row = base(x, cid0, "vllm")
            row.update(framework="vllm", layout_basis=f"partly stated: '{x['parallelism']}'",
                       scenario="throughput",
                       metric={"input_tok_per_s_per_gpu": "input_tokens_per_s_per_gpu"}.get(
                           metric, "output_tokens_per_s_per_gpu"), value=num(x["value"], 2))
            if metric == "output_tok_per_s_per_gpu":
                row["output_tokens_per_s_per_gpu"] = num(x["value"], 2)
            if cid0.startswith("vllm-wideep-"):
                reasons.append("workload (input/output lengths) and GPU count not stated; disaggregated wide-EP")
            else:
                reasons.append("matmul precision not stated ('FP8/FP4 (see post)'); disaggregated prefill/decode")
            notes.append(x["notes"])
        else:
            raise ValueError(f"validation_public.csv row {cid0} ({metric}) has no rule in build_measurements.py")
        row["notes"] = "; ".join(n for n in notes if n)
        if not row["hardware"] and not reasons:
            reasons.append(f"hardware not in catalog: {x['hardware']}")
        rows.append(finish(row, reasons))

    # validation_cases.csv rows that are not in validation_public.csv (read directly upstream)
    for vc in vcases:
        if "validation_public.csv row" in vc["source"]:
            continue
        row = blank_row()
        kv = vc["kv_precision"]
        w = {"fp4": "nvfp4", "fp8": "fp8", "bf16": "bf16"}[vc["precision"]]
        m = re.search(r"published ([0-9.]+) output tokens/s", vc["unit_note"])
        row.update({
            "case_id": vc["case_id"], "source_kind": "trtllm", "source_case_id": "",
            "model": vc["model"], "model_upstream": vc["model"], "hardware": vc["hardware"],
            "hardware_upstream": vc["hardware"], "hardware_generation": GENERATION[vc["hardware"]],
            "num_gpus": vc["num_gpus"], "tp": vc["tp"], "pp": vc["pp"], "ep": vc["ep"], "dp": vc["dp"],
            "layout_basis": "stated (as data/validation_cases.csv reads the source)",
            "precision": vc["precision"], "weight_format": w, "kv_precision": kv,
            "precision_basis": "as data/validation_cases.csv reads the source (NVIDIA FP4 checkpoints are NVFP4)",
            "framework": "trtllm", "speculative_decoding": "none", "scenario": "throughput",
            "input_len": vc["input_len"], "input_len_basis": "fixed synthetic input length stated by the source",
            "output_len": vc["output_len"], "output_len_basis": "fixed output length stated by the source",
            "concurrency_or_batch": vc["batch_size"], "metric": vc["metric"], "value": num(vc["measured_value"], 2),
            "system_metric": "output_tokens_per_s_system" if m else "", "system_value": m.group(1) if m else "",
            "output_tokens_per_s_per_gpu": num(vc["measured_value"], 2),
            "source": vc["source"] + "; data/validation_cases.csv", "as_of": vc["as_of"],
            "notes": vc["unit_note"] + "; " + vc["notes"],
        })
        rows.append(finish(row, []))
    return rows


def link_validation_cases(rows: list[dict], vcases: list[dict]) -> None:
    """Fill validation_case_id / in_validation_fit on the rows data/validation_cases.csv was built from."""
    by_case = {r["case_id"]: r for r in rows}
    for vc in vcases:
        m = re.search(r"validation_public.csv row (\S+)", vc["source"])
        target = None
        if m is None:
            target = by_case.get(vc["case_id"])
        else:
            cands = [r for r in rows if r["source_case_id"] == m.group(1) or
                     (r["source_kind"] == "nim" and r["case_id"].startswith(
                         "nim-" + m.group(1).removeprefix("nim-").removesuffix("-itl") + "-"))]
            same = [r for r in cands if r["metric"] == vc["metric"]]
            target = (same or cands or [None])[0]
            if vc["case_id"] == "trtllm-deepseek-r1-b200x8-adp8-ep8-b3072-in1024-out2048-fp4":
                target = None  # its value comes from the Best_perf guide, not that validation_public row
        if target is None:
            if vc["case_id"] == "trtllm-deepseek-r1-b200x8-adp8-ep8-b3072-in1024-out2048-fp4":
                row = blank_row()
                row.update({
                    "case_id": vc["case_id"], "source_kind": "trtllm", "model": vc["model"],
                    "model_upstream": vc["model"], "hardware": vc["hardware"], "hardware_upstream": vc["hardware"],
                    "hardware_generation": GENERATION[vc["hardware"]], "num_gpus": vc["num_gpus"],
                    "tp": vc["tp"], "pp": vc["pp"], "ep": vc["ep"], "dp": vc["dp"],
                    "layout_basis": "stated: attention DP8, MoE EP8 (as data/validation_cases.csv reads the guide)",
                    "precision": vc["precision"], "weight_format": "nvfp4", "kv_precision": vc["kv_precision"],
                    "precision_basis": "as data/validation_cases.csv reads the guide (NVFP4 MoE, BF16 KV)",
                    "framework": "trtllm", "speculative_decoding": "none", "scenario": "throughput",
                    "input_len": vc["input_len"], "output_len": vc["output_len"],
                    "input_len_basis": "fixed synthetic input length stated by the source",
                    "output_len_basis": "fixed output length stated by the source",
                    "concurrency_or_batch": vc["batch_size"], "metric": vc["metric"],
                    "value": num(vc["measured_value"], 2), "output_tokens_per_s_per_gpu": num(vc["measured_value"], 2),
                    "system_metric": "output_tokens_per_s_system", "system_value": "36384.08",
                    "source": vc["source"] + "; data/validation_cases.csv", "as_of": vc["as_of"],
                    "notes": vc["unit_note"] + "; " + vc["notes"],
                })
                rows.append(finish(row, []))
                target = row
            else:
                raise ValueError(f"validation case {vc['case_id']} maps to no measurement row")
        target["validation_case_id"] = vc["case_id"]
        target["in_validation_fit"] = vc["in_fit"]


# ---------------------------------------------------------------------------------------------
# data/measurement_sources/moe_2026.csv (issue 17: MoE serving measurements 2025-2026)
# ---------------------------------------------------------------------------------------------

DEFAULT_SOURCES = REPO / "data" / "measurement_sources"
MOE_TABLE = "moe_2026.csv"

MOE_KIND = {  # case-id prefix -> (source_kind, framework, framework_version)
    "trt12-": ("trtllm", "trtllm", "release/1.2 perf-overview (trtllm-bench)"),
    "trt11-": ("trtllm", "trtllm", "v1.1-era perf-overview (trtllm-bench)"),
    "trtbp-": ("trtllm", "trtllm", "Best_perf_practice_on_DeepSeek-R1 guide (trtllm-bench)"),
    "trtb15-": ("trtllm", "trtllm", "tech blog 15 (trtllm-bench --streaming)"),
    "nvblog-": ("nvidia-blog", "trtllm", "NVIDIA developer blog 2025-05-22"),
    "atom-recipe-": ("atom", "atom", "ROCm ATOM recipe"),
    "atom-tbo-": ("atom", "atom", "ROCm ATOM recipe (TBO guide)"),
    "atomci-": ("atom", "atom", "ROCm ATOM nightly CI"),
    "aic-": ("aiconfigurator", "", ""),
    "vllmrecipe-": ("vllm", "vllm", "vllm-project/recipes"),
    "moreh-": ("moreh", "vllm", "Moreh vLLM 0.11.0rc2.moreh20251212"),
}

MOE_MODEL_UPSTREAM = {  # case-id fragment -> (catalog model id, note); K2-Thinking has its own catalog row
    "kimik2t": ("kimi-k2-thinking", "Kimi-K2-Thinking (catalog kimi-k2-thinking: the Kimi-K2 architecture, 256K context)"),
}

RANGE_RATIO_08 = ("atom-recipe-dsr1-", "atom-recipe-kimik2t-", "atomci-")
"""Rows whose client drew input and output lengths uniformly in [0.8 L, L] (ATOM benchmark_serving
--random-range-ratio 0.8): the mean length is 0.9 L."""


def _moe_layout(par: str):
    """(aggregated layout dict, prefill layout dict or None, decode-batch rule, reasons) from a parallelism text.

    Aggregated dict: tp, dp, ep, pp and a basis. Disaggregated: the decode instance is the aggregated dict,
    the prefill instance a second dict, plus instance counts. Vocabulary of the source table (its NOTES):
    TPn, ADPn (attention data parallel), EPn (expert parallel), 'MoE TPn' (expert tensor parallel), DEPn =
    ADPn + EPn, ``k x prefill (...) + m x decode (...)``.
    """
    t = par.strip()
    reasons: list[str] = []
    if t.startswith("disaggregated:"):
        m = re.match(r"disaggregated: (\d+)x prefill \(TP(\d+) ADP(\d+) EP(\d+)\) \+ (\d+)x decode \(TP(\d+) ADP(\d+) "
                     r"MoE TP(\d+) EP(\d+)\); decode batch (\d+) per (attention-DP rank|decode worker)", t)
        if not m or "EP0" in t or "TP0" in t:
            return None, None, None, ["disaggregated run without complete worker counts or layout in the source"]
        x, ptp, pdp, pep, y, dtp, ddp, dmtp, dep, b, per = m.groups()
        dec = dict(tp=dtp, dp=ddp, ep=dep, pp="1")
        pre = dict(tp=ptp, dp=pdp, ep=pep, pp="1", instances=x)
        batch = int(b) * (int(ddp) if per == "attention-DP rank" else 1)
        return dec, pre, dict(batch=batch, decode_instances=y), reasons
    if re.match(r"\d+P\+\d+D instances, each DP(\d+) EP(\d+)", t):
        m = re.match(r"(\d+)P\+(\d+)D instances, each DP(\d+) EP(\d+)", t)
        x, y, d, e = m.groups()
        return dict(tp="1", dp=d, ep=e, pp="1"), dict(tp="1", dp=d, ep=e, pp="1", instances=x), \
            dict(batch=None, decode_instances=y), reasons
    m = re.match(r"aggregated: TP(\d+)(?:; MoE TP(\d+) EP(\d+))?$", t)
    if m:
        tp, _expert_tp, ep = m.groups()
        return dict(tp=tp, dp="1", ep=ep or "1", pp="1"), None, None, reasons
    m = re.match(r"ADP(\d+) EP(\d+)", t)
    if m:
        return dict(tp="1", dp=m.group(1), ep=m.group(2), pp="1"), None, None, reasons
    m = re.match(r"TP(\d+) attention, MoE EP(\d+) \(x TP(\d+)\)", t)
    if m:
        return dict(tp=m.group(1), dp="1", ep=m.group(2), pp="1"), None, None, reasons
    m = re.match(r"TP(\d+) PP(\d+)", t)
    if m:
        return dict(tp=m.group(1), dp="1", ep="1", pp=m.group(2)), None, None, reasons
    m = re.match(r"TP(\d+) EP(\d+)", t)
    if m:
        return dict(tp=m.group(1), dp="1", ep=m.group(2), pp="1"), None, None, reasons
    m = re.match(r"TP(\d+)\b(?! PP)", t)
    if m and "EP" not in t.replace("(EP1)", ""):
        return dict(tp=m.group(1), dp="1", ep="1", pp="1"), None, None, reasons
    m = re.match(r"DP(\d+) \+ EP(\d+)", t)
    if m:
        return dict(tp="1", dp=m.group(1), ep=m.group(2), pp="1"), None, None, reasons
    if t.startswith("DP2 attention (no EP") or t.startswith("DP2 + two-batch overlap"):
        return None, None, None, ["attention DP2 with tensor-parallel experts (all_gather/reduce_scatter, no EP): "
                                  "measurements.csv's dp without ep means independent replicas in econ's "
                                  "calibration, which this layout is not"]
    return None, None, None, [f"layout not stated ('{t}')"]


def _moe_precision(text: str, model: str, hardware: str):
    """(matmul precision, weight format, kv precision, basis, reasons) from a precision text of the table."""
    t = text.lower()
    reasons: list[str] = []
    kv = "fp8" if "kv fp8" in t else ("bf16" if "bf16 attention/kv" in t else "")
    if t.startswith("int4"):
        return "bf16", "int4", kv, f"source precision '{text}' (INT4 weight-only: bf16 matmuls)", reasons
    if t.startswith("not stated"):
        return "", "", kv, "", ["matmul precision not stated"]
    if t.startswith("table label fp8"):  # gpt-oss on Hopper: BF16 activations x MXFP4 experts, KV auto (bf16)
        return "bf16", "mxfp4", kv or "bf16", (
            f"source precision '{text}': the table labels the Hopper column FP8, but TensorRT-LLM runs gpt-oss on "
            "Hopper with the TRITON MoE backend, BF16 activations x MXFP4 MoE weights (TensorRT-LLM 'Deployment "
            "Guide for GPT-OSS', MoE Backend Support Matrix: H200 | BF16 | MXFP4 | TRITON, "
            "nvidia.github.io/TensorRT-LLM/deployment-guide/deployment-guide-for-gpt-oss-on-trtllm.html), and the "
            "doc's KV dtype auto is the checkpoint's bf16: bf16 matmuls, MXFP4 experts, bf16 KV"), reasons
    if t.startswith("fp4"):
        if GENERATION.get(hardware) in ("hopper", "ampere", "ada", "cdna3"):
            reasons.append(f"source labels the matmuls fp4 ('{text}') on {hardware}, which has no FP4 matmul: the "
                           "precision actually run is not stated")
        w = "mxfp4" if "mxfp4" in t or model.startswith("gpt-oss") else "nvfp4"
        return "fp4", w, kv, f"source precision '{text}'", reasons
    if t.startswith("fp8"):  # 'moe fp8_block', 'native fp8 block': 128 x 128 block-scaled FP8 weights
        return "fp8", "fp8_block" if "block" in t else "fp8", kv, f"source precision '{text}'", reasons
    return "", "", kv, "", [f"precision not understood: '{text}'"]


def moe_rows(sources_dir: Path) -> list[dict]:
    """measurements.csv rows from ``data/measurement_sources/moe_2026.csv`` (rules per case-id prefix).

    The table has the columns of ../shared/reference/validation_public.csv; every row names its source (file and
    commit, or page) and as_of. Mapping: catalog model and hardware ids as given (Kimi-K2-Thinking rows to
    kimi-k2-thinking); layout from ``parallelism`` (:func:`_moe_layout`); precision, weight format and KV dtype
    from ``precision`` (:func:`_moe_precision`); speculative decoding from ``parallelism`` (MTP, EAGLE3);
    scenario: trtllm-bench offline tables ``throughput``, batch-1 figures ``latency``, client runs at a fixed
    concurrency ``fixed-concurrency``. ``concurrency_or_batch`` is per (decode) instance, as econ's calibration
    reads it. Rows the engine cannot represent as published are kept with ``include = false`` and every reason.
    """
    path = sources_dir / MOE_TABLE
    rows = []
    for x in read_csv(path):
        cid = x["case_id"]
        prefix = next(p for p in MOE_KIND if cid.startswith(p))
        kind, framework, fw_version = MOE_KIND[prefix]
        reasons: list[str] = []
        notes: list[str] = []
        what = reserved_source(x["source"], x["model"])
        if what:
            raise ValueError(f"{MOE_TABLE} row {cid} cites a reserved source ({what}): remove it from the table")
        row = blank_row()
        model = x["model"]
        for frag, (mid, note) in MOE_MODEL_UPSTREAM.items():
            if frag in cid:
                model = mid
                notes.append(note)
        hw = x["hardware"]
        if hw not in GENERATION:
            raise ValueError(f"{MOE_TABLE} row {cid}: hardware {hw!r} is not a catalog id")
        par = x["parallelism"]
        m_src = x["source"]
        commit = re.search(r"@([0-9a-f]{7,40})", m_src)
        if kind == "aiconfigurator":
            b = re.search(r"backend (\w+) ([0-9][0-9.a-z]*)", x["notes"])
            if b:
                framework = {"trtllm": "trtllm", "sglang": "sglang", "vllm": "vllm"}.get(b.group(1), b.group(1))
                fw_version = f"{b.group(1)} {b.group(2)} (AIConfigurator silicon sample)"
        if "vLLM with ATOM plugin" in par:
            framework, fw_version = "vllm", "vLLM 0.19 with the ATOM out-of-tree backend (ATOM nightly CI)"
        row.update({
            "case_id": cid, "source_kind": kind, "source_case_id": f"{MOE_TABLE} row {cid}", "model": model,
            "model_upstream": x["model"], "hardware": hw, "hardware_upstream": hw, "hardware_generation": GENERATION[hw],
            "num_gpus": x["num_gpus"], "framework": framework, "framework_version": fw_version,
            "source": m_src + f"; data/measurement_sources/{MOE_TABLE}", "source_commit": commit.group(1) if commit else "",
            "as_of": x["as_of"],
        })
        # layout
        dec, pre, dis, why = _moe_layout(par)
        reasons += why
        if dec:
            row.update(tp=dec["tp"], dp=dec["dp"], ep=dec["ep"], pp=dec["pp"],
                       layout_basis=f"stated: '{par}'")
        if pre:
            row.update(disaggregated="true", prefill_tp=pre["tp"], prefill_dp=pre["dp"], prefill_ep=pre["ep"],
                       prefill_pp=pre["pp"], prefill_instances=pre["instances"], decode_instances=dis["decode_instances"])
        elif dec:
            row["disaggregated"] = "false"
        # precision
        p, w, kv, basis, why = _moe_precision(x["precision"], model, hw)
        reasons += why
        if not kv and re.search(r"llm_options:[^;]*KV fp8", x["notes"]):
            kv, basis = "fp8", basis + "; FP8 KV cache per the doc's llm_options"
        row.update(precision=p, weight_format=w, kv_precision=kv, precision_basis=basis)
        # speculative decoding
        spec = "none"
        if re.search(r"MTP", par):
            spec = "mtp"
            notes.append(f"MTP speculative decoding ('{par}'); acceptance not reported by the source")
        elif "EAGLE" in par.upper():
            spec = "eagle"
            notes.append(f"EAGLE-3 speculative decoding ('{par}'); acceptance not reported by the source")
        elif "two-batch overlap" in par:
            notes.append("two-batch overlap (TBO) on prefill: a mechanism econ's engine does not model yet (issue 17 "
                         "part 2); the layout is representable")
        row["speculative_decoding"] = spec
        # lengths
        il, ol = x["input_len"], x["output_len"]
        if il and ol:
            if cid.startswith(RANGE_RATIO_08):
                row.update(input_len=num(0.9 * float(il), 1), output_len=num(0.9 * float(ol), 1),
                           input_len_basis=f"mean of lengths drawn uniformly in [0.8 L, L] with nominal L = {il} "
                                           "(--random-range-ratio 0.8): 0.9 L",
                           output_len_basis=f"as the input: 0.9 x nominal {ol} (ignore-eos)")
            elif prefix == "trtbp-":
                row.update(input_len=il, output_len=ol, input_len_basis="approximate: 'real dataset ~1K/2K' (source)",
                           output_len_basis="approximate: 'real dataset ~1K/2K' (source)")
            else:
                row.update(input_len=il, output_len=ol, input_len_basis="fixed input length stated by the source",
                           output_len_basis="fixed output length stated by the source")
        else:
            reasons.append("input/output lengths not stated")
        # scenario and batch
        conc = x["concurrency_or_batch"].strip()
        if conc.startswith("max-concurrency"):
            scen, cob = "fixed-concurrency", ""  # request-rate driven: the batch is derived below
        elif conc.startswith("max"):
            scen, cob = "throughput", "max"
        elif prefix in ("trtbp-", "nvblog-") or (prefix == "trtb15-" and conc == "1") or \
                (prefix == "vllmrecipe-" and conc == "1"):
            scen, cob = "latency", "1"
        elif prefix == "vllmrecipe-" and conc.startswith("100 prompts"):
            scen, cob = "fixed-concurrency", "100"
            notes.append("100 prompts at 10 req/s: all 100 in flight after 10 s (a request lasts ~1024 x 0.1 s), so "
                         "concurrency ~100 (derived); TTFT includes the queue")
        else:
            scen, cob = "fixed-concurrency", conc
        if pre is not None:
            if dis["batch"] is not None:
                cob = str(dis["batch"])
                notes.append(f"disaggregated: {pre['instances']} prefill instance(s) (TP{pre['tp']} DP{pre['dp']} "
                             f"EP{pre['ep']}) + {dis['decode_instances']} decode instance(s) (TP{dec['tp']} "
                             f"DP{dec['dp']} EP{dec['ep']}); concurrency_or_batch = decode batch per decode instance "
                             f"= {cob} (system concurrency {conc})")
            else:
                stem = re.sub(r"-(outgpu|tpot|ttft)$", "", cid)
                sib = {y["case_id"]: y for y in read_csv(path) if y["case_id"].startswith(stem + "-")}
                m = re.search(r"system output ([0-9.]+) tok/s", sib.get(stem + "-outgpu", {}).get("notes", ""))
                tpot = float(sib[stem + "-tpot"]["value"]) if stem + "-tpot" in sib else None
                if m and tpot:
                    b = float(m.group(1)) * tpot / int(dis["decode_instances"])
                    cob = str(int(round(b)))
                    notes.append(f"decode batch per decode instance derived by Little's law: system output "
                                 f"{m.group(1)} tok/s x mean TPOT {tpot} s / {dis['decode_instances']} decode "
                                 f"instances = {cob} (request-rate driven run; max-concurrency is a cap)")
                else:
                    reasons.append("request-rate driven disaggregated run: decode batch not stated")
        row.update(scenario=scen, concurrency_or_batch=cob)
        # metric and value
        metric, val = x["metric"], float(x["value"])
        if metric == "output_tokens_per_s_system":
            n = int(x["num_gpus"])
            row.update(metric="output_tokens_per_s_per_gpu", value=num(val / n, 2), system_metric=metric,
                       system_value=x["value"], output_tokens_per_s_per_gpu=num(val / n, 2))
        elif metric in ("output_tokens_per_s_per_gpu", "total_tokens_per_s_per_gpu"):
            m = re.search(r"system (output|total \(input\+output\)) ([0-9.]+) tok/s / (\d+) GPUs", x["notes"])
            if m:
                sysv, n = float(m.group(2)), int(m.group(3))
                val = sysv / n
                row.update(system_metric="output_tokens_per_s_system" if m.group(1) == "output" else
                           "total_tokens_per_s_system", system_value=m.group(2))
            row.update(metric=metric, value=num(val, 2))
            if metric == "total_tokens_per_s_per_gpu":
                share = float(x["output_len"]) / (float(x["input_len"]) + float(x["output_len"]))
                row["output_tokens_per_s_per_gpu"] = num(val * share, 2)
                notes.append(f"output share of total = {x['output_len']} / ({x['input_len']} + {x['output_len']}) "
                             "with fixed lengths (range-ratio 1.0)")
            elif m and m.group(1) == "output":
                row["output_tokens_per_s_per_gpu"] = num(val, 2)
            else:
                row["output_tokens_per_s_per_gpu"] = num(val, 2)
        else:
            row.update(metric=metric, value=num(val, 6))
        if cid.endswith("-decgpu"):
            reasons.append("derived decode-only throughput per decode GPU (decode batch / (TPOT x TP)): a restatement "
                           "of this run's TPOT row, not an independent measurement")
        if prefix == "moreh-" and metric != "tpot_s" and metric != "ttft_s":
            reasons.append("throughput of a request-rate driven run whose decode batch is derived from it (Little's "
                           "law): only its TPOT and TTFT are compared")
        # source-specific doubts (data/measurement_sources/README section of data/README.md)
        if cid.startswith("atom-recipe-dsr1-mi300x"):
            reasons.append("hardware label possibly stale: the recipe says 8x MI300X but its numbers sit within ~5-25% "
                           "of the MI355X nightly CI runs of the same configuration")
        if cid.startswith("vllmrecipe-kimik2-h200"):
            reasons.append("layout of this run not stated (probably TP8 PP2 over 2 nodes, low confidence)")
        if prefix == "vllmrecipe-" and "h800" in cid:
            notes.append("TP8 PP2 across 2 nodes from the guide's launch command; whether decode context parallel "
                         "(-dcp 8) was on for this run is not stated (small effect at ~1.5K context)")
        if prefix == "nvblog-":
            reasons.append("figure read through secondary summaries of the NVIDIA blog (Artificial Analysis workload "
                           "not stated)")
        if prefix == "trt12-" and hw in ("b300", "gb300-nvl72"):
            notes.append("B300/GB300 support is flagged beta in this doc (perf data not finalized)")
        if model == "deepseek-v3.2":
            notes.append("DeepSeek-V3.2 sparse attention (DSA lightning indexer, top-2048) is not modelled yet: econ "
                         "predicts it as DeepSeek-V3 (dense MLA)")
        if model.startswith("kimi-k2.") or model == "kimi-k2-thinking":
            if w == "int4":
                notes.append("native INT4 checkpoint (INT4 routed experts, bf16 rest): econ serves it as the "
                             "release's pinned formats (models.csv native_weight_dtype, mapped to mxfp4)")
        if kind == "aiconfigurator" and "agg" in cid and pre is None:
            notes.append("speculative decoding not indicated by the dump (assumed off)")
        notes.append(x["notes"])
        row["notes"] = "; ".join(n_ for n_ in notes if n_)
        rows.append(finish(row, reasons))
    return rows


PER_TENSOR_FP8 = re.compile(r"moe fp8[),;]")
"""A precision text stating per-tensor FP8 experts (AIConfigurator's 'gemm fp8, moe fp8', against 'moe fp8_block')."""


def block_fp8_formats(rows: list[dict], models_csv: Path = REPO / "data" / "models.csv") -> None:
    """FP8 weights of a model released in 128 x 128 block-scaled FP8 are that release (``fp8_block``), in place.

    A model whose ``models.csv`` ``native_weight_dtype`` is ``fp8_block`` (DeepSeek-V3/R1/V3.2, Kimi-K2) and a row
    reading its weights as ``fp8`` get ``weight_format = fp8_block`` (the basis says so), except where the source
    states per-tensor FP8 experts (:data:`PER_TENSOR_FP8`): the engine then prices the experts' block-scaled GEMMs
    (econ.physics.precision.BLOCK_FP8_MOE_FLOP_FRAC).
    """
    block = {m["id"] for m in read_csv(models_csv) if m["native_weight_dtype"] == "fp8_block"}
    for r in rows:
        if r["model"] in block and r["weight_format"] == "fp8" and not PER_TENSOR_FP8.search(r["precision_basis"]):
            r["weight_format"] = "fp8_block"
            r["precision_basis"] += ("; weights: the release's 128 x 128 block-scaled FP8 (models.csv native_weight_dtype "
                                     "fp8_block)")


def build(reference_dir: Path, validation_cases: Path, sources_dir: Path = DEFAULT_SOURCES) -> str:
    """Return the CSV text of data/measurements.csv built from the reference files and the repo's source tables."""
    vcases = read_csv(validation_cases)
    rows = mlperf_rows(reference_dir) + vp_rows(reference_dir, vcases) + moe_rows(sources_dir)
    block_fp8_formats(rows)
    link_validation_cases(rows, vcases)
    ids = [r["case_id"] for r in rows]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"duplicate case_id: {sorted(dup)}")
    rows.sort(key=lambda r: (r["source_kind"], r["case_id"]))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference-dir", type=Path, default=DEFAULT_REFERENCE,
                    help="folder with validation_public.csv and mlperf_v*.csv (default: ../shared/reference)")
    ap.add_argument("--validation-cases", type=Path, default=REPO / "data" / "validation_cases.csv")
    ap.add_argument("--sources-dir", type=Path, default=DEFAULT_SOURCES,
                    help="folder with the sourced measurement tables (default: data/measurement_sources)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if not (args.reference_dir / "validation_public.csv").is_file():
        print(f"error: --reference-dir {args.reference_dir} has no validation_public.csv", file=sys.stderr)
        return 2
    if not (args.sources_dir / MOE_TABLE).is_file():
        print(f"error: --sources-dir {args.sources_dir} has no {MOE_TABLE}", file=sys.stderr)
        return 2
    text = build(args.reference_dir, args.validation_cases, args.sources_dir)
    tmp = args.out.with_suffix(".csv.tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    tmp.replace(args.out)
    print(f"wrote {args.out} ({text.count(chr(10)) - 1} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
