"""The quotes file (``data/quotes.csv``, an upload or a typed quote) and the provider systems table: read and validate.

A quote is a provider's list price for a model (USD per million input, cached-input and output tokens), with
optional stated speed, quantization, weight format and hardware (schema: :data:`QUOTE_SCHEMA`,
``data/README.md`` ``## quotes.csv``). :func:`validate_quotes` checks a text table whole and fills the weight
format by the documented rule (:func:`weight_format_rule`) and the narrowest precision class the floor may use
(``reference_precision``); :func:`read_quotes` reads a CSV or XLSX path or upload with bounded readers;
:func:`load_quotes` picks the catalog's or the shipped file. ``provider_systems.csv`` lists the non-GPU
serving systems a quote's ``hardware`` may name (:func:`load_provider_systems`).

The floor search that compares quotes with the modeled cost is :mod:`econ.analyses.quotes`.
"""

from __future__ import annotations

import threading
from pathlib import Path

import polars as pl

from econ.errors import DataError
from econ.physics import precision as prec
from econ.tables.catalog import DEFAULT_DATA_DIR, TXT, TXT_OPT, Catalog, Col, read_table, validate_table

MAX_QUOTE_ROWS = 10_000
"""Largest quotes file accepted in one check (a guard against pasting a whole price feed). [rows]"""
MAX_QUOTE_FILE_BYTES = 20_000_000
"""Largest quotes file read (10,000 rows of the shipped file's width are ~5 MB). [B]"""

QUANTIZATION_FORMAT: dict[str, str] = {
    "bf16": "bf16", "fp16": "bf16", "fp32": "bf16", "fp8": "fp8", "int8": "int8", "w8a8": "int8", "fp8-dynamic": "fp8",
    "fp4": "nvfp4", "nvfp4": "nvfp4", "mxfp4": "mxfp4", "int4": "int4", "w4a16": "int4", "awq": "int4", "gptq": "int4",
}
"""Stated serving quantization -> the weight format it stores (fills an empty ``weight_format``)."""

QUANTIZATION_PRECISION: dict[str, str] = {q: prec.FORMAT_PRECISION[f] for q, f in QUANTIZATION_FORMAT.items()}
"""Stated serving quantization -> the precision class of the cost model (precision.PRECISIONS): the matmul
precision of the format it stores (:data:`econ.physics.precision.FORMAT_PRECISION`).

int8 and int4 weights are modeled with the fp8 and fp4 byte counts and peaks: same bytes per weight,
and the roofline does not distinguish integer from float formats."""

WEIGHT_FORMATS: tuple[str, ...] = tuple(prec.WEIGHT_FORMATS)
"""Valid ``weight_format`` values of a quote (the weight formats of the cost model,
:data:`econ.physics.precision.WEIGHT_FORMATS`; rule in ``data/README.md``). A format maps to the narrowest
precision class the floor may use by :data:`econ.physics.precision.FORMAT_PRECISION` (bytes per weight: 2, 1,
0.5): the floor uses that class where the accelerator has its matmuls, else a wider one (an MXFP4 model on
Hopper, without FP4 tensor cores, is priced at fp8 or bf16, never below what the provider can run)."""

_USD = "USD/M tokens"

QUOTE_SCHEMA: dict[str, Col] = {
    "quote_id": TXT,
    "provider": TXT,
    "model": TXT,
    "provider_model_name": TXT_OPT,
    "usd_per_m_input_tokens": Col(pl.Float64, True, 0.0, 1e4, False, _USD),
    "usd_per_m_cached_input_tokens": Col(pl.Float64, False, 0.0, 1e4, True, _USD),
    "usd_per_m_output_tokens": Col(pl.Float64, True, 0.0, 1e4, False, _USD),
    "output_tokens_per_s_per_user": Col(pl.Float64, False, 0.0, 1e5, False, "tokens/s"),
    "ttft_s": Col(pl.Float64, False, 0.0, 600.0, False, "s"),
    "speed_source": TXT_OPT,
    "speed_as_of": TXT_OPT,
    "quantization": TXT_OPT,
    "weight_format": TXT_OPT,
    "weight_format_basis": TXT_OPT,
    "hardware": TXT_OPT,
    "hardware_source": TXT_OPT,
    "source": TXT_OPT,
    "as_of": TXT_OPT,
    "notes": TXT_OPT,
}
"""Columns of a quotes file (``data/README.md`` ``## quotes.csv``). Prices must be > 0 (a margin on a
free price is undefined); a cached-input price may be 0 and may not exceed the uncached one.
``source``/``as_of`` are optional so an analyst can upload a bare price list; the shipped file fills them
(tests/tables/test_quote_files.py checks)."""

