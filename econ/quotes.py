"""Provider quotes vs the modeled cost floor: margins, verdicts, the binding wall and break-evens.

A *quote* is a provider's list price for a model (USD per million input, cached-input and output
tokens; ``data/quotes.csv``, schema in ``data/README.md``). Its *floor* is the cheapest deployment in
the catalog that serves the model at least as fast per user as the quote promises: the minimum
blended cost over every accelerator x precision x GPU count x batch size, evaluated in one vectorized
:func:`econ.sweep.evaluate` call. The quote's implied gross margin is (price - cost) / price on input,
output and blended tokens, and the verdict sorts it:

===============  ==========================================================================
below-floor      margin < 0: no catalog accelerator serves the model at that price and speed
thin             0 <= margin < 20%
plausible        20% <= margin <= 80%
rich             margin > 80%
===============  ==========================================================================

Precision. A quote is compared with a floor at the precision it serves: the provider's stated
quantization if any, else the released checkpoint's dtype (``models.csv`` ``native_weight_dtype``:
bf16 for Llama, fp8 for DeepSeek-V3/Kimi-K2, MXFP4 for gpt-oss). The floor may use that precision or a
wider one (bf16 on hardware without fp8), never a narrower one: quantizing below what the provider
serves is a trick the reason names, with the floor it would give.

The inverse: at the floor deployment cost scales linearly with the accelerator-hour cost, so the
break-even $/GPU-hour is cost x price / floor; owned fixed costs scale with 1/utilization, which gives
the break-even utilization in closed form (:func:`breakeven_utilization_frac`); and the smallest batch
on the floor deployment whose cost is at most the price is read off the same evaluated grid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from econ import precision as prec
from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.catalog import DEFAULT_DATA_DIR, Catalog, Col, validate_table
from econ.errors import DataError, InvalidInputError
from econ.memory import weight_bytes_resident
from econ.pricing import usd_per_m_blended_tokens
from econ.engine import MAX_BATCH, MAX_CONTEXT, evaluate
from econ.sweep import layout_candidates_frame
from econ.validate import require_in_range

MAX_QUOTE_ROWS = 10_000
"""Largest quotes file accepted in one check (a guard against pasting a whole price feed). [rows]"""
MAX_QUOTE_FILE_BYTES = 20_000_000
"""Largest quotes file read (10,000 rows of the shipped file's width are ~5 MB). [B]"""

DEFAULT_MIN_TOKENS_PER_S_PER_USER = 25.0
"""Speed floor for quotes that publish no speed. [tokens/s per user]

MLPerf Inference v5.0 "Llama 2 70B Interactive" scenario: TPOT <= 40 ms (= 25 tokens/s per user),
TTFT <= 450 ms, 5x tighter than the v4.0 server scenario's 200 ms (MLCommons, "LLM inference v5.0",
https://mlcommons.org/2025/04/llm-inference-v5, 2025-04). A deliberately modest interactive floor:
most serverless endpoints stream faster, so a floor computed here is a lower bound on their cost."""

THIN_MARGIN_FRAC = 0.20
"""Gross margin below which a quote is 'thin' (issue 4; cloud software gross margins run 60-80%). [-]"""
RICH_MARGIN_FRAC = 0.80
"""Gross margin above which a quote is 'rich'. [-]"""

VERDICTS: tuple[str, ...] = ("below-floor", "thin", "plausible", "rich")
"""Verdicts from worst to best margin (the order the property tests rely on)."""

BATCHES_PER_OCTAVE = 4
"""Batch-size grid density: 2^(k/4), rounded, up to the KV-capacity maximum (which is always included)."""

MAX_GPUS = 1024
"""Largest GPU count the floor search considers per model replica. [accelerators]"""

QUANTIZATION_PRECISION: dict[str, str] = {
    "bf16": "bf16", "fp16": "bf16", "fp32": "bf16",
    "fp8": "fp8", "int8": "fp8", "w8a8": "fp8", "fp8-dynamic": "fp8",
    "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4", "int4": "fp4", "w4a16": "fp4", "awq": "fp4", "gptq": "fp4",
}
"""Stated serving quantization -> the precision class of the cost model (precision.PRECISIONS).

int8 and int4 weights are modeled with the fp8 and fp4 byte counts and peaks: same bytes per weight,
and the roofline does not distinguish integer from float formats."""

WEIGHT_FORMATS: tuple[str, ...] = ("bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4")
"""Valid ``weight_format`` values of a quote (the weight format the floor assumes; rule in ``data/README.md``)."""

_TXT = Col(pl.String)
_TXT_OPT = Col(pl.String, required=False)
_USD = "USD/M tokens"

QUOTE_SCHEMA: dict[str, Col] = {
    "quote_id": _TXT,
    "provider": _TXT,
    "model": _TXT,
    "provider_model_name": _TXT_OPT,
    "usd_per_m_input_tokens": Col(pl.Float64, True, 0.0, 1e4, False, _USD),
    "usd_per_m_cached_input_tokens": Col(pl.Float64, False, 0.0, 1e4, True, _USD),
    "usd_per_m_output_tokens": Col(pl.Float64, True, 0.0, 1e4, False, _USD),
    "output_tokens_per_s_per_user": Col(pl.Float64, False, 0.0, 1e5, False, "tokens/s"),
    "ttft_s": Col(pl.Float64, False, 0.0, 600.0, False, "s"),
    "speed_source": _TXT_OPT,
    "speed_as_of": _TXT_OPT,
    "quantization": _TXT_OPT,
    "weight_format": _TXT_OPT,
    "weight_format_basis": _TXT_OPT,
    "hardware": _TXT_OPT,
    "hardware_source": _TXT_OPT,
    "source": _TXT_OPT,
    "as_of": _TXT_OPT,
    "notes": _TXT_OPT,
}
"""Columns of a quotes file (``data/README.md`` ``## quotes.csv``). Prices must be > 0 (a margin on a
free price is undefined); a cached-input price may be 0. ``source``/``as_of`` are optional so an
analyst can upload a bare price list; the shipped file fills them (tests/test_quotes.py checks)."""

REQUIRED_QUOTE_COLUMNS: tuple[str, ...] = ("provider", "model", "usd_per_m_input_tokens", "usd_per_m_output_tokens")
"""Columns a quotes file must have; the others may be absent (they are added empty, and a missing
``quote_id`` becomes ``quote-<row>``)."""

SUMMARY_COLUMNS: tuple[str, ...] = (
    "quote_id", "provider", "model", "quantization", "verdict",
    "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "price_usd_per_m_blended_tokens",
    "floor_usd_per_m_input_tokens", "floor_usd_per_m_output_tokens", "floor_usd_per_m_blended_tokens",
    "margin_input_frac", "margin_output_frac", "margin_blended_frac",
    "floor_hardware", "floor_layout", "floor_num_gpus", "floor_tp", "floor_dp", "floor_ep", "floor_pp",
    "floor_precision", "floor_batch_size",
    "floor_tokens_per_s_per_user", "floor_binding_wall", "floor_batch_limit",
    "band_max_usd_per_m_blended_tokens", "band_max_hardware", "num_hardware_meeting_floor",
    "speed_floor_tokens_per_s_per_user", "speed_floor_source", "reference_precision", "reference_precision_source",
    "floor_bf16_usd_per_m_blended_tokens", "floor_any_precision_usd_per_m_blended_tokens", "floor_any_precision",
    "floor_usd_per_gpu_hour", "breakeven_usd_per_gpu_hour", "breakeven_utilization_frac", "breakeven_batch_size",
    "reason",
)
"""Columns of :attr:`QuoteCheck.summary`, one row per quote. ``price_*`` are the quote's prices (blended
at the stated mix and cache-hit rate), ``floor_*`` the cheapest deployment's costs and configuration,
``floor_batch_limit`` what stops a larger (cheaper) batch: ``speed`` (the per-user speed floor),
``capacity`` (KV cache) or ``cost`` (a larger batch costs more per token). ``breakeven_usd_per_gpu_hour`` is
the all-in cost per accelerator-hour (paid every hour, like a rental rate) at which the floor equals the
price at the assumed utilization."""

PER_HARDWARE_COLUMNS: tuple[str, ...] = (
    "quote_id", "provider", "model", "hardware", "meets_floor", "layout", "num_gpus", "tp", "dp", "ep", "pp",
    "precision", "batch_size",
    "tokens_per_s_per_user", "binding_wall", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
    "usd_per_m_blended_tokens", "price_usd_per_m_blended_tokens", "margin_blended_frac",
    "fastest_tokens_per_s_per_user", "note",
)
"""Columns of :attr:`QuoteCheck.per_hardware`: each quote's floor on every catalog accelerator (null
costs and a ``note`` where the accelerator cannot meet the speed floor or has no price)."""


@dataclass(frozen=True)
class QuoteCheck:
    """Result of :func:`check_quotes`.

    Attributes
    ----------
    summary : pl.DataFrame
        One row per quote, :data:`SUMMARY_COLUMNS`.
    per_hardware : pl.DataFrame
        One row per quote x accelerator, :data:`PER_HARDWARE_COLUMNS` (the band of floors).
    settings : dict
        The settings the check used (speed floor default, request shape, mix, cache-hit rate, basis,
        thresholds), for the 'assumptions' sheet of an export.
    """

    summary: pl.DataFrame
    per_hardware: pl.DataFrame
    settings: dict = field(default_factory=dict)

    def settings_rows(self) -> list[dict]:
        """The settings as (group, name, value, source) rows, for an export's Assumptions sheet."""
        return [{"group": "quote check", "name": k, "value": str(v), "source": SETTING_SOURCES.get(k, "")}
                for k, v in self.settings.items()]


SETTING_SOURCES: dict[str, str] = {
    "min_tokens_per_s_per_user": "MLPerf Inference v5.0 Llama-2-70B Interactive: TPOT <= 40 ms "
                                 "(mlcommons.org/2025/04/llm-inference-v5); used only where a quote publishes no speed",
    "input_len_tokens": "input_output_mix x output_len, so the request shape matches the blended mix",
    "output_len_tokens": "econ default request (1024 generated tokens)",
    "thin_margin_below_frac": "issue 4 verdict thresholds",
    "rich_margin_above_frac": "issue 4 verdict thresholds",
    "deployments_evaluated": "model x accelerator x precision x GPU count x batch points of the floor search",
}


# --------------------------------------------------------------------------------------------- loading

def validate_quotes(raw: pl.DataFrame, catalog: Catalog, name: str = "quotes.csv") -> pl.DataFrame:
    """Validate a quotes table read as text; return it typed, or raise one DataError listing every problem.

    Parameters
    ----------
    raw : pl.DataFrame
        Columns of :data:`QUOTE_SCHEMA` as ``pl.String`` (optional columns may be absent).
    catalog : Catalog
        Model ids are checked against ``catalog.models``.
    name : str
        File name used in messages.

    Returns
    -------
    pl.DataFrame with :data:`QUOTE_SCHEMA` dtypes plus ``reference_precision`` (bf16|fp8|fp4: the stated
    quantization mapped by :data:`QUANTIZATION_PRECISION`, null if unstated).

    Raises
    ------
    DataError
        More than :data:`MAX_QUOTE_ROWS` rows; missing required or unknown columns; empty required cells;
        non-numeric, negative, zero or non-finite prices; duplicate or malformed quote ids; unknown
        model ids (with the closest catalog ids); unknown quantization names or weight formats. All problems
        of the file in one message, as ``file, row <quote_id>, column <col>: reason``; nothing is half-processed.
    """
    if raw.height > MAX_QUOTE_ROWS:
        raise DataError(f"{name}: {raw.height:,} rows; at most {MAX_QUOTE_ROWS:,} quotes per file (split the file)")
    missing = [c for c in REQUIRED_QUOTE_COLUMNS if c not in raw.columns]
    unknown = [c for c in raw.columns if c not in QUOTE_SCHEMA]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if unknown:
            parts.append(f"unknown column(s) {unknown} (misspelled?)")
        raise DataError(f"{name}: " + "; ".join(parts) + f"; valid columns: {list(QUOTE_SCHEMA)} "
                        f"(required: {list(REQUIRED_QUOTE_COLUMNS)})")
    raw = raw.with_columns(pl.col(c).cast(pl.String) for c in raw.columns)
    if "quote_id" not in raw.columns:
        raw = raw.with_columns(pl.format("quote-{}", pl.int_range(1, raw.height + 1)).alias("quote_id"))
    raw = raw.with_columns(pl.lit(None, pl.String).alias(c) for c in QUOTE_SCHEMA if c not in raw.columns)
    raw = raw.select(list(QUOTE_SCHEMA))
    extra = _model_and_quantization_problems(raw, catalog, name)
    try:
        df = validate_table(raw, QUOTE_SCHEMA, "quote_id", name)
    except DataError as exc:
        if extra:
            raise DataError(f"{exc}\n  " + "\n  ".join(extra)) from None
        raise
    if extra:
        raise DataError(f"{name}: {len(extra)} problem(s):\n  " + "\n  ".join(extra))
    q = pl.col("quantization").str.strip_chars().str.to_lowercase()
    return df.with_columns(q.alias("quantization"),
                           q.replace_strict(QUANTIZATION_PRECISION, default=None).alias("reference_precision"))


def _model_and_quantization_problems(raw: pl.DataFrame, catalog: Catalog, name: str) -> list[str]:
    """Unknown model ids (grouped, with the closest ids and the rows) and unknown quantization names."""
    import difflib

    known = catalog.models["id"].to_list()
    labels = pl.coalesce(pl.col("quote_id").str.strip_chars().replace("", None),
                         pl.format("#{}", pl.int_range(1, pl.len() + 1)))
    rows = raw.select(labels.alias("label"), pl.col("model").str.strip_chars().alias("model"),
                      pl.col("quantization").str.strip_chars().str.to_lowercase().alias("q"))
    bad_models = (rows.filter(pl.col("model").is_not_null() & (pl.col("model") != "") & ~pl.col("model").is_in(known))
                  .group_by("model", maintain_order=True).agg(pl.col("label")))
    problems = []
    for m, labs in bad_models.iter_rows():  # one message per distinct unknown id, not per row
        close = difflib.get_close_matches(m, known, n=4, cutoff=0.3)
        shown = ", ".join(labs[:8]) + (f" (+{len(labs) - 8} more)" if len(labs) > 8 else "")
        hint = f"; closest: {', '.join(close)}" if close else ""
        problems.append(f"{name}, row(s) {shown}, column model: unknown model id {m!r}{hint} (see `econ list models`)")
    bad_q = (rows.filter(pl.col("q").is_not_null() & (pl.col("q") != "") & ~pl.col("q").is_in(list(QUANTIZATION_PRECISION)))
             .group_by("q", maintain_order=True).agg(pl.col("label")))
    for qv, labs in bad_q.iter_rows():
        problems.append(f"{name}, row(s) {', '.join(labs[:8])}, column quantization: {qv!r} is not one of "
                        f"{sorted(QUANTIZATION_PRECISION)} (leave empty if unstated)")
    bad_w = (raw.select(labels.alias("label"), pl.col("weight_format").str.strip_chars().str.to_lowercase().alias("w"))
             .filter(pl.col("w").is_not_null() & (pl.col("w") != "") & ~pl.col("w").is_in(list(WEIGHT_FORMATS)))
             .group_by("w", maintain_order=True).agg(pl.col("label")))
    for wv, labs in bad_w.iter_rows():
        problems.append(f"{name}, row(s) {', '.join(labs[:8])}, column weight_format: {wv!r} is not one of "
                        f"{list(WEIGHT_FORMATS)} (leave empty if unknown)")
    return problems


def read_quotes(source, catalog: Catalog, name: str | None = None) -> pl.DataFrame:
    """Read and validate a quotes file: a path, or the bytes of an uploaded CSV or XLSX.

    Parameters
    ----------
    source : str, Path, bytes or binary file object
        CSV (UTF-8, header row) or XLSX (first sheet). Every cell is read as text, then validated.
    catalog : Catalog
    name : str, optional
        Name used in messages (default: the file name, or ``uploaded file``).

    Raises
    ------
    DataError
        Unreadable or larger than :data:`MAX_QUOTE_FILE_BYTES`, or any problem listed by
        :func:`validate_quotes`.
    """
    from econ.uploads import read_table_bytes, read_table_file  # bounded readers (issue 12: XLSX bombs)

    limits = dict(max_rows=MAX_QUOTE_ROWS, max_bytes=MAX_QUOTE_FILE_BYTES)
    if isinstance(source, (str, Path)):
        name = name or Path(source).name
        raw = read_table_file(source, allow_xlsx=True, **limits)
    else:
        data = source if isinstance(source, (bytes, bytearray)) else source.read(MAX_QUOTE_FILE_BYTES + 1)
        name = name or "uploaded file"
        raw = read_table_bytes(bytes(data), name, **limits)
    return validate_quotes(raw, catalog, name)


def load_quotes(catalog: Catalog, path: str | Path | None = None) -> pl.DataFrame:
    """The quotes to check: ``path``, else ``quotes.csv`` in the catalog's data folder, else the shipped one."""
    if path is None:
        user = Path(catalog.data_dir) / "quotes.csv"
        path = user if user.is_file() else DEFAULT_DATA_DIR / "quotes.csv"
    return read_quotes(path, catalog)


# --------------------------------------------------------------------------------------------- kernels

def gross_margin_frac(price_usd_per_m_tokens, cost_usd_per_m_tokens):
    """Implied gross margin of a price over a cost.

    Parameters
    ----------
    price_usd_per_m_tokens : scalar, array or pl.Expr, > 0 [USD/M tokens]
    cost_usd_per_m_tokens : scalar, array or pl.Expr, >= 0 [USD/M tokens]

    Returns
    -------
    same shape [-]: (price - cost) / price; 1 = free to serve, 0 = at cost, < 0 = below cost.
    """
    return (price_usd_per_m_tokens - cost_usd_per_m_tokens) / price_usd_per_m_tokens


def breakeven_usd_per_gpu_hour(usd_per_gpu_hour, price_usd_per_m_tokens, cost_usd_per_m_tokens):
    """Accelerator-hour cost at which a deployment's token cost equals the price.

    Parameters
    ----------
    usd_per_gpu_hour : scalar, array or pl.Expr [USD/h]
        The modeled accelerator-hour cost behind ``cost_usd_per_m_tokens``.
    price_usd_per_m_tokens, cost_usd_per_m_tokens : same shape [USD/M tokens]

    Returns
    -------
    same shape [USD/h]: usd_per_gpu_hour * price / cost. Token cost is linear in the hourly cost at a
    fixed deployment (pricing.usd_per_m_tokens), so the ratio carries over exactly.
    """
    return usd_per_gpu_hour * price_usd_per_m_tokens / cost_usd_per_m_tokens


def breakeven_utilization_frac(fixed_usd_per_gpu_hour_at_full_use, variable_usd_per_gpu_hour,
                               breakeven_usd_per_utilized_gpu_hour):
    """Utilization at which the cost per utilized accelerator-hour falls to a break-even value.

    Parameters
    ----------
    fixed_usd_per_gpu_hour_at_full_use : scalar or array, >= 0 [USD/h]
        Costs paid every hour whether or not the accelerator serves (owned: capex annuity + facility
        + opex, i.e. tco components x utilization; rental: the rate), spread over 8760 h.
    variable_usd_per_gpu_hour : scalar or array, >= 0 [USD/h]
        Costs paid only while serving (owned: power x PUE x price; rental: 0).
    breakeven_usd_per_utilized_gpu_hour : scalar or array, > 0 [USD/h]
        From :func:`breakeven_usd_per_gpu_hour` on the per-utilized-hour cost.

    Returns
    -------
    ndarray [-]: u* = F / (G* - V) (solving F/u + V = G*, tco.gpu_hour_cost_components); ``inf`` where
    G* <= V (the price does not even cover the variable cost). Values above 1 mean no utilization
    breaks even.
    """
    fixed = np.asarray(fixed_usd_per_gpu_hour_at_full_use, dtype=float)
    headroom = np.asarray(breakeven_usd_per_utilized_gpu_hour, dtype=float) - np.asarray(variable_usd_per_gpu_hour, dtype=float)
    positive = headroom > 0
    return np.where(positive, fixed / np.where(positive, headroom, 1.0), np.inf)


def verdict_expr(margin: pl.Expr) -> pl.Expr:
    """Margin -> verdict (:data:`VERDICTS`); null margin (no deployment meets the speed) -> below-floor."""
    return (pl.when(margin.is_null() | (margin < 0)).then(pl.lit(VERDICTS[0]))
            .when(margin < THIN_MARGIN_FRAC).then(pl.lit(VERDICTS[1]))
            .when(margin <= RICH_MARGIN_FRAC).then(pl.lit(VERDICTS[2]))
            .otherwise(pl.lit(VERDICTS[3])))


# --------------------------------------------------------------------------------------------- floors

def _native_precision(dtype_text: pl.Expr) -> pl.Expr:
    """models.csv native_weight_dtype text -> bf16|fp8|fp4 (the checkpoint's routed/dense weights)."""
    t = dtype_text.str.to_lowercase()
    return (pl.when(t.str.contains("fp4|int4|mx4|nf4")).then(pl.lit("fp4"))
            .when(t.str.contains("fp8|int8|e4m3|f8")).then(pl.lit("fp8"))
            .otherwise(pl.lit("bf16")))


def _batch_grid() -> pl.DataFrame:
    k = np.arange(0, int(np.log2(MAX_BATCH)) * BATCHES_PER_OCTAVE + 1)
    return pl.DataFrame({"batch_size": np.unique(np.round(2.0 ** (k / BATCHES_PER_OCTAVE)).astype(np.int64))})


def floor_points(models, catalog: Catalog, assumptions: Assumptions = DEFAULT, economics: Economics = Economics(),
                 *, input_len: int = 3072, output_len: int = 1024, hardware=None) -> pl.DataFrame:
    """The points frame of the floor search for ``models`` on every catalog accelerator.

    Rows: model x accelerator x precision the accelerator supports (bf16, fp8, fp4) x layout (the
    candidates ``econ cost`` chooses among, :func:`econ.sweep.layout_candidates_frame`: GPU counts from
    the fewest that hold the weights up to the scale-up domain; tensor x pipeline, and attention-DP +
    EP for MoE models) x batch size (``2^(k/4)`` per attention group up to the KV capacity of that
    configuration, which is included).

    Parameters
    ----------
    models : iterable of str
        Model ids (catalog).
    hardware : iterable of str, optional
        Restrict to these accelerators (default: all in the catalog).
    input_len, output_len : int [tokens]
        Request shape (sizes the KV cache and the prefill).

    Returns
    -------
    pl.DataFrame with the columns :func:`econ.engine.evaluate` reads.

    Notes
    -----
    The KV-capacity maximum of each configuration comes from one probe :func:`evaluate` call at batch 1;
    the caller then evaluates the returned frame once.
    """
    acc = catalog.accelerators
    if hardware is not None:
        from econ.catalog import check_ids
        hardware = list(hardware)
        check_ids("hardware", hardware, acc["id"].to_list())
        acc = acc.filter(pl.col("id").is_in(hardware))
    supported = pl.coalesce(*(pl.when(pl.col("precision") == k).then(pl.col(c)) for k, c in prec.PEAK_COLUMN.items()))
    keys = (pl.DataFrame({"model": list(dict.fromkeys(models))})
            .join(acc.select(pl.col("id").alias("hardware"), *prec.PEAK_COLUMN.values()), how="cross")
            .join(pl.DataFrame({"precision": list(prec.PRECISIONS)}), how="cross")
            .filter(supported.is_not_null()).select("model", "hardware", "precision"))
    # the same layout candidates as econ cost (tensor x pipeline; attention-DP + EP for MoE models)
    configs = (layout_candidates_frame(catalog, keys, assumptions=assumptions)
               .filter(pl.col("num_gpus") <= MAX_GPUS)
               .with_columns(pl.lit(input_len).alias("input_len"), pl.lit(output_len).alias("output_len")))
    if configs.height == 0:  # no accelerator holds the weights on <= MAX_GPUS: nothing to search
        return configs.with_columns(pl.lit(1, pl.Int64).alias("batch_size"))
    probe = evaluate(configs.with_columns(pl.col("dp").alias("batch_size")), catalog, assumptions, economics,
                     strict=False, columns=("max_batch_size",))
    configs = (configs.with_columns(probe["max_batch_size"].clip(upper_bound=MAX_BATCH).alias("max_batch_size"))
               .filter(pl.col("max_batch_size") >= pl.col("dp")))
    # batch sizes per attention-DP group (2^(k/4) grid), up to the KV capacity, which is included
    grid = (configs.join(_batch_grid(), how="cross").with_columns(pl.col("batch_size") * pl.col("dp"))
            .filter(pl.col("batch_size") < pl.col("max_batch_size")))
    top_row = configs.with_columns((pl.col("max_batch_size") // pl.col("dp") * pl.col("dp")).alias("batch_size"))
    return pl.concat([grid, top_row.select(grid.columns)]).drop("max_batch_size")


_EMPTY_RESULT = pl.DataFrame(schema={
    **{c: pl.String for c in ("model", "hardware", "precision", "binding_wall", "layout")},
    **{c: pl.Int64 for c in ("num_gpus", "tp", "dp", "ep", "pp", "batch_size", "max_batch_size")},
    "feasible": pl.Boolean,
    **{c: pl.Float64 for c in ("tokens_per_s_per_user", "usd_per_gpu_hour", "usd_per_gpu_hour_capex",
                               "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power",
                               "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens")},
})
"""The evaluated frame when there is nothing to evaluate (no accelerator holds the weights)."""


def check_quotes(quotes: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
                 economics: Economics = Economics(), *,
                 min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                 output_len: int = 1024, input_len: int | None = None, hardware=None) -> QuoteCheck:
    """Compare every quote with its modeled cost floor on every catalog accelerator.

    Parameters
    ----------
    quotes : pl.DataFrame
        Validated quotes (:func:`read_quotes` / :func:`load_quotes` / :func:`validate_quotes`).
    catalog : Catalog
    assumptions : Assumptions
        Efficiency factors of the roofline (assumptions.DEFAULT).
    economics : Economics
        Basis (owned TCO or rental), power, finance, utilization, ``input_output_mix`` and
        ``cache_hit_frac`` (used on both sides: the quote's blended price counts cache hits at its cached
        price, or at the full input price where it lists none).
    min_tokens_per_s_per_user : float in (0, 1e5]
        Speed floor for quotes that publish no speed (:data:`DEFAULT_MIN_TOKENS_PER_S_PER_USER`). [tokens/s]
    output_len : int [tokens]
        Generated tokens per request.
    input_len : int, optional [tokens]
        Prompt tokens per request; default ``round(input_output_mix * output_len)`` (at least 1), so the
        request shape matches the blended mix (3:1 -> 3072 in, 1024 out).
    hardware : iterable of str, optional
        Restrict the floor search to these accelerators.

    Returns
    -------
    QuoteCheck
        ``summary`` (one row per quote, :data:`SUMMARY_COLUMNS`, every row with a verdict and a reason)
        and ``per_hardware`` (:data:`PER_HARDWARE_COLUMNS`).

    Raises
    ------
    InvalidInputError
        A setting out of range (named, with the valid range), a quotes frame without the validated
        columns, or duplicate ``quote_id`` values.

    Notes
    -----
    One probe and one main :func:`evaluate` call for the whole file, however many quotes: the floor of
    a quote depends only on (model, speed floor, reference precision), so the search runs per distinct
    key and joins back. Per (key, accelerator) the deployment with the lowest blended cost among those
    meeting the speed floor at the reference precision or wider is the floor on that accelerator; the
    lowest over accelerators is the quote's floor. Blended (not output) cost is minimized because the
    verdict is on the blended price: it is the cost of the traffic mix the price is compared with.
    """
    speed_default = float(require_in_range("min_tokens_per_s_per_user", min_tokens_per_s_per_user, 0.0, 1e5,
                                           "tokens/s per user", lo_inclusive=False))
    output_len = int(require_in_range("output_len", output_len, 1, MAX_CONTEXT, "tokens"))
    mix = economics.input_output_mix
    if input_len is None:
        input_len = max(1, int(round(mix * output_len)))
    input_len = int(require_in_range("input_len", input_len, 1, MAX_CONTEXT, "tokens"))
    need_cols = [c for c in (*QUOTE_SCHEMA, "reference_precision") if c not in quotes.columns]
    if need_cols:
        raise InvalidInputError(f"quotes frame is missing column(s) {need_cols}: validate it with read_quotes() "
                                f"or validate_quotes() first")
    if quotes.height == 0:
        raise InvalidInputError("quotes has no rows")
    dup = quotes.filter(pl.col("quote_id").is_duplicated())["quote_id"].unique(maintain_order=True).to_list()
    if dup:
        raise InvalidInputError(f"quote_id must be unique; duplicated: {dup[:8]} (rename them, e.g. prefix an "
                                f"uploaded file's ids)")

    h = economics.cache_hit_frac
    native = catalog.models.select(pl.col("id").alias("model"),
                                   _native_precision(pl.col("native_weight_dtype")).alias("_native"))
    q = (quotes.join(native, on="model", how="left", maintain_order="left")
         .with_columns(
             pl.coalesce("output_tokens_per_s_per_user", pl.lit(speed_default)).alias("speed_floor_tokens_per_s_per_user"),
             pl.when(pl.col("output_tokens_per_s_per_user").is_null()).then(pl.lit("assumed"))
             .otherwise(pl.lit("quote")).alias("speed_floor_source"),
             pl.coalesce("reference_precision", "_native").alias("reference_precision"),
             pl.when(pl.col("reference_precision").is_null()).then(pl.lit("native"))
             .otherwise(pl.lit("stated")).alias("reference_precision_source"),
             pl.col("usd_per_m_input_tokens").alias("price_usd_per_m_input_tokens"),
             pl.col("usd_per_m_output_tokens").alias("price_usd_per_m_output_tokens"),
             usd_per_m_blended_tokens(pl.col("usd_per_m_input_tokens"), pl.col("usd_per_m_output_tokens"), mix, h,
                                      pl.coalesce("usd_per_m_cached_input_tokens", "usd_per_m_input_tokens")
                                      / pl.col("usd_per_m_input_tokens")).alias("price_usd_per_m_blended_tokens"))
         .drop("_native"))
    key_cols = ["model", "speed_floor_tokens_per_s_per_user", "reference_precision"]
    keys = q.select(key_cols).unique(maintain_order=True).with_row_index("key").with_columns(
        pl.col("reference_precision").replace_strict(prec.WEIGHT_BYTES_PER_PARAM, return_dtype=pl.Float64)
        .alias("reference_bytes"))
    q = q.join(keys.select("key", *key_cols), on=key_cols, how="left", maintain_order="left")

    points = floor_points(keys["model"].unique().to_list(), catalog, assumptions, economics,
                          input_len=input_len, output_len=output_len, hardware=hardware)
    res = evaluate(points, catalog, assumptions, economics, strict=False) if points.height else _EMPTY_RESULT
    res = res.filter(pl.col("feasible")).select(
        "model", "hardware", "layout", "num_gpus", "tp", "dp", "ep", "pp", "precision", "batch_size", "max_batch_size",
        "binding_wall",
        "tokens_per_s_per_user", "usd_per_gpu_hour", "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility",
        "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
        "usd_per_m_blended_tokens",
        pl.col("precision").replace_strict(prec.WEIGHT_BYTES_PER_PARAM, return_dtype=pl.Float64).alias("_bytes"),
    ).sort("model", "hardware", "precision", "num_gpus", "batch_size")

    frames = _floors(keys, res)
    summary = _summary(q, keys, frames, economics)
    per_hw = _per_hardware(q, keys, frames, catalog, economics, hardware)
    _require_finite(summary, "quote check")
    settings = {
        "min_tokens_per_s_per_user": speed_default,
        "input_len_tokens": input_len, "output_len_tokens": output_len,
        "input_output_mix": mix, "cache_hit_frac": h, "basis": economics.basis,
        "utilization_frac": economics.utilization_frac,
        "thin_margin_below_frac": THIN_MARGIN_FRAC, "rich_margin_above_frac": RICH_MARGIN_FRAC,
        "deployments_evaluated": points.height,
    }
    return QuoteCheck(summary=summary.select(SUMMARY_COLUMNS), per_hardware=per_hw.select(PER_HARDWARE_COLUMNS),
                      settings=settings)


_DEPLOYMENT = ("num_gpus", "tp", "dp", "ep", "pp")
"""The columns that identify a deployment (layout) of a floor."""


def _floors(keys: pl.DataFrame, res: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """All group-bys of the floor search, per (key, accelerator) and per key, computed in one collect."""
    cost = "usd_per_m_blended_tokens"
    j = (keys.lazy().join(res.lazy(), on="model", how="inner")
         .with_columns((pl.col("tokens_per_s_per_user") >= pl.col("speed_floor_tokens_per_s_per_user")).alias("_meets"),
                       (pl.col("_bytes") >= pl.col("reference_bytes") - 1e-9).alias("_allowed")))
    ok = j.filter(pl.col("_meets") & pl.col("_allowed"))
    per_hw = ok.group_by("key", "hardware").agg(pl.all().get(pl.col(cost).arg_min()))
    speed_cap = ok.group_by("key", "hardware", "precision", *_DEPLOYMENT).agg(pl.col("batch_size").max().alias("_b_speed"))
    fastest_hw = (j.filter(pl.col("_allowed")).group_by("key", "hardware")
                  .agg(pl.col("tokens_per_s_per_user").max().alias("fastest_tokens_per_s_per_user")))
    fastest = (j.filter(pl.col("_allowed")).group_by("key").agg(
        pl.col("tokens_per_s_per_user", "hardware", "precision", "num_gpus", "batch_size")
        .get(pl.col("tokens_per_s_per_user").arg_max()).name.prefix("fast_")))
    fastest_any = (j.group_by("key").agg(
        pl.col("tokens_per_s_per_user", "precision").get(pl.col("tokens_per_s_per_user").arg_max())
        .name.prefix("fastany_")))
    bf16 = (j.filter(pl.col("_meets") & (pl.col("precision") == "bf16")).group_by("key")
            .agg(pl.col(cost).min().alias("floor_bf16_usd_per_m_blended_tokens")))
    any_p = (j.filter(pl.col("_meets")).group_by("key").agg(
        pl.col(cost, "precision", "hardware").get(pl.col(cost).arg_min()).name.prefix("any_")))
    names = ("per_hw", "speed_cap", "fastest_hw", "fastest", "fastest_any", "bf16", "any")
    out = dict(zip(names, pl.collect_all([per_hw, speed_cap, fastest_hw, fastest, fastest_any, bf16, any_p])))
    out["per_hw"] = out["per_hw"].join(out["speed_cap"], on=["key", "hardware", "precision", *_DEPLOYMENT], how="left")
    out["curves"] = res  # for the break-even batch (joined on the floor configuration only)
    return out


def _t(x: pl.Expr, sig: int = 3) -> pl.Expr:
    """Number -> short text (3 significant figures, whole numbers above 1000, no trailing '.0')."""
    big = x.abs() >= 10 ** sig
    txt = pl.when(big).then(x.round(0).cast(pl.Int64).cast(pl.String)).otherwise(x.round_sig_figs(sig).cast(pl.String))
    return txt.str.replace(r"\.0$", "")


def _pct(x: pl.Expr) -> pl.Expr:
    return pl.format("{}%", (x * 100).round(0).cast(pl.Int64))


def _summary(q: pl.DataFrame, keys: pl.DataFrame, f: dict, economics: Economics) -> pl.DataFrame:
    per_hw = f["per_hw"]
    cost = "usd_per_m_blended_tokens"
    best = per_hw.group_by("key").agg(
        pl.all().exclude("key").get(pl.col(cost).arg_min()),
        pl.col(cost).max().alias("band_max_usd_per_m_blended_tokens"),
        pl.col("hardware").get(pl.col(cost).arg_max()).alias("band_max_hardware"),
        pl.len().cast(pl.Int64).alias("num_hardware_meeting_floor"))
    floor_cols = {c: f"floor_{c}" for c in ("hardware", "layout", *_DEPLOYMENT, "precision", "batch_size",
                                              "tokens_per_s_per_user", "binding_wall", "usd_per_gpu_hour",
                                              "usd_per_m_input_tokens", "usd_per_m_output_tokens", cost)}
    best = best.rename(floor_cols)
    s = (q.join(best.drop("model", "speed_floor_tokens_per_s_per_user", "reference_precision", "reference_bytes",
                          strict=False), on="key", how="left")
         .join(f["fastest"], on="key", how="left").join(f["fastest_any"], on="key", how="left")
         .join(f["bf16"], on="key", how="left").join(f["any"], on="key", how="left"))
    s = s.with_columns(
        pl.col("num_hardware_meeting_floor").fill_null(0),
        gross_margin_frac(pl.col("price_usd_per_m_input_tokens"), pl.col("floor_usd_per_m_input_tokens")).alias("margin_input_frac"),
        gross_margin_frac(pl.col("price_usd_per_m_output_tokens"), pl.col("floor_usd_per_m_output_tokens")).alias("margin_output_frac"),
        gross_margin_frac(pl.col("price_usd_per_m_blended_tokens"), pl.col(f"floor_{cost}")).alias("margin_blended_frac"),
        pl.when(pl.col("floor_batch_size").is_null()).then(None)
        .when(pl.col("floor_batch_size") >= pl.col("max_batch_size")).then(pl.lit("capacity"))
        .when((pl.col("floor_batch_size") >= pl.col("_b_speed")) & (pl.col("_b_speed") < pl.col("max_batch_size")))
        .then(pl.lit("speed")).otherwise(pl.lit("cost")).alias("floor_batch_limit"),
        pl.col("any_usd_per_m_blended_tokens").alias("floor_any_precision_usd_per_m_blended_tokens"),
        pl.col("any_precision").alias("floor_any_precision"),
    )
    s = s.with_columns(verdict_expr(pl.col("margin_blended_frac")).alias("verdict"))

    # Break-even $/GPU-hour and utilization at the floor deployment (closed form), batch from the grid.
    ratio = pl.col("price_usd_per_m_blended_tokens") / pl.col(f"floor_{cost}")
    g_star = breakeven_usd_per_gpu_hour(pl.col("floor_usd_per_gpu_hour"), pl.col("price_usd_per_m_blended_tokens"),
                                        pl.col(f"floor_{cost}"))
    u = economics.utilization_frac
    owned = economics.basis == "owned"
    fixed = (pl.col("usd_per_gpu_hour_capex") + pl.col("usd_per_gpu_hour_facility") + pl.col("usd_per_gpu_hour_opex")) * u \
        if owned else pl.col("floor_usd_per_gpu_hour") * u
    variable = pl.col("usd_per_gpu_hour_power") if owned else pl.lit(0.0)
    s = s.with_columns(ratio.alias("_ratio"), (g_star * u).alias("breakeven_usd_per_gpu_hour"),
                       g_star.alias("_g_star"), fixed.alias("_fixed"), variable.alias("_variable"))
    has = s["_g_star"].is_not_null().to_numpy()
    u_star = np.full(s.height, np.nan)
    u_star[has] = breakeven_utilization_frac(s["_fixed"].to_numpy()[has], s["_variable"].to_numpy()[has],
                                             s["_g_star"].to_numpy()[has])
    s = s.with_columns(pl.Series("_u_star", u_star))
    s = s.with_columns(pl.when(pl.col("_u_star") <= 1.0).then(pl.col("_u_star")).alias("breakeven_utilization_frac"),
                       (pl.col("floor_usd_per_gpu_hour") * u).alias("floor_usd_per_gpu_hour"))
    curve = (s.select("quote_id", "model", "floor_hardware", "floor_precision", *(f"floor_{c}" for c in _DEPLOYMENT),
                      "price_usd_per_m_blended_tokens").drop_nulls("floor_hardware")
             .join(f["curves"], left_on=["model", "floor_hardware", "floor_precision",
                                         *(f"floor_{c}" for c in _DEPLOYMENT)],
                   right_on=["model", "hardware", "precision", *_DEPLOYMENT], how="inner")
             .filter(pl.col(cost) <= pl.col("price_usd_per_m_blended_tokens"))
             .group_by("quote_id").agg(pl.col("batch_size", "tokens_per_s_per_user")
                                       .get(pl.col("batch_size").arg_min()).name.prefix("_be_")))
    s = s.join(curve, on="quote_id", how="left").with_columns(pl.col("_be_batch_size").alias("breakeven_batch_size"))
    return s.with_columns(_reason().alias("reason"))


def _reason() -> pl.Expr:
    """The analyst's sentences for each quote, built from the summary columns (no Python row loop).

    Order: verdict and margins; the floor deployment and what stops a cheaper one (the binding wall);
    the precision assumption and the floors at other precisions; for below-floor quotes, what would be
    needed; the band across accelerators; the break-evens.
    """
    c = pl.col
    usd = lambda x: pl.format("${}/M", _t(x))  # noqa: E731
    price, floor = c("price_usd_per_m_blended_tokens"), c("floor_usd_per_m_blended_tokens")
    has_floor = floor.is_not_null()
    v = c("verdict")
    speed_src = pl.when(c("speed_floor_source") == "quote").then(pl.lit("the quote's published speed")) \
        .otherwise(pl.lit("assumed as the quote publishes none"))
    speed_txt = pl.format("{} tokens/s per user, {}", _t(c("speed_floor_tokens_per_s_per_user")), speed_src)
    margins = pl.format("input {}, output {}", _pct(c("margin_input_frac")), _pct(c("margin_output_frac")))
    head = (
        pl.when(~has_floor & c("fast_tokens_per_s_per_user").is_null()).then(pl.format(
            "below-floor: no catalog accelerator holds {} with {} weights or wider on up to {} accelerators, so "
            "there is no floor to compare with.", c("model"), c("reference_precision"), pl.lit(MAX_GPUS)))
        .when(~has_floor).then(pl.format(
            "below-floor: no catalog accelerator serves {} at {}, with {} weights or wider; the fastest modeled is {} "
            "tokens/s per user ({} x {}, {}, batch {}), so the quote needs {}x that: hardware outside the catalog "
            "(wafer-scale SRAM, LPU) or speculative decoding, neither modeled.",
            c("model"), speed_txt, c("reference_precision"), _t(c("fast_tokens_per_s_per_user")), c("fast_num_gpus"),
            c("fast_hardware"), c("fast_precision"), c("fast_batch_size"),
            _t(c("speed_floor_tokens_per_s_per_user") / c("fast_tokens_per_s_per_user"))))
        .when(v == "below-floor").then(pl.format(
            "below-floor: the blended price {} is under the modeled floor {} (margin {}; {}): no catalog accelerator "
            "serves {} that cheaply at this speed with {} weights or wider.",
            usd(price), usd(floor), _pct(c("margin_blended_frac")), margins, c("model"), c("reference_precision")))
        .when(v == "thin").then(pl.format(
            "thin: the blended price {} is only {}x the modeled floor {}, a gross margin of {} (under {}; {}).",
            usd(price), _t(c("_ratio")), usd(floor), _pct(c("margin_blended_frac")), _pct(pl.lit(THIN_MARGIN_FRAC)),
            margins))
        .when(v == "plausible").then(pl.format(
            "plausible: the blended price {} is {}x the modeled floor {}, a gross margin of {} ({}).",
            usd(price), _t(c("_ratio")), usd(floor), _pct(c("margin_blended_frac")), margins))
        .otherwise(pl.format(
            "rich: the blended price {} is {}x the modeled floor {}, a gross margin of {} (over {}; {}).",
            usd(price), _t(c("_ratio")), usd(floor), _pct(c("margin_blended_frac")), _pct(pl.lit(RICH_MARGIN_FRAC)),
            margins))
    )
    limit = (pl.when(c("floor_batch_limit") == "speed").then(pl.format("the speed floor stops a larger batch ({})",
                                                                      speed_txt))
             .when(c("floor_batch_limit") == "capacity").then(pl.format(
                 "the KV-cache capacity wall stops a larger batch (speed floor: {})", speed_txt))
             .otherwise(pl.format("a larger batch costs more per token (speed floor: {})", speed_txt)))
    deploy = pl.when(has_floor).then(pl.format(
        " Floor: {} x {} (tp {}, pp {}), batch {}, {} tokens/s per user, {}-bound; {}.",
        c("floor_num_gpus"), c("floor_hardware"), c("floor_tp"), c("floor_pp"), c("floor_batch_size"),
        _t(c("floor_tokens_per_s_per_user")), c("floor_binding_wall"), limit))
    p_src = pl.when(c("reference_precision_source") == "stated").then(pl.lit("as the provider states")) \
        .otherwise(pl.lit("the released checkpoint's; the provider states none"))
    precision_txt = pl.format(" The floor assumes {} weights ({})", c("reference_precision"), p_src)
    alt_bf16 = (pl.when((c("reference_precision") != "bf16") & c("floor_bf16_usd_per_m_blended_tokens").is_not_null())
                .then(pl.format("; with bf16 it is {}", usd(c("floor_bf16_usd_per_m_blended_tokens"))))
                .when(c("reference_precision") != "bf16").then(pl.lit("; no bf16 deployment meets the speed floor")))
    lower = c("floor_any_precision_usd_per_m_blended_tokens")
    cheaper = lower.is_not_null() & (floor.is_null() | (lower < floor * (1 - 1e-9)))
    alt_low = pl.when(cheaper).then(pl.format("; with {} (not stated by the provider) it would be {} on {}",
                                              c("floor_any_precision"), usd(lower), c("any_hardware")))
    needs = (pl.when(~has_floor & cheaper).then(pl.format(" It is reachable only with {} weights.", c("floor_any_precision")))
             .when(has_floor & (v == "below-floor") & cheaper & (lower <= price)).then(pl.format(
                 " It clears the floor only with {} weights.", c("floor_any_precision")))
             .when(has_floor & (v == "below-floor")).then(pl.format(
                 " This price needs a {}x lower cost than modeled: subsidized or mispriced, or tricks the model does "
                 "not include (speculative decoding, disaggregated prefill, more prefix-cache hits).",
                 _t(1 / c("_ratio")))))
    band = (pl.when(c("num_hardware_meeting_floor") > 1).then(pl.format(
        " Floors on the {} accelerators that meet the speed: {} ({}) to {} ({}).",
        c("num_hardware_meeting_floor"), usd(floor), c("floor_hardware"), usd(c("band_max_usd_per_m_blended_tokens")),
        c("band_max_hardware")))
        .when(c("num_hardware_meeting_floor") == 1).then(pl.format(" Only {} meets the speed.", c("floor_hardware"))))
    util = (pl.when(c("breakeven_utilization_frac").is_not_null())
            .then(pl.format("{} utilization", _pct(c("breakeven_utilization_frac"))))
            .when(c("_u_star").is_infinite()).then(pl.lit("no utilization (the price does not cover power)"))
            .otherwise(pl.lit("no utilization (even 100% falls short)")))
    batch = (pl.when(c("breakeven_batch_size").is_not_null()).then(pl.format(
        "batch {} ({} tokens/s per user)", c("breakeven_batch_size"), _t(c("_be_tokens_per_s_per_user"))))
        .otherwise(pl.lit("no batch")))
    breakeven = pl.when(has_floor).then(pl.format(
        " Breaks even on the floor deployment at {}/GPU-hour all-in (modeled {}), {}, or {}.",
        pl.format("${}", _t(c("breakeven_usd_per_gpu_hour"))), pl.format("${}", _t(c("floor_usd_per_gpu_hour"))),
        util, batch))
    return pl.concat_str([head, deploy, precision_txt, alt_bf16, alt_low, pl.lit("."), needs, band, breakeven],
                         ignore_nulls=True)


def _per_hardware(q: pl.DataFrame, keys: pl.DataFrame, f: dict, catalog: Catalog, economics: Economics,
                  hardware) -> pl.DataFrame:
    acc = catalog.accelerators
    if hardware is not None:
        acc = acc.filter(pl.col("id").is_in(list(hardware)))
    price_col = "all_in_capex_usd" if economics.basis == "owned" else "rental_usd_per_hour"
    hw = acc.select(pl.col("id").alias("hardware"), pl.col(price_col).is_null().alias("_no_price"))
    floors = f["per_hw"].select("key", "hardware", "layout", *_DEPLOYMENT, "precision", "batch_size",
                                "tokens_per_s_per_user", "binding_wall", "usd_per_m_input_tokens",
                                "usd_per_m_output_tokens", "usd_per_m_blended_tokens")
    grid = (keys.select("key", "speed_floor_tokens_per_s_per_user", "reference_precision").join(hw, how="cross")
            .join(floors, on=["key", "hardware"], how="left").join(f["fastest_hw"], on=["key", "hardware"], how="left"))
    what = "all_in_capex_usd (not sold; use the rental basis)" if economics.basis == "owned" else "rental_usd_per_hour"
    note = (pl.when(pl.col("_no_price")).then(pl.lit(f"no {what} in the catalog"))
            .when(pl.col("usd_per_m_blended_tokens").is_not_null()).then(pl.lit(""))
            .when(pl.col("fastest_tokens_per_s_per_user").is_null()).then(pl.format(
                "the weights do not fit in {} or wider on up to {} accelerators", pl.col("reference_precision"),
                pl.lit(MAX_GPUS)))
            .otherwise(pl.format("fastest {} tokens/s per user is below the speed floor of {}",
                                 _t(pl.col("fastest_tokens_per_s_per_user")),
                                 _t(pl.col("speed_floor_tokens_per_s_per_user")))))
    out = (q.select("quote_id", "provider", "model", "key", "price_usd_per_m_blended_tokens")
           .join(grid, on="key", how="left")
           .with_columns(pl.col("usd_per_m_blended_tokens").is_not_null().alias("meets_floor"),
                         gross_margin_frac(pl.col("price_usd_per_m_blended_tokens"),
                                           pl.col("usd_per_m_blended_tokens")).alias("margin_blended_frac"),
                         note.alias("note"))
           .sort("quote_id", "usd_per_m_blended_tokens", nulls_last=True))
    _require_finite(out, "quote check per accelerator")
    return out


def _require_finite(frame: pl.DataFrame, what: str) -> None:
    """Nulls are explicit (no deployment); NaN or inf in a result is a bug and never reaches a table."""
    for c, dt in frame.schema.items():
        if dt.is_float() and not c.startswith("_"):
            s = frame[c].drop_nulls()
            if s.len() and not s.is_finite().all():
                raise InvalidInputError(f"{what}: column {c} is not finite for some quote (model bug; please report)")
