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

import functools
import threading
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.assumptions import AUTO_DECODING, DEFAULT, Assumptions, Decoding, Economics
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER, DEFAULT_OUTPUT_LEN
from econ.tables.catalog import COMMON_CAPEX_BASES, Catalog
from econ.tables.quote_files import (QUOTE_SCHEMA, WEIGHT_FORMATS, load_provider_systems, native_weight_format,
                                     validate_quotes)
from econ.engine import catalog_arrays, evaluate, tier_rate
from econ.errors import InvalidInputError
from econ.economics.margins import (RICH_MARGIN_FRAC, THIN_MARGIN_FRAC, band_verdict_expr,
                                    breakeven_usd_per_gpu_hour, breakeven_utilization_frac, gross_margin_frac)
from econ.economics.pricing import usd_per_m_blended_tokens
from econ.analyses.search import octave_grid
from econ.tables.catalog import CatalogCache, cache_root, nbytes_of, disk_key, read_cached, write_cached
from econ.analyses.sweep import layout_candidates_frame
from econ.validate import require_in_range, require_not_above
from econ.vocabulary import MAX_BATCH, MAX_CONTEXT, TIER_SPECS, tier, tier_code
from econ.vocabulary import check as check_field

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
    "set": "as set for this check (--weight-format), over the quote's own",
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
    "margin_input_frac", "margin_output_frac", "margin_blended_frac", "margin_text",
    "floor_usd_per_m_blended_tokens_low", "floor_usd_per_m_blended_tokens_high",
    "margin_blended_frac_low", "margin_blended_frac_high", "band_straddles_price", "floor_assumes",
    "floor_profile_note", "floor_calibrated", "floor_speedup_needed", "floor_power_usd_per_m_blended_tokens",
    "ceiling_tokens_per_s_per_user", "ceiling_hardware",
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
    "usd_per_m_blended_tokens", "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high",
    "price_usd_per_m_blended_tokens", "margin_blended_frac", "fastest_tokens_per_s_per_user", "speedup_needed",
    "calibrated", "note",
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
        from econ.vocabulary import FIELDS

        def source(k: str) -> str:
            if k.startswith("decoding_") and k[len("decoding_"):] in FIELDS:  # a format / speculation set (Decoding)
                f = FIELDS[k[len("decoding_"):]]
                return f"set for the check ({f.flag_name}); automatic would be: {f.source}"
            return SETTING_SOURCES.get(k, "")

        return [{"group": "quote check", "name": k, "value": str(v), "source": source(k)}
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

_GENERATIONS = CatalogCache(16)
""":func:`accelerator_generations` per catalog object (it reads the catalog's accelerators only; a catalog is never
changed in place): a Quote checker rerun asks for it twice (~3 ms of CPU each: a dozen regex rules)."""


def accelerator_generations(catalog: Catalog) -> pl.DataFrame:
    """Generation of every catalog accelerator: ``accelerators.csv`` ``generation``, else :data:`GENERATION_RULES`.

    Returns
    -------
    pl.DataFrame with ``hardware`` (accelerator id) and ``generation`` (text), in catalog order (kept per catalog
    object: :data:`_GENERATIONS`).
    """
    return _GENERATIONS.memo(catalog, ("generations",), lambda: _accelerator_generations(catalog))


def _accelerator_generations(catalog: Catalog) -> pl.DataFrame:
    """:func:`accelerator_generations`, computed."""
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
                   output_len: int, hardware=None, formats=None, decoding: Decoding = AUTO_DECODING) -> pl.DataFrame:
    """The configurations of :func:`floor_points` (one row per model x accelerator x precision x weight format x
    layout x speculation variant), numbered (``_cfg``), with their probed ``max_batch_size`` (empty, without it,
    when no accelerator holds the weights on <= MAX_GPUS). ``decoding``: the expert and KV-cache formats set
    become point columns of every configuration, and a speculative-decoding setting replaces the search's variants
    (:func:`_speculation_variants`)."""
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
    configs = configs.join(_speculation_variants(catalog, models, decoding), on="model", how="inner")
    fixed = {k: v for k, v in decoding.columns().items() if k in ("expert_weight_format", "kv_precision")}
    if fixed:  # the formats set for the check: point columns of every configuration (evaluate reads them)
        configs = configs.with_columns(pl.lit(v, pl.String).alias(k) for k, v in fixed.items())
    if configs.height == 0:  # no accelerator holds the weights on <= MAX_GPUS: nothing to search
        return configs.with_row_index("_cfg")
    probe = evaluate(configs.with_columns(pl.col("dp").alias("batch_size")), catalog, assumptions, economics,
                     strict=False, columns=("max_batch_size",))
    return (configs.with_columns(probe["max_batch_size"].clip(upper_bound=MAX_BATCH).alias("max_batch_size"))
            .filter(pl.col("max_batch_size") >= pl.col("dp")).with_row_index("_cfg"))


EAGLE_DRAFT_TOKENS = 3
"""Tokens an EAGLE-3 head drafts per step in the floor search (a chain: SGLang ``--speculative-num-steps 3
--speculative-eagle-topk 1 --speculative-num-draft-tokens 4``, the configuration of the acceptance below)."""

EAGLE_ACCEPTANCE_LENGTH = 2.41
"""Tokens accepted per step by an EAGLE-3 head drafting :data:`EAGLE_DRAFT_TOKENS` (gpt-oss-120b on H100, MT-Bench,
temperature 0.7, batch 1; 2.43 at batch 64: the Dogacel/specdrift-gpt-oss-120b-eagle3 model card, SpecForge
evaluation of arXiv:2605.09992; SGLang's EAGLE-3 docs give a 2.36x speed-up on Llama-3.1-8B). [tokens/step]"""


def chain_acceptance(acceptance_length: float, draft_tokens: int) -> float:
    """Per-token acceptance a of a drafted chain with the given mean accepted length:
    1 + a + ... + a^k = acceptance_length (the engine's model of speculative decoding), solved for a in [0, 1).

    Raises
    ------
    InvalidInputError
        A length outside [1, draft_tokens + 1).
    """
    require_in_range("acceptance_length", acceptance_length, 1.0, draft_tokens + 1.0, "tokens", hi_inclusive=False)
    roots = np.roots([1.0] * draft_tokens + [1.0 - acceptance_length])  # a^k + ... + a + (1 - length) = 0
    real = [float(r.real) for r in roots if abs(r.imag) < 1e-9 and -1e-12 <= r.real < 1.0]
    return max(0.0, min(real))


EAGLE_ACCEPTANCE = chain_acceptance(EAGLE_ACCEPTANCE_LENGTH, EAGLE_DRAFT_TOKENS)
"""Per-token acceptance of the floor search's EAGLE-3 head (0.667 from :data:`EAGLE_ACCEPTANCE_LENGTH`). [-]"""

SPECULATION_BASIS = (
    "speculative decoding in the floor search: the model's own MTP module where it ships one (DeepSeek-V3/R1), else "
    f"an EAGLE-3 head drafting {EAGLE_DRAFT_TOKENS} tokens at {EAGLE_ACCEPTANCE_LENGTH} accepted per step (gpt-oss-120b "
    "on H100, Dogacel/specdrift-gpt-oss-120b-eagle3 model card; heads are trained per model with open tooling in "
    "~10 GPU-hours, so any provider can run one), beside plain decoding: the floor takes whichever is cheaper at "
    "the quote's speed")
"""How the floor search speculates (the settings sheet and the README)."""


def _speculation_variants(catalog: Catalog, models, decoding: Decoding = AUTO_DECODING) -> pl.DataFrame:
    """The decoding variants the floor search evaluates per model: the engine's default (null: plain, or the model's
    MTP module) and, for a model without MTP, an EAGLE-3 head (:data:`EAGLE_DRAFT_TOKENS`, :data:`EAGLE_ACCEPTANCE`).
    A method set in ``decoding`` (``--speculation``) is the only variant (its fields left automatic stay null: the
    engine's default, as ``econ cost`` prices them); draft tokens or an acceptance set without a method apply to
    the variants searched (the model's MTP, the EAGLE-3 head).

    Returns
    -------
    pl.DataFrame: ``model``, ``spec_method`` (null or a method), ``spec_draft_tokens``, ``spec_acceptance`` (and
    ``spec_draft_model`` when one is set).
    """
    from econ.engine import default_speculation

    schema = {"model": pl.String, "spec_method": pl.String, "spec_draft_tokens": pl.Int64,
              "spec_acceptance": pl.Float64}
    d = decoding
    rows = []
    for m in dict.fromkeys(models):
        if d.spec_method is not None:  # a method set: the only variant
            rows.append((m, d.spec_method, d.spec_draft_tokens, d.spec_acceptance))
            continue
        rows.append((m, None, d.spec_draft_tokens, d.spec_acceptance))  # the model's default (its MTP) as set
        if default_speculation(catalog, m) is None:
            rows.append((m, "eagle", EAGLE_DRAFT_TOKENS if d.spec_draft_tokens is None else d.spec_draft_tokens,
                         EAGLE_ACCEPTANCE if d.spec_acceptance is None else d.spec_acceptance))
    out = pl.DataFrame(rows, schema=schema, orient="row")
    if decoding.spec_draft_model is not None:
        out = out.with_columns(pl.lit(decoding.spec_draft_model, pl.String).alias("spec_draft_model"))
    return out



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
SPEED_BAND_COLUMNS: tuple[str, ...] = ("tokens_per_s_per_user_high",)
"""The fast end of the speed's calibration band: the physics ceiling of a deployment (:func:`speed_ceiling`)."""

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

_SEARCH_CACHE = CatalogCache(SEARCH_CACHE_ENTRIES)
"""(id(catalog), key) -> value, the newest :data:`SEARCH_CACHE_ENTRIES` of the process
(:class:`econ.tables.catalog.CatalogCache`)."""


SEARCH_DISK_ENTRIES = 6
"""Floor searches and screens kept on disk (newest first, per kind), beside the validated catalog
(:func:`econ.tables.catalog.cache_root`; ``ECON_CACHE_DIR=off`` disables): a restarted dashboard's first Quote checker
visit and a second ``econ quotes check`` read the screen (~2 s of engine work on the shipped quotes) in tens of ms.
Keyed by the catalog's data-folder version (:func:`econ.tables.catalog.disk_key`: only a catalog read from its folder,
never one changed in memory), the source of every module of :mod:`econ` (any code change is a miss) and the search's
own key, so a kept value is what ``build()`` would return."""


def _memo(catalog: Catalog, key: tuple, build):
    """``build()``, cached for ``catalog`` under ``key``: in the process (the newest :data:`SEARCH_CACHE_ENTRIES`), and
    on disk when the catalog is its data folder's (:data:`SEARCH_DISK_ENTRIES`)."""
    hit = _SEARCH_CACHE.get(catalog, key)
    if hit is not None:
        return hit
    canon = _canonical(key)
    path = _disk_path(catalog, canon, key[0])
    got = read_cached(path) if path is not None else None
    value = got[1] if isinstance(got, tuple) and len(got) == 2 and got[0] == canon else None
    if value is None:
        value = build()
        if path is not None:
            write_cached(path, (canon, value), keep=SEARCH_DISK_ENTRIES)
    _SEARCH_CACHE.put(catalog, key, value)
    return value


def _disk_path(catalog: Catalog, canon: tuple, kind: str):
    """Where :func:`_memo` keeps a value for ``catalog`` on disk (None: not kept); ``canon`` is :func:`_canonical` of
    its key, ``kind`` the key's first item ("search" or "screen")."""
    import hashlib

    version, root = disk_key(catalog), cache_root()
    if version is None or root is None:
        return None
    code = _code_version()
    if code is None:
        return None
    digest = hashlib.sha256(f"{version}|{code}|{canon!r}".encode()).hexdigest()[:32]
    return root / f"quote-{kind}-{digest}.pickle"