REQUIRED_QUOTE_COLUMNS: tuple[str, ...] = ("provider", "model", "usd_per_m_input_tokens", "usd_per_m_output_tokens")
"""Columns a quotes file must have; the others may be absent (they are added empty, a missing
``quote_id`` becomes ``quote-<row>``, and an empty ``weight_format`` is filled by :func:`weight_format_rule`)."""

PROVIDER_SYSTEM_SCHEMA: dict[str, Col] = {
    "id": TXT, "display_name": TXT, "vendor": TXT, "unit": TXT,
    "sram_capacity_gb": Col(pl.Float64, False, 0.0, 1e6, True, "GB"),
    "sram_bandwidth_tb_per_s": Col(pl.Float64, False, 0.0, 1e9, True, "TB/s"),
    "hbm_capacity_gb": Col(pl.Float64, False, 0.0, 1e6, True, "GB"),
    "ddr_capacity_gb": Col(pl.Float64, False, 0.0, 1e7, True, "GB"),
    "peak_tflop_per_s": Col(pl.Float64, False, 0.0, 1e7, True, "TFLOP/s"),
    "peak_format": TXT_OPT,
    "units_per_deployment": Col(pl.Float64, False, 1.0, 1e6, True, "units"),
    "deployment_basis": TXT_OPT,
    "system_price_usd": Col(pl.Float64, False, 0.0, 1e9, False, "USD"),
    "cost_basis": TXT,
    "gpu_comparable": Col(pl.Boolean),
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/provider_systems.csv``: non-GPU serving systems a quote's ``hardware`` may name (specs only, no
cost basis; ``data/README.md``)."""


SPEED_KINDS: tuple[str, ...] = ("provider-claim", "provider-disclosure", "third-party-median")
"""How a speed of ``provider_speeds.csv`` was obtained: the provider's own best-case figure (a pricing or docs page),
a provider's disclosure of its fleet's average (DeepSeek's day-6 figure), or a third party's median measurement
(Artificial Analysis, 14-day median)."""

PROVIDER_SPEED_SCHEMA: dict[str, Col] = {
    "quote_id": TXT,
    "output_tokens_per_s_per_user": Col(pl.Float64, False, 0.0, 1e5, False, "tokens/s"),
    "ttft_s": Col(pl.Float64, False, 0.0, 600.0, False, "s"),
    "speed_kind": TXT_OPT,
    "quantization_stated": TXT_OPT,
    "weight_format": TXT_OPT,
    "hardware_stated": TXT_OPT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/provider_speeds.csv``: per shipped quote, the sourced output speed (tokens/s per user), time to first token,
the serving format the provider states and the hardware it names (``data/README.md``). ``quotes.csv``'s speed and
stated-format columns are written from it (``scripts/update_quote_speeds.py``; a test holds them equal)."""


def load_provider_speeds(data_dir: str | Path | None = None) -> pl.DataFrame:
    """``provider_speeds.csv`` from ``data_dir`` (else the shipped one), validated.

    Raises
    ------
    DataError
        A malformed table (every bad cell named), a ``speed_kind`` outside :data:`SPEED_KINDS`, a speed without a
        kind, or a ``weight_format`` outside :data:`WEIGHT_FORMATS`.
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / "provider_speeds.csv" if (base / "provider_speeds.csv").is_file() else \
        DEFAULT_DATA_DIR / "provider_speeds.csv"
    table = read_table(path, PROVIDER_SPEED_SCHEMA, "quote_id")
    problems = []
    for r in table.iter_rows(named=True):
        if r["speed_kind"] is not None and r["speed_kind"] not in SPEED_KINDS:
            problems.append(f"row {r['quote_id']}, column speed_kind: {r['speed_kind']!r} not in {list(SPEED_KINDS)}")
        if r["output_tokens_per_s_per_user"] is not None and r["speed_kind"] is None:
            problems.append(f"row {r['quote_id']}, column speed_kind: empty for a speed (one of {list(SPEED_KINDS)})")
        if r["weight_format"] is not None and r["weight_format"] not in WEIGHT_FORMATS:
            problems.append(f"row {r['quote_id']}, column weight_format: {r['weight_format']!r} not in "
                            f"{list(WEIGHT_FORMATS)}")
    if problems:
        raise DataError(f"{path.name}: {len(problems)} problem(s):\n  " + "\n  ".join(problems))
    return table


def speeds_into_quotes(raw: pl.DataFrame, speeds: pl.DataFrame) -> pl.DataFrame:
    """``quotes.csv`` (read as text) with its speed and stated-format columns taken from ``provider_speeds.csv``.

    For every quote of ``speeds``: ``output_tokens_per_s_per_user``, ``ttft_s``, ``speed_source`` ("<speed_kind>:
    <source>") and ``speed_as_of`` from its row when it has a speed (cleared otherwise); ``weight_format`` and
    ``weight_format_basis = provider-stated`` where the row states a format. Quotes without a row keep their cells.

    Returns
    -------
    pl.DataFrame, the columns and order of ``raw``, every cell text.
    """
    sp = speeds.select(
        "quote_id",
        pl.col("output_tokens_per_s_per_user").map_elements(_num, return_dtype=pl.String).alias("_speed"),
        pl.col("ttft_s").map_elements(_num, return_dtype=pl.String).alias("_ttft"),
        pl.when(pl.col("output_tokens_per_s_per_user").is_not_null())
        .then(pl.format("{}: {}", pl.col("speed_kind"), pl.col("source"))).alias("_src"),
        pl.when(pl.col("output_tokens_per_s_per_user").is_not_null()).then(pl.col("as_of")).alias("_as_of"),
        pl.col("weight_format").alias("_fmt"), pl.lit(True).alias("_row"))
    j = raw.join(sp, on="quote_id", how="left", maintain_order="left")
    row = pl.col("_row").fill_null(False)
    return j.with_columns(
        pl.when(row).then(pl.col("_speed")).otherwise(pl.col("output_tokens_per_s_per_user"))
        .alias("output_tokens_per_s_per_user"),
        pl.when(row).then(pl.col("_ttft")).otherwise(pl.col("ttft_s")).alias("ttft_s"),
        pl.when(row).then(pl.col("_src")).otherwise(pl.col("speed_source")).alias("speed_source"),
        pl.when(row).then(pl.col("_as_of")).otherwise(pl.col("speed_as_of")).alias("speed_as_of"),
        pl.when(pl.col("_fmt").is_not_null()).then(pl.col("_fmt")).otherwise(pl.col("weight_format"))
        .alias("weight_format"),
        pl.when(pl.col("_fmt").is_not_null()).then(pl.lit("provider-stated")).otherwise(pl.col("weight_format_basis"))
        .alias("weight_format_basis"),
    ).select(raw.columns)


def _num(x) -> str | None:
    """A number as the text a CSV cell keeps (560 not 560.0)."""
    return None if x is None else (str(int(x)) if float(x).is_integer() else repr(float(x)))


def load_provider_systems(catalog: Catalog | None = None) -> pl.DataFrame:
    """``provider_systems.csv`` from the catalog's data folder (else the shipped one), validated.

    Raises
    ------
    DataError
        A malformed table (every bad cell named).
    """
    base = Path(catalog.data_dir) if catalog is not None else DEFAULT_DATA_DIR
    path = base / "provider_systems.csv"
    if not path.is_file():
        path = DEFAULT_DATA_DIR / "provider_systems.csv"
    try:
        st = path.stat()
        stamp = (str(path.resolve()), st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = None
    with _SYSTEMS_LOCK:
        hit = _SYSTEMS_CACHE.get(stamp[0]) if stamp else None
    if hit is not None and hit[0] == stamp:
        return hit[1]
    table = read_table(path, PROVIDER_SYSTEM_SCHEMA, "id")
    if stamp:
        with _SYSTEMS_LOCK:
            _SYSTEMS_CACHE[stamp[0]] = (stamp, table)
    return table


_SYSTEMS_CACHE: dict = {}
"""provider_systems.csv tables read, by path, with the (path, mtime, size) they were read at: re-read when the
file changes (the check and the quote validation both read it)."""

_SYSTEMS_LOCK = threading.Lock()
"""Guards :data:`_SYSTEMS_CACHE`: dashboard sessions run in threads."""


def native_weight_format(dtype_text: pl.Expr) -> pl.Expr:
    """models.csv ``native_weight_dtype`` text -> a :data:`WEIGHT_FORMATS` value (the released checkpoint's format).

    Parameters
    ----------
    dtype_text : pl.Expr, String

    Returns
    -------
    pl.Expr, String: nvfp4, mxfp4 (``mxfp4``/``mx4``), int4 (``fp4``/``int4``/``nf4``), int8, fp8_block
    (``fp8_block``: a release of 128 x 128 block-scaled FP8), fp8 (``fp8``/``e4m3``/``f8``), else bf16;
    case-insensitive.
    """
    t = dtype_text.str.to_lowercase()
    return (pl.when(t.str.contains("fp8_block")).then(pl.lit("fp8_block"))
            .when(t.str.contains("nvfp4")).then(pl.lit("nvfp4"))
            .when(t.str.contains("mxfp4|mx4")).then(pl.lit("mxfp4"))
            .when(t.str.contains("fp4|int4|nf4")).then(pl.lit("int4"))
            .when(t.str.contains("int8")).then(pl.lit("int8"))
            .when(t.str.contains("fp8|e4m3|f8")).then(pl.lit("fp8"))
            .otherwise(pl.lit("bf16")))


FP8_RELEASES: dict[str, str] = {
    "llama-3.1-405b": (
        "FP8 checkpoints of Llama-3.1-405B-Instruct were published with the model (neuralmagic/Meta-Llama-3.1-405B-"
        "Instruct-FP8, release date 2024-07-24: 'this model can now be loaded and evaluated with a single node of "
        "8xH100 GPUs, as opposed to multiple nodes', 99.8% OpenLLM recovery; nvidia/Llama-3.1-405B-Instruct-FP8, "
        "TensorRT Model Optimizer; huggingface.co model cards): its bf16 weights (812 GB) need two 8-GPU nodes, the "
        "FP8 ones fit one, so a provider that states no format is taken to serve FP8"),
}
"""Models served in FP8 by default although released in bf16: model id -> why (the weight-format rule's step 4,
basis ``fp8-release``). Only models whose bf16 weights do not fit one 8-accelerator node of the release's
generation and whose FP8 checkpoint was published with the model."""


def fp8_flavour(weight_format: pl.Expr, native_weight_dtype: pl.Expr) -> pl.Expr:
    """``fp8`` as the model's own FP8 (:data:`econ.physics.precision.NATIVE_FP8_FORMAT`, the engine's default for it):
    ``fp8_block`` for a model released in 128 x 128 block-scaled FP8 (DeepSeek-V3/R1/V3.2, Kimi-K2), else unchanged. A provider serving such a
    model "in FP8" serves its FP8 release.

    Parameters
    ----------
    weight_format, native_weight_dtype : pl.Expr (String): a weight format, the model's ``models.csv``
        ``native_weight_dtype``

    Returns
    -------
    pl.Expr (String)
    """
    own = native_weight_dtype.replace_strict(prec.NATIVE_FP8_FORMAT, default=None, return_dtype=pl.String)
    return pl.when((weight_format == "fp8") & own.is_not_null()).then(own).otherwise(weight_format)


def weight_format_rule(provider_model_name: pl.Expr, model: pl.Expr, native_weight_dtype: pl.Expr
                       ) -> tuple[pl.Expr, pl.Expr]:
    """The weight format a quote is assumed to serve, and which branch of the rule gave it.

    Parameters
    ----------
    provider_model_name, model, native_weight_dtype : pl.Expr (text columns)
        The provider's model name (SKU), the catalog model id and its ``models.csv`` ``native_weight_dtype``.

    Returns
    -------
    (weight_format, weight_format_basis) : pl.Expr, pl.Expr

    Notes
    -----
    The rule of ``data/README.md`` ("Weight-format rule", issue 10), in order, case-insensitive on the name:
    1. ``turbo`` in the name -> ``fp8`` (DeepInfra's Turbo pages: "utilizing FP8 quantization",
       https://deepinfra.com/meta-llama/Llama-3.3-70B-Instruct-Turbo/api; Together's Turbo endpoints by the
       same rule) -> basis ``slug-turbo``;
    2. ``fp8`` in the name -> ``fp8`` (``slug-fp8``);
    3. gpt-oss models -> ``mxfp4`` (OpenAI released the MoE weights in MXFP4; ``gpt-oss-release``);
    4. a model of :data:`FP8_RELEASES` (served in FP8 since its release: Llama-3.1-405B on one 8-GPU node) ->
       ``fp8`` (``fp8-release``);
    5. otherwise the released checkpoint's format (``native``).

    A provider statement (``data/provider_speeds.csv``, basis ``provider-stated``) overrides the rule.
    :func:`validate_quotes` then reads ``fp8`` as the model's own FP8 (:func:`fp8_flavour`).
    """
    name = provider_model_name.fill_null("").str.to_lowercase()
    fp8_release = model.is_in(list(FP8_RELEASES))
    fmt = (pl.when(name.str.contains("turbo")).then(pl.lit("fp8"))
           .when(name.str.contains("fp8")).then(pl.lit("fp8"))
           .when(model.str.starts_with("gpt-oss")).then(pl.lit("mxfp4"))
           .when(fp8_release).then(pl.lit("fp8"))
           .otherwise(native_weight_format(native_weight_dtype)))
    basis = (pl.when(name.str.contains("turbo")).then(pl.lit("slug-turbo"))
             .when(name.str.contains("fp8")).then(pl.lit("slug-fp8"))
             .when(model.str.starts_with("gpt-oss")).then(pl.lit("gpt-oss-release"))
             .when(fp8_release).then(pl.lit("fp8-release"))
             .otherwise(pl.lit("native")))
    return fmt, basis


def validate_quotes(raw: pl.DataFrame, catalog: Catalog, name: str = "quotes.csv") -> pl.DataFrame:
    """Validate a quotes table read as text; return it typed, or raise one DataError listing every problem.

    Parameters
    ----------
    raw : pl.DataFrame
        Columns of :data:`QUOTE_SCHEMA` as ``pl.String`` (optional columns may be absent).
    catalog : Catalog
        Model ids are checked against ``catalog.models``, ``hardware`` against the accelerators and
        ``provider_systems.csv``.
    name : str
        File name used in messages.

    Returns
    -------
    pl.DataFrame with :data:`QUOTE_SCHEMA` dtypes (``weight_format`` / ``weight_format_basis`` filled by
    :func:`weight_format_rule` where empty) plus ``reference_precision`` (bf16|fp8|fp4: the narrowest
    precision the floor may use) and ``reference_precision_source`` (``stated`` for a stated quantization,
    else the weight-format basis; ``given`` for a format without a basis).

    Raises
    ------
    DataError
        More than :data:`MAX_QUOTE_ROWS` rows; missing required or unknown columns; empty required cells;
        non-numeric, negative, zero or non-finite prices; a cached-input price above the uncached one;
        duplicate or malformed quote ids; unknown model ids or hardware ids (with the closest ids); unknown
        quantization names or weight formats, or a stated quantization that contradicts the weight format.
        All problems of the file in one message, as ``file, row <quote_id>, column <col>: reason``; nothing
        is half-processed.
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
    extra = _id_and_format_problems(raw, catalog, name)
    try:
        df = validate_table(raw, QUOTE_SCHEMA, "quote_id", name)
    except DataError as exc:
        if extra:
            raise DataError(f"{exc}\n  " + "\n  ".join(extra)) from None
        raise
    extra += _price_order_problems(df, name)
    if extra:
        raise DataError(f"{name}: {len(extra)} problem(s):\n  " + "\n  ".join(extra))
    native = catalog.models.select(pl.col("id").alias("model"), pl.col("native_weight_dtype").alias("_native"))
    df = df.join(native, on="model", how="left", maintain_order="left")
    rule_fmt, rule_basis = weight_format_rule(pl.col("provider_model_name"), pl.col("model"), pl.col("_native"))
    q = pl.col("quantization").str.strip_chars().str.to_lowercase().replace("", None)
    w = pl.col("weight_format").str.strip_chars().str.to_lowercase().replace("", None)
    wb = pl.col("weight_format_basis").str.strip_chars().replace("", None)
    df = df.with_columns(q.alias("quantization"), w.alias("_w"), wb.alias("_wb"))
    by_quant = pl.col("quantization").replace_strict(QUANTIZATION_FORMAT, default=None)
    df = df.with_columns(
        pl.coalesce("_w", by_quant, rule_fmt).alias("weight_format"),
        pl.when(pl.col("_w").is_not_null()).then(pl.coalesce("_wb", pl.lit("given")))
        .when(by_quant.is_not_null()).then(pl.lit("stated"))
        .otherwise(rule_basis).alias("weight_format_basis"))
    # fp8 of a model released in block-scaled FP8 is that release (fp8_flavour), except a format given bare (a
    # user's own row: taken as written, fp8 = per-tensor)
    df = df.with_columns(pl.when(pl.col("weight_format_basis") == "given").then(pl.col("weight_format"))
                         .otherwise(fp8_flavour(pl.col("weight_format"), pl.col("_native"))).alias("weight_format"))
    by_q = pl.col("quantization").replace_strict(QUANTIZATION_PRECISION, default=None)
    by_w = pl.col("weight_format").replace_strict(prec.FORMAT_PRECISION, default=None)
    return df.with_columns(
        pl.coalesce(by_q, by_w).alias("reference_precision"),
        pl.when(by_q.is_not_null()).then(pl.lit("stated")).otherwise(pl.col("weight_format_basis"))
        .alias("reference_precision_source"),
    ).drop("_native", "_w", "_wb")


def _labels() -> pl.Expr:
    return pl.coalesce(pl.col("quote_id").str.strip_chars().replace("", None),
                       pl.format("#{}", pl.int_range(1, pl.len() + 1)))


def _grouped(rows: pl.DataFrame, col: str) -> list[tuple[str, list[str]]]:
    return list(rows.group_by(col, maintain_order=True).agg(pl.col("label")).iter_rows())


def _shown(labs: list[str]) -> str:
    return ", ".join(labs[:8]) + (f" (+{len(labs) - 8} more)" if len(labs) > 8 else "")


def _id_and_format_problems(raw: pl.DataFrame, catalog: Catalog, name: str) -> list[str]:
    """Unknown model and hardware ids (grouped, with the closest ids and the rows), unknown quantization names
    and weight formats, and a stated quantization that contradicts the weight format."""
    import difflib

    known = catalog.models["id"].to_list()
    rows = raw.select(_labels().alias("label"), pl.col("model").str.strip_chars().alias("model"),
                      pl.col("hardware").str.strip_chars().alias("hw"),
                      pl.col("quantization").str.strip_chars().str.to_lowercase().alias("q"),
                      pl.col("weight_format").str.strip_chars().str.to_lowercase().alias("w"))
    problems = []
    bad_models = rows.filter(pl.col("model").is_not_null() & (pl.col("model") != "") & ~pl.col("model").is_in(known))
    for m, labs in _grouped(bad_models, "model"):  # one message per distinct unknown id, not per row
        close = difflib.get_close_matches(m, known, n=4, cutoff=0.3)
        hint = f"; closest: {', '.join(close)}" if close else ""
        problems.append(f"{name}, row(s) {_shown(labs)}, column model: unknown model id {m!r}{hint} "
                        f"(see `econ list models`)")
    if rows["hw"].drop_nulls().len():
        gpus = catalog.accelerators["id"].to_list()
        systems = load_provider_systems(catalog)["id"].to_list()
        valid = gpus + systems
        bad_hw = rows.filter(pl.col("hw").is_not_null() & (pl.col("hw") != "") & ~pl.col("hw").is_in(valid))
        for h, labs in _grouped(bad_hw, "hw"):
            close = difflib.get_close_matches(h, valid, n=4, cutoff=0.3)
            hint = f"; closest: {', '.join(close)}" if close else ""
            problems.append(f"{name}, row(s) {_shown(labs)}, column hardware: unknown hardware id {h!r}{hint} (valid: "
                            f"an accelerator of `econ list hardware` or a non-GPU system of provider_systems.csv: "
                            f"{', '.join(systems)}; leave empty if unknown)")
    bad_q = rows.filter(pl.col("q").is_not_null() & (pl.col("q") != "") & ~pl.col("q").is_in(list(QUANTIZATION_PRECISION)))
    for qv, labs in _grouped(bad_q, "q"):
        problems.append(f"{name}, row(s) {_shown(labs)}, column quantization: {qv!r} is not one of "
                        f"{sorted(QUANTIZATION_PRECISION)} (leave empty if unstated)")
    bad_w = rows.filter(pl.col("w").is_not_null() & (pl.col("w") != "") & ~pl.col("w").is_in(list(WEIGHT_FORMATS)))
    for wv, labs in _grouped(bad_w, "w"):
        problems.append(f"{name}, row(s) {_shown(labs)}, column weight_format: {wv!r} is not one of "
                        f"{list(WEIGHT_FORMATS)} (leave empty if unknown)")
    clash = rows.filter(pl.col("q").is_in(list(QUANTIZATION_PRECISION)) & pl.col("w").is_in(list(WEIGHT_FORMATS))
                        & (pl.col("q").replace_strict(QUANTIZATION_PRECISION, default=None)
                           != pl.col("w").replace_strict(prec.FORMAT_PRECISION, default=None)))
    for r in clash.iter_rows(named=True):
        problems.append(f"{name}, row {r['label']}, column weight_format: {r['w']!r} contradicts the stated "
                        f"quantization {r['q']!r} (they must agree; leave one empty)")
    return problems


def _price_order_problems(df: pl.DataFrame, name: str) -> list[str]:
    """A cached-input price above the uncached input price (a cache hit never costs more)."""
    bad = df.filter(pl.col("usd_per_m_cached_input_tokens") > pl.col("usd_per_m_input_tokens"))
    return [f"{name}, row {r['quote_id']}, column usd_per_m_cached_input_tokens: {r['usd_per_m_cached_input_tokens']:g} "
            f"is above the uncached usd_per_m_input_tokens {r['usd_per_m_input_tokens']:g} (valid: 0 to "
            f"{r['usd_per_m_input_tokens']:g})" for r in bad.iter_rows(named=True)]


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
    from econ.tables.uploads import read_table_bytes, read_table_file  # bounded readers (issue 12: XLSX bombs)

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

