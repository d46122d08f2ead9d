"""Calibration of the efficiency profiles on public measurements, with grouped cross-validation.

The one engine (:func:`econ.engine.evaluate`) takes its efficiencies per (accelerator generation, matmul
precision) from ``data/calibration.csv``. This module writes that table from ``data/measurements.csv``
(MLPerf Inference v4.0/v4.1/v5.0, TensorRT-LLM tables and blogs, NVIDIA NIM, SemiAnalysis InferenceX,
vLLM; data/README.md) in four steps, each a pure function:

1. :func:`cases_to_points` maps every included measurement to engine points whose predicted quantity has
   the measured one's definition (:data:`PREDICTED_AS`): offline throughput at the batch the system runs
   (KV capacity capped by the engine limit, or the stated batch); fixed-concurrency rows at their
   concurrency; MLPerf Server and Interactive rows at the highest load whose p99 TTFT and p99 TPOT stay
   under the scenario's limits (a batch grid, Poisson arrivals, econ.physics.serving), never as offline runs;
   InferenceX rows at their speed per user, on the best of a few layouts. Layouts, precisions, weight and
   KV formats and speculative decoding are those the row states; the serving engine (:func:`engine_class`)
   decides whether the step's host time hides under the GPU's (:data:`ENGINE_OVERLAP_SCHEDULER`).
2. :func:`fit`: maximum a posteriori estimate of the profile parameters (:data:`FIT_PARAMETERS`) by
   regularized least squares on ln(measured / predicted) (``scipy.optimize.least_squares``): one shared
   (global) value per parameter with a sourced prior (:data:`PRIORS`, from the AIConfigurator kernel
   tables in data/kernels/ and the v1 fit), and per-profile deviations shrunk toward it
   (:data:`SHRINKAGE`), so a thin profile stays near the shared value. A profile with fewer than
   :data:`MIN_GROUPS` independent groups is not fitted: it copies its nearest generation
   (:data:`FALLBACK_GENERATION`) and says so (``fallback_from``).
3. :func:`cross_validate`: grouped cross-validation, leaving out one whole model x hardware group
   (``group_id``) at a time; every reported error and every band comes from held-out predictions only.
4. :func:`calibration_frame`: the table (CALIBRATION_SCHEMA of econ.tables.catalog) with Gauss-Newton (Jacobian)
   standard errors of the fitted parameters (a bootstrap over groups only for the measured TPOT tail factor:
   a bootstrap of the whole fit, ~4 s per draw and a few hundred draws, is left out of ``econ calibrate``),
   held-out error quantiles, case and group
   counts, fit date and source; :func:`write_calibration` writes it atomically (econ.safe_write).

Residuals are ln(measured rate / predicted rate) (a time's rate is its inverse), so a 2x miss weighs the
same on a 6 ms TPOT as on a 20,000 tokens/s throughput; each case is weighted 1 / sqrt(cases in its
group) so the 70 MLPerf runs of one system do not outweigh a group with three.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.assumptions import (DEFAULT, DEFAULT_DEPLOYMENT, PROFILE_PARAMETERS, Assumptions, DeploymentAssumptions,
                              Economics)
from econ.tables.catalog import DEFAULT_DATA_DIR, Catalog
from econ.vocabulary import GENERATIONS, PREFILL_LAYER_DISPATCH_BY_ENGINE_S as _DISPATCH
from econ.engine import evaluate
from econ.physics.serving import closed_loop_wait_s
from econ.errors import DataError, EconError, InvalidInputError

MEASUREMENTS_PATH = DEFAULT_DATA_DIR / "measurements.csv"
CALIBRATION_PATH = DEFAULT_DATA_DIR / "calibration.csv"
ERRORS_PATH = DEFAULT_DATA_DIR / "calibration_errors.csv"
PREDICTIONS_PATH = DEFAULT_DATA_DIR / "calibration_predictions.csv"

# ------------------------------------------------------------------------------------------------
# What a case is
# ------------------------------------------------------------------------------------------------

METRICS: dict[str, bool] = {
    "output_tokens_per_s_per_gpu": True, "total_tokens_per_s_per_gpu": True, "tokens_per_s_per_user": True,
    "tpot_s": False, "ttft_s": False, "e2e_latency_s": False,
}
"""Measured metrics -> True for a rate (larger is faster), False for a time. [-]"""

PREDICTED_AS: dict[str, str] = {
    "output_tokens_per_s_per_gpu": "served_output_tokens_per_s_per_gpu of an aggregated instance at the batch (prefill "
                                   "of each request's prompt included, as every end-to-end throughput is measured); "
                                   "a trtllm-bench table's finite dataset (BENCH_REQUESTS) as waves of the KV "
                                   "capacity, the last one partial and as separate as the prompts are quick beside "
                                   "the decode (finite_run_throughput)",
    "total_tokens_per_s_per_gpu": "InferenceX input + output: compared on its output share (the measurement's "
                                  "output_tokens_per_s_per_gpu column, mean ISL = 90% of nominal)",
    "tokens_per_s_per_user": "1 / tpot_s: decode speed of one sequence",
    "tpot_s": "tpot_s + prefill_stall_s x (B - 1) / B: inter-token time, with the prompts of the other B - 1 requests "
              "interleaved (a request's own prompt is its TTFT)",
    "ttft_s": "ttft_s (the prompt alone) + the mean wait for the prefill servers of a closed loop of min(concurrency, "
              "KV slots) clients, each away for its decode between requests (finite-source queue by mean value "
              "analysis, econ.physics.serving.closed_loop_wait_s; a disaggregated decode instance is served by its "
              "share of the prefill pool, prefill_instances / decode_instances) + the wait for a free KV slot when "
              "the concurrency exceeds the KV-cache capacity (Little's law)",
    "e2e_latency_s": "ttft_s + output_len x tpot_s at the batch",
}
"""How each metric is predicted from the engine's result columns."""

SCENARIO_FAMILY: dict[str, str] = {
    "offline": "offline", "throughput": "offline", "server": "server", "interactive": "interactive",
    "latency": "single-stream", "fixed-concurrency": "fixed-concurrency",
}
"""measurements.csv ``scenario`` -> the family the error table reports (trtllm-bench at infinite request rate
and static batches are offline runs)."""

_MLPERF_LENGTHS = ("token lengths of the MLCommons dataset pickle as the SUT receives it (tok_input_length / "
                   "tok_input_len), extracted to openshift-psap/performance-dashboard mlperf-data/summaries/"
                   "{file} @7100702 (Red Hat PSAP; a summary of the public MLCommons dataset, not of any results)")

MLPERF_PROMPT_TOKENS: dict[str, tuple[int, str]] = {
    "llama2-70b": (222, "the mean prompt of the 24,576 OpenOrca samples, 222.3 tokens (median 152, max 1,021): "
                        + _MLPERF_LENGTHS.format(file="llama2-70b-99.csv")),
    "llama2-70b-interactive": (222, "as llama2-70b (the same OpenOrca samples)"),
    "mixtral-8x7b": (427, "the mean prompt of the 15,000 OpenOrca / GSM8K / MBXP samples, 427.4 tokens (median 283, "
                          "max 1,948): " + _MLPERF_LENGTHS.format(file="mixtral-8x7b.csv")),
    "llama3_1-405b": (9429, "the mean prompt of the 8,313 long-context samples, 9,428.6 tokens (median 10,112, max "
                            "19,988): " + _MLPERF_LENGTHS.format(file="llama3-1-405b.csv")),
}
"""Mean prompt length of each MLPerf benchmark's dataset (output lengths are each run's realized mean,
measurements.csv), with its source. [tokens]"""

INFERENCEX_ISL_FRAC = 0.9
"""InferenceX samples each prompt uniformly in 80-100% of the nominal ISL (validation_public row
ix-v1-isl-jitter): mean 90%, as measurements.csv derives the output share. [-]"""

STATED_SPECULATION: dict[str, tuple[str, int, float, str]] = {
    "trtllm-dsr1-b200-minlat-final": ("mtp", 3, 0.83, "3 MTP draft tokens; 'accept rate ~3.1' tokens per step "
                                                      "(TensorRT-LLM tech blog 1) -> a = 0.83 by (1 - a^4)/(1 - a) = 3.1"),
    "trtllm-dsr1-b200-minlat-mtp3-gtc": ("mtp", 3, 0.85, "3 MTP draft tokens (tech blog 1); acceptance not stated: "
                                                         "the model's MTP default 0.85 (models.csv)"),
}
"""Speculative decoding of the rows that state it: (method, draft tokens, acceptance, basis). Rows with
``speculative_decoding = none`` or ``unknown`` decode plainly (the model's MTP default is switched off)."""

ENGINE_OVERLAP_SCHEDULER: dict[str, tuple[bool, str]] = {
    "tensorrt-llm-cpp": (False, "TensorRT-LLM's C++ runtime and TensorRT engines (MLPerf v4.0-v5.0, the perf tables up "
                              "to v0.17, NIM 1.8, gptSessionBenchmark): no overlap scheduler, the step's host time "
                              "adds to its kernels"),
    "tensorrt-llm-pytorch": (True, "TensorRT-LLM >= 1.0, whose default backend is PyTorch, with the 'Overlap "
                                  "Scheduler ... Enabled by default' (nvidia.github.io/TensorRT-LLM/features/"
                                  "overlap-scheduler.html): the host prepares step n + 1 while the GPU runs step n"),
    "sglang": (True, "SGLang >= 0.4: the zero-overhead overlap scheduler is on by default (sgl-project/sglang "
                    "server_args.py disable_overlap_schedule=False)"),
    "vllm-async": (True, "vLLM >= 0.14: async scheduling on by default (vllm-project/vllm #27614, the last item of "
                        "the async scheduling plan #27679; vllm-project/vllm-ascend #9567 'now enabled by default'), "
                        "and vLLM-based stacks on such a vLLM (ROCm ATOM's vLLM 0.19 backend)"),
    "vllm-sync": (False, "vLLM V0 (MLPerf v4.1/v5.0 ROCm builds, 0.4-0.6: 5-13 ms GPU bubbles per step, "
                       "vllm-project/vllm #10634) and V1 before async scheduling became the default (0.8-0.13, "
                       "--async-scheduling opt-in since #19970)"),
    "unknown": (False, "engine or version not stated (InferenceX 'best configuration', ROCm ATOM's own engine, "
                     "vLLM recipes and CI without a version): predicted without one, the host time added"),
}
"""Whether each serving-engine class runs an overlap scheduler, with its source. A measurement of an engine with one
is predicted with the profile's calibrated ``cpu_overlap_frac`` (the share of the GPU time under which the host
prepares the next step, :func:`econ.physics.performance.exposed_cpu_time_s`; TensorRT-LLM's PyTorch executor with the
share held in :data:`ENGINE_CPU_OVERLAP_HELD`), one without at 0 (the host time adds):
so ``overhead_s`` is fitted as the host time it is, hidden where the engine overlaps it, rather than as one
per-generation average of hidden and exposed host time (:func:`engine_class`)."""


ENGINE_CPU_OVERLAP_HELD: dict[str, tuple[float, str]] = {
    "tensorrt-llm-pytorch": (1.0, "TensorRT-LLM's PyTorch executor launches step n + 1 on the device-side tokens of "
                                  "step n ('At step n, the system launches GPU computation for step n+1 without "
                                  "waiting for CPU tasks ... from step n', _forward_step(scheduled_batch, "
                                  "previous_tensors_device); nvidia.github.io/TensorRT-LLM/features/"
                                  "overlap-scheduler.html): no host work gates the next step, so the host time "
                                  "shows only where it outlasts the GPU's"),
}
"""``cpu_overlap_frac`` held for the measurements of a serving-engine class whose overlap scheduler hides the whole
host step by design (value, source), where the other engines with one are predicted at the profile's calibrated
share (:data:`ENGINE_OVERLAP_SCHEDULER`, :func:`_engine_assumptions`). Since stop 37: with the kernel floors affine
in the model width (:data:`econ.physics.performance.KERNEL_WIDTH_INDEPENDENT_SHARE`) TensorRT-LLM's batch-1 steps
are GPU-bound, as its design says; fitted together with vLLM's, its share had been pulled to 0.35-0.42."""


MEASURED_EXPERT_IMBALANCE = 1.56
"""Busiest expert-parallel rank's routed load over the mean in the measured deployments: none states an expert load
balancer (EPLB, redundant experts), which vLLM, SGLang and TensorRT-LLM leave off by default, so each is predicted at
routing's own skew: 1.56, the median latency of NVIDIA AIConfigurator's EP8 fused-MoE kernels under its power-law
(alpha 1.01) expert distribution over the same kernels under a balanced one, at >= 256 tokens per expert where the
busiest rank's FLOPs set the time (data/kernels/moe_efficiency.csv: 106 pairs, Qwen3-235B, gpt-oss-120b and
DeepSeek-V3 on H100-GB300, interquartile 1.45-1.67; below ~32 tokens per expert the ratio is ~1, the weights being
read whatever the routing, as :func:`econ.physics.performance` treats it). The product's default
(``DeploymentAssumptions.expert_imbalance_factor`` 1.2) is a deployment with a load balancer. [-]"""

def kv_of_free_memory(engine: str) -> bool:
    """Whether a measurement of serving-engine class ``engine`` sized its KV cache as TensorRT-LLM does, a share of the
    free memory (``kv_memory_rule`` "free", :func:`econ.physics.memory.kv_pool_bytes`), rather than of the total
    (vLLM, SGLang: "total")."""
    return engine.startswith("tensorrt-llm")


ENGINE_PREFILL_DISPATCH_S: dict[str, tuple[float | None, str]] = {
    "tensorrt-llm-cpp": (_DISPATCH["tensorrt-llm-cpp"], "a compiled TensorRT engine, enqueued whole by the C++ "
                                                        "runtime: no per-operator host dispatch beyond the kernel "
                                                        "launches (kernel_launch_eager_s)"),
    "tensorrt-llm-pytorch": (_DISPATCH["tensorrt-llm-pytorch"], "the PyTorch executor dispatches each operator from "
                                                                "Python: the median TTFT per layer of Qwen3-32B (64 "
                                                                "layers) on H100 at TP4-8, 1K-token prompts, "
                                                                "concurrency 8, less a roofline prefill at half the "
                                                                "peak (6 rows, 1.57-2.13 ms; AIConfigurator "
                                                                "silicon_sample.csv @095f58a5, a model outside econ's "
                                                                "measurements)"),
    "sglang": (_DISPATCH["sglang"], "the median TTFT per layer of Qwen3.5-397B-A17B (60 layers) on H200/B200/B300 "
                                    "at TP4-64, 1K-token prompts, concurrency 4-8, less a roofline prefill at half the "
                                    "peak (78 rows of AIConfigurator silicon_sample.csv @095f58a5; 156-383 ms "
                                    "whatever the TP and precision)"),
    "vllm-async": (None, "vLLM's torch.compile'd pass: the field's default, AIConfigurator's vLLM value"),
    "vllm-sync": (None, "as vllm-async"),
    "unknown": (None, "the default (vLLM's)"),
}
"""Host dispatch time per decoder layer of a prefill pass per serving-engine class (``None``: the
``Assumptions.prefill_layer_dispatch_s`` given, by default vLLM's), with its source: each measurement is predicted
with its engine's (:func:`predict`), so TTFT at short prompts is held to the engine that was measured
(:func:`econ.physics.performance.prefill_dispatch_s`)."""