@functools.lru_cache(maxsize=1)
def _code_version() -> str | None:
    """A digest of every ``econ/**/*.py`` (name, size, modification time) and the version: any code change is a new
    disk key (None: the sources cannot be listed)."""
    import hashlib
    from pathlib import Path

    import econ

    h = hashlib.sha256(econ.__version__.encode())
    try:
        root = Path(econ.__file__).parent
        for f in sorted(root.rglob("*.py")):
            st = f.stat()
            h.update(f"{f.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    except OSError:
        return None
    return h.hexdigest()


def _canonical(obj):
    """A value of ``obj`` whose repr is the same in every process (sets sorted; dataclasses by field): the disk key of
    a search (:func:`_disk_path`), which holds Assumptions (a frozenset), Decoding and tuples."""
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return (type(obj).__name__,) + tuple((f.name, _canonical(getattr(obj, f.name)))
                                             for f in dataclasses.fields(obj))
    if isinstance(obj, (set, frozenset)):
        return ("set",) + tuple(sorted((_canonical(x) for x in obj), key=repr))
    if isinstance(obj, (tuple, list)):
        return tuple(_canonical(x) for x in obj)
    if isinstance(obj, dict):
        return ("dict",) + tuple(sorted(((repr(k), _canonical(v)) for k, v in obj.items()), key=lambda kv: kv[0]))
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return repr(obj)


PERCENTILE_COLUMNS: tuple[str, ...] = ("served_tpot_s", "tpot_percentile_s")
"""Engine columns a percentile check reads: the served TPOT and the TPOT at ``Assumptions.latency_percentile``."""


def _at_percentile(res: pl.DataFrame, percentile: float | None) -> pl.DataFrame:
    """``res`` with its per-user speeds (``tokens_per_s_per_user`` and its band) taken at the TPOT percentile.

    None (the default check): unchanged, the served (median) speed a provider publishes. A percentile p: each speed
    divided by the row's TPOT at p over its served TPOT (``tpot_percentile_s / served_tpot_s``, the engine ran with
    ``latency_percentile = p``: :func:`econ.physics.serving.tpot_tail_at_percentile`), so a floor at p delivers the
    quote's speed to all but (100 - p)% of the tokens."""
    if percentile is None:
        return res
    slow = pl.col("tpot_percentile_s") / pl.col("served_tpot_s")
    cols = [c for c in ("tokens_per_s_per_user", "tokens_per_s_per_user_low", "tokens_per_s_per_user_high")
            if c in res.columns]
    return res.with_columns((pl.col(c) / slow).alias(c) for c in cols).drop(
        [c for c in PERCENTILE_COLUMNS if c not in _RES_COLUMNS], strict=False)


EVALUATED_COLUMNS: tuple[str, ...] = (*_RES_COLUMNS, *_OPTIONAL_RES_COLUMNS, *BAND_COLUMNS, "tokens_per_s_per_user_low",
                                      *SPEED_BAND_COLUMNS, "feasible")
"""Engine columns of the whole-engine passes of the floor search: what :func:`_feasible_rows` keeps (and
:func:`_at_percentile` rescales); the result is the same as from the engine's whole frame."""


def _evaluate_rows(points: pl.DataFrame, catalog: Catalog, assumptions: Assumptions, economics: Economics,
                   percentile: float | None = None, physics: dict | None = None) -> pl.DataFrame:
    """The whole engine on grid points (``_cfg`` dropped), with the requested weight format as ``_wf_in`` and the
    requested speculation as ``_spec_in`` (null: the engine's default); speeds at ``percentile``
    (:func:`_at_percentile`). Only the engine columns the floors read are built (:data:`EVALUATED_COLUMNS`: the
    engine computes every column anyway; building the ~70 others cost ~15% of the call). ``physics``: the engine's
    memo of these points' physics (:func:`econ.engine.evaluate`), given with points that have no ``_cfg``."""
    cols = EVALUATED_COLUMNS + (PERCENTILE_COLUMNS if percentile is not None else ())
    res = _at_percentile(evaluate(points.drop("_cfg", strict=False) if physics is None else points, catalog,
                                  assumptions, economics, strict=False, columns=tuple(dict.fromkeys(cols)),
                                  physics=physics), percentile)
    return res.with_columns(points["weight_format"].alias("_wf_in"), points["spec_method"].alias("_spec_in"))


SEARCH_ORDER: tuple[str, ...] = ("model", "hardware", "precision", "num_gpus", "batch_size")
"""The columns the floor search's rows are sorted by (:func:`_feasible_rows`); ties keep the sort's own order, which
the floors' first-row tie-breaks read."""

FEASIBLE_ORDER_ENTRIES = 16
"""Sort orders of the floor search's rows kept (:func:`_feasible_rows`), newest first: the screened rows and the floor
deployments' curves of a few searches."""

_FEASIBLE_ORDERS = CatalogCache(FEASIBLE_ORDER_ENTRIES, max_bytes=64 * 2**20, size_of=nbytes_of)
"""(id(catalog), the rows' key) -> (their :data:`SEARCH_ORDER` columns, the permutation that sorts them)."""


def _feasible_rows(res: pl.DataFrame, catalog: Catalog, band: bool, order_key: tuple | None = None) -> pl.DataFrame:
    """Feasible engine rows with the columns the floors read, in the search's order (:data:`SEARCH_ORDER`).

    ``order_key`` (the evaluated rows' cache key): the sort's permutation is kept, and a rerun whose rows hold the
    same :data:`SEARCH_ORDER` columns (the physics and layout of the same grid points: another PUE, power price or
    rate) gathers them by it instead of sorting again (~10 ms on the ~26,000 screened rows of the shipped quotes). The
    result is the sort's exactly: a sort compares the order columns only, so its permutation (ties included) is a
    function of them (tests/analyses/test_quotes_fast.py)."""
    pinned = list(_pinned_models(catalog))
    default_fmt = pl.col("precision").replace_strict(prec.DEFAULT_WEIGHT_FORMAT, return_dtype=pl.String)
    spec_cols = [c for c in _OPTIONAL_RES_COLUMNS if c in res.columns]
    rows = res.filter(pl.col("feasible")).select(
        *_RES_COLUMNS, *spec_cols, *(BAND_COLUMNS + SPEED_BAND_COLUMNS if band else ()), "_wf_in", "_spec_in",
        pl.when(pl.col("model").is_in(pinned)).then(pl.col("_wf_in").is_null())
        .otherwise(pl.col("_wf_in") == default_fmt).alias("_is_default"),
    )
    if order_key is None:
        return rows.sort(*SEARCH_ORDER)
    by = rows.select(SEARCH_ORDER)
    kept = _FEASIBLE_ORDERS.get(catalog, order_key)
    if kept is None or not kept[0].equals(by):
        kept = (by, by.select(pl.arg_sort_by(SEARCH_ORDER)).to_series().to_numpy())
        _FEASIBLE_ORDERS.put(catalog, order_key, kept)
    return rows[kept[1]]


def trusted_fast_end(res: pl.DataFrame, profiles: pl.DataFrame, band: bool = True) -> pl.DataFrame:
    """``res`` with ``_calibrated`` (the row's efficiency profile is calibrated) and ``tokens_per_s_per_user_high`` (the fast end of a row's calibration band, which the physics
    ceiling and a stretched floor read) kept only where the row's efficiency profile is calibrated
    (:func:`econ.analyses.bands.profile_table`); elsewhere it is the modeled speed.

    A fallback or wide-band profile's fast end is not evidence that a GPU reaches a speed: hopper-bf16's and
    blackwell-bf16's held-out cases spread 9x and 23x in the issue-17 fit, so their fast ends put Llama-3.3-70B
    at 1,900 tokens/s per user on a GB200 and priced a 900 tokens/s quote on an H100 running 5x faster than
    modeled. A calibrated band (within :data:`econ.analyses.bands.WIDE_BAND_RATIO`) bounds the speed-up to what
    the profile's own held-out measurements show.

    Parameters
    ----------
    res : pl.DataFrame with ``hardware``, ``precision``, ``tokens_per_s_per_user`` and (``band``)
        ``tokens_per_s_per_user_high`` [tokens/s per user]
    profiles : pl.DataFrame, :func:`econ.analyses.bands.profile_table`
    band : bool, whether ``res`` carries the band columns

    Returns
    -------
    pl.DataFrame, ``res`` (same rows and order) with ``_calibrated`` (bool) added.
    """
    cal = profiles.select("hardware", "precision", pl.col("calibrated").fill_null(False).alias("_calibrated"))
    out = res.drop("_calibrated", strict=False).join(cal, on=["hardware", "precision"], how="left",
                                                     maintain_order="left").with_columns(
        pl.col("_calibrated").fill_null(False))
    if not band:
        return out
    return out.with_columns(pl.when(pl.col("_calibrated")).then(pl.col("tokens_per_s_per_user_high"))
                            .otherwise(pl.col("tokens_per_s_per_user")).alias("tokens_per_s_per_user_high"))


def _screen(configs: pl.DataFrame, grid: tuple[np.ndarray, np.ndarray], floors: pl.DataFrame, rated: list,
            catalog: Catalog, assumptions: Assumptions, economics: Economics, percentile: float | None = None
            ) -> tuple[np.ndarray, pl.DataFrame]:
    """The screening pass of :func:`_screened_search`: (the grid positions that can be an answer, in order; the
    screen: ``_cfg``, ``batch_size``, ``tokens_per_s_per_user`` of every feasible row of a rated accelerator)."""
    idx, batch = grid
    on = configs["hardware"].is_in(pl.Series(rated, dtype=pl.String).implode()).to_numpy()
    pos = np.flatnonzero(on[idx])
    scr = pl.DataFrame({"_row": pos, "_cfg": idx[pos], "batch_size": batch[pos]},
                       schema={"_row": pl.Int64, "_cfg": pl.UInt32, "batch_size": pl.Int64})
    if pos.size:
        phys = evaluate(_grid_points(configs, grid, pos).drop("_cfg"), catalog, assumptions, economics, strict=False,
                        columns=SCREEN_COLUMNS + (PERCENTILE_COLUMNS if percentile is not None else ()))
        phys = _at_percentile(phys, percentile)
        scr = scr.with_columns(phys).filter(pl.col("feasible")).drop("feasible")
    else:
        scr = scr.with_columns(pl.lit(None, pl.Float64).alias(c) for c in SCREEN_COLUMNS[1:])
    speed, rate = pl.col("tokens_per_s_per_user"), pl.col("output_tokens_per_s_per_gpu")
    scr_m = scr.join(configs.select("_cfg", "model", "hardware", "weight_format"), on="_cfg", how="left")
    # per configuration and speed floor: the rows of the highest output rate per GPU (the lowest $/M output tokens)
    meets = (scr_m.select("_row", "_cfg", "model", speed, rate).join(floors, on="model", how="inner")
             .filter(speed >= pl.col("_s")))
    cheapest = meets.filter(rate >= rate.max().over("_cfg", "_s") * (1.0 - SCREEN_TIE_FRAC))["_row"]
    # per model, accelerator, weight format and precision: the fastest rows (the ceiling reads each profile's band)
    scr_m = scr_m.join(configs.select("_cfg", "precision"), on="_cfg", how="left")
    fastest = scr_m.filter(speed == speed.max().over("model", "hardware", "weight_format", "precision"))["_row"]
    rows = pl.concat([cheapest, fastest]).unique().sort().to_numpy()
    return rows, scr.select("_cfg", "batch_size", "tokens_per_s_per_user")


def _screened_search(configs: pl.DataFrame, grid: tuple[np.ndarray, np.ndarray], keys: pl.DataFrame, rated: list,
                     catalog: Catalog, assumptions: Assumptions, economics: Economics, cache_key: tuple,
                     percentile: float | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
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
    # the screen holds speeds at the check's TPOT percentile (None: the served median), so the percentile is in its key
    key = ("screen", cache_key, tuple(sorted(rated)), tuple(floors.iter_rows()), percentile)
    rows, scr = _memo(catalog, key, lambda: _screen(configs, grid, floors, rated, catalog, assumptions, economics,
                                                    percentile))
    if rows.size == 0:  # nothing feasible: one row keeps the engine's result columns (band or none)
        rows = np.zeros(1, dtype=np.int64)
    return _evaluate_kept(catalog, key, lambda: _grid_points(configs, grid, rows), assumptions, economics,
                          percentile), scr


def _evaluate_kept(catalog: Catalog, key: tuple, make_points, assumptions: Assumptions, economics: Economics,
                   percentile: float | None) -> pl.DataFrame:
    """:func:`_evaluate_rows` on grid points kept under ``key`` with the engine's memo of their physics
    (:data:`_PHYSICS_MEMOS`): ``make_points()`` builds them on a miss; on a hit only the cost chain runs again."""
    with _MEMO_LOCK:  # one call at a time on a kept memo: dashboard sessions (threads) share it, and a call under
        # another tier empties and refills it (the engine's fingerprint) while another would be reading it
        kept = _PHYSICS_MEMOS.get(catalog, key)
        before = None
        if kept is None:
            kept = (make_points().drop("_cfg", strict=False), {})
        else:
            before = dict(kept[1])  # the memo's entries (held, so an unchanged entry is the very object after the call)
        res = _evaluate_rows(kept[0], catalog, assumptions, economics, percentile, physics=kept[1])
        memo = kept[1]
        if before is None or len(memo) != len(before) or any(memo.get(k) is not v for k, v in before.items()):
            _PHYSICS_MEMOS.put(catalog, key, kept)  # sized now that the engine has filled the memo
        # else: a hit whose memo the engine only read: its size is the one kept (get made it the newest), not measured
        # again (~400 arrays walked per put: a few ms a rerun)
    return res


PHYSICS_MEMO_ENTRIES = 8
"""Screens (and floor deployments' batch curves) whose whole-engine rows keep their physics (:func:`econ.engine.evaluate`'s
``physics`` memo), newest first: a rerun that changes only the cost side of the economics (power price, PUE, finance,
utilization, token mix) prices the ~24,000 screened rows of the shipped quotes again without their physics (~150 ms of
CPU), and the ~1,100 rows of the floors' curves when the floors' deployments stay. The engine's memo checks its own
fingerprint (the tier, a custom rate and the cache-hit rate included), so it is never read stale."""

PHYSICS_MEMO_BYTES = 256 * 2**20
"""Bytes of those memos (the arrays of each block's physics and inputs; ~36 MB for the screen of the shipped quotes at
a cost tier, ~51 MB at a custom $/GPU-hour, which screens every accelerator, ~1.7 MB for its curves: about five
searches' screens at once, as :data:`econ.analyses.optimize.PHYSICS_CACHE_BYTES`); a memo above a quarter of it (a
screen of ~45,000 rows: a large upload) is not kept and runs whole. [B]"""


_PHYSICS_MEMOS = CatalogCache(PHYSICS_MEMO_ENTRIES, max_bytes=PHYSICS_MEMO_BYTES, size_of=nbytes_of)
"""(id(catalog), the screen's key) -> (the screened points, the engine's physics memo of them)."""

_MEMO_LOCK = threading.RLock()
"""Held while :func:`_evaluate_kept` reads and fills a kept memo (an ``evaluate`` call on it; the engine is not
re-entered there, the lock is reentrant for safety)."""


def check_quotes(quotes: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
                 economics: Economics = Economics(), *,
                 min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                 output_len: int = DEFAULT_OUTPUT_LEN, input_len: int | None = None, hardware=None,
                 generation=None, decoding: Decoding = AUTO_DECODING,
                 slo_percentile: float | None = None) -> QuoteCheck:
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
    decoding : Decoding
        Formats and speculative decoding of the floor (:class:`econ.assumptions.Decoding`, the same fields as
        ``econ cost``; default automatic). ``weight_format`` set replaces every quote's own (basis ``set``, the
        reference precision its width's); ``expert_weight_format`` and ``kv_precision`` set are used by every
        deployment searched; a speculative-decoding field set replaces the search's variants (plain or the
        model's MTP, and an EAGLE-3 head: :data:`SPECULATION_BASIS`) with that one setting.
    slo_percentile : float in [0.001, 99.999], optional [%]
        Judge each quote's speed at this percentile of TPOT (vocabulary ``slo_percentile``): the floor must give
        the quote's speed to all but (100 - p)% of its tokens (:func:`_at_percentile`). None (default): at the served
        TPOT, the median of the log-normal tail model, which is what a published speed (a median) is.

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
    layouts, grid and screen are cached on the catalog object for reruns with other economics, and so are the floor
    search's picks: a rerun whose costs move by one ratio per accelerator (PUE, power price, utilization, a custom
    rate) prices the same rows again where that is provably the search's answer (:func:`_repriced_floors`). Per (key, accelerator) the deployment with the lowest blended cost among
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
    if not isinstance(decoding, Decoding):
        raise InvalidInputError(f"decoding={decoding!r} is not an econ.assumptions.Decoding")
    if slo_percentile is not None:  # the engine's percentile TPOT at p (econ.physics.serving.tpot_tail_at_percentile)
        slo_percentile = float(check_field("slo_percentile", slo_percentile))
        assumptions = replace(assumptions, latency_percentile=slo_percentile)
    if decoding.weight_format is not None:  # the format set for the check replaces each quote's own
        wf = decoding.weight_format
        quotes = quotes.with_columns(pl.lit(wf, pl.String).alias("weight_format"),
                                     pl.lit("set", pl.String).alias("weight_format_basis"),
                                     pl.lit(prec.FORMAT_PRECISION[wf], pl.String).alias("reference_precision"),
                                     pl.lit("set", pl.String).alias("reference_precision_source"))
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
                  None if hardware is None else tuple(hardware), input_len, output_len, decoding)

    def search():
        c = _floor_configs(list(formats), catalog, assumptions, economics, input_len=input_len,
                           output_len=output_len, hardware=hardware, formats=formats, decoding=decoding)
        return c, (_grid_index(c) if c.height else (np.zeros(0, np.int64), np.zeros(0, np.int64)))

    configs, grid = _memo(catalog, search_key, search)
    num_points = grid[0].size
    rates = tier_rates(catalog, economics)
    screen = None
    if num_points == 0:
        res = _EMPTY_RESULT.with_columns(pl.lit(None, pl.String).alias("_wf_in"), pl.lit(None, pl.String).alias("_spec_in"))
    elif EXHAUSTIVE_SEARCH:
        res = _evaluate_rows(_grid_points(configs, grid), catalog, assumptions, economics, slo_percentile)
    else:
        res, screen = _screened_search(configs, grid, keys, rates.filter("has_rate")["hardware"].to_list(), catalog,
                                       assumptions, economics, search_key, slo_percentile)
    band = all(c in res.columns for c in BAND_COLUMNS)
    res = _feasible_rows(res, catalog, band, None if screen is None else (
        "order", search_key, tuple(sorted(rates.filter("has_rate")["hardware"].to_list())), slo_percentile,
        tuple(keys.iter_rows())))
    from econ.analyses.bands import profile_table

    profiles = profile_table(catalog)
    res = trusted_fast_end(res, profiles, band)
    power_hour = (pl.col("all_in_power_w") / 1000.0 * float(economics.pue) * float(economics.usd_per_kwh))
    searched = (gens.join(rates, on="hardware", how="left")
                .join(catalog.accelerators.select(pl.col("id").alias("hardware"), "capex_basis",
                                                  power_hour.alias("_power_usd_per_hour")), on="hardware",
                      how="left"))
    if hardware is not None:
        searched = searched.filter(pl.col("hardware").is_in(hardware))
    systems = load_provider_systems(catalog).select(pl.col("id").alias("hardware"),
                                                    pl.col("display_name").alias("_system_name"))
    rentable = None if hardware is not None else rentable_at_scale(catalog, q.select("quote_id", "as_of"))
    scope = _scope(q, searched, systems, picked, economics, restricted=hardware is not None, rentable=rentable)
    floors_key = ("floors", search_key, tuple(sorted(rates.filter("has_rate")["hardware"].to_list())), slo_percentile,
                  screen is None, tuple(keys.iter_rows()))
    frames = _kept_floors(catalog, floors_key, keys, res, screen, configs)
    if screen is not None:  # the break-even batch reads the floor deployment's whole batch curve
        def curves(floors: pl.DataFrame) -> pl.DataFrame:
            ids = configs.join(floors, on=["model", "hardware", "precision", *_DEPLOYMENT, "weight_format",
                                           "spec_method"], how="semi", nulls_equal=True)["_cfg"].to_numpy()
            on = np.zeros(configs.height, dtype=bool)  # _cfg is the configuration's row (with_row_index)
            on[ids] = True
            rows = np.flatnonzero(on[grid[0]])  # np.isin(grid[0], ids), without its sort of ~1M grid points
            if not rows.size:
                return res.clear()
            # the floor deployments' curves are mostly the same from one economics to the next: their physics is kept
            # (the engine's memo, keyed by the very rows) and only priced again
            import hashlib

            key = ("curves", search_key, hashlib.blake2b(rows.tobytes(), digest_size=16).hexdigest())
            return _feasible_rows(_evaluate_kept(catalog, key, lambda: _grid_points(configs, grid, rows), assumptions,
                                                 economics, slo_percentile), catalog, band, ("order", *key))

        frames["curves"] = curves
    eagle_tokens = EAGLE_DRAFT_TOKENS if decoding.spec_draft_tokens is None else decoding.spec_draft_tokens
    summary = _summary(q, scope, searched, frames, economics, band, profiles, eagle_draft_tokens=eagle_tokens,
                       slo_percentile=slo_percentile)
    per_hw = _per_hardware(q, scope, searched, frames, economics, profiles)
    _require_finite(summary, "quote check")
    _speed_within_physics(summary)
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
        "slo_percentile": "median (the served TPOT)" if slo_percentile is None else f"p{slo_percentile:g}",
        **{f"decoding_{k}": v for k, v in decoding.columns().items()},
    }
    return QuoteCheck(summary=summary.select(SUMMARY_COLUMNS), per_hardware=per_hw.select(PER_HARDWARE_COLUMNS),
                      settings=settings)


