"""The catalog as per-row arrays: facts gathered by integer codes, weight formats and calibration profiles.

:func:`catalog_arrays` turns the validated catalog tables into numpy columns indexed by integer codes (once
per catalog); :func:`resolve_formats` picks each row's weight, expert and KV formats; :func:`efficiency`
gathers each row's efficiencies from its calibration profile (data/calibration.csv) or the scalar
assumptions; :func:`profile_band` and :func:`profile_names` give the profile's held-out band and name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.assumptions import (PROFILE_PARAMETERS, Assumptions, DeploymentAssumptions)
from econ.tables.catalog import Catalog
from econ.vocabulary import GENERATIONS
from econ.physics.inputs import Efficiency, Formats, HardwareFacts, ModelFacts
from econ.physics.performance import (attention_peak_flop_per_s)

# ----------------------------------------------------------------------------------------------------
# Catalog arrays (gathered by integer codes)
# ----------------------------------------------------------------------------------------------------

_MODEL_COLUMN = {f.name: f.name for f in fields(ModelFacts)} | {
    "num_sliding_layers": "num_sliding_layers_eff", "sliding_window_tokens": "sliding_window_tokens_eff"}


@dataclass(frozen=True)
class CatalogArrays:
    """The catalog's facts as numpy columns indexed by integer codes (row order of the catalog tables).

    Attributes
    ----------
    model_ids, hardware_ids : tuple of str (code = position)
    model : dict field -> ndarray (:class:`ModelFacts` fields; nulls as 0)
    hardware : dict field -> ndarray (:class:`HardwareFacts` fields; nulls as NaN)
    pinned_weight_format, pinned_expert_format : int arrays per model, index into :data:`FORMATS` of the
        non-routed / routed-expert weight format its release pins (-1 = follow the matmul precision;
        :data:`econ.physics.precision.CHECKPOINT_FORMATS`)
    native_fp8_format : int array per model, index into :data:`FORMATS` of the format an fp8 precision means for the
        model by default (-1 = ``fp8``; DeepSeek-V3/R1: ``fp8_block``, :data:`econ.physics.precision.NATIVE_FP8_FORMAT`)
    mtp_acceptance : float array per model, the sourced MTP acceptance (NaN = speculative decoding off by default)
    eagle_acceptance, eagle_draft_tokens : float arrays per model, a published EAGLE-3 head's per-token acceptance and
        draft length (NaN = no head: ``spec_method=eagle`` then needs ``spec_acceptance``)
    generation_code : int array per accelerator, index into :data:`econ.vocabulary.GENERATIONS` (-1 = none)
    profile : dict parameter -> float array [generation, precision] of the calibration profiles
        (data/calibration.csv; NaN = no profile: the scalar assumption applies); keys
        :data:`~econ.assumptions.PROFILE_PARAMETERS` plus ``log_ratio_p10`` / ``log_ratio_p90`` (the band)
    profile_ids : tuple of str per [generation, precision] (flattened row-major; "" = none)
    """

    model_ids: tuple[str, ...]
    hardware_ids: tuple[str, ...]
    model: dict
    hardware: dict
    pinned_weight_format: np.ndarray
    pinned_expert_format: np.ndarray
    mtp_acceptance: np.ndarray
    native_fp8_format: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    eagle_acceptance: np.ndarray = field(default_factory=lambda: np.zeros(0))
    eagle_draft_tokens: np.ndarray = field(default_factory=lambda: np.zeros(0))
    generation_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    profile: dict = field(default_factory=dict)
    profile_ids: tuple = ()
    filled_profiles: dict = field(default_factory=dict)
    """Cache of :func:`efficiency`: per calibrated assumptions, (names, [parameter, accelerator, precision])."""
    tier_rates: dict = field(default_factory=dict)
    """Cache of :func:`econ.engine.frame._tier_rates` (key "rates": [accelerator, tier] USD/h) and of
    :func:`econ.engine.frame.kv_tier_arrays` (key "kv_tiers": the KV tiers beyond HBM per accelerator)."""

    def models(self, codes) -> ModelFacts:
        """The facts of models ``codes`` (int array: one gather of the stacked table; scalar: scalars)."""
        return ModelFacts(**_take_rows(self.model, codes))

    def model_facts(self, ids) -> ModelFacts:
        """The facts of the models named ``ids`` (a sequence of catalog ids; KeyError for an unknown one)."""
        index = {m: i for i, m in enumerate(self.model_ids)}
        return self.models(np.array([index[i] for i in ids], dtype=np.int64))

    def accelerators(self, codes) -> HardwareFacts:
        """The facts of accelerators ``codes`` (as :meth:`models`)."""
        return HardwareFacts(**_take_rows(self.hardware, codes))


def _take_rows(table: dict, codes) -> dict:
    """``{field: column[codes]}`` by one fancy index of the stacked columns (a field per row of a matrix)."""
    if np.ndim(codes) == 0:
        return {k: v[codes] for k, v in table.items() if k != "__stacked__"}
    stacked = table.get("__stacked__")
    if stacked is None:
        names = [k for k in table if k != "__stacked__"]
        stacked = (names, np.stack([table[k] for k in names]))
        table["__stacked__"] = stacked
    names, matrix = stacked
    return dict(zip(names, matrix[:, codes]))


FORMATS: tuple[str, ...] = tuple(prec.WEIGHT_FORMATS)
"""Weight formats (index = format code): :data:`econ.physics.precision.WEIGHT_FORMATS`."""
_FORMAT_BYTES = np.array([prec.WEIGHT_FORMATS[f] for f in FORMATS])
_FORMAT_BITS = np.array([prec.FORMAT_BITS[f] for f in FORMATS])
_FORMAT_PREC = np.array([prec.PRECISIONS.index(prec.FORMAT_PRECISION[f]) for f in FORMATS])
_PREC_BITS = np.array([prec.PRECISION_BITS[p] for p in prec.PRECISIONS])
_KV_BYTES = np.array([prec.KV_BYTES_PER_ELEMENT[k] for k in prec.KV_BYTES_PER_ELEMENT])
"""Stored bytes per KV element of each KV code (block scales included). [B]"""
_KV_ATTENTION_BYTES = np.array([prec.WEIGHT_BYTES_PER_PARAM[prec.KV_ATTENTION_PRECISION[k]]
                                for k in prec.KV_BYTES_PER_ELEMENT])
"""Operand width the attention matmuls run at for each KV code (the format dequantized: KV_ATTENTION_PRECISION). [B]"""
_DEFAULT_FORMAT = np.array([FORMATS.index(prec.DEFAULT_WEIGHT_FORMAT[p]) for p in prec.PRECISIONS])
_FP8 = prec.PRECISIONS.index("fp8")
_FP8_BLOCK = FORMATS.index("fp8_block")


def _format_code(name: str | None) -> int:
    return -1 if name is None else FORMATS.index(name)


def resolve_formats(hardware: HardwareFacts, precision_code, kv_code, pinned_weight, pinned_expert, weight_code=-1,
                    expert_code=-1, embedding_bytes_per_param=2.0, native_fp8=-1):
    """Weight formats, bytes and matmul peaks of each row.

    Parameters
    ----------
    hardware : HardwareFacts; precision_code, kv_code : int arrays (matmul precision, KV precision)
    pinned_weight, pinned_expert : int arrays, formats a release pins (-1 = none; CatalogArrays)
    weight_code, expert_code : int arrays, formats a user gives (-1 = default)
    embedding_bytes_per_param : [B]
    native_fp8 : int arrays, the format an fp8 precision defaults to for each row's model (-1 = ``fp8``;
        ``CatalogArrays.native_fp8_format``)

    Returns
    -------
    (Formats, unsupported, too_wide, weight_code, expert_code): ``unsupported`` where a component's matmul
    precision has no peak on the accelerator; ``too_wide`` where a *given* format is wider than the matmul
    precision (fp8 matmuls need fp8 or narrower weights).

    Notes
    -----
    Defaults: the release's pinned format (gpt-oss: bf16 non-routed, MXFP4 experts), else the matmul
    precision's own format (:data:`econ.physics.precision.DEFAULT_WEIGHT_FORMAT`); experts follow the non-routed
    format unless pinned or given. A component whose (pinned) format is wider than the matmul precision runs
    its matmuls at its own width (gpt-oss attention in bf16 under an fp4 precision); a narrower format is
    dequantized into the matmul precision (W4A16, MXFP4 experts on Hopper), so it costs its bytes, not its
    FLOPs. Routed experts in ``fp8_block`` that multiply at fp8 run at the accelerator's
    ``block_fp8_moe_flop_frac`` of its FP8 peak (:data:`econ.physics.precision.BLOCK_FP8_MOE_FLOP_FRAC`: 0.568 on
    Hopper, 0.797 on Blackwell); the non-routed matmuls keep the peak.
    """
    pc = np.asarray(precision_code)
    default = np.where((pc == _FP8) & (np.asarray(native_fp8) >= 0), native_fp8, _DEFAULT_FORMAT[pc])
    w = np.where(weight_code >= 0, weight_code, np.where(pinned_weight >= 0, pinned_weight, default))
    e = np.where(expert_code >= 0, expert_code, np.where(pinned_expert >= 0, pinned_expert, w))
    too_wide = ((weight_code >= 0) & (_FORMAT_BITS[np.maximum(weight_code, 0)] > _PREC_BITS[pc])) \
        | ((expert_code >= 0) & (_FORMAT_BITS[np.maximum(expert_code, 0)] > _PREC_BITS[pc]))
    peaks = [hardware.bf16_peak_flop_per_s, hardware.fp8_peak_flop_per_s, hardware.fp4_peak_flop_per_s]

    def matmul(code):  # the precision a component multiplies in: the stated one, or its own wider width
        return np.where(_FORMAT_BITS[code] > _PREC_BITS[pc], _FORMAT_PREC[code], pc)

    peak_w = np.choose(matmul(w), peaks)
    peak_e = np.choose(matmul(e), peaks)
    block = (e == _FP8_BLOCK) & (matmul(e) == _FP8)  # block-scaled FP8 experts multiplied in FP8
    if np.any(block):
        peak_e = np.where(block, peak_e * hardware.block_fp8_moe_flop_frac, peak_e)
    unsupported = np.isnan(peak_w) | np.isnan(peak_e)
    peak_w, peak_e = np.where(np.isnan(peak_w), 1.0, peak_w), np.where(np.isnan(peak_e), 1.0, peak_e)
    kv_b = _KV_BYTES[kv_code]
    formats = Formats(weight_bytes_per_param=_FORMAT_BYTES[w], kv_bytes_per_element=kv_b,
                      embedding_bytes_per_param=embedding_bytes_per_param, peak_flop_per_s=peak_w,
                      attention_peak_flop_per_s=attention_peak_flop_per_s(peak_w, _KV_ATTENTION_BYTES[kv_code],
                                                                          hardware.bf16_peak_flop_per_s,
                                                                          hardware.fp8_peak_flop_per_s),
                      expert_weight_bytes_per_param=_FORMAT_BYTES[e], expert_peak_flop_per_s=peak_e)
    return formats, unsupported, too_wide, w, e


def catalog_arrays(catalog: Catalog) -> CatalogArrays:
    """:class:`CatalogArrays` of ``catalog``, computed once per catalog object (cached on the object)."""
    got = getattr(catalog, "_engine_arrays", None)
    if got is None:
        mods, accs = catalog.models, catalog.accelerators
        got = CatalogArrays(
            model_ids=tuple(mods["id"].to_list()), hardware_ids=tuple(accs["id"].to_list()),
            model={f: mods[c].cast(pl.Float64).fill_null(0.0).to_numpy() for f, c in _MODEL_COLUMN.items()},
            hardware={f.name: accs[f.name].cast(pl.Float64).to_numpy() for f in fields(HardwareFacts)},
            pinned_weight_format=np.array([_format_code(prec.CHECKPOINT_FORMATS.get(d, (None, None))[0])
                                           for d in mods["native_weight_dtype"].to_list()]),
            pinned_expert_format=np.array([_format_code(prec.CHECKPOINT_FORMATS.get(d, (None, None))[1])
                                           for d in mods["native_weight_dtype"].to_list()]),
            native_fp8_format=np.array([_format_code(prec.NATIVE_FP8_FORMAT.get(d))
                                        for d in mods["native_weight_dtype"].to_list()], dtype=np.int64),
            mtp_acceptance=mods["mtp_acceptance"].cast(pl.Float64).to_numpy(),
            eagle_acceptance=mods["eagle_acceptance"].cast(pl.Float64).to_numpy(),
            eagle_draft_tokens=mods["eagle_draft_tokens"].cast(pl.Float64).to_numpy(),
            **_profile_arrays(catalog))
        object.__setattr__(catalog, "_engine_arrays", got)  # a cache, not a field: the catalog stays frozen
    return got


_BAND = ("log_ratio_p10", "log_ratio_p90")


def _profile_arrays(catalog: Catalog) -> dict:
    """The calibration profiles as [generation, precision] arrays, and each accelerator's generation code."""
    accs = catalog.accelerators
    gens = accs["generation"].to_list() if "generation" in accs.columns else [None] * accs.height
    gen_code = np.array([GENERATIONS.index(g) if g in GENERATIONS else -1 for g in gens], dtype=np.int64)
    shape = (len(GENERATIONS), len(prec.PRECISIONS))
    profile = {k: np.full(shape, np.nan) for k in PROFILE_PARAMETERS + _BAND}
    ids = [""] * (shape[0] * shape[1])
    table = catalog.calibration
    if table is not None and table.height:
        for row in table.iter_rows(named=True):
            g, p = GENERATIONS.index(row["generation"]), prec.PRECISIONS.index(row["precision"])
            ids[g * shape[1] + p] = row["profile"]
            for k in profile:
                if row.get(k) is not None:
                    profile[k][g, p] = float(row[k])
    return dict(generation_code=gen_code, profile=profile, profile_ids=tuple(ids))