def engine_class(source_kind: str, framework: str | None, framework_version: str | None, case_id: str) -> str:
    """Serving-engine class of a measurement row (a key of :data:`ENGINE_OVERLAP_SCHEDULER`).

    Parameters
    ----------
    source_kind, framework, framework_version, case_id : str (or None), columns of data/measurements.csv; the
        AIConfigurator silicon sample names its backend in the case id where ``framework`` is empty

    Returns
    -------
    str
    """
    fw = (framework or "").lower()
    ver = (framework_version or "").lower()
    if not fw and source_kind == "aiconfigurator":
        fw = next((k for k in ("trtllm", "sglang", "vllm") if f"-{k}-" in case_id), "")
    if fw == "sglang":
        return "sglang"
    if fw == "trtllm":
        if source_kind.startswith("mlperf") or source_kind in ("nim", "nvidia-blog") or re.match(r"v0\.", ver):
            return "tensorrt-llm-cpp"
        # the 1.x perf tables, the 2025 blogs and guides, the 2026 AIConfigurator dump (whose 0.x version is not
        # TensorRT-LLM's: it ran DeepSeek-R1 FP4 on Blackwell, which TensorRT-LLM 0.x could not)
        return "tensorrt-llm-pytorch"
    if fw == "vllm":
        m = re.search(r"vllm (\d+)\.(\d+)", ver)
        if m:
            return "vllm-async" if (int(m.group(1)), int(m.group(2))) >= (0, 14) else "vllm-sync"
        return "vllm-async" if source_kind == "aiconfigurator" else "unknown"  # AIConfigurator: a 2026-04 dump
    return "unknown"


_TRTLLM_PERF_V0_17 = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (2048, 128): 3000, (2048, 2048): 1500,
                      (5000, 500): 1500, (1000, 1000): 3000, (500, 2000): 3000, (20000, 2000): 1000}
_TRTLLM_PERF_V1_1 = {(1024, 1024): 3000, (8192, 1024): 1500, (1024, 8192): 1500, (32768, 1024): 1000,
                     (1024, 32768): 1000}

BENCH_REQUESTS: tuple[tuple[str, dict[tuple[int, int], int], str], ...] = (
    ("perf-overview.md (commit 258c754", _TRTLLM_PERF_V0_17,
     "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @258c754 (v0.17), '$num_requests' table"),
    ("perf-overview.md (commit 00f3768", _TRTLLM_PERF_V0_17 | {(1000, 2000): 1500},
     "NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @00f3768 (v1.0), '$num_requests' table"),
    ("perf-overview.md@03e27c7d", _TRTLLM_PERF_V1_1,
     "NVIDIA/TensorRT-LLM docs/source/developer-guide/perf-overview.md @03e27c7d (v1.1), 'Number of Requests' table"),
    ("perf-overview.md (release/1.2", _TRTLLM_PERF_V1_1,
     "NVIDIA/TensorRT-LLM docs/source/developer-guide/perf-overview.md (release/1.2), 'Number of Requests' table"),
)
"""Requests in the dataset of each trtllm-bench throughput table, by (ISL, OSL), with the table's source: (substring
of a measurement's ``source``, {(input_len, output_len): requests}, citation). trtllm-bench queues every request at
once ('an offline maximum throughput scenario such that all requests are queued in rapid succession', same docs), with
one input and one output length (the docs' prepare_dataset.py token-norm-dist with both standard deviations 0), so a
run is finite: a dataset smaller than the KV-cache capacity never fills the batch, and a larger one ends in a partial
wave (:func:`finite_run_throughput`).
An (ISL, OSL) pair a table does not list would be predicted at the steady state (every trtllm-bench row of
data/measurements.csv has its pair listed: tests/analyses/test_finite_runs.py)."""


def bench_requests(source_kind: str, scenario: str, source: str | None, input_len, output_len) -> float:
    """Requests in the finite dataset of a trtllm-bench throughput row (:data:`BENCH_REQUESTS`); NaN when not
    stated (every other row: a steady state is assumed)."""
    if source_kind != "trtllm" or scenario != "throughput" or not source or input_len is None or output_len is None:
        return float("nan")
    for key, table, _ in BENCH_REQUESTS:
        if key in source:
            n = table.get((int(round(input_len)), int(round(output_len))))
            return float(n) if n else float("nan")
    return float("nan")


def finite_run_throughput(requests, capacity, rate_full, rate_rest, rest_batch, sync=1.0):
    """Throughput of a finite run of identical requests queued at once, in waves of the KV-cache capacity.

    Parameters
    ----------
    requests : scalar, requests in the dataset N (> 0) [-]
    capacity : scalar, the batch a wave holds B (>= 1): the KV-cache capacity, or N when N <= B [sequences]
    rate_full : scalar, steady-state throughput at batch B [tokens/s per GPU]
    rate_rest : scalar, steady-state throughput at ``rest_batch`` [tokens/s per GPU]
    rest_batch : scalar, the batch the last wave runs at: max(N - kB, attention groups) [sequences]
    sync : scalar in [0, 1], how far the requests of a wave finish together: 1 - (prompt time / decode time) of a
        wave at batch B (``prefill_stall_s / tpot_s`` of the engine) [-]

    Returns
    -------
    scalar [tokens/s per GPU] = N / (k B / rate_full + sync b_r / rate_rest + (1 - sync) r / rate_full),
    k = floor(N / B) full waves, r = N - kB the requests left for the last wave, b_r its batch; ``rate_full`` when
    r = 0 (N a multiple of B, or N <= B evaluated at batch N).

    Raises
    ------
    ValueError
        ``requests`` or ``capacity`` below 1.

    Notes
    -----
    With every request of the same input and output length and all queued at t = 0 (trtllm-bench throughput,
    :data:`BENCH_REQUESTS`), the requests admitted together finish together, so the run is a sequence of waves: k of
    B requests and one of r. A wave of b requests takes b x OSL / (rate(b) x GPUs), rate(b) the engine's steady-state
    throughput at batch b (prefill of its prompts included); the run's throughput is all its output over the waves'
    time. The waves are as synchronised as the prompts of a wave are quick beside its decode: a wave's prompts are
    prefilled over at least its prompt time S (``prefill_stall_s`` x OSL), so its requests finish spread over S, and
    the last requests start as the first of the wave before them finish. ``sync`` = 1 - S / D (D the wave's decode
    time) interpolates between separate waves (prompts much quicker than decode: the last wave runs alone at batch
    b_r) and a steady flow (prompts as long as decode: the last r requests fill slots as they free, at the full
    wave's rate). The ramp of the first wave is the steady state's prefill work, not a loss. Orchestration-free
    arithmetic.
    """
    if not (requests >= 1 and capacity >= 1):
        raise ValueError(f"requests={requests!r} and capacity={capacity!r} must both be >= 1")
    k = math.floor(requests / capacity)
    rest = requests - k * capacity
    if rest <= 0 or k == 0:
        return float(rate_full)
    sync = min(max(float(sync), 0.0), 1.0)
    t = k * capacity / rate_full + sync * rest_batch / rate_rest + (1.0 - sync) * rest / rate_full
    return requests / t


NOT_REPRESENTABLE: dict[str, str] = {
    "nv-specdec-llama70b-h200-draft": "draft model (Llama-3.2-1B) not in models.csv and its acceptance not stated",
}
"""Included rows econ cannot represent as published: predicted for the record, left out of the fit and
of the error table (each with the reason)."""

PHYSICS_ECONOMICS = Economics(basis="custom", usd_per_gpu_hour=1.0)
"""Any priced basis: calibration reads physics columns only, and an accelerator without a capex (MI325X, MI355X)
must not come back infeasible for want of a price."""

SLO_GRID_POINTS = 24
"""Batches (geometric, 1 to the capacity) at which a Server/Interactive row's p99 latencies are evaluated;
the sustainable load is interpolated in ln(batch) between the last point that meets both limits and the
first that does not, so the prediction is continuous in the parameters."""

INTERACTIVITY_LAYOUTS: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (2, 1, 1), (4, 1, 1), (8, 1, 1))
"""(tp, dp, ep) tried for an InferenceX row (layout unknown: 'best configuration per GPU'); MoE models also try
attention-DP + EP at 2, 4 and 8 GPUs."""


@dataclass(frozen=True)
class Cases:
    """Measurements mapped to engine points (:func:`cases_to_points`).

    Attributes
    ----------
    table : pl.DataFrame, one row per included measurement: ``case_id``, ``group_id``, ``source_kind``,
        ``model``, ``hardware``, ``generation``, ``precision``, ``profile`` (``<generation>-<precision>``),
        ``scenario``, ``family`` (:data:`SCENARIO_FAMILY`), ``moe`` (bool), ``metric``, ``measured`` (the
        metric's unit), ``kind`` (``point`` | ``slo`` | ``interactivity``), ``representable`` (bool) and
        ``reason``, ``batch_size`` (the batch of a ``point`` case), ``bench_requests`` (a trtllm-bench table's dataset
        size, :func:`bench_requests`; NaN elsewhere), limits and targets.
    points : pl.DataFrame, engine points (:func:`econ.engine.evaluate` columns) plus ``case`` (row of
        ``table``) and ``layout_id`` (the layout candidate of an interactivity case; 1 for the partial last wave
        of a finite trtllm-bench run, :func:`finite_run_throughput`; else 0).
    """

    table: pl.DataFrame
    points: pl.DataFrame

    def __len__(self) -> int:
        return self.table.height

    def subset(self, mask) -> "Cases":
        """The cases where ``mask`` (bool array over ``table``) is true, points renumbered."""
        mask = np.asarray(mask, dtype=bool)
        keep = np.flatnonzero(mask)
        remap = np.full(self.table.height, -1, dtype=np.int64)
        remap[keep] = np.arange(keep.size)
        pts = self.points.filter(pl.col("case").is_in(keep.tolist()))
        pts = pts.with_columns(pl.Series("case", remap[pts["case"].to_numpy()]))
        return Cases(self.table.filter(pl.Series(mask)), pts)


def load_measurements(path: str | Path | None = None) -> pl.DataFrame:
    """The included rows of ``measurements.csv`` with numeric columns typed.

    Parameters
    ----------
    path : str or Path, optional; default ``data/measurements.csv``.

    Returns
    -------
    pl.DataFrame, one row per row with ``include = true`` (all columns of data/README.md, numbers as Float64).

    Raises
    ------
    DataError
        The file is missing, lacks a required column, or a numeric cell is not a number.
    """
    from econ.safe_write import describe_os_error

    p = Path(path) if path is not None else MEASUREMENTS_PATH
    try:
        exists = p.is_file()
    except OSError as exc:
        raise DataError(f"cannot read measurements file {str(p)!r}: {describe_os_error(exc)}") from None
    if not exists:
        raise DataError(f"measurements file {str(p)!r} does not exist (or is not a file)")
    try:
        raw = pl.read_csv(p, infer_schema_length=0)
    except OSError as exc:
        raise DataError(f"cannot read measurements file {str(p)!r}: {describe_os_error(exc)}") from None
    except (pl.exceptions.PolarsError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"measurements file {str(p)!r} is not a readable CSV ({type(exc).__name__})") from None
    need = ("case_id", "group_id", "source_kind", "model", "hardware", "hardware_generation", "num_gpus", "tp", "pp",
            "ep", "dp", "precision", "weight_format", "kv_precision", "speculative_decoding", "scenario", "benchmark",
            "input_len", "output_len", "concurrency_or_batch", "ttft_limit_s", "tpot_limit_s", "latency_percentile",
            "tokens_per_s_per_user_target", "metric", "value", "output_tokens_per_s_per_gpu",
            "measured_mean_tpot_s", "measured_p99_tpot_s", "include")
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise DataError(f"{p.name}: missing column(s) {', '.join(missing)}")
    raw = raw.select(pl.col(c).cast(pl.String) for c in raw.columns)
    rows = raw.filter(pl.col("include").str.to_lowercase() == "true")
    numeric = ("num_gpus", "tp", "pp", "ep", "dp", "input_len", "output_len", "ttft_limit_s", "tpot_limit_s",
               "latency_percentile", "tokens_per_s_per_user_target", "value", "output_tokens_per_s_per_gpu",
               "measured_mean_tpot_s", "measured_p99_tpot_s")
    out = rows.with_columns(pl.col(c).str.strip_chars().cast(pl.Float64, strict=False).alias(c) for c in numeric)
    ids = rows["case_id"].fill_null("?").to_list()
    for c in numeric:
        given = rows[c].is_not_null() & (rows[c].str.strip_chars() != "")
        bad = np.flatnonzero((given & (out[c].is_null() | ~out[c].is_finite().fill_null(True))).to_numpy())
        if bad.size:
            i = int(bad[0])
            raise DataError(f"{p.name}, case {ids[i]}, column {c}: {rows[c][i]!r} is not a finite number")
    positive = ("num_gpus", "tp", "pp", "ep", "dp", "input_len", "output_len", "ttft_limit_s", "tpot_limit_s",
                "latency_percentile", "tokens_per_s_per_user_target", "value", "output_tokens_per_s_per_gpu",
                "measured_mean_tpot_s", "measured_p99_tpot_s")  # a measurement, a rate or a time is never <= 0
    for c in positive:
        bad = np.flatnonzero((out[c] <= 0).fill_null(False).to_numpy())
        if bad.size:
            i = int(bad[0])
            raise DataError(f"{p.name}, case {ids[i]}, column {c}: {out[c][i]:g} must be > 0")
    for c in ("case_id", "group_id", "model", "hardware", "precision", "scenario", "metric", "output_len"):
        bad = np.flatnonzero(out[c].is_null().to_numpy())
        if bad.size:
            raise DataError(f"{p.name}, case {ids[int(bad[0])]}, column {c}: empty (required on included rows)")
    return out


FOUR_BIT_FORMATS: frozenset = frozenset({"mxfp4", "nvfp4", "int4"})
"""Weight formats a row may state for a model whose release pins its formats (gpt-oss MXFP4; Kimi-K2.5 and
K2-Thinking INT4, mapped to the same pin in models.csv): such a row is served as the release's pinned formats
(4-bit routed experts, bf16 everything else), not as an all-4-bit model (AIConfigurator labels gpt-oss 'nvfp4'; the
measurement's weight_format column has no separate expert format)."""

DISAGGREGATED_COLUMNS: tuple[str, ...] = ("prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances",
                                          "decode_instances")
"""measurements.csv columns of a disaggregated run (optional): the prefill pool's instance layout and the number of
prefill and decode instances; ``tp``/``dp``/``ep``/``pp`` are then the decode instance and ``concurrency_or_batch``
its batch."""


