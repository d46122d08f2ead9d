"""Where a decode step's time goes: weights, KV cache, GEMM, attention, communication, overhead, prefill.

The engine reports a step's roofline sides (``t_mem_s``: HBM reads, ``t_flop_s``: matmul and attention
FLOPs), its communication (``t_comm_s``), the step (``step_s``), the time per output token (``tpot_s``)
and, for aggregated serving, the prefill chunks interleaved with decode (``prefill_stall_s``;
``served_tpot_s`` = ``tpot_s`` + the stall). It does not say how much of the step is weights, KV cache,
GEMMs, attention, exposed communication or fixed overhead. :func:`step_breakdown` derives that from the
ONE engine by evaluating the same deployments again with one input changed at a time (no second model
of the step, so it follows the engine when the engine changes):

1. as given: ``step_s``, ``tpot_s``, ``served_tpot_s``, ``t_mem_s``, ``t_flop_s``;
2. without the fixed per-step overheads (``overhead_s``, the kernels' latency floors and launch gaps
   ``kernel_latency_s`` / ``kernel_launch_s`` / ``kernel_launch_eager_s``, and any extra ``layer_overhead_s``,
   ``moe_layer_overhead_s``, set to 0): the drop of ``step_s`` is the fixed **overhead**;
3. also with communication fully overlapped (``overlap_frac`` = ``single_batch_overlap_frac`` = 1): the further
   drop is the exposed
   **communication**; what is left is the roofline of the step (the binding side of memory vs compute);
4. at a one-token context (``context_tokens`` = 1): no KV cache to read and no attention to speak of,
   so ``t_mem_s`` there is the **weights**' reads and ``t_flop_s`` the **GEMMs**'; the differences with (1)
   are the **KV cache**'s reads and **attention**'s FLOPs (both linear in the context: exact to a token).

The roofline part is split on its binding side (memory when ``t_mem_s >= t_flop_s``: weights + KV cache;
else GEMM + attention) in proportion to those parts; the other side is hidden under it and reported
beside the stack (``hidden_s``), never added. Per output token, every step part is divided by the tokens
a step emits (``accepted_tokens_per_step``: > 1 with speculative decoding / MTP). **Prefill chunks** are
``served_tpot_s - tpot_s``; whatever else the engine puts in ``tpot_s`` (a latency tail over the mean) is
**other**. The stack adds up to ``served_tpot_s`` by construction.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, DeploymentAssumptions, Economics
from econ.tables.catalog import Catalog
from econ.engine import evaluate
from econ.errors import InvalidInputError

COMPONENTS: tuple[str, ...] = ("weights", "kv_cache", "gemm", "attention", "communication", "overhead",
                               "prefill_chunks", "other")
"""Stacked parts of a served decode step, in drawing order."""

COMPONENT_TITLES: dict[str, str] = {
    "weights": "Weights (HBM)", "kv_cache": "KV cache (HBM)", "gemm": "GEMMs", "attention": "Attention",
    "communication": "Communication", "overhead": "Fixed overhead", "prefill_chunks": "Prefill chunks",
    "other": "Other (latency tail)",
}
"""Human names of :data:`COMPONENTS`."""

DEPLOYMENT_KEYS: tuple[str, ...] = (
    "model", "hardware", "precision", "num_gpus", "tp", "dp", "ep", "pp", "batch_size", "disaggregated",
    "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances", "decode_instances",
    "scale_up_domain_size", "input_len", "output_len", "kv_precision", "weight_format", "expert_weight_format",
    "spec_method", "spec_draft_tokens", "spec_acceptance", "spec_draft_model", "basis")
"""Columns of ``rows`` passed on to the engine when present (the rest of each row is carried, not used): the
deployment, its formats and its speculative decoding (a row found with int4 weights is broken down with them)."""

BREAKDOWN_COLUMNS: tuple[str, ...] = ("row", "component", "title", "time_s", "share_frac")
"""Long-format columns of :func:`step_breakdown` (plus the ``keep`` columns of the rows)."""

WIDE_COLUMNS: tuple[str, ...] = (
    "weights_s", "kv_cache_s", "gemm_s", "attention_s", "communication_s", "overhead_s", "prefill_chunks_s",
    "other_s", "t_mem_s", "t_flop_s", "binding_side", "hidden_s", "tpot_s", "served_tpot_s", "binding_wall")
"""Wide-format columns of :func:`step_breakdown` (``wide=True``), one row per input row."""


def _deployment_points(rows: pl.DataFrame) -> pl.DataFrame:
    """The engine's input columns of ``rows``; an aggregated row's prefill pool counts are dropped (null)."""
    keep = [c for c in DEPLOYMENT_KEYS if c in rows.columns]
    pts = rows.select(keep)
    if "disaggregated" in pts.columns:
        agg = ~pl.col("disaggregated").fill_null(False)
        pts = pts.with_columns(pl.when(agg).then(None).otherwise(pl.col(c)).alias(c)
                               for c in ("prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                                         "prefill_instances", "decode_instances") if c in pts.columns)
    return pts


def step_breakdown(rows: pl.DataFrame, catalog: Catalog, assumptions: Assumptions = DEFAULT,
                   economics: Economics = Economics(), deployment: DeploymentAssumptions = DEFAULT_DEPLOYMENT,
                   *, input_len: int | None = None, output_len: int | None = None, keep=(),
                   wide: bool = False) -> pl.DataFrame:
    """Split the served decode step of each deployment into weights, KV, GEMM, attention, communication, overhead.

    Parameters
    ----------
    rows : pl.DataFrame
        Deployments, one per row: at least ``model``, ``hardware``, ``precision``, ``batch_size`` and the
        layout (``num_gpus``, ``tp``, ``dp``, ``ep``, ``pp``; disaggregated rows also their prefill pool),
        as returned by :func:`econ.analyses.optimize.search` / :func:`econ.analyses.compare.hardware_comparison` or
        :func:`econ.analyses.sweep.cost_table`. Other columns are ignored unless named in ``keep``.
    catalog, assumptions, economics, deployment
        As for :func:`econ.engine.evaluate`; use the ones the rows were computed with.
    input_len, output_len : int, optional
        Request shape when ``rows`` has no ``input_len`` / ``output_len`` columns. [tokens]
    keep : sequence of str
        Columns of ``rows`` repeated on every output row (e.g. ``setup``, ``interactivity``).
    wide : bool
        One row per deployment with one column per component (:data:`WIDE_COLUMNS`) instead of the
        long format.

    Returns
    -------
    pl.DataFrame
        Long (default): :data:`BREAKDOWN_COLUMNS` + ``keep``, one row per deployment and component of
        :data:`COMPONENTS` (``row`` = the index of the deployment in ``rows``; ``time_s`` [s] per decode
        step, ``share_frac`` of ``served_tpot_s``). The times of a deployment add up to its
        ``served_tpot_s``. Wide: :data:`WIDE_COLUMNS` + ``keep``, with ``binding_side`` ("memory" or
        "compute") and ``hidden_s``, the non-binding side's time, overlapped by the binding one.

    Raises
    ------
    InvalidInputError
        ``rows`` is empty, misses a required column, or a deployment cannot run (the engine's reason).
    UnknownIdError, UnsupportedPrecisionError
        As :func:`econ.engine.evaluate` (strict).

    Notes
    -----
    Four vectorized engine calls on the rows (as given, without fixed overheads, also with communication
    overlapped, and at a one-token context); see the module docstring for the derivation. Sources of the
    step formula: :func:`econ.physics.performance.decode_step`.
    """
    if rows.height == 0:
        raise InvalidInputError("rows has no rows (nothing to break down)")

    from econ.engine import RESULT_COLUMNS

    pts = _deployment_points(rows)
    for name, value in (("input_len", input_len), ("output_len", output_len)):
        if name not in pts.columns and value is not None:
            pts = pts.with_columns(pl.lit(int(value), dtype=pl.Int64).alias(name))
    step_col = "step_s" if "step_s" in RESULT_COLUMNS else "tpot_s"
    cols = tuple(dict.fromkeys(("feasible", "infeasible_reason", "t_mem_s", "t_flop_s", step_col, "tpot_s",
                                "served_tpot_s", "binding_wall")))
    if "accepted_tokens_per_step" in RESULT_COLUMNS:
        cols += ("accepted_tokens_per_step",)
    full = evaluate(pts, catalog, assumptions, economics, deployment, columns=cols)
    bad = full.with_row_index("i").filter(~pl.col("feasible"))
    if bad.height:
        r = bad.row(0, named=True)
        raise InvalidInputError(f"row {r['i']} ({rows['model'][r['i']]} on {rows['hardware'][r['i']]}) cannot "
                                f"run: {r['infeasible_reason']}")
    no_fixed = assumptions.with_overrides(overhead_s=0.0, layer_overhead_s=0.0, moe_layer_overhead_s=0.0,
                                          kernel_latency_s=0.0, kernel_launch_s=0.0, kernel_launch_eager_s=0.0,
                                          sequence_overhead_s=0.0)
    pure = no_fixed.with_overrides(overlap_frac=1.0, single_batch_overlap_frac=1.0)

    def step_of(a):
        return evaluate(pts, catalog, a, economics, deployment, columns=(step_col,))[step_col].to_numpy()

    step = full[step_col].to_numpy()
    step_nf, step_pure = step_of(no_fixed), step_of(pure)
    lone = evaluate(pts.with_columns(context_tokens=pl.lit(1, dtype=pl.Int64)), catalog, assumptions, economics,
                    deployment, columns=("t_mem_s", "t_flop_s"))
    t_mem, t_flop = full["t_mem_s"].to_numpy(), full["t_flop_s"].to_numpy()
    w = np.minimum(lone["t_mem_s"].to_numpy(), t_mem)
    g = np.minimum(lone["t_flop_s"].to_numpy(), t_flop)
    accepted = full["accepted_tokens_per_step"].to_numpy() if "accepted_tokens_per_step" in full.columns \
        else np.ones(rows.height)
    accepted = np.where(np.isfinite(accepted) & (accepted > 0), accepted, 1.0)
    tpot = full["tpot_s"].to_numpy()
    served = full["served_tpot_s"].to_numpy()
    overhead = np.maximum(step - step_nf, 0.0) / accepted
    comm = np.maximum(step_nf - step_pure, 0.0) / accepted
    roof = np.maximum(step_pure, 0.0) / accepted
    stall = np.maximum(served - tpot, 0.0)
    memory_binds = t_mem >= t_flop
    side = np.where(memory_binds, t_mem, t_flop)
    scale = np.divide(roof, side, out=np.zeros_like(roof), where=side > 0)
    parts = {
        "weights": np.where(memory_binds, w * scale, 0.0),
        "kv_cache": np.where(memory_binds, (t_mem - w) * scale, 0.0),
        "gemm": np.where(memory_binds, 0.0, g * scale),
        "attention": np.where(memory_binds, 0.0, (t_flop - g) * scale),
        "communication": comm, "overhead": overhead, "prefill_chunks": stall,
    }
    parts["other"] = served - sum(parts.values())
    parts["other"] = np.where(np.abs(parts["other"]) <= 1e-9 * np.maximum(served, 1e-30), 0.0, parts["other"])
    extra = rows.select(list(keep)) if keep else None
    if wide:
        out = pl.DataFrame({**{f"{k}_s": v for k, v in parts.items()}, "t_mem_s": t_mem, "t_flop_s": t_flop,
                            "binding_side": np.where(memory_binds, "memory", "compute"),
                            "hidden_s": np.where(memory_binds, t_flop, t_mem), "tpot_s": tpot,
                            "served_tpot_s": served, "binding_wall": full["binding_wall"]})
        return pl.concat([extra, out], how="horizontal") if extra is not None else out
    n = rows.height
    long = pl.DataFrame({
        "row": np.tile(np.arange(n), len(COMPONENTS)),
        "component": np.repeat(np.array(COMPONENTS, dtype=object), n).tolist(),
        "time_s": np.concatenate([parts[c] for c in COMPONENTS]),
        "share_frac": np.concatenate([np.divide(parts[c], served, out=np.zeros(n), where=served > 0)
                                      for c in COMPONENTS]),
    }).with_columns(title=pl.col("component").replace_strict(COMPONENT_TITLES, return_dtype=pl.String))
    long = long.select(BREAKDOWN_COLUMNS)
    if extra is not None:
        long = long.join(extra.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64)),
                         on="row", how="left").select(*BREAKDOWN_COLUMNS, *keep)
    order = {c: i for i, c in enumerate(COMPONENTS)}
    return (long.with_columns(pl.col("row").cast(pl.Int64))
            .sort(pl.col("row"), pl.col("component").replace_strict(order, return_dtype=pl.Int64)))


__all__ = ["step_breakdown", "COMPONENTS", "COMPONENT_TITLES", "BREAKDOWN_COLUMNS", "WIDE_COLUMNS",
           "DEPLOYMENT_KEYS"]
