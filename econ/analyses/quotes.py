"""Provider quotes vs the modeled cost floor: margins, verdicts, the binding wall and break-evens.

A *quote* is a provider's list price for a model (USD per million input, cached-input and output
tokens; ``data/quotes.csv``, schema in ``data/README.md``; read and validated by :mod:`econ.tables.quote_files`,
imported from LiteLLM by :mod:`econ.tables.litellm`). Its *floor* is the cheapest deployment the
engine (:func:`econ.engine.evaluate`) finds at the quote's own service level:

- **speed**: the quote's own sourced ``output_tokens_per_s_per_user``, else the one default speed floor
  (:data:`econ.presets.DEFAULT_MIN_TOKENS_PER_S_PER_USER`);
- **precision**: the weight format the provider serves (``weight_format``, filled by the documented
  rule of :func:`econ.tables.quote_files.weight_format_rule` when empty: "Turbo" or "fp8" in the SKU -> fp8),
  mapped to the engine's precision class by :data:`econ.physics.precision.FORMAT_PRECISION`; the floor may use
  that precision or a wider one (an fp4 format on hardware without fp4 matmuls runs at fp8 or bf16), never a
  narrower one;
- **hardware**: the quote's own accelerator when it names a catalog one (``hardware``), else the
  cheapest accelerator of the generations the user picks (:data:`GENERATION_RULES`; default: every
  catalog accelerator);
- **layout and batch**: every layout ``econ cost`` chooses among (:func:`econ.analyses.sweep.layout_candidates_frame`)
  plus, for MoE models, attention-DP + expert parallelism across scale-up domains up to
  :data:`MAX_WIDE_EP_GPUS` (DeepSeek serves decode on EP144 over 18 nodes and prefill on EP32 over 4),
  at batch sizes up to the KV-cache capacity;
- **cost tier**: the scenario's ``Economics.basis`` (owned-custom, hyperscaler, neocloud, rental-3yr,
  on-demand, rental, or a typed custom $/GPU-hour), per *utilized* GPU-hour.

The quote's implied gross margin is (price - cost) / price on input, output and blended tokens, and the
verdict sorts it (formulas and thresholds: :mod:`econ.economics.margins`):

==================  =======================================================================
below-floor         margin < 0: no accelerator in scope serves the model at that price and speed
thin                0 <= margin < 20%
plausible           20% <= margin <= 80%
rich                margin > 80%
not-gpu-comparable  the quote runs on non-GPU hardware without a catalog cost basis (Groq LPU,
                    Cerebras WSE-3, SambaNova SN40L: ``data/provider_systems.csv``), or no
                    accelerator in scope reaches its speed: there is no GPU floor to compare with
==================  =======================================================================

When the engine returns calibration bands (``usd_per_m_blended_tokens_low`` / ``_high``), each verdict
carries the floor's band and says when it straddles the price; without them the band columns are null.

Reverse engineering: at the floor deployment cost scales linearly with the accelerator-hour cost, so the
break-even $/GPU-hour is cost x price / floor; fixed costs scale with 1/utilization, which gives the
break-even utilization in closed form (:func:`econ.economics.margins.breakeven_utilization_frac`); the smallest batch on the
floor deployment whose cost is at most the price is read off the same evaluated grid; and the accelerator
generations on which the price clears the floor at the quote's speed are listed, with the one whose
accelerator-hour is cheapest.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER, DEFAULT_OUTPUT_LEN
from econ.tables.catalog import COMMON_CAPEX_BASES, Catalog
from econ.tables.quote_files import (QUOTE_SCHEMA, WEIGHT_FORMATS, load_provider_systems, native_weight_format,
                                     validate_quotes)
from econ.engine import catalog_arrays, evaluate, tier_rate
from econ.errors import InvalidInputError
from econ.economics.margins import (NOT_COMPARABLE, RICH_MARGIN_FRAC, THIN_MARGIN_FRAC, breakeven_usd_per_gpu_hour,
                                    breakeven_utilization_frac, gross_margin_frac, verdict_expr)
from econ.economics.pricing import usd_per_m_blended_tokens
from econ.analyses.search import octave_grid
from econ.analyses.sweep import layout_candidates_frame
from econ.validate import require_in_range, require_not_above
from econ.vocabulary import MAX_BATCH, MAX_CONTEXT, TIER_SPECS, tier, tier_code

BATCHES_PER_OCTAVE = 4
"""Batch-size grid density: 2^(k/4), rounded, up to the KV-capacity maximum (which is always included)."""

MAX_GPUS = 1024
"""Largest GPU count the floor search considers per model replica. [accelerators]"""

WIDE_EP_GPUS: tuple[int, ...] = (16, 32, 64, 128, 256)
"""Instance sizes of the attention-DP + EP layouts added across scale-up domains for MoE models. [accelerators]"""
MAX_WIDE_EP_GPUS = WIDE_EP_GPUS[-1]
"""Widest attention-DP + EP instance of the floor search. DeepSeek's disclosed production deployment
(open-infra-index, "Day 6 - One More Thing", 2025-03-01): decode on "Routed Expert EP144, MLA/Shared Expert
DP144" over 18 nodes, prefill on EP32 / DP32 over 4 nodes (``data/provider_disclosures.csv``); the
DeepSeek-V3 report (sec. 3.4) describes decode on 320 GPUs. 256 covers the EP144 class with powers of two."""

WEIGHT_FORMAT_BASES: dict[str, str] = {
    "stated": "as the provider states",
    "provider-stated": "as the provider states",
    "slug-turbo": "a 'Turbo' endpoint, FP8 by the weight-format rule",
    "slug-fp8": "'fp8' in the model name",
    "gpt-oss-release": "as OpenAI released the MoE weights, MXFP4",
    "fp8-release": "the FP8 checkpoint published with the model (econ.tables.quote_files.FP8_RELEASES); the provider states none",
    "native": "the released checkpoint's; the provider states none",
    "given": "as the quotes file states",
}
"""``weight_format_basis`` (and the 'stated' quantization) -> the words of a reason."""

GENERATION_RULES: tuple[tuple[str, str], ...] = (
    (r"^a100", "ampere"),
    (r"^h(100|800|200|20)(-|$)", "hopper"),
    (r"^g?b(200|300)(-|$)", "blackwell"),
    (r"^l40", "ada"),
    (r"^mi3[02]", "cdna3"),
    (r"^mi35", "cdna4"),
    (r"^tpu", "tpu"),
    (r"^gaudi", "gaudi"),
    (r"^trainium", "trainium"),
)
"""Accelerator id prefix -> generation (first match wins), for rows whose ``accelerators.csv`` ``generation`` is
empty or absent (a user's own table): the fallback behind ``--generation``.

The catalog's ``generation`` column (the calibration key) is used first; these rules give the same names:
NVIDIA by architecture (A100 Ampere; H100/H800/H200/H20 Hopper; B200/B300/GB200/GB300 Blackwell; L40S Ada),
AMD by CDNA generation (MI300X/MI325X CDNA 3, MI355X CDNA 4), Google TPUs, Intel Gaudi, AWS Trainium, as
``measurements.csv`` ``hardware_generation``. An id no rule matches gets ``<vendor>-<year>``."""

def cost_basis_label(basis: str) -> str:
    """Engine basis -> the tier name users see (``owned`` -> ``owned-custom``: econ.vocabulary.TIER_SPECS)."""
    return TIER_SPECS[tier(basis)].cli_name


SUMMARY_COLUMNS: tuple[str, ...] = (
    "quote_id", "provider", "model", "hardware", "quantization", "weight_format", "verdict",
    "price_usd_per_m_input_tokens", "price_usd_per_m_output_tokens", "price_usd_per_m_blended_tokens",
    "floor_usd_per_m_input_tokens", "floor_usd_per_m_output_tokens", "floor_usd_per_m_blended_tokens",
    "margin_input_frac", "margin_output_frac", "margin_blended_frac",
    "floor_usd_per_m_blended_tokens_low", "floor_usd_per_m_blended_tokens_high",
    "margin_blended_frac_low", "margin_blended_frac_high", "band_straddles_price",
    "cost_basis", "utilization_frac", "floor_usd_per_gpu_hour",
    "floor_scope", "floor_hardware", "floor_generation", "floor_layout", "floor_num_gpus", "floor_tp", "floor_dp",
    "floor_ep", "floor_pp", "floor_precision", "floor_weight_format", "floor_expert_weight_format",
    "floor_spec_method", "floor_batch_size",
    "floor_tokens_per_s_per_user", "floor_binding_wall", "floor_batch_limit",
    "band_max_usd_per_m_blended_tokens", "band_max_hardware", "num_hardware_meeting_floor",
    "speed_floor_tokens_per_s_per_user", "speed_floor_source", "reference_precision", "reference_precision_source",
    "floor_bf16_usd_per_m_blended_tokens", "floor_any_precision_usd_per_m_blended_tokens", "floor_any_precision",
    "breakeven_usd_per_gpu_hour", "breakeven_rate_usd_per_gpu_hour", "breakeven_utilization_frac",
    "breakeven_batch_size", "breakeven_tokens_per_s_per_user",
    "clearing_generations", "cheapest_clearing_generation", "cheapest_clearing_hardware",
    "cheapest_clearing_usd_per_gpu_hour", "cheapest_clearing_usd_per_m_blended_tokens",
    "reason",
)
"""Columns of :attr:`QuoteCheck.summary`, one row per quote.

``price_*`` are the quote's prices (blended at the stated mix and cache-hit rate), ``floor_*`` the cheapest
deployment's costs and configuration within ``floor_scope`` (the quote's own accelerator, its generation,
the generations picked, or the whole catalog), ``floor_batch_limit`` what stops a larger (cheaper) batch:
``speed`` (the per-user speed floor), ``capacity`` (KV cache) or ``cost``. ``*_low`` / ``*_high``: the
engine's calibration band of the floor and the margins it gives (null when the engine returns no band);
``band_straddles_price`` is true when the price lies inside the floor's band. ``cost_basis`` is the tier
(``owned-custom``, ``hyperscaler``, ``neocloud``, ``rental-3yr``, ``on-demand``, ``rental``, ``custom``),
``utilization_frac`` the share of hours serving, ``floor_usd_per_gpu_hour`` the floor's cost per *utilized*
GPU-hour. ``breakeven_usd_per_gpu_hour`` is the cost per utilized GPU-hour at which the floor equals the
price, ``breakeven_rate_usd_per_gpu_hour`` the same per hour of the fleet's existence at this utilization
(comparable with a rental rate or a TCO tier). ``clearing_generations`` lists the generations on which the
price clears the floor at the quote's speed (cheapest floor first); ``cheapest_clearing_*`` is the one
whose accelerator-hour is cheapest."""

PER_HARDWARE_COLUMNS: tuple[str, ...] = (
    "quote_id", "provider", "model", "hardware", "generation", "in_scope", "meets_floor", "layout", "num_gpus",
    "tp", "dp", "ep", "pp", "precision", "batch_size",
    "tokens_per_s_per_user", "binding_wall", "usd_per_gpu_hour", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
    "usd_per_m_blended_tokens", "price_usd_per_m_blended_tokens", "margin_blended_frac",
    "fastest_tokens_per_s_per_user", "note",
)
"""Columns of :attr:`QuoteCheck.per_hardware`: each quote's floor on every accelerator searched (null
costs and a ``note`` where the accelerator cannot meet the speed floor or has no rate in the tier);
``in_scope`` marks the accelerators the quote's floor is taken from."""


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
        The settings the check used (speed floor default, request shape, mix, cache-hit rate, cost tier,
        utilization, generations, thresholds), for the 'assumptions' sheet of an export.
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
    "cost_basis": "econ.vocabulary.TIER_SPECS (data/README.md, accelerators.csv cost tiers)",
    "usd_per_gpu_hour": "typed by the user (--usd-per-gpu-hour), per hour of the fleet's existence",
    "utilization_frac": "share of hours serving paid traffic; every $/GPU-hour of the check is per utilized hour",
    "generations": "econ.analyses.quotes.GENERATION_RULES; floors of quotes without their own hardware come from these",
    "deployments_evaluated": "model x accelerator x precision x layout x batch points of the floor search",
}