def _disaggregated(r: dict) -> dict:
    """The engine's disaggregation inputs of a measurements row (all None for an aggregated run)."""
    on = str(r.get("disaggregated") or "").strip().lower() == "true"
    out = {"disaggregated": on}
    for c in DISAGGREGATED_COLUMNS:
        v = r.get(c)
        out[c] = float(v) if on and v not in (None, "") else None
    return out


def _concurrency(text: str | None) -> float | None:
    """``concurrency_or_batch`` as a number (``~250`` -> 250), None for empty or ``max``."""
    if text is None or text.strip() in ("", "max"):
        return None
    return float(text.strip().lstrip("~"))


def _geometric_grid(cap: float, n: int = SLO_GRID_POINTS, steps: tuple[float, ...] = ()) -> np.ndarray:
    """Distinct whole batches from 1 to ``cap`` (inclusive), geometrically spaced, plus each batch in ``steps``
    and the one after it where both are below ``cap``: the last batch before a step in the step time (the
    CUDA-graph cap, ``cuda_graph_max_batch`` per attention group, where the launch gap jumps) and the first after
    it, so that :func:`_crossing` never interpolates an SLO crossing across the step."""
    cap = max(int(cap), 1)
    g = np.round(np.geomspace(1, cap, n)).astype(np.int64)
    extra = [int(b) + d for b in steps for d in (0, 1) if 1 <= int(b) and int(b) + 1 <= cap]
    return np.unique(np.concatenate([g, np.array(extra, dtype=np.int64)]))


def cases_to_points(measurements: pl.DataFrame, catalog: Catalog,
                    assumptions: Assumptions = DEFAULT) -> Cases:
    """Map each measurement to the engine points whose prediction has its definition.

    Parameters
    ----------
    measurements : pl.DataFrame, rows of :func:`load_measurements`
    catalog : Catalog; every model and hardware id must be in it
    assumptions : Assumptions, for ``usable_hbm_frac`` (the KV-capacity batch) and ``max_batch_per_group``

    Returns
    -------
    Cases

    Raises
    ------
    InvalidInputError
        No rows; an unknown metric or scenario; an accelerator without a generation.
    UnknownIdError
        A model or hardware id not in the catalog.

    Notes
    -----
    Batch of a case (per instance; an instance is tp x pp accelerators, or tp x dp x pp with expert
    parallelism): the stated concurrency or static batch, else the KV-cache capacity at input + output
    tokens capped at ``max_batch_per_group`` per attention group (trtllm-bench's engine sizing, MLPerf
    Offline; a TensorRT-LLM measurement's capacity by TensorRT-LLM's free-memory rule, ``kv_memory_rule`` "free"
    in :func:`_capacity`), and at most the requests of a trtllm-bench table's finite dataset
    (:data:`BENCH_REQUESTS`; a dataset larger than the capacity adds a point at the last, partial wave's batch). MLPerf replicas (``dp`` of
    measurements.csv without EP) are independent instances, so one instance's throughput per accelerator is the
    system's. Predicted quantities: :data:`PREDICTED_AS`.
    """
    if measurements.height == 0:
        raise InvalidInputError("measurements has no rows (nothing to calibrate on)")
    acc = {r["id"]: r for r in catalog.accelerators.select("id", "generation", "scale_up_domain_size").iter_rows(named=True)}
    mod = {r["id"]: r for r in catalog.models.select("id", "num_experts", "native_weight_dtype").iter_rows(named=True)}
    pinned = {d for d, pair in prec.CHECKPOINT_FORMATS.items() if any(pair)}
    cases, base = [], []
    for r in measurements.iter_rows(named=True):
        cid = r["case_id"]
        for col, known in (("model", mod), ("hardware", acc)):  # named by row and column (issue 21)
            if r[col] not in known:
                from econ.tables.catalog import check_ids
                try:
                    check_ids(col, [r[col]], tuple(known))
                except EconError as exc:
                    raise DataError(f"case {cid}, column {col}: {exc}") from None
        gen = acc[r["hardware"]]["generation"]
        if gen not in GENERATIONS:
            raise InvalidInputError(f"hardware={r['hardware']!r} (case {cid}) has generation={gen!r}; valid: "
                                    f"{list(GENERATIONS)} (accelerators.csv generation)")
        metric, scen = r["metric"], r["scenario"]
        if metric not in METRICS:
            raise InvalidInputError(f"metric={metric!r} (case {cid}) is not one of {list(METRICS)}")
        if scen not in SCENARIO_FAMILY:
            raise InvalidInputError(f"scenario={scen!r} (case {cid}) is not one of {list(SCENARIO_FAMILY)}")
        measured = r["output_tokens_per_s_per_gpu"] if metric == "total_tokens_per_s_per_gpu" else r["value"]
        if measured is None or not (measured > 0):
            raise InvalidInputError(f"value={measured!r} (case {cid}) must be a positive number")
        bench = r["benchmark"] or ""
        input_len = r["input_len"]
        basis = ""
        if input_len is None:
            key = next((k for k in sorted(MLPERF_PROMPT_TOKENS, key=len, reverse=True) if bench.startswith(k)), None)
            if key is None:
                raise InvalidInputError(f"input_len is empty for case {cid} and benchmark={bench!r} has no assumed "
                                        f"prompt length (MLPERF_PROMPT_TOKENS)")
            input_len, basis = MLPERF_PROMPT_TOKENS[key]
        elif r["source_kind"] == "inferencex":
            input_len = input_len * INFERENCEX_ISL_FRAC
        spec = STATED_SPECULATION.get(cid)
        reason = NOT_REPRESENTABLE.get(cid, "")
        if r["speculative_decoding"] not in ("none", "unknown", None) and spec is None and not reason:
            reason = f"speculative decoding {r['speculative_decoding']!r} without a stated draft length and acceptance"
        tp, dp, ep, pp = (r[k] for k in ("tp", "dp", "ep", "pp"))
        if tp is not None:
            dp, ep, pp = dp or 1.0, ep or 1.0, pp or 1.0
            if ep <= 1:  # replicas without expert parallelism are independent instances
                dp = 1.0
        wf = r["weight_format"]
        if mod[r["model"]]["native_weight_dtype"] in pinned and wf in FOUR_BIT_FORMATS:
            wf = None  # the release's pinned formats (4-bit experts, bf16 rest): econ.physics.precision.CHECKPOINT_FORMATS
        domain = None
        if tp is not None and tp > acc[r["hardware"]]["scale_up_domain_size"]:
            domain = float(tp)  # a stated TP beyond the catalog's domain ran over PCIe peer-to-peer (L40S TP2)
        dis = _disaggregated(r)
        point = dict(model=r["model"], hardware=r["hardware"], precision=r["precision"], kv_precision=r["kv_precision"],
                     scale_up_domain_size=domain,
                     weight_format=wf, input_len=int(round(input_len)), output_len=max(int(round(r["output_len"])), 1),
                     tp=tp, dp=dp, ep=ep, pp=pp,
                     spec_method=spec[0] if spec else "none", spec_draft_tokens=float(spec[1]) if spec else None,
                     spec_acceptance=spec[2] if spec else None, **dis)
        if scen in ("server", "interactive"):
            kind = "slo"
            for lim in ("ttft_limit_s", "tpot_limit_s"):
                if r[lim] is None:
                    raise InvalidInputError(f"{lim} is empty for case {cid} (scenario={scen!r} needs its p99 limits)")
        elif r["source_kind"] == "inferencex":
            kind = "interactivity"
        else:
            kind = "point"
        cases.append(dict(
            case_id=cid, group_id=r["group_id"], source_kind=r["source_kind"],
            engine_class=engine_class(r["source_kind"], r["framework"], r["framework_version"], cid), model=r["model"],
            hardware=r["hardware"], generation=gen, precision=r["precision"], profile=f"{gen}-{r['precision']}",
            scenario=scen, family=SCENARIO_FAMILY[scen], moe=bool((mod[r["model"]]["num_experts"] or 0) > 0),
            metric=metric, measured=float(measured), kind=kind, representable=not reason, reason=reason,
            concurrency=_concurrency(r["concurrency_or_batch"]), ttft_limit_s=r["ttft_limit_s"],
            tpot_limit_s=r["tpot_limit_s"], latency_percentile=r["latency_percentile"],
            target_tokens_per_s_per_user=r["tokens_per_s_per_user_target"], input_len_basis=basis,
            spec_basis=spec[3] if spec else "",
            wide_ep=bool(ep is not None and dp is not None and ep > 1 and dp > 1),
            low_latency=bool(SCENARIO_FAMILY[scen] == "single-stream" or scen == "interactive"
                             or (_concurrency(r["concurrency_or_batch"]) or 1e9) <= LOW_LATENCY_MAX_CONCURRENCY),
            long_context=bool(max(input_len, r["output_len"]) >= LONG_CONTEXT_MIN_TOKENS),
            bench_requests=bench_requests(r["source_kind"], scen, r["source"], input_len, r["output_len"]),
        ))
        base.append(point)
    caps = _capacity(base, catalog, assumptions, engines=[c["engine_class"] for c in cases])
    for c, cap in zip(cases, caps):
        if not np.isfinite(cap) and c["representable"]:
            c.update(representable=False, kind="point",
                     reason="the stated layout does not hold the weights or violates a layout rule in econ")
    table = pl.DataFrame(cases, infer_schema_length=None)
    # the layouts an interactivity case tries (layout unknown), their capacities in one engine call
    tries = [(i, j, p | dict(tp=float(lay[0]), dp=float(lay[1]), ep=float(lay[2]), pp=1.0), c["engine_class"])
             for i, (c, p) in enumerate(zip(cases, base)) if c["kind"] not in ("point", "slo")
             for j, lay in enumerate(_layouts(c["moe"]))]
    try_caps = _capacity([t[2] for t in tries], catalog, assumptions, engines=[t[3] for t in tries]) if tries \
        else np.zeros(0)
    by_case: dict[int, list] = {}
    for (i, j, q, _), cap in zip(tries, try_caps):
        by_case.setdefault(i, []).append((j, q, cap))
    rows = []
    for i, (c, p) in enumerate(zip(table.iter_rows(named=True), base)):
        kind = c["kind"]
        if kind == "point":
            nreq, rest = c["bench_requests"], 0
            if c["concurrency"] is not None:  # a closed loop beyond the KV capacity queues for slots
                b = int(min(c["concurrency"], caps[i])) if np.isfinite(caps[i]) else int(c["concurrency"])
            elif np.isfinite(nreq) and caps[i] >= 1:  # a finite run: waves of the capacity (BENCH_REQUESTS)
                b = int(min(nreq, caps[i]))
                rest = int(nreq) % b if nreq > b else 0
            else:
                b = int(caps[i]) if np.isfinite(caps[i]) else 1
            b = max(b, int(p["dp"] or 1))
            rows.append(p | dict(case=i, layout_id=0, batch_size=b))
            if rest > 0:  # the last, partial wave (finite_run_throughput)
                rows.append(p | dict(case=i, layout_id=1, batch_size=max(rest, int(p["dp"] or 1))))
        elif kind == "slo":
            graph_cap = assumptions.cuda_graph_max_batch * float(p["dp"] or 1)
            for b in _geometric_grid(caps[i], steps=(graph_cap,) if graph_cap > 0 else ()):
                rows.append(p | dict(case=i, layout_id=0, batch_size=int(b)))
        else:
            for j, q, cap in by_case.get(i, []):
                dp = q["dp"]
                if not np.isfinite(cap) or cap < dp:
                    continue
                for b in _geometric_grid(cap):
                    if b >= dp:
                        rows.append(q | dict(case=i, layout_id=j, batch_size=int(b)))
    table = table.with_columns(pl.Series("capacity_batch", caps),
                               pl.Series("batch_size", [r["batch_size"] for r in _first_points(rows, table.height)]))
    points = pl.DataFrame(rows, infer_schema_length=None).with_columns(
        pl.col("case").cast(pl.Int64), pl.col("layout_id").cast(pl.Int64), pl.col("batch_size").cast(pl.Int64))
    return Cases(table, points)


def _first_points(rows: list[dict], n: int) -> list[dict]:
    first = [None] * n
    for r in rows:
        if first[r["case"]] is None:
            first[r["case"]] = r
    return [f if f is not None else {"batch_size": None} for f in first]


def _layouts(moe: bool):
    out = list(INTERACTIVITY_LAYOUTS)
    if moe:
        out += [(1, 2, 2), (1, 4, 4), (1, 8, 8)]
    return out


