"""Predicted vs measured: the model against published inference benchmarks, and the fit of its efficiencies.

The cases live in ``data/validation_cases.csv`` (one published figure per row, converted to the
model's units; ``unit_note`` shows the arithmetic). They were curated from
``../shared/reference/validation_public.csv`` (NVIDIA NIM benchmark tables, TensorRT-LLM performance
tables v0.5 / v0.6.1 / v0.17 / v1.0, the NVIDIA speculative-decoding blog, vLLM's CI latency
benchmark, TensorRT-LLM's DeepSeek-R1 tech blogs) and, for MoE models the reference file lacks, from
the same TensorRT-LLM sources read directly (perf-overview tables for Qwen3-30B-A3B and Llama-4-Scout,
the DeepSeek-R1 "best performance practice" guide with its exact concurrency); each row's ``source``
says which. The fitted cases (``in_fit``) are configurations the model represents: dense Llama
models and MoE models (Qwen3, Llama 4 Scout, DeepSeek-R1), tensor parallelism inside one scale-up
domain or attention data parallelism with expert parallelism (``dp``, ``ep``), one precision for the
weights, a known or capacity-limited batch, no speculative decoding; the others show known
structural misses (speculative decoding, prefill interleaved with decode, the capacity wall at its
edge, 2023 static batching). Left out, because the model cannot represent them as published: MLPerf
Mixtral rows (dataset-mean lengths and layout not in the reference), SemiAnalysis InferenceX
gpt-oss rows ("best available config", may be disaggregated or speculative), vLLM's wide-EP and
GB200 disaggregated DeepSeek figures (batch and precision mix not stated).

Columns of the case file (:data:`CASE_COLUMNS`): ``case_id`` (unique, kebab-case); ``model`` and
``hardware`` (catalog ids); ``num_gpus`` = ``tp`` x ``dp`` x ``pp``; ``dp`` (attention data-parallel
groups, 1 = none) and ``ep`` (expert-parallel ranks, 1 = experts tensor-parallel; must divide
``tp`` x ``dp``), as in :func:`econ.deployment.evaluate`; ``precision`` (bf16|fp8|fp4 weights);
``kv_precision`` (bf16|fp8 KV cache); ``batch_size`` (sequences decoded together on the whole
instance, or ``max``); ``input_len`` / ``output_len`` [tokens]; ``metric`` (below); ``measured_value``
(in the metric's unit, per GPU where the metric says so); ``in_fit`` (``false`` keeps a case that
shows a known structural miss, e.g. speculative decoding, out of the fit and out of the tolerance
test); ``unit_note`` (how the published figure was converted); ``source``, ``as_of``, ``notes``
(workload, engine, assumptions such as an inferred batch or layout).

Metrics (:data:`METRICS`) and how the model predicts them from one :func:`econ.deployment.evaluate`
row (which is :func:`econ.sweep.evaluate` for ``ep = dp = 1``):

- ``tpot_s``: decode step time at ``batch_size`` (``tpot_s``).
- ``tokens_per_s_per_user``: 1 / TPOT.
- ``ttft_s``: prefill of *one* prompt (concurrency 1), i.e. ``evaluate`` with
  ``prefill_chunk_tokens = 1`` so the prefill step holds a single request.
- ``output_tokens_per_s_per_gpu``: end-to-end output rate of a saturated server that prefills and
  decodes every request on the same GPUs (static batching, or in-flight batching at an infinite
  request rate as in ``trtllm-bench`` and MLPerf offline)::

      rate = output_len / (input_len / input_tokens_per_s_per_gpu + output_len / output_tokens_per_s_per_gpu)

  Every published throughput includes its prefill time; with the default efficiencies the
  decode-only rate is 1.02-1.04x this for 128/2048, 1.3-1.7x for 1000/1000 and 4-5x for 2048/128.
  (This is ``served_output_tokens_per_s_per_gpu`` of an aggregated :func:`econ.deployment.evaluate`.)

``batch_size = max`` means "at the KV-cache capacity": the ``max_batch_size`` evaluate reports
(weights + KV at input + output tokens within ``usable_hbm_frac`` of HBM), capped at
:data:`ENGINE_MAX_BATCH` = 4096 per attention-DP group, the cap of ``trtllm-bench``'s engine sizing
(NVIDIA/TensorRT-LLM ``tensorrt_llm/bench/build/tuning.py``, ``finetune_setting``:
``min(kv_cache_max_requests, 4096)``; it sizes the batch from the KV cache at ISL + OSL as we do;
under attention DP its ``max_batch_size`` applies per rank).

The fit (:func:`fit_efficiencies`) minimises the sum of squared log errors ln(predicted / measured)
over (eta_bw, eta_flop, eta_prefill, overhead_s, eta_routed_flop_frac, moe_layer_overhead_s) with
``scipy.optimize.least_squares`` (trust-region reflective, bounds :data:`FIT_BOUNDS`). Log errors make
a 2x miss count the same on a 6 ms TPOT as on a 20,000 tokens/s throughput. The two MoE parameters
act on MoE cases only (dense cases have zero sensitivity to them), so dense cases alone determine the
first four and the MoE cases, given those, the last two; ``benchmarks/validate.py`` prints both that
staged fit and the joint one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from econ import precision as prec
from econ.assumptions import DEFAULT, Assumptions
from econ.catalog import DEFAULT_DATA_DIR, Catalog, check_ids, read_raw_csv
from econ.assumptions import DEFAULT_DEPLOYMENT, DeploymentAssumptions
from econ.engine import evaluate
from econ.errors import DataError, InvalidInputError

DEFAULT_CASES_PATH = DEFAULT_DATA_DIR / "validation_cases.csv"

CASE_COLUMNS: tuple[str, ...] = (
    "case_id", "model", "hardware", "num_gpus", "tp", "dp", "ep", "pp", "precision", "kv_precision", "batch_size",
    "input_len", "output_len", "metric", "measured_value", "in_fit", "unit_note", "source", "as_of", "notes",
)
"""Columns of ``data/validation_cases.csv``, in order (described in the module docstring)."""

METRICS: dict[str, bool] = {
    "tpot_s": False,
    "tokens_per_s_per_user": True,
    "ttft_s": False,
    "output_tokens_per_s_per_gpu": True,
}
"""Supported metrics -> True if larger means faster (a rate), False for a time. [-]"""

FIT_PARAMETERS: tuple[str, ...] = ("eta_bw", "eta_flop", "eta_prefill", "overhead_s", "eta_routed_flop_frac",
                                   "moe_layer_overhead_s")
"""The parameters :func:`fit_efficiencies` fits by default."""
DENSE_PARAMETERS: tuple[str, ...] = FIT_PARAMETERS[:4]
"""The parameters every case responds to."""
MOE_PARAMETERS: tuple[str, ...] = FIT_PARAMETERS[4:]
"""The parameters only MoE cases respond to (zero sensitivity on dense cases)."""
FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "eta_bw": (0.30, 1.0),
    "eta_flop": (0.10, 1.0),
    "eta_prefill": (0.10, 1.0),
    "overhead_s": (0.0, 0.020),
    "eta_routed_flop_frac": (0.05, 1.0),
    "moe_layer_overhead_s": (0.0, 0.002),
    "eta_routed_bw_frac": (0.05, 1.0),
}
"""Search box of the fit. Efficiencies above 1 would beat the datasheet; below 0.1-0.3 no production
engine runs (memory-bound GEMV kernels reach 70-90% of HBM peak, dense GEMMs 50-80% of tensor peak);
a decode step overhead above 20 ms would exceed the measured TPOT of every small-batch case. Routed
experts may run well below dense kernels (0.05 = 20x slower) but not above them; 2 ms per MoE layer
would put a 58-layer DeepSeek step above 100 ms, 10x the measured batch-1 step."""

ENGINE_MAX_BATCH = 4096
"""Batch cap for ``batch_size = max`` cases, per attention-DP group: trtllm-bench's
``min(kv_cache_max_requests, 4096)`` (NVIDIA/TensorRT-LLM tensorrt_llm/bench/build/tuning.py), a per-rank
``max_batch_size`` under attention DP. [sequences]"""

MAX_CASE_BATCH = 1 << 20
_MAX_TOKENS = 1 << 24
_AS_OF = r"^~?\d{4}(-\d{2}(-\d{2})?)?$"


def load_cases(path: str | Path = DEFAULT_CASES_PATH, catalog: Catalog | None = None) -> pl.DataFrame:
    """Read and validate a validation-case table.

    Parameters
    ----------
    path : str or Path
        CSV with exactly :data:`CASE_COLUMNS` (default ``data/validation_cases.csv``).
    catalog : Catalog, optional
        If given, every ``model`` / ``hardware`` id must exist in it and every precision must be
        supported in hardware by the case's accelerator.

    Returns
    -------
    pl.DataFrame, one row per case: ids and text as strings, ``num_gpus``, ``tp``, ``pp``,
    ``input_len``, ``output_len`` as Int64, ``batch_size`` as Int64 (null = at KV capacity, written
    ``max`` in the file), ``at_capacity`` (bool), ``measured_value`` as Float64, ``in_fit`` (bool:
    False marks a case kept to show a known structural miss; :func:`fit_efficiencies` skips it).

    Raises
    ------
    DataError
        Listing every problem as ``file, case <id>, column <col>: reason`` (missing/unknown columns,
        empty cells, non-numbers, out-of-range values, num_gpus != tp x pp, unknown metric or
        precision, duplicate case ids, malformed ``as_of``).
    UnknownIdError
        If ``catalog`` is given and a model or hardware id is not in it (lists the closest ids).
    """
    path = Path(path)
    raw = read_raw_csv(path)
    name = path.name
    missing = [c for c in CASE_COLUMNS if c not in raw.columns]
    extra = [c for c in raw.columns if c not in CASE_COLUMNS]
    if missing or extra:
        raise DataError(f"{name}: missing column(s) {missing}, unknown column(s) {extra} (valid: {list(CASE_COLUMNS)})")
    if raw.height == 0:
        raise DataError(f"{name}: the table has no rows")
    raw = raw.with_columns(pl.col(c).str.strip_chars() for c in CASE_COLUMNS)
    ids = [i or f"#{n + 1}" for n, i in enumerate(raw["case_id"].to_list())]
    problems: list[str] = []
    for col in CASE_COLUMNS:
        for n in raw[col].is_null().arg_true().to_list():
            problems.append(f"{name}, case {ids[n]}, column {col}: empty (required)")

    def numbers(col, lo, hi, whole, unit):
        s = raw[col]
        v = s.cast(pl.Float64, strict=False)
        for n in (v.is_null() & s.is_not_null()).arg_true().to_list():
            problems.append(f"{name}, case {ids[n]}, column {col}: {s[n]!r} is not a number")
        bad = ~v.is_finite() | (v < lo) | (v > hi)
        if whole:
            bad = bad | (v != v.round(0))
        for n in bad.fill_null(False).arg_true().to_list():
            kind = "a whole number in" if whole else "inside"
            problems.append(f"{name}, case {ids[n]}, column {col}: {s[n]} is not {kind} "
                            f"[{lo:g}, {hi:g}] {unit}".rstrip())
        return v

    num_gpus = numbers("num_gpus", 1, 1 << 20, True, "accelerators")
    tp = numbers("tp", 1, 1 << 20, True, "")
    dp = numbers("dp", 1, 1 << 20, True, "")
    ep = numbers("ep", 1, 1 << 20, True, "")
    pp = numbers("pp", 1, 1 << 20, True, "")
    input_len = numbers("input_len", 1, _MAX_TOKENS, True, "tokens")
    output_len = numbers("output_len", 1, _MAX_TOKENS, True, "tokens")
    measured = numbers("measured_value", 1e-12, 1e12, False, "")
    b_raw = raw["batch_size"]
    at_cap = (b_raw.str.to_lowercase() == "max").fill_null(False)
    batch = b_raw.cast(pl.Float64, strict=False)
    not_number = batch.is_null() & b_raw.is_not_null() & ~at_cap
    out_of_range = ((batch < 1) | (batch > MAX_CASE_BATCH) | (batch != batch.round(0))).fill_null(False)
    for n in (not_number | out_of_range).arg_true().to_list():
        problems.append(f"{name}, case {ids[n]}, column batch_size: {b_raw[n]!r} is neither a whole number in "
                        f"[1, {MAX_CASE_BATCH}] (sequences) nor 'max'")
    for n in ((num_gpus != tp * dp * pp).fill_null(False)).arg_true().to_list():
        problems.append(f"{name}, case {ids[n]}, column num_gpus: {raw['num_gpus'][n]} != tp x dp x pp = "
                        f"{raw['tp'][n]} x {raw['dp'][n]} x {raw['pp'][n]}")
    for n in (((tp * dp) % ep != 0) & ep.is_not_null()).fill_null(False).arg_true().to_list():
        problems.append(f"{name}, case {ids[n]}, column ep: {raw['ep'][n]} does not divide tp x dp = "
                        f"{raw['tp'][n]} x {raw['dp'][n]}")
    for n, m in enumerate(raw["metric"].to_list()):
        if m is not None and m not in METRICS:
            problems.append(f"{name}, case {ids[n]}, column metric: {m!r} not in {list(METRICS)}")
    for n, p in enumerate(raw["precision"].to_list()):
        if p is not None and p not in prec.PRECISIONS:
            problems.append(f"{name}, case {ids[n]}, column precision: {p!r} not in {list(prec.PRECISIONS)}")
    for n, p in enumerate(raw["kv_precision"].to_list()):
        if p is not None and p not in prec.KV_BYTES_PER_ELEMENT:
            problems.append(f"{name}, case {ids[n]}, column kv_precision: {p!r} not in "
                            f"{list(prec.KV_BYTES_PER_ELEMENT)}")
    for n in (~raw["as_of"].str.contains(_AS_OF)).fill_null(False).arg_true().to_list():
        problems.append(f"{name}, case {ids[n]}, column as_of: {raw['as_of'][n]!r} is not YYYY[-MM[-DD]] (optional ~)")
    in_fit = raw["in_fit"].str.to_lowercase()
    for n in (~in_fit.is_in(["true", "false"])).fill_null(False).arg_true().to_list():
        problems.append(f"{name}, case {ids[n]}, column in_fit: {raw['in_fit'][n]!r} is not true/false")
    for d in raw["case_id"].filter(raw["case_id"].is_duplicated()).unique().to_list():
        problems.append(f"{name}, case {d}, column case_id: duplicate id")
    if problems:
        head = problems[:40]
        more = f" (+{len(problems) - 40} more)" if len(problems) > 40 else ""
        raise DataError(f"{name}: {len(problems)} problem(s):\n  " + "\n  ".join(head) + more)

    cases = raw.with_columns(
        num_gpus.cast(pl.Int64).alias("num_gpus"), tp.cast(pl.Int64).alias("tp"), dp.cast(pl.Int64).alias("dp"),
        ep.cast(pl.Int64).alias("ep"), pp.cast(pl.Int64).alias("pp"),
        batch.cast(pl.Int64).alias("batch_size"), at_cap.alias("at_capacity"),
        input_len.cast(pl.Int64).alias("input_len"), output_len.cast(pl.Int64).alias("output_len"),
        measured.alias("measured_value"), (in_fit == "true").alias("in_fit"),
    )
    if catalog is not None:
        check_ids("model", cases["model"].unique().to_list(), catalog.models["id"].to_list())
        check_ids("hardware", cases["hardware"].unique().to_list(), catalog.accelerators["id"].to_list())
        hw = cases.select("case_id", "hardware", "precision").join(
            catalog.accelerators.rename({"id": "hardware"}), on="hardware", how="left")
        for p_name, col in prec.PEAK_COLUMN.items():
            bad = hw.filter((pl.col("precision") == p_name) & pl.col(col).is_null())
            if bad.height:
                raise DataError(f"{name}, case {bad['case_id'][0]}, column precision: {p_name!r} is not supported "
                                f"in hardware by {bad['hardware'][0]} (no dense {p_name} peak in accelerators.csv)")
    return cases


def _points(cases: pl.DataFrame, catalog: Catalog, batch) -> pl.DataFrame:
    """The evaluate() configuration of every case; owned basis where a capex exists, else rental
    (the cost columns are not used here; evaluate only needs one price to mark a row feasible)."""
    capex = cases.select("hardware").join(
        catalog.accelerators.select(pl.col("id").alias("hardware"), "all_in_capex_usd"), on="hardware", how="left",
        maintain_order="left")["all_in_capex_usd"]
    return pl.DataFrame({
        "model": cases["model"], "hardware": cases["hardware"], "num_gpus": cases["num_gpus"],
        "tp": cases["tp"], "dp": cases["dp"], "ep": cases["ep"], "pp": cases["pp"],
        "precision": cases["precision"], "kv_precision": cases["kv_precision"],
        "batch_size": pl.Series(np.asarray(batch, dtype=np.int64)), "input_len": cases["input_len"],
        "output_len": cases["output_len"],
        "basis": pl.Series(np.where(capex.is_null().to_numpy(), "rental", "owned")),
        "spec_method": "none",  # the cases were measured without speculative decoding (MTP off)
    })


def predict(cases: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
            deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT) -> pl.DataFrame:
    """Predict every case's metric with the model and compare it with the measurement.

    Parameters
    ----------
    cases : pl.DataFrame
        From :func:`load_cases`.
    catalog : Catalog
    assumptions : Assumptions
        Efficiencies to predict with (``assumptions.IDEAL`` for the pure roofline).
    deployment : DeploymentAssumptions
        Terms that only expert-parallel / attention-data-parallel layouts add (expert imbalance,
        all-to-all latencies); they do not act on ``ep = dp = 1`` cases
        (``econ.deployment.NEUTRAL_DEPLOYMENT`` with ``IDEAL`` for the pure roofline).

    Returns
    -------
    pl.DataFrame, one row per case, in case order: ``case_id``, ``model``, ``hardware``, ``metric``,
    ``batch_size`` (the batch predicted at: the case's, or at ``max`` the KV capacity capped at
    :data:`ENGINE_MAX_BATCH` per attention-data-parallel group, rounded down to a multiple of ``dp``)
    [sequences], ``binding_wall`` (of the decode step), ``measured``, ``predicted`` (in the metric's
    unit), ``ratio`` = predicted / measured [-], ``log_error`` = ln(ratio) [-], ``speed_ratio`` =
    predicted speed / measured speed (rates: ratio, times: 1 / ratio; > 1 means the model is faster
    than the measurement) [-], ``feasible`` and ``infeasible_reason``. Infeasible rows (the batch does
    not fit in the model's KV capacity) have null predictions, never NaN.

    Raises
    ------
    UnknownIdError, InvalidInputError, UnsupportedPrecisionError
        From :func:`econ.deployment.evaluate` (e.g. an ``ep`` that does not divide the experts).

    Notes
    -----
    Two vectorized :func:`econ.deployment.evaluate` calls, whatever the number of cases: (1) one
    sequence per attention group with ``prefill_chunk_tokens = 1``, giving the KV-capacity batch and
    the TTFT of a lone prompt; (2) the resolved batch with ``assumptions`` as given, giving TPOT and the
    prefill/decode rates. For ``ep = dp = 1`` (every dense case) ``econ.deployment.evaluate`` is
    :func:`econ.sweep.evaluate` (tests/test_deployment.py checks every column to 1e-10). Under attention
    DP, trtllm-bench's ``max_batch_size`` is per rank (TensorRT-LLM, "Best perf practice on DeepSeek-R1":
    "--max_batch_size: Max batch size in each rank"), hence the cap of 4096 per group. See the module
    docstring for the metric formulas.
    """
    if cases.height == 0:
        raise InvalidInputError("cases has no rows")
    dp = cases["dp"].to_numpy().astype(float)
    lone = evaluate(_points(cases, catalog, dp), catalog, replace(assumptions, prefill_chunk_tokens=1),
                    deployment=deployment)
    cap = np.minimum(lone["max_batch_size"].to_numpy(), ENGINE_MAX_BATCH * dp)
    cap = np.floor(cap / dp) * dp
    at_cap = cases["at_capacity"].to_numpy()
    batch = np.where(at_cap, np.maximum(cap, dp), cases["batch_size"].fill_null(1).to_numpy())
    run = evaluate(_points(cases, catalog, batch), catalog, assumptions, deployment=deployment)

    metric = cases["metric"].to_numpy().astype(object)
    n_in = cases["input_len"].to_numpy().astype(float)
    n_out = cases["output_len"].to_numpy().astype(float)
    in_rate = run["input_tokens_per_s_per_gpu"].to_numpy()
    out_rate = run["output_tokens_per_s_per_gpu"].to_numpy()
    served = n_out / (n_in / in_rate + n_out / out_rate)
    pred = np.full(cases.height, np.nan)
    pred = np.where(metric == "tpot_s", run["tpot_s"].to_numpy(), pred)
    pred = np.where(metric == "tokens_per_s_per_user", run["tokens_per_s_per_user"].to_numpy(), pred)
    pred = np.where(metric == "ttft_s", lone["ttft_s"].to_numpy(), pred)
    pred = np.where(metric == "output_tokens_per_s_per_gpu", served, pred)
    too_small = at_cap & (cap < dp)
    feasible = run["feasible"].to_numpy() & ~too_small
    lone_reason = lone["infeasible_reason"].to_numpy().astype(str)
    reason = np.where(too_small, np.where(lone_reason != "", lone_reason, "batch exceeds KV-cache capacity"),
                      run["infeasible_reason"].to_numpy())
    measured = cases["measured_value"].to_numpy()
    ratio = pred / measured
    rate = np.array([METRICS[m] for m in metric], dtype=bool)

    def nullable(x):
        x = np.asarray(x, dtype=float)
        return pl.Series(x).set(pl.Series(~(feasible & np.isfinite(x))), None)

    return pl.DataFrame({
        "case_id": cases["case_id"], "model": cases["model"], "hardware": cases["hardware"],
        "metric": cases["metric"], "batch_size": pl.Series(batch.astype(np.int64)),
        "binding_wall": run["binding_wall"], "measured": cases["measured_value"],
        "predicted": nullable(pred), "ratio": nullable(ratio), "log_error": nullable(np.log(ratio)),
        "speed_ratio": nullable(np.where(rate, ratio, 1.0 / ratio)),
        "feasible": pl.Series(feasible), "infeasible_reason": pl.Series(reason.astype(str)),
    })


@dataclass(frozen=True)
class FitResult:
    """Outcome of :func:`fit_efficiencies`.

    Attributes
    ----------
    assumptions : Assumptions
        ``start`` with the fitted parameters substituted (unrounded).
    values : dict of parameter -> fitted value (overhead in seconds).
    std_errors : dict of parameter -> approximate 1-sigma error from the Jacobian at the optimum,
        sqrt(diag(s^2 (J^T J)^+)), s^2 = SSR / (n - p); ``inf`` if the cases do not constrain it.
    sensitivity : dict of parameter -> norm of its Jacobian column (d log-prediction / d parameter,
        per unit of the parameter in the fit's scale: 1 for efficiencies, 1 ms for overhead_s, 0.1 ms
        for moe_layer_overhead_s). Near 0: no case responds to the parameter (e.g. the MoE parameters
        on dense cases), so its fitted value is just the start.
    at_bound : tuple of parameters that ended on a bound of :data:`FIT_BOUNDS`.
    residuals : pl.DataFrame
        :func:`predict` at the fitted values.
    rms_log_error, start_rms_log_error : float
        sqrt(mean(log_error^2)) at the fit and at ``start``. [-]
    n_cases : int
    success : bool
    message : str (from scipy)
    """

    assumptions: Assumptions
    values: dict
    std_errors: dict
    sensitivity: dict
    at_bound: tuple
    residuals: pl.DataFrame
    rms_log_error: float
    start_rms_log_error: float
    n_cases: int
    success: bool
    message: str


_FIT_SCALE = {"eta_bw": 1.0, "eta_flop": 1.0, "eta_prefill": 1.0, "overhead_s": 1e-3, "eta_routed_flop_frac": 1.0,
              "moe_layer_overhead_s": 1e-4, "eta_routed_bw_frac": 1.0}


def fit_efficiencies(cases: pl.DataFrame, catalog: Catalog, start: Assumptions = DEFAULT, *,
                     parameters: tuple[str, ...] = FIT_PARAMETERS,
                     bounds: dict[str, tuple[float, float]] | None = None,
                     deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT) -> FitResult:
    """Fit the efficiency factors to the cases by least squares on the log error.

    Parameters
    ----------
    cases : pl.DataFrame
        From :func:`load_cases`; every case must be feasible under ``start``.
    catalog : Catalog
    start : Assumptions
        Starting point; every field not in ``parameters`` is held at its value.
    parameters : tuple of str
        Parameters to fit: any of the keys of :data:`FIT_BOUNDS` (default :data:`FIT_PARAMETERS`;
        ``eta_routed_bw_frac`` only on request).
    bounds : dict, optional
        Overrides of :data:`FIT_BOUNDS`.
    deployment : DeploymentAssumptions
        Held fixed (expert imbalance, all-to-all latencies of the ep > 1 cases).

    Returns
    -------
    FitResult

    Raises
    ------
    InvalidInputError
        Unknown parameter, a start value outside its bounds, fewer cases than parameters, or an
        infeasible case (named).

    Notes
    -----
    minimize sum_i ln(predicted_i(theta) / measured_i)^2 over theta in the box, with
    ``scipy.optimize.least_squares`` (method "trf", Branch, Coleman & Li 1999), finite-difference
    Jacobian. The overhead is searched in milliseconds so that every coordinate is O(1). The roofline's
    max() makes the objective piecewise smooth; trf handles the kinks but a parameter whose wall never
    binds in any case gets zero sensitivity (reported, not hidden).
    """
    from scipy.optimize import least_squares

    bounds = {**FIT_BOUNDS, **(bounds or {})}
    for p in parameters:
        if p not in FIT_BOUNDS:
            raise InvalidInputError(f"parameter {p!r} is not one of {list(FIT_BOUNDS)}")
        v = getattr(start, p)
        lo, hi = bounds[p]
        if not lo <= v <= hi:
            raise InvalidInputError(f"{p}={v:g} (start) is outside its fit bounds [{lo:g}, {hi:g}]")
    if cases.height < len(parameters):
        raise InvalidInputError(f"{cases.height} case(s) cannot determine {len(parameters)} parameters")
    first = predict(cases, catalog, start, deployment)
    if not first["feasible"].all():
        bad = first.filter(~pl.col("feasible")).row(0, named=True)
        raise InvalidInputError(f"case {bad['case_id']} is infeasible in the model ({bad['infeasible_reason']}, "
                                f"batch {bad['batch_size']}); drop it or change usable_hbm_frac")
    scale = np.array([_FIT_SCALE[p] for p in parameters])
    x0 = np.array([getattr(start, p) for p in parameters]) / scale
    lo = np.array([bounds[p][0] for p in parameters]) / scale
    hi = np.array([bounds[p][1] for p in parameters]) / scale

    def assumptions_at(x):
        return replace(start, **{p: float(v) for p, v in zip(parameters, x * scale)})

    def residuals(x):
        return predict(cases, catalog, assumptions_at(x), deployment)["log_error"].to_numpy()

    sol = least_squares(residuals, x0, bounds=(lo, hi), method="trf", diff_step=1e-4, x_scale=1.0)
    fitted = assumptions_at(sol.x)
    res = predict(cases, catalog, fitted, deployment)
    err = res["log_error"].to_numpy()
    n, k = err.size, len(parameters)
    jac = np.asarray(sol.jac)
    s2 = float(err @ err) / max(n - k, 1)
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    sens = np.linalg.norm(jac, axis=0)
    std = np.where(sens > 1e-9, np.sqrt(np.maximum(np.diag(cov), 0.0)), np.inf) * scale
    span = hi - lo
    on_bound = tuple(p for p, x, a, b, w in zip(parameters, sol.x, lo, hi, span) if min(x - a, b - x) < 1e-3 * w)
    return FitResult(
        assumptions=fitted,
        values={p: float(v) for p, v in zip(parameters, sol.x * scale)},
        std_errors={p: float(v) for p, v in zip(parameters, std)},
        sensitivity={p: float(v) for p, v in zip(parameters, sens)},
        at_bound=on_bound,
        residuals=res,
        rms_log_error=float(np.sqrt(np.mean(err ** 2))),
        start_rms_log_error=float(np.sqrt(np.mean(first["log_error"].to_numpy() ** 2))),
        n_cases=n,
        success=bool(sol.success),
        message=str(sol.message),
    )


__all__ = ["CASE_COLUMNS", "DEFAULT_CASES_PATH", "ENGINE_MAX_BATCH", "FIT_BOUNDS", "FIT_PARAMETERS", "FitResult",
           "METRICS", "DENSE_PARAMETERS", "MOE_PARAMETERS", "fit_efficiencies", "load_cases", "predict"]