def efficiency(arr: CatalogArrays, assumptions: Assumptions, deployment: DeploymentAssumptions, hardware_code,
               precision_code) -> Efficiency:
    """The efficiencies of each row: the calibration profile of its accelerator generation and matmul precision
    for the fields in ``assumptions.calibrated_fields``, the scalar assumption for the rest (and where no profile exists).

    Parameters
    ----------
    arr : CatalogArrays
    assumptions, deployment : the scalar values (``assumptions.calibrated_fields`` = the fields the profiles set)
    hardware_code, precision_code : int arrays (or scalars), indices into ``arr.hardware_ids`` and
        :data:`econ.physics.precision.PRECISIONS`

    Returns
    -------
    Efficiency with array fields for the calibrated parameters (broadcast over the rows), scalars otherwise.
    Source of the profiles: data/calibration.csv (``econ calibrate``; data/README.md).
    """
    eff = Efficiency.from_assumptions(assumptions, deployment)
    cal = assumptions.calibrated_fields
    if not cal or not arr.profile or not arr.generation_code.size:
        return eff
    key = (cal, tuple(getattr(assumptions, k) for k in sorted(cal)))
    filled = arr.filled_profiles.get(key)
    if filled is None:  # per accelerator x precision, NaN (no profile) replaced by the scalar: once per assumptions
        g = arr.generation_code
        ok = (g >= 0)[:, None]
        names, tables = [], []
        for name in sorted(cal):
            table = arr.profile[name][np.where(g >= 0, g, 0)]
            table = np.where(ok & ~np.isnan(table), table, getattr(assumptions, name))
            if not np.all(table == getattr(assumptions, name)):
                names.append(name)
                tables.append(table)
        filled = (tuple(names), np.stack(tables) if tables else None)
        arr.filled_profiles[key] = filled
    names, stacked = filled
    if names:  # one fancy index of the stacked [parameter, accelerator, precision] tables
        for name, values in zip(names, stacked[:, hardware_code, precision_code]):
            setattr(eff, name, values)
    return eff


