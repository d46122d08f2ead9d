"""Public measurements as points on a cost-vs-interactivity chart: how close is the model?

``data/measurements.csv`` (documented in ``data/README.md``) holds 813 sourced public measurements
(MLPerf Inference v4.0-v5.0, TensorRT-LLM performance tables, NVIDIA NIM, SemiAnalysis InferenceX,
vLLM). :func:`measured_points` keeps the rows usable by default (``include = true``) of a model on some
accelerators and returns, per measured run, the two figures a frontier chart shows: output tokens/s
per GPU against output tokens/s per user. A run gives both when:

- the row carries ``output_tokens_per_s_per_gpu`` and the interactivity it was read at
  (``tokens_per_s_per_user_target``, InferenceX), or its measured mean TPOT (``measured_mean_tpot_s``,
  MLPerf server/interactive: speed = 1 / TPOT);
- a throughput row and a TPOT row of the same run (same source, model, accelerator, GPUs, precision,
  lengths, concurrency and scenario: NIM's per-concurrency tables) pair up (speed = 1 / TPOT);
- a single-stream row (``concurrency_or_batch`` = 1) gives the speed of one user on ``num_gpus`` GPUs:
  its throughput per GPU is speed / GPUs (derived, marked in ``measurement_basis``).

Offline MLPerf rows (no latency bound, no speed per user) have no place on such a chart and are left
out. :func:`with_cost` prices each point with the modeled $/GPU-hour of its accelerator (same tier and
economics as the curve it is drawn against): cost = $/GPU-hour / (3600 x tokens/s per GPU) x 1e6, the
engine's own formula, so a measured point and a modeled one at the same throughput cost the same.
"""

from __future__ import annotations

import functools
from pathlib import Path

import polars as pl

from econ.tables.catalog import DEFAULT_DATA_DIR, read_raw_csv
from econ.errors import DataError, InvalidInputError

MEASURED_COLUMNS: tuple[str, ...] = (
    "case_id", "model", "hardware", "precision", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "num_gpus",
    "input_len", "output_len", "concurrency", "scenario", "source_kind", "source_label", "measurement_basis",
    "speculative_decoding", "length_match", "source", "as_of")
"""Columns of :func:`measured_points`."""

SOURCE_LABELS: dict[str, str] = {
    "mlperf-v4.0": "MLPerf Inference v4.0", "mlperf-v4.1": "MLPerf Inference v4.1",
    "mlperf-v5.0": "MLPerf Inference v5.0", "trtllm": "TensorRT-LLM performance tables", "nim": "NVIDIA NIM benchmarks",
    "inferencex": "SemiAnalysis InferenceX", "vllm": "vLLM CI", "nvidia-blog": "NVIDIA technical blog",
}
"""Human names of ``source_kind``."""

_RUN_KEYS = ("source_kind", "model", "hardware", "num_gpus", "precision", "input_len", "output_len",
             "concurrency_or_batch", "scenario", "framework")


@functools.lru_cache(maxsize=4)
def _read(path: str, mtime: float) -> pl.DataFrame:
    """The included rows of a measurements file, numbers cast (cached per file and modification time)."""
    raw = read_raw_csv(Path(path))
    need = {"include", "model", "hardware", "metric", "value", "output_tokens_per_s_per_gpu"}
    missing = sorted(need - set(raw.columns))
    if missing:
        raise InvalidInputError(f"{Path(path).name}: missing column(s) {missing} (see data/README.md)")
    num = ["value", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user_target", "measured_mean_tpot_s",
           "num_gpus", "input_len", "output_len"]
    df = raw.filter(pl.col("include").str.to_lowercase() == "true")
    typed = df.with_columns([pl.col(c).str.strip_chars().cast(pl.Float64, strict=False) for c in num if c in df.columns]
                            + [pl.col("concurrency_or_batch").cast(pl.Float64, strict=False).alias("concurrency")])
    ids = df["case_id"].to_list() if "case_id" in df.columns else [f"#{n + 1}" for n in range(df.height)]
    for c in (c for c in num if c in df.columns):  # a measurement, a rate, a length or a count is a number > 0
        given = df[c].is_not_null() & (df[c].str.strip_chars() != "")
        x = typed[c]
        bad = (given & (x.is_null() | ~x.is_finite().fill_null(True) | (x <= 0).fill_null(False))).fill_null(False)
        for n in bad.arg_true().to_list()[:1]:
            raise DataError(f"{Path(path).name}, case {ids[n]}, column {c}: {df[c][n]!r} is not a number > 0")
    return typed


def load(data_dir=None) -> pl.DataFrame:
    """The included rows of ``measurements.csv`` from ``data_dir`` (falling back to the shipped file)."""
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / "measurements.csv"
    if not path.is_file():
        path = DEFAULT_DATA_DIR / "measurements.csv"
    return _read(str(path), path.stat().st_mtime)