# --------------------------------------------------------------------------------------------- hardware

def accelerator_generations(catalog: Catalog) -> pl.DataFrame:
    """Generation of every catalog accelerator: ``accelerators.csv`` ``generation``, else :data:`GENERATION_RULES`.

    Returns
    -------
    pl.DataFrame with ``hardware`` (accelerator id) and ``generation`` (text), in catalog order.
    """
    acc = catalog.accelerators
    hw = pl.col("id").str.to_lowercase()
    expr = pl.lit(None, pl.String)
    for pattern, gen in reversed(GENERATION_RULES):
        expr = pl.when(hw.str.contains(pattern)).then(pl.lit(gen)).otherwise(expr)
    fallback = pl.format("{}-{}", pl.col("vendor").str.to_lowercase().str.replace_all(r"[^a-z0-9]+", "-"),
                         pl.col("year").cast(pl.String))
    stated = (pl.col("generation").cast(pl.String).str.strip_chars().str.to_lowercase().replace("", None)
              if "generation" in acc.columns else pl.lit(None, pl.String))
    return acc.select(pl.col("id").alias("hardware"), pl.coalesce(stated, expr, fallback).alias("generation"))


def generations(catalog: Catalog) -> list[str]:
    """The generation names of the catalog's accelerators (valid ``--generation`` values), in catalog order."""
    return accelerator_generations(catalog)["generation"].unique(maintain_order=True).to_list()


def tier_rates(catalog: Catalog, economics: Economics) -> pl.DataFrame:
    """Whether each accelerator has a $/GPU-hour in the scenario's cost tier, and the tier's rate.

    Returns
    -------
    pl.DataFrame with ``hardware``, ``tier_usd_per_gpu_hour`` [USD per hour of existence; null for
    owned-custom, whose chain depends on utilization, and where the tier has no rate] and ``has_rate``
    (owned-custom: the accelerator has an ``all_in_capex_usd``). Rates from :func:`econ.engine.tier_rate`.
    """
    arr = catalog_arrays(catalog)
    n = len(arr.hardware_ids)
    code = np.full(n, tier_code(economics.basis))
    custom = np.full(n, np.nan if economics.usd_per_gpu_hour is None else float(economics.usd_per_gpu_hour))
    hw = arr.accelerators(np.arange(n))
    rate = np.asarray(tier_rate(hw, code, custom), dtype=float)
    has = ~np.isnan(hw.all_in_capex_usd) if economics.basis == "owned" else ~np.isnan(rate)
    return pl.DataFrame({"hardware": list(arr.hardware_ids), "tier_usd_per_gpu_hour": rate, "has_rate": has},
                        nan_to_null=True)


# --------------------------------------------------------------------------------------------- a typed quote

def single_quote(catalog: Catalog, *, model: str, usd_per_m_input_tokens: float, usd_per_m_output_tokens: float,
                 usd_per_m_cached_input_tokens: float | None = None,
                 output_tokens_per_s_per_user: float | None = None, hardware: str | None = None,
                 weight_format: str | None = None, provider: str = "quote", provider_model_name: str | None = None,
                 quote_id: str = "quote", source: str = "typed by the user") -> pl.DataFrame:
    """One typed quote as a validated quotes frame (the input of :func:`check_quotes`).

    Parameters
    ----------
    model : str, catalog model id
    usd_per_m_input_tokens, usd_per_m_output_tokens : float in (0, 1e4] [USD/M tokens]
    usd_per_m_cached_input_tokens : float in [0, usd_per_m_input_tokens], optional [USD/M tokens]
    output_tokens_per_s_per_user : float in (0, 1e5], optional [tokens/s per user]
    hardware : str, optional, an accelerator id or a ``provider_systems.csv`` id
    weight_format : str, optional, one of :data:`econ.tables.quote_files.WEIGHT_FORMATS` (default:
        :func:`econ.tables.quote_files.weight_format_rule`)
    provider, provider_model_name, quote_id, source : str, labels

    Returns
    -------
    pl.DataFrame, one row, as :func:`econ.tables.quote_files.validate_quotes` returns.

    Raises
    ------
    InvalidInputError, UnknownIdError
        Naming the field and value: ``usd_per_m_input_tokens=-1 is outside (0, 10000] (USD/M tokens)``,
        ``usd_per_m_cached_input_tokens=0.6 is above usd_per_m_input_tokens=0.55``, an unknown model or
        hardware id with the closest ids, a weight format not in :data:`econ.tables.quote_files.WEIGHT_FORMATS`.
    """
    import difflib

    from econ.tables.catalog import check_ids

    check_ids("model", [model], catalog.models["id"].to_list())

    def price(name: str, value) -> float:  # the range and unit of the quotes file's column (QUOTE_SCHEMA)
        col = QUOTE_SCHEMA[name]
        return float(require_in_range(name, value, col.lo, col.hi, col.unit, lo_inclusive=col.lo_inclusive))

    p_in = price("usd_per_m_input_tokens", usd_per_m_input_tokens)
    p_out = price("usd_per_m_output_tokens", usd_per_m_output_tokens)
    p_c = None
    if usd_per_m_cached_input_tokens is not None:
        p_c = price("usd_per_m_cached_input_tokens", usd_per_m_cached_input_tokens)
        require_not_above("usd_per_m_cached_input_tokens", p_c, "usd_per_m_input_tokens", p_in,
                          f"a cached input token is never dearer; valid: 0 to {p_in:g} USD/M tokens", word="is above")
    speed = None
    if output_tokens_per_s_per_user is not None:
        speed = float(require_in_range("output_tokens_per_s_per_user", output_tokens_per_s_per_user, 0.0, 1e5,
                                       "tokens/s per user", lo_inclusive=False))
    if hardware is not None:
        valid = catalog.accelerators["id"].to_list() + load_provider_systems(catalog)["id"].to_list()
        if hardware not in valid:
            close = difflib.get_close_matches(str(hardware), valid, n=4, cutoff=0.3)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise InvalidInputError(f"hardware={hardware!r} is not a catalog accelerator or a provider system{hint} "
                                    f"(see `econ list hardware`; non-GPU systems: "
                                    f"{', '.join(load_provider_systems(catalog)['id'])})")
    if weight_format is not None and str(weight_format).lower() not in WEIGHT_FORMATS:
        raise InvalidInputError(f"weight_format={weight_format!r} is not one of {list(WEIGHT_FORMATS)}")

    def txt(v):
        return None if v is None else (repr(v) if isinstance(v, float) else str(v))

    row = {"quote_id": quote_id, "provider": provider, "model": model, "provider_model_name": provider_model_name,
           "usd_per_m_input_tokens": txt(p_in), "usd_per_m_cached_input_tokens": txt(p_c),
           "usd_per_m_output_tokens": txt(p_out), "output_tokens_per_s_per_user": txt(speed),
           "speed_source": source if speed is not None else None, "weight_format": weight_format,
           "weight_format_basis": "provider-stated" if weight_format is not None else None,
           "hardware": hardware, "hardware_source": source if hardware is not None else None, "source": source}
    raw = pl.DataFrame([row], schema={c: pl.String for c in row})
    return validate_quotes(raw, catalog, "quote")


# --------------------------------------------------------------------------------------------- floors

def _batch_grid() -> pl.DataFrame:
    """The floor search's batch sizes: the one grid (:func:`econ.analyses.search.octave_grid`) up to MAX_BATCH."""
    return pl.DataFrame({"batch_size": octave_grid(BATCHES_PER_OCTAVE, MAX_BATCH)})


def _pinned_models(catalog: Catalog) -> set[str]:
    """Models whose release pins its weight formats whatever the matmul precision (gpt-oss: MXFP4 experts, bf16
    rest; :data:`econ.physics.precision.CHECKPOINT_FORMATS`): the engine's default (a null ``weight_format``) is the release."""
    pinned = {d for d, pair in prec.CHECKPOINT_FORMATS.items() if any(pair)}
    return set(catalog.models.filter(pl.col("native_weight_dtype").is_in(list(pinned)))["id"].to_list())