MAX_DECODING_NOTES = 6
"""Distinct "decoding:" lines :func:`decoding_notes` lists (a file's quotes share a few; the floor_* columns hold
every quote's)."""


def decoding_notes(summary: pl.DataFrame, decoding: Decoding, catalog: Catalog) -> list[str]:
    """The "decoding:" lines of a check (:func:`econ.analyses.sweep.decoding_note`, the line of ``econ cost``): the
    weight, expert and KV-cache formats and the speculative decoding each quote's floor used, and where each came
    from (set for the check, or automatic and why), one line per distinct setting with the quotes it covers.

    Parameters
    ----------
    summary : pl.DataFrame, :attr:`QuoteCheck.summary`
    decoding : Decoding, what the check was given
    catalog : Catalog

    Returns
    -------
    list of str, at most :data:`MAX_DECODING_NOTES` (+ one saying how many more); empty when no quote has a floor.
    """
    from econ.analyses.sweep import decoding_note

    by_note: dict[str, list[str]] = {}
    for r in summary.filter(pl.col("floor_precision").is_not_null()).iter_rows(named=True):
        p = r["floor_precision"]
        w = r["floor_weight_format"] or prec.DEFAULT_WEIGHT_FORMAT[p]
        method = r["floor_spec_method"] or "none"
        tokens, acc = decoding.spec_draft_tokens, decoding.spec_acceptance
        if method == "eagle" and decoding.spec_method is None:
            tokens = EAGLE_DRAFT_TOKENS if tokens is None else tokens
            acc = EAGLE_ACCEPTANCE if acc is None else acc
        elif method == "mtp":
            tokens = 1 if tokens is None else tokens
            acc = catalog.model(r["model"]).get("mtp_acceptance") if acc is None else acc
        row = {"model": r["model"], "precision": p, "weight_format": w,
               "expert_weight_format": r["floor_expert_weight_format"] or w,
               "kv_precision": decoding.kv_precision or prec.DEFAULT_KV_PRECISION[p], "spec_method": method,
               "spec_draft_tokens": tokens, "spec_acceptance": acc}
        note = decoding_note(row, decoding, catalog)
        if decoding.weight_format is None:  # a quote's floor runs the quote's own weight format
            for own in ("(the precision's own format)", "(the release's 128 x 128 block-scaled FP8)"):
                note = note.replace(own, "(the quote's: as stated, else the weight-format rule)", 1)
        if decoding.spec_method is None:  # automatic: the floor search's cheaper variant
            note = (note.replace("(the model's published head)", "(the floor search's EAGLE-3 head, cheaper than "
                                 "plain decoding at the quote's speed: SPECULATION_BASIS)")
                    .replace("(the vendor runs none by default)", "(the floor search: cheaper than an EAGLE-3 head "
                             "at the quote's speed)" if method == "none" and
                             catalog.model(r["model"]).get("mtp_acceptance") is None else
                             "(the vendor runs none by default)"))
        if note:
            by_note.setdefault(note, []).append(r["quote_id"])
    lines = []
    for note, ids in list(by_note.items())[:MAX_DECODING_NOTES]:
        lines.append(note if len(by_note) == 1 and len(ids) == summary.height else
                     f"{note} [{len(ids)} quote{'s' if len(ids) > 1 else ''}: {', '.join(ids[:4])}"
                     f"{', ...' if len(ids) > 4 else ''}]")
    if len(by_note) > MAX_DECODING_NOTES:
        lines.append(f"decoding: {len(by_note) - MAX_DECODING_NOTES} more settings (the floor_weight_format, "
                     "floor_expert_weight_format and floor_spec_method columns of --format csv/json)")
    return lines


