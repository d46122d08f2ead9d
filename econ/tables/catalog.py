"""Data tables: `data/*.csv` -> validated Polars frames, converted once to SI units.

Each table has an explicit schema (column -> dtype, required or optional, valid range). Loading
fails with one :class:`~econ.errors.DataError` that lists every bad cell as ``file, row id, column``
(never a silent drop, never a half-loaded table). Datasheet units stay in the CSV so a reviewer can
check a row against its source; :func:`load_catalog` adds the SI columns the core uses
(``hbm_bandwidth_bytes_per_s``, ``bf16_peak_flop_per_s``, ...). Column meanings: ``data/README.md``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from econ import units
from econ import vocabulary as V

from econ.tables import rules
from econ.assumptions import PROFILE_PARAMETERS  # noqa: F401  (re-exported: the fields a calibration profile sets)
from econ.errors import DataError, UnknownIdError
from econ.tables.uploads import drop_blank_rows, read_table_file

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[2] / "data"

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


@dataclass(frozen=True, slots=True)
class Col:
    """One column of a table schema: dtype, whether it may be empty, and its valid range."""

    dtype: type[pl.DataType] | pl.DataType
    required: bool = True
    lo: float | None = None
    hi: float | None = None
    lo_inclusive: bool = True
    unit: str = ""


def _num(lo=None, hi=None, *, required=True, lo_inclusive=True, unit="", dtype=pl.Float64) -> Col:
    return Col(dtype, required, lo, hi, lo_inclusive, unit)


def _vocabulary_col(column: str, *, required: bool = True, dtype=pl.Float64) -> Col:
    """The column a custom accelerator's field stands for, with that field's one range
    (:func:`econ.vocabulary.custom_column_ranges`): a typed chip and a shipped row obey the same bounds. A column that
    :data:`econ.tables.rules.PLAUSIBLE` states (with the same range and the reason for it) is checked there alone, so
    one bad cell is one message."""
    f = V.custom_column_ranges()[column]
    stated = any(column.endswith(k) if k.startswith("_") else column == k for k in rules.PLAUSIBLE["accelerators"])
    if stated:
        return Col(dtype, required, unit=f.unit)
    return Col(dtype, required, f.lo, f.hi, not f.lo_open, f.unit)


TXT = Col(pl.String)
TXT_OPT = Col(pl.String, required=False)

ACCELERATOR_SCHEMA: dict[str, Col] = {
    "id": TXT, "display_name": TXT, "vendor": TXT,
    "year": _num(2015, 2035, dtype=pl.Int64),
    "generation": TXT_OPT,
    "bf16_dense_tflop_per_s": _vocabulary_col("bf16_dense_tflop_per_s"),
    "fp8_dense_tflop_per_s": _vocabulary_col("fp8_dense_tflop_per_s", required=False),
    "fp4_dense_tflop_per_s": _vocabulary_col("fp4_dense_tflop_per_s", required=False),
    "hbm_capacity_gib": _vocabulary_col("hbm_capacity_gib"),
    "hbm_bandwidth_tb_per_s": _vocabulary_col("hbm_bandwidth_tb_per_s"),
    "tdp_w": _num(0, 1e5, lo_inclusive=False, unit="W"),
    "all_in_power_w": _vocabulary_col("all_in_power_w"),
    "scale_up_domain_size": _vocabulary_col("scale_up_domain_size", dtype=pl.Int64),
    "scale_up_bandwidth_gb_per_s": _vocabulary_col("scale_up_bandwidth_gb_per_s"),
    "scale_up_tech": TXT,
    "scale_up_topology": TXT_OPT,
    "scale_out_bandwidth_gb_per_s": _vocabulary_col("scale_out_bandwidth_gb_per_s"),
    "scale_out_nic": TXT,
    "purchase_price_usd": _num(0, 1e7, lo_inclusive=False, required=False, unit="USD"),
    "all_in_capex_usd": _vocabulary_col("all_in_capex_usd", required=False),
    "capex_basis": TXT_OPT,
    "rental_usd_per_hour": _vocabulary_col("rental_usd_per_hour", required=False),
    "rental_tier": TXT_OPT,
    "rental_basis": TXT_OPT,
    # cost tiers (issue 10), all per accelerator-hour at 100% utilization; data/README.md says which source each is
    "tco_hyperscaler_usd_per_hour": _num(0, 1e3, lo_inclusive=False, required=False, unit="USD/h"),
    "tco_neocloud_usd_per_hour": _num(0, 1e3, lo_inclusive=False, required=False, unit="USD/h"),
    "rental_3yr_usd_per_hour": _num(0, 1e3, lo_inclusive=False, required=False, unit="USD/h"),
    "sa_all_in_power_w": _num(0, 1e5, lo_inclusive=False, required=False, unit="W"),
    "source_tco": TXT_OPT, "as_of_tco": TXT_OPT,
    "rental_on_demand_hyperscaler_usd_per_hour": _num(0, 1e3, lo_inclusive=False, required=False, unit="USD/h"),
    "rental_on_demand_neocloud_usd_per_hour": _num(0, 1e3, lo_inclusive=False, required=False, unit="USD/h"),
    "rental_contract_usd_per_hour": _num(0, 1e3, lo_inclusive=False, required=False, unit="USD/h"),
    "rental_contract_basis": TXT_OPT, "rental_tiers_basis": TXT_OPT,
    "source_rental_tiers": TXT_OPT, "as_of_rental_tiers": TXT_OPT,
    # softmax exponentials (issue 17.7): special-function-unit throughput, empty = not modelled (no limit)
    "exp_tera_per_s": _num(0, 1e4, lo_inclusive=False, required=False, unit="1e12 exponentials/s"),
    "source_exp": TXT_OPT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}

COMMON_CAPEX_BASIS = "market-listing"
"""The one capex basis of ``all_in_capex_usd`` (issue 10): all-in IT capex per accelerator at market (reseller
listing / quote) prices, anchored on the sourced H100 cluster build; rows whose ``capex_basis`` differs are
flagged (``data/README.md``)."""
MARKET_DERIVED = "market-derived"
"""The common basis reached without a reseller listing of the chip (issue 18): an analyst's OEM-channel system
price through the same H100 ratio, or an analyst's price ratio to a market-listing row; each row's ``notes``
give the arithmetic. Comparable with ``market-listing``."""
COMMON_CAPEX_BASES = frozenset({COMMON_CAPEX_BASIS, MARKET_DERIVED})
"""Capex bases on the one common (comparable) basis; any other ``capex_basis`` is flagged."""
CAPEX_BASES = frozenset({*COMMON_CAPEX_BASES, "hyperscale-estimate", "vendor-list", "press-reported"})
RENTAL_TIERS = frozenset({"on-demand-neocloud", "on-demand-hyperscaler", "rental-3yr", "contract", "derived-estimate"})

PROVIDER_DISCLOSURE_SCHEMA: dict[str, Col] = {
    "id": TXT, "provider": TXT, "disclosure": TXT, "item": TXT,
    "value": _num(0, 1e15, required=False), "unit": TXT_OPT,
    "low": _num(0, 1e15, required=False), "high": _num(0, 1e15, required=False), "value_text": TXT_OPT,
    "model": TXT_OPT, "hardware": TXT_OPT, "period": TXT, "quote": TXT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/provider_disclosures.csv``: providers' own published serving economics, one figure per row (long format;
``data/README.md``). Not part of :data:`TABLES`: read it with ``read_table(path, PROVIDER_DISCLOSURE_SCHEMA, "id")``."""