def measured_points(model: str, hardware=None, *, input_len: int | None = None, output_len: int | None = None,
                    length_tolerance: float | None = 2.0, data_dir=None, frame: pl.DataFrame | None = None
                    ) -> pl.DataFrame:
    """Measured (tokens/s per user, output tokens/s per GPU) pairs of ``model`` on ``hardware``.

    Parameters
    ----------
    model : str
        Catalog model id.
    hardware : sequence of str, optional
        Accelerator ids (None: every accelerator measured).
    input_len, output_len : int, optional
        The workload the chart models. [tokens]
    length_tolerance : float >= 1, optional
        Keep runs whose stated input and output lengths are each within this factor of the workload's
        (2: 512-2,048 around 1,024); runs that do not state a length are kept (``length_match`` says so).
        None keeps every run.
    data_dir : path, optional
        Folder of the user's data (``measurements.csv`` there, else the shipped one).
    frame : pl.DataFrame, optional
        The rows to use instead of reading the file (tests).

    Returns
    -------
    pl.DataFrame (:data:`MEASURED_COLUMNS`), one row per measured run, sorted by accelerator and speed.
    ``measurement_basis`` says how the pair was formed ("throughput at a stated interactivity", "throughput and mean
    TPOT of the run", "single stream: throughput = speed / GPUs"); ``length_match`` is "same shape" or
    "lengths not stated".

    Raises
    ------
    InvalidInputError
        A tolerance below 1, or a file without the required columns.
    """
    if length_tolerance is not None and not length_tolerance >= 1.0:
        raise InvalidInputError(f"length_tolerance={length_tolerance!r} is outside [1, inf)")
    df = load(data_dir) if frame is None else frame
    df = df.filter(pl.col("model") == model)
    if hardware is not None:
        df = df.filter(pl.col("hardware").is_in(list(hardware)))
    for c in ("tokens_per_s_per_user_target", "measured_mean_tpot_s", "concurrency", "framework",
              "speculative_decoding", "scenario", "source_kind", "precision", "case_id", "source", "as_of",
              "num_gpus", "input_len", "output_len", "concurrency_or_batch"):
        if c not in df.columns:
            df = df.with_columns(pl.lit(None).alias(c))
    tput = df.filter(pl.col("output_tokens_per_s_per_gpu").is_not_null())
    direct = tput.with_columns(
        tokens_per_s_per_user=pl.coalesce(pl.col("tokens_per_s_per_user_target"), 1.0 / pl.col("measured_mean_tpot_s")),
        measurement_basis=pl.when(pl.col("tokens_per_s_per_user_target").is_not_null())
        .then(pl.lit("throughput at a stated interactivity"))
        .otherwise(pl.lit("throughput and mean TPOT of the run"))).filter(pl.col("tokens_per_s_per_user").is_not_null())
    keys = [k for k in _RUN_KEYS if k in df.columns]
    tpot = (df.filter(pl.col("metric") == "tpot_s").select(*keys, pl.col("value").alias("_tpot"))
            .unique(subset=keys, keep="first"))
    paired = (tput.filter(pl.col("tokens_per_s_per_user_target").is_null() & pl.col("measured_mean_tpot_s").is_null())
              .join(tpot, on=keys, how="inner", nulls_equal=True)
              .with_columns(tokens_per_s_per_user=1.0 / pl.col("_tpot"),
                            measurement_basis=pl.lit("throughput and mean TPOT of the run")).drop("_tpot"))
    single = (df.filter((pl.col("metric") == "tokens_per_s_per_user") & (pl.col("concurrency") == 1)
                        & pl.col("num_gpus").is_not_null())
              .with_columns(tokens_per_s_per_user=pl.col("value"),
                            output_tokens_per_s_per_gpu=pl.col("value") / pl.col("num_gpus"),
                            measurement_basis=pl.lit("single stream: throughput = speed / GPUs")))
    cols = ["case_id", "model", "hardware", "precision", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
            "num_gpus", "input_len", "output_len", "concurrency", "scenario", "source_kind", "measurement_basis",
            "speculative_decoding", "source", "as_of"]
    out = pl.concat([f.select(cols) for f in (direct, paired, single)], how="vertical_relaxed")
    out = out.filter((pl.col("tokens_per_s_per_user") > 0) & (pl.col("output_tokens_per_s_per_gpu") > 0)
                     & pl.col("tokens_per_s_per_user").is_finite())
    stated = pl.col("input_len").is_not_null() & pl.col("output_len").is_not_null()
    out = out.with_columns(length_match=pl.when(stated).then(pl.lit("same shape")).otherwise(
        pl.lit("lengths not stated")))
    if length_tolerance is not None and input_len is not None and output_len is not None:
        t = float(length_tolerance)

        def near(col, want):
            return pl.col(col).is_null() | ((pl.col(col) >= want / t) & (pl.col(col) <= want * t))
        out = out.filter(near("input_len", float(input_len)) & near("output_len", float(output_len)))
    out = out.with_columns(source_label=pl.col("source_kind").replace_strict(
        SOURCE_LABELS, default=pl.col("source_kind"), return_dtype=pl.String))
    return out.select(MEASURED_COLUMNS).sort("hardware", "tokens_per_s_per_user")


def with_cost(points: pl.DataFrame, rates: pl.DataFrame, *, cost: str = "usd_per_m_output_tokens") -> pl.DataFrame:
    """Price measured points with the modeled $/GPU-hour of their accelerator.

    Parameters
    ----------
    points : pl.DataFrame from :func:`measured_points`
    rates : pl.DataFrame with ``hardware`` and ``usd_per_gpu_hour`` (per utilized GPU-hour, as the engine
        reports it: e.g. the first row per accelerator of the frontier the points are drawn against)
    cost : str, name of the cost column added [USD per M output tokens]

    Returns
    -------
    ``points`` with ``usd_per_gpu_hour`` and ``cost`` = usd_per_gpu_hour / (3600 x output tokens/s per GPU)
    x 1e6 (null for an accelerator without a rate).
    """
    r = rates.select("hardware", "usd_per_gpu_hour").unique(subset="hardware", keep="first")
    return (points.drop([c for c in ("usd_per_gpu_hour", cost) if c in points.columns])
            .join(r, on="hardware", how="left")
            .with_columns((pl.col("usd_per_gpu_hour") / (3600.0 * pl.col("output_tokens_per_s_per_gpu")) * 1e6)
                          .alias(cost)))


__all__ = ["measured_points", "with_cost", "load", "MEASURED_COLUMNS", "SOURCE_LABELS"]