ALTERNATIVE_COLUMNS: tuple[str, ...] = (
    "quote_id", "generation", "speed_tokens_per_s_per_user", "is_quote_speed", "floor_hardware", "floor_precision",
    "floor_usd_per_m_blended_tokens", "floor_usd_per_m_blended_tokens_low", "floor_usd_per_m_blended_tokens_high",
    "calibrated", "speedup_needed", "price_usd_per_m_blended_tokens", "verdict", "margin_text")
"""Columns of :func:`verdict_alternatives` (one row per generation x speed)."""


def verdict_alternatives(quote: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
                         economics: Economics = Economics(), *, speeds=None,
                         min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                         output_len: int = DEFAULT_OUTPUT_LEN, generations=None,
                         decoding: Decoding = AUTO_DECODING, slo_percentile: float | None = None) -> pl.DataFrame:
    """How robust a quote's verdict is: its verdict with the floor taken on each generation, at several speeds.

    Parameters
    ----------
    quote : pl.DataFrame, one validated quote (:func:`single_quote` or a row of :func:`econ.tables.quote_files.load_quotes`)
    speeds : iterable of float, optional
        Speed floors to try [tokens/s per user]; default :data:`econ.presets.INTERACTIVITY_LEVELS` (20, 50, 100) and
        the quote's own (published, else ``min_tokens_per_s_per_user``).
    generations : iterable of str, optional
        Default: the generations of the accelerators rentable at scale at the quote's date
        (:func:`rentable_at_scale`), else every generation searched.
    other parameters : as :func:`check_quotes`

    Returns
    -------
    pl.DataFrame (:data:`ALTERNATIVE_COLUMNS`): per generation and speed, the floor by the check's rule
    (:data:`FLOOR_RANK_RULE`) among that generation's accelerators, its band and the verdict on the quote's price
    (``verdict`` "not-gpu-comparable" where no accelerator of the generation reaches the speed). One
    :func:`check_quotes` call on the quote at every speed.

    Raises
    ------
    InvalidInputError
        Not exactly one quote; the errors of :func:`check_quotes`.
    """
    from econ.analyses.bands import profile_table
    from econ.presets import INTERACTIVITY_LEVELS

    if quote.height != 1:
        raise InvalidInputError(f"quote has {quote.height} rows; verdict_alternatives takes exactly one quote")
    q = quote.row(0, named=True)
    own = float(q["output_tokens_per_s_per_user"] or min_tokens_per_s_per_user)
    levels = sorted({float(v) for v in (INTERACTIVITY_LEVELS if speeds is None else speeds)} | {own})
    for v in levels:
        require_in_range("speeds", v, 0.0, 1e5, "tokens/s per user", lo_inclusive=False)
    variants = pl.concat([quote.with_columns(pl.lit(f"{q['quote_id']}@{v:g}").alias("quote_id"),
                                             pl.lit(v).alias("output_tokens_per_s_per_user"),
                                             pl.lit("alternative").alias("speed_source")) for v in levels])
    check = check_quotes(variants, catalog, assumptions, economics, min_tokens_per_s_per_user=min_tokens_per_s_per_user,
                         output_len=output_len, decoding=decoding, slo_percentile=slo_percentile)
    if generations is None:
        rent = rentable_at_scale(catalog, quote.select("quote_id", "as_of"))
        gens = accelerator_generations(catalog)
        picked = gens.filter(pl.col("hardware").is_in(rent["hardware"].implode()))["generation"].unique(
            maintain_order=True).to_list() or gens["generation"].unique(maintain_order=True).to_list()
    else:
        picked = [generations] if isinstance(generations, str) else list(generations)
    per = (check.per_hardware.filter(pl.col("meets_floor") & pl.col("generation").is_in(picked))
           .join(profile_table(catalog).select("hardware", "precision", pl.col("calibrated").alias("_cal")),
                 on=["hardware", "precision"], how="left"))
    cost, lo, hi = "usd_per_m_blended_tokens", "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high"
    expected = pl.when(pl.col("speedup_needed").is_null() & pl.col(lo).is_not_null()) \
        .then((pl.col(lo) * pl.col(hi)).sqrt()).otherwise(pl.col(cost))
    best = (per.sort([pl.col("speedup_needed").is_not_null(), ~pl.col("_cal").fill_null(False), expected, cost,
                      "hardware"], maintain_order=True)  # FLOOR_RANK_RULE's order
            .group_by("quote_id", "generation", maintain_order=True).first())
    grid = (pl.DataFrame({"quote_id": variants["quote_id"], "speed_tokens_per_s_per_user": levels})
            .join(pl.DataFrame({"generation": picked}), how="cross")
            .join(best.select("quote_id", "generation", pl.col("hardware").alias("floor_hardware"),
                              pl.col("precision").alias("floor_precision"),
                              pl.col(cost).alias("floor_usd_per_m_blended_tokens"),
                              pl.col(lo).alias("floor_usd_per_m_blended_tokens_low"),
                              pl.col(hi).alias("floor_usd_per_m_blended_tokens_high"),
                              pl.col("_cal").alias("calibrated"), "speedup_needed"),
                  on=["quote_id", "generation"], how="left"))
    price = float(check.summary["price_usd_per_m_blended_tokens"][0])
    power = pl.lit(None, pl.Float64)
    floor = pl.col("floor_usd_per_m_blended_tokens")
    out = grid.with_columns(pl.lit(q["quote_id"]).alias("quote_id"), pl.lit(price).alias("price_usd_per_m_blended_tokens"),
                            (pl.col("speed_tokens_per_s_per_user") == own).alias("is_quote_speed"))
    out = out.with_columns(
        band_verdict_expr(pl.col("price_usd_per_m_blended_tokens"), floor, pl.col("floor_usd_per_m_blended_tokens_low"),
                          pl.col("floor_usd_per_m_blended_tokens_high")).alias("verdict"),
        margin_words(pl.col("price_usd_per_m_blended_tokens"), floor, power).alias("margin_text"))
    return out.select(ALTERNATIVE_COLUMNS)


def alternatives_table(alternatives: pl.DataFrame) -> pl.DataFrame:
    """:func:`verdict_alternatives` as a small table: one row per generation, one column per speed (the quote's own
    marked with ``*``), each cell the verdict with the margin in words ("plausible: margin 63%")."""
    cell = pl.when(pl.col("floor_usd_per_m_blended_tokens").is_null()).then(pl.col("verdict")).otherwise(
        pl.format("{}: {}", pl.col("verdict"), pl.col("margin_text")))
    head = pl.format("{} tokens/s{}", pl.col("speed_tokens_per_s_per_user").round(1).cast(pl.String)
                     .str.replace(r"\.0$", ""), pl.when(pl.col("is_quote_speed")).then(pl.lit("*")).otherwise(pl.lit("")))
    long = alternatives.with_columns(cell.alias("cell"), head.alias("speed"))
    order = long.sort("speed_tokens_per_s_per_user")["speed"].unique(maintain_order=True).to_list()
    wide = long.pivot(on="speed", index="generation", values="cell", aggregate_function="first")
    return wide.select("generation", *order)


_DEPLOYMENT = ("num_gpus", "tp", "dp", "ep", "pp")
"""The columns that identify a deployment (layout) of a floor."""

FLOOR_RANK_RULE = (
    "a quote's floor is the deployment, among the accelerators in its scope, that (1) meets the speed at the model's "
    "point (where none does, a deployment on a calibrated profile that reaches it at the fast end of its calibration "
    "band, priced at the speed-up it needs), (2) runs on a calibrated efficiency profile (econ.analyses.bands: fitted "
    "on measurements of its own generation and precision, band within 2.5x; an uncalibrated one only where no "
    "calibrated accelerator meets the speed), and (3) has the lowest expected cost: its modeled cost over the centre "
    "of its profile's held-out band, exp((p10 + p90) / 2) of measured / predicted (a profile whose held-out cases run "
    "below its prediction does not win on its bias). Each accelerator's candidate and the bf16 and any-precision "
    "alternatives follow the same rule. The floor is reported at its modeled point with its band")
"""How the floor accelerator is picked (the settings sheet, the reason and the README)."""

RENTABLE_MIN_PROVIDERS = 3
"""An accelerator is *rentable at scale* in a period when at least this many sellers (hyperscalers or GPU clouds;
marketplaces, price indices and surveys are not sellers) list it within :data:`RENTABLE_WINDOW_DAYS` of the date:
a provider without its own disclosed hardware can source it competitively. Assumption: three independent clouds
(two can be one contract; the shipped rows give 3-16 sellers for the H100/H200/B200/B300/MI300X/L40S/A100 of
2026 and 1-2 for GB200, GB300, MI325X, MI355X, TPUs and Trainium). [providers]"""

RENTABLE_WINDOW_DAYS = 365
"""Largest gap between a rental offer and the quote's date for the offer to count (one year: the window of the
catalog's tier rule, econ.tables.rental_rates.RULE_WINDOW_DAYS). [days]"""

RENTAL_INDEX_PATTERN = r"(?i)\bindex\b|semianalysis|survey|\bmarket\b|exchange"
"""``rental_rates.csv`` ``provider`` names that are price indices, surveys or exchanges, not sellers (Silicon Data
index, SemiAnalysis models and surveys, "AMD neocloud market", Ornn exchange)."""


RENTABLE_CACHE_ENTRIES = 8
"""Results of :func:`rentable_at_scale` kept (per catalog object, quotes and rental_rates.csv's stamp): they depend on
neither the economics nor the efficiencies, so a dashboard rerun after a PUE or power-price change reads them (~8 ms
of CPU: the file read and validated, a cross join of quotes and offers)."""

_RENTABLE_CACHE = CatalogCache(RENTABLE_CACHE_ENTRIES)


def rentable_at_scale(catalog: Catalog, quotes: pl.DataFrame) -> pl.DataFrame:
    """The accelerators rentable at scale at each quote's date (data/rental_rates.csv).

    Parameters
    ----------
    catalog : Catalog (its data folder's rental_rates.csv, else the shipped one)
    quotes : pl.DataFrame with ``quote_id`` and ``as_of`` (YYYY[-MM[-DD]], ``~`` allowed; null: every offer counts)

    Returns
    -------
    pl.DataFrame ``quote_id``, ``hardware``, ``sellers`` (distinct sellers within :data:`RENTABLE_WINDOW_DAYS`), only
    the pairs with at least :data:`RENTABLE_MIN_PROVIDERS`.

    Notes
    -----
    Region: every region counts (quotes.csv carries no region; the shipped providers sell from US and EU clouds).
    """
    from econ.tables.rental_rates import rental_rates_path

    path = rental_rates_path(catalog.data_dir)  # the file load_rental_rates reads
    try:
        stamp = (str(path), path.stat().st_mtime_ns, path.stat().st_size)  # an edited file is a new key
    except OSError:
        stamp = (str(path), None, None)
    key = ("rentable", stamp, tuple(quotes.select("quote_id", "as_of").iter_rows()))
    return _RENTABLE_CACHE.memo(catalog, key, lambda: _rentable_at_scale(catalog, quotes))