def weight_format_spec(catalog: Catalog, model: pl.Expr, weight_format: pl.Expr) -> pl.Expr:
    """The ``weight_format`` column the engine gets for a quote: null where the quote serves the release's own
    pinned formats (gpt-oss MXFP4: experts MXFP4, the rest bf16), else the quote's format (all weights)."""
    pinned = _pinned_models(catalog)
    native = catalog.models.select(pl.col("id"), native_weight_format(pl.col("native_weight_dtype")).alias("f"))
    native_fmt = dict(native.iter_rows())
    release = model.replace_strict(native_fmt, default=None)
    return pl.when(model.is_in(list(pinned)) & (weight_format == release)).then(pl.lit(None, pl.String)) \
        .otherwise(weight_format)


def floor_points(models, catalog: Catalog, assumptions: Assumptions = DEFAULT, economics: Economics = Economics(),
                 *, input_len: int = 3072, output_len: int = DEFAULT_OUTPUT_LEN, hardware=None, formats=None) -> pl.DataFrame:
    """The points frame of the floor search for ``models`` on every catalog accelerator.

    Rows: model x accelerator x matmul precision the accelerator supports (bf16, fp8, fp4) x weight format x
    layout x batch size. Layouts: the candidates ``econ cost`` chooses among
    (:func:`econ.analyses.sweep.layout_candidates_frame`: GPU counts from the fewest that hold the weights up to the
    scale-up domain; tensor x pipeline, and attention-DP + EP for MoE models), plus, for MoE models,
    attention-DP + EP instances across scale-up domains of :data:`WIDE_EP_GPUS` accelerators (tp 1, dp = ep =
    the instance, as DeepSeek's disclosed DP144 / EP144 decode and DP32 / EP32 prefill; valid only where ep
    divides the experts). Batch sizes: ``2^(k/4)`` per attention group up to the KV capacity of that
    configuration, which is included. Speculative decoding is the engine's model default (MTP for
    DeepSeek-V3/R1).

    Parameters
    ----------
    models : iterable of str
        Model ids (catalog).
    hardware : iterable of str, optional
        Restrict to these accelerators (default: all in the catalog).
    input_len, output_len : int [tokens]
        Request shape (sizes the KV cache and the prefill).
    formats : dict of model id -> iterable of (str or None), optional
        The ``weight_format`` values to evaluate for each model (None = the engine's default: the matmul
        precision's own format, or the release's pinned formats). A format is paired only with matmul
        precisions at least as wide (fp8 weights run at fp8, or dequantized at bf16). Default: ``[None]``.

    Returns
    -------
    pl.DataFrame with the columns :func:`econ.engine.evaluate` reads, ``weight_format`` included (null = the
    engine's default; for models without pinned formats the default is written out, so equal rows dedupe).

    Notes
    -----
    The KV-capacity maximum of each configuration comes from one probe :func:`evaluate` call at batch
    dp; the caller then evaluates the returned frame once.
    """
    return _grid_points(_floor_configs(models, catalog, assumptions, economics, input_len=input_len,
                                       output_len=output_len, hardware=hardware, formats=formats)).drop("_cfg")


def _floor_configs(models, catalog: Catalog, assumptions: Assumptions, economics: Economics, *, input_len: int,
                   output_len: int, hardware=None, formats=None) -> pl.DataFrame:
    """The configurations of :func:`floor_points` (one row per model x accelerator x precision x weight format x
    layout), numbered (``_cfg``), with their probed ``max_batch_size`` (empty, without it, when no accelerator
    holds the weights on <= MAX_GPUS)."""
    acc = catalog.accelerators
    if hardware is not None:
        from econ.tables.catalog import check_ids
        hardware = list(hardware)
        check_ids("hardware", hardware, acc["id"].to_list())
        acc = acc.filter(pl.col("id").is_in(hardware))
    models = list(dict.fromkeys(models))
    pinned = _pinned_models(catalog)
    specs = []
    for m in models:
        for f in (formats or {}).get(m, [None]):
            specs.append((m, f))
    spec_frame = pl.DataFrame(specs, schema={"model": pl.String, "weight_format": pl.String}, orient="row")
    supported = pl.coalesce(*(pl.when(pl.col("precision") == k).then(pl.col(c)) for k, c in prec.PEAK_COLUMN.items()))
    bits = pl.col("weight_format").replace_strict(prec.FORMAT_BITS, default=None, return_dtype=pl.Int64)
    p_bits = pl.col("precision").replace_strict(prec.PRECISION_BITS, return_dtype=pl.Int64)
    default = pl.col("precision").replace_strict(prec.DEFAULT_WEIGHT_FORMAT, return_dtype=pl.String)
    keys = (pl.DataFrame({"model": models})
            .join(acc.select(pl.col("id").alias("hardware"), *prec.PEAK_COLUMN.values()), how="cross")
            .join(pl.DataFrame({"precision": list(prec.PRECISIONS)}), how="cross")
            .filter(supported.is_not_null()).select("model", "hardware", "precision"))
    fkeys = (keys.join(spec_frame, on="model", how="inner")
             .with_columns(pl.when(pl.col("weight_format").is_null() & ~pl.col("model").is_in(list(pinned)))
                           .then(default).otherwise(pl.col("weight_format")).alias("weight_format"))
             .filter(bits.is_null() | (bits <= p_bits)).unique(maintain_order=True))
    # the same layout candidates as econ cost (tensor x pipeline; attention-DP + EP for MoE models) ...
    configs = layout_candidates_frame(catalog, keys, assumptions=assumptions)
    # ... plus attention-DP + EP across scale-up domains for MoE models (DeepSeek's production layouts)
    moe = catalog.models.filter(pl.col("num_experts").fill_null(0) > 0)["id"]
    moe_keys = keys.filter(pl.col("model").is_in(moe.implode()))
    if moe_keys.height:
        wide = [layout_candidates_frame(catalog, moe_keys, num_gpus=n, tp=1, ep=n, assumptions=assumptions)
                for n in WIDE_EP_GPUS if n <= MAX_GPUS]
        configs = pl.concat([configs, *wide]).unique(maintain_order=True)
    configs = (configs.filter(pl.col("num_gpus") <= MAX_GPUS)
               .join(fkeys, on=["model", "hardware", "precision"], how="inner")
               .with_columns(pl.lit(input_len).alias("input_len"), pl.lit(output_len).alias("output_len")))
    if configs.height == 0:  # no accelerator holds the weights on <= MAX_GPUS: nothing to search
        return configs.with_row_index("_cfg")
    probe = evaluate(configs.with_columns(pl.col("dp").alias("batch_size")), catalog, assumptions, economics,
                     strict=False, columns=("max_batch_size",))
    return (configs.with_columns(probe["max_batch_size"].clip(upper_bound=MAX_BATCH).alias("max_batch_size"))
            .filter(pl.col("max_batch_size") >= pl.col("dp")).with_row_index("_cfg"))