def profile_band(arr: CatalogArrays, assumptions: Assumptions, hardware_code, precision_code):
    """ln(measured / predicted) at the 10th and 90th percentile of each row's profile (held-out cases).

    Returns (p10, p90) float arrays; NaN where the row has no profile or nothing is calibrated (the band is
    the calibrated model's error, not that of a user's own efficiencies). Multiply a throughput by
    ``exp(p10)`` and ``exp(p90)`` for its band; divide a cost by them (the band of a cost is inverted).
    """
    shape = np.shape(hardware_code)
    if not assumptions.calibrated_fields or not arr.profile or not arr.generation_code.size:
        return np.full(shape, np.nan), np.full(shape, np.nan)
    g = arr.generation_code[hardware_code]
    ok = g >= 0
    gi, pi = np.where(ok, g, 0), np.asarray(precision_code)
    return tuple(np.where(ok, arr.profile[k][gi, pi], np.nan) for k in _BAND)


BAND_OF_RATE: tuple[str, ...] = ("tokens_per_s_per_user", "output_tokens_per_s_per_gpu")
"""Result columns whose band is the figure times exp(p10) .. exp(p90) (a rate: higher when measured beats predicted)."""
BAND_OF_COST: tuple[str, ...] = ("usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens",
                                 "usd_per_m_output_tokens_all_in")