def _rentable_at_scale(catalog: Catalog, quotes: pl.DataFrame) -> pl.DataFrame:
    """:func:`rentable_at_scale`, computed."""
    from econ.tables.rental_rates import load_rental_rates, period_start

    rates = load_rental_rates(catalog.data_dir, catalog.accelerators["id"].to_list())
    sellers = rates.filter((pl.col("provider_kind") != "marketplace")
                           & ~pl.col("provider").str.contains(RENTAL_INDEX_PATTERN))
    dates = quotes.select("quote_id", pl.col("as_of").map_elements(
        lambda a: _date_or_none(a, period_start), return_dtype=pl.Date).alias("_q_date"))
    j = dates.join(sellers.select(pl.col("accelerator").alias("hardware"), "provider", "as_of_date"), how="cross")
    near = pl.col("_q_date").is_null() | ((pl.col("as_of_date") - pl.col("_q_date")).dt.total_days().abs()
                                          <= RENTABLE_WINDOW_DAYS)
    return (j.filter(near).group_by("quote_id", "hardware").agg(pl.col("provider").n_unique().alias("sellers"))
            .filter(pl.col("sellers") >= RENTABLE_MIN_PROVIDERS).sort("quote_id", "hardware"))


def _date_or_none(text, period_start):
    try:
        return None if text is None else period_start(str(text))
    except (ValueError, IndexError):
        return None