def _capacity(base: list[dict], catalog: Catalog, assumptions: Assumptions,
              engines: list[str] | None = None) -> np.ndarray:
    """KV-capacity batch of each case's instance, capped at max_batch_per_group x dp (NaN: does not fit).

    ``engines`` (serving-engine class per case, default none: every case as vLLM sizes it): a case of an engine that
    sizes its KV cache from the free memory (:func:`kv_of_free_memory`, TensorRT-LLM) is sized by the engine's
    ``kv_memory_rule`` "free" (:func:`econ.engine.core.kv_pool`: ``usable_hbm_frac`` x (1 - the block allocator's
    1.5%) of each accelerator's HBM less its weights, activations and runtime), the rest by "total"
    (``usable_hbm_frac`` of the whole HBM less the weights). A free-memory case whose batch is below its
    attention-DP groups does not fit (NaN)."""
    pts = pl.DataFrame([p | dict(batch_size=int(p["dp"] or 1)) for p in base], infer_schema_length=None)
    free_rule = (np.array([kv_of_free_memory(e) for e in engines], dtype=bool) if engines is not None
                 else np.zeros(pts.height, dtype=bool))
    mb = np.full(pts.height, np.nan)
    dp = np.full(pts.height, np.nan)
    for rule, rows in (("total", np.flatnonzero(~free_rule)), ("free", np.flatnonzero(free_rule))):
        if len(rows) == 0:
            continue
        res = evaluate(pts[rows], catalog, assumptions.with_overrides(kv_memory_rule=rule), PHYSICS_ECONOMICS,
                       strict=False, columns=("max_batch_size", "dp"))
        mb[rows] = res["max_batch_size"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
        dp[rows] = res["dp"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    mb = np.where(free_rule & ~(mb >= dp), np.nan, mb)
    return np.floor(np.minimum(mb, assumptions.max_batch_per_group * dp))


# ------------------------------------------------------------------------------------------------
# Prediction
# ------------------------------------------------------------------------------------------------

_EVAL_COLUMNS = ("feasible", "served_output_tokens_per_s_per_gpu", "tpot_s", "prefill_stall_s", "ttft_s",
                 "tokens_per_s_per_user", "ttft_percentile_s", "tpot_percentile_s", "served_tokens_per_s_per_user",
                 "input_tokens_per_s_per_gpu", "prefill_num_gpus", "max_batch_size", "served_requests_per_s",
                 "prefill_instances", "decode_instances")


def _rate_log(metric_is_rate: np.ndarray, measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """ln(measured rate / predicted rate); for a time the rate is its inverse."""
    r = np.log(measured / predicted)
    return np.where(metric_is_rate, r, -r)


def _case_engine_class(table: pl.DataFrame) -> np.ndarray:
    """Serving-engine class of each case (:func:`engine_class`; where the table has none, "vllm-async": the
    assumptions as given). [str]"""
    if "engine_class" not in table.columns:
        return np.full(table.height, "vllm-async", dtype=object)
    return np.array(table["engine_class"].to_list(), dtype=object)


def _engine_assumptions(assumptions: Assumptions, engine: str) -> Assumptions:
    """``assumptions`` for a measurement of serving-engine class ``engine``: no hidden host time without an overlap
    scheduler (:data:`ENGINE_OVERLAP_SCHEDULER`), the held share where the engine's scheduler hides the whole host
    step (:data:`ENGINE_CPU_OVERLAP_HELD`), the engine's prefill dispatch per layer
    (:data:`ENGINE_PREFILL_DISPATCH_S`), and for an engine that sizes its KV cache from the free memory
    (:func:`kv_of_free_memory`) ``kv_memory_rule`` "free", the rule :func:`_capacity` sized the case's batch by
    (the engine applies it to the decode instance's wall and a disaggregated prefill instance's prompts per step). A
    pure roofline (every efficiency 1) stays one."""
    over = {}
    if kv_of_free_memory(engine):  # TensorRT-LLM: its KV pool is a share of the free memory
        over["kv_memory_rule"] = "free"
    if not ENGINE_OVERLAP_SCHEDULER[engine][0]:
        over["cpu_overlap_frac"] = 0.0
    elif engine in ENGINE_CPU_OVERLAP_HELD:
        over["cpu_overlap_frac"] = ENGINE_CPU_OVERLAP_HELD[engine][0]
    dispatch = ENGINE_PREFILL_DISPATCH_S[engine][0]
    if dispatch is not None and assumptions.prefill_layer_dispatch_s > 0.0:
        over["prefill_layer_dispatch_s"] = dispatch
    return assumptions.with_overrides(**over) if over else assumptions


def _measured_deployment(deployment: DeploymentAssumptions) -> DeploymentAssumptions:
    """``deployment`` as the measured systems ran: without an expert load balancer (:data:`MEASURED_EXPERT_IMBALANCE`),
    unless the imbalance given is already 1 (a pure roofline, or a caller's perfectly balanced routing)."""
    if deployment.expert_imbalance_factor == 1.0:
        return deployment
    return replace(deployment, expert_imbalance_factor=MEASURED_EXPERT_IMBALANCE)


def predict(cases: Cases, catalog: Catalog, assumptions: Assumptions = DEFAULT,
            deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT) -> pl.DataFrame:
    """Predicted value of every case with the efficiencies ``catalog`` and ``assumptions`` give the engine.

    Parameters
    ----------
    cases : Cases (:func:`cases_to_points`)
    catalog : Catalog (its ``calibration`` profiles are used for the fields ``assumptions`` leaves calibrated)
    assumptions, deployment : as for :func:`econ.engine.evaluate` (``assumptions.IDEAL`` = pure roofline)

    Returns
    -------
    pl.DataFrame, one row per case (order of ``cases.table``): ``predicted`` (the metric's unit; NaN when no
    point of the case is feasible), ``log_ratio`` (ln(measured / predicted) of the rate), ``abs_error_frac``
    (|predicted / measured - 1|), ``slo_met`` (Server/Interactive and InferenceX rows: whether some load
    meets the limits or the speed; true elsewhere), ``batch_predicted`` (the batch at the prediction,
    interpolated for SLO rows).

    Notes
    -----
    A case whose serving engine runs no overlap scheduler (``engine_class`` of ``cases.table``,
    :data:`ENGINE_OVERLAP_SCHEDULER`) is predicted with ``cpu_overlap_frac`` = 0, a TensorRT-LLM PyTorch case at the
    held 1 (:data:`ENGINE_CPU_OVERLAP_HELD`); the others with ``assumptions``' value (by default the calibrated
    profile's); every case with its engine's prefill dispatch per layer
    (:data:`ENGINE_PREFILL_DISPATCH_S`, :func:`_engine_assumptions`), and expert parallelism at routing's own
    imbalance (:data:`MEASURED_EXPERT_IMBALANCE`, :func:`_measured_deployment`). A TensorRT-LLM case runs under
    ``kv_memory_rule`` "free", the rule its batch was sized by (:func:`_capacity`).
    """
    case = cases.points["case"].to_numpy()
    mat = np.full((cases.points.height, len(_EVAL_COLUMNS)), np.nan)
    engines = _case_engine_class(cases.table)[case]
    # one evaluation per distinct set of assumptions (engine classes that differ in nothing share one)
    by_assumptions: dict[Assumptions, list[str]] = {}
    for eng in np.unique(engines):
        by_assumptions.setdefault(_engine_assumptions(assumptions, str(eng)), []).append(eng)
    dep = _measured_deployment(deployment)
    for a, engs in by_assumptions.items():
        rows = np.flatnonzero(np.isin(engines, engs))
        pts = cases.points if rows.size == engines.size else cases.points[rows]
        res = evaluate(pts.drop("case", "layout_id"), catalog, a, PHYSICS_ECONOMICS, dep, strict=False,
                       columns=_EVAL_COLUMNS)
        mat[rows] = res.select(pl.col(c).cast(pl.Float64) for c in _EVAL_COLUMNS).fill_null(float("nan")).to_numpy()
    v = {c: mat[:, j] for j, c in enumerate(_EVAL_COLUMNS)}
    layout = cases.points["layout_id"].to_numpy()
    batch = cases.points["batch_size"].to_numpy().astype(float)
    t = cases.table
    n = t.height
    pred = np.full(n, np.nan)
    met = np.ones(n, dtype=bool)
    bpred = np.full(n, np.nan)
    kind = t["kind"].to_list()
    metric = t["metric"].to_list()
    conc = t["concurrency"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    nreq = t["bench_requests"].cast(pl.Float64).to_numpy()
    out_len = cases.points["output_len"].to_numpy().astype(float)
    in_len = cases.points["input_len"].to_numpy().astype(float)
    lim_ttft = t["ttft_limit_s"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    lim_tpot = t["tpot_limit_s"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    target = t["target_tokens_per_s_per_user"].cast(pl.Float64).fill_null(float("nan")).to_numpy()
    order = np.argsort(case, kind="stable")
    starts = np.searchsorted(case[order], np.arange(n + 1))
    for i in range(n):
        idx = order[starts[i]:starts[i + 1]]
        if idx.size == 0:
            continue
        k = kind[i]
        if k == "point":
            j = idx[0]
            bpred[i] = batch[j]
            pred[i] = _point_value(metric[i], v, j, batch[j], conc[i], in_len[j], out_len[j])
            if idx.size > 1 and np.isfinite(nreq[i]) and np.isfinite(pred[i]):  # a finite run ends in a partial wave
                r = idx[1]
                rest = _point_value(metric[i], v, r, batch[r], conc[i], in_len[r], out_len[r])
                if np.isfinite(rest) and rest > 0 and metric[i] in ("output_tokens_per_s_per_gpu",
                                                                     "total_tokens_per_s_per_gpu"):
                    sync = 1.0 - v["prefill_stall_s"][j] / v["tpot_s"][j]
                    pred[i] = finite_run_throughput(nreq[i], batch[j], pred[i], rest, batch[r], sync)
        elif k == "slo":
            ok = v["feasible"][idx] > 0
            g = np.maximum(np.log(v["ttft_percentile_s"][idx] / lim_ttft[i]),
                           np.log(v["tpot_percentile_s"][idx] / lim_tpot[i]))
            g = np.where(ok, g, np.inf)
            y, b, m = _crossing(np.log(batch[idx]), g, v["served_output_tokens_per_s_per_gpu"][idx])
            pred[i], bpred[i], met[i] = y, b, m
        else:
            best, bb, any_met = -np.inf, np.nan, False
            lay = layout[idx]
            fallback = (np.inf, np.nan, np.nan)  # (slowest miss, value, batch) when no layout reaches the speed
            for L in np.unique(lay):
                sub = idx[lay == L]
                ok = v["feasible"][sub] > 0
                h = np.where(ok, np.log(target[i] / v["served_tokens_per_s_per_user"][sub]), np.inf)
                y, b, m = _crossing(np.log(batch[sub]), h, v["served_output_tokens_per_s_per_gpu"][sub])
                if m and y > best:
                    best, bb, any_met = y, b, True
                elif not m and np.isfinite(h[0]) and h[0] < fallback[0]:
                    fallback = (h[0], v["served_output_tokens_per_s_per_gpu"][sub[0]], batch[sub[0]])
            if any_met:
                pred[i], bpred[i] = best, bb
            else:
                pred[i], bpred[i], met[i] = fallback[1], fallback[2], False
    measured = t["measured"].to_numpy()
    is_rate = np.array([METRICS[m] for m in metric])
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = _rate_log(is_rate, measured, pred)
        err = np.abs(pred / measured - 1.0)
    return pl.DataFrame({"case_id": t["case_id"], "predicted": pred, "log_ratio": lr, "abs_error_frac": err,
                         "slo_met": met, "batch_predicted": bpred}, nan_to_null=False)


def _point_value(metric: str, v: dict, j: int, b: float, conc: float, in_len: float, out_len: float) -> float:
    """The predicted metric of a one-point case (:data:`PREDICTED_AS`)."""
    if not v["feasible"][j] > 0:
        return np.nan
    if metric in ("output_tokens_per_s_per_gpu", "total_tokens_per_s_per_gpu"):
        return v["served_output_tokens_per_s_per_gpu"][j]
    if metric == "tokens_per_s_per_user":
        return v["tokens_per_s_per_user"][j]
    if metric == "tpot_s":
        return v["tpot_s"][j] + v["prefill_stall_s"][j] * (b - 1.0) / b
    if metric == "e2e_latency_s":
        return v["ttft_s"][j] + out_len * v["tpot_s"][j]
    # ttft_s: the prompt alone + the mean wait for the prefill servers of a closed loop of min(c, B) clients, each away
    # for its decode (prompts of the others interleaved) between requests (closed_loop_wait_s), the servers being the
    # decode instance's share of a disaggregated prefill pool + a KV-slot wait when c exceeds the slots
    pools = v["prefill_instances"][j] / v["decode_instances"][j]
    share = pools if np.isfinite(pools) and pools > 0 else 1.0
    mu = v["input_tokens_per_s_per_gpu"][j] * v["prefill_num_gpus"][j] * share / in_len  # prompts/s
    c = conc if np.isfinite(conc) else b
    think = out_len * (v["tpot_s"][j] + v["prefill_stall_s"][j])
    wait = closed_loop_wait_s(min(c, b), 1.0 / mu, think) if b > 1 else 0.0
    slot = max(c - b, 0.0) / v["served_requests_per_s"][j] if c > b else 0.0
    return v["ttft_s"][j] + wait + slot


def _crossing(x: np.ndarray, g: np.ndarray, y: np.ndarray):
    """Largest load meeting g <= 0 along ascending x = ln(batch), interpolated linearly in x and ln(y).

    Returns (value, batch, met). ``met`` is False when the first point already violates (the value is then
    the first point's, the least load the engine represents). g = +inf marks an infeasible point.
    """
    bad = np.flatnonzero(g > 0)
    if bad.size == 0:
        return y[-1], float(np.exp(x[-1])), True
    k = bad[0]
    if k == 0:
        return y[0], float(np.exp(x[0])), False
    g0, g1 = g[k - 1], g[k]
    if not np.isfinite(g1) or not (y[k] > 0):
        return y[k - 1], float(np.exp(x[k - 1])), True
    f = (0.0 - g0) / (g1 - g0)
    xs = x[k - 1] + f * (x[k] - x[k - 1])
    ys = math.exp(math.log(y[k - 1]) + f * (math.log(y[k]) - math.log(y[k - 1])))
    return ys, float(np.exp(xs)), True


# ------------------------------------------------------------------------------------------------
# The fit: priors, shrinkage, fallbacks
# ------------------------------------------------------------------------------------------------

FIT_PARAMETERS: tuple[str, ...] = ("eta_bw", "eta_flop", "eta_prefill", "overhead_s", "sequence_overhead_s",
                                   "kernel_latency_s",
                                   "eta_routed_flop_frac", "moe_gemm_half_width", "overlap_frac", "cpu_overlap_frac")
"""Profile parameters :func:`fit` estimates (the others of PROFILE_PARAMETERS are held: :data:`HELD`)."""


@dataclass(frozen=True)
class Prior:
    """A prior of one parameter: normal in the transformed scale (``logit`` for fractions, ``log`` for times).

    Attributes
    ----------
    median : float, the prior median in the parameter's unit
    width : float, standard deviation in the transformed scale (logit or natural log units)
    transform : "logit" | "log"
    source : str, where the median and width come from
    """

    median: float
    width: float
    transform: str
    source: str

    def to_u(self, value):
        v = np.asarray(value, dtype=float)
        return np.log(v / (1.0 - v)) if self.transform == "logit" else np.log(v)

    def from_u(self, u):
        u = np.asarray(u, dtype=float)
        return 1.0 / (1.0 + np.exp(-u)) if self.transform == "logit" else np.exp(u)

    def dvalue_du(self, u):
        v = self.from_u(u)
        return v * (1.0 - v) if self.transform == "logit" else v


PRIORS: dict[str, Prior] = {
    "eta_bw": Prior(0.75, 1.0, "logit", "NVIDIA AIConfigurator 0.12 kernel tables (data/kernels/, benchmarks/fit_kernels.py): "
                    "weight-streaming GEMMs reach 0.81-0.87 of HBM bandwidth on H100/H200, 0.67-0.72 on B200/GB200 "
                    "at bf16/fp8 and 0.30-0.34 at NVFP4; decode attention 0.77-0.97; median 0.75, logit width 1.0 "
                    "(0.52-0.89 at one sd)"),
    "eta_flop": Prior(0.45, 1.0, "logit", "AIConfigurator dense GEMM fraction of dense peak at m >= 4096: 0.54 H100 FP8, "
                      "0.80 H100 BF16, 0.44 B200 FP8, 0.33 B200 NVFP4; the v1 whole-step fit 0.30; median 0.45, "
                      "logit width 1.0"),
    "eta_prefill": Prior(0.50, 1.0, "logit", "AIConfigurator large-m GEMM MFU (above) and prefill attention 0.27-0.58 of "
                         "peak; v1 fit 0.48 +- 0.04; median 0.50, logit width 1.0"),
    "overhead_s": Prior(5.0e-4, 1.5, "log", "per decode step outside its kernels (scheduling, sampling, the graph "
                        "launch): vLLM V0 left 5-13 ms of GPU bubble per step (vllm-project/vllm #6854, #10634), V1's "
                        "async scheduling hides input preparation and sampling (+5-10%, #23569), AIConfigurator adds no "
                        "per-step term for TensorRT-LLM or SGLang; kernel launches are their own term since issue 17; "
                        "median 0.5 ms, log width 1.5 (0.1-2.2 ms at one sd)"),
    "sequence_overhead_s": Prior(2.0e-5, 1.5, "log", "CPU time per sequence of a decode step: vLLM V0's output "
                                 "processing 0.2 ms at batch 1 and 3.4 ms at batch 32 (vllm-project/vllm #6913: ~0.1 ms "
                                 "per sequence), hidden in good part by later async scheduling (#19970, #23569); "
                                 "median 20 us, log width 1.5"),
    "kernel_latency_s": Prior(2.5e-6, 0.7, "log", "AIConfigurator 0.12 GEMM latency intercepts at m <= 16 tokens "
                              "(data/kernels/gemm_efficiency.csv, t = alpha + bytes / BW): 2.4-4.6 us bf16, 5.7-7.3 us "
                              "fp8-block on H100/H200/B200/GB200, launch gap (~1.3 us) included; median 2.5 us per "
                              "kernel beyond the launch gap, log width 0.7 (a factor 2)"),
    "eta_routed_flop_frac": Prior(0.80, 1.0, "logit", "AIConfigurator fused MoE (TensorRT-LLM EP8): compute efficiency "
                                  "0.94 H100 FP8, 0.46 FP8-block, 0.23 B200 NVFP4, against dense GEMMs 0.54 / 0.51 / "
                                  "0.33: 0.7-1.0 of the dense efficiency; median 0.8, logit width 1.0"),
    "overlap_frac": Prior(0.85, 1.0, "logit", "share of the shorter of computation and communication that two-batch "
                          "overlap hides (wide expert parallelism): DeepSeek's decode and prefill run two micro-batches "
                          "for 'seamless overlap' (open-infra-index day 6; profile-data), Huawei MindIE hides > 70% of "
                          "prefill communication with two micro-batches; median 0.85, logit width 1.0 (0.68-0.94 at one "
                          "sd). Only instances that run two-batch overlap inform it (econ.physics.performance."
                          "two_batch_overlap_on); without any among the cases the fit returns the prior"),
    "cpu_overlap_frac": Prior(0.8, 1.5, "logit", "share of a decode step's GPU time under which an overlap scheduler "
                              "hides the step's host time (econ.physics.performance.exposed_cpu_time_s): SGLang "
                              "and vLLM >= 0.14 prepare step n + 1 while the GPU runs step n "
                              "(ENGINE_OVERLAP_SCHEDULER), up to the GPU time itself, less what must wait for the "
                              "step's sampled tokens; median 0.8, logit width 1.5 (0.35-0.96 at one sd); their "
                              "measurements at small batch would move it, and at stop 37 they did not (0.80 on "
                              "every profile). TensorRT-LLM's PyTorch executor is held at 1 "
                              "(ENGINE_CPU_OVERLAP_HELD), engines without an overlap scheduler at 0"),
    "moe_gemm_half_width": Prior(900.0, 0.7, "log", "AIConfigurator fused MoE at > 512 tokens per expert (TensorRT-LLM "
                                 "EP8): Qwen3-235B (1536-wide experts) at 0.53-0.81 of Mixtral's (14336) fraction of "
                                 "peak on H200/B200 in BF16, FP8 and FP8-block, i.e. w_half = 500-1700; median 900, "
                                 "log width 0.7"),
}
"""Priors of the shared (global) value of each fitted parameter, from the per-kernel tables (issue 9)."""

SHRINKAGE: dict[str, float] = {"eta_bw": 0.5, "eta_flop": 0.5, "eta_prefill": 0.5, "overhead_s": 0.7,
                               "kernel_latency_s": 0.7, "sequence_overhead_s": 0.7, "eta_routed_flop_frac": 0.5,
                               "moe_gemm_half_width": 0.7,
                               "overlap_frac": 0.5, "cpu_overlap_frac": 0.5}
"""Standard deviation of a profile's deviation from the shared value, in the transformed scale (0.5 logit ~ a
factor 1.6 on a small fraction; 0.7 log = a factor 2 on a time): how far one generation's software and
silicon may sit from the others before the data must say so. A stated modelling choice."""

MOE_TILE_ROWS: dict[str, float] = {}
"""Held ``moe_tile_rows`` per generation: 1 (no tile padding) for every generation. The MMA tiles are 64 rows on
Hopper (WGMMA) and 128 on Blackwell (UMMA), but NVIDIA's measured fused-MoE latencies at 1-8 tokens per expert
sit at the bytes-bound time, not at whole padded tiles (AIConfigurator 0.12, TensorRT-LLM EP8: H100 FP8 0.009 of
peak against 0.012 bytes-bound, B200 NVFP4 0.004 against 0.003), and padding whole tiles at the fitted
whole-step compute efficiency made small-batch MoE decode compute-bound (DeepSeek-V3's memory/compute
crossover fell to ~250 sequences on 64 B200). A generation listed here would hold its tile instead."""

HELD: dict[str, str] = {
    "moe_tile_rows": "held at 1, no tile padding (MOE_TILE_ROWS: measured fused-MoE kernels do not pay whole tiles)",
    "tpot_tail_factor": "measured, not fitted: the median over the profile's MLPerf Server/Interactive runs of p99 TPOT "
                        "/ mean TPOT (measurements.csv measured_p99_tpot_s / measured_mean_tpot_s)",
}
"""Profile parameters the least-squares fit does not move, and why."""

MIN_GROUPS = 2
"""Independent model x hardware groups a profile needs to be fitted on its own (with shrinkage); with fewer it
copies its fallback (:data:`FALLBACK_GENERATION`) and says so."""

FALLBACK_GENERATION: dict[str, str | None] = {
    "blackwell": "hopper", "hopper": "ampere", "ampere": "hopper", "cdna4": "cdna3", "cdna3": None, "ada": "ampere",
    "tpu": None, "gaudi": None, "trainium": None, "other": None,
}
"""Nearest generation of each: a profile without enough groups takes, in order, a fitted profile of its own
generation at the nearest precision (same chip and software stack), then of this generation (same precision
first), then the shared (global) values."""

OBSERVATION_SCALE = 0.25
"""Scale of ln(measured / predicted) a case is expected to scatter by (repeated MLPerf runs of one system by
different submitters differ by ~10%, the model's structure adds more): residuals are divided by it before the
pseudo-Huber loss, so misses beyond ~25% count linearly rather than quadratically."""

MIN_BAND_CASES = 10
"""Held-out cases a profile's band needs; with fewer it pools its fallback's (then every) held-out case."""

_PRECISION_ORDER = {"fp4": ("fp8", "bf16"), "fp8": ("fp4", "bf16"), "bf16": ("fp8", "fp4")}


def _fallback_chain(profile: str) -> list[str]:
    gen, p = profile.rsplit("-", 1)
    chain = [f"{gen}-{q}" for q in _PRECISION_ORDER[p]]
    seen = {gen}
    g = FALLBACK_GENERATION.get(gen)
    while g is not None and g not in seen:
        seen.add(g)
        chain += [f"{g}-{p}"] + [f"{g}-{q}" for q in _PRECISION_ORDER[p]]
        g = FALLBACK_GENERATION.get(g)
    return chain


def all_profiles() -> list[str]:
    """Every (generation, precision) profile id, ``<generation>-<precision>``."""
    return [f"{g}-{p}" for g in GENERATIONS for p in prec.PRECISIONS]


def resolve_sources(fitted: set[str] | frozenset) -> dict[str, str]:
    """Where each profile's values come from: ``""`` (its own fit), another profile id, or ``"global"``."""
    out = {}
    for prof in all_profiles():
        if prof in fitted:
            out[prof] = ""
        else:
            out[prof] = next((c for c in _fallback_chain(prof) if c in fitted), "global")
    return out


@dataclass
class FitResult:
    """What :func:`fit` returns.

    Attributes
    ----------
    values : dict profile -> dict parameter -> value (every PROFILE_PARAMETER, natural units)
    se : dict profile -> dict parameter -> standard error (fitted parameters only; natural units)
    sources : dict profile -> "" (own fit) | fallback profile | "global"
    fitted : tuple of profiles fitted on their own
    global_values : dict parameter -> the shared value
    n_cases, n_groups : dict profile -> cases and groups the profile's own fit used (0 for fallbacks)
    x : ndarray, the solution in the transformed scale (warm start of later fits)
    cost : float, final objective (half the sum of squared scaled residuals, priors included)
    success : bool, message : str, nfev : int
    se_method : "jacobian" | "bootstrap"
    """

    values: dict
    se: dict
    sources: dict
    fitted: tuple
    global_values: dict
    n_cases: dict
    n_groups: dict
    x: np.ndarray
    cost: float
    success: bool
    message: str
    nfev: int
    se_method: str = "jacobian"


def tail_factors(cases: Cases, measurements: pl.DataFrame, mask=None) -> dict[str, float]:
    """Measured p99 / mean TPOT per profile (and ``"global"``) from MLPerf Server/Interactive runs.

    Parameters
    ----------
    cases : Cases; measurements : pl.DataFrame of :func:`load_measurements` (same rows, any order)
    mask : bool array over ``cases.table``, optional: only these cases (cross-validation training set)

    Returns
    -------
    dict profile -> tail factor >= 1 (median over its runs), plus ``"global"`` (median over all runs).
    """
    ratio = measurements.select("case_id", (pl.col("measured_p99_tpot_s") / pl.col("measured_mean_tpot_s")).alias("r"))
    t = cases.table.with_row_index("i").join(ratio, on="case_id", how="left")
    if mask is not None:
        t = t.filter(pl.Series(np.asarray(mask, dtype=bool))[t["i"]])
    t = t.filter(pl.col("r").is_not_null() & (pl.col("r") >= 1.0))
    out = {"global": float(t["r"].median()) if t.height else 1.0}
    for prof, r in t.group_by("profile").agg(pl.col("r").median()).iter_rows():
        out[prof] = float(r)
    return out


def _profile_values(x: np.ndarray, fitted: tuple, priors: dict) -> tuple[dict, dict]:
    """(global values, {profile: values}) of the fitted parameters from the transformed vector."""
    k = len(FIT_PARAMETERS)
    g = x[:k]
    glob = {p: float(priors[p].from_u(g[j])) for j, p in enumerate(FIT_PARAMETERS)}
    prof = {}
    for i, name in enumerate(fitted):
        d = x[k * (i + 1):k * (i + 2)]
        prof[name] = {p: float(priors[p].from_u(g[j] + d[j])) for j, p in enumerate(FIT_PARAMETERS)}
    return glob, prof


def _full_values(glob: dict, prof: dict, sources: dict, tails: dict) -> dict:
    """Every profile's full parameter set (fitted, held and measured), fallbacks resolved."""
    out = {}
    for name, src in sources.items():
        gen = name.rsplit("-", 1)[0]
        base = prof[name] if src == "" else prof.get(src, glob) if src != "global" else glob
        v = dict(base)
        v["moe_tile_rows"] = MOE_TILE_ROWS.get(gen, 1.0)
        tail_src = name if name in tails else (src if src in tails else "global")
        v["tpot_tail_factor"] = max(tails.get(tail_src, tails["global"]), 1.0)
        out[name] = v
    return out


def profile_frame(values: dict, bands: dict | None = None) -> pl.DataFrame:
    """A minimal calibration frame (profile, generation, precision, PROFILE_PARAMETERS, band) for the engine."""
    rows = []
    for name, v in values.items():
        gen, p = name.rsplit("-", 1)
        lo, hi = (bands or {}).get(name, (0.0, 0.0))
        rows.append(dict(profile=name, generation=gen, precision=p, **{k: float(v[k]) for k in PROFILE_PARAMETERS},
                         log_ratio_p10=float(lo), log_ratio_p90=float(hi)))
    return pl.DataFrame(rows)


def catalog_with(catalog: Catalog, values: dict, bands: dict | None = None) -> Catalog:
    """A copy of ``catalog`` whose calibration profiles are ``values`` (profile -> parameters).

    The engine's per-catalog caches (econ.engine.catalog_arrays and its static table) do not depend on the
    calibration table except for the profile arrays, so the copy reuses them with new profile arrays: a fit
    evaluates hundreds of candidate tables (a cache shortcut only; without the caches it is built afresh).
    """
    from econ import engine

    new = replace(catalog, calibration=profile_frame(values, bands))
    arrays = getattr(catalog, "_engine_arrays", None)
    profiles = getattr(engine, "_profile_arrays", None)
    if _SHORTCUT["on"] and arrays is not None and profiles is not None:
        try:
            fresh = {f.name: {} for f in fields(arrays) if isinstance(getattr(arrays, f.name), dict)
                     and f.name not in ("model", "hardware", "profile")}  # per-profile memo dicts start empty
            object.__setattr__(new, "_engine_arrays", replace(arrays, **profiles(new), **fresh))
        except TypeError:  # the engine's cache changed shape: let it rebuild
            pass
        static = getattr(catalog, "_engine_static", None)
        if static is not None:
            object.__setattr__(new, "_engine_static", static)
    return new


_SHORTCUT = {"on": True}
"""Whether :func:`catalog_with` reuses the engine's caches; :func:`fit` checks the shortcut against a fresh
catalog once and switches it off if they ever disagree."""


def _check_shortcut(cases: "Cases", catalog: Catalog, values: dict, assumptions, deployment) -> None:
    """Compare one prediction through the cache shortcut with one through a fresh catalog; disable on mismatch."""
    if not _SHORTCUT["on"]:
        return
    probe = {k: dict(v) for k, v in values.items()}
    for v in probe.values():  # a candidate unlike the last one evaluated, so a stale memo would show
        v["eta_bw"], v["eta_flop"] = 0.5 * v["eta_bw"], 0.5 * v["eta_flop"]
    fast = predict(cases, catalog_with(catalog, probe), assumptions, deployment)["predicted"].to_numpy()
    slow = predict(cases, replace(catalog, calibration=profile_frame(probe)), assumptions, deployment)
    slow = slow["predicted"].to_numpy()
    ok = np.isfinite(slow)
    if not np.allclose(fast[ok], slow[ok], rtol=1e-9, atol=0.0) or not np.array_equal(np.isfinite(fast), ok):
        _SHORTCUT["on"] = False


def _pseudo_huber(z: np.ndarray) -> np.ndarray:
    """Signed residual whose square is the soft-L1 loss 2 (sqrt(1 + z^2) - 1) (smooth, linear tails)."""
    return np.sign(z) * np.sqrt(2.0 * (np.sqrt(1.0 + z * z) - 1.0))


def fit(cases: Cases, catalog: Catalog, priors: dict | None = None, *, measurements: pl.DataFrame | None = None,
        train=None, x0: np.ndarray | None = None, assumptions: Assumptions = DEFAULT,
        deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, max_nfev: int = 60, se: bool = True) -> FitResult:
    """MAP estimate of the profile parameters on ``cases`` (regularized least squares, shrinkage to shared values).

    Parameters
    ----------
    cases : Cases (:func:`cases_to_points`)
    catalog : Catalog (its accelerators' generations; its own calibration table is ignored)
    priors : dict parameter -> Prior, default :data:`PRIORS`
    measurements : pl.DataFrame of :func:`load_measurements`, for the measured TPOT tail factors (default: read)
    train : bool array over ``cases.table``, optional; fit on these cases only (cross-validation)
    x0 : ndarray, optional warm start (transformed scale, as ``FitResult.x`` of the same profile set)
    assumptions, deployment : the fixed assumptions of every prediction
    max_nfev : int, bound on the Jacobian evaluations of the trust-region solver
    se : bool, compute Jacobian standard errors

    Returns
    -------
    FitResult

    Raises
    ------
    InvalidInputError
        No representable case in the training set.

    Notes
    -----
    Minimises sum_i w_i rho(r_i / OBSERVATION_SCALE) + sum_k ((u_k - u_prior,k) / width_k)^2
    + sum_{p,k} (d_pk / SHRINKAGE_k)^2 over the shared values u (transformed scale) and the deviations d of
    each profile with at least MIN_GROUPS groups, where r_i = ln(measured / predicted) of the rate,
    w_i = 1 / sqrt(cases in i's group), rho the soft-L1 loss (``scipy.optimize.least_squares``, trust-region
    reflective, 2-point Jacobian grouped by profile). Cases of profiles without a fit of their own are left
    out (their predictions use the fallback). Standard errors: the Gauss-Newton covariance (J^T J)^-1 at the
    solution, mapped to natural units by the delta method.
    """
    from scipy.optimize import least_squares
    from scipy.sparse import lil_matrix

    priors = dict(PRIORS if priors is None else priors)
    if measurements is None:
        measurements = load_measurements()
    t = cases.table
    n = t.height
    train = np.ones(n, dtype=bool) if train is None else np.asarray(train, dtype=bool)
    base = predict(cases, catalog_with(catalog, _full_values(
        {p: priors[p].median for p in FIT_PARAMETERS}, {}, {q: "global" for q in all_profiles()}, {"global": 1.0})),
        assumptions, deployment)
    usable = train & t["representable"].to_numpy() & np.isfinite(base["predicted"].to_numpy())
    if not usable.any():
        raise InvalidInputError("no representable case to fit on (empty training set)")
    prof_col = t["profile"].to_numpy()
    grp_col = t["group_id"].to_numpy()
    groups = {}
    for pr, g in zip(prof_col[usable], grp_col[usable]):
        groups.setdefault(pr, set()).add(g)
    fitted = tuple(sorted(p for p, gs in groups.items() if len(gs) >= MIN_GROUPS))
    sources = resolve_sources(set(fitted))
    tails = tail_factors(cases, measurements, train)
    in_fit = usable & np.isin(prof_col, list(fitted))
    if not in_fit.any():
        raise InvalidInputError(f"no profile has {MIN_GROUPS} or more groups in the training set")
    sub = cases.subset(in_fit)
    _check_shortcut(sub, catalog, _full_values({p: priors[p].median for p in FIT_PARAMETERS}, {},
                                               {q: "global" for q in all_profiles()}, tails), assumptions, deployment)
    st = sub.table
    measured = st["measured"].to_numpy()
    is_rate = np.array([METRICS[m] for m in st["metric"].to_list()])
    gsize = st.group_by("group_id").len()
    size = dict(zip(gsize["group_id"].to_list(), gsize["len"].to_list()))
    weight = np.sqrt(1.0 / np.sqrt(np.array([size[g] for g in st["group_id"].to_list()], dtype=float)))
    k = len(FIT_PARAMETERS)
    nx = k * (1 + len(fitted))
    u_prior = np.array([float(priors[p].to_u(priors[p].median)) for p in FIT_PARAMETERS])
    w_prior = np.array([priors[p].width for p in FIT_PARAMETERS])
    tau = np.array([SHRINKAGE[p] for p in FIT_PARAMETERS])
    if x0 is None or len(x0) != nx:
        x0 = np.concatenate([u_prior, np.zeros(nx - k)])
    state = {"last": None}

    def residuals(x):
        glob, prof = _profile_values(x, fitted, priors)
        cat = catalog_with(catalog, _full_values(glob, prof, sources, tails))
        pred = predict(sub, cat, assumptions, deployment)["predicted"].to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            r = _rate_log(is_rate, measured, pred)
        r = np.where(np.isfinite(r), r, 5.0)
        data = weight * _pseudo_huber(r / OBSERVATION_SCALE)
        state["last"] = r
        return np.concatenate([data, (x[:k] - u_prior) / w_prior, (x[k:] / np.tile(tau, len(fitted)))])

    # sparsity: a profile's deviations touch only its cases and their own prior rows
    m_rows = st.height + k + (nx - k)
    sparsity = lil_matrix((m_rows, nx), dtype=int)
    sparsity[:st.height, :k] = 1
    sp = st["profile"].to_numpy()
    for i, name in enumerate(fitted):
        rows = np.flatnonzero(sp == name)
        for j in range(k):
            sparsity[rows, k * (i + 1) + j] = 1
    for j in range(nx):
        sparsity[st.height + j, j] = 1
    res = least_squares(residuals, x0, jac_sparsity=sparsity, method="trf", x_scale=1.0, diff_step=1e-3,
                        max_nfev=max_nfev, xtol=1e-6, ftol=1e-8)
    glob, prof = _profile_values(res.x, fitted, priors)
    values = _full_values(glob, prof, sources, tails)
    se_out: dict = {name: {} for name in values}
    if se:
        J = res.jac.toarray() if hasattr(res.jac, "toarray") else np.asarray(res.jac)
        cov = np.linalg.pinv(J.T @ J)
        for i, name in enumerate(fitted):
            for j, p in enumerate(FIT_PARAMETERS):
                a, b = j, k * (i + 1) + j
                var_u = cov[a, a] + cov[b, b] + 2.0 * cov[a, b]
                u = res.x[a] + res.x[b]
                se_out[name][p] = float(abs(priors[p].dvalue_du(u)) * math.sqrt(max(var_u, 0.0)))
        for name, src in sources.items():
            if src:
                if src == "global":
                    se_out[name] = {p: float(abs(priors[p].dvalue_du(res.x[j])) * math.sqrt(max(cov[j, j], 0.0)))
                                    for j, p in enumerate(FIT_PARAMETERS)}
                else:
                    se_out[name] = dict(se_out[src])
    n_cases = {name: int(np.sum(sp == name)) for name in values}
    n_groups = {name: len(set(st.filter(pl.col("profile") == name)["group_id"].to_list())) for name in values}
    return FitResult(values=values, se=se_out, sources=sources, fitted=fitted, global_values=glob, n_cases=n_cases,
                     n_groups=n_groups, x=res.x, cost=float(res.cost), success=bool(res.success),
                     message=str(res.message), nfev=int(res.nfev))


# ------------------------------------------------------------------------------------------------
# Grouped cross-validation, error tables, bands
# ------------------------------------------------------------------------------------------------

@dataclass
class CrossValidation:
    """What :func:`cross_validate` returns.

    Attributes
    ----------
    predictions : pl.DataFrame, one row per case (order of ``cases.table``), the held-out prediction of its own
        group's fold: the columns of :func:`predict` plus ``fold`` (the held-out group_id) and ``source``
        (where the case's profile took its values in that fold: "" own fit, a fallback profile, or "global")
    folds : int, number of folds (groups)
    seconds : float, wall time
    """

    predictions: pl.DataFrame
    folds: int
    seconds: float


def _warm_start(full: FitResult, fitted: tuple) -> np.ndarray:
    """The full fit's transformed vector rearranged for a fold's fitted profiles (new ones start at 0)."""
    k = len(FIT_PARAMETERS)
    x = [full.x[:k]]
    for name in fitted:
        if name in full.fitted:
            i = full.fitted.index(name)
            x.append(full.x[k * (i + 1):k * (i + 2)])
        else:
            x.append(np.zeros(k))
    return np.concatenate(x)


def _fitted_profiles(cases: Cases, train: np.ndarray, usable: np.ndarray) -> tuple:
    t = cases.table
    sel = train & usable
    groups: dict = {}
    for pr, g in zip(t["profile"].to_numpy()[sel], t["group_id"].to_numpy()[sel]):
        groups.setdefault(pr, set()).add(g)
    return tuple(sorted(p for p, gs in groups.items() if len(gs) >= MIN_GROUPS))


def cross_validate(cases: Cases, catalog: Catalog, measurements: pl.DataFrame | None = None, *,
                   full: FitResult | None = None, assumptions: Assumptions = DEFAULT,
                   deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, max_nfev: int = 30,
                   progress=None) -> CrossValidation:
    """Leave-one-group-out cross-validation: refit without each model x hardware group, predict that group.

    Parameters
    ----------
    cases : Cases; catalog : Catalog; measurements : pl.DataFrame (:func:`load_measurements`, default: read)
    full : FitResult, optional; the fit on every case, used as the warm start of each fold
    assumptions, deployment : as for :func:`fit`
    max_nfev : int, solver bound per fold
    progress : callable(done, total), optional

    Returns
    -------
    CrossValidation; every prediction in it comes from a fit that never saw the case's group (its own
    profile's parameters, shared values, TPOT tail factor and fallback status all without it).

    Notes
    -----
    Folds are the ``group_id`` of measurements.csv (model|hardware): MLPerf submitters of one system, all
    rows of one vendor table for one chip, etc. Leaving a whole group out also tests the fallback: a
    profile with two groups has one left in the fold and falls back.
    """
    import time

    t0 = time.perf_counter()
    if measurements is None:
        measurements = load_measurements()
    if full is None:
        full = fit(cases, catalog, measurements=measurements, assumptions=assumptions, deployment=deployment, se=False)
    t = cases.table
    groups = t["group_id"].to_numpy()
    names = sorted(set(groups.tolist()))
    n = t.height
    out = {c: np.full(n, np.nan) for c in ("predicted", "log_ratio", "abs_error_frac", "batch_predicted")}
    met = np.ones(n, dtype=bool)
    source = [""] * n
    for done, g in enumerate(names):
        train = groups != g
        test = ~train
        fitted = _fitted_profiles(cases, train, t["representable"].to_numpy())
        try:
            f = fit(cases, catalog, measurements=measurements, train=train, x0=_warm_start(full, fitted),
                    assumptions=assumptions, deployment=deployment, max_nfev=max_nfev, se=False)
        except InvalidInputError:
            continue
        sub = cases.subset(test)
        p = predict(sub, catalog_with(catalog, f.values), assumptions, deployment)
        idx = np.flatnonzero(test)
        for c in out:
            out[c][idx] = p[c].to_numpy()
        met[idx] = p["slo_met"].to_numpy()
        for i, prof in zip(idx, sub.table["profile"].to_list()):
            source[i] = f.sources[prof]
        if progress is not None:
            progress(done + 1, len(names))
    pred = pl.DataFrame({"case_id": t["case_id"], **out, "slo_met": met, "fold": groups, "source": source},
                        nan_to_null=False)
    return CrossValidation(predictions=pred, folds=len(names), seconds=time.perf_counter() - t0)


V1_DEFAULTS = Assumptions(calibrated=frozenset(), eta_bw=0.60, eta_flop=0.30, eta_prefill=0.50, overhead_s=1.5e-3,
                          eta_routed_flop_frac=0.30, moe_layer_overhead_s=1.5e-4, kernel_latency_s=0.0,
                          sequence_overhead_s=0.0, cpu_overlap_frac=0.0,
                          kernel_launch_s=0.0, kernel_launch_eager_s=0.0)
"""The v1 global efficiencies (one set for every generation, fitted in v1 to 43 cases: 1.5 ms per step and 0.15 ms
per MoE layer added to the step, no kernel terms) in today's engine: the comparison row of the error table."""

REPORT_FAMILIES: tuple[str, ...] = ("family", "moe", "profile")
"""Columns of ``cases.table`` the error table groups by: scenario family, dense vs MoE, generation x precision."""

LOW_LATENCY_MAX_CONCURRENCY = 8
"""A case is low-latency when it runs at most this many concurrent requests (or is single-stream or MLPerf
Interactive). [requests]"""

LONG_CONTEXT_MIN_TOKENS = 8192
"""A case is long-context when its prompt or its answer has at least this many tokens (MLPerf's Llama-3.1-405B
prompts, assumed 8,192, count). [tokens]"""

CLASSES: dict[str, str] = {
    "dense": "models without routed experts",
    "moe": "mixture-of-experts models",
    "wide-ep": "attention data parallelism with expert parallelism (dp > 1 and ep > 1)",
    "low-latency": f"single stream, MLPerf Interactive, or at most {LOW_LATENCY_MAX_CONCURRENCY} concurrent requests",
    "long-context": f"a prompt or an answer of at least {LONG_CONTEXT_MIN_TOKENS:,} tokens",
}
"""Families of the issue-17 report (a case may be in several): the error table adds ``by = class`` (each family over
every generation) and ``by = class-generation`` (``<family>-<generation>``, e.g. ``moe-hopper``)."""


def case_classes(table: pl.DataFrame) -> pl.DataFrame:
    """Which :data:`CLASSES` each case belongs to: a long frame (``i`` = row of ``table``, ``class``).

    ``table`` needs ``moe`` and, when present, ``wide_ep``, ``low_latency``, ``long_context`` (booleans)."""
    flags = {"dense": ~pl.col("moe"), "moe": pl.col("moe")}
    for name, col in (("wide-ep", "wide_ep"), ("low-latency", "low_latency"), ("long-context", "long_context")):
        flags[name] = pl.col(col).fill_null(False) if col in table.columns else pl.lit(False)
    t = table.with_row_index("i").select("i", *[f.alias(n) for n, f in flags.items()])
    return t.unpivot(index="i", variable_name="class", value_name="on").filter(pl.col("on")).drop("on")


def error_table(cases: Cases, predictions: dict[str, pl.DataFrame], previous: dict[str, float] | None = None
                ) -> pl.DataFrame:
    """Median and P90 of |predicted / measured - 1| per family, for several prediction sets side by side.

    Parameters
    ----------
    cases : Cases
    predictions : dict name -> frame with ``abs_error_frac`` in the order of ``cases.table`` (e.g. ``{"cv":
        cross-validated, "roofline": IDEAL, "v1": V1_DEFAULTS}``)
    previous : dict case_id -> held-out |predicted / measured - 1| of the tables shipped before this fit (the
        committed calibration_predictions.csv), optional: adds ``previous_median_abs_error_frac``,
        ``previous_p90_abs_error_frac`` and ``previous_n_cases`` over the family's cases that had one

    Returns
    -------
    pl.DataFrame: ``by`` (all | family | moe | profile | class | class-generation), ``family``, ``n_cases``,
    ``n_groups`` and, per prediction set, ``<name>_median_abs_error_frac`` and ``<name>_p90_abs_error_frac``. Only
    representable cases (``cases.table["representable"]``) with a finite prediction in every set count (the
    previous set is read where it exists, never filters). ``class`` rows are the families of :data:`CLASSES`
    (a case may count in several), ``class-generation`` rows the same per accelerator generation.
    """
    cols = ["case_id", "group_id", "family", "moe", "profile", "generation", "representable"]
    t = cases.table.select(cols + [c for c in ("wide_ep", "low_latency", "long_context") if c in cases.table.columns])
    member = case_classes(t)
    t = t.with_columns(pl.when(pl.col("moe")).then(pl.lit("moe")).otherwise(pl.lit("dense")).alias("moe"))
    ok = t["representable"].to_numpy().copy()
    for name, p in predictions.items():
        e = p["abs_error_frac"].to_numpy()
        ok &= np.isfinite(e)
        t = t.with_columns(pl.Series(f"{name}_err", e))
    sets = list(predictions)
    if previous is not None:
        prev = np.array([previous.get(c, np.nan) for c in t["case_id"].to_list()], dtype=float)
        t = t.with_columns(pl.Series("previous_err", prev, nan_to_null=True))
        sets.append("previous")
    t = t.with_row_index("i").filter(pl.Series(ok)).with_columns(pl.lit("all").alias("all"))
    aggs = [pl.len().alias("n_cases"), pl.col("group_id").n_unique().alias("n_groups")]
    for name in sets:
        aggs += [pl.col(f"{name}_err").median().alias(f"{name}_median_abs_error_frac"),
                 pl.col(f"{name}_err").quantile(0.9, "linear").alias(f"{name}_p90_abs_error_frac")]
    if previous is not None:
        aggs.append(pl.col("previous_err").count().alias("previous_n_cases"))
    parts = []
    for by in ("all",) + REPORT_FAMILIES:
        g = t.group_by(by).agg(aggs).rename({by: "family"}).with_columns(pl.lit(by).alias("by"))
        parts.append(g.sort("family"))
    tc = t.join(member, on="i", how="inner")
    order = {c: j for j, c in enumerate(CLASSES)}
    g = tc.group_by("class").agg(aggs).rename({"class": "family"}).with_columns(pl.lit("class").alias("by"))
    parts.append(g.sort(pl.col("family").replace_strict(order, return_dtype=pl.Int64)))
    tg = tc.with_columns((pl.col("class") + "-" + pl.col("generation")).alias("cg"))
    g = tg.group_by("cg").agg(aggs).rename({"cg": "family"}).with_columns(pl.lit("class-generation").alias("by"))
    parts.append(g.sort("family"))
    return pl.concat([p.select("by", "family", *[c for c in p.columns if c not in ("by", "family")]) for p in parts],
                     how="diagonal_relaxed")


def previous_errors(predictions: pl.DataFrame) -> dict[str, float]:
    """case_id -> held-out |predicted / measured - 1| of a shipped calibration_predictions.csv (the cases it counted
    in its error table), for the ``previous`` columns of :func:`error_table`."""
    if predictions.height == 0 or "abs_error_frac" not in predictions.columns:
        return {}
    p = predictions.filter(pl.col("in_error_table") & pl.col("abs_error_frac").is_not_null())
    return dict(zip(p["case_id"].to_list(), p["abs_error_frac"].cast(pl.Float64).to_list()))


ENGINE_TITLES: dict[str, str] = {
    "tensorrt-llm-cpp": "TensorRT-LLM C++ runtime",
    "tensorrt-llm-pytorch": "TensorRT-LLM PyTorch (>= 1.0)",
    "sglang": "SGLang",
    "vllm-async": "vLLM, async scheduling",
    "vllm-sync": "vLLM, no async scheduling",
    "unknown": "Engine not stated",
}
"""Reader's name of each serving-engine class (:data:`ENGINE_OVERLAP_SCHEDULER` keys, same order)."""


def engine_error_table(predictions: pl.DataFrame, measurements: pl.DataFrame) -> pl.DataFrame:
    """Held-out error per serving-engine class and dense vs MoE, from the shipped predictions.

    Parameters
    ----------
    predictions : pl.DataFrame of calibration_predictions.csv (``case_id``, ``group_id``, ``moe``, ``metric``,
        ``predicted_over_measured``, ``abs_error_frac``, ``in_error_table``)
    measurements : pl.DataFrame of :func:`load_measurements` (``case_id``, ``source_kind``, ``framework``,
        ``framework_version``): each case's engine class (:func:`engine_class`)

    Returns
    -------
    pl.DataFrame, one row per (engine class, dense / MoE) with cases, in :data:`ENGINE_TITLES` order: ``engine_class``,
    ``moe`` ("dense" | "moe"), ``n_cases``, ``n_groups``, ``median_abs_error_frac``, ``p90_abs_error_frac`` (as the
    error table counts them: the cases ``in_error_table``) and ``median_speed_ratio``: the median of predicted over
    measured speed (a rate's ratio, a time's inverse), > 1 where econ predicts the engine faster than measured. A case
    without a measurement row is left out.
    """
    keys = ("case_id", "source_kind", "framework", "framework_version")
    m = measurements.select(keys).unique("case_id")
    eng = [engine_class(k, f, v, c) for c, k, f, v in m.select(keys).iter_rows()]
    m = m.select("case_id").with_columns(pl.Series("engine_class", eng, dtype=pl.String))
    rate = pl.col("metric").replace_strict(METRICS, default=True, return_dtype=pl.Boolean)
    t = (predictions.filter(pl.col("in_error_table") & pl.col("abs_error_frac").is_not_null())
         .join(m, on="case_id", how="inner")
         .with_columns(pl.when(rate).then(pl.col("predicted_over_measured"))
                       .otherwise(1.0 / pl.col("predicted_over_measured")).alias("speed"),
                       pl.when(pl.col("moe")).then(pl.lit("moe")).otherwise(pl.lit("dense")).alias("moe")))
    order = {e: j for j, e in enumerate(ENGINE_TITLES)}
    out = t.group_by("engine_class", "moe").agg(
        pl.len().alias("n_cases"), pl.col("group_id").n_unique().alias("n_groups"),
        pl.col("abs_error_frac").median().alias("median_abs_error_frac"),
        pl.col("abs_error_frac").quantile(0.9, "linear").alias("p90_abs_error_frac"),
        pl.col("speed").log().median().exp().alias("median_speed_ratio"))
    return out.sort(pl.col("engine_class").replace_strict(order, default=len(order), return_dtype=pl.Int64),
                    "moe").select("engine_class", "moe", "n_cases", "n_groups", "median_abs_error_frac",
                                  "p90_abs_error_frac", "median_speed_ratio")


def bands(cases: Cases, cv: CrossValidation, sources: dict) -> dict[str, tuple[float, float, str]]:
    """Each profile's band: 10th and 90th percentile of held-out ln(measured / predicted) of the rate.

    Returns
    -------
    dict profile -> (p10, p90, basis): its own held-out cases when it has at least MIN_BAND_CASES of them from
    MIN_GROUPS groups, else those of the profile it falls back to, else every held-out case ("basis" says which).
    A profile with a few held-out cases of its own (too few for its own quantiles) gets the borrowed band widened
    to cover every one of them that reached its speed or latency limits: CDNA 4 FP8 borrows CDNA 3's band
    (about x0.7-1.1) while its three InferenceX cases are held out at 1/2.8-1/3.2 of the prediction, and a band
    that hides that would not be honest.
    """
    t = cases.table.select("profile", "group_id", "representable").hstack(cv.predictions.select("log_ratio",
                                                                                                "slo_met"))
    t = t.filter(pl.col("representable") & pl.col("log_ratio").is_finite())

    def own(prof):
        s = t.filter(pl.col("profile") == prof)
        if s.height >= MIN_BAND_CASES and s["group_id"].n_unique() >= MIN_GROUPS:
            return s["log_ratio"].to_numpy()
        return None

    out = {}
    all_lr = t["log_ratio"].to_numpy()
    for prof in all_profiles():
        lr, basis = own(prof), "its own held-out cases"
        if lr is None:
            src = sources.get(prof) or ""
            if src and src != "global" and own(src) is not None:
                lr, basis = own(src), f"the held-out cases of {src} (too few of its own)"
            else:
                lr, basis = all_lr, "every held-out case (too few of its own)"
        lo, hi = float(np.quantile(lr, 0.1)), float(np.quantile(lr, 0.9))
        # a held-out prediction that could not reach the case's speed or latency limits at all is a cliff (the
        # batch-1 fallback), not a scale error: it counts in the error table but does not widen the band
        mine_all = t.filter(pl.col("profile") == prof)
        mine = mine_all.filter(pl.col("slo_met"))["log_ratio"].to_numpy()
        if own(prof) is None and len(mine):
            lo, hi = min(lo, float(mine.min())), max(hi, float(mine.max()))
            basis += f", widened to cover its own {len(mine)} held-out case{'s' if len(mine) > 1 else ''}"
            cliffs = mine_all.height - len(mine)
            if cliffs:
                basis += (f" ({cliffs} more left out: the held-out fit never reached {'their' if cliffs > 1 else 'its'} "
                          f"measured speed or latency limits, a cliff rather than a scale error)")
        out[prof] = (lo, hi, basis)
    return out


def bootstrap_tail_se(cases: Cases, measurements: pl.DataFrame, *, draws: int = 200, seed: int = 20261122) -> dict:
    """Standard error of each profile's measured TPOT tail factor by a bootstrap over its groups."""
    ratio = measurements.select("case_id", (pl.col("measured_p99_tpot_s") / pl.col("measured_mean_tpot_s")).alias("r"))
    t = cases.table.select("case_id", "profile", "group_id").join(ratio, on="case_id").filter(
        pl.col("r").is_not_null() & (pl.col("r") >= 1.0))
    rng = np.random.default_rng(seed)
    out = {}
    for prof, sub in t.group_by("profile"):
        prof = prof[0]
        by = [g["r"].to_numpy() for _, g in sub.group_by("group_id")]
        if len(by) < 2:
            continue
        meds = [np.median(np.concatenate([by[i] for i in rng.integers(0, len(by), len(by))])) for _ in range(draws)]
        out[prof] = float(np.std(meds, ddof=1))
    return out


def _git_commit(repo: Path) -> str:
    import subprocess
    try:
        r = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                           timeout=10)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def calibration_frame(cases: Cases, full: FitResult, cv: CrossValidation | None, measurements: pl.DataFrame, *,
                      fit_date: str | None = None, command: str = "econ calibrate --write",
                      measurements_path: str | Path | None = None) -> pl.DataFrame:
    """The calibration table (econ.tables.catalog.CALIBRATION_SCHEMA) of a fit and its cross-validation.

    Parameters
    ----------
    cases, full : the cases and the fit on all of them
    cv : CrossValidation of the same cases, or None (no held-out errors: the band is 0 and the cv columns are
        empty; the drift check compares parameters only)
    measurements : pl.DataFrame (:func:`load_measurements`) for the tail-factor standard errors and ``as_of``
    fit_date : "YYYY-MM-DD", default today
    command : str, the command that produced it (for ``source``)
    measurements_path : path of the measurements file named in ``source``

    Returns
    -------
    pl.DataFrame, one row per (generation, precision) profile, CALIBRATION_SCHEMA column order, every value
    rounded to 6 significant digits.
    """
    import datetime
    import hashlib

    from econ.tables.catalog import CALIBRATION_SCHEMA

    fit_date = fit_date or datetime.date.today().isoformat()
    mpath = Path(measurements_path) if measurements_path is not None else MEASUREMENTS_PATH
    digest = hashlib.sha256(mpath.read_bytes()).hexdigest()[:12] if mpath.is_file() else "unknown"
    commit = _git_commit(DEFAULT_DATA_DIR.parent)
    as_of = max(d.strip("~") for d in measurements["as_of"].drop_nulls().to_list()) if "as_of" in measurements.columns \
        else fit_date
    source = (f"data/measurements.csv ({measurements.height} included rows, sha256 {digest}) fitted by `{command}` "
              f"(econ.analyses.calibration: MAP least squares with priors from data/kernels/ and shrinkage to shared values, "
              f"leave-one-group-out cross-validation) at commit {commit}")
    tail_se = bootstrap_tail_se(cases, measurements)
    tails_own = _tails_with_data(cases, measurements)
    b = bands(cases, cv, full.sources) if cv is not None else {}
    t = cases.table
    rep = t["representable"].to_numpy()
    cv_err = cv.predictions["abs_error_frac"].to_numpy() if cv is not None else np.full(t.height, np.nan)
    rows = []
    for prof in all_profiles():
        gen, p = prof.rsplit("-", 1)
        v, se = full.values[prof], full.se.get(prof, {})
        src = full.sources[prof]
        sel = rep & (t["profile"].to_numpy() == prof)
        n_cases = int(sel.sum())
        n_groups = int(len(set(t["group_id"].to_numpy()[sel].tolist())))
        errs = cv_err[sel & np.isfinite(cv_err)]
        row = {"profile": prof, "generation": gen, "precision": p}
        for k in PROFILE_PARAMETERS:
            row[k] = _fmt(v[k])
            if k in FIT_PARAMETERS and k in se:
                row[f"{k}_se"] = _fmt(se[k])
            elif k == "tpot_tail_factor":
                tsrc = prof if prof in tail_se else (src if src in tail_se else None)
                row[f"{k}_se"] = _fmt(tail_se[tsrc]) if tsrc else None
            else:
                row[f"{k}_se"] = None
        lo, hi, basis = b.get(prof, (0.0, 0.0, "no cross-validation run"))
        row["log_ratio_p10"], row["log_ratio_p90"] = _fmt(lo), _fmt(hi)
        row["cv_median_abs_error_frac"] = _fmt(float(np.median(errs))) if errs.size else None
        row["cv_p90_abs_error_frac"] = _fmt(float(np.quantile(errs, 0.9))) if errs.size else None
        row["n_cases"], row["n_groups"] = str(n_cases), str(n_groups)
        row["fallback_from"] = src or None
        row["fit_date"], row["source"], row["as_of"] = fit_date, source, as_of
        notes = []
        if src:
            why = f"{n_groups} group(s) of its own, fewer than {MIN_GROUPS}"
            notes.append(f"not fitted ({why}): values and standard errors of {src}")
        else:
            notes.append(f"fitted on {full.n_cases.get(prof, n_cases)} cases in {full.n_groups.get(prof, n_groups)} "
                         f"groups with shrinkage to the shared values")
        notes.append(f"band from {basis}")
        own_tail = prof in tails_own
        notes.append("moe_tile_rows held at 1; tpot_tail_factor = median p99 / mean "
                     "TPOT of " + ("its own MLPerf Server/Interactive runs" if own_tail else
                                   f"the runs of {src if src in tails_own else 'every profile'}"))
        row["notes"] = "; ".join(notes)
        rows.append(row)
    cols = list(CALIBRATION_SCHEMA)
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema={c: pl.String for c in cols})


def _tails_with_data(cases: Cases, measurements: pl.DataFrame) -> set:
    return set(tail_factors(cases, measurements)) - {"global"}


def write_calibration(frame: pl.DataFrame, path: str | Path | None = None, *, force: bool = False) -> Path:
    """Write the calibration table atomically (econ.safe_write), never over a file without ``force``.

    Raises
    ------
    InvalidInputError
        The file exists and ``force`` is False, the table breaks ``econ.tables.catalog.CALIBRATION_SCHEMA`` (nothing is
        written), or the write fails (the previous file stays intact).
    """
    import io

    from econ.tables.catalog import CALIBRATION_SCHEMA, DataError, validate_table
    from econ.safe_write import write_text

    p = Path(path) if path is not None else CALIBRATION_PATH
    text = frame.write_csv()
    try:  # the loader's own rules, before anything is written: a table econ could not load is never shipped
        validate_table(pl.read_csv(io.StringIO(text), infer_schema=False), CALIBRATION_SCHEMA, "profile",
                       "calibration.csv")
    except DataError as exc:
        raise InvalidInputError(f"the fitted calibration table breaks its own schema, nothing written: {exc}") from None
    return write_text(text, p, force=force, force_hint="--force", what="calibration table")


ERROR_SETS: dict[str, str] = {
    "cv": "calibrated profiles, each case predicted by the fit that left its model x hardware group out",
    "roofline": "pure roofline (econ.assumptions.IDEAL, `--ideal`): datasheet peaks, no efficiency below 1, no overhead",
    "v1": "v1 global efficiencies (V1_DEFAULTS: the v1 fit, one set for every chip, nothing "
          "calibrated)",
}
"""The prediction sets of the shipped error table (``<name>_median_abs_error_frac`` etc.)."""


def _fit_source(measurements: pl.DataFrame, measurements_path, command: str) -> str:
    import hashlib

    mpath = Path(measurements_path) if measurements_path is not None else MEASUREMENTS_PATH
    digest = hashlib.sha256(mpath.read_bytes()).hexdigest()[:12] if mpath.is_file() else "unknown"
    return (f"data/measurements.csv ({measurements.height} included rows, sha256 {digest}): held-out predictions of "
            f"`{command}` (econ.analyses.calibration.cross_validate, leave one model x hardware group out) at commit "
            f"{_git_commit(DEFAULT_DATA_DIR.parent)}")


def errors_frame(cases: Cases, errors: pl.DataFrame, sources: dict, measurements: pl.DataFrame, *,
                 fit_date: str | None = None, command: str = "econ calibrate --write",
                 measurements_path: str | Path | None = None) -> pl.DataFrame:
    """The shipped error table (econ.tables.catalog.CALIBRATION_ERRORS_SCHEMA) from :func:`error_table`.

    Parameters
    ----------
    cases : Cases
    errors : pl.DataFrame, :func:`error_table` of the prediction sets :data:`ERROR_SETS` (``cv``, ``roofline``,
        ``v1``), in the order of ``cases.table``
    sources : dict profile -> "" | fallback profile | "global" (``FitResult.sources`` of the full fit)
    measurements : pl.DataFrame (:func:`load_measurements`): ``as_of`` and the row count in ``source``
    fit_date : "YYYY-MM-DD", default today; command, measurements_path : named in ``source``

    Returns
    -------
    pl.DataFrame, one row per (by, family) of ``errors``, every column as text (6 significant digits),
    CALIBRATION_ERRORS_SCHEMA column order; ``id`` = "all", "family-offline", "moe-dense", "profile-hopper-fp8".

    Raises
    ------
    InvalidInputError
        ``errors`` lacks one of the prediction sets of :data:`ERROR_SETS`.
    """
    import datetime

    from econ.tables.catalog import CALIBRATION_ERRORS_SCHEMA

    missing = [f"{k}_median_abs_error_frac" for k in ERROR_SETS if f"{k}_median_abs_error_frac" not in errors.columns]
    if missing:
        raise InvalidInputError(f"errors lacks column(s) {', '.join(missing)} (error_table of {list(ERROR_SETS)})")
    fit_date = fit_date or datetime.date.today().isoformat()
    as_of = max(d.strip("~") for d in measurements["as_of"].drop_nulls().to_list()) if "as_of" in measurements.columns \
        else fit_date
    source = _fit_source(measurements, measurements_path, command)
    rows = []
    for r in errors.iter_rows(named=True):
        by, fam = r["by"], r["family"]
        row = {"id": "all" if by == "all" else f"{by}-{fam}", "by": by, "family": fam,
               "n_cases": str(r["n_cases"]), "n_groups": str(r["n_groups"])}
        for k in ERROR_SETS:
            for q in ("median", "p90"):
                row[f"{k}_{q}_abs_error_frac"] = _fmt(r[f"{k}_{q}_abs_error_frac"])
        prev_n = r.get("previous_n_cases")
        if prev_n:
            for q in ("median", "p90"):
                row[f"previous_{q}_abs_error_frac"] = _fmt(r[f"previous_{q}_abs_error_frac"])
            row["previous_n_cases"] = str(prev_n)
        src = sources.get(fam, "") if by == "profile" else ""
        row["fallback_from"] = src or None
        row["fit_date"], row["source"], row["as_of"] = fit_date, source, as_of
        notes = ["median and P90 of |predicted / measured - 1| over the representable cases with a prediction in "
                 "every set; cv: " + ERROR_SETS["cv"]]
        if by in ("class", "class-generation"):
            cls = next((c for c in CLASSES if fam == c or fam.startswith(c + "-")), fam)
            notes.append(f"family {cls}: {CLASSES.get(cls, '')} (a case may count in several families)")
        if prev_n:
            notes.append(f"previous: the held-out errors shipped before this fit (calibration_predictions.csv as "
                         f"committed), on the {prev_n} of these cases it predicted")
        if src:
            notes.append(f"the profile is not fitted on its own (fewer than {MIN_GROUPS} groups): its cases are "
                         f"predicted with {src}")
        row["notes"] = "; ".join(notes)
        rows.append(row)
    cols = list(CALIBRATION_ERRORS_SCHEMA)
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema={c: pl.String for c in cols})


def predictions_frame(cases: Cases, predictions: dict[str, pl.DataFrame], measurements: pl.DataFrame, *,
                      fit_date: str | None = None) -> pl.DataFrame:
    """One row per case with its held-out prediction (econ.tables.catalog.CALIBRATION_PREDICTIONS_SCHEMA).

    Parameters
    ----------
    cases : Cases
    predictions : dict with ``cv`` (:attr:`CrossValidation.predictions`), ``roofline`` and ``v1``
        (:func:`predict` frames), each in the order of ``cases.table``
    measurements : pl.DataFrame (:func:`load_measurements`): each row's ``source`` and ``as_of``
    fit_date : "YYYY-MM-DD", default today

    Returns
    -------
    pl.DataFrame, every column as text; ``predicted`` / ``predicted_over_measured`` / ``abs_error_frac`` empty
    where no point of the case is feasible; ``in_error_table`` = the case counts in :func:`error_table` (
    representable and predicted by every set); ``profile_source`` = where its profile took its values in the
    held-out fold (empty: its own fit).
    """
    import datetime

    from econ.tables.catalog import CALIBRATION_PREDICTIONS_SCHEMA

    fit_date = fit_date or datetime.date.today().isoformat()
    t = cases.table
    cv = predictions["cv"]
    ok = t["representable"].to_numpy().copy()
    for p in predictions.values():
        ok &= np.isfinite(p["abs_error_frac"].to_numpy())
    meas = {r["case_id"]: r for r in measurements.select("case_id", "source", "as_of").iter_rows(named=True)}
    pred, err = cv["predicted"].to_numpy(), cv["abs_error_frac"].to_numpy()
    roof = predictions["roofline"]["predicted"].to_numpy()
    src = cv["source"].to_list() if "source" in cv.columns else [""] * t.height

    def num(x):
        return _fmt(float(x)) if np.isfinite(x) and x > 0 else None

    rows = []
    for i, r in enumerate(t.iter_rows(named=True)):
        m = meas.get(r["case_id"], {})
        notes = []
        if r["metric"] == "total_tokens_per_s_per_gpu":
            notes.append("measured = the output share of the input + output tokens/s per GPU (PREDICTED_AS)")
        if r["input_len_basis"]:
            notes.append("prompt length: the MLPerf dataset's mean (econ.analyses.calibration.MLPERF_PROMPT_TOKENS)")
        if r["spec_basis"]:
            notes.append("speculative decoding: " + r["spec_basis"])
        rows.append({
            "case_id": r["case_id"], "group_id": r["group_id"], "source_kind": r["source_kind"], "model": r["model"],
            "hardware": r["hardware"], "profile": r["profile"], "scenario": r["scenario"], "family": r["family"],
            "moe": "true" if r["moe"] else "false", "metric": r["metric"], "measured": _fmt(r["measured"]),
            "predicted": num(pred[i]), "predicted_over_measured": num(pred[i] / r["measured"]),
            "abs_error_frac": _fmt(err[i]) if np.isfinite(err[i]) else None, "roofline_predicted": num(roof[i]),
            "in_error_table": "true" if ok[i] else "false", "profile_source": src[i] or None,
            "generation": r["generation"], "wide_ep": _flag(r.get("wide_ep")), "low_latency": _flag(r.get("low_latency")),
            "long_context": _flag(r.get("long_context")),
            "reason": r["reason"] or None, "fit_date": fit_date,
            "source": m.get("source") or "data/measurements.csv", "as_of": m.get("as_of") or fit_date,
            "notes": "; ".join(notes) or None,
        })
    cols = list(CALIBRATION_PREDICTIONS_SCHEMA)
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema={c: pl.String for c in cols})


def _flag(v) -> str | None:
    return None if v is None else ("true" if v else "false")


def write_table(frame: pl.DataFrame, path: str | Path, *, force: bool = False, what: str = "table") -> Path:
    """Write one calibration output table atomically (econ.safe_write), never over a file without ``force``."""
    from econ.safe_write import write_text

    return write_text(frame.write_csv(), Path(path), force=force, force_hint="--force", what=what)


ERROR_CHECK_RTOL = 1e-4
"""Relative tolerance of :func:`check_errors` (the files hold 6 significant digits)."""


def check_errors(errors: pl.DataFrame, predictions: pl.DataFrame, calibration: pl.DataFrame,
                 cases: Cases) -> list[str]:
    """Consistency of the shipped error tables with the data and with calibration.csv (no refit needed).

    Parameters
    ----------
    errors, predictions : the loaded calibration_errors.csv / calibration_predictions.csv (econ.tables.catalog loaders)
    calibration : the loaded calibration.csv
    cases : Cases of today's measurements.csv

    Returns
    -------
    list of str, one per problem (empty = consistent): a case added, dropped or re-measured since the tables
    were written; an error row that its predictions do not give; a profile whose held-out median in
    calibration.csv differs from its predictions'.
    """
    out = []
    t = cases.table
    have = dict(zip(predictions["case_id"].to_list(), predictions["measured"].to_list()))
    now = dict(zip(t["case_id"].to_list(), t["measured"].to_list()))
    added, dropped = sorted(set(now) - set(have)), sorted(set(have) - set(now))
    if added:
        out.append(f"{len(added)} measurement(s) without a held-out prediction (first: {added[0]})")
    if dropped:
        out.append(f"{len(dropped)} prediction(s) of measurements no longer included (first: {dropped[0]})")
    moved = [c for c in set(now) & set(have) if not math.isclose(now[c], have[c], rel_tol=ERROR_CHECK_RTOL)]
    if moved:
        out.append(f"{len(moved)} measurement(s) changed value since the predictions were written (first: "
                   f"{sorted(moved)[0]})")
    p = predictions.filter(pl.col("in_error_table"))
    member = case_classes(p)
    p = p.with_columns(pl.when(pl.col("moe")).then(pl.lit("moe")).otherwise(pl.lit("dense")).alias("moe"),
                       pl.lit("all").alias("all")).with_row_index("i")
    pc = p.join(member, on="i", how="inner")
    if "generation" in pc.columns:
        pc = pc.with_columns((pl.col("class") + "-" + pl.col("generation").fill_null("")).alias("class-generation"))
    got = {(r["by"], r["family"]): r for r in errors.iter_rows(named=True)}
    groupings = [(by, p) for by in ("all",) + REPORT_FAMILIES] + [("class", pc)]
    if "class-generation" in pc.columns and pc["generation"].null_count() == 0:
        groupings.append(("class-generation", pc))
    elif any(b == "class-generation" for b, _ in got):
        got = {k: v for k, v in got.items() if k[0] != "class-generation"}
    for by, frame in groupings:
        for fam, sub in frame.group_by(by):
            fam = fam[0]
            r = got.pop((by, fam), None)
            if r is None:
                out.append(f"calibration_errors.csv has no row by={by}, family={fam}")
                continue
            med = float(sub["abs_error_frac"].median())
            if r["n_cases"] != sub.height or not math.isclose(r["cv_median_abs_error_frac"], med,
                                                              rel_tol=ERROR_CHECK_RTOL, abs_tol=1e-6):
                out.append(f"calibration_errors.csv {by}={fam}: {r['n_cases']} cases, held-out median "
                           f"{r['cv_median_abs_error_frac']:.4g}; its predictions give {sub.height} cases, "
                           f"{med:.4g}")
    for (by, fam) in got:
        out.append(f"calibration_errors.csv row by={by}, family={fam} has no prediction")
    own = predictions.filter(pl.col("abs_error_frac").is_not_null() & pl.col("reason").is_null())
    for r in calibration.iter_rows(named=True):
        committed = r["cv_median_abs_error_frac"]
        sub = own.filter(pl.col("profile") == r["profile"])
        if committed is None or sub.height == 0:
            continue
        med = float(sub["abs_error_frac"].median())
        if not math.isclose(committed, med, rel_tol=ERROR_CHECK_RTOL, abs_tol=1e-6):
            out.append(f"calibration.csv {r['profile']}: held-out median {committed:.4g}, its predictions give "
                       f"{med:.4g} (write all three tables with one econ calibrate --write)")
    return out


DRIFT_RTOL = 0.02
"""Relative difference between a committed parameter and a refit above which ``econ calibrate --check`` fails:
the solver reproduces its optimum to ~1e-5 (xtol 1e-6 in the transformed scale), and the standard errors
are 5-30%, so 2% flags a real change of data or physics without flapping on rounding."""

DRIFT_ATOL: dict[str, float] = {"overhead_s": 2e-6, "kernel_latency_s": 2e-8, "sequence_overhead_s": 2e-8,
                                "moe_gemm_half_width": 1.0, "overlap_frac": 1e-6, "cpu_overlap_frac": 1e-6}
"""Absolute floor of the tolerance for parameters that may sit near zero. [their units]"""


def drift(committed: pl.DataFrame, refit: pl.DataFrame, *, rtol: float = DRIFT_RTOL) -> list[dict]:
    """Parameters of ``committed`` (the table on disk) that differ from ``refit`` beyond the tolerance.

    Returns
    -------
    list of dicts (profile, parameter, committed, refit, tolerance); empty = no drift. A profile missing from
    either table is reported with parameter ``"profile"``.
    """
    a = {r["profile"]: r for r in committed.iter_rows(named=True)}
    b = {r["profile"]: r for r in refit.iter_rows(named=True)}
    out = []
    for prof in sorted(set(a) | set(b)):
        if prof not in a or prof not in b:
            out.append(dict(profile=prof, parameter="profile", committed=prof in a, refit=prof in b, tolerance=0))
            continue
        for k in PROFILE_PARAMETERS:
            x, y = float(a[prof][k]), float(b[prof][k])
            tol = max(rtol * abs(x), DRIFT_ATOL.get(k, 0.0))
            if not abs(x - y) <= tol:
                out.append(dict(profile=prof, parameter=k, committed=x, refit=y, tolerance=tol))
    return out