_I = dict(dtype=pl.Int64)
MODEL_SCHEMA: dict[str, Col] = {
    "id": TXT, "display_name": TXT,
    "total_params_b": _num(0, 1e5, lo_inclusive=False, unit="B params"),
    "active_params_b": _num(0, 1e5, lo_inclusive=False, unit="B params"),
    "num_layers": _num(1, 1000, **_I),
    "hidden_size": _num(1, 1e6, **_I),
    "num_attention_heads": _num(1, 1e4, **_I),
    "num_kv_heads": _num(1, 1e4, **_I),
    "head_dim": _num(1, 1e4, **_I),
    "attention_type": TXT,
    "q_lora_rank": _num(1, 1e6, required=False, **_I),
    "kv_lora_rank": _num(1, 1e6, required=False, **_I),
    "qk_nope_head_dim": _num(1, 1e4, required=False, **_I),
    "qk_rope_head_dim": _num(1, 1e4, required=False, **_I),
    "v_head_dim": _num(1, 1e4, required=False, **_I),
    "sliding_window_tokens": _num(1, 1e8, required=False, **_I),
    "num_sliding_layers": _num(0, 1000, **_I),
    "num_experts": _num(0, 1e5, **_I),
    "experts_per_token": _num(0, 1e4, **_I),
    "num_shared_experts": _num(0, 1e3, **_I),
    "first_k_dense_layers": _num(0, 1000, **_I),
    "moe_layer_interval": _num(1, 100, **_I),
    "moe_intermediate_size": _num(0, 1e6, **_I),
    "shared_expert_intermediate_size": _num(0, 1e6, **_I),
    "dense_intermediate_size": _num(0, 1e6, **_I),
    "vocab_size": _num(1, 1e8, **_I),
    "tie_word_embeddings": Col(pl.Boolean),
    "max_context_tokens": _num(1, 1e9, **_I),
    "native_weight_dtype": TXT,
    "mtp_modules": _num(0, 16, required=False, **_I),
    "mtp_acceptance": _num(0, 1, required=False, unit="share of drafted tokens accepted"),
    # a published EAGLE-3 draft head (issue 17.8): its draft length and per-token acceptance; empty = none
    "eagle_draft_tokens": _num(1, 16, required=False, **_I),
    "eagle_acceptance": Col(pl.Float64, False, 0, 1, True, "share of drafted tokens accepted"),
    # sparse attention (DeepSeek-V3.2 DSA, issue 17.5): the lightning indexer; empty = dense attention
    "index_n_heads": _num(1, 1e4, required=False, **_I),
    "index_head_dim": _num(1, 1e4, required=False, **_I),
    "index_topk": _num(1, 1e8, required=False, **_I),
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}