def _grid_index(configs: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(configuration row, batch size) of every point of :func:`floor_points`, in its order.

    Batch sizes per attention-DP group (2^(k/4) grid), up to the KV capacity, which is included: per configuration
    (in order) the grid values g with g x dp < max_batch_size, then every configuration's top row."""
    g = _batch_grid()["batch_size"].to_numpy()
    top, dp = configs["max_batch_size"].to_numpy(), configs["dp"].to_numpy()
    n = np.searchsorted(g, (top - 1) // dp, side="right")  # g x dp < top  <=>  g <= (top - 1) // dp (integers)
    idx = np.repeat(np.arange(configs.height), n)
    within = np.arange(idx.size) - np.repeat(np.cumsum(n) - n, n)
    return (np.concatenate([idx, np.arange(configs.height)]),
            np.concatenate([g[within] * dp[idx], top // dp * dp]).astype(np.int64))


def _grid_points(configs: pl.DataFrame, grid: tuple[np.ndarray, np.ndarray] | None = None,
                 rows: np.ndarray | None = None) -> pl.DataFrame:
    """The points of :func:`floor_points` from :func:`_floor_configs` (``_cfg``: the configuration's row), or
    only the points at positions ``rows`` (in order); ``grid`` is :func:`_grid_index` when already at hand."""
    if configs.height == 0:
        return configs.with_columns(pl.lit(1, pl.Int64).alias("batch_size"))
    idx, batch = _grid_index(configs) if grid is None else grid
    if rows is not None:
        idx, batch = idx[rows], batch[rows]
    return configs[idx].with_columns(pl.Series("batch_size", batch, dtype=pl.Int64)).drop("max_batch_size")


BAND_COLUMNS: tuple[str, str] = ("usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high")
"""The engine's calibration band of the blended cost, used when :func:`econ.engine.evaluate` returns it."""

_RES_COLUMNS = ("model", "hardware", "layout", "num_gpus", "tp", "dp", "ep", "pp", "precision", "batch_size",
                "max_batch_size", "binding_wall", "tokens_per_s_per_user", "usd_per_gpu_hour", "usd_per_gpu_hour_capex",
                "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power",
                "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens")

_OPTIONAL_RES_COLUMNS = ("weight_format", "expert_weight_format", "spec_method", "accepted_tokens_per_step")
"""Engine result columns carried to the floor when the engine has them (weight formats, speculative decoding)."""

_EMPTY_RESULT = pl.DataFrame(schema={
    **{c: pl.String for c in ("model", "hardware", "precision", "binding_wall", "layout")},
    **{c: pl.Int64 for c in ("num_gpus", "tp", "dp", "ep", "pp", "batch_size", "max_batch_size")},
    "feasible": pl.Boolean,
    **{c: pl.Float64 for c in ("tokens_per_s_per_user", "usd_per_gpu_hour", "usd_per_gpu_hour_capex",
                               "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power",
                               "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens")},
})
"""The evaluated frame when there is nothing to evaluate (no accelerator holds the weights)."""


EXHAUSTIVE_SEARCH = False
"""True: evaluate every grid point of the floor search with the whole engine (the reference); False (default):
the screened search of :func:`_screened_search`, which gives the same answers (tests/analyses/test_quotes_fast.py) from a
decode-only pass over the grid and whole-engine passes over the few rows that can be an answer."""

SCREEN_COLUMNS: tuple[str, ...] = ("feasible", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu")
"""Engine columns of the screening pass: physics only, none of the prefill side (which
:func:`econ.engine.evaluate` then skips), none of the economics (so a screen serves every power price, PUE,
utilization and token mix of the same cost tier)."""

SCREEN_TIE_FRAC = 1e-9
"""Relative margin of the screen: every row within it of its configuration's best at a speed floor goes to the
whole-engine pass, so ties and rounding are resolved by the engine's own numbers. [-]"""

SEARCH_CACHE_ENTRIES = 8
"""Searches (layouts, grid, screen) kept across every catalog object, newest first (~15 MB each on the shipped
catalog): a dashboard rerun that changes only the economics (power price, PUE, utilization, mix) reuses them and
prices the few screened rows again. One bound for the process, so many custom-accelerator catalogs cannot
multiply it."""

_SEARCH_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()
"""(id(catalog), key) -> (weak reference to the catalog, value); a dead or reused id is a miss."""

_SEARCH_LOCK = threading.Lock()
"""Guards :data:`_SEARCH_CACHE` (:func:`_memo`): dashboard sessions run in threads."""


def _memo(catalog: Catalog, key: tuple, build):
    """``build()``, cached for ``catalog`` under ``key`` (the newest :data:`SEARCH_CACHE_ENTRIES` of the process)."""
    import weakref

    full = (id(catalog), key)
    with _SEARCH_LOCK:
        hit = _SEARCH_CACHE.get(full)
        if hit is not None and hit[0]() is catalog:
            _SEARCH_CACHE.move_to_end(full)
            return hit[1]
    value = build()
    with _SEARCH_LOCK:
        _SEARCH_CACHE[full] = (weakref.ref(catalog), value)
        _SEARCH_CACHE.move_to_end(full)
        for k in [k for k, (ref, _) in _SEARCH_CACHE.items() if ref() is None]:
            del _SEARCH_CACHE[k]  # catalogs that are gone
        while len(_SEARCH_CACHE) > SEARCH_CACHE_ENTRIES:
            _SEARCH_CACHE.popitem(last=False)
    return value


def _evaluate_rows(points: pl.DataFrame, catalog: Catalog, assumptions: Assumptions, economics: Economics
                   ) -> pl.DataFrame:
    """The whole engine on grid points (``_cfg`` dropped), with the requested weight format as ``_wf_in``."""
    return evaluate(points.drop("_cfg", strict=False), catalog, assumptions, economics, strict=False).with_columns(
        points["weight_format"].alias("_wf_in"))


def _feasible_rows(res: pl.DataFrame, catalog: Catalog, band: bool) -> pl.DataFrame:
    """Feasible engine rows with the columns the floors read, in the search's order."""
    pinned = list(_pinned_models(catalog))
    default_fmt = pl.col("precision").replace_strict(prec.DEFAULT_WEIGHT_FORMAT, return_dtype=pl.String)
    spec_cols = [c for c in _OPTIONAL_RES_COLUMNS if c in res.columns]
    return res.filter(pl.col("feasible")).select(
        *_RES_COLUMNS, *spec_cols, *(BAND_COLUMNS if band else ()), "_wf_in",
        pl.when(pl.col("model").is_in(pinned)).then(pl.col("_wf_in").is_null())
        .otherwise(pl.col("_wf_in") == default_fmt).alias("_is_default"),
    ).sort("model", "hardware", "precision", "num_gpus", "batch_size")


def _screen(configs: pl.DataFrame, grid: tuple[np.ndarray, np.ndarray], floors: pl.DataFrame, rated: list,
            catalog: Catalog, assumptions: Assumptions, economics: Economics) -> tuple[np.ndarray, pl.DataFrame]:
    """The screening pass of :func:`_screened_search`: (the grid positions that can be an answer, in order; the
    screen: ``_cfg``, ``batch_size``, ``tokens_per_s_per_user`` of every feasible row of a rated accelerator)."""
    idx, batch = grid
    on = configs["hardware"].is_in(pl.Series(rated, dtype=pl.String).implode()).to_numpy()
    pos = np.flatnonzero(on[idx])
    scr = pl.DataFrame({"_row": pos, "_cfg": idx[pos], "batch_size": batch[pos]},
                       schema={"_row": pl.Int64, "_cfg": pl.UInt32, "batch_size": pl.Int64})
    if pos.size:
        phys = evaluate(_grid_points(configs, grid, pos).drop("_cfg"), catalog, assumptions, economics, strict=False,
                        columns=SCREEN_COLUMNS)
        scr = scr.with_columns(phys).filter(pl.col("feasible")).drop("feasible")
    else:
        scr = scr.with_columns(pl.lit(None, pl.Float64).alias(c) for c in SCREEN_COLUMNS[1:])
    speed, rate = pl.col("tokens_per_s_per_user"), pl.col("output_tokens_per_s_per_gpu")
    scr_m = scr.join(configs.select("_cfg", "model", "hardware", "weight_format"), on="_cfg", how="left")
    # per configuration and speed floor: the rows of the highest output rate per GPU (the lowest $/M output tokens)
    meets = (scr_m.select("_row", "_cfg", "model", speed, rate).join(floors, on="model", how="inner")
             .filter(speed >= pl.col("_s")))
    cheapest = meets.filter(rate >= rate.max().over("_cfg", "_s") * (1.0 - SCREEN_TIE_FRAC))["_row"]
    # per model, accelerator and weight format: the fastest rows
    fastest = scr_m.filter(speed == speed.max().over("model", "hardware", "weight_format"))["_row"]
    rows = pl.concat([cheapest, fastest]).unique().sort().to_numpy()
    return rows, scr.select("_cfg", "batch_size", "tokens_per_s_per_user")


def _screened_search(configs: pl.DataFrame, grid: tuple[np.ndarray, np.ndarray], keys: pl.DataFrame, rated: list,
                     catalog: Catalog, assumptions: Assumptions, economics: Economics, cache_key: tuple
                     ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows of the grid that can be an answer of the floor search, through the whole engine.

    Parameters
    ----------
    configs : pl.DataFrame, :func:`_floor_configs`; grid : :func:`_grid_index` of it
    keys : pl.DataFrame, the search keys (``model``, ``speed_floor_tokens_per_s_per_user``)
    rated : list of str, the accelerators with a $/GPU-hour in the cost tier
    cache_key : tuple, what ``configs`` was built from (:func:`_memo`)

    Returns
    -------
    (res, screen): the whole-engine rows (as :func:`_evaluate_rows`) of every grid point the floors can pick, and
    the screen (``_cfg``, ``batch_size``, ``tokens_per_s_per_user`` of every feasible row of a rated accelerator),
    from which the speed-capped batch of a floor deployment is read.

    Notes
    -----
    Exact by the engine's structure, not by any monotonicity in batch (tests/analyses/test_quotes_fast.py compares it with
    :data:`EXHAUSTIVE_SEARCH`):

    - rows of an accelerator without a rate in the tier are infeasible (the engine's missing price) and never a
      floor: they are not evaluated;
    - decode speed, feasibility and output tokens/s per GPU do not depend on the prefill side or the economics, so
      one :func:`econ.engine.evaluate` pass with :data:`SCREEN_COLUMNS` gives them for the whole grid;
    - the $/GPU-hour of a row depends on its accelerator and the economics only, and its $/M output tokens is that
      over the output tokens/s per GPU; its $/M input tokens is that over the prefill throughput
      (:func:`econ.engine.run_costs`), the same at every batch of one configuration (model, accelerator,
      precision, weight format, layout). The blended cost is increasing in the output cost, so among a
      configuration's rows that meet a speed floor the cheapest is the one of the highest output rate per GPU;
    - the floors read, per search key and accelerator, the cheapest row meeting the key's speed floor (in the
      key's format, in bf16, in the default format) and the fastest row (in the key's format): each is, within
      its configuration, the highest-rate row at one of the keys' speed floors, or a fastest row of its model,
      accelerator and format.

    Those rows (and every row within :data:`SCREEN_TIE_FRAC` of them) go through the whole engine; the floor
    deployment's batch curve (the break-even batch) is evaluated once the floor is known. The screen is cached
    with the search (:func:`_memo`): it does not depend on the economics beyond the set of rated accelerators.
    """
    floors = keys.select("model", pl.col("speed_floor_tokens_per_s_per_user").alias("_s")).unique().sort("model", "_s")
    key = ("screen", cache_key, tuple(sorted(rated)), tuple(floors.iter_rows()))
    rows, scr = _memo(catalog, key, lambda: _screen(configs, grid, floors, rated, catalog, assumptions, economics))
    if rows.size == 0:  # nothing feasible: one row keeps the engine's result columns (band or none)
        rows = np.zeros(1, dtype=np.int64)
    return _evaluate_rows(_grid_points(configs, grid, rows), catalog, assumptions, economics), scr


def check_quotes(quotes: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
                 economics: Economics = Economics(), *,
                 min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                 output_len: int = DEFAULT_OUTPUT_LEN, input_len: int | None = None, hardware=None,
                 generation=None) -> QuoteCheck:
    """Compare every quote with its modeled cost floor at its own speed, precision and hardware.

    Parameters
    ----------
    quotes : pl.DataFrame
        Validated quotes (:mod:`econ.tables.quote_files`: ``read_quotes`` / ``load_quotes`` /
        ``validate_quotes``; or :func:`single_quote`).
    catalog : Catalog
    assumptions : Assumptions
        Efficiency factors of the roofline (assumptions.DEFAULT).
    economics : Economics
        Cost tier (``basis``: owned-custom, hyperscaler, neocloud, rental-3yr, on-demand, rental, custom with
        ``usd_per_gpu_hour``), power, finance, utilization, ``input_output_mix`` and ``cache_hit_frac`` (used
        on both sides: the quote's blended price counts cache hits at its cached price, or at the full input
        price where it lists none; the floor counts them free, as the engine does).
    min_tokens_per_s_per_user : float in (0, 1e5]
        Speed floor for quotes that publish no speed (:data:`econ.presets.DEFAULT_MIN_TOKENS_PER_S_PER_USER`).
        [tokens/s]
    output_len : int [tokens]
        Generated tokens per request.
    input_len : int, optional [tokens]
        Prompt tokens per request; default ``round(input_output_mix * output_len)`` (at least 1), so the
        request shape matches the blended mix (3:1 -> 3072 in, 1024 out).
    hardware : iterable of str, optional
        Restrict the floor search to these accelerators.
    generation : iterable of str, optional
        Generations (:data:`GENERATION_RULES`) the floor of a quote without its own hardware is taken from
        (default: every accelerator searched).

    Returns
    -------
    QuoteCheck
        ``summary`` (one row per quote, :data:`SUMMARY_COLUMNS`, every row with a verdict and a reason)
        and ``per_hardware`` (:data:`PER_HARDWARE_COLUMNS`).

    Raises
    ------
    InvalidInputError
        A setting out of range (named, with the valid range), an unknown generation, a quotes frame
        without the validated columns, or duplicate ``quote_id`` values.

    Notes
    -----
    A few :func:`evaluate` calls for the whole file, however many quotes: the floor of a quote on one
    accelerator depends only on (model, speed floor, reference precision), so the search runs per distinct
    key and joins back. The grid (every point counted in ``deployments_evaluated``) is screened by one
    decode-only pass and only the rows that can be an answer go through the whole engine
    (:func:`_screened_search`; the same answers as evaluating every point, :data:`EXHAUSTIVE_SEARCH`); the
    layouts, grid and screen are cached on the catalog object for reruns with other economics. Per (key, accelerator) the deployment with the lowest blended cost among
    those meeting the speed floor at the reference precision or wider is the floor on that accelerator; the
    lowest over the quote's scope (its own accelerator, else the generations picked) is the quote's floor.
    Blended (not output) cost is minimized because the verdict is on the blended price: it is the cost of
    the traffic mix the price is compared with. The speed compared is the decode speed per user
    (``tokens_per_s_per_user``), as a provider's published speed is.
    """
    speed_default = float(require_in_range("min_tokens_per_s_per_user", min_tokens_per_s_per_user, 0.0, 1e5,
                                           "tokens/s per user", lo_inclusive=False))
    output_len = int(require_in_range("output_len", output_len, 1, MAX_CONTEXT, "tokens"))
    mix = economics.input_output_mix
    if input_len is None:
        input_len = max(1, int(round(mix * output_len)))
    input_len = int(require_in_range("input_len", input_len, 1, MAX_CONTEXT, "tokens"))
    need_cols = [c for c in (*QUOTE_SCHEMA, "reference_precision", "reference_precision_source")
                 if c not in quotes.columns]
    if need_cols:
        raise InvalidInputError(f"quotes frame is missing column(s) {need_cols}: validate it with read_quotes() "
                                f"or validate_quotes() first")
    if quotes.height == 0:
        raise InvalidInputError("quotes has no rows")
    dup = quotes.filter(pl.col("quote_id").is_duplicated())["quote_id"].unique(maintain_order=True).to_list()
    if dup:
        raise InvalidInputError(f"quote_id must be unique; duplicated: {dup[:8]} (rename them, e.g. prefix an "
                                f"uploaded file's ids)")
    gens = accelerator_generations(catalog)
    picked = None
    if generation is not None:
        picked = [generation] if isinstance(generation, str) else list(generation)
        valid = gens["generation"].unique(maintain_order=True).to_list()
        for g in picked:
            if g not in valid:
                raise InvalidInputError(f"generation={g!r} is not one of {valid}")
    if hardware is not None:
        from econ.tables.catalog import check_ids
        hardware = [hardware] if isinstance(hardware, str) else list(hardware)
        check_ids("hardware", hardware, catalog.accelerators["id"].to_list())

    h = economics.cache_hit_frac
    q = (quotes.with_columns(
        pl.coalesce("output_tokens_per_s_per_user", pl.lit(speed_default)).alias("speed_floor_tokens_per_s_per_user"),
        pl.when(pl.col("output_tokens_per_s_per_user").is_null()).then(pl.lit("assumed"))
        .otherwise(pl.lit("quote")).alias("speed_floor_source"),
        pl.col("usd_per_m_input_tokens").alias("price_usd_per_m_input_tokens"),
        pl.col("usd_per_m_output_tokens").alias("price_usd_per_m_output_tokens"),
        usd_per_m_blended_tokens(pl.col("usd_per_m_input_tokens"), pl.col("usd_per_m_output_tokens"), mix, h,
                                 pl.coalesce("usd_per_m_cached_input_tokens", "usd_per_m_input_tokens")
                                 / pl.col("usd_per_m_input_tokens")).alias("price_usd_per_m_blended_tokens")))
    q = q.with_columns(weight_format_spec(catalog, pl.col("model"), pl.col("weight_format")).alias("_spec"))
    key_cols = ["model", "speed_floor_tokens_per_s_per_user", "reference_precision", "_spec"]
    keys = q.select(key_cols).unique(maintain_order=True).with_row_index("key")
    q = q.join(keys.select("key", *key_cols), on=key_cols, how="left", maintain_order="left", nulls_equal=True)

    # per model: the quotes' own formats, bf16 (the reason's alternative) and the engine default (any precision)
    formats = {m: list(dict.fromkeys([*specs, "bf16", None]))
               for m, specs in keys.group_by("model", maintain_order=True).agg(pl.col("_spec")).iter_rows()}
    search_key = ("search", assumptions, tuple((m, tuple(f)) for m, f in formats.items()),
                  None if hardware is None else tuple(hardware), input_len, output_len)

    def search():
        c = _floor_configs(list(formats), catalog, assumptions, economics, input_len=input_len,
                           output_len=output_len, hardware=hardware, formats=formats)
        return c, (_grid_index(c) if c.height else (np.zeros(0, np.int64), np.zeros(0, np.int64)))

    configs, grid = _memo(catalog, search_key, search)
    num_points = grid[0].size
    rates = tier_rates(catalog, economics)
    screen = None
    if num_points == 0:
        res = _EMPTY_RESULT.with_columns(pl.lit(None, pl.String).alias("_wf_in"))
    elif EXHAUSTIVE_SEARCH:
        res = _evaluate_rows(_grid_points(configs, grid), catalog, assumptions, economics)
    else:
        res, screen = _screened_search(configs, grid, keys, rates.filter("has_rate")["hardware"].to_list(), catalog,
                                       assumptions, economics, search_key)
    band = all(c in res.columns for c in BAND_COLUMNS)
    res = _feasible_rows(res, catalog, band)
    searched = (gens.join(rates, on="hardware", how="left")
                .join(catalog.accelerators.select(pl.col("id").alias("hardware"), "capex_basis"), on="hardware",
                      how="left"))
    if hardware is not None:
        searched = searched.filter(pl.col("hardware").is_in(hardware))
    systems = load_provider_systems(catalog).select(pl.col("id").alias("hardware"),
                                                    pl.col("display_name").alias("_system_name"))
    scope = _scope(q, searched, systems, picked, economics, restricted=hardware is not None)
    frames = _floors(keys, res, screen, configs)
    if screen is not None:  # the break-even batch reads the floor deployment's whole batch curve
        def curves(floors: pl.DataFrame) -> pl.DataFrame:
            ids = configs.join(floors, on=["model", "hardware", "precision", *_DEPLOYMENT, "weight_format"],
                               how="semi", nulls_equal=True)["_cfg"].to_numpy()
            rows = np.flatnonzero(np.isin(grid[0], ids))
            return _feasible_rows(_evaluate_rows(_grid_points(configs, grid, rows), catalog, assumptions, economics),
                                  catalog, band) if rows.size else res.clear()

        frames["curves"] = curves
    summary = _summary(q, scope, searched, frames, economics, band)
    per_hw = _per_hardware(q, scope, searched, frames, economics)
    _require_finite(summary, "quote check")
    settings = {
        "min_tokens_per_s_per_user": speed_default,
        "input_len_tokens": input_len, "output_len_tokens": output_len,
        "input_output_mix": mix, "cache_hit_frac": h, "cost_basis": cost_basis_label(economics.basis),
        "cost_basis_source": TIER_SPECS[tier(economics.basis)].source,
        "usd_per_gpu_hour": economics.usd_per_gpu_hour, "utilization_frac": economics.utilization_frac,
        "generations": ", ".join(picked) if picked else "any",
        "thin_margin_below_frac": THIN_MARGIN_FRAC, "rich_margin_above_frac": RICH_MARGIN_FRAC,
        "calibration_band": "engine usd_per_m_blended_tokens_low/high" if band else "none (the engine returns no band)",
        "deployments_evaluated": num_points,
    }
    return QuoteCheck(summary=summary.select(SUMMARY_COLUMNS), per_hardware=per_hw.select(PER_HARDWARE_COLUMNS),
                      settings=settings)


_DEPLOYMENT = ("num_gpus", "tp", "dp", "ep", "pp")
"""The columns that identify a deployment (layout) of a floor."""


def _scope(q: pl.DataFrame, searched: pl.DataFrame, systems: pl.DataFrame, picked, economics: Economics,
           restricted: bool = False) -> dict:
    """(quote_id, key, hardware) rows: the accelerators each quote's floor is taken from, with the scope's words.

    Own accelerator when the quote names a searched catalog accelerator with a rate in the tier; else that
    accelerator's generation (no rate in the tier, or outside the searched set); else (non-GPU system or no
    hardware) the generations picked, or every accelerator searched.
    """
    tier = cost_basis_label(economics.basis)
    own = searched.select(pl.col("hardware").alias("_q_hw"), pl.col("generation").alias("_q_gen"),
                          pl.col("has_rate").alias("_q_rate"))
    qq = (q.select("quote_id", "key", pl.col("hardware").alias("_q_hw"))
          .join(own, on="_q_hw", how="left")
          .join(systems.rename({"hardware": "_q_hw"}), on="_q_hw", how="left"))
    is_system = pl.col("_system_name").is_not_null()
    mode = (pl.when(pl.col("_q_rate").fill_null(False)).then(pl.lit("own"))
            .when(pl.col("_q_hw").is_not_null() & ~is_system).then(pl.lit("own-generation"))
            .otherwise(pl.lit("pick")))
    picked_txt = (f"the cheapest {' or '.join(picked)} accelerator" if picked
                  else "the cheapest of the accelerators searched" if restricted else "the cheapest catalog accelerator")
    qq = qq.with_columns(mode.alias("_mode"), is_system.alias("_is_system"))
    words = (pl.when(pl.col("_mode") == "own").then(pl.format("its own hardware, {}", pl.col("_q_hw")))
             .when((pl.col("_mode") == "own-generation") & pl.col("_q_gen").is_not_null()).then(pl.format(
                 "its generation, {} ({} has no {} rate)", pl.col("_q_gen"), pl.col("_q_hw"), pl.lit(tier)))
             .when(pl.col("_mode") == "own-generation").then(pl.format(
                 "{} ({} is not among the accelerators searched)", pl.lit(picked_txt), pl.col("_q_hw")))
             .when(pl.col("_is_system")).then(pl.format("{}, for reference (the quote runs on {})",
                                                       pl.lit(picked_txt), pl.col("_q_hw")))
             .otherwise(pl.lit(picked_txt)))
    qq = qq.with_columns(words.alias("floor_scope"),
                         pl.when(pl.col("_mode") == "own-generation").then(pl.col("_q_gen")).alias("_scope_gen"))
    acc = searched.select("hardware", "generation")
    in_pick = pl.col("generation").is_in(picked) if picked else pl.lit(True)
    keep = (pl.when(pl.col("_mode") == "own").then(pl.col("hardware") == pl.col("_q_hw"))
            .when(pl.col("_scope_gen").is_not_null()).then(pl.col("generation") == pl.col("_scope_gen"))
            .otherwise(in_pick))
    rows = qq.join(acc, how="cross").filter(keep).select("quote_id", "key", "hardware")
    return {"rows": rows, "quotes": qq.select("quote_id", "floor_scope", "_is_system", "_system_name", "_mode")}


def _floors(keys: pl.DataFrame, res: pl.DataFrame, screen: pl.DataFrame | None = None,
            configs: pl.DataFrame | None = None) -> dict[str, pl.DataFrame]:
    """The group-bys of the floor search per (key, accelerator), computed in one collect.

    ``screen`` (from :func:`_screened_search`, with ``configs``): ``res`` holds only the rows that can be an answer,
    and the speed-capped batch of each floor deployment is read from the screen's speeds of the whole grid."""
    cost = "usd_per_m_blended_tokens"
    j = (keys.lazy().join(res.lazy(), on="model", how="inner")
         .with_columns((pl.col("tokens_per_s_per_user") >= pl.col("speed_floor_tokens_per_s_per_user")).alias("_meets"),
                       pl.col("_wf_in").eq_missing(pl.col("_spec")).alias("_allowed")))
    ok = j.filter(pl.col("_meets") & pl.col("_allowed"))
    per_hw = ok.group_by("key", "hardware").agg(pl.all().get(pl.col(cost).arg_min()))
    if screen is not None:
        floor_cfg = ["model", "hardware", "precision", "weight_format", *_DEPLOYMENT]
        speed_cap = (per_hw.select("key", *floor_cfg[:3], pl.col("_spec").alias("weight_format"), *_DEPLOYMENT,
                                   "speed_floor_tokens_per_s_per_user")
                     .join(configs.lazy().select("_cfg", *floor_cfg), on=floor_cfg, how="inner", nulls_equal=True)
                     .join(screen.lazy(), on="_cfg", how="inner")
                     .filter(pl.col("tokens_per_s_per_user") >= pl.col("speed_floor_tokens_per_s_per_user"))
                     .group_by("key", "hardware", "precision", *_DEPLOYMENT)
                     .agg(pl.col("batch_size").max().alias("_b_speed")))
    else:
        speed_cap = ok.group_by("key", "hardware", "precision", *_DEPLOYMENT).agg(
            pl.col("batch_size").max().alias("_b_speed"))
    fastest_hw = (j.filter(pl.col("_allowed")).group_by("key", "hardware").agg(
        pl.col("tokens_per_s_per_user", "precision", "num_gpus", "batch_size", "layout")
        .get(pl.col("tokens_per_s_per_user").arg_max()).name.prefix("fast_")))
    bf16 = (j.filter(pl.col("_meets") & (pl.col("_wf_in") == "bf16")).group_by("key", "hardware")
            .agg(pl.col(cost).min().alias("bf16_cost")))
    any_p = (j.filter(pl.col("_meets") & pl.col("_is_default")).group_by("key", "hardware").agg(
        pl.col(cost, "precision").get(pl.col(cost).arg_min()).name.prefix("any_")))
    names = ("per_hw", "speed_cap", "fastest_hw", "bf16", "any")
    out = dict(zip(names, pl.collect_all([per_hw, speed_cap, fastest_hw, bf16, any_p])))
    out["per_hw"] = out["per_hw"].join(out["speed_cap"], on=["key", "hardware", "precision", *_DEPLOYMENT], how="left")
    out["curves"] = res  # for the break-even batch (joined on the floor configuration only)
    return out


def _summary(q: pl.DataFrame, scope: dict, searched: pl.DataFrame, f: dict, economics: Economics,
             band: bool) -> pl.DataFrame:
    cost = "usd_per_m_blended_tokens"
    rows = scope["rows"]
    per_hw = f["per_hw"]
    cand = rows.join(per_hw.drop("model", "speed_floor_tokens_per_s_per_user", "reference_precision", "_spec",
                                 strict=False), on=["key", "hardware"], how="inner")
    best = cand.group_by("quote_id").agg(
        pl.all().exclude("quote_id", "key").get(pl.col(cost).arg_min()),
        pl.col(cost).max().alias("band_max_usd_per_m_blended_tokens"),
        pl.col("hardware").get(pl.col(cost).arg_max()).alias("band_max_hardware"),
        pl.len().cast(pl.Int64).alias("num_hardware_meeting_floor"))
    floor_cols = {c: f"floor_{c}" for c in ("hardware", "layout", *_DEPLOYMENT, "precision", "batch_size",
                                              "tokens_per_s_per_user", "binding_wall", "usd_per_gpu_hour",
                                              "usd_per_m_input_tokens", "usd_per_m_output_tokens", cost)}
    for c in _OPTIONAL_RES_COLUMNS:
        if c in best.columns:
            floor_cols[c] = f"floor_{c}"
        else:
            best = best.with_columns(pl.lit(None, pl.Float64 if c == "accepted_tokens_per_step" else pl.String).alias(c))
            floor_cols[c] = f"floor_{c}"
    if band:
        floor_cols.update({BAND_COLUMNS[0]: "floor_usd_per_m_blended_tokens_low",
                           BAND_COLUMNS[1]: "floor_usd_per_m_blended_tokens_high"})
    best = best.rename(floor_cols)
    # fastest accelerator of each quote; exact ties (GB200 and GB300 run bf16 decode at the same modeled speed) go
    # to the first hardware id, so the screened and the exhaustive search name the same one
    first_fast = dict(by=[pl.col("fast_tokens_per_s_per_user"), pl.col("hardware")], descending=[True, False])
    fast = (rows.join(f["fastest_hw"], on=["key", "hardware"], how="inner").group_by("quote_id").agg(
        pl.col("hardware").sort_by(**first_fast).first().alias("fast_hardware"),
        pl.col("^fast_.*$").sort_by(**first_fast).first()))
    qk = q.select("quote_id", "key", "price_usd_per_m_blended_tokens")
    fast_all = (qk.join(f["fastest_hw"], on="key", how="inner").group_by("quote_id").agg(
        pl.col("fast_tokens_per_s_per_user").max().alias("all_fast_tokens_per_s_per_user")))
    bf16 = (rows.join(f["bf16"], on=["key", "hardware"], how="inner").group_by("quote_id")
            .agg(pl.col("bf16_cost").min().alias("floor_bf16_usd_per_m_blended_tokens")))
    any_p = (rows.join(f["any"], on=["key", "hardware"], how="inner").group_by("quote_id").agg(
        pl.col("any_usd_per_m_blended_tokens", "any_precision", "hardware")
        .get(pl.col("any_usd_per_m_blended_tokens").arg_min())).rename({"hardware": "any_hardware"}))
    everywhere = (qk.join(per_hw.select("key", "hardware", cost), on="key", how="inner").group_by("quote_id").agg(
        pl.col(cost).min().alias("else_usd_per_m_blended_tokens"),
        pl.col("hardware").get(pl.col(cost).arg_min()).alias("else_hardware")))
    clearing = _clearing(qk, per_hw, searched)
    gen = searched.select(pl.col("hardware").alias("floor_hardware"), pl.col("generation").alias("floor_generation"),
                          pl.col("capex_basis").alias("_floor_capex_basis"))
    s = (q.join(scope["quotes"], on="quote_id", how="left")
         .join(best, on="quote_id", how="left").join(fast, on="quote_id", how="left")
         .join(fast_all, on="quote_id", how="left").join(bf16, on="quote_id", how="left")
         .join(any_p, on="quote_id", how="left").join(everywhere, on="quote_id", how="left")
         .join(clearing, on="quote_id", how="left").join(gen, on="floor_hardware", how="left"))
    if not band:
        s = s.with_columns(pl.lit(None, pl.Float64).alias("floor_usd_per_m_blended_tokens_low"),
                           pl.lit(None, pl.Float64).alias("floor_usd_per_m_blended_tokens_high"))
    price = pl.col("price_usd_per_m_blended_tokens")
    s = s.with_columns(
        pl.col("num_hardware_meeting_floor").fill_null(0),
        gross_margin_frac(pl.col("price_usd_per_m_input_tokens"), pl.col("floor_usd_per_m_input_tokens")).alias("margin_input_frac"),
        gross_margin_frac(pl.col("price_usd_per_m_output_tokens"), pl.col("floor_usd_per_m_output_tokens")).alias("margin_output_frac"),
        gross_margin_frac(price, pl.col(f"floor_{cost}")).alias("margin_blended_frac"),
        gross_margin_frac(price, pl.col("floor_usd_per_m_blended_tokens_high")).alias("margin_blended_frac_low"),
        gross_margin_frac(price, pl.col("floor_usd_per_m_blended_tokens_low")).alias("margin_blended_frac_high"),
        ((pl.col("floor_usd_per_m_blended_tokens_low") <= price)
         & (price <= pl.col("floor_usd_per_m_blended_tokens_high"))).alias("band_straddles_price"),
        pl.when(pl.col("floor_batch_size").is_null()).then(None)
        .when(pl.col("floor_batch_size") >= pl.col("max_batch_size")).then(pl.lit("capacity"))
        .when((pl.col("floor_batch_size") >= pl.col("_b_speed")) & (pl.col("_b_speed") < pl.col("max_batch_size")))
        .then(pl.lit("speed")).otherwise(pl.lit("cost")).alias("floor_batch_limit"),
        pl.col("any_usd_per_m_blended_tokens").alias("floor_any_precision_usd_per_m_blended_tokens"),
        pl.col("any_precision").alias("floor_any_precision"),
        pl.lit(cost_basis_label(economics.basis)).alias("cost_basis"),
        pl.lit(float(economics.utilization_frac)).alias("utilization_frac"),
    )
    s = s.with_columns(pl.when(pl.col("_is_system")).then(pl.lit(NOT_COMPARABLE))
                       .otherwise(verdict_expr(pl.col("margin_blended_frac"))).alias("verdict"))

    # Break-even $/GPU-hour and utilization at the floor deployment (closed form), batch from the grid.
    ratio = price / pl.col(f"floor_{cost}")
    g_star = breakeven_usd_per_gpu_hour(pl.col("floor_usd_per_gpu_hour"), price, pl.col(f"floor_{cost}"))
    u = float(economics.utilization_frac)
    owned = economics.basis == "owned"
    fixed = (pl.col("usd_per_gpu_hour_capex") + pl.col("usd_per_gpu_hour_facility") + pl.col("usd_per_gpu_hour_opex")) * u \
        if owned else pl.col("floor_usd_per_gpu_hour") * u
    variable = pl.col("usd_per_gpu_hour_power") if owned else pl.lit(0.0)
    s = s.with_columns(ratio.alias("_ratio"), g_star.alias("breakeven_usd_per_gpu_hour"),
                       (g_star * u).alias("breakeven_rate_usd_per_gpu_hour"),
                       fixed.alias("_fixed"), variable.alias("_variable"))
    has = s["breakeven_usd_per_gpu_hour"].is_not_null().to_numpy()
    u_star = np.full(s.height, np.nan)
    u_star[has] = breakeven_utilization_frac(s["_fixed"].to_numpy()[has], s["_variable"].to_numpy()[has],
                                             s["breakeven_usd_per_gpu_hour"].to_numpy()[has])
    s = s.with_columns(pl.Series("_u_star", u_star))
    s = s.with_columns(pl.when(pl.col("_u_star") <= 1.0).then(pl.col("_u_star")).alias("breakeven_utilization_frac"))
    # the floor deployment's batch curve: its accelerator, precision, layout and weight format (_wf_in)
    curve = s.select("quote_id", "model", "floor_hardware", "floor_precision", *(f"floor_{c}" for c in _DEPLOYMENT),
                     "_wf_in", "price_usd_per_m_blended_tokens").drop_nulls("floor_hardware")
    curves = f["curves"]
    if callable(curves):  # screened search: the floor deployments' batch curves, evaluated now
        curves = curves(curve.select("model", pl.col("floor_hardware").alias("hardware"),
                                     pl.col("floor_precision").alias("precision"),
                                     *(pl.col(f"floor_{c}").alias(c) for c in _DEPLOYMENT),
                                     pl.col("_wf_in").alias("weight_format")).unique())
    curve = (curve
             .join(curves, left_on=["model", "floor_hardware", "floor_precision",
                                    *(f"floor_{c}" for c in _DEPLOYMENT), "_wf_in"],
                   right_on=["model", "hardware", "precision", *_DEPLOYMENT, "_wf_in"], how="inner", nulls_equal=True)
             .filter(pl.col(cost) <= pl.col("price_usd_per_m_blended_tokens"))
             .group_by("quote_id").agg(pl.col("batch_size", "tokens_per_s_per_user")
                                       .get(pl.col("batch_size").arg_min()).name.prefix("_be_")))
    s = s.join(curve, on="quote_id", how="left").with_columns(
        pl.col("_be_batch_size").alias("breakeven_batch_size"),
        pl.col("_be_tokens_per_s_per_user").alias("breakeven_tokens_per_s_per_user"))
    return s.with_columns(_reason().alias("reason"))


def _clearing(qk: pl.DataFrame, per_hw: pl.DataFrame, searched: pl.DataFrame) -> pl.DataFrame:
    """Per quote: the generations on which the price clears the floor at its speed (cheapest floor first), and the
    clearing accelerator whose utilized GPU-hour is cheapest (ties: the lower floor)."""
    cost = "usd_per_m_blended_tokens"
    ok = (qk.join(per_hw.select("key", "hardware", cost, "usd_per_gpu_hour"), on="key", how="inner")
          .filter(pl.col(cost) <= pl.col("price_usd_per_m_blended_tokens"))
          .join(searched.select("hardware", "generation"), on="hardware", how="inner"))
    by_gen = (ok.group_by("quote_id", "generation").agg(pl.col(cost).min().alias("_g_cost"))
              .sort("quote_id", "_g_cost", "generation")
              .group_by("quote_id", maintain_order=True).agg(pl.col("generation").str.join(", ")
                                                             .alias("clearing_generations")))
    cheapest = (ok.sort("quote_id", "usd_per_gpu_hour", cost, "hardware").group_by("quote_id", maintain_order=True)
                .agg(pl.col("generation").first().alias("cheapest_clearing_generation"),
                     pl.col("hardware").first().alias("cheapest_clearing_hardware"),
                     pl.col("usd_per_gpu_hour").first().alias("cheapest_clearing_usd_per_gpu_hour"),
                     pl.col(cost).first().alias("cheapest_clearing_usd_per_m_blended_tokens")))
    return by_gen.join(cheapest, on="quote_id", how="left")


def _t(x: pl.Expr, sig: int = 3) -> pl.Expr:
    """Number -> short text (3 significant figures, whole numbers above 1000, no trailing '.0')."""
    big = x.abs() >= 10 ** sig
    txt = pl.when(big).then(x.round(0).cast(pl.Int64).cast(pl.String)).otherwise(x.round_sig_figs(sig).cast(pl.String))
    return txt.str.replace(r"\.0$", "")


def _usd_hour(x: pl.Expr) -> pl.Expr:
    """$/GPU-hour as text: two decimals under $100 ($2.00, $3.27), whole dollars above."""
    cents = (x * 100).round(0).cast(pl.Int64)
    small = pl.format("${}.{}", (cents // 100).cast(pl.String), (cents % 100).cast(pl.String).str.zfill(2))
    return pl.when(x >= 100).then(pl.format("${}", x.round(0).cast(pl.Int64))).otherwise(small)


def _pct(x: pl.Expr) -> pl.Expr:
    return pl.format("{}%", (x * 100).round(0).cast(pl.Int64))


def _reason() -> pl.Expr:
    """The analyst's sentences for each quote, built from the summary columns (no Python row loop).

    Order: verdict and margins (or why there is no GPU floor to compare with); the floor deployment, its
    scope and what stops a cheaper one (the binding wall); the cost tier and rate; the precision assumption
    and the floors at other precisions; for below-floor quotes, what would be needed; the band across
    accelerators; the calibration band; the generations on which the price clears; the break-evens.
    """
    c = pl.col
    usd = lambda x: pl.format("${}/M", _t(x))  # noqa: E731
    gh = _usd_hour
    price, floor = c("price_usd_per_m_blended_tokens"), c("floor_usd_per_m_blended_tokens")
    has_floor = floor.is_not_null()
    v = c("verdict")
    speed_src = pl.when(c("speed_floor_source") == "quote").then(pl.lit("the quote's published speed")) \
        .otherwise(pl.lit("assumed as the quote publishes none"))
    speed_txt = pl.format("{} tokens/s per user, {}", _t(c("speed_floor_tokens_per_s_per_user")), speed_src)
    margins = pl.format("input {}, output {}", _pct(c("margin_input_frac")), _pct(c("margin_output_frac")))
    fastest = pl.format("the fastest modeled there is {} tokens/s per user ({} x {}, {}, {}, batch {}), so the quote "
                        "needs {}x that: hardware outside the catalog (wafer-scale SRAM, LPU), speculative decoding or "
                        "a lighter format",
                        _t(c("fast_tokens_per_s_per_user")), c("fast_num_gpus"), c("fast_hardware"), c("fast_layout"),
                        c("fast_precision"), c("fast_batch_size"),
                        _t(c("speed_floor_tokens_per_s_per_user") / c("fast_tokens_per_s_per_user")))
    elsewhere = pl.when(c("else_usd_per_m_blended_tokens").is_not_null()).then(pl.format(
        " Elsewhere in the catalog the speed is reached: floor {} on {} (margin {}).",
        usd(c("else_usd_per_m_blended_tokens")), c("else_hardware"),
        _pct(gross_margin_frac(price, c("else_usd_per_m_blended_tokens")))))
    system = pl.format("not-gpu-comparable: {} serves {} on {} ({}), hardware without a catalog cost basis (no system "
                       "or per-hour price is published; provider_systems.csv), so no GPU floor prices it.",
                       c("provider"), c("model"), c("_system_name"), c("hardware"))
    system_ref = (pl.when(has_floor).then(pl.format(
        " For reference, the cheapest GPU deployment at {} costs {}, a margin of {} at this price.", speed_txt,
        usd(floor), _pct(c("margin_blended_frac"))))
        .when(c("all_fast_tokens_per_s_per_user").is_not_null()).then(pl.format(
            " No catalog accelerator reaches its speed either ({}; the fastest modeled is {} tokens/s per user).",
            speed_txt,
            _t(c("all_fast_tokens_per_s_per_user")))))
    head = (
        pl.when(c("_is_system")).then(pl.concat_str([system, system_ref], ignore_nulls=True))
        .when(~has_floor & c("all_fast_tokens_per_s_per_user").is_null()).then(pl.format(
            "not-gpu-comparable: no catalog accelerator holds {} with {} weights or wider on up to {} accelerators, so "
            "there is no floor to compare with.", c("model"), c("reference_precision"), pl.lit(MAX_GPUS)))
        .when(~has_floor & c("fast_tokens_per_s_per_user").is_null()).then(pl.concat_str([pl.format(
            "not-gpu-comparable: no accelerator in scope ({}) can serve {} with {} weights or wider (none holds the "
            "weights on up to {} accelerators or has a rate in this cost tier), so there is no floor to compare with.",
            c("floor_scope"), c("model"), c("reference_precision"), pl.lit(MAX_GPUS)), elsewhere], ignore_nulls=True))
        .when(~has_floor).then(pl.concat_str([pl.format(
            "not-gpu-comparable: no accelerator in scope ({}) serves {} at {}, with {} weights or wider; {}.",
            c("floor_scope"), c("model"), speed_txt, c("reference_precision"), fastest), elsewhere], ignore_nulls=True))
        .when(v == "below-floor").then(pl.format(
            "below-floor: the blended price {} is under the modeled floor {} (margin {}; {}): no accelerator in scope "
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
    spec = pl.when(c("floor_spec_method").is_not_null() & (c("floor_spec_method") != "none")).then(pl.format(
        ", {} speculative decoding (the model's default, {} tokens per step)",
        c("floor_spec_method").str.to_uppercase(), _t(c("floor_accepted_tokens_per_step"))))
    w_fmt = pl.coalesce(c("floor_weight_format"), c("floor_precision"))
    weights = (pl.when(c("floor_expert_weight_format").is_not_null() & (c("floor_expert_weight_format") != w_fmt))
               .then(pl.format("{} weights, {} experts", w_fmt, c("floor_expert_weight_format")))
               .otherwise(pl.format("{} weights", w_fmt)))
    deploy = pl.when(has_floor).then(pl.concat_str([pl.format(
        " Floor on {}: {} x {} ({}, {} matmuls on {}), batch {}, {} tokens/s per user, {}-bound",
        c("floor_scope"), c("floor_num_gpus"), c("floor_hardware"), c("floor_layout"), c("floor_precision"),
        weights, c("floor_batch_size"),
        _t(c("floor_tokens_per_s_per_user")), c("floor_binding_wall")), spec, pl.format("; {}.", limit)],
        ignore_nulls=True))
    capex_flag = pl.when((c("cost_basis") == "owned-custom") & c("_floor_capex_basis").is_not_null()
                         & ~c("_floor_capex_basis").is_in(list(COMMON_CAPEX_BASES))).then(pl.format(
                             " (the capex of {} is a {}, not the common market-listing basis)", c("floor_hardware"),
                             c("_floor_capex_basis")))
    basis = pl.when(has_floor).then(pl.concat_str([pl.format(
        " Cost tier {}: {} per utilized GPU-hour at {} utilization", c("cost_basis"), gh(c("floor_usd_per_gpu_hour")),
        _pct(c("utilization_frac"))), capex_flag, pl.lit(".")], ignore_nulls=True))
    p_src = pl.coalesce(c("reference_precision_source").replace_strict(WEIGHT_FORMAT_BASES, default=None),
                        c("reference_precision_source"))
    precision_txt = pl.format(" The floor assumes {} weights ({})", pl.coalesce(c("weight_format"),
                                                                              c("reference_precision")), p_src)
    alt_bf16 = (pl.when((c("reference_precision") != "bf16") & c("floor_bf16_usd_per_m_blended_tokens").is_not_null())
                .then(pl.format("; with bf16 it is {}", usd(c("floor_bf16_usd_per_m_blended_tokens"))))
                .when(c("reference_precision") != "bf16").then(pl.lit("; no bf16 deployment meets the speed floor")))
    lower = c("floor_any_precision_usd_per_m_blended_tokens")
    cheaper = lower.is_not_null() & (floor.is_null() | (lower < floor * (1 - 1e-9)))
    alt_low = pl.when(cheaper).then(pl.format("; with {} (not stated by the provider) it would be {} on {}",
                                              c("floor_any_precision"), usd(lower), c("any_hardware")))
    needs = (pl.when(~has_floor & cheaper & ~c("_is_system")).then(pl.format(
                 " It is reachable only with {} weights.", c("floor_any_precision")))
             .when(has_floor & (v == "below-floor") & cheaper & (lower <= price)).then(pl.format(
                 " It clears the floor only with {} weights.", c("floor_any_precision")))
             .when(has_floor & (v == "below-floor")).then(pl.format(
                 " This price needs a {}x lower cost than modeled: subsidized or mispriced, or tricks the model does "
                 "not include (speculative decoding, more prefix-cache hits).", _t(1 / c("_ratio")))))
    hw_band = (pl.when(c("num_hardware_meeting_floor") > 1).then(pl.format(
        " Floors on the {} accelerators in scope that meet the speed: {} ({}) to {} ({}).",
        c("num_hardware_meeting_floor"), usd(floor), c("floor_hardware"), usd(c("band_max_usd_per_m_blended_tokens")),
        c("band_max_hardware")))
        .when(c("num_hardware_meeting_floor") == 1).then(pl.format(" Only {} in scope meets the speed.",
                                                                    c("floor_hardware"))))
    lo, hi = c("floor_usd_per_m_blended_tokens_low"), c("floor_usd_per_m_blended_tokens_high")
    cal = pl.when(lo.is_not_null() & hi.is_not_null()).then(pl.format(
        " Calibration band of the floor: {} to {} (margin {} to {}); {}.", usd(lo), usd(hi),
        _pct(c("margin_blended_frac_low")), _pct(c("margin_blended_frac_high")),
        pl.when(c("band_straddles_price")).then(pl.lit("the band straddles the price, so the model cannot tell "
                                                       "whether the quote covers its cost"))
        .when(price > hi).then(pl.lit("the price is above the whole band"))
        .otherwise(pl.lit("the price is below the whole band"))))
    clear = (pl.when(c("cheapest_clearing_generation").is_not_null()).then(pl.format(
        " Clears the floor at its speed on: {}; the cheapest accelerator-hour that does is {} ({}, {} per utilized "
        "GPU-hour, floor {}).", c("clearing_generations"), c("cheapest_clearing_hardware"),
        c("cheapest_clearing_generation"), gh(c("cheapest_clearing_usd_per_gpu_hour")),
        usd(c("cheapest_clearing_usd_per_m_blended_tokens"))))
        .when(c("all_fast_tokens_per_s_per_user").is_not_null() & c("else_usd_per_m_blended_tokens").is_not_null())
        .then(pl.lit(" It clears the floor at its speed on no accelerator searched.")))
    util = (pl.when(c("breakeven_utilization_frac").is_not_null())
            .then(pl.format("{} utilization", _pct(c("breakeven_utilization_frac"))))
            .when(c("_u_star").is_infinite()).then(pl.lit("no utilization (the price does not cover power)"))
            .otherwise(pl.lit("no utilization (even 100% falls short)")))
    batch = (pl.when(c("breakeven_batch_size").is_not_null()).then(pl.format(
        "batch {} ({} tokens/s per user)", c("breakeven_batch_size"), _t(c("breakeven_tokens_per_s_per_user"))))
        .otherwise(pl.lit("no batch")))
    breakeven = pl.when(has_floor).then(pl.format(
        " Breaks even on the floor deployment at {} per utilized GPU-hour ({} per GPU-hour at {} utilization; "
        "modeled {}), {}, or {}.",
        gh(c("breakeven_usd_per_gpu_hour")), gh(c("breakeven_rate_usd_per_gpu_hour")), _pct(c("utilization_frac")),
        gh(c("floor_usd_per_gpu_hour")), util, batch))
    return pl.concat_str([head, deploy, basis, precision_txt, alt_bf16, alt_low, pl.lit("."), needs, hw_band, cal,
                          clear, breakeven], ignore_nulls=True)


def _per_hardware(q: pl.DataFrame, scope: dict, searched: pl.DataFrame, f: dict, economics: Economics
                  ) -> pl.DataFrame:
    tier = cost_basis_label(economics.basis)
    what = ("no all_in_capex_usd in the catalog (not sold; use a rental or TCO tier)" if economics.basis == "owned"
            else f"no {tier} rate for this accelerator in the catalog")
    hw = searched.select("hardware", "generation", (~pl.col("has_rate")).alias("_no_price"))
    floors = f["per_hw"].select("key", "hardware", "layout", *_DEPLOYMENT, "precision", "batch_size",
                                "tokens_per_s_per_user", "binding_wall", "usd_per_gpu_hour", "usd_per_m_input_tokens",
                                "usd_per_m_output_tokens", "usd_per_m_blended_tokens")
    fast = f["fastest_hw"].select("key", "hardware", pl.col("fast_tokens_per_s_per_user")
                                  .alias("fastest_tokens_per_s_per_user"))
    in_scope = scope["rows"].select("quote_id", "hardware", pl.lit(True).alias("in_scope"))
    note = (pl.when(pl.col("_no_price")).then(pl.lit(what))
            .when(pl.col("usd_per_m_blended_tokens").is_not_null()).then(pl.lit(""))
            .when(pl.col("fastest_tokens_per_s_per_user").is_null()).then(pl.format(
                "the weights do not fit in {} or wider on up to {} accelerators", pl.col("reference_precision"),
                pl.lit(MAX_GPUS)))
            .otherwise(pl.format("fastest {} tokens/s per user is below the speed floor of {}",
                                 _t(pl.col("fastest_tokens_per_s_per_user")),
                                 _t(pl.col("speed_floor_tokens_per_s_per_user")))))
    out = (q.select("quote_id", "provider", "model", "key", "price_usd_per_m_blended_tokens",
                    "speed_floor_tokens_per_s_per_user", "reference_precision")
           .join(hw, how="cross")
           .join(floors, on=["key", "hardware"], how="left").join(fast, on=["key", "hardware"], how="left")
           .join(in_scope, on=["quote_id", "hardware"], how="left")
           .with_columns(pl.col("in_scope").fill_null(False),
                         pl.col("usd_per_m_blended_tokens").is_not_null().alias("meets_floor"),
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
