"""Hardware comparison at a service-level floor, the throughput-interactivity frontier, and cluster plans.

:func:`hardware_comparison` answers "for this model, what does each accelerator cost per million
tokens when every user must get at least X tokens/s?". It builds the whole search space (accelerator x
precision x GPU count x batch size), evaluates it in ONE vectorized :func:`econ.engine.evaluate` call
(``strict=False``, so unsupported precisions and unpriced accelerators come back as infeasible rows
with a reason instead of raising), and picks per accelerator the cheapest feasible row that meets the
floor. The same evaluation gives the Pareto frontier of output tokens/s per GPU against tokens/s per
user, the trade-off curve of InferenceMAX-style plots (SemiAnalysis InferenceMAX, 2025).

:func:`cluster_plan` sizes a cluster of one accelerator (``econ.cluster``) and adds what the model
knows: checkpoint size and write time, a 6 N D training run, and the tokens/day the cluster serves at
the floor with the revenue and payback that implies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.catalog import Catalog, check_ids
from econ.errors import InvalidInputError
from econ.precision import PRECISIONS
from econ.engine import evaluate
from econ.sweep import layout_candidates_frame
from econ.validate import require_in_range, require_integer

DEFAULT_GPU_COUNTS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
"""GPUs per model replica searched: powers of two up to 64 (eight 8-GPU servers). [accelerators]"""

DEFAULT_BATCH_SIZES: tuple[int, ...] = tuple(sorted({int(round(2 ** (k / 3))) for k in range(0, 40)}))
"""Batch sizes searched: three per octave from 1 to 8,192 (each step <= 26% above the last). [sequences]"""

COST_PARTS: tuple[str, ...] = ("capex", "facility", "opex", "power", "rental")
"""Parts of $/GPU-hour: owned = capex annuity + facility annuity + opex + power; rented = the rate."""

OBJECTIVES = {"output": "usd_per_m_output_tokens", "blended": "usd_per_m_blended_tokens"}

BEST_COLUMNS: tuple[str, ...] = (
    "rank", "hardware", "display_name", "vendor", "meets_slo", "status", "precision", "layout", "num_gpus", "tp",
    "dp", "ep", "pp",
    "batch_size", "max_batch_size", "binding_wall", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
    "ttft_s", "basis", "usd_per_gpu_hour", "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility",
    "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power", "usd_per_gpu_hour_rental", "usd_per_m_input_tokens",
    "usd_per_m_output_tokens", "usd_per_m_blended_tokens", "objective", "usd_per_m_tokens_capex",
    "usd_per_m_tokens_facility", "usd_per_m_tokens_opex", "usd_per_m_tokens_power", "usd_per_m_tokens_rental",
)

FRONTIER_COLUMNS: tuple[str, ...] = (
    "hardware", "display_name", "precision", "num_gpus", "batch_size", "tokens_per_s_per_user",
    "output_tokens_per_s_per_gpu", "usd_per_m_output_tokens", "binding_wall",
)


@dataclass(frozen=True, slots=True)
class Comparison:
    """Result of :func:`hardware_comparison`.

    Attributes
    ----------
    best : pl.DataFrame
        One row per accelerator compared (:data:`BEST_COLUMNS`), cheapest first; accelerators with no
        deployment meeting the floor come last with null costs and the reason in ``status``.
    frontier : pl.DataFrame
        Per accelerator, the Pareto-optimal rows of (tokens/s per user, output tokens/s per GPU),
        sorted by tokens/s per user (:data:`FRONTIER_COLUMNS`).
    points : pl.DataFrame
        Every evaluated configuration (``econ.sweep.RESULT_COLUMNS`` + ``meets_slo``).
    """

    best: pl.DataFrame
    frontier: pl.DataFrame
    points: pl.DataFrame


def search_space(catalog: Catalog, *, model: str, hardware=None, precisions=None,
                 gpu_counts=DEFAULT_GPU_COUNTS, batch_sizes=DEFAULT_BATCH_SIZES, input_len: int = 1024,
                 output_len: int = 1024) -> pl.DataFrame:
    """The configurations :func:`hardware_comparison` evaluates (a cross join, no loop over rows).

    Layouts at each GPU count are those ``econ cost`` chooses among
    (:func:`econ.sweep.layout_candidates_frame`: tensor x pipeline filling the scale-up domain first, and
    attention-DP + EP for MoE models); counts with no valid layout (more pipeline stages than layers, a
    tp the heads do not divide) are dropped.

    Returns
    -------
    pl.DataFrame with ``model``, ``hardware``, ``precision``, ``num_gpus``, ``tp``, ``dp``, ``ep``, ``pp``,
    ``batch_size`` (sequences per instance, >= dp), ``input_len``, ``output_len``.

    Raises
    ------
    UnknownIdError, InvalidInputError
    """
    check_ids("model", [model], catalog.models["id"].to_list())
    hw_all = catalog.accelerators["id"].to_list()
    hardware = list(hardware) if hardware else hw_all
    check_ids("hardware", hardware, hw_all)
    precisions = list(precisions) if precisions else list(PRECISIONS)
    for p in precisions:
        if p not in PRECISIONS:
            raise InvalidInputError(f"precision={p!r} is not one of {list(PRECISIONS)}")
    gpus = require_integer("gpu_counts", np.asarray(list(gpu_counts), dtype=float), 1, 1 << 16, "accelerators")
    batches = require_integer("batch_sizes", np.asarray(list(batch_sizes), dtype=float), 1, 1 << 20, "sequences")
    keys = pl.DataFrame({"hardware": hardware}).join(pl.DataFrame({"precision": precisions}), how="cross") \
        .with_columns(model=pl.lit(model)).select("model", "hardware", "precision")
    # the layouts econ cost chooses among at each GPU count (tensor x pipeline; attention-DP + EP for MoE)
    deploy = pl.concat([layout_candidates_frame(catalog, keys, num_gpus=int(n)) for n in gpus.astype(np.int64)])
    return (deploy
            .join(pl.DataFrame({"batch_size": batches.astype(np.int64)}), how="cross")
            .filter(pl.col("batch_size") >= pl.col("dp"))
            .with_columns(input_len=pl.lit(int(input_len), dtype=pl.Int64),
                          output_len=pl.lit(int(output_len), dtype=pl.Int64))
            .select("model", "hardware", "precision", "num_gpus", "tp", "dp", "ep", "pp", "batch_size", "input_len",
                    "output_len"))


def hardware_comparison(catalog: Catalog, *, model: str, hardware=None, precisions=None,
                        min_tokens_per_s_per_user: float = 20.0, objective: str = "output",
                        gpu_counts=DEFAULT_GPU_COUNTS, batch_sizes=DEFAULT_BATCH_SIZES, input_len: int = 1024,
                        output_len: int = 1024, assumptions: Assumptions = DEFAULT,
                        economics: Economics = Economics()) -> Comparison:
    """Cheapest deployment of ``model`` on each accelerator that gives every user a minimum speed.

    Parameters
    ----------
    catalog : Catalog
    model : str
        Model id.
    hardware : sequence of str, optional
        Accelerator ids; None or empty = every accelerator in the catalog.
    precisions : sequence of {"bf16", "fp8", "fp4"}, optional
        Weight precisions allowed; None or empty = all three (each accelerator uses what it supports).
    min_tokens_per_s_per_user : float >= 0
        Service-level floor on decode speed per sequence, 1 / TPOT. [tokens/s]
    objective : {"output", "blended"}
        Minimize $/M output tokens, or the blended $/M at ``economics.input_output_mix``.
    gpu_counts, batch_sizes : sequences of int
        The grid searched (defaults :data:`DEFAULT_GPU_COUNTS`, :data:`DEFAULT_BATCH_SIZES`).
    input_len, output_len : int [tokens]
    assumptions, economics : see :func:`econ.engine.evaluate`.

    Returns
    -------
    Comparison

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids, an unknown objective or precision, or a floor outside [0, 1e4] tokens/s.

    Notes
    -----
    The optimum is over a grid: the batch is within 26% of the best batch for its deployment (three
    sizes per octave), and GPU counts are powers of two. The $/M split into capex, facility, opex and
    power (or rental) scales the objective by each part's share of $/GPU-hour (the deployment's
    throughput is common to all parts). Input cost is that of the same deployment (prefill on the
    replica chosen for decode).
    """
    if objective not in OBJECTIVES:
        raise InvalidInputError(f"objective={objective!r} is not one of {list(OBJECTIVES)}")
    slo = float(require_in_range("min_tokens_per_s_per_user", min_tokens_per_s_per_user, 0.0, 1e4, "tokens/s"))
    points = search_space(catalog, model=model, hardware=hardware, precisions=precisions, gpu_counts=gpu_counts,
                          batch_sizes=batch_sizes, input_len=input_len, output_len=output_len)
    res = evaluate(points, catalog, assumptions, economics, strict=False)
    res = res.with_columns(
        meets_slo=(pl.col("feasible") & (pl.col("tokens_per_s_per_user") >= slo)).fill_null(False),
        usd_per_gpu_hour_rental=pl.when(pl.col("basis") == "rental").then(pl.col("usd_per_gpu_hour"))
        .otherwise(pl.col("usd_per_gpu_hour") * 0.0),
    )
    obj = OBJECTIVES[objective]
    names = catalog.accelerators.select(pl.col("id").alias("hardware"), "display_name", "vendor")
    best = (res.filter(pl.col("meets_slo"))
            .sort([obj, "num_gpus", "batch_size"])
            .unique(subset="hardware", keep="first", maintain_order=True)
            .with_columns(objective=pl.lit(objective), status=pl.lit(""))
            .with_columns([(pl.col(obj) * pl.col(f"usd_per_gpu_hour_{p}") / pl.col("usd_per_gpu_hour"))
                          .alias(f"usd_per_m_tokens_{p}") for p in COST_PARTS]))
    best = best.with_columns(rank=pl.int_range(1, best.height + 1, dtype=pl.Int64))
    missing = _why_not(res, slo, max(int(x) for x in gpu_counts))
    missing = missing.filter(~pl.col("hardware").is_in(best["hardware"].implode()))
    best = pl.concat([best.join(names, on="hardware", how="left"),
                      missing.join(names, on="hardware", how="left")], how="diagonal_relaxed")
    order = points.select("hardware").unique(maintain_order=True).with_row_index("_order")
    best = (best.join(order, on="hardware", how="left")
            .sort([pl.col("rank").is_null(), "rank", "_order"]).select(BEST_COLUMNS))
    return Comparison(best=best, frontier=throughput_frontier(res, names), points=res)


def _why_not(res: pl.DataFrame, slo: float, max_gpus: int) -> pl.DataFrame:
    """One row per accelerator: why no configuration met the floor (vectorized group-by)."""
    agg = res.group_by("hardware", maintain_order=True).agg(
        any_feasible=pl.col("feasible").any(),
        best_speed=pl.col("tokens_per_s_per_user").filter(pl.col("feasible")).max(),
        price_missing=pl.col("infeasible_reason").str.starts_with("no ").any(),
        unsupported=pl.col("infeasible_reason").eq("precision not supported by hardware").all(),
        price_reason=pl.col("infeasible_reason").filter(pl.col("infeasible_reason").str.starts_with("no ")).first(),
        precisions=pl.col("precision").unique().sort().str.join("/"),
    )
    status = (pl.when(pl.col("any_feasible"))
              .then(pl.format("no deployment reaches {} tokens/s per user (fastest: {})",
                              pl.lit(f"{slo:g}"), pl.col("best_speed").round(1)))
              .when(pl.col("price_missing")).then(pl.col("price_reason"))
              .when(pl.col("unsupported")).then(pl.format("no hardware support for {}", pl.col("precisions")))
              .otherwise(pl.lit(f"weights do not fit in HBM on up to {max_gpus} accelerators")))
    return agg.select("hardware", status.alias("status"), meets_slo=pl.lit(False))


def throughput_frontier(points: pl.DataFrame, names: pl.DataFrame | None = None) -> pl.DataFrame:
    """Pareto frontier of output tokens/s per GPU against tokens/s per user, per accelerator.

    Parameters
    ----------
    points : pl.DataFrame
        Rows of :func:`econ.engine.evaluate` (infeasible rows are ignored).
    names : pl.DataFrame, optional
        ``hardware`` -> ``display_name`` to attach.

    Returns
    -------
    pl.DataFrame (:data:`FRONTIER_COLUMNS`), per accelerator sorted by tokens/s per user ascending:
    no kept row is beaten on both axes by another row of the same accelerator.

    Notes
    -----
    Sorting by interactivity descending, a row is on the frontier when its throughput exceeds the
    running maximum of every faster row (cumulative max over the group): O(n log n), no loop.
    """
    f = (points.filter(pl.col("feasible"))
         .sort(["hardware", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu"], descending=[False, True, True])
         .with_columns(_prev=pl.col("output_tokens_per_s_per_gpu").cum_max().shift(1).over("hardware"))
         .filter(pl.col("_prev").is_null() | (pl.col("output_tokens_per_s_per_gpu") > pl.col("_prev")))
         .sort(["hardware", "tokens_per_s_per_user"]))
    if names is None:
        f = f.with_columns(display_name=pl.col("hardware"))
    else:
        f = f.join(names.select("hardware", "display_name"), on="hardware", how="left")
    return f.select(FRONTIER_COLUMNS)


# ---------------------------------------------------------------------------------------------
# Cluster plan: moved to econ.cluster (issue 13); re-exported here for existing callers
# ---------------------------------------------------------------------------------------------

from econ.cluster import (  # noqa: E402
    DEFAULT_GPUS_PER_RACK,
    PLAN_COLUMNS,
    RACK_SCALE_DOMAINS,
    cluster_plan,
    default_gpus_per_rack,
    plan_status,
)


__all__ = ["Comparison", "hardware_comparison", "search_space", "throughput_frontier", "cluster_plan",
           "plan_status", "default_gpus_per_rack", "DEFAULT_GPU_COUNTS", "DEFAULT_BATCH_SIZES", "BEST_COLUMNS",
           "FRONTIER_COLUMNS", "PLAN_COLUMNS", "COST_PARTS", "OBJECTIVES"]