def _scope(q: pl.DataFrame, searched: pl.DataFrame, systems: pl.DataFrame, picked, economics: Economics,
           restricted: bool = False, rentable: pl.DataFrame | None = None) -> dict:
    """(quote_id, key, hardware) rows: the accelerators each quote's floor is taken from, with the scope's words.

    Own accelerator when the quote names a searched catalog accelerator with a rate in the tier; else that
    accelerator's generation (no rate in the tier, or outside the searched set); else (non-GPU system or no
    hardware) the accelerators rentable at scale at the quote's date (``rentable``: :func:`rentable_at_scale`) of the
    generations picked (every generation by default), or every accelerator of those generations when none is
    rentable then; every accelerator searched when the user restricted the search (``restricted``).
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
    rows = qq.join(acc, how="cross").filter(keep).select("quote_id", "key", "hardware", "_mode")
    if rentable is not None:  # a provider of unknown hardware: what it can rent at scale at the quote's date
        pick = rows.filter(pl.col("_mode") == "pick")
        rent = pick.join(rentable.select("quote_id", "hardware"), on=["quote_id", "hardware"], how="semi")
        none = pick.join(rent.select("quote_id").unique(), on="quote_id", how="anti")
        rows = pl.concat([rows.filter(pl.col("_mode") != "pick"), rent, none])
        rented = rent.group_by("quote_id").agg(pl.col("hardware").sort().str.join(", ").alias("_rented"))
        qq = qq.join(rented, on="quote_id", how="left").with_columns(
            pl.when((pl.col("_mode") == "pick") & pl.col("_rented").is_not_null())
            .then(pl.format("{} rentable at scale then ({})", pl.col("floor_scope"), pl.col("_rented")))
            .when(pl.col("_mode") == "pick").then(pl.format("{} (none rentable at scale then)", pl.col("floor_scope")))
            .otherwise(pl.col("floor_scope")).alias("floor_scope"))
    return {"rows": rows.select("quote_id", "key", "hardware"),
            "quotes": qq.select("quote_id", "floor_scope", "_is_system", "_system_name", "_mode")}


def _first_rows(frame: pl.DataFrame, by: tuple[str, ...], order: list[pl.Expr],
                descending: list[bool] | bool = False) -> pl.DataFrame:
    """Per group of ``by``, the first row of ``frame`` sorted by ``order`` (stable: ties keep the frame's order), all
    columns, ``by`` first: ``frame.sort(order, maintain_order=True).group_by(by).agg(pl.all().first())`` with only
    the group and order columns sorted and the winning rows gathered (the floor search's frames have ~35 columns and
    ~70,000 rows). Rows in frame order (a group-by's are in no order). tests/analyses/test_quotes_fast.py compares
    the two forms."""
    names = [f"_first_o{i}" for i in range(len(order))]
    winners = (frame.select(*by, *(e.alias(n) for e, n in zip(order, names))).with_row_index("_first_i")
               .sort(names, descending=descending, maintain_order=True)
               .group_by(*by).agg(pl.col("_first_i").first())["_first_i"].sort())
    return frame[winners.to_numpy()].select(*by, *(c for c in frame.columns if c not in by))


def _expected(band: bool) -> pl.Expr:
    """The expected blended cost the floor rule ranks by (:data:`FLOOR_RANK_RULE`): the geometric mean of the
    calibration band's ends where the engine returns it, else the blended cost. [USD/M tokens]"""
    cost = "usd_per_m_blended_tokens"
    return (pl.col(BAND_COLUMNS[0]) * pl.col(BAND_COLUMNS[1])).sqrt().fill_null(pl.col(cost)) if band else pl.col(cost)


FLOOR_PICKS_ENTRIES = 8
"""Floor searches whose picks (:func:`_floors`' chosen rows and the rows near them) are kept for reruns with other
prices, newest first (a few MB each on the shipped quotes: the rate-independent columns of the ~24,000 rows)."""

FLOOR_PICKS_BYTES = 128 * 2**20
"""Bytes of those records. [B]"""

_FLOOR_PICKS = CatalogCache(FLOOR_PICKS_ENTRIES, max_bytes=FLOOR_PICKS_BYTES, size_of=nbytes_of)
"""(id(catalog), the floor search's key) -> :func:`_record_picks`' record."""

PICK_NEAR_FRAC = 1e-9
"""Rows whose expected cost is within this fraction of a pick's (and of its calibration) are kept with the pick and
ranked again on a rerun (:func:`_repriced_floors`). [-]"""

PRICE_RATIO_TOL = 1e-12
"""How far (relative) the new-over-old ratio of a row's expected and blended cost may stray from its accelerator's
for a rerun to keep the picks: far below :data:`PICK_NEAR_FRAC` / 2, so a row outside the kept near rows cannot
overtake a pick. [-]"""


def _kept_floors(catalog: Catalog, key: tuple, keys: pl.DataFrame, res: pl.DataFrame,
                 screen: pl.DataFrame | None, configs: pl.DataFrame | None) -> dict[str, pl.DataFrame]:
    """:func:`_floors`, or on a rerun under ``key`` whose prices moved in proportion per accelerator (PUE, power
    price, tier rate, custom rate, utilization) the same picks priced again (:func:`_repriced_floors`): equal to
    :func:`_floors` exactly, which runs whenever the premise does not hold."""
    rec = _FLOOR_PICKS.get(catalog, key)
    if rec is not None:
        out = _repriced_floors(rec, res)
        if out is not None:
            return out
    record = {}
    out = _floors(keys, res, screen, configs, record)
    if record:
        _FLOOR_PICKS.put(catalog, key, record)
    return out


def _rank_values(res: pl.DataFrame, band: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """(expected cost, blended cost) of every row of ``res`` as arrays, or None where one is not finite and positive."""
    v = res.select(_expected(band).alias("e"), pl.col("usd_per_m_blended_tokens").alias("k"))
    e, k = v["e"].to_numpy(), v["k"].to_numpy()
    if e.dtype != np.float64 or k.dtype != np.float64 or not (np.isfinite(e).all() and np.isfinite(k).all()
                                                                and (e > 0).all() and (k > 0).all()):
        return None
    return e, k


def _record_picks(record: dict, jd: pl.DataFrame, res: pl.DataFrame, out: dict, band: bool) -> None:
    """Fill ``record`` with what :func:`_repriced_floors` needs to price :func:`_floors`' picks again: ``res``'s
    rate-independent columns (every column but the ``usd_*`` ones), its expected and blended costs, the picks' rows
    (``_ri`` into ``res``, ``_ji`` into ``jd``, the search's ordered rows) and, per pick, the rows that came near it:
    rows of its group and calibration whose expected cost is within :data:`PICK_NEAR_FRAC` (the ranked frames), or of
    the same fast end (the stretched frame, ranked by its fast end first). Left empty where a cost is not finite and
    positive (the rerun then searches again)."""
    if res.height == 0 or "_calibrated" not in res.columns:
        return
    vals = _rank_values(res, band)
    if vals is None:
        return
    e, k = vals
    cal = res["_calibrated"].to_numpy()
    codes = np.unique(res["hardware"].to_numpy(), return_inverse=True)[1].ravel()
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    by = ["key", "hardware"]
    near = {}
    filters = {"per_hw": pl.col("_meets") & pl.col("_allowed"),
               "bf16": pl.col("_meets") & (pl.col("_wf_in") == "bf16"),
               "any": pl.col("_meets") & pl.col("_is_default")}
    for name, keep in filters.items():
        w = out[name].select(*by, pl.col("_ri").alias("_w_ri"), pl.col("_ji").alias("_w_ji"))
        c = jd.filter(keep).select(*by, "_ri", "_ji").join(w, on=by, how="inner")
        ri, ji, wri, wji = (c[n].to_numpy() for n in ("_ri", "_ji", "_w_ri", "_w_ji"))
        m = (cal[ri] == cal[wri]) & (e[ri] <= e[wri] * (1.0 + PICK_NEAR_FRAC)) & (ji != wji)
        near[name] = (ri[m], ji[m], wri[m], wji[m])
    if band:
        w = out["stretch"].select(*by, pl.col("_ri").alias("_w_ri"), pl.col("_ji").alias("_w_ji"))
        hi = res["tokens_per_s_per_user_high"].to_numpy()
        c = (jd.filter(pl.col("_allowed") & ~pl.col("_meets")
                       & (pl.col("tokens_per_s_per_user_high") >= pl.col("speed_floor_tokens_per_s_per_user")))
             .select(*by, "_ri", "_ji").join(w, on=by, how="inner"))
        ri, ji, wri, wji = (c[n].to_numpy() for n in ("_ri", "_ji", "_w_ri", "_w_ji"))
        m = (hi[ri] == hi[wri]) & (ji != wji)
        near["stretch"] = (ri[m], ji[m], wri[m], wji[m])
    record.update(fixed=res.select(c for c in res.columns if not c.startswith("usd_")), columns=res.columns,
                  e=e, k=k, order=order, starts=starts, near=near, band=band, raw=dict(out))


def _repriced_floors(rec: dict, res: pl.DataFrame) -> dict[str, pl.DataFrame] | None:
    """:func:`_floors` of ``res`` from the picks of an earlier search (:func:`_record_picks`), or None where that
    cannot be shown to be the same answer.

    The picks hold when ``res`` has the same rows with every rate-independent column equal, and each accelerator's
    expected and blended costs all moved by one ratio (within :data:`PRICE_RATIO_TOL`): a row's costs are its
    accelerator's $/GPU-hour over its token rates (:func:`econ.engine.costs_of`), so a change of PUE, power price,
    tier rate, custom rate or utilization scales them together, and the order of one accelerator's rows (every
    ranking of :func:`_floors` is within one key and accelerator) is kept. A row outside a pick's near rows was more
    than :data:`PICK_NEAR_FRAC` above it and stays above; the near rows are ranked again on the new costs by the same
    rule and tie-break (the search's row order). Anything else (a KV-tier charge, a token-mix change, a pick
    overtaken) returns None and the search runs again."""
    band = rec["band"]
    if res.columns != rec["columns"] or res.height != rec["fixed"].height or band != (
            "tokens_per_s_per_user_high" in res.columns):
        return None
    vals = _rank_values(res, band)
    if vals is None:
        return None
    e, k = vals
    order, starts = rec["order"], rec["starts"]
    for new, old in ((e, rec["e"]), (k, rec["k"])):
        r = (new / old)[order]
        lo, hi = np.minimum.reduceat(r, starts), np.maximum.reduceat(r, starts)
        if np.any(hi - lo > PRICE_RATIO_TOL * lo):
            return None
    for name, (ri, ji, wri, wji) in rec["near"].items():
        kc, kw = k[ri], k[wri]
        later = (kc < kw) | ((kc == kw) & (ji < wji))
        if name != "stretch":
            ec, ew = e[ri], e[wri]
            later = (ec < ew) | ((ec == ew) & later)
        if later.any():
            return None
    if not res.select(rec["fixed"].columns).equals(rec["fixed"]):
        return None
    raw = rec["raw"]
    out = {n: raw[n] for n in ("speed_cap", "fastest_hw")}
    for name in ("per_hw", "stretch") if band else ("per_hw",):
        f = raw[name]
        g = res[f["_ri"].to_numpy()]
        out[name] = f.with_columns(g[c] for c in res.columns if c in f.columns)
    for name, prefix, cost_name in (("bf16", "bf16_", "bf16_cost"), ("any", "any_", "any_usd_per_m_blended_tokens")):
        f = raw[name]
        ri = f["_ri"].to_numpy()
        out[name] = f.with_columns(pl.Series(cost_name, k[ri]), pl.Series(prefix + "expected", e[ri]))
    out = {n: v.drop("_ri", "_ji", strict=False) for n, v in out.items()}
    return _assemble_floors(out, res, band)


def _floors(keys: pl.DataFrame, res: pl.DataFrame, screen: pl.DataFrame | None = None,
            configs: pl.DataFrame | None = None, record: dict | None = None) -> dict[str, pl.DataFrame]:
    """The group-bys of the floor search per (key, accelerator), computed in one collect.

    ``screen`` (from :func:`_screened_search`, with ``configs``): ``res`` holds only the rows that can be an answer,
    and the speed-capped batch of each floor deployment is read from the screen's speeds of the whole grid.

    ``per_hw`` holds, per key and accelerator, the cheapest row meeting the key's speed floor and, where none does
    but the fast end of a row's calibration band reaches it (``tokens_per_s_per_user_high``: the physics ceiling,
    :func:`speed_ceiling`), a *stretched* row (``_stretch`` = the speed-up over the model it needs): the fastest such
    deployment priced at the throughput the speed requires (cost x modeled speed / floor), its band from its own low
    end to that price.

    ``record`` (a dict, filled): which rows of ``res`` each frame picked and the rows that came near each pick, for
    :func:`_repriced_floors` (a rerun with other prices)."""
    cost = "usd_per_m_blended_tokens"
    band = "tokens_per_s_per_user_high" in res.columns
    # materialized once: every frame below reads the same rows in the same order (the firsts of ties included);
    # _ri (the row of res) and _ji (the row of j) say which rows each pick took, for record (_floor_picks)
    j = (keys.lazy().join(res.with_row_index("_ri").lazy(), on="model", how="inner")
         .with_columns((pl.col("tokens_per_s_per_user") >= pl.col("speed_floor_tokens_per_s_per_user")).alias("_meets"),
                       pl.col("_wf_in").eq_missing(pl.col("_spec")).alias("_allowed"))).collect()
    jd = j.with_row_index("_ji")
    j = jd.lazy()
    ok = j.filter(pl.col("_meets") & pl.col("_allowed"))
    # per accelerator, the row the floor rule ranks first (FLOOR_RANK_RULE: a calibrated profile first, then the
    # lowest expected cost), so the accelerator's candidate and the floor across accelerators follow one rule
    expected = _expected(band)
    cal = pl.col("_calibrated") if "_calibrated" in res.columns else pl.lit(False)
    per_hw = _first_rows(ok.collect(), ("key", "hardware"), [~cal, expected, pl.col(cost)]).lazy().with_columns(
        pl.lit(None, pl.Float64).alias("_stretch"))
    if screen is not None:
        floor_cfg = ["model", "hardware", "precision", "weight_format", "spec_method", *_DEPLOYMENT]
        wanted = (per_hw.select("key", *floor_cfg[:3], pl.col("_spec").alias("weight_format"),
                                pl.col("_spec_in").alias("spec_method"), *_DEPLOYMENT,
                                "speed_floor_tokens_per_s_per_user")
                  .join(configs.lazy().select("_cfg", *floor_cfg), on=floor_cfg, how="inner", nulls_equal=True)
                  ).collect()
        # the screen's rows of those configurations only (_cfg is the configuration's row): the same join with a
        # boolean gather instead of a hash probe of the whole screen (~700,000 rows on the shipped quotes)
        on = np.zeros(configs.height, dtype=bool)
        on[wanted["_cfg"].to_numpy()] = True
        near = screen.filter(pl.Series(on[screen["_cfg"].to_numpy()]))
        speed_cap = (wanted.lazy().join(near.lazy(), on="_cfg", how="inner")
                     .filter(pl.col("tokens_per_s_per_user") >= pl.col("speed_floor_tokens_per_s_per_user"))
                     .group_by("key", "hardware", "precision", pl.col("spec_method").alias("_spec_in"), *_DEPLOYMENT)
                     .agg(pl.col("batch_size").max().alias("_b_speed")))
    else:
        speed_cap = ok.group_by("key", "hardware", "precision", "_spec_in", *_DEPLOYMENT).agg(
            pl.col("batch_size").max().alias("_b_speed"))
    fastest_hw = (j.filter(pl.col("_allowed")).group_by("key", "hardware").agg(
        pl.col("tokens_per_s_per_user", "precision", "num_gpus", "batch_size", "layout")
        .get(pl.col("tokens_per_s_per_user").arg_max()).name.prefix("fast_"),
        (pl.col("tokens_per_s_per_user_high").max() if band else pl.col("tokens_per_s_per_user").max())
        .alias("fast_high_tokens_per_s_per_user")))
    rank = [~cal, expected, pl.col(cost)]
    bf16 = (j.filter(pl.col("_meets") & (pl.col("_wf_in") == "bf16")).sort(rank, maintain_order=True)
            .group_by("key", "hardware").agg(pl.col(cost).first().alias("bf16_cost"),
                                              cal.first().alias("bf16_calibrated"),
                                              expected.first().alias("bf16_expected"), pl.col("_ri", "_ji").first()))
    any_p = (j.filter(pl.col("_meets") & pl.col("_is_default")).sort(rank, maintain_order=True)
             .group_by("key", "hardware").agg(pl.col(cost, "precision").first().name.prefix("any_"),
                                               cal.first().alias("any_calibrated"),
                                               expected.first().alias("any_expected"), pl.col("_ri", "_ji").first()))
    lazies = [per_hw, speed_cap, fastest_hw, bf16, any_p]
    if band:  # the fastest deployment within its band where no deployment meets the speed at the model's point
        reach = j.filter(pl.col("_allowed") & ~pl.col("_meets")
                         & (pl.col("tokens_per_s_per_user_high") >= pl.col("speed_floor_tokens_per_s_per_user")))
        lazies.append(_first_rows(reach.collect(), ("key", "hardware"),
                                  [pl.col("tokens_per_s_per_user_high"), pl.col(cost)], descending=[True, False]).lazy())
    names = ("per_hw", "speed_cap", "fastest_hw", "bf16", "any", "stretch")
    out = dict(zip(names, pl.collect_all(lazies)))
    if record is not None:
        _record_picks(record, jd, res, out, band)
    out = {k: v.drop("_ri", "_ji", strict=False) for k, v in out.items()}
    return _assemble_floors(out, res, band)


def _assemble_floors(out: dict, res: pl.DataFrame, band: bool) -> dict[str, pl.DataFrame]:
    """The floors' frames from the picks of :func:`_floors` (its ``out``, without ``_ri``/``_ji``): the stretched rows
    priced at the speed they need, added to ``per_hw`` where nothing meets the speed, and the speed-capped batch."""
    cost = "usd_per_m_blended_tokens"
    out = dict(out)
    if band:
        st = out.pop("stretch").join(out["per_hw"].select("key", "hardware"), on=["key", "hardware"], how="anti")
        need = pl.col("speed_floor_tokens_per_s_per_user") / pl.col("tokens_per_s_per_user")  # speed-up needed, > 1
        st = st.with_columns(need.alias("_stretch")).with_columns(
            *(pl.col(c) / pl.col("_stretch") for c in ("usd_per_m_input_tokens", "usd_per_m_output_tokens", cost)),
            (pl.col(cost) / pl.col("_stretch")).alias(BAND_COLUMNS[1]))
        out["per_hw"] = pl.concat([out["per_hw"], st.select(out["per_hw"].columns)], how="vertical_relaxed")
    out["per_hw"] = out["per_hw"].join(out["speed_cap"], on=["key", "hardware", "precision", "_spec_in", *_DEPLOYMENT],
                                       how="left", nulls_equal=True)
    out["curves"] = res  # for the break-even batch (joined on the floor configuration only)
    return out


def _summary(q: pl.DataFrame, scope: dict, searched: pl.DataFrame, f: dict, economics: Economics,
             band: bool, profiles: pl.DataFrame, *, eagle_draft_tokens: int = EAGLE_DRAFT_TOKENS,
             slo_percentile: float | None = None) -> pl.DataFrame:
    """One row per quote (:data:`SUMMARY_COLUMNS`) with its reason (``eagle_draft_tokens``: what an EAGLE floor
    drafts per step, for the reason's words; ``slo_percentile``: the TPOT percentile the speed is held at)."""
    cost = "usd_per_m_blended_tokens"
    rows = scope["rows"]
    per_hw = f["per_hw"].join(profiles.select("hardware", "precision", "calibrated", "profile_note"),
                              on=["hardware", "precision"], how="left").with_columns(
        pl.col("calibrated").fill_null(False))
    drop = ["model", "speed_floor_tokens_per_s_per_user", "reference_precision", "_spec"]
    in_scope = rows.join(per_hw.drop(drop, strict=False), on=["key", "hardware"], how="inner").with_columns(
        pl.lit(True).alias("_in_scope"))
    # where nothing in scope reaches the speed, the floor is taken from the accelerators that do (marked)
    outside = (q.select("quote_id", "key").join(per_hw.drop(drop, strict=False), on="key", how="inner")
               .join(rows.select("quote_id", "hardware"), on=["quote_id", "hardware"], how="anti")
               .with_columns(pl.lit(False).alias("_in_scope")))
    cand = pl.concat([in_scope, outside.select(in_scope.columns)], how="vertical_relaxed")
    # the floor: in scope first; a deployment that meets the speed at the model's point before a stretched one; a
    # calibrated profile first (an uncalibrated one that runs 3-10x too fast must not win: econ.analyses.bands); then
    # the lowest expected cost: the modeled cost over the centre of its profile's held-out band (FLOOR_RANK_RULE)
    expected = (pl.when(pl.col("_stretch").is_null() & pl.col(BAND_COLUMNS[0]).is_not_null())
                .then((pl.col(BAND_COLUMNS[0]) * pl.col(BAND_COLUMNS[1])).sqrt()).otherwise(pl.col(cost))) \
        if band else pl.col(cost)
    priority = [~pl.col("_in_scope"), pl.col("_stretch").is_not_null(), ~pl.col("calibrated"), expected, pl.col(cost),
                pl.col("hardware")]
    best = cand.sort(priority, maintain_order=True).group_by("quote_id", maintain_order=True).agg(
        pl.all().exclude("quote_id", "key").first(),
        pl.col(cost).filter(pl.col("_in_scope")).max().alias("band_max_usd_per_m_blended_tokens"),
        pl.col("hardware").filter(pl.col("_in_scope")).get(pl.col(cost).filter(pl.col("_in_scope")).arg_max())
        .alias("band_max_hardware"),
        pl.col("_in_scope").sum().cast(pl.Int64).alias("num_hardware_meeting_floor"))
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
    floor_cols.update({"calibrated": "floor_calibrated", "profile_note": "floor_profile_note",
                       "_stretch": "floor_speedup_needed", "_in_scope": "_floor_in_scope"})
    best = best.rename(floor_cols)
    # fastest accelerator of each quote; exact ties (GB200 and GB300 run bf16 decode at the same modeled speed) go
    # to the first hardware id, so the screened and the exhaustive search name the same one
    first_fast = dict(by=[pl.col("fast_tokens_per_s_per_user"), pl.col("hardware")], descending=[True, False])
    fast = (rows.join(f["fastest_hw"], on=["key", "hardware"], how="inner").group_by("quote_id").agg(
        pl.col("hardware").sort_by(**first_fast).first().alias("fast_hardware"),
        pl.col("^fast_.*$").sort_by(**first_fast).first()))
    qk = q.select("quote_id", "key", "price_usd_per_m_blended_tokens")
    fast_all = (qk.join(f["fastest_hw"], on="key", how="inner").group_by("quote_id").agg(
        pl.col("fast_tokens_per_s_per_user").max().alias("all_fast_tokens_per_s_per_user"),
        pl.col("fast_high_tokens_per_s_per_user").max().alias("ceiling_tokens_per_s_per_user"),
        pl.col("hardware").sort_by(["fast_high_tokens_per_s_per_user", "hardware"], descending=[True, False]).first()
        .alias("ceiling_hardware")))
    bf16 = (rows.join(f["bf16"], on=["key", "hardware"], how="inner")
            .sort(~pl.col("bf16_calibrated"), "bf16_expected", "bf16_cost", "hardware", maintain_order=True)
            .group_by("quote_id").agg(pl.col("bf16_cost").first().alias("floor_bf16_usd_per_m_blended_tokens")))
    any_p = (rows.join(f["any"], on=["key", "hardware"], how="inner")
             .sort(~pl.col("any_calibrated"), "any_expected", "any_usd_per_m_blended_tokens", "hardware",
                   maintain_order=True)
             .group_by("quote_id").agg(pl.col("any_usd_per_m_blended_tokens", "any_precision", "hardware").first())
             .rename({"hardware": "any_hardware"}))
    everywhere = (qk.join(per_hw.select("key", "hardware", cost), on="key", how="inner").group_by("quote_id").agg(
        pl.col(cost).min().alias("else_usd_per_m_blended_tokens"),
        pl.col("hardware").get(pl.col(cost).arg_min()).alias("else_hardware")))
    clearing = _clearing(qk, per_hw, searched)
    gen = searched.select(pl.col("hardware").alias("floor_hardware"), pl.col("generation").alias("floor_generation"),
                          pl.col("capex_basis").alias("_floor_capex_basis"),
                          pl.col("_power_usd_per_hour").alias("_floor_power_usd_per_hour"))
    s = (q.join(scope["quotes"], on="quote_id", how="left")
         .join(best, on="quote_id", how="left").join(fast, on="quote_id", how="left")
         .join(fast_all, on="quote_id", how="left").join(bf16, on="quote_id", how="left")
         .join(any_p, on="quote_id", how="left").join(everywhere, on="quote_id", how="left")
         .join(clearing, on="quote_id", how="left").join(gen, on="floor_hardware", how="left"))
    if not band:
        s = s.with_columns(pl.lit(None, pl.Float64).alias("floor_usd_per_m_blended_tokens_low"),
                           pl.lit(None, pl.Float64).alias("floor_usd_per_m_blended_tokens_high"))
    if "tokens_per_s_per_user_high" not in s.columns:
        s = s.with_columns(pl.lit(None, pl.Float64).alias("tokens_per_s_per_user_high"))
    price = pl.col("price_usd_per_m_blended_tokens")
    floor = pl.col(f"floor_{cost}")
    s = s.with_columns(
        pl.col("num_hardware_meeting_floor").fill_null(0),
        gross_margin_frac(pl.col("price_usd_per_m_input_tokens"), pl.col("floor_usd_per_m_input_tokens")).alias("margin_input_frac"),
        gross_margin_frac(pl.col("price_usd_per_m_output_tokens"), pl.col("floor_usd_per_m_output_tokens")).alias("margin_output_frac"),
        gross_margin_frac(price, floor).alias("margin_blended_frac"),
        gross_margin_frac(price, pl.col("floor_usd_per_m_blended_tokens_high")).alias("margin_blended_frac_low"),
        gross_margin_frac(price, pl.col("floor_usd_per_m_blended_tokens_low")).alias("margin_blended_frac_high"),
        ((pl.col("floor_usd_per_m_blended_tokens_low") <= price)
         & (price <= pl.col("floor_usd_per_m_blended_tokens_high"))).alias("band_straddles_price"),
        # power alone: the floor's $/M at the power part of its utilized GPU-hour (cost is linear in the hour's cost)
        (floor * pl.col("_floor_power_usd_per_hour") / pl.col("floor_usd_per_gpu_hour"))
        .alias("floor_power_usd_per_m_blended_tokens"),
        pl.when(pl.col("floor_batch_size").is_null()).then(None)
        .when(pl.col("floor_speedup_needed").is_not_null()).then(pl.lit("speed"))
        .when(pl.col("floor_batch_size") >= pl.col("max_batch_size")).then(pl.lit("capacity"))
        .when((pl.col("floor_batch_size") >= pl.col("_b_speed")) & (pl.col("_b_speed") < pl.col("max_batch_size")))
        .then(pl.lit("speed")).otherwise(pl.lit("cost")).alias("floor_batch_limit"),
        pl.col("any_usd_per_m_blended_tokens").alias("floor_any_precision_usd_per_m_blended_tokens"),
        pl.col("any_precision").alias("floor_any_precision"),
        pl.lit(cost_basis_label(economics.basis)).alias("cost_basis"),
        pl.lit(float(economics.utilization_frac)).alias("utilization_frac"),
    )
    s = s.with_columns(  # a non-GPU system's quote too: comparable when a GPU deployment reaches its speed
        band_verdict_expr(price, floor, pl.col("floor_usd_per_m_blended_tokens_low"),
                          pl.col("floor_usd_per_m_blended_tokens_high")).alias("verdict"),
        margin_words(price, floor, pl.col("floor_power_usd_per_m_blended_tokens")).alias("margin_text"),
        _assumes(slo_percentile).alias("floor_assumes"))

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
    curve = (s.filter(pl.col("floor_speedup_needed").is_null())  # a stretched floor has no batch to spare
             .select("quote_id", "model", "floor_hardware", "floor_precision", *(f"floor_{c}" for c in _DEPLOYMENT),
                     "_wf_in", "_spec_in", "price_usd_per_m_blended_tokens").drop_nulls("floor_hardware"))
    curves = f["curves"]
    if callable(curves):  # screened search: the floor deployments' batch curves, evaluated now
        curves = curves(curve.select("model", pl.col("floor_hardware").alias("hardware"),
                                     pl.col("floor_precision").alias("precision"),
                                     *(pl.col(f"floor_{c}").alias(c) for c in _DEPLOYMENT),
                                     pl.col("_wf_in").alias("weight_format"),
                                     pl.col("_spec_in").alias("spec_method")).unique())
    curve = (curve
             .join(curves, left_on=["model", "floor_hardware", "floor_precision",
                                    *(f"floor_{c}" for c in _DEPLOYMENT), "_wf_in", "_spec_in"],
                   right_on=["model", "hardware", "precision", *_DEPLOYMENT, "_wf_in", "_spec_in"], how="inner",
                   nulls_equal=True)
             .filter(pl.col(cost) <= pl.col("price_usd_per_m_blended_tokens"))
             .group_by("quote_id").agg(pl.col("batch_size", "tokens_per_s_per_user")
                                       .get(pl.col("batch_size").arg_min()).name.prefix("_be_")))
    s = s.join(curve, on="quote_id", how="left").with_columns(
        pl.col("_be_batch_size").alias("breakeven_batch_size"),
        pl.col("_be_tokens_per_s_per_user").alias("breakeven_tokens_per_s_per_user"))
    pieces, reason = _reason(eagle_draft_tokens)
    return (s.with_columns(*pieces).with_columns(reason.alias("reason"))
            .drop([p.meta.output_name() for p in pieces]))


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


_WHOLE_MAX = 1e15
"""Largest magnitude written as a whole number; beyond it (a margin of -1.7e21% at a 1e-20 price, inside the price's
range) a number is written with 3 significant figures, never cast to Int64 (which overflows at 9.2e18)."""


def _whole(x: pl.Expr) -> pl.Expr:
    """A number rounded to a whole one, as text, at every finite magnitude (issue 21: Int64 cast overflow)."""
    fits = x.abs() < _WHOLE_MAX
    exp = x.abs().clip(1.0, None).log10().floor()  # beyond 1e15: mantissa and exponent, "1.71e19"
    sci = pl.format("{}e{}", (x / pl.lit(10.0).pow(exp)).round(2).cast(pl.String).str.replace(r"\.0$", ""),
                    exp.clip(0, 400).cast(pl.Int64))
    return pl.when(fits).then(x.round(0).clip(-_WHOLE_MAX, _WHOLE_MAX).cast(pl.Int64).cast(pl.String)).otherwise(sci)


def _t(x: pl.Expr, sig: int = 3) -> pl.Expr:
    """Number -> short text (3 significant figures, whole numbers above 1000, no trailing '.0')."""
    big = x.abs() >= 10 ** sig
    txt = pl.when(big).then(_whole(x)).otherwise(x.round_sig_figs(sig).cast(pl.String))
    return txt.str.replace(r"\.0$", "")


def _usd_hour(x: pl.Expr) -> pl.Expr:
    """$/GPU-hour as text: two decimals under $100 ($2.00, $3.27), whole dollars above."""
    cents = (x.clip(-_WHOLE_MAX, _WHOLE_MAX) * 100).round(0).cast(pl.Int64)
    small = pl.format("${}.{}", (cents // 100).cast(pl.String), (cents % 100).cast(pl.String).str.zfill(2))
    return pl.when(x >= 100).then(pl.format("${}", _whole(x))).otherwise(small)


def _pct(x: pl.Expr) -> pl.Expr:
    return pl.format("{}%", _whole(x * 100))


def _bounded_pct(x: pl.Expr) -> pl.Expr:
    """A margin as a percent, or "under -100%" below it (a margin is bounded above by 100%, not below)."""
    return pl.when(x < -1.0).then(pl.lit("under -100%")).otherwise(_pct(x))


def margin_words(price: pl.Expr, floor: pl.Expr, power: pl.Expr) -> pl.Expr:
    """A quote's blended margin in bounded words: "margin 63%", "price 12x below the floor", or "price below the
    power cost alone ($0.010/M against $0.031/M of power)" (never "-110570%").

    Parameters
    ----------
    price, floor, power : pl.Expr, Float64 [USD/M blended tokens]; ``power`` is the floor's power cost alone
        (null: unknown)

    Returns
    -------
    pl.Expr, String (null without a floor). A margin below -100% (floor above twice the price) reads as the ratio.
    """
    m = gross_margin_frac(price, floor)
    usd = lambda x: pl.format("${}/M", _t(x))  # noqa: E731
    return (pl.when(floor.is_null()).then(pl.lit(None, pl.String))
            .when(power.is_not_null() & (price < power)).then(pl.format(
                "price below the power cost alone ({} against {} of power)", usd(price), usd(power)))
            .when(m < -1.0).then(pl.format("price {}x below the floor", _t(floor / price, 2)))
            .otherwise(pl.format("margin {}", _pct(m))))


def _assumes(slo_percentile: float | None = None) -> pl.Expr:
    """What the floor assumed, in one line: hardware (generation, profile), weight format, speed (its source and,
    when set, the TPOT percentile it is held at) and cost tier; null without a floor."""
    c = pl.col
    w_fmt = pl.coalesce(c("floor_weight_format"), c("floor_precision"))
    weights = (pl.when(c("floor_expert_weight_format").is_not_null() & (c("floor_expert_weight_format") != w_fmt))
               .then(pl.format("{} weights ({} experts)", w_fmt, c("floor_expert_weight_format")))
               .otherwise(pl.format("{} weights", w_fmt)))
    prof = pl.when(c("floor_profile_note").fill_null("") != "").then(pl.format("; {}", c("floor_profile_note"))) \
        .otherwise(pl.lit(""))
    spec = pl.when(c("floor_spec_method").is_not_null() & (c("floor_spec_method") != "none")).then(
        pl.format(", {} speculative decoding", c("floor_spec_method").replace({"eagle": "EAGLE-3"})
                  .str.to_uppercase())).otherwise(pl.lit(""))
    src = pl.when(c("speed_floor_source") == "quote").then(pl.lit("published")).otherwise(pl.lit("assumed"))
    if slo_percentile is not None:
        src = pl.format("{}, held at p{} TPOT", src, pl.lit(f"{slo_percentile:g}"))
    return pl.when(c("floor_hardware").is_not_null()).then(pl.format(
        "{} ({}{}), {} matmuls, {}{}, {} tokens/s per user ({}), {} tier", c("floor_hardware"),
        c("floor_generation"), prof, c("floor_precision"), weights, spec, _t(c("speed_floor_tokens_per_s_per_user")),
        src, c("cost_basis")))


@functools.lru_cache(maxsize=8)
def _reason(eagle_draft_tokens: int = EAGLE_DRAFT_TOKENS) -> tuple[tuple[pl.Expr, ...], pl.Expr]:
    """The analyst's sentences for each quote, built from the summary columns (no Python row loop).

    The expression depends on ``eagle_draft_tokens`` only and a Polars expression is immutable, so it is built once
    per value (kept: 8; building its ~300 nodes cost ~25 ms of Python per check).

    Returns
    -------
    (pieces, reason): the texts the sentences repeat (a price, a floor, the speed, the margins: ``_r_``-prefixed
    columns), to be added first (``frame.with_columns(*pieces)``), and the reason expression that reads them (an
    eager ``with_columns`` does not share a sub-expression: each repeat was formatted again, ~10 ms a check; the
    text is the same, tests/analyses/test_quotes_fast.py).

    Order: verdict and margins (or why there is no GPU floor to compare with); the floor deployment, its
    scope and what stops a cheaper one (the binding wall); the cost tier and rate; the precision assumption
    and the floors at other precisions; for below-floor quotes, what would be needed; the band across
    accelerators; the calibration band; the generations on which the price clears; the break-evens.
    """
    c = pl.col
    usd = lambda x: pl.format("${}/M", _t(x))  # noqa: E731
    gh = _usd_hour
    pieces: dict[str, pl.Expr] = {}

    def once(name: str, expr: pl.Expr) -> pl.Expr:  # a text used more than once: a column computed once
        pieces[f"_r_{name}"] = expr
        return c(f"_r_{name}")

    price, floor = c("price_usd_per_m_blended_tokens"), c("floor_usd_per_m_blended_tokens")
    usd_price, usd_floor = once("price", usd(price)), once("floor", usd(floor))
    pct_margin, t_ratio = once("margin", _pct(c("margin_blended_frac"))), once("ratio", _t(c("_ratio")))
    pct_in, pct_out = (once("in", _bounded_pct(c("margin_input_frac"))),
                       once("out", _bounded_pct(c("margin_output_frac"))))
    usd_lo = once("lo", usd(c("floor_usd_per_m_blended_tokens_low")))
    usd_hi = once("hi", usd(c("floor_usd_per_m_blended_tokens_high")))
    has_floor = floor.is_not_null()
    v = c("verdict")
    speed_src = pl.when(c("speed_floor_source") == "quote").then(pl.lit("the quote's published speed")) \
        .otherwise(pl.lit("assumed as the quote publishes none"))
    speed_txt = once("speed", pl.format("{} tokens/s per user, {}", _t(c("speed_floor_tokens_per_s_per_user")),
                                        speed_src))
    margins = once("margins", pl.format("input {}, output {}", _bounded_pct(c("margin_input_frac")),
                                        _bounded_pct(c("margin_output_frac"))))  # pieces cannot read pieces
    ceiling = pl.format(
        "no catalog GPU reaches {} even at the fast end of its calibration band with speculative decoding (the "
        "physics ceiling econ can build is {} tokens/s per user, on {})", speed_txt,
        _t(c("ceiling_tokens_per_s_per_user")), c("ceiling_hardware"))
    system = pl.format("{} serves {} on {} ({}), hardware without a catalog cost basis (provider_systems.csv)",
                       c("provider"), c("model"), c("_system_name"), c("hardware"))
    system_ref = pl.when(c("_is_system") & has_floor).then(pl.format(
        " {}; a GPU deployment reaches its speed ({}), so the GPU floor applies.", system, speed_txt))
    band_txt = pl.format("{} to {}", usd_lo, usd_hi)
    head = (
        pl.when(~has_floor & c("_is_system")).then(pl.format(
            "not-gpu-comparable: {}, and {}.", system,
            pl.coalesce(ceiling, pl.lit("no catalog GPU holds its weights"))))
        .when(~has_floor & c("all_fast_tokens_per_s_per_user").is_null()).then(pl.format(
            "not-gpu-comparable: no catalog accelerator holds {} with {} weights or wider on up to {} accelerators (or "
            "has a rate in this cost tier), so there is no floor to compare with.", c("model"),
            c("reference_precision"), pl.lit(MAX_GPUS)))
        .when(~has_floor).then(pl.format("not-gpu-comparable: {}; the quote needs hardware outside the catalog "
                                         "(wafer-scale SRAM, LPU).", ceiling))
        .when(v == "undetermined").then(pl.format(
            "undetermined: the blended price {} lies inside the floor's calibration band {} (point {}, {}), so the "
            "model cannot tell whether it covers its cost.", usd_price, band_txt, usd_floor, c("margin_text")))
        .when(v == "below-floor").then(pl.format(
            "below-floor: the blended price {} is under the modeled floor {} ({}; input {}, output {}): no "
            "accelerator in scope serves {} that cheaply at this speed with {} weights or wider.",
            usd_price, usd_floor, c("margin_text"), pct_in, pct_out, c("model"), c("reference_precision")))
        .when(v == "thin").then(pl.format(
            "thin: the blended price {} is only {}x the modeled floor {}, a gross margin of {} (under {}; {}).",
            usd_price, t_ratio, usd_floor, pct_margin, _pct(pl.lit(THIN_MARGIN_FRAC)),
            margins))
        .when(v == "plausible").then(pl.format(
            "plausible: the blended price {} is {}x the modeled floor {}, a gross margin of {} ({}).",
            usd_price, t_ratio, usd_floor, pct_margin, margins))
        .otherwise(pl.format(
            "rich: the blended price {} is {}x the modeled floor {}, a gross margin of {} (over {}; {}).",
            usd_price, t_ratio, usd_floor, pct_margin, _pct(pl.lit(RICH_MARGIN_FRAC)),
            margins))
    )
    head = pl.concat_str([head, system_ref], ignore_nulls=True)
    power = pl.when(has_floor & (price < c("floor_power_usd_per_m_blended_tokens"))).then(pl.format(
        " The price is below the power cost alone: the floor deployment's electricity ({} per utilized GPU-hour, "
        "all-in power x PUE x $/kWh) comes to {} per M blended tokens, whatever the hardware costs.",
        gh(c("_floor_power_usd_per_hour")), usd(c("floor_power_usd_per_m_blended_tokens"))))
    stretch = pl.when(c("floor_speedup_needed").is_not_null()).then(pl.format(
        " The speed is reached only at the fast end of the calibration band: the deployment must run {}x faster than "
        "modeled (the band allows up to {}x), and the floor is priced at the throughput that speed needs.",
        _t(c("floor_speedup_needed")), _t(c("tokens_per_s_per_user_high") / c("floor_tokens_per_s_per_user"))))
    outside = pl.when(has_floor & ~c("_floor_in_scope").fill_null(True)).then(pl.format(
        " No accelerator in scope ({}) reaches the speed; the floor is taken on {}, outside it.", c("floor_scope"),
        c("floor_hardware")))
    uncal = pl.when(has_floor & ~c("floor_calibrated").fill_null(True)).then(pl.format(
        " The floor's efficiency profile is a {}: no accelerator with a calibrated profile meets the speed.",
        c("floor_profile_note")))
    limit = (pl.when(c("floor_batch_limit") == "speed").then(pl.format("the speed floor stops a larger batch ({})",
                                                                      speed_txt))
             .when(c("floor_batch_limit") == "capacity").then(pl.format(
                 "the KV-cache capacity wall stops a larger batch (speed floor: {})", speed_txt))
             .otherwise(pl.format("a larger batch costs more per token (speed floor: {})", speed_txt)))
    spec = (pl.when(c("floor_spec_method") == "mtp").then(pl.format(
        ", MTP speculative decoding (the model's own module, {} tokens per step)", _t(c("floor_accepted_tokens_per_step"))))
        .when(c("floor_spec_method") == "eagle").then(pl.format(
            ", EAGLE-3 speculative decoding ({} drafted, {} accepted per step)", pl.lit(eagle_draft_tokens),
            _t(c("floor_accepted_tokens_per_step"))))
        .when(c("floor_spec_method").is_not_null() & (c("floor_spec_method") != "none")).then(pl.format(
            ", {} speculative decoding ({} tokens per step)", c("floor_spec_method").str.to_uppercase(),
            _t(c("floor_accepted_tokens_per_step")))))
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
        c("num_hardware_meeting_floor"), usd_floor, c("floor_hardware"), usd(c("band_max_usd_per_m_blended_tokens")),
        c("band_max_hardware")))
        .when(c("num_hardware_meeting_floor") == 1).then(pl.format(" Only {} in scope meets the speed.",
                                                                    c("floor_hardware"))))
    lo, hi = c("floor_usd_per_m_blended_tokens_low"), c("floor_usd_per_m_blended_tokens_high")
    cal = pl.when(lo.is_not_null() & hi.is_not_null()).then(pl.format(
        " Calibration band of the floor: {} to {} (margin {} to {}); {}.", usd_lo, usd_hi,
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
    return tuple(e.alias(n) for n, e in pieces.items()), pl.concat_str(
        [head, power, deploy, stretch, outside, uncal, basis, precision_txt, alt_bf16, alt_low, pl.lit("."), needs,
         hw_band, cal, clear, breakeven], ignore_nulls=True)


def _per_hardware(q: pl.DataFrame, scope: dict, searched: pl.DataFrame, f: dict, economics: Economics,
                  profiles: pl.DataFrame | None = None) -> pl.DataFrame:
    tier = cost_basis_label(economics.basis)
    what = ("no all_in_capex_usd in the catalog (not sold; use a rental or TCO tier)" if economics.basis == "owned"
            else f"no {tier} rate for this accelerator in the catalog")
    hw = searched.select("hardware", "generation", (~pl.col("has_rate")).alias("_no_price"))
    per = f["per_hw"]
    if BAND_COLUMNS[0] not in per.columns:
        per = per.with_columns(pl.lit(None, pl.Float64).alias(c) for c in BAND_COLUMNS)
    floors = per.select("key", "hardware", "layout", *_DEPLOYMENT, "precision", "batch_size",
                        "tokens_per_s_per_user", "binding_wall", "usd_per_gpu_hour", "usd_per_m_input_tokens",
                        "usd_per_m_output_tokens", "usd_per_m_blended_tokens", *BAND_COLUMNS,
                        pl.col("_stretch").alias("speedup_needed"))
    if profiles is not None:
        floors = floors.join(profiles.select("hardware", "precision", "calibrated"), on=["hardware", "precision"],
                             how="left")
    else:
        floors = floors.with_columns(pl.lit(None, pl.Boolean).alias("calibrated"))
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


def _speed_within_physics(summary: pl.DataFrame) -> None:
    """A quote that names a catalog GPU and publishes a speed no deployment of that GPU reaches, even at the fast end
    of its calibration band with speculative decoding, states the impossible: InvalidInputError naming the quote, the
    field, the value and the valid range (a non-GPU system's speed is a verdict, not an error).

    Raises
    ------
    InvalidInputError
    """
    bad = summary.filter((pl.col("_mode") == "own") & (pl.col("speed_floor_source") == "quote")
                         & pl.col("fast_high_tokens_per_s_per_user").is_not_null()
                         & (pl.col("speed_floor_tokens_per_s_per_user") > pl.col("fast_high_tokens_per_s_per_user")))
    if bad.height:
        r = bad.row(0, named=True)
        more = f" (and {bad.height - 1} more quote(s))" if bad.height > 1 else ""
        raise InvalidInputError(
            f"quote {r['quote_id']}: output_tokens_per_s_per_user={r['speed_floor_tokens_per_s_per_user']:g} is outside "
            f"(0, {r['fast_high_tokens_per_s_per_user']:.0f}] tokens/s per user: the fastest deployment of {r['model']} "
            f"on its {r['hardware']} econ can build, speculative decoding and the fast end of the calibration band "
            f"included; a faster quote does not run on that GPU{more}")


def _require_finite(frame: pl.DataFrame, what: str) -> None:
    """Nulls are explicit (no deployment); NaN or inf in a result is a bug and never reaches a table."""
    cols = [c for c, dt in frame.schema.items() if dt.is_float() and not c.startswith("_")]
    if not cols:
        return
    finite = frame.select(pl.col(c).is_finite().all() for c in cols).row(0)  # nulls ignored; one pass, one call
    for c, ok in zip(cols, finite):
        if ok is False:
            raise InvalidInputError(f"{what}: column {c} is not finite for some quote (model bug; please report)")