"""Result columns whose band is the figure divided by exp(p90) .. exp(p10) (a cost: lower when throughput is higher)."""


def band(values: dict, p10, p90) -> dict:
    """The ``*_low`` / ``*_high`` band of every rate and cost in ``values``: the one rule of every answer's band.

    Parameters
    ----------
    values : dict name -> float array; the names of :data:`BAND_OF_RATE` / :data:`BAND_OF_COST` present get a band
    p10, p90 : float arrays, ln(measured / predicted) of the row's profile (:func:`profile_band`; NaN = none)

    Returns
    -------
    dict ``{name_low: ..., name_high: ...}`` [the unit of each figure]; NaN where the row has no profile.

    Notes
    -----
    A throughput measured above the prediction (ratio > 1) makes the same deployment cheaper, so a cost's band is
    the figure divided by the throughput's factors, low end by exp(p90) (README "Calibration and accuracy").
    """
    lo, hi = np.exp(p10), np.exp(p90)
    out = {}
    for c in BAND_OF_RATE:
        if c in values:
            out[f"{c}_low"], out[f"{c}_high"] = values[c] * lo, values[c] * hi
    for c in BAND_OF_COST:
        if c in values:
            out[f"{c}_low"], out[f"{c}_high"] = values[c] / hi, values[c] / lo
    return out


def profile_names(arr: CatalogArrays, assumptions: Assumptions, hardware_code, precision_code) -> list[str]:
    """The calibration profile id of each row ("" = none or nothing calibrated). List of str."""
    if not assumptions.calibrated_fields or not arr.profile_ids:
        return [""] * len(np.atleast_1d(hardware_code))
    g = arr.generation_code[np.atleast_1d(hardware_code)]
    p = np.broadcast_to(np.asarray(precision_code), g.shape)
    return [arr.profile_ids[gg * len(prec.PRECISIONS) + pp] if gg >= 0 else "" for gg, pp in zip(g.tolist(), p.tolist())]