POWER_PRICE_SCHEMA: dict[str, Col] = {
    "region_id": TXT, "region": TXT, "segment": TXT,
    "usd_per_kwh": _num(0, 10, lo_inclusive=False, unit="USD/kWh"),
    "local_price": _num(0, 1e6, required=False), "local_unit": TXT_OPT,
    "fx_local_per_usd": _num(0, 1e6, required=False, lo_inclusive=False),
    "period": TXT_OPT, "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}

FACILITY_SCHEMA: dict[str, Col] = {
    "id": TXT, "description": TXT,
    "pue": _num(1, 5, unit="ratio"),
    "build_usd_per_mw_it": _num(0, 1e9, lo_inclusive=False, unit="USD/MW"),
    "cooling": TXT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}

BUILDOUT_CAPEX_SCHEMA: dict[str, Col] = {
    "id": TXT, "category": TXT, "value": _num(0, 1e12, unit="(see unit column)"), "unit": TXT, "description": TXT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/buildout_capex.csv``: itemized IT unit prices (issue 13; read by ``econ.economics.buildout.buildout_prices``).
Loaded beside, not in, :data:`TABLES` (the dashboard's table editor lists only those)."""

TABLES: dict[str, tuple[str, dict[str, Col], str]] = {
    # name: (file, schema, id column)
    "accelerators": ("accelerators.csv", ACCELERATOR_SCHEMA, "id"),
    "models": ("models.csv", MODEL_SCHEMA, "id"),
    "power_prices": ("power_prices.csv", POWER_PRICE_SCHEMA, "region_id"),
    "facilities": ("facilities.csv", FACILITY_SCHEMA, "id"),
}


def _checkpoint_formats() -> set[str]:
    from econ.physics.precision import CHECKPOINT_FORMATS  # the formats a released checkpoint is read in
    return set(CHECKPOINT_FORMATS)


ALIAS_KINDS = frozenset({"litellm-key", "provider-model-name"})
"""``model_aliases.csv`` ``kind``: a LiteLLM price-table key, or a provider's own model name (data/README.md)."""

SCALE_UP_TOPOLOGIES: dict[str, str] = {
    "switch": "a switch gives any pair of the domain the accelerator's whole scale-up bandwidth (NVSwitch)",
    "mesh": "direct full mesh: each accelerator's links split evenly over its peers, so a group of g of D reaches its "
            "peers over (g - 1) / (D - 1) of its bandwidth (econ.physics.communication.mesh_bandwidth_share)",
    "torus": "torus of point-to-point links (TPU ICI, NeuronLink): modelled as a switch at the per-chip bandwidth",
    "bridge": "a bridge between the cards of a domain of 2: the pair gets the bridge's bandwidth",
    "none": "no scale-up link (a domain of 1; GPU-to-GPU traffic on the host's PCIe is the scale-up bandwidth)",
}
"""``accelerators.csv`` ``scale_up_topology`` -> how the engine shares the scale-up bandwidth (empty = switch)."""

_ENUMS = {("models", "attention_type"): {"mha", "gqa", "mla"}, ("facilities", "cooling"): {"air", "liquid"},
          ("accelerators", "scale_up_topology"): set(SCALE_UP_TOPOLOGIES),
          ("accelerators", "capex_basis"): CAPEX_BASES, ("accelerators", "rental_tier"): RENTAL_TIERS,
          ("accelerators", "generation"): set(V.GENERATIONS), ("models", "native_weight_dtype"): _checkpoint_formats(),
          ("model_aliases", "kind"): ALIAS_KINDS}

ALIAS_SCHEMA: dict[str, Col] = {
    "alias": TXT, "model": TXT, "provider": TXT_OPT, "kind": TXT, "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/model_aliases.csv``: a provider's or LiteLLM's model name -> a catalog model id (read by
:func:`econ.tables.litellm.load_aliases`; each alias once, compared case-insensitively)."""


CALIBRATION_SCHEMA: dict[str, Col] = {
    "profile": TXT, "generation": TXT, "precision": TXT,
    "eta_bw": _num(1e-3, 1.0), "eta_bw_se": _num(0, 10, required=False),
    "eta_flop": _num(1e-3, 1.0), "eta_flop_se": _num(0, 10, required=False),
    "eta_prefill": _num(1e-3, 1.0), "eta_prefill_se": _num(0, 10, required=False),
    "overhead_s": _num(0, 1.0, unit="s"), "overhead_s_se": _num(0, 10, required=False),
    "sequence_overhead_s": _num(0, 1e-2, unit="s"), "sequence_overhead_s_se": _num(0, 10, required=False),
    "kernel_latency_s": _num(0, 1e-3, unit="s"), "kernel_latency_s_se": _num(0, 10, required=False),
    "eta_routed_flop_frac": _num(1e-2, 1.0), "eta_routed_flop_frac_se": _num(0, 10, required=False),
    "moe_tile_rows": _num(1, 512, unit="rows"), "moe_tile_rows_se": _num(0, 1000, required=False),
    "moe_gemm_half_width": _num(0, 1e6, unit="columns"), "moe_gemm_half_width_se": _num(0, 1e6, required=False),
    "overlap_frac": _num(0, 1.0), "overlap_frac_se": _num(0, 10, required=False),
    "tpot_tail_factor": _num(1, 10), "tpot_tail_factor_se": _num(0, 10, required=False),
    "cpu_overlap_frac": _num(0, 1.0), "cpu_overlap_frac_se": _num(0, 10, required=False),
    "log_ratio_p10": _num(-5, 5, unit="ln(measured/predicted)"),
    "log_ratio_p90": _num(-5, 5, unit="ln(measured/predicted)"),
    "cv_median_abs_error_frac": _num(0, 100, required=False), "cv_p90_abs_error_frac": _num(0, 100, required=False),
    "n_cases": _num(0, 1e6, **{"dtype": pl.Int64}), "n_groups": _num(0, 1e6, **{"dtype": pl.Int64}),
    "fallback_from": TXT_OPT, "fit_date": TXT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/calibration.csv``: one efficiency profile per (accelerator generation, matmul precision), written by
``econ calibrate`` (data/README.md). ``profile`` = "<generation>-<precision>"; ``log_ratio_p10/p90`` are
quantiles of ln(measured / predicted) of the held-out cases (grouped cross-validation): the band every answer
carries; ``fallback_from`` names the profile copied when this one has too few cases."""


def load_calibration(data_dir: str | Path | None = None) -> pl.DataFrame:
    """Read and validate ``calibration.csv`` (the efficiency profiles) from ``data_dir`` or the shipped data.

    Raises
    ------
    DataError
        Malformed rows (every bad cell named), an unknown generation or precision, a profile id that is not
        "<generation>-<precision>", or a duplicate profile.
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / "calibration.csv" if (base / "calibration.csv").is_file() else DEFAULT_DATA_DIR / "calibration.csv"
    table = read_table(path, CALIBRATION_SCHEMA, "profile")
    name = path.name
    bad = table.filter(~pl.col("generation").is_in(list(V.GENERATIONS)) | ~pl.col("precision").is_in(list(V.PRECISIONS))
                       | (pl.col("profile") != pl.col("generation") + "-" + pl.col("precision")))
    if bad.height:
        raise DataError(f"{name}, row {bad['profile'][0]}, column profile: must be <generation>-<precision> with "
                        f"generation in {list(V.GENERATIONS)} and precision in {list(V.PRECISIONS)}")
    problems = calibration_problems(table, name)
    if problems:
        raise DataError(rules.format_problems(name, problems))
    return table


def calibration_problems(table: pl.DataFrame, name: str = "calibration.csv") -> list[str]:
    """The rules of a calibration table beyond its cells: every generation x precision has its profile (a missing one
    would price with the scalar defaults, without a band or a word); ``fallback_from`` names a profile of the table
    (or ``global``); the band's ends are in order (``log_ratio_p10 <= log_ratio_p90``).

    Returns
    -------
    list of str, one message per problem naming file, row (profile) and column (empty: none).
    """
    problems = []
    have = set(table["profile"].to_list())
    for g in V.GENERATIONS:
        for p in V.PRECISIONS:
            if f"{g}-{p}" not in have:
                problems.append(f"{name}, row {g}-{p}, column profile: missing (every generation x precision needs "
                                f"a profile; econ calibrate --write writes them all) [rule: every profile present]")
    for r in table.select("profile", "fallback_from", "log_ratio_p10", "log_ratio_p90").iter_rows(named=True):
        src = r["fallback_from"]
        if src not in (None, "", "global") and src not in have:
            problems.append(f"{name}, row {r['profile']}, column fallback_from: {src!r} is not a profile of the table "
                            f"(valid: a profile id, global, or empty) [rule: fallback_from names a profile]")
        if r["log_ratio_p10"] > r["log_ratio_p90"]:
            problems.append(f"{name}, row {r['profile']}, column log_ratio_p10: {r['log_ratio_p10']:g} is above "
                            f"log_ratio_p90 = {r['log_ratio_p90']:g} (valid: p10 <= p90) [rule: band in order]")
    return problems


_ERR = dict(lo=0, hi=1e4, unit="fraction (|predicted / measured - 1|)")

CALIBRATION_ERRORS_SCHEMA: dict[str, Col] = {
    "id": TXT, "by": TXT, "family": TXT,
    "n_cases": _num(1, 1e6, dtype=pl.Int64, unit="cases"), "n_groups": _num(1, 1e6, dtype=pl.Int64, unit="groups"),
    "cv_median_abs_error_frac": _num(**_ERR), "cv_p90_abs_error_frac": _num(**_ERR),
    "roofline_median_abs_error_frac": _num(**_ERR), "roofline_p90_abs_error_frac": _num(**_ERR),
    "v1_median_abs_error_frac": _num(**_ERR), "v1_p90_abs_error_frac": _num(**_ERR),
    "previous_median_abs_error_frac": _num(**_ERR, required=False),
    "previous_p90_abs_error_frac": _num(**_ERR, required=False),
    "previous_n_cases": _num(1, 1e6, dtype=pl.Int64, unit="cases", required=False),
    "fallback_from": TXT_OPT, "fit_date": TXT,
    "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/calibration_errors.csv`` (optional): the held-out error of the calibration per family, beside the pure
roofline and the v1 global (uncalibrated) efficiencies on the same cases, written by ``econ calibrate --write``
(:func:`econ.analyses.calibration.errors_frame`; data/README.md). ``by`` is ``all``, ``family`` (scenario family),
``moe`` (``dense`` / ``moe``), ``profile`` (generation x precision), ``class`` (dense, moe, wide-ep, low-latency,
long-context: econ.analyses.calibration.CLASSES) or ``class-generation`` (``moe-hopper``). The ``previous_*`` columns
are the held-out errors shipped before the fit, on the same family's cases (empty where none)."""

ERROR_GROUPINGS: tuple[str, ...] = ("all", "family", "moe", "profile", "class", "class-generation")
"""Values of ``by`` in calibration_errors.csv."""

CALIBRATION_PREDICTIONS_SCHEMA: dict[str, Col] = {
    "case_id": TXT, "group_id": TXT, "source_kind": TXT, "model": TXT, "hardware": TXT, "profile": TXT,
    "scenario": TXT, "family": TXT, "moe": Col(pl.Boolean), "metric": TXT,
    "measured": _num(0, 1e9, lo_inclusive=False, unit="the metric's unit (tokens/s or s)"),
    "predicted": _num(0, 1e12, lo_inclusive=False, required=False, unit="the metric's unit, held out"),
    "predicted_over_measured": _num(0, 1e6, lo_inclusive=False, required=False, unit="ratio"),
    "abs_error_frac": _num(0, 1e6, required=False, unit="fraction"),
    "roofline_predicted": _num(0, 1e12, lo_inclusive=False, required=False, unit="the metric's unit"),
    "in_error_table": Col(pl.Boolean), "profile_source": TXT_OPT, "reason": TXT_OPT,
    "generation": TXT_OPT, "wide_ep": Col(pl.Boolean, required=False), "low_latency": Col(pl.Boolean, required=False),
    "long_context": Col(pl.Boolean, required=False),
    "fit_date": TXT, "source": TXT, "as_of": TXT, "notes": TXT_OPT,
}
"""``data/calibration_predictions.csv`` (optional): one row per included measurement with its held-out prediction
(the fold that left its model x hardware group out), written by ``econ calibrate --write``
(:func:`econ.analyses.calibration.predictions_frame`; data/README.md). ``source`` / ``as_of`` are the measurement's."""


def _optional_path(base: Path, fname: str) -> Path | None:
    """A user's file, else the shipped one, else None (an optional table that was never written)."""
    for folder in (base, DEFAULT_DATA_DIR):
        kind = _kind(folder / fname, "data file")
        if kind == "file":
            return folder / fname
        if kind != "missing":
            raise DataError(f"data file {folder / fname} is not a file")
    return None


def empty_frame(schema: dict[str, Col]) -> pl.DataFrame:
    """An empty frame with the schema's columns and dtypes (an optional table that was never written)."""
    return pl.DataFrame(schema={c: spec.dtype for c, spec in schema.items()})


def load_calibration_errors(data_dir: str | Path | None = None) -> pl.DataFrame:
    """Read and validate ``calibration_errors.csv`` (held-out error per family), an OPTIONAL table.

    Parameters
    ----------
    data_dir : str or Path, optional; the user's folder (a missing file falls back to the shipped one)

    Returns
    -------
    pl.DataFrame, CALIBRATION_ERRORS_SCHEMA columns; an empty frame (same columns) when no file exists anywhere
    (``econ calibrate --write`` writes it).

    Raises
    ------
    DataError
        Malformed rows (every bad cell named), a ``by`` outside :data:`ERROR_GROUPINGS`, no ``all`` row, or a
        P90 below its median.
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = _optional_path(base, "calibration_errors.csv")
    if path is None:
        return empty_frame(CALIBRATION_ERRORS_SCHEMA)
    table = read_table(path, CALIBRATION_ERRORS_SCHEMA, "id")
    problems = []
    for r in table.iter_rows(named=True):
        if r["by"] not in ERROR_GROUPINGS:
            problems.append(f"row {r['id']}, column by: {r['by']!r} not in {list(ERROR_GROUPINGS)}")
        for s in ("cv", "roofline", "v1"):
            if r[f"{s}_p90_abs_error_frac"] < r[f"{s}_median_abs_error_frac"] * (1 - 1e-9):
                problems.append(f"row {r['id']}, column {s}_p90_abs_error_frac: below the median")
    if "all" not in table["by"].to_list():
        problems.append("no row with by = all (the error over every case)")
    if problems:
        raise DataError(f"{path.name}: " + "; ".join(problems))
    return table


def load_calibration_predictions(data_dir: str | Path | None = None) -> pl.DataFrame:
    """Read and validate ``calibration_predictions.csv`` (one held-out prediction per case), an OPTIONAL table.

    Returns
    -------
    pl.DataFrame, CALIBRATION_PREDICTIONS_SCHEMA columns; an empty frame (same columns) when no file exists.

    Raises
    ------
    DataError
        Malformed rows (every bad cell named), a duplicate ``case_id``, or a row counted in the error table
        without a finite prediction.
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = _optional_path(base, "calibration_predictions.csv")
    if path is None:
        return empty_frame(CALIBRATION_PREDICTIONS_SCHEMA)
    table = read_table(path, CALIBRATION_PREDICTIONS_SCHEMA, "case_id", kebab_ids=False)
    bad = table.filter(pl.col("in_error_table") & (pl.col("predicted").is_null() | pl.col("abs_error_frac").is_null()))
    if bad.height:
        raise DataError(f"{path.name}, row {bad['case_id'][0]}: counted in the error table (in_error_table) without a "
                        f"predicted value")
    return table


def validate_table(raw: pl.DataFrame, schema: dict[str, Col], id_col: str, name: str, *,
                   kebab_ids: bool = True) -> pl.DataFrame:
    """Cast and validate a table read as strings; return it typed, or raise one DataError.

    Parameters
    ----------
    raw : pl.DataFrame
        The table with every column as ``pl.String`` (as read by :func:`read_table`).
    schema : dict of column name -> :class:`Col`
    id_col : str
        The column that must hold unique kebab-case ids.
    name : str
        File name used in messages (``accelerators.csv``).
    kebab_ids : bool
        Require lowercase kebab-case ids (default); False for a table keyed by an upstream id
        (``calibration_predictions.csv`` keeps the ``case_id`` of measurements.csv, which has ``_``).

    Returns
    -------
    pl.DataFrame with the schema's dtypes, in schema column order.

    Raises
    ------
    DataError
        Listing every problem: missing columns, empty required cells, non-numeric cells,
        out-of-range values, duplicate or malformed ids, and the failures of the consistency rules of
        :mod:`econ.tables.rules` (control characters, calendar dates, plausible ranges, row rules), each as
        ``file, row <id>, column <col>: reason``, counted per rule.

    Warns
    -----
    econ.tables.rules.DataWarning
        For columns not in the schema (a user's notes column): kept in the file, ignored here.
    """
    problems: list[str] = []
    cols = set(raw.columns)
    missing = [c for c in schema if c not in cols and schema[c].required]
    extra = [c for c in raw.columns if c not in schema]
    absent = [c for c in schema if c not in cols and not schema[c].required]
    if absent:  # optional columns a user's older table may lack (e.g. later cost tiers): empty, not an error
        raw = raw.with_columns(pl.lit(None, pl.String).alias(c) for c in absent)
    if missing:
        hint = f" (misspelled? unknown column(s) {extra})" if extra else ""
        raise DataError(f"{name}: missing column(s) {missing}{hint}")
    if extra:
        rules.warn_extra_columns(name, extra)
        raw = raw.drop(extra)
    raw = drop_blank_rows(raw)
    if raw.height == 0:
        raise DataError(f"{name}: the table has no rows")
    raw = raw.with_columns(pl.col(c).cast(pl.String).str.strip_chars() for c in raw.columns)
    ids = raw[id_col].to_list()
    labels = [i if i else f"#{n + 1}" for n, i in enumerate(ids)]
    table = next((k for k, (_, sch, _) in TABLES.items() if sch is schema), None)
    out = {}
    for col, spec in schema.items():
        s = raw[col]
        empty = s.is_null() | (s == "")
        for n in empty.arg_true().to_list() if spec.required else []:
            problems.append(f"{name}, row {labels[n]}, column {col}: empty (required)")
        s = pl.Series(col, [None if e else v for v, e in zip(s.to_list(), empty.to_list())], dtype=pl.String)
        if spec.dtype == pl.String:
            out[col] = s
            continue
        if spec.dtype == pl.Boolean:
            low = s.str.to_lowercase()
            bad = ~(low.is_in(["true", "false"]) | low.is_null())
            for n in bad.arg_true().to_list():
                problems.append(f"{name}, row {labels[n]}, column {col}: {s[n]!r} is not true/false")
            out[col] = low == "true"
            continue
        num = s.cast(pl.Float64, strict=False)
        bad = num.is_null() & s.is_not_null()
        for n in bad.arg_true().to_list():
            problems.append(f"{name}, row {labels[n]}, column {col}: {s[n]!r} is not a number")
        if spec.dtype == pl.Int64:
            frac = num.is_not_null() & (num != num.round(0))
            for n in frac.arg_true().to_list():
                problems.append(f"{name}, row {labels[n]}, column {col}: {s[n]!r} is not a whole number")
        vals = num.to_list()
        for n, v in enumerate(vals):
            if v is None:
                continue
            if v != v or v in (float("inf"), float("-inf")):
                problems.append(f"{name}, row {labels[n]}, column {col}: {v} is not finite")
                continue
            lo_bad = spec.lo is not None and (v < spec.lo if spec.lo_inclusive else v <= spec.lo)
            hi_bad = spec.hi is not None and v > spec.hi
            if lo_bad or hi_bad:
                lb = "[" if spec.lo_inclusive else "("
                problems.append(f"{name}, row {labels[n]}, column {col}: {v:g} is outside "
                                f"{lb}{spec.lo:g}, {spec.hi:g}] {spec.unit}".rstrip())
        out[col] = num.cast(spec.dtype, strict=False) if spec.dtype == pl.Int64 else num
    for n, i in enumerate(ids):
        if kebab_ids and i and not _ID_RE.match(i):
            problems.append(f"{name}, row {i}, column {id_col}: id must be lowercase kebab-case")
    dup = raw[id_col].filter(raw[id_col].is_duplicated()).unique().to_list()
    for d in dup:
        problems.append(f"{name}, row {d}, column {id_col}: duplicate id")
    problems += rules.cell_problems(raw, name, labels)  # control characters, calendar dates
    short = table or name.removesuffix(".csv")
    for (tbl, col), allowed in _ENUMS.items():
        if tbl == short and col in raw.columns:
            for n, v in enumerate(raw[col].to_list()):
                if v and v.lower() not in allowed:
                    problems.append(f"{name}, row {labels[n]}, column {col}: {v!r} not in {sorted(allowed)}")
    df = pl.DataFrame(out)
    problems += rules.row_problems(df, table, name, labels)  # plausible ranges, cross-column rules
    if problems:
        raise DataError(rules.format_problems(name, problems))
    if short in {"models", "facilities"}:
        cols = ["attention_type", "native_weight_dtype"] if short == "models" else ["cooling"]
        df = df.with_columns(pl.col(c).str.to_lowercase() for c in cols if c in df.columns)
    return df


def read_table(path: Path, schema: dict[str, Col], id_col: str, *, kebab_ids: bool = True) -> pl.DataFrame:
    """Read one CSV (all cells as text) and validate it with :func:`validate_table`.

    Raises
    ------
    DataError
        If the file is missing, is not valid CSV, or fails validation.
    """
    path = Path(path)
    try:
        content = hashlib.blake2b(path.read_bytes(), digest_size=20).digest() if path.is_file() else None
    except OSError:
        content = None
    key = (str(path), content, id(schema), id_col, kebab_ids)
    hit = _TABLES.get(key) if content is not None else None
    if hit is not None and hit[0] is schema:
        return hit[1]
    raw = read_raw_csv(path)
    table = validate_table(raw, schema, id_col, path.name, kebab_ids=kebab_ids)
    if content is not None and all(c in schema for c in raw.columns):  # a table that warns is read (and warns) again
        with _TABLES_LOCK:
            _TABLES[key] = (schema, table)
            while len(_TABLES) > TABLE_CACHE_ENTRIES:
                _TABLES.pop(next(iter(_TABLES)))
    return table


TABLE_CACHE_ENTRIES = 64
"""Validated tables :func:`read_table` keeps, keyed by the file's path and a hash of its bytes (an edited file is
read again; a table with columns outside its schema is never kept, so its DataWarning is given on every read): a
dashboard rerun reads the quotes, rental rates, provider systems and roadmap tables without parsing and validating them
again (30-70 ms each)."""

_TABLES: dict[tuple, tuple] = {}
_TABLES_LOCK = threading.Lock()


def read_raw_csv(path: Path) -> pl.DataFrame:
    """A CSV with every cell as text (empty = null, blank rows dropped), for validation by a schema.

    Bounded: at most :data:`econ.tables.uploads.MAX_TABLE_BYTES` are read and
    :data:`econ.tables.uploads.MAX_TABLE_ROWS` rows parsed (:func:`econ.tables.uploads.read_table_file`).

    Raises
    ------
    DataError
        If the file is missing, a folder, too large, or is not readable CSV.
    """
    return read_table_file(path)


def _accelerators_si(df: pl.DataFrame) -> pl.DataFrame:
    """Add the SI columns of the core (bytes, bytes/s, FLOP/s) to a validated accelerator table, and each
    generation's block-scaled FP8 expert-GEMM speed (``block_fp8_moe_flop_frac``,
    :data:`econ.physics.precision.BLOCK_FP8_MOE_FLOP_FRAC`; 1 for a generation without a measurement)."""
    problems = df.filter(pl.col("all_in_capex_usd").is_null() & pl.col("rental_usd_per_hour").is_null())
    if problems.height:
        raise DataError("accelerators.csv: row(s) " + ", ".join(problems["id"]) +
                        ": need all_in_capex_usd or rental_usd_per_hour (or both)")
    from econ.physics.precision import BLOCK_FP8_MOE_FLOP_FRAC  # per generation (sourced there)

    tf = units.FLOP_PER_TFLOP
    return df.with_columns(
        (pl.col("bf16_dense_tflop_per_s") * tf).alias("bf16_peak_flop_per_s"),
        (pl.col("fp8_dense_tflop_per_s") * tf).alias("fp8_peak_flop_per_s"),
        (pl.col("fp4_dense_tflop_per_s") * tf).alias("fp4_peak_flop_per_s"),
        (pl.col("hbm_capacity_gib") * units.BYTES_PER_GIB).alias("hbm_capacity_bytes"),
        (pl.col("hbm_bandwidth_tb_per_s") * units.BYTES_PER_TB).alias("hbm_bandwidth_bytes_per_s"),
        (pl.col("scale_up_bandwidth_gb_per_s") * units.BYTES_PER_GB).alias("scale_up_bandwidth_bytes_per_s"),
        (pl.col("scale_out_bandwidth_gb_per_s") * units.BYTES_PER_GB).alias("scale_out_bandwidth_bytes_per_s"),
        (pl.col("scale_up_topology").str.to_lowercase() == "mesh").fill_null(False).cast(pl.Float64)
        .alias("scale_up_mesh"),
        (pl.col("exp_tera_per_s") * units.PER_TERA).alias("exp_per_s"),
        pl.col("generation").replace_strict(BLOCK_FP8_MOE_FLOP_FRAC, default=1.0, return_dtype=pl.Float64)
        .fill_null(1.0).alias("block_fp8_moe_flop_frac"),
    )


@dataclass(frozen=True)
class Catalog:
    """The validated tables, with SI columns added (accelerators) and derived architecture (models).

    Attributes
    ----------
    accelerators, models, power_prices, facilities : pl.DataFrame
    data_dir : Path
        Where the tables were read from (files missing there come from the shipped ``data/``).
    """

    accelerators: pl.DataFrame
    models: pl.DataFrame
    power_prices: pl.DataFrame
    facilities: pl.DataFrame
    data_dir: Path = field(default=DEFAULT_DATA_DIR)
    buildout_capex: pl.DataFrame | None = None
    """Build-out unit prices (``data/buildout_capex.csv``); None = read the shipped file when needed."""
    calibration: pl.DataFrame | None = None
    """Efficiency profiles per (generation, precision) (``data/calibration.csv``, :func:`load_calibration`)."""

    def accelerator(self, hw_id: str) -> dict:
        """One accelerator row as a dict; raises UnknownIdError listing the closest ids."""
        return _row(self.accelerators, "id", hw_id, "hardware")

    def model(self, model_id: str) -> dict:
        """One model row (with derived architecture columns) as a dict; UnknownIdError if unknown."""
        return _row(self.models, "id", model_id, "model")

    def power_price(self, region_id: str) -> dict:
        """One power-price row; UnknownIdError if unknown."""
        return _row(self.power_prices, "region_id", region_id, "region")

    def facility(self, facility_id: str) -> dict:
        """One facility-class row; UnknownIdError if unknown."""
        return _row(self.facilities, "id", facility_id, "facility")

    def as_of_dates(self) -> dict[str, str]:
        """Latest ``as_of`` date of each table (for export metadata)."""
        return {name: max(getattr(self, name)["as_of"].str.strip_chars("~").to_list())
                for name in ("accelerators", "models", "power_prices", "facilities")}


def check_ids(kind: str, requested, known) -> None:
    """Raise UnknownIdError for the first id of ``requested`` not in ``known``, listing the closest.

    Parameters
    ----------
    kind : str
        ``"model"``, ``"hardware"``, ``"region"``, ``"facility"``, used in the message.
    requested : iterable of str
    known : iterable of str
    """
    known = list(known)
    known_set = set(known)
    for r in requested:
        if r not in known_set:
            close = difflib.get_close_matches(str(r), known, n=4, cutoff=0.3)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise UnknownIdError(f"unknown {kind} id {r!r}{hint} (see `econ list`)")


def _row(df: pl.DataFrame, id_col: str, value: str, kind: str) -> dict:
    row = _rows_by_id(df, id_col).get(value)
    if row is None:
        check_ids(kind, [value], df[id_col].to_list())  # raises, naming the closest ids
    return dict(row)  # a copy: callers may change it


def _rows_by_id(df: pl.DataFrame, id_col: str) -> dict:
    """{id: the first row with it, as a dict} of ``df``, built once per frame object (frames are immutable):
    :meth:`Catalog.model` and friends look a row up in a dict instead of filtering the frame (0.35 ms a call; a page
    reads hundreds)."""
    def build() -> dict:
        index: dict = {}
        for r in df.iter_rows(named=True):
            index.setdefault(r[id_col], r)
        return index

    return _ROW_INDEX.memo(df, ("rows", id_col), build)


def nbytes_of(obj, _seen: set | None = None) -> int:
    """Bytes of the numpy arrays and Polars frames reachable from ``obj`` through dataclasses, tuples, lists and dicts,
    each counted once: the ``size_of`` of a :class:`CatalogCache` that keeps engine results (scalars count 0; a
    broadcast view counts the array it views, once). [B]"""
    import dataclasses

    import numpy as np

    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):  # a broadcast view (a zero stride) holds only the array it views
        return nbytes_of(obj.base, seen) if obj.ndim and 0 in obj.strides else int(obj.nbytes)
    if isinstance(obj, (pl.DataFrame, pl.Series)):
        return int(obj.estimated_size())
    if isinstance(obj, (tuple, list)):
        return sum(nbytes_of(v, seen) for v in obj)
    if isinstance(obj, dict):
        return sum(nbytes_of(v, seen) for v in obj.values())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return sum(nbytes_of(getattr(obj, f.name, None), seen) for f in dataclasses.fields(obj))
    return 0


class CatalogCache:
    """Values computed from an object (a catalog, a table), kept for the newest ``entries`` keys of the process.

    A search's deployments, layouts and screens depend on the catalog (and the key), not on the economics, so a
    dashboard rerun that changes only a power price, PUE, utilization or token mix reuses them and prices them again
    (:func:`econ.analyses.optimize.search`, :func:`econ.analyses.quotes.check_quotes`); :meth:`Catalog.model` reads a
    table's rows from a dict built once per frame. Entries are keyed by ``(id(obj), key)`` with a weak reference to
    the object: an object that is gone, or an id reused by another object, is a miss, and a dead object's entries are
    dropped. One bound per cache for the process, so many
    custom-accelerator catalogs cannot multiply it. Thread-safe (dashboard sessions run in threads).

    Parameters
    ----------
    entries : int >= 1, the keys kept (least recently used dropped first)
    max_bytes : int, optional, a bound on the bytes of the values kept (``size_of`` each); a value larger than a
        quarter of it is returned, not kept [B]
    size_of : callable(value) -> int, optional, the bytes of a value (required with ``max_bytes``) [B]
    """

    def __init__(self, entries: int, max_bytes: int | None = None, size_of=None):
        import threading
        from collections import OrderedDict

        if max_bytes is not None and size_of is None:
            raise ValueError("CatalogCache: max_bytes needs size_of")
        self.entries = int(entries)
        self.max_bytes, self._size_of = max_bytes, size_of
        self._items: "OrderedDict[tuple, tuple]" = OrderedDict()
        self._sizes: dict[tuple, int] = {}
        self._refs: dict[int, object] = {}  # id(obj) -> one weak reference per live object, shared by its entries
        self._dead = False  # an object with entries is gone: the next put drops them (set by the reference's callback)
        self._lock = threading.Lock()

    def _gone(self, _ref) -> None:
        """Weak-reference callback: an object with entries was collected (a flag only: it may run inside a put)."""
        self._dead = True

    def bytes(self) -> int:
        """Bytes of the values kept (0 without ``size_of``). [B]"""
        return sum(self._sizes.values())

    def __len__(self) -> int:
        return len(self._items)

    def get(self, catalog, key: tuple):
        """The value kept for ``catalog`` and ``key``, or None."""
        full = (id(catalog), key)
        with self._lock:
            hit = self._items.get(full)
            if hit is not None and hit[0]() is catalog:
                self._items.move_to_end(full)
                return hit[1]
        return None

    def put(self, catalog, key: tuple, value) -> None:
        """Keep ``value`` for ``catalog`` and ``key`` (the oldest entries beyond ``entries`` dropped)."""
        import weakref

        full = (id(catalog), key)
        size = int(self._size_of(value)) if self._size_of is not None else 0
        if self.max_bytes is not None and size > self.max_bytes // 4:
            return  # too large to keep
        with self._lock:
            ref = self._refs.get(id(catalog))
            if ref is None or ref() is not catalog:  # a new object (or a dead one's id reused)
                ref = self._refs[id(catalog)] = weakref.ref(catalog, self._gone)
            self._items[full] = (ref, value)
            self._sizes[full] = size
            self._items.move_to_end(full)
            if self._dead:  # catalogs that are gone: their entries dropped (scanned only when one went)
                self._dead = False
                for k in [k for k, (r, _) in self._items.items() if r() is None]:
                    self._drop(k)
                self._refs = {i: r for i, r in self._refs.items() if r() is not None}
            while len(self._items) > self.entries or (
                    self.max_bytes is not None and sum(self._sizes.values()) > self.max_bytes and len(self._items) > 1):
                self._drop(next(iter(self._items)))

    def _drop(self, full: tuple) -> None:
        self._items.pop(full, None)
        self._sizes.pop(full, None)

    def memo(self, catalog, key: tuple, build):
        """``build()``, kept for ``catalog`` under ``key``."""
        hit = self.get(catalog, key)
        if hit is not None:
            return hit
        value = build()
        self.put(catalog, key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._sizes.clear()


_ROW_INDEX = CatalogCache(256)
"""The row dicts of :func:`_rows_by_id`, per frame object and id column."""


def load_catalog(data_dir: str | Path | None = None, *, cache: bool = True) -> Catalog:
    """Load and validate every table from ``data_dir`` (default: the shipped ``data/``).

    A file missing from a user's ``data_dir`` falls back to the shipped one, so a user can override
    just ``accelerators.csv``.

    Parameters
    ----------
    data_dir : folder, optional
    cache : bool
        Reuse the catalog validated from the same data-folder version (:func:`_catalog_cache_key`: every CSV's
        size and modification time, and the code that reads them), pickled under ``$ECON_CACHE_DIR`` (default
        ``~/.cache/econ``; ``ECON_CACHE_DIR=off`` disables). Issue 20: loading and validating takes ~110 ms of a
        one-row CLI call; reading the cached catalog ~1 ms. A cache that cannot be read or written is ignored; a
        folder whose tables warn (:class:`econ.errors.DataWarning`) is not cached, so every load warns.

    Raises
    ------
    DataError
        If any table is malformed (see :func:`validate_table`), or ``data_dir`` is not a folder.
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    if _kind(base, "data folder") != "dir":
        raise DataError(f"data folder {base} does not exist")
    path = _catalog_cache_path(base) if cache else None
    if path is not None:
        got = _read_cached_catalog(path)
        if got is not None:
            got = got if got.data_dir == base else Catalog(**{**{f: getattr(got, f) for f in got.__dataclass_fields__},
                                                             "data_dir": base})  # the folder as this caller named it
            object.__setattr__(got, "_disk_key", path.stem)
            return got
    import warnings

    with warnings.catch_warnings(record=True) as caught:  # a table's DataWarning (e.g. an extra column) is replayed
        catalog = _load_catalog(base)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if path is not None and not caught:  # a folder that warns is never cached: every load says so again
        _write_cached_catalog(path, catalog)
        object.__setattr__(catalog, "_disk_key", path.stem)
    return catalog


def disk_key(catalog: Catalog) -> str | None:
    """The data-folder version of a catalog read by :func:`load_catalog` with its cache on (the name of its cache
    file), else None: a catalog built or changed in memory (``dataclasses.replace``, a dashboard's edits) has none, so
    nothing derived from it is ever kept on disk."""
    return getattr(catalog, "_disk_key", None)


def cache_root() -> Path | None:
    """The folder of econ's caches on disk: ``$ECON_CACHE_DIR``, default ``~/.cache/econ``; None when it is "off"."""
    import os

    root = os.environ.get("ECON_CACHE_DIR", "")
    if root.lower() in ("off", "0", "none"):
        return None
    return Path(root) if root else Path.home() / ".cache" / "econ"


def read_cached(path: Path):
    """The value pickled at ``path``, or None (a missing, truncated or foreign file is a miss, never an error)."""
    import pickle
    import zlib

    try:
        data = path.read_bytes()
        return pickle.loads(zlib.decompress(data[len(_PACKED):]) if data.startswith(_PACKED) else data)
    except Exception:  # noqa: BLE001
        return None


_PACKED = b"econ-zlib1:"
"""Prefix of a cache file :func:`write_cached` compressed (zlib level 1: a search's batch grid shrinks 20x)."""


def write_cached(path: Path, value, *, keep: int | None = None) -> None:
    """Pickle ``value`` (zlib-compressed) to ``path`` atomically (a concurrent reader sees the old file or the whole new
    one); with ``keep``, only the newest ``keep`` files of the same prefix (the name up to its last "-") stay in the
    folder. A read-only home or a full disk only costs the next call its compute time."""
    import os
    import pickle
    import tempfile
    import zlib

    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_PACKED + zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1))
        os.replace(tmp, path)
        tmp = None
        if keep is not None:
            prefix = path.name.rsplit("-", 1)[0] + "-"
            files = sorted(path.parent.glob(prefix + "*" + path.suffix), key=lambda f: f.stat().st_mtime_ns)
            for old in files[:-keep]:
                old.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001
        if tmp is not None:
            try:
                os.unlink(tmp)
            except Exception:  # noqa: BLE001
                pass


def _catalog_cache_path(base: Path) -> Path | None:
    """Where the catalog validated from ``base`` is cached (None: caching off or the folder cannot be listed)."""
    import hashlib

    root_dir = cache_root()
    if root_dir is None:
        return None
    key = hashlib.sha256()
    try:
        code = sorted(Path(__file__).parent.glob("*.py")) + [Path(__file__).parents[1] / "physics" / "architecture.py",
                                                              Path(__file__).parents[1] / "units.py",
                                                              Path(__file__).parents[1] / "vocabulary.py"]
        for folder in (base.resolve(), DEFAULT_DATA_DIR):
            key.update(str(folder).encode())
            for f in sorted(folder.glob("*.csv")) + code:
                st = f.stat()
                key.update(f"{f.name}:{st.st_size}:{st.st_mtime_ns};".encode())
    except OSError:
        return None
    from econ import __version__
    key.update(__version__.encode())
    return root_dir / f"catalog-{key.hexdigest()[:32]}.pickle"


def _read_cached_catalog(path: Path) -> Catalog | None:
    got = read_cached(path)
    return got if isinstance(got, Catalog) else None


def _write_cached_catalog(path: Path, catalog: Catalog) -> None:
    write_cached(path, Catalog(**{f: getattr(catalog, f) for f in catalog.__dataclass_fields__}))  # no engine caches


def _load_catalog(base: Path) -> Catalog:
    """:func:`load_catalog` without the cache."""
    from econ.physics.architecture import derive_architecture  # late import: architecture imports nothing of ours

    tables = {}
    for key, (fname, schema, id_col) in TABLES.items():
        # a user's file wins; only a *missing* one falls back (a folder named accelerators.csv is an error)
        path = base / fname if _kind(base / fname, "data file") != "missing" else DEFAULT_DATA_DIR / fname
        tables[key] = read_table(path, schema, id_col)
    return Catalog(
        accelerators=_accelerators_si(tables["accelerators"]),
        models=derive_architecture(tables["models"]),
        power_prices=tables["power_prices"],
        facilities=tables["facilities"],
        data_dir=base,
        buildout_capex=load_buildout_capex(base),
        calibration=load_calibration(base),
    )


def _kind(path: Path, what: str) -> str:
    """'dir', 'file', 'other' or 'missing'; DataError (the reason in words) when the path cannot be examined."""
    import stat

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "missing"
    except (OSError, ValueError) as exc:
        from econ.safe_write import describe_os_error
        reason = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        text = str(path) if len(str(path)) <= 120 else str(path)[:120] + "..."
        raise DataError(f"{what} {text}: cannot be read ({reason})") from None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def load_buildout_capex(data_dir: str | Path | None = None) -> pl.DataFrame:
    """Read and validate ``buildout_capex.csv`` from ``data_dir`` (falling back to the shipped file).

    Raises
    ------
    DataError
        If the file is malformed (every bad cell named, see :func:`validate_table`).
    """
    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / "buildout_capex.csv" if (base / "buildout_capex.csv").is_file() else DEFAULT_DATA_DIR / "buildout_capex.csv"
    return read_table(path, BUILDOUT_CAPEX_SCHEMA, "id")
