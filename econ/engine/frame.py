"""The one engine: a frame of deployments -> decode, prefill, capacity, serving and cost, vectorized.

Like pvlib's ModelChain, this module is the single orchestrator of the pure kernels: every front end
(``econ cost``, ``quotes``, ``cluster``, hardware comparison, ``optimize``, ``frontier``, exports and
every dashboard page) reaches the physics through :func:`evaluate` (a Polars frame in, a frame out) or,
for searches that build their candidates as arrays, through :func:`run` on the typed bundles of
:mod:`econ.physics.inputs`. No other module chains the kernels.

Pipeline for each block of rows (``block_rows`` at a time, so memory stays flat for 1e7 rows):

1. ids -> integer codes (model, hardware, precision, KV precision, basis) and the catalog's facts
   gathered by code (:func:`catalog_arrays`, computed once per catalog);
2. the layout resolved where it is not given (GPU count from the weights, tensor parallelism as wide as
   the scale-up domain allows) and checked against the model and the system
   (:func:`econ.physics.deployment.layout_problems`);
3. physics (:func:`run_physics`): KV bytes, capacity wall, decode step (:func:`econ.physics.performance.decode_step`),
   prefill throughput and TTFT (:func:`econ.physics.performance.prefill_step`), aggregated or disaggregated
   serving (prefill stalls, KV transfer, xPyD pool sizing);
4. cost (:func:`run_costs`): $/GPU-hour (owned TCO chain or rental, per *utilized* hour) and $/M input,
   output, blended and all-in output tokens;
5. status: feasible or the reason, and the binding wall.

Polars is used only at the edges: to read the input columns and to build the result frame.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from econ.physics import precision as prec
from econ.assumptions import (DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, DeploymentAssumptions,
                              Economics)
from econ.tables.catalog import Catalog, check_ids
from econ.physics.deployment import layout_labels, layout_problem_message, layout_problems, resolve_parallelism
from econ.physics.serving import mean_decode_context_tokens
from econ.physics.memory import kv_rule_reserved_bytes, weight_budget_bytes
from econ.errors import InvalidInputError, UnsupportedPrecisionError
from econ.presets import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN
from econ.physics.inputs import SPEC_METHODS, Efficiency, Formats, Layout, ModelFacts, Speculation
from econ.physics.performance import (WALLS, Collectives, collectives)
from econ.validate import require_in_range, require_integer
from econ.vocabulary import (FIELDS, KV_OFFLOAD_CHOICES, KV_TIER_CHOICES, MAX_BATCH, MAX_CONTEXT, MAX_CP,
                             MAX_PARALLEL, REASONS, TIER_ALIASES, TIERS, Tier, tier_code)
from econ.engine.arrays import (BAND_OF_COST, BAND_OF_RATE, FORMATS, CatalogArrays, band, catalog_arrays, efficiency,
                                profile_band, resolve_formats)
from econ.engine.core import (ECONOMIC_COLUMNS, CostInputs, EngineInputs, KvTiers, Serving, Workload, _broadcast,
                              _kv_bytes, _leaves, _rebuild, _resident, run_costs, run_physics, run_status, sweet_spot,
                              take_bundle, tier_rate, usd_per_gpu_hour)
from econ.engine import fused, small
from econ.tables.kv_tiers import load_kv_tiers, system_tiers


RESULT_COLUMNS: tuple[str, ...] = (
    "model", "hardware", "num_gpus", "tp", "pp", "precision", "kv_precision", "batch_size",
    "context_tokens", "input_len", "output_len", "max_batch_size", "feasible", "binding_wall",
    "infeasible_reason", "weight_bytes", "kv_bytes_per_sequence", "hbm_used_frac", "t_mem_s", "t_flop_s",
    "t_comm_s", "tpot_s", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "ttft_s",
    "input_tokens_per_s_per_gpu", "arithmetic_intensity_flop_per_byte", "basis", "usd_per_gpu_hour",
    "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power",
    "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens", "input_output_mix",
    "cache_hit_frac",
    "ep", "dp", "expert_tp", "scale_up_domain_size", "disaggregated", "layout", "num_microbatches",
    "bubble_frac", "two_batch_overlap", "weight_bytes_per_gpu", "kv_bytes_per_gpu", "t_comm_tp_s", "t_comm_ep_s", "t_comm_pp_s",
    "expert_imbalance_factor", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_num_gpus",
    "prefill_instances", "decode_instances", "total_gpus", "kv_transfer_bytes", "kv_transfer_s",
    "kv_link_frac", "prefill_stall_s", "served_tpot_s", "served_ttft_s", "served_tokens_per_s_per_user",
    "served_output_tokens_per_s_per_gpu", "served_requests_per_s", "pool_utilization_frac",
    "usd_per_m_output_tokens_all_in", "billed_input_tokens_per_s_per_gpu", "billed_output_tokens_per_s_per_gpu",
    "weight_format", "expert_weight_format", "spec_method", "spec_draft_tokens", "spec_acceptance",
    "accepted_tokens_per_step", "step_s", "redundant_experts", "ttft_percentile_s", "tpot_percentile_s",
    "prefill_utilization_frac", "latency_percentile",
    "efficiency_profile", "tokens_per_s_per_user_low", "tokens_per_s_per_user_high", "output_tokens_per_s_per_gpu_low",
    "output_tokens_per_s_per_gpu_high", "usd_per_m_input_tokens_low", "usd_per_m_input_tokens_high",
    "usd_per_m_output_tokens_low", "usd_per_m_output_tokens_high", "usd_per_m_blended_tokens_low",
    "usd_per_m_blended_tokens_high", "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high",
)
"""Columns of :func:`evaluate` (plus ``sweet_spot_batch`` when asked). Decode-phase figures are per
accelerator of the decode instance; prefill-phase figures per accelerator of the prefill instance;
``served_*`` figures cover the whole serving unit (both pools), see :mod:`econ.physics.deployment`.
``efficiency_profile`` names the calibration profile whose efficiencies the row used ("assumed" = the
scalar assumptions); the ``*_low`` / ``*_high`` columns are the row's band: the figure times the 10th and
90th percentile of measured / predicted on held-out cases of that profile (costs inverted), null where the
row has no calibrated profile."""

TIER_COLUMNS: tuple[str, ...] = ("cp", "max_batch_size_hbm", "kv_offload_frac", "kv_offload_s",
                                 "kv_tier_usd_per_gpu_hour", "prefix_load_s")
"""Issue-22 columns (KV tiers, prefix caching, context parallelism): returned when asked for in ``columns`` or when the
points have a ``kv_offload``, ``prefix_cache_tier``, ``cp`` or ``context_limit_tokens`` column (the default frame keeps
:data:`RESULT_COLUMNS`).
``cp`` is the prompt's context-parallel degree; ``max_batch_size_hbm`` the capacity wall with the KV in HBM only
(``max_batch_size`` includes the tiers ``kv_offload`` allows); ``kv_offload_frac`` the decode batch's KV share beyond
HBM, ``kv_offload_s`` the time each decode step spends reading it, ``kv_tier_usd_per_gpu_hour`` its storage [USD per
decode accelerator-hour] (inside the output and all-in $/M); ``prefix_load_s`` the cached prefix's load from
``prefix_cache_tier`` (inside ``ttft_s``)."""

_TIER_INPUTS = ("kv_offload", "prefix_cache_tier", "cp", "context_limit_tokens")

_BAND_COLUMNS = frozenset(f"{c}_{e}" for c in BAND_OF_RATE + BAND_OF_COST for e in ("low", "high"))

_INT_COLUMNS = {"spec_draft_tokens", "redundant_experts", "cp", "max_batch_size_hbm",
                "num_gpus", "tp", "pp", "batch_size", "context_tokens", "input_len", "output_len", "max_batch_size",
                "ep", "dp", "expert_tp", "scale_up_domain_size", "prefill_tp", "prefill_dp", "prefill_ep",
                "prefill_pp", "prefill_num_gpus", "prefill_instances", "decode_instances", "total_gpus"}
_TEXT_COLUMNS = {"weight_format", "expert_weight_format", "spec_method", "efficiency_profile",
                 "model", "hardware", "precision", "kv_precision", "binding_wall", "infeasible_reason", "basis",
                 "layout"}
_UNGATED = {"spec_acceptance", "latency_percentile",
            "weight_bytes", "kv_bytes_per_sequence", "input_output_mix", "cache_hit_frac", "expert_imbalance_factor",
            "kv_transfer_bytes", "feasible", "disaggregated", "two_batch_overlap"} | _INT_COLUMNS | _TEXT_COLUMNS
_LAYOUT_GATED = {"max_batch_size", "max_batch_size_hbm", "hbm_used_frac", "weight_bytes_per_gpu", "kv_bytes_per_gpu"}
"""Capacity columns that stay visible on infeasible rows, except rows whose layout is invalid."""


# ----------------------------------------------------------------------------------------------------
# The frame API
# ----------------------------------------------------------------------------------------------------

def _codes(series: pl.Series, categories, name: str, kind: str | None = None) -> np.ndarray:
    """Integer codes of a string column against ``categories``; unknown values raise naming the field.

    An Enum or Categorical column is cast to the codes' Enum directly, without materializing strings per row
    (issue 20: ~14 ms per column per 1e6 rows; an Enum of the catalog's own ids costs nothing)."""
    if isinstance(series.dtype, (pl.Enum, pl.Categorical)) and series.len() > 256 and not series.null_count():
        target = pl.Enum(list(categories))
        if series.dtype != target:
            uniq = series.unique().cast(pl.String).to_list()
            if kind is not None:
                check_ids(kind, uniq, categories)
            bad = [u for u in uniq if u not in categories]
            if bad:
                raise InvalidInputError(f"{name}={bad[0]!r} is not one of {list(categories)}")
        return series.cast(target).to_physical().to_numpy().astype(np.int32)
    s = series.cast(pl.String)
    if s.len() <= 256:  # a few rows: a Python dict beats the Polars round trips
        index = {c: i for i, c in enumerate(categories)}
        values = s.to_list()
        bad = [v for v in values if v not in index]
        if bad and kind is not None:
            check_ids(kind, bad, categories)
        if bad:
            raise InvalidInputError(f"{name}={bad[0]!r} is not one of {list(categories)}")
        return np.array([index[v] for v in values], dtype=np.int32)
    uniq = s.unique().to_list()
    if kind is not None:
        check_ids(kind, uniq, categories)
    else:
        bad = [u for u in uniq if u not in categories]
        if bad:
            raise InvalidInputError(f"{name}={bad[0]!r} is not one of {list(categories)}")
    return s.cast(pl.Enum(list(categories))).to_physical().to_numpy().astype(np.int32)


def _col(frame: pl.DataFrame, name: str, default=np.nan, present=None) -> np.ndarray:
    """A numeric (or boolean) column as float array; missing column or null cells -> ``default``.

    A missing column is a read-only broadcast view of ``default`` (no allocation per row); for a few rows a filled
    array, which costs less than the view's construction (issue 20.4). ``present``: the frame's column names as a
    set, when the caller reads many columns (``frame.columns`` builds a list per call)."""
    if name not in (frame.columns if present is None else present):
        return _filled(frame.height, np.float64(default))
    s = frame[name]
    if s.dtype == pl.Boolean:
        s = s.cast(pl.Float64)
    if not (s.dtype.is_numeric() or s.dtype == pl.Null):
        raise InvalidInputError(f"column {name} must be numeric, got {s.dtype}")
    arr = s.to_numpy().astype(np.float64, copy=False) if s.dtype != pl.Null else np.full(frame.height, np.nan)
    if s.null_count():
        arr = np.where(np.isnan(arr), default, arr)
    return arr


_FILLED: dict = {}
"""(rows, value) -> a read-only array of ``rows`` copies of ``value``, for frames of at most _SMALL_FRAME_ROWS rows."""


def _filled(n: int, value) -> np.ndarray:
    """A read-only array of ``n`` copies of ``value`` (a numpy scalar: its dtype is the array's): a broadcast view,
    or for a few rows one array kept per (rows, value) (issue 20.4: ~40 absent columns per call)."""
    if n > _SMALL_FRAME_ROWS:
        return np.broadcast_to(value, (n,))
    key = (n, value.dtype.str, value.tobytes())  # bytes: NaN keys match
    got = _FILLED.get(key)
    if got is None:
        got = np.full(n, value)
        got.setflags(write=False)
        if len(_FILLED) > 4096:
            _FILLED.clear()
        _FILLED[key] = got
    return got


def _row_note(i: int, n: int) -> str:
    return f"; first bad row {i}" if n > 1 else ""


def _optional_codes(points: pl.DataFrame, col: str, names, kind=None, present=None) -> np.ndarray:
    """Codes of an optional string column (-1 where absent or null); unknown values raise naming the field.
    ``present``: the frame's column names as a set (read once per call)."""
    if col not in (points.columns if present is None else present):
        return _filled(points.height, np.int32(-1))
    s = points[col].cast(pl.String)
    given = s.is_not_null().to_numpy()
    if not given.any():
        return np.full(points.height, -1, dtype=np.int32)
    codes = _codes(s.fill_null(names[0]), names, col, kind)
    return np.where(given, codes, -1).astype(np.int32)


def _kv_precision_codes(points: pl.DataFrame, prec_codes: np.ndarray) -> np.ndarray:
    kv_names = tuple(prec.KV_BYTES_PER_ELEMENT)
    default = np.array([kv_names.index(prec.DEFAULT_KV_PRECISION[p]) for p in prec.PRECISIONS], dtype=np.int32)
    out = default[prec_codes]
    if "kv_precision" in points.columns:
        given = points["kv_precision"].cast(pl.String)
        mask = given.is_not_null().to_numpy()
        if mask.any():
            out = np.where(mask, _codes(given.fill_null(kv_names[0]), kv_names, "kv_precision"), out)
    return out


def evaluate(points: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
             economics: Economics = Economics(), deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT, *,
             strict: bool = True, sweet_spot: bool = False, columns: tuple[str, ...] | list[str] | None = None,
             block_rows: int = 1 << 14, threads: int = 2, output: str = "frame",
             physics: dict | None = None) -> pl.DataFrame | dict | list:
    """Evaluate decode, prefill, capacity, serving and cost for every row of ``points``: the one engine.

    Parameters
    ----------
    points : pl.DataFrame, one deployment per row.
        Required: ``model``, ``hardware`` (catalog ids), ``precision`` (bf16|fp8|fp4, the matmul and
        weight format), ``batch_size`` [sequences per (decode) instance, all attention-DP groups].
        Optional (null or absent = the default): ``input_len``, ``output_len`` [tokens] (1024 each);
        ``context_tokens`` [tokens] (null: decode attends input + output/2 and the KV cache is sized for
        input + output; set: both use it); ``kv_precision`` (bf16|fp8; default by precision);
        ``num_gpus`` (per instance; null = tp x dp x pp when all are given, else the fewest powers of two
        whose usable HBM holds the weights, at least tp x dp); ``tp`` (null = as wide as the scale-up
        domain, the heads and num_gpus / dp allow), ``dp``, ``ep`` (1), ``pp`` (null = num_gpus / (tp dp));
        ``scale_up_domain_size`` (override the catalog's: the same chip on an 8- or a 72-GPU domain);
        ``disaggregated`` (bool), ``prefill_tp`` / ``prefill_dp`` / ``prefill_ep`` / ``prefill_pp`` (the
        prefill pool's instance; default = the decode instance), ``prefill_instances`` /
        ``decode_instances`` (x, y; default sized), ``arrival_rate_per_s`` [requests/s] (default: the unit
        runs at capacity); ``basis`` (a cost tier of :data:`econ.vocabulary.TIERS`), ``usd_per_gpu_hour`` (the rate of basis
        "custom") and any :class:`~econ.assumptions.Economics` field as a per-row override; ``all_in_capex_usd``
        [USD] (null = the catalog's) replaces the accelerator's capex on that row (owned tier; a sensitivity
        analysis moves it). Issue 22: ``kv_offload`` (none|host|nvme: the decode KV may spill beyond HBM),
        ``prefix_cache_tier`` (hbm|host|nvme|remote: where the ``cache_hit_frac`` share of each prompt is cached;
        a hit prefills only the new tokens, attending to the prefix; null = the prompt prefilled whole, the hit's
        share not charged), ``cp`` (context-parallel degree of the
        prefill, 1), ``context_limit_tokens`` (a served context window beyond the model's, e.g. a RoPE-extended
        1M-token Llama-3.1-405B as in Yang et al. arXiv:2411.01783; null = the model's); defaults change nothing.
        See :data:`TIER_COLUMNS`.
    catalog : Catalog
    assumptions : Assumptions (``assumptions.IDEAL`` for the pure roofline)
    economics : Economics, scalar defaults of every economic column not in ``points``
    deployment : DeploymentAssumptions
    strict : bool
        True: an unsupported precision, a missing price, an invalid layout or a context beyond the
        model's maximum raises. False: such rows come back infeasible with the reason (catalog-wide sweeps).
    sweet_spot : bool
        Also return ``sweet_spot_batch``, the decode memory/compute crossover [sequences] (null where
        decode never turns compute-bound: capacity decides).
    columns : sequence of str, optional
        Return only these result columns (saves memory on very large sweeps; everything is computed).
    block_rows : int
        Rows evaluated at a time (small enough for the arrays of a block to stay in cache); memory stays
        flat in the number of rows.
    threads : int
        Blocks evaluated concurrently (numpy releases the GIL inside its loops); 1 = serial.
    output : {"frame", "dict", "records"}
        "frame": a Polars frame; "dict": ``{column: list}`` (``frame.to_dict(as_series=False)``); "records": one
        dict per row (``frame.to_dicts()``), None for null. The last two skip building a frame (issue 20.4: a
        94-column one-row frame costs more than the row's physics) and are equal to the frame's values.
    physics : dict, optional
        A memo of the physics of these very ``points`` (the same frame object), kept by the caller across calls that
        change only the cost side of ``economics`` (power price, PUE, finance, utilization, token mix): each block's
        physics is computed once and its cost chain (:func:`run_costs`) run again. The memo holds a fingerprint of
        everything the physics reads (the frame's identity, the catalog, assumptions, deployment, result columns,
        blocks, the tier, custom rate and cache-hit rate); a call with another fingerprint empties it first, so a
        memo is never read stale. None (default): nothing kept. The result equals a call without it
        (tests/engine/test_physics_memo.py).

    Returns
    -------
    pl.DataFrame (or dict / list of dicts, see ``output``) with :data:`RESULT_COLUMNS` (or ``columns``). Infeasible rows have ``feasible = False``, a
    reason, and null times, rates and prices: never a silently priced row, never NaN or inf.

    Raises
    ------
    UnknownIdError, InvalidInputError, UnsupportedPrecisionError
        Naming the field, the value and the valid range (and the first bad row of a multi-row frame).
    """
    n = points.height
    if n == 0:
        raise InvalidInputError("points has no rows")
    present = set(points.columns)
    for c in ("model", "hardware", "precision", "batch_size"):
        if c not in present:
            raise InvalidInputError(f"points is missing required column {c!r}")
    want = tuple(columns) if columns is not None else (
        RESULT_COLUMNS + TIER_COLUMNS if any(c in present for c in _TIER_INPUTS) else RESULT_COLUMNS)
    unknown = [c for c in want if c not in RESULT_COLUMNS and c not in TIER_COLUMNS and c != "sweet_spot_batch"]
    if unknown:
        raise InvalidInputError(f"columns={unknown[0]!r} is not a result column (see econ.engine.RESULT_COLUMNS)")
    if sweet_spot and "sweet_spot_batch" not in want:
        want = want + ("sweet_spot_batch",)
    if output not in ("frame", "dict", "records"):
        raise InvalidInputError(f"output={output!r} is not one of ['frame', 'dict', 'records']")
    if (block_rows, threads) not in _CHECKED_CALLS:  # checked once per value (issue 20.4: ~40 us a call)
        require_integer("block_rows", block_rows, 1, 1 << 24, "rows")
        require_integer("threads", threads, 1, 64)
        if len(_CHECKED_CALLS) < 64:
            _CHECKED_CALLS.add((block_rows, threads))
    if n <= small.ROWS and physics is None:  # a few rows: plain Python scalars and a per-row cache (issue 20.4)
        got = small.evaluate(evaluate, _SMALL_RULES, points, catalog, assumptions, economics, deployment, strict, want,
                             block_rows, output)
        if got is not None:
            return got
    arr = catalog_arrays(catalog)
    if physics is not None:  # the memo is this frame's physics under this fingerprint, else emptied
        import weakref

        fingerprint = (n, assumptions, deployment, strict, want, block_rows, economics.basis,
                       economics.usd_per_gpu_hour, economics.cache_hit_frac)
        kept_catalog = physics.get("_catalog")
        if (physics.get("_points") is not points or kept_catalog is None or kept_catalog() is not catalog
                or physics.get("_fingerprint") != fingerprint):
            physics.clear()
            physics.update(_points=points, _catalog=weakref.ref(catalog), _fingerprint=fingerprint)
    # the id columns' codes are a function of the frame, the catalog and the tier (all in the memo's fingerprint):
    # a memo keeps them (~10 ms of string casts and lookups for the ~24,000 screened rows of the quote check)
    codes = None if physics is None else physics.get("_codes")
    if codes is None:
        codes = _input_codes(points, present, arr, economics)
        if physics is not None:
            physics["_codes"] = codes
    model_code, hw_code, prec_code, kv_code, basis_code, optional = codes
    raw = _read_inputs(points, economics)
    raw["precision_code"], raw["kv_code"] = prec_code, kv_code
    raw.update(optional)
    static = _static_table(catalog, arr, assumptions, deployment)
    key = ((model_code * len(arr.hardware_ids) + hw_code) * len(prec.PRECISIONS) + prec_code) \
        * len(prec.KV_BYTES_PER_ELEMENT) + kv_code
    decode_only = not (set(want) & _PREFILL_COLUMNS)
    ctx = _Context(points, catalog, arr, static, assumptions, deployment, strict, n, decode_only=decode_only,
                   physics=physics,
                   fused=decode_only and physics is None and fused.covers([c for c in want if c not in _ID_COLUMNS], n))
    coded = ("binding_wall", "infeasible_reason", "weight_format", "expert_weight_format", "spec_method",
             "efficiency_profile")
    out = {c: (np.empty(n, dtype=np.int8) if c in coded else
               np.empty(n, dtype=bool) if c in ("feasible", "disaggregated", "two_batch_overlap")
               else np.empty(n, dtype=float))
           for c in want if c not in ("model", "hardware", "precision", "kv_precision", "basis", "layout")}
    need_layout = "layout" in want
    if need_layout:
        for c in _LAYOUT_KEYS:
            out.setdefault(c, np.empty(n, dtype=bool if c == "disaggregated" else float))
    starts = range(0, n, block_rows)
    # every block's physics kept from an earlier call: its layout labels hold (_layout_column)
    labels_kept = physics is not None and all(start in physics for start in starts)

    def work(start):
        sl = slice(start, min(start + block_rows, n))
        # codes are int32 for the whole frame (memory: 1e7 rows), intp for a block (fancy indexing without a cast)
        raw_block = {k: v[sl] for k, v in raw.items()}
        raw_block["precision_code"] = raw_block["precision_code"].astype(np.intp)
        _evaluate_block(ctx, sl, model_code[sl].astype(np.intp), hw_code[sl].astype(np.intp),
                        basis_code[sl].astype(np.intp), key[sl].astype(np.intp), raw_block, out)

    if threads > 1 and len(starts) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            list(pool.map(work, starts))  # re-raises the exception of the earliest failing block
    else:
        for start in starts:
            work(start)
    if output != "frame":
        columns = _result_columns(points, out, want, prec_code, kv_code, basis_code,
                                  tuple(arr.profile_ids) + ("assumed",), (physics, labels_kept))
        names, lists, _ = _result_lists(columns)
        return dict(zip(names, lists)) if output == "dict" else [dict(zip(names, r)) for r in zip(*lists)]
    return _result_frame(points, out, want, prec_code, kv_code, basis_code, need_layout, arr, (physics, labels_kept))


def _input_codes(points: pl.DataFrame, present: set, arr: CatalogArrays, economics: Economics) -> tuple:
    """(model, hardware, precision, KV precision, tier codes, {``<col>_code``: codes of the optional string columns})
    of ``points``: int32 arrays of one code per row, read-only (a ``physics`` memo of :func:`evaluate` keeps them).

    Raises
    ------
    UnknownIdError, InvalidInputError : an unknown id or choice, naming the field and the valid values."""
    n = points.height
    model_code = _codes(points["model"], arr.model_ids, "model", "model")
    hw_code = _codes(points["hardware"], arr.hardware_ids, "hardware", "hardware")
    prec_code = _codes(points["precision"], prec.PRECISIONS, "precision")
    kv_code = _kv_precision_codes(points, prec_code)
    basis_code = (_codes(points["basis"].cast(pl.String).fill_null(economics.basis).replace(TIER_ALIASES), TIERS,
                         "basis")
                  if "basis" in present else np.full(n, tier_code(economics.basis), dtype=np.int32))
    optional = {f"{col}_code": _optional_codes(points, col, names, kind, present)
                for col, names, kind in (("kv_offload", KV_OFFLOAD_CHOICES, None),
                                         ("prefix_cache_tier", KV_TIER_CHOICES, None),
                                         ("weight_format", FORMATS, None), ("expert_weight_format", FORMATS, None),
                                         ("spec_method", SPEC_METHODS, None),
                                         ("spec_draft_model", arr.model_ids, "model"))}
    for v in (model_code, hw_code, prec_code, kv_code, basis_code, *optional.values()):
        if v.flags.writeable:
            v.setflags(write=False)
    return model_code, hw_code, prec_code, kv_code, basis_code, optional


_CHECKED_CALLS: set = set()
"""(block_rows, threads) pairs of :func:`evaluate` that passed their range checks (a few entries)."""


@dataclass(frozen=True)
class _Context:
    points: pl.DataFrame
    catalog: Catalog
    arrays: CatalogArrays
    static: "_Static"
    assumptions: Assumptions
    deployment: DeploymentAssumptions
    strict: bool
    n: int
    decode_only: bool = False
    physics: dict | None = None
    fused: bool = False
    """Try the fused decode + cost kernel (:mod:`econ.engine.fused`) on each block it covers."""


_PREFILL_COLUMNS = frozenset({
    "ttft_s", "input_tokens_per_s_per_gpu", "usd_per_m_input_tokens", "usd_per_m_blended_tokens",
    "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_num_gpus", "prefill_instances",
    "decode_instances", "total_gpus", "kv_transfer_bytes", "kv_transfer_s", "kv_link_frac", "prefill_stall_s",
    "served_tpot_s", "served_ttft_s", "served_tokens_per_s_per_user", "served_output_tokens_per_s_per_gpu",
    "served_requests_per_s", "pool_utilization_frac", "usd_per_m_output_tokens_all_in", "ttft_percentile_s",
    "tpot_percentile_s", "prefill_utilization_frac", "usd_per_m_input_tokens_low", "usd_per_m_input_tokens_high",
    "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high", "usd_per_m_output_tokens_all_in_low",
    "usd_per_m_output_tokens_all_in_high", "layout", "disaggregated", "billed_input_tokens_per_s_per_gpu",
    "prefix_load_s"})
"""Result columns that need the prefill side of the physics; a request without any of them skips it."""


_ID_COLUMNS = frozenset({"model", "hardware", "precision", "kv_precision", "basis"})
"""Result columns that echo the input's ids (built from its codes, not computed per block)."""


_QUEUE_COLUMNS = frozenset({"ttft_percentile_s", "prefill_utilization_frac"})
"""Result columns that need the percentile prefill queue; a request without them skips it."""


_INPUT_DEFAULTS = {
    "batch_size": np.nan, "input_len": float(DEFAULT_INPUT_LEN), "output_len": float(DEFAULT_OUTPUT_LEN), "context_tokens": np.nan, "num_gpus": np.nan,
    "tp": np.nan, "dp": np.nan, "ep": np.nan, "pp": np.nan, "scale_up_domain_size": np.nan, "disaggregated": 0.0,
    "prefill_tp": np.nan, "prefill_dp": np.nan, "prefill_ep": np.nan, "prefill_pp": np.nan,
    "prefill_instances": np.nan, "decode_instances": np.nan, "arrival_rate_per_s": np.nan,
    "spec_draft_tokens": np.nan, "spec_acceptance": np.nan, "redundant_experts": 0.0, "two_batch_overlap": np.nan,
    "output_len_cv": 0.0, "input_len_cv": 0.0, "all_in_capex_usd": np.nan, "cp": 1.0,
    "context_limit_tokens": np.nan,
}


def _read_inputs(points: pl.DataFrame, economics: Economics) -> dict:
    """Every numeric input column as a float array (defaults filled), range-checked on the whole frame.

    Only the columns the frame has are checked row by row; the defaults of absent columns are valid by
    construction, and ``economics``' scalars are checked once per Economics (issue 20.4: ~40 range checks of
    broadcast defaults cost more than a one-row evaluation's physics)."""
    present = set(points.columns)
    raw = {k: _col(points, k, v, present) for k, v in _INPUT_DEFAULTS.items()}
    n = points.height
    require_integer("batch_size", raw["batch_size"], 1, MAX_BATCH, "sequences")
    for name in ("input_len", "output_len"):
        if name in present:
            require_integer(name, raw[name], 1, MAX_CONTEXT, "tokens")
    for name, hi, unit in (("context_tokens", MAX_CONTEXT, "tokens"), ("num_gpus", 1 << 20, "accelerators"),
                           ("scale_up_domain_size", 1 << 20, "accelerators"), ("tp", MAX_PARALLEL, ""),
                           ("dp", MAX_PARALLEL, ""), ("ep", MAX_PARALLEL, ""), ("pp", MAX_PARALLEL, ""),
                           ("prefill_tp", MAX_PARALLEL, ""), ("prefill_dp", MAX_PARALLEL, ""),
                           ("prefill_ep", MAX_PARALLEL, ""), ("prefill_pp", MAX_PARALLEL, ""),
                           ("prefill_instances", MAX_PARALLEL, "instances"),
                           ("decode_instances", MAX_PARALLEL, "instances")):
        if name not in present:
            continue
        v = raw[name]
        given = ~np.isnan(v)
        if given.any():
            require_integer(name, np.where(given, v, 1.0), 1, hi, unit)
    k = raw["spec_draft_tokens"]
    if "spec_draft_tokens" in present and (~np.isnan(k)).any():
        require_integer("spec_draft_tokens", np.where(np.isnan(k), 0.0, k), 0, 16, "tokens")
    acc = raw["spec_acceptance"]
    if "spec_acceptance" in present and (~np.isnan(acc)).any():
        require_in_range("spec_acceptance", np.where(np.isnan(acc), 0.0, acc), 0.0, 1.0, hi_inclusive=False)
    if "cp" in present:
        require_integer("cp", raw["cp"], 1, MAX_CP, "ranks")
    lim = raw["context_limit_tokens"]
    if "context_limit_tokens" in present and (~np.isnan(lim)).any():
        require_integer("context_limit_tokens", np.where(np.isnan(lim), 2.0, lim), 2, MAX_CONTEXT, "tokens")
    if "redundant_experts" in present:
        require_integer("redundant_experts", raw["redundant_experts"], 0, 1 << 16, "experts per MoE layer")
    for name in ("output_len_cv", "input_len_cv"):  # the one range of each field (econ.vocabulary)
        if name in present:
            f = FIELDS[name]
            require_in_range(name, raw[name], f.lo, f.hi, f.unit)
    cap = raw["all_in_capex_usd"]
    if "all_in_capex_usd" in present and (~np.isnan(cap)).any():  # a per-row capex (sensitivity analyses)
        f = FIELDS["custom_capex_usd"]
        require_in_range("all_in_capex_usd", np.where(np.isnan(cap), f.hi, cap), f.lo, f.hi, f.unit,
                         lo_inclusive=not f.lo_open)
    for name in ("disaggregated", "two_batch_overlap"):
        if name not in present:
            continue
        v = raw[name]
        bad = ~np.isnan(v) & (v != 0) & (v != 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidInputError(f"{name}={v[i]:g} must be true or false{_row_note(i, n)}")
    if "arrival_rate_per_s" in present:
        arrival = raw["arrival_rate_per_s"]
        require_in_range("arrival_rate_per_s", np.where(np.isnan(arrival), 1.0, arrival), 0.0, 1e9, "requests/s",
                         lo_inclusive=False)
    for name in ECONOMIC_COLUMNS:
        raw[name] = _col(points, name, float(getattr(economics, name)), present)
    raw["usd_per_gpu_hour"] = _col(points, "usd_per_gpu_hour", np.nan if economics.usd_per_gpu_hour is None
                                   else float(economics.usd_per_gpu_hour), present)
    _check_economics(economics)
    given = ~np.isnan(raw["usd_per_gpu_hour"])
    for name in ("usd_per_gpu_hour", *ECONOMIC_COLUMNS):  # the one range of each field (econ.vocabulary)
        if name not in present:
            continue
        f = FIELDS[name]
        values = raw[name][given] if name == "usd_per_gpu_hour" else raw[name]
        require_in_range(name, values, f.lo, f.hi, f.unit, lo_inclusive=not f.lo_open)
    return raw


_SMALL_RULES = small.Rules(_INPUT_DEFAULTS, frozenset(_UNGATED), frozenset(_LAYOUT_GATED), frozenset(_INT_COLUMNS),
                           frozenset(_TEXT_COLUMNS))
"""What the small-input path (:mod:`econ.engine.small`) reads of this module."""


_CHECKED_ECONOMICS: dict = {}
"""Economics objects whose scalar fields passed :func:`_check_economics` (keyed by value; a few entries)."""


def _check_economics(economics: Economics) -> None:
    """The ranges of ``economics``' fields (econ.vocabulary.FIELDS), once per distinct Economics."""
    try:
        key = hash(economics)
    except TypeError:  # pragma: no cover - an unhashable field: check every time
        key = None
    if key is not None and _CHECKED_ECONOMICS.get(key) == economics:
        return
    for name in ("usd_per_gpu_hour", *ECONOMIC_COLUMNS):
        v = getattr(economics, name)
        if v is None:
            continue
        f = FIELDS[name]
        require_in_range(name, np.array([float(v)]), f.lo, f.hi, f.unit, lo_inclusive=not f.lo_open)
    if key is not None:
        if len(_CHECKED_ECONOMICS) > 64:
            _CHECKED_ECONOMICS.clear()
        _CHECKED_ECONOMICS[key] = economics


def _pow2_ceil(x):
    return 2.0 ** np.ceil(np.log2(np.maximum(x, 1.0)))


@dataclass(frozen=True)
class _Static:
    """What depends only on (model, accelerator, precision, KV precision) with default formats and layout:
    computed once per catalog and assumptions for every combination, gathered per row by the combined code."""

    formats: Formats
    unsupported: np.ndarray
    weight_code: np.ndarray
    expert_code: np.ndarray
    auto_num_gpus: np.ndarray
    auto_tp: np.ndarray
    auto_problem: np.ndarray
    auto_collectives: Collectives


_STACKS: dict = {}
"""id(bundle) -> (bundle, leaf paths, stacked matrix, dtypes) for :func:`_gather` (static tables only: a few entries)."""


def _gather(bundle, index):
    """A dataclass of arrays (nested bundles included) restricted to ``index``; scalars stay scalars.

    The array leaves are stacked once per bundle into one matrix, so a gather is one fancy index. Module-level
    helpers, no closures: a recursive closure defined per call is a reference cycle that kept each block's
    arrays alive until the cycle collector ran (issue 20: 4.4-4.9 GiB peak over repeated 1e7-point calls)."""
    got = _STACKS.get(id(bundle))
    if got is None or got[0] is not bundle:
        leaves: list = []
        _leaves(bundle, (), leaves)
        lengths = {v.shape for _, v in leaves}
        matrix = np.stack([v.astype(float) for _, v in leaves]) if len(lengths) == 1 else None
        got = (bundle, [p for p, _ in leaves], matrix, [v.dtype for _, v in leaves])
        if len(_STACKS) > 64:
            _STACKS.clear()
        _STACKS[id(bundle)] = got
    _, paths, matrix, dtypes = got
    if matrix is None:
        return take_bundle(bundle, index)
    rows = matrix[:, index]
    values = {p: (r if dt == np.float64 else r.astype(dt)) for p, r, dt in zip(paths, rows, dtypes)}
    return _rebuild(bundle, (), values)


def _combinations(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a row of each distinct value of ``code``, each row's index into those rows) for :attr:`EngineInputs.combos`.

    Codes are small non-negative integers (catalog combinations), so a table of seen codes replaces a sort; the row
    kept for a code is any of its rows (they are equal by construction)."""
    size = int(code.max()) + 1
    if size > 1 << 22:  # pragma: no cover - a catalog of millions of combinations
        _, rows, index = np.unique(code, return_index=True, return_inverse=True)
        return rows, index.ravel()
    seen = np.zeros(size, dtype=bool)
    seen[code] = True
    ids = np.flatnonzero(seen)
    slot = np.empty(size, dtype=np.intp)
    slot[ids] = np.arange(len(ids))
    index = slot[code]
    rows = np.empty(len(ids), dtype=np.intp)
    rows[index] = np.arange(len(code))
    return rows, index


def _uniform_codes(codes: np.ndarray) -> bool:
    """True when every code equals the first (a block of one model or one accelerator)."""
    return bool(codes[0] == codes[-1] and (codes == codes[0]).all())


def _uniform(v: np.ndarray) -> bool:
    """True when every element of ``v`` equals the first, or all are NaN."""
    if v.ndim == 1 and v.strides[0] == 0:  # a broadcast view of one value (an absent column, :func:`_filled`)
        return True
    return bool((v == v[0]).all() or np.isnan(v).all())


def _static_table(catalog: Catalog, arr: CatalogArrays, a: Assumptions, da: DeploymentAssumptions) -> _Static:
    """:class:`_Static` for every (model, accelerator, precision, KV precision), cached on the catalog."""
    cache = getattr(catalog, "_engine_static", None)
    if cache is None:
        cache = {}
        object.__setattr__(catalog, "_engine_static", cache)
    eff = Efficiency.from_assumptions(a, da)
    k = (a.usable_hbm_frac, a.kv_memory_rule, a.prefill_chunk_tokens, a.embedding_bytes_per_param,
         da.kv_head_replication, eff.scale_up_latency_s,
         eff.scale_out_latency_s, eff.alltoall_scale_up_latency_s, eff.alltoall_scale_out_latency_s)
    if k in cache:
        return cache[k]
    shape = (len(arr.model_ids), len(arr.hardware_ids), len(prec.PRECISIONS), len(prec.KV_BYTES_PER_ELEMENT))
    mc, hc, pc, kc = (g.ravel() for g in np.indices(shape))
    model, hw = arr.models(mc), arr.accelerators(hc)
    formats, unsupported, _, wcode, ecode = resolve_formats(hw, pc, kc, arr.pinned_weight_format[mc],
                                                            arr.pinned_expert_format[mc],
                                                            embedding_bytes_per_param=a.embedding_bytes_per_param,
                                                            native_fp8=arr.native_fp8_format[mc])
    # the fewest accelerators whose weight budget holds the weights (under the free rule TP1's reservation: the largest)
    reserved = kv_rule_reserved_bytes(a.kv_memory_rule, a.prefill_chunk_tokens, model, 1.0)
    budget = weight_budget_bytes(hw.hbm_capacity_bytes, a.usable_hbm_frac, a.kv_memory_rule == "free", reserved)
    ngpu = _pow2_ceil(np.ceil(_resident(model, formats) / np.maximum(budget, 1.0)))
    tp, pp = resolve_parallelism(ngpu, hw.scale_up_domain_size, model.num_attention_heads)
    one = np.ones_like(tp)
    problem = layout_problems(tp, one, one, pp, ngpu, hw.scale_up_domain_size, model.num_attention_heads,
                              model.kv_shard_heads, model.num_layers, model.num_experts,
                              kv_head_replication=da.kv_head_replication)
    out = _Static(formats=formats, unsupported=unsupported, weight_code=wcode, expert_code=ecode,
                  auto_num_gpus=ngpu, auto_tp=tp, auto_problem=problem,
                  auto_collectives=collectives(hw, Layout(tp=tp, dp=one, ep=one, pp=pp,
                                                          scale_up_domain_size=hw.scale_up_domain_size), eff))
    cache[k] = out
    return out


_CUSTOM = tier_code(Tier.CUSTOM)


def _tier_rates(arr: CatalogArrays) -> np.ndarray:
    """[accelerator, tier] :func:`tier_rate` of every catalog accelerator (custom: NaN), cached on ``arr``. [USD/h]

    Every row of a tier reads the same accelerator columns, so the choice among the tiers is made once per
    catalog, not per row and block (issue 20: tier_rate took 9% of a decode + cost grid)."""
    got = arr.tier_rates.get("rates")
    if got is None:
        hw = arr.accelerators(np.arange(len(arr.hardware_ids)))
        got = np.stack([np.broadcast_to(np.asarray(tier_rate(hw, np.full(len(arr.hardware_ids), c)), dtype=float),
                                        (len(arr.hardware_ids),)) if c != _CUSTOM
                        else np.full(len(arr.hardware_ids), np.nan) for c in range(len(TIERS))], axis=1)
        arr.tier_rates["rates"] = got
    return got


_LAYOUT_KEYS = ("tp", "dp", "ep", "pp", "disaggregated", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                "prefill_instances", "decode_instances")
_GIVEN_LAYOUT = ("num_gpus", "tp", "dp", "ep", "pp", "scale_up_domain_size")


def _evaluate_block(ctx: _Context, sl: slice, mc, hc, bc, key, raw: dict, out: dict) -> None:
    """Validate, resolve and evaluate rows ``sl``; write the result columns into ``out`` (NaN = null)."""
    a, da = ctx.assumptions, ctx.deployment
    # a block of one model (or one accelerator) takes its facts as scalars: every expression of them alone is then
    # computed once for the block, not once per row (issue 20.2; a grid's blocks mostly hold one model)
    model = ctx.arrays.models(int(mc[0]) if _uniform_codes(mc) else mc)
    hw = ctx.arrays.accelerators(int(hc[0]) if _uniform_codes(hc) else hc)
    cap = raw["all_in_capex_usd"]
    if not np.isnan(cap).all():  # per-row capex replaces the catalog's (a fresh gather: the catalog is untouched)
        hw.all_in_capex_usd = np.where(np.isnan(cap), hw.all_in_capex_usd, cap)
    nb = len(mc)
    owned = bc == 0
    rate = _tier_rates(ctx.arrays)[hc, bc]  # [USD/h] of the row's tier, looked up once (NaN: owned, custom, none)
    custom = bc == _CUSTOM
    if custom.any():
        rate = np.where(custom, raw["usd_per_gpu_hour"], rate)
    price_missing = np.where(owned, np.isnan(hw.all_in_capex_usd), np.isnan(rate))
    kept = None if ctx.physics is None else ctx.physics.get(sl.start)
    if kept is None:  # a memo entry is the same rows' physics under the same fingerprint (see evaluate)
        kept = _block_physics(ctx, sl, mc, hc, bc, key, raw, model, hw, owned, price_missing,
                              queue=bool(_QUEUE_COLUMNS & out.keys()), rate=rate)
        if ctx.physics is not None:
            ctx.physics[sl.start] = kept
    if isinstance(kept, _FusedBlock):  # the fused kernel wrote the requested columns (issue 20.3)
        values, feasible, layout_bad = kept.values, kept.values["feasible"], kept.layout_bad
    else:
        (phys, inp, unsupported, too_wide, wcode, ecode, spec, spec_problem, ngpu, tp, pp, dp, ep, domain, dis, red,
         batch, input_len, output_len, capacity_ctx, context_over, layout_bad) = kept
        econ_rows = {k: raw[k] for k in ECONOMIC_COLUMNS}
        pc = raw["precision_code"]
        costs = run_costs(phys, inp, hw, CostInputs(basis_code=bc, usd_per_gpu_hour=raw["usd_per_gpu_hour"],
                                                    tier_usd_per_gpu_hour=rate, **econ_rows))
        feasible, code, wall = run_status(phys, inp, unsupported=unsupported, price_missing=price_missing, owned=owned,
                                          layout_bad=layout_bad, context_over=context_over, too_wide=too_wide,
                                          spec_bad=spec_problem >= 0)
        d, p = phys.decode, phys.prefill
        values = {
            "num_gpus": ngpu, "tp": tp, "pp": np.round(pp), "batch_size": batch, "context_tokens": capacity_ctx,
            "input_len": input_len, "output_len": output_len, "max_batch_size": phys.max_batch_size,
            "feasible": feasible,
            "binding_wall": wall, "infeasible_reason": code, "weight_bytes": phys.weight_bytes,
            "kv_bytes_per_sequence": phys.kv_bytes_per_sequence, "hbm_used_frac": phys.hbm_used_frac,
            "t_mem_s": d.t_mem_s, "t_flop_s": d.t_flop_s, "t_comm_s": d.t_comm_s, "tpot_s": d.tpot_s,
            "tokens_per_s_per_user": d.tokens_per_s_per_user,
            "output_tokens_per_s_per_gpu": d.output_tokens_per_s_per_gpu,
            "ttft_s": phys.ttft_s, "input_tokens_per_s_per_gpu": p.input_tokens_per_s_per_gpu,
            "arithmetic_intensity_flop_per_byte": d.arithmetic_intensity_flop_per_byte,
            "usd_per_gpu_hour": costs.usd_per_gpu_hour, "usd_per_gpu_hour_capex": costs.usd_per_gpu_hour_capex,
            "usd_per_gpu_hour_facility": costs.usd_per_gpu_hour_facility,
            "usd_per_gpu_hour_opex": costs.usd_per_gpu_hour_opex,
            "usd_per_gpu_hour_power": costs.usd_per_gpu_hour_power,
            "usd_per_m_input_tokens": costs.usd_per_m_input_tokens,
            "usd_per_m_output_tokens": costs.usd_per_m_output_tokens,
            "usd_per_m_blended_tokens": costs.usd_per_m_blended_tokens,
            "input_output_mix": econ_rows["input_output_mix"], "cache_hit_frac": econ_rows["cache_hit_frac"],
            "ep": ep, "dp": dp, "expert_tp": tp * dp / ep, "scale_up_domain_size": domain, "disaggregated": dis > 0,
            "num_microbatches": d.num_microbatches, "bubble_frac": d.bubble_frac,
            "two_batch_overlap": np.broadcast_to(d.two_batch_overlap, (nb,)) > 0,
            "weight_bytes_per_gpu": phys.weight_bytes_per_gpu, "kv_bytes_per_gpu": phys.kv_bytes_per_gpu,
            "t_comm_tp_s": d.t_comm_tp_s, "t_comm_ep_s": d.t_comm_ep_s, "t_comm_pp_s": d.t_comm_pp_s,
            "expert_imbalance_factor": np.where(ep > 1, da.expert_imbalance_factor, 1.0),
            "prefill_tp": phys.prefill_layout.tp, "prefill_dp": phys.prefill_layout.dp,
            "prefill_ep": phys.prefill_layout.ep, "prefill_pp": phys.prefill_layout.pp,
            "prefill_num_gpus": phys.prefill_layout.num_gpus, "prefill_instances": phys.prefill_instances,
            "decode_instances": phys.decode_instances, "total_gpus": phys.total_gpus,
            "kv_transfer_bytes": phys.kv_transfer_bytes, "kv_transfer_s": phys.kv_transfer_s,
            "kv_link_frac": phys.kv_link_frac, "prefill_stall_s": phys.prefill_stall_s,
            "served_tpot_s": phys.served_tpot_s, "served_ttft_s": phys.served_ttft_s,
            "served_tokens_per_s_per_user": phys.served_tokens_per_s_per_user,
            "served_output_tokens_per_s_per_gpu": phys.served_output_tokens_per_s_per_gpu,
            "served_requests_per_s": phys.served_requests_per_s, "pool_utilization_frac": phys.pool_utilization_frac,
            "usd_per_m_output_tokens_all_in": costs.usd_per_m_output_tokens_all_in,
            "billed_input_tokens_per_s_per_gpu": costs.billed_input_tokens_per_s_per_gpu,
            "billed_output_tokens_per_s_per_gpu": costs.billed_output_tokens_per_s_per_gpu,
            "weight_format": wcode, "expert_weight_format": ecode, "spec_method": spec.method_code,
            "spec_draft_tokens": spec.draft_tokens, "spec_acceptance": spec.acceptance,
            "accepted_tokens_per_step": d.accepted_tokens_per_step, "step_s": d.step_s, "redundant_experts": red,
            "ttft_percentile_s": phys.ttft_percentile_s, "tpot_percentile_s": phys.tpot_percentile_s,
            "prefill_utilization_frac": phys.prefill_utilization_frac, "latency_percentile": a.latency_percentile,
            "cp": raw["cp"], "max_batch_size_hbm": phys.max_batch_size_hbm, "kv_offload_frac": phys.kv_offload_frac,
            "kv_offload_s": phys.kv_offload_s, "kv_tier_usd_per_gpu_hour": phys.kv_tier_usd_per_gpu_hour,
            "prefix_load_s": phys.prefix_load_s,
        }
        if any(c in out for c in _BAND_COLUMNS):
            values.update(band(values, *profile_band(ctx.arrays, a, hc, pc)))
        if "efficiency_profile" in out:
            g = ctx.arrays.generation_code[hc] if ctx.arrays.generation_code.size else np.full(nb, -1)
            known = np.array([bool(x) for x in ctx.arrays.profile_ids] + [False])
            code = np.where(g >= 0, g * len(prec.PRECISIONS) + pc, -1)
            values["efficiency_profile"] = np.where(known[code] & bool(a.calibrated_fields), code, -1)
    infeasible = ~feasible
    masks = (infeasible, layout_bad)
    masked = (bool(infeasible.any()), bool(layout_bad.any()))
    checked = []  # (column, its block slice, which mask): refused below if not finite where the mask is False
    for c, target in out.items():
        t = target[sl]
        t[...] = sweet_spot(inp, a) if c == "sweet_spot_batch" else values[c]
        if t.dtype != np.float64 or c in _INT_COLUMNS and c not in ("max_batch_size", "max_batch_size_hbm"):
            continue
        if c == "sweet_spot_batch":  # inf = decode never turns compute-bound: capacity decides (null)
            np.copyto(t, np.nan, where=~np.isfinite(t))
            continue
        which = 0 if c not in _UNGATED and c not in _LAYOUT_GATED else 1
        if c in _BAND_COLUMNS:  # NaN = the row has no calibration profile: null, by design
            if masked[which]:
                np.copyto(t, np.nan, where=masks[which])
            continue
        checked.append((c, t, which))
    if checked:  # no NaN or inf reaches a table: a bug, not a null (one stacked test per block, issue 20.4)
        stack = np.stack([t for _, t, _ in checked])
        bad = ~np.isfinite(stack)
        if masked[0] or masked[1]:
            rows = np.array([w for _, _, w in checked])
            bad &= ~np.stack(masks)[rows]
        if bad.any():
            k = int(np.flatnonzero(bad.any(axis=1))[0])
            r = sl.start + int(np.flatnonzero(bad[k])[0])
            raise InvalidInputError(f"result column {checked[k][0]} is not finite in row {r} "
                                    f"({ctx.points['model'][r]} on {ctx.points['hardware'][r]})")
        for c, t, which in checked:
            if masked[which] and (c not in _UNGATED or c in _LAYOUT_GATED):
                np.copyto(t, np.nan, where=masks[which])


class _BlockPhysics(NamedTuple):
    """What :func:`_block_physics` returns and a ``physics`` memo of :func:`evaluate` keeps per block: the physics
    and inputs, the resolved layout and workload columns, and the masks the status reads (row arrays)."""

    phys: object
    inp: object
    unsupported: object
    too_wide: object
    wcode: object
    ecode: object
    spec: object
    spec_problem: object
    ngpu: object
    tp: object
    pp: object
    dp: object
    ep: object
    domain: object
    dis: object
    red: object
    batch: object
    input_len: object
    output_len: object
    capacity_ctx: object
    context_over: object
    layout_bad: object


def _block_physics(ctx: _Context, sl: slice, mc, hc, bc, key, raw: dict, model, hw, owned, price_missing,
                   queue: bool, rate=None) -> tuple:
    """The physics of rows ``sl`` (everything :func:`_evaluate_block` computes before the cost chain): what a
    ``physics`` memo of :func:`evaluate` keeps per block, as a :class:`_BlockPhysics`; or, where the fused kernel
    covers the block (``ctx.fused``, :func:`_fused_block`), its result columns as a :class:`_FusedBlock`. ``rate``:
    each row's tier $/GPU-hour (:func:`_evaluate_block`), read by the fused kernel only."""
    a, da, st = ctx.assumptions, ctx.deployment, ctx.static
    nb = len(mc)
    wc_in, ec_in = raw["weight_format_code"], raw["expert_weight_format_code"]
    if (wc_in < 0).all() and (ec_in < 0).all():  # default formats: from the static table
        formats, unsupported = _gather(st.formats, key), st.unsupported[key]
        too_wide, wcode, ecode = np.zeros(nb, dtype=bool), st.weight_code[key], st.expert_code[key]
    else:
        formats, unsupported, too_wide, wcode, ecode = resolve_formats(
            hw, raw["precision_code"], raw["kv_code"], ctx.arrays.pinned_weight_format[mc],
            ctx.arrays.pinned_expert_format[mc], wc_in, ec_in, a.embedding_bytes_per_param,
            native_fp8=ctx.arrays.native_fp8_format[mc])
    spec, spec_problem = _resolve_spec(ctx, mc, model, formats, raw)
    # workload
    batch, input_len, output_len = raw["batch_size"], raw["input_len"], raw["output_len"]
    ctx_in = raw["context_tokens"]
    life = mean_decode_context_tokens(input_len, output_len, raw["output_len_cv"])
    if np.isnan(ctx_in).all():
        decode_ctx, capacity_ctx = life, input_len + output_len
    else:
        has_ctx = ~np.isnan(ctx_in)
        decode_ctx = np.where(has_ctx, ctx_in, life)
        capacity_ctx = np.where(has_ctx, ctx_in, input_len + output_len)
    limit = raw["context_limit_tokens"]  # a served context window beyond the release's (RoPE-extended), NaN = none
    max_ctx = model.max_context_tokens if np.isnan(limit).all() else np.where(np.isnan(limit),
                                                                               model.max_context_tokens, limit)
    context_over = capacity_ctx > max_ctx
    # layout: resolve what is not given (from the static table when nothing is)
    dis = raw["disaggregated"]
    any_dis = bool(dis.any())
    facts = dict(num_attention_heads=model.num_attention_heads, kv_shard_heads=model.kv_shard_heads,
                 num_layers=model.num_layers, num_experts=model.num_experts)
    red = raw["redundant_experts"]
    if all(np.isnan(raw[k]).all() for k in _GIVEN_LAYOUT) and not np.any(red):
        domain = hw.scale_up_domain_size
        dp = ep = np.ones(nb)
        ngpu, tp = st.auto_num_gpus[key], st.auto_tp[key]
        pp = ngpu / tp
        problem = st.auto_problem[key]
        comm, auto_comm = None, True  # the static table's: gathered below unless computed per combination
    else:
        domain = np.where(np.isnan(raw["scale_up_domain_size"]), hw.scale_up_domain_size, raw["scale_up_domain_size"])
        dp = np.where(np.isnan(raw["dp"]), 1.0, raw["dp"])
        ep = np.where(np.isnan(raw["ep"]), 1.0, raw["ep"])
        tp_in, pp_in, ngpu = raw["tp"], raw["pp"], raw["num_gpus"]
        if np.isnan(ngpu).any():
            given = np.where(np.isnan(tp_in), 1.0, tp_in) * dp
            auto = np.where(~np.isnan(pp_in) & ~np.isnan(tp_in), given * pp_in,
                            np.maximum(st.auto_num_gpus[key], given * np.where(np.isnan(pp_in), 1.0, pp_in)))
            ngpu = np.where(np.isnan(ngpu), auto, ngpu)
        if np.isnan(tp_in).any():  # tp over the accelerators of one replica's stage (a given pp divides them)
            per_stage = ngpu / (dp * np.where(np.isnan(pp_in), 1.0, pp_in))
            tp_auto, _ = resolve_parallelism(per_stage, domain, model.num_attention_heads)
            tp = np.where(np.isnan(tp_in), tp_auto, tp_in)
        else:
            tp = tp_in
        pp = np.where(np.isnan(pp_in), ngpu / (tp * dp), pp_in)
        problem = layout_problems(tp, dp, ep, pp, ngpu, domain, kv_head_replication=da.kv_head_replication,
                                  batch_size=batch, redundant_experts=red, **facts)
        comm, auto_comm = None, False
    if any_dis:
        ptp, pdp, pep, ppp = (np.where(np.isnan(raw[f"prefill_{k}"]), v, raw[f"prefill_{k}"])
                              for k, v in (("tp", tp), ("dp", dp), ("ep", ep), ("pp", pp)))
        p_problem = np.where(dis > 0, layout_problems(ptp, pdp, pep, ppp, ptp * pdp * ppp, domain,
                                                      kv_head_replication=da.kv_head_replication,
                                                      redundant_experts=red, **facts), -1)
    else:
        ptp, pdp, pep, ppp, p_problem = tp, dp, ep, pp, np.full(nb, -1, dtype=np.int8)
    if ctx.strict:
        _raise_first(ctx, sl, dict(context_over=context_over, unsupported=unsupported, price_missing=price_missing,
                                   owned=owned, basis_code=bc, problem=problem, p_problem=p_problem,
                                   capacity_ctx=capacity_ctx, tp=tp, dp=dp, ep=ep, pp=pp, ptp=ptp, pdp=pdp, pep=pep,
                                   ppp=ppp, ngpu=ngpu, domain=domain, batch=batch, too_wide=too_wide,
                                   wcode=wcode, ecode=ecode, red=red, spec_problem=spec_problem,
                                   max_ctx=max_ctx), model)
    layout_bad = (problem >= 0) | (p_problem >= 0)
    tbo_in = raw["two_batch_overlap"]  # NaN: the engine class's default (two_batch_overlap_on)
    if layout_bad.any():  # non-strict: rows with no valid layout come back infeasible; compute on a stand-in
        auto_comm = False
        sane = ~layout_bad
        lay = Layout(*(np.where(sane, v, 1.0) for v in (tp, dp, ep, pp)), scale_up_domain_size=domain,
                     redundant_experts=np.where(sane, red, 0.0), two_batch_overlap=tbo_in)
        p_lay = Layout(*(np.where(sane, v, 1.0) for v in (ptp, pdp, pep, ppp)), scale_up_domain_size=domain,
                       redundant_experts=np.where(sane, red, 0.0), two_batch_overlap=tbo_in)
        run_batch = np.where(sane, batch, np.maximum(batch, 1.0))
    else:
        lay = Layout(tp=tp, dp=dp, ep=ep, pp=pp, scale_up_domain_size=domain, redundant_experts=red,
                     two_batch_overlap=tbo_in)
        p_lay = lay if not any_dis else Layout(tp=ptp, dp=pdp, ep=pep, pp=ppp, scale_up_domain_size=domain,
                                               redundant_experts=red, two_batch_overlap=tbo_in)
        run_batch = batch
    econ_rows = {k: raw[k] for k in ECONOMIC_COLUMNS}
    workload = Workload(batch_size=run_batch, input_len=input_len, output_len=output_len,
                        decode_context_tokens=decode_ctx, capacity_context_tokens=capacity_ctx,
                        prefill_tokens=np.maximum(input_len * (1.0 - econ_rows["cache_hit_frac"]), 1.0),
                        arrival_rate_per_s=raw["arrival_rate_per_s"], prompt_len_cv=raw["input_len_cv"])
    serving = Serving(disaggregated=dis, prefill=p_lay, prefill_instances=raw["prefill_instances"],
                      decode_instances=raw["decode_instances"], cp=raw["cp"])
    pc = raw["precision_code"]
    off_code, pref_code = raw["kv_offload_code"], raw["prefix_cache_tier_code"]
    tiers = None
    if (off_code > 0).any() or (pref_code >= 0).any():  # KV tiers (issue 22.2); None = HBM only, no prefix physics
        cap_t, bw_t, usd_t = kv_tier_arrays(ctx.catalog, ctx.arrays)
        tiers = KvTiers(offload_code=np.maximum(off_code, 0), prefix_tier_code=pref_code,
                        capacity_bytes=cap_t[hc], read_bytes_per_s=bw_t[hc], usd_per_gb_hour=usd_t[hc])
    combos = None
    if nb > _SMALL_FRAME_ROWS and all(_uniform(raw[k]) for k in _GIVEN_LAYOUT + ("redundant_experts",
                                                                                "two_batch_overlap")):
        # the decode instance's layout is then a function of (model, accelerator, precision, KV precision) and of
        # whether the row's layout was replaced (invalid): one combination per code (issue 20.2)
        code = key * 2 + layout_bad
        if not ((wc_in < 0).all() and (ec_in < 0).all()):  # formats given per row: they join the combination
            code = (code * len(FORMATS) + wcode) * len(FORMATS) + ecode
        combos = _combinations(code)
    if auto_comm and combos is None:  # with combinations, run_physics computes them per combination (same values)
        comm = _gather(st.auto_collectives, key)
    decode_only = ctx.decode_only and not any_dis and bool(np.isnan(raw["arrival_rate_per_s"]).all())
    # the efficiencies are a function of (accelerator, precision): gathered for the combinations only (issue 20.2)
    eff_c = None if combos is None else efficiency(ctx.arrays, a, da, hc[combos[0]], pc[combos[0]])
    plain = not np.any(spec.draft_tokens)
    if ctx.fused and decode_only and tiers is None and (plain or (
            not np.any(spec.method_code > 1) and (raw["spec_method_code"] < 0).all()
            and np.isnan(raw["spec_draft_tokens"]).all() and np.isnan(raw["spec_acceptance"]).all())):
        # plain decoding, or the models' default MTP (a function of the model: equal on a combination's rows)
        every = np.arange(nb)  # without combinations (layouts given per row, small blocks): a row is its own
        fc = combos if combos is not None else (every, every)
        finp = EngineInputs(model=model, hardware=hw, layout=lay, formats=formats,
                            eff=efficiency(ctx.arrays, a, da, hc, pc) if eff_c is None else eff_c, workload=workload,
                            serving=serving, comm=comm, spec=spec, combos=fc)
        got = _fused_block(ctx, finp, bc, rate, raw, hw, unsupported | price_missing | layout_bad | context_over
                           | too_wide | (spec_problem >= 0), layout_bad)
        if got is not None:
            return got
    eff = efficiency(ctx.arrays, a, da, hc, pc) if eff_c is None else _broadcast(eff_c, combos[1])
    inp = EngineInputs(model=model, hardware=hw, layout=lay, formats=formats, eff=eff, workload=workload,
                       serving=serving, comm=comm, spec=spec, tiers=tiers, combos=combos)
    phys = run_physics(inp, a, da, decode_only=decode_only, queue=queue)
    return _BlockPhysics(phys, inp, unsupported, too_wide, wcode, ecode, spec, spec_problem, ngpu, tp, pp, dp, ep, domain,
                         dis, red, batch, input_len, output_len, capacity_ctx, context_over, layout_bad)




class _FusedBlock(NamedTuple):
    """What :func:`_fused_block` returns: the fused kernel's result columns of a block and its layout mask."""

    values: dict
    layout_bad: np.ndarray


def _fused_block(ctx: _Context, inp: EngineInputs, bc, rate, raw: dict, hw, blocked, layout_bad):
    """The :data:`econ.engine.fused.COLUMNS` of a decode-only block by the fused kernel, or None where numba is absent
    (the numpy path then runs). ``inp.eff`` holds the efficiencies of ``inp.combos``' rows, one per combination. The
    $/GPU-hour is per combination when the block has one tier, one set of economics and the catalog's capex, else per
    row (:func:`econ.engine.core.usd_per_gpu_hour`, the cost chain's own step).

    ``blocked``: rows infeasible for a reason other than capacity (see :func:`econ.engine.fused.decode_cost`)."""
    rows, index = inp.combos
    nb = len(index)
    if (_uniform_codes(bc) and np.isnan(raw["all_in_capex_usd"]).all()
            and all(_uniform(raw[k]) for k in ECONOMIC_COLUMNS + ("usd_per_gpu_hour",))):
        take = rows  # one tier and one set of economics: $/GPU-hour per combination
    else:
        take = slice(None)  # by row
    cost = CostInputs(basis_code=bc[take], usd_per_gpu_hour=raw["usd_per_gpu_hour"][take],
                      tier_usd_per_gpu_hour=np.broadcast_to(rate, (nb,))[take],
                      **{k: raw[k][take] for k in ECONOMIC_COLUMNS})
    gh, _ = usd_per_gpu_hour(take_bundle(hw, take) if take is rows else hw, cost)
    a = ctx.assumptions
    spec = None if inp.spec is None or not np.any(inp.spec.draft_tokens) else take_bundle(inp.spec, rows)
    table = fused.combination_table(inp, a, gh if take is rows else np.nan, spec, eff_per_combination=True)
    values = {c: np.empty(nb, dtype=bool if c == "feasible" else np.int8 if c == "binding_wall" else float)
              for c in fused.COLUMNS}
    wl = inp.workload
    if not fused.decode_cost(wl.batch_size, wl.decode_context_tokens, wl.capacity_context_tokens, blocked, index,
                             table, values, None if take is rows else gh):
        return None
    return _FusedBlock(values, layout_bad)


def kv_tier_arrays(catalog: Catalog, arr: CatalogArrays):
    """Host, NVMe and remote tiers of every accelerator's system as arrays (``data/kv_tiers.csv``, read once per
    catalog): (capacity [B], read bandwidth [B/s], $/GB-hour), each shape (accelerators, 3) in
    :data:`econ.vocabulary.KV_TIER_CHOICES` order after HBM (an unbounded remote pool: inf)."""
    got = arr.tier_rates.get("kv_tiers")
    if got is None:
        table = load_kv_tiers(catalog.data_dir)
        rows = [system_tiers(table, h) for h in arr.hardware_ids]
        got = tuple(np.array([[t[k] for t in r] for r in rows], dtype=float).reshape(len(rows), 3)
                    for k in ("capacity_bytes", "read_bytes_per_s", "usd_per_gb_hour"))
        arr.tier_rates["kv_tiers"] = got
    return got


SPEC_PROBLEMS: tuple[str, ...] = (
    "spec_method='mtp' is not available for {model}: it ships no multi-token-prediction module (valid: {valid})",
    "spec_method={method!r} needs spec_acceptance for {model}: no published head with a sourced acceptance "
    "(valid: {valid}, or give spec_acceptance in [0, 1))",
    "spec_method='draft' needs spec_draft_model (a catalog model id)",
)
"""Why a speculative-decoding setting cannot run (index = problem code)."""


def _resolve_spec(ctx: _Context, mc, model: ModelFacts, formats: Formats, raw: dict):
    """Each row's speculative decoding: given columns, else the model's sourced MTP default, else off.

    Returns
    -------
    (Speculation, problem codes into :data:`SPEC_PROBLEMS`, -1 = none).

    Notes
    -----
    Defaults by model (issue 17.8): a model whose vendor ships MTP modules and runs them in production, with a
    sourced ``mtp_acceptance`` (models.csv; DeepSeek-V3/R1 0.85 from the DeepSeek-V3 report), decodes with its MTP
    module, one drafted token per step; others decode plainly (no engine turns EAGLE on by default: vLLM recipes list
    it as opt-in, TensorRT-LLM needs a speculative_config). ``spec_method=eagle`` without ``spec_acceptance`` uses the
    model's published EAGLE-3 head (``eagle_acceptance``, ``eagle_draft_tokens``: gpt-oss-120b, Llama-3.1-8B,
    Llama-3.3-70B). A given ``spec_draft_tokens`` without a method uses the model's MTP module when it ships one, else
    an EAGLE head. Draft length: the given one, else the head's published one, else 1.
    """
    method, k_in, a_in = raw["spec_method_code"], raw["spec_draft_tokens"], raw["spec_acceptance"]
    default_a = ctx.arrays.mtp_acceptance[mc]
    if (method < 0).all() and np.isnan(k_in).all() and np.isnan(a_in).all() \
            and not (~np.isnan(default_a) & (model.mtp_modules > 0)).any():
        zero = np.zeros(np.shape(mc))  # nothing given, no model drafts by default: plain decoding (issue 20.2)
        return Speculation(method_code=zero, draft_tokens=zero, acceptance=zero), np.full(np.shape(mc), -1, np.int8)
    if np.ndim(mc) and len(mc) > _SMALL_FRAME_ROWS and _uniform_codes(mc) and (method < 0).all() \
            and np.isnan(k_in).all() and np.isnan(a_in).all() and (raw["spec_draft_model_code"] < 0).all():
        # nothing given on a block of one model (a grid's usual block): its default, resolved once and repeated
        first = slice(0, 1)
        sub = {k: raw[k][first] for k in ("spec_method_code", "spec_draft_tokens", "spec_acceptance",
                                          "spec_draft_model_code")}
        spec, problem = _resolve_spec(ctx, mc[first], take_bundle(model, first), take_bundle(formats, first), sub)
        every = np.zeros(len(mc), dtype=np.intp)
        return take_bundle(spec, every), problem[every]
    eagle_a = ctx.arrays.eagle_acceptance[mc] if ctx.arrays.eagle_acceptance.size else np.full(np.shape(mc), np.nan)
    eagle_k = ctx.arrays.eagle_draft_tokens[mc] if ctx.arrays.eagle_draft_tokens.size else np.full(np.shape(mc), np.nan)
    has_mtp = model.mtp_modules > 0
    by_default = np.where(~np.isnan(default_a) & has_mtp, 1, 0)
    by_k = np.where(np.isnan(k_in), by_default, np.where(k_in > 0, np.where(has_mtp, 1, 2), 0))
    m = np.where(method >= 0, method, by_k)
    k_default = np.where((m == 2) & ~np.isnan(eagle_k), eagle_k, 1.0)
    k = np.where(m == 0, 0.0, np.where(np.isnan(k_in), k_default, k_in))
    m = np.where(k == 0, 0, m)
    acc = np.where(np.isnan(a_in), np.where(m == 1, default_a, np.where(m == 2, eagle_a, np.nan)), a_in)
    problem = np.full(np.shape(m), -1, dtype=np.int8)
    problem = np.where((m > 0) & np.isnan(acc), 1, problem)
    problem = np.where((m == 3) & (raw["spec_draft_model_code"] < 0), 2, problem)
    problem = np.where((m == 1) & ~has_mtp, 0, problem)
    acc = np.where(np.isnan(acc), 0.0, acc)
    dcode = raw["spec_draft_model_code"]
    if np.any(m == 3):
        draft = ctx.arrays.models(np.maximum(dcode, 0))
        on = (m == 3) & (dcode >= 0)
        kv_token = _kv_bytes(1.0, draft, formats)
        extra = dict(draft_params=np.where(on, draft.total_params, 0.0),
                     draft_active_params=np.where(on, draft.active_matmul_params, 0.0),
                     draft_kernels=np.where(on, draft.forward_kernels, 0.0),
                     draft_hidden_size=np.where(on, draft.hidden_size, 0.0),
                     draft_kv_bytes_per_token=np.where(on, kv_token, 0.0))
    else:
        extra = {}
    spec = Speculation(method_code=m.astype(float), draft_tokens=k, acceptance=acc, **extra)
    return spec, problem


def available_speculation(catalog: Catalog, model: str) -> tuple[str, ...]:
    """The speculative-decoding methods ``model`` can run without further inputs: none; mtp where it ships MTP
    modules with a sourced acceptance; eagle where a published EAGLE-3 head gives one; draft (with a draft model)."""
    arr = catalog_arrays(catalog)
    i = arr.model_ids.index(model)
    out = ["none"]
    if arr.model["mtp_modules"][i] > 0 and not np.isnan(arr.mtp_acceptance[i]):
        out.append("mtp")
    if arr.eagle_acceptance.size and not np.isnan(arr.eagle_acceptance[i]):
        out.append("eagle")
    return tuple(out + ["draft"])


def default_speculation(catalog: Catalog, model: str) -> Speculation | None:
    """The speculative decoding ``model`` runs by default (as :func:`evaluate` resolves it), None = plain.

    A model with a sourced ``mtp_acceptance`` and an MTP module (models.csv) drafts one token per step
    with it (DeepSeek-V3/R1: acceptance 0.85, DeepSeek-V3 report); every other model decodes plainly.
    """
    arr = catalog_arrays(catalog)
    i = arr.model_ids.index(model)
    a = arr.mtp_acceptance[i]
    if np.isnan(a) or arr.model["mtp_modules"][i] <= 0:
        return None
    return Speculation(method_code=1.0, draft_tokens=1.0, acceptance=float(a))


def resolve_speculation(catalog: Catalog, model: str, formats: Formats, *, method: str | None = None,
                        draft_tokens: float | None = None, acceptance: float | None = None,
                        draft_model: str | None = None) -> Speculation:
    """The speculative decoding of rows of one model under one setting, as :func:`evaluate` resolves it: for
    searches that build their rows as typed inputs (:func:`econ.analyses.optimize.search`).

    Parameters
    ----------
    catalog : Catalog; model : catalog id
    formats : Formats of the rows (their KV bytes size a draft model's cache); arrays of n rows or scalars
    method, draft_tokens, acceptance, draft_model : the point columns ``spec_method``, ``spec_draft_tokens``,
        ``spec_acceptance``, ``spec_draft_model`` (None = the engine's default for the model)

    Returns
    -------
    Speculation, fields broadcast over the rows.

    Raises
    ------
    InvalidInputError
        A setting the model cannot run (:data:`SPEC_PROBLEMS`: MTP on a model without MTP modules, a method
        without a sourced acceptance, a draft method without a draft model), naming the methods that can.
    """
    arr = catalog_arrays(catalog)
    check_ids("model", [model] + ([draft_model] if draft_model is not None else []), list(arr.model_ids))
    shape = np.shape(formats.kv_bytes_per_element) or (1,)

    def one(m):
        raw = {"spec_method_code": np.full(shape, -1 if m is None else SPEC_METHODS.index(m)),
               "spec_draft_tokens": np.full(shape, np.nan if draft_tokens is None else float(draft_tokens)),
               "spec_acceptance": np.full(shape, np.nan if acceptance is None else float(acceptance)),
               "spec_draft_model_code": np.full(shape, -1 if draft_model is None
                                                else arr.model_ids.index(draft_model))}
        mc = np.full(shape, arr.model_ids.index(model))
        return _resolve_spec(_SpecContext(arr), mc, arr.models(mc), formats, raw)

    spec, problem = one(method)
    if (problem >= 0).any():
        valid = [m for m in SPEC_METHODS if not (one(m)[1] >= 0).any()]
        raise InvalidInputError(SPEC_PROBLEMS[int(problem.flat[0])].format(
            model=model, method=method, valid=", ".join(valid) or "none"))
    return spec


@dataclass(frozen=True)
class _SpecContext:
    """What :func:`_resolve_spec` reads of a context: the catalog's arrays."""

    arrays: CatalogArrays


def _raise_first(ctx: _Context, sl, f: dict, model: ModelFacts) -> None:
    """Strict mode: raise for the first row of the block that cannot be evaluated, naming field, value, range."""
    n, off = ctx.n, sl.start
    pts = ctx.points

    def first(mask):
        return int(np.flatnonzero(mask)[0]) if np.any(mask) else None

    def at(v, i):
        return v[i] if np.ndim(v) else v

    i = first(f["context_over"])
    if i is not None:
        r = off + i
        mx = at(f["max_ctx"], i)
        raise InvalidInputError(
            f"input_len + output_len = {at(f['capacity_ctx'], i):,.0f} tokens exceeds the maximum context of "
            f"{pts['model'][r]} ({mx:,.0f} tokens; valid: 2-{mx:,.0f}){_row_note(r, n)}")
    i = first(f["too_wide"])
    if i is not None:
        r = off + i
        p = pts["precision"][r]
        fmt = FORMATS[int(at(f["wcode"], i))]
        ef = FORMATS[int(at(f["ecode"], i))]
        wide = fmt if prec.FORMAT_BITS[fmt] > prec.PRECISION_BITS[p] else ef
        name = "weight_format" if wide == fmt else "expert_weight_format"
        raise InvalidInputError(
            f"{name}={wide!r} is wider than precision={p!r}: {p} matmuls need {p} or narrower weights (valid: "
            f"{[x for x in FORMATS if prec.FORMAT_BITS[x] <= prec.PRECISION_BITS[p]]}){_row_note(r, n)}")
    i = first(f["spec_problem"] >= 0)
    if i is not None:
        r = off + i
        msg = SPEC_PROBLEMS[int(f["spec_problem"][i])]
        method = pts["spec_method"][r] if "spec_method" in pts.columns else "mtp"
        raise InvalidInputError(msg.format(model=pts["model"][r], method=method,
                                           valid=", ".join(available_speculation(ctx.catalog, pts["model"][r])))
                                + _row_note(r, n))
    for prob, prefix in ((f["problem"], ""), (f["p_problem"], "prefill_")):
        i = first(prob >= 0)
        if i is not None:
            r = off + i
            tp, dp, ep, pp = ((f["tp"], f["dp"], f["ep"], f["pp"]) if not prefix else
                              (f["ptp"], f["pdp"], f["pep"], f["ppp"]))
            t, d, e, p = (at(v, i) for v in (tp, dp, ep, pp))
            msg = layout_problem_message(
                prob[i], tp=t, dp=d, ep=e, pp=p, num_gpus=at(f["ngpu"], i) if not prefix else t * d * p,
                domain=at(f["domain"], i), num_attention_heads=at(model.num_attention_heads, i),
                kv_shard_heads=at(model.kv_shard_heads, i), num_layers=at(model.num_layers, i),
                num_experts=at(model.num_experts, i), model_id=pts["model"][r], batch_size=at(f["batch"], i),
                prefix=prefix, redundant_experts=float(at(f["red"], i)))
            raise InvalidInputError(msg + _row_note(r, n))
    i = first(f["unsupported"])
    if i is not None:
        r = off + i
        p = pts["precision"][r]
        raise UnsupportedPrecisionError(
            f"precision={p!r} is not supported in hardware by {pts['hardware'][r]} (no dense {p} peak in "
            f"accelerators.csv){_row_note(r, n)}")
    i = first(f["price_missing"])
    if i is not None:
        r = off + i
        if f["owned"][i]:
            raise InvalidInputError(f"hardware={pts['hardware'][r]} has no capex in accelerators.csv (it is not sold; "
                                    f"use a rental or TCO tier){_row_note(r, n)}")
        tier = TIERS[int(f["basis_code"][i])]
        have = [t.value for t in Tier if t not in (Tier.OWNED, Tier.CUSTOM) and not np.isnan(tier_rate(
            ctx.arrays.accelerators(ctx.arrays.hardware_ids.index(pts["hardware"][r])), tier_code(t)))]
        raise InvalidInputError(f"hardware={pts['hardware'][r]} has no {tier} rate in accelerators.csv (tiers with a "
                                f"rate: {', '.join(have) or 'none'}){_row_note(r, n)}")


def _result_columns(points, out: dict, want, prec_code, kv_code, basis_code, profile_labels, memo=(None, False)):
    """Each wanted result column as ``(name, kind, payload)``, for both frame builders.

    kind: "text" (a String Series), "labels" ((int codes, names)), "int_or_null" (float array, NaN -> null,
    Int64), "int" (Int64), "value" ((array, whether NaN becomes null)). ``memo``: (the call's ``physics`` memo or
    None, whether every block came from it): the layout labels kept (:func:`_layout_column`).
    """
    label_names = {"precision": prec.PRECISIONS, "kv_precision": tuple(prec.KV_BYTES_PER_ELEMENT), "basis": TIERS,
                   "binding_wall": WALLS, "infeasible_reason": REASONS, "weight_format": FORMATS,
                   "expert_weight_format": FORMATS, "spec_method": SPEC_METHODS, "efficiency_profile": profile_labels}
    given_codes = {"precision": prec_code, "kv_precision": kv_code, "basis": basis_code}
    for c in want:
        if c in ("model", "hardware"):
            yield c, "text", points[c].cast(pl.String)
        elif c == "layout":
            yield c, "text", _layout_column(out, *memo)
        elif c in label_names:
            codes = np.asarray(given_codes[c] if c in given_codes else out[c], dtype=np.int64)
            if c == "efficiency_profile":  # code -1 = "assumed", the last label
                codes = np.where(codes < 0, len(profile_labels) - 1, codes)
            yield c, "labels", (codes, label_names[c])
        elif c == "max_batch_size":
            yield c, "int_or_null", out[c]
        elif c in _INT_COLUMNS:
            yield c, "int", out[c]
        else:
            v = out[c]
            yield c, "value", (v, v.dtype == np.float64 and (c not in _UNGATED or c in _LAYOUT_GATED))


def _result_frame(points, out: dict, want, prec_code, kv_code, basis_code, need_layout, arrays,
                  memo: tuple = (None, False)) -> pl.DataFrame:
    """Assemble the result frame from the block outputs: labels from codes, whole numbers as Int64, NaN -> null.

    Every NaN in ``out`` was put there for an infeasible row (or a layout-less one); non-finite physics
    was refused block by block (:func:`_evaluate_block`), so NaN -> null loses nothing.
    """
    columns = _result_columns(points, out, want, prec_code, kv_code, basis_code,
                              tuple(arrays.profile_ids) + ("assumed",), memo)
    if points.height <= _SMALL_FRAME_ROWS:
        return _small_result_frame(points.height, columns)
    cols = []
    for c, kind, payload in columns:
        if kind == "text":
            cols.append(payload)
        elif kind == "labels":
            cols.append(_labels(c, *payload))
        elif kind == "int_or_null":
            cols.append(pl.Series(c, payload, nan_to_null=True).cast(pl.Int64))
        elif kind == "int":
            cols.append(pl.Series(c, payload.astype(np.int64)))
        else:
            cols.append(pl.Series(c, payload[0], nan_to_null=payload[1]))
        del payload
        if c not in _LAYOUT_KEYS:  # the array is copied into its Series: free it now (peak memory of 1e7 rows)
            out.pop(c, None)
    return pl.DataFrame(cols)


_SMALL_FRAME_ROWS = 16
"""Up to this many rows the result frame is built from Python rows with a fixed schema (~0.2 ms for ~90
columns) instead of one Polars Series per column (~1.5 ms); equal frames (tests/engine/test_engine_small_frame.py)."""


def _small_result_frame(n_rows: int, columns) -> pl.DataFrame:
    """:func:`_result_frame` for a few rows: the same columns (:func:`_result_columns`), dtypes and nulls,
    built row-wise."""
    names, lists, schema = _result_lists(columns)
    return pl.DataFrame([dict(zip(names, r)) for r in zip(*lists)], schema=schema, orient="row") \
        if n_rows else pl.DataFrame(schema=schema)


def _result_lists(columns) -> tuple[list[str], list[list], dict]:
    """(names, one Python list per column, Polars schema) of :func:`_result_columns`: None for null."""
    lists: list[list] = []
    schema: dict[str, pl.DataType] = {}
    for c, kind, payload in columns:
        if kind == "text":
            lists.append(payload.to_list())
            schema[c] = pl.String
        elif kind == "labels":
            codes, names = payload
            lists.append([names[i] for i in codes.tolist()])
            schema[c] = pl.String
        elif kind == "int_or_null":
            lists.append([None if x != x else int(x) for x in payload.tolist()])
            schema[c] = pl.Int64
        elif kind == "int":
            lists.append(payload.astype(np.int64).tolist())
            schema[c] = pl.Int64
        else:
            v, nulls = payload
            if v.dtype == np.bool_:
                schema[c] = pl.Boolean
                lists.append(v.tolist())
            elif v.dtype.kind in "iu":
                schema[c] = pl.Int64
                lists.append(v.astype(np.int64).tolist())
            else:
                schema[c] = pl.Float64
                vals = v.astype(np.float64).tolist()
                lists.append([None if x != x else x for x in vals] if nulls else vals)
    return list(schema), lists, schema


def _labels(name: str, codes: np.ndarray, names) -> pl.Series:
    """String column from integer codes into ``names``."""
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size <= 256:  # a few rows: a Python lookup beats a Polars gather
        return pl.Series(name, [names[i] for i in codes.tolist()], dtype=pl.String)
    return pl.Series(name, list(names), dtype=pl.String).gather(codes)


def _layout_column(out: dict, memo: dict | None = None, kept: bool = False) -> pl.Series:
    """Layout labels, built once per distinct layout and broadcast back (not once per row). ``memo``: a ``physics``
    memo of :func:`evaluate`, which keeps the labels; ``kept``: every block of the call came from it, so the layout
    columns are the kept physics' own and the kept labels are returned (a rerun with another PUE or power price:
    ~4 ms for ~24,000 rows)."""
    if memo is not None and kept and "_layout" in memo:
        return memo["_layout"]
    labels = layout_labels(*(out[k] for k in _LAYOUT_KEYS))
    if memo is not None:
        memo["_layout"] = labels
    return labels
