"""Hardware comparison at a service-level floor, the throughput-interactivity frontier, head to head.

:func:`hardware_comparison` answers "for this model, what does each accelerator cost per million
tokens when every user must get at least X tokens/s?". It builds the whole search space (accelerator x
precision x GPU count x batch size), evaluates it in ONE vectorized :func:`econ.engine.evaluate` call
(``strict=False``, so unsupported precisions and unpriced accelerators come back as infeasible rows
with a reason instead of raising), and picks per accelerator the cheapest feasible row that meets the
floor. The same evaluation gives the Pareto frontier of output tokens/s per GPU against tokens/s per
user, the trade-off curve of InferenceMAX-style plots (SemiAnalysis InferenceMAX, 2025).

:func:`value_at_interactivity` reads a frontier the way analysts quote it: per accelerator (or set-up),
the cheapest point at or above each interactivity level ("$ per M tokens at 20 / 50 / 100 tokens/s per
user"); :func:`interactivity_table` adds tokens per dollar and tokens/s per provisioned MW.
:func:`head_to_head` puts two (model, accelerator, precision, cost tier) set-ups side by side: both
frontiers, the ratio at each level and where the step time goes (:func:`econ.analyses.breakdown.step_breakdown`).

Cluster plans are ``econ.analyses.cluster`` (which calls :func:`hardware_comparison` for the serving rate; this
module never imports it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT, Assumptions, Economics
from econ.tables.catalog import Catalog, check_ids
from econ.errors import InvalidInputError
from econ.physics.precision import PRECISIONS
from econ.engine import evaluate
from econ.presets import DEFAULT_INPUT_LEN, DEFAULT_MIN_TOKENS_PER_S_PER_USER, DEFAULT_OUTPUT_LEN, INTERACTIVITY_LEVELS
from econ.analyses.search import cheapest, pareto_frontier
from econ.validate import require_in_range
from econ.vocabulary import TCO_CHOICES, TIER_ALIASES, TIERS

COST_PARTS: tuple[str, ...] = ("capex", "facility", "opex", "power", "rental")
"""Parts of $/GPU-hour: owned = capex annuity + facility annuity + opex + power; rented = the rate."""

OBJECTIVES = {"output": "usd_per_m_output_tokens_all_in", "blended": "usd_per_m_blended_tokens"}
"""What the ranking minimizes: all-in $/M output tokens (every accelerator of the serving unit, prefill
included, over its output: the figure head to head and ``econ compare`` quote) or the blended $/M (prefill
charged to input tokens, decode to output, at the scenario's input:output mix)."""

BEST_COLUMNS: tuple[str, ...] = (
    "rank", "hardware", "display_name", "vendor", "meets_slo", "status", "model", "precision", "layout", "num_gpus",
    "total_gpus", "tp", "dp", "ep", "pp", "disaggregated",
    "batch_size", "max_batch_size", "binding_wall", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
    "ttft_s", "basis", "usd_per_gpu_hour", "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility",
    "usd_per_gpu_hour_opex", "usd_per_gpu_hour_power", "usd_per_gpu_hour_rental", "usd_per_m_input_tokens",
    "usd_per_m_output_tokens", "usd_per_m_output_tokens_all_in", "usd_per_m_blended_tokens", "objective",
    "usd_per_m_tokens_capex",
    "usd_per_m_tokens_facility", "usd_per_m_tokens_opex", "usd_per_m_tokens_power", "usd_per_m_tokens_rental",
    "scale_up_domain_size", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances",
    "decode_instances", "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high",
    "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high", "profile", "calibrated", "profile_note",
    "distinguishable", "rank_note", "billed_input_tokens_per_s_per_gpu", "billed_output_tokens_per_s_per_gpu",
    "served_output_tokens_per_s_per_gpu",
)
"""Columns of :attr:`Comparison.best`: the winner per accelerator, its cost chain and split, every key of its
deployment (so it can be evaluated again on its own), the calibration band of its cost, the efficiency profile it
rests on (:func:`econ.analyses.bands.with_profiles`: ``profile_note`` marks a fallback or wide-band profile) and
whether its band is apart from the cheapest's (:func:`econ.analyses.bands.distinguish`: ``rank_note``)."""

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
        Every evaluated configuration (``econ.analyses.sweep.RESULT_COLUMNS`` + ``meets_slo``).
    """

    best: pl.DataFrame
    frontier: pl.DataFrame
    points: pl.DataFrame


def hardware_comparison(catalog: Catalog, *, model: str, hardware=None, precisions=None,
                        min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                        objective: str = "output", input_len: int = DEFAULT_INPUT_LEN, output_len: int = DEFAULT_OUTPUT_LEN,
                        max_ttft_s: float = math.inf, assumptions: Assumptions = DEFAULT,
                        economics: Economics = Economics(), deployment=None, space=None,
                        slo_percentile: float | None = None) -> Comparison:
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
        Service-level floor on the served speed per sequence (default: the one default floor,
        :data:`econ.presets.DEFAULT_MIN_TOKENS_PER_S_PER_USER`). [tokens/s]
    objective : {"output", "blended"}
        Minimize all-in $/M output tokens, or the blended $/M at ``economics.input_output_mix``
        (:data:`OBJECTIVES`).
    input_len, output_len : int [tokens]
    max_ttft_s : float > 0
        TTFT limit of the deployments compared. [s]
    assumptions, economics, deployment : see :func:`econ.engine.evaluate`.
    space : econ.analyses.optimize.SearchSpace, optional
        The search (default: every layout, batch and serving mode); ``precisions`` replaces its precisions.
    slo_percentile : float, optional [%]
        Judge the speed floor and the TTFT limit at this percentile of TPOT and TTFT
        (:class:`econ.analyses.optimize.SLO` ``percentile``); None = the served means.

    Returns
    -------
    Comparison

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids, an unknown objective or precision, a floor outside [0, 1e4] tokens/s, or a search larger
        than ``space.max_points``.

    Notes
    -----
    One question, one search: the deployments are those of :func:`econ.analyses.optimize.search` (every
    TP/EP/PP/attention-DP layout, aggregated and disaggregated, the one batch grid), the same search head to
    head, ``econ compare``, ``econ optimize`` and ``econ frontier`` run, so each accelerator's answer here equals
    theirs at the same floor. The winners are then re-evaluated by :func:`econ.engine.evaluate` for their whole
    cost chain (capex, facility, opex, power or rent): the $/M split scales the objective by each part's share of
    $/GPU-hour (the deployment's throughput is common to all parts).
    """
    from econ.analyses.optimize import SLO, SearchSpace, search

    if objective not in OBJECTIVES:
        raise InvalidInputError(f"objective={objective!r} is not one of {list(OBJECTIVES)}")
    slo = float(require_in_range("min_tokens_per_s_per_user", min_tokens_per_s_per_user, 0.0, 1e4, "tokens/s"))
    check_ids("model", [model], catalog.models["id"].to_list())
    hw_all = catalog.accelerators["id"].to_list()
    hws = list(dict.fromkeys(hardware)) if hardware else hw_all
    check_ids("hardware", hws, hw_all)
    precisions = tuple(dict.fromkeys(precisions)) if precisions else None
    for p in precisions or ():
        if p not in PRECISIONS:
            raise InvalidInputError(f"precision={p!r} is not one of {list(PRECISIONS)}")
    deployment = deployment or DEFAULT_DEPLOYMENT
    space = replace(space or SearchSpace(), precisions=precisions)
    res = search(catalog, model=model, hardware=hws, input_len=input_len, output_len=output_len,
                 slo=SLO(min_tokens_per_s_per_user=slo, max_ttft_s=max_ttft_s, percentile=slo_percentile), space=space,
                 assumptions=assumptions, economics=economics, deployment=deployment)
    points = res.points.with_columns(feasible=pl.lit(True))
    obj = OBJECTIVES[objective]
    names = catalog.accelerators.select(pl.col("id").alias("hardware"), "display_name", "vendor")
    winners = cheapest(points.filter(pl.col("meets_slo")), by=("hardware",), cost=obj)
    best = _cost_chain(winners, catalog, assumptions, economics, deployment, input_len=input_len,
                       output_len=output_len, decoding=space.decoding.columns())
    best = (best.with_columns(objective=pl.lit(objective), status=pl.lit(""))
            .with_columns([(pl.col(obj) * pl.col(f"usd_per_gpu_hour_{p}") / pl.col("usd_per_gpu_hour"))
                          .alias(f"usd_per_m_tokens_{p}") for p in COST_PARTS]))
    best = best.with_columns(rank=pl.int_range(1, best.height + 1, dtype=pl.Int64))
    best = with_bands(best, catalog, cost=obj)
    missing = _why_not(points, res.rejected, hws, slo)
    missing = missing.filter(~pl.col("hardware").is_in(best["hardware"].implode()))
    best = pl.concat([best.join(names, on="hardware", how="left"),
                      missing.join(names, on="hardware", how="left")], how="diagonal_relaxed")
    order = pl.DataFrame({"hardware": hws}).with_row_index("_order")
    best = (best.join(order, on="hardware", how="left")
            .sort([pl.col("rank").is_null(), "rank", "_order"]).select(BEST_COLUMNS))
    return Comparison(best=best, frontier=throughput_frontier(points, names), points=points)


def with_bands(ranked: pl.DataFrame, catalog: Catalog, *, cost: str, name: str = "hardware") -> pl.DataFrame:
    """A ranking (best first by ``cost``) with the efficiency profile of each row and whether its band is apart from
    the first's: :func:`econ.analyses.bands.with_profiles` and :func:`econ.analyses.bands.distinguish` on the
    ``{cost}_low`` / ``{cost}_high`` band (null band columns are added where the rows carry none)."""
    from econ.analyses.bands import distinguish, with_profiles

    for end in ("low", "high"):
        for c in {cost, "usd_per_m_output_tokens_all_in", "usd_per_m_blended_tokens"}:
            if f"{c}_{end}" not in ranked.columns:
                ranked = ranked.with_columns(pl.lit(None, pl.Float64).alias(f"{c}_{end}"))
    out = with_profiles(ranked, catalog) if "precision" in ranked.columns else ranked
    return distinguish(out, low=f"{cost}_low", high=f"{cost}_high", name=name)


def level_winners(table: pl.DataFrame, catalog: Catalog, *, cost: str = "usd_per_m_output_tokens_all_in",
                  by: str = "hardware") -> pl.DataFrame:
    """Per interactivity level, the rows of a cost-vs-interactivity table (:func:`value_at_interactivity` over several
    accelerators or set-ups) ranked by ``cost`` with their bands: ``rank``, ``profile_note``, ``distinguishable`` and
    ``rank_note`` ("cheapest; not distinguishable from b200 (bands overlap)"). Levels a row does not reach are left
    out. The frontier's winners, with the bands."""
    reached = table.filter(pl.col(cost).is_not_null())
    parts = []
    for lv in reached[LEVEL_COLUMN].unique(maintain_order=True).to_list():
        one = reached.filter(pl.col(LEVEL_COLUMN) == lv).sort(cost, by)
        parts.append(with_bands(one.with_columns(rank=pl.int_range(1, one.height + 1, dtype=pl.Int64)), catalog,
                                cost=cost, name=by))
    return pl.concat(parts, how="diagonal_relaxed") if parts else reached


_CHAIN_COLUMNS = ("usd_per_gpu_hour", "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex",
                  "usd_per_gpu_hour_power", "billed_input_tokens_per_s_per_gpu", "billed_output_tokens_per_s_per_gpu",
                  "served_output_tokens_per_s_per_gpu", "basis")
"""What :func:`_cost_chain` takes from :func:`econ.engine.evaluate`: the $/GPU-hour split, the token rates the $/M
divide by (billed input / output, served output for the all-in figure: the workbook's live formulas use them) and
the tier."""
_DEPLOYMENT_KEYS = ("model", "hardware", "precision", "batch_size", "num_gpus", "tp", "dp", "ep", "pp",
                    "disaggregated", "scale_up_domain_size", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp",
                    "prefill_instances", "decode_instances")
"""The columns of a search point that name its deployment completely (what :func:`econ.engine.evaluate` needs)."""


def _cost_chain(winners: pl.DataFrame, catalog: Catalog, assumptions, economics, deployment, *, input_len: int,
                output_len: int, decoding: dict | None = None) -> pl.DataFrame:
    """The winners of a search with their whole $/GPU-hour chain: one :func:`econ.engine.evaluate` of their
    deployments (a few rows), stacked by position; the rental part is the rate when the tier rents. ``decoding``:
    the search's set formats and speculative decoding as point columns (``Decoding.columns()``)."""
    if winners.height == 0:
        return winners.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in _CHAIN_COLUMNS[:-1]),
                                    pl.lit(None, pl.String).alias("basis"),
                                    pl.lit(None, pl.Float64).alias("usd_per_gpu_hour_rental"))
    pooled = ("prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances", "decode_instances")
    rows = winners.select(_DEPLOYMENT_KEYS).with_columns(
        *(pl.when(pl.col("disaggregated")).then(pl.col(c)).otherwise(None).alias(c) for c in pooled),
        input_len=pl.lit(int(input_len)), output_len=pl.lit(int(output_len)),  # an aggregated row has no pools
        **{k: pl.lit(v) for k, v in (decoding or {}).items()})
    chain = evaluate(rows, catalog, assumptions, economics, deployment, strict=False, columns=_CHAIN_COLUMNS)
    out = winners.drop([c for c in _CHAIN_COLUMNS if c in winners.columns]).hstack(chain.select(_CHAIN_COLUMNS))
    rent = pl.when(pl.col("basis") != "owned").then(pl.col("usd_per_gpu_hour")).otherwise(pl.col("usd_per_gpu_hour") * 0.0)
    return out.with_columns(usd_per_gpu_hour_rental=rent)


def _why_not(points: pl.DataFrame, rejected: pl.DataFrame, hardware: list[str], slo: float) -> pl.DataFrame:
    """One row per accelerator: why no deployment met the floor: the fastest it reached, else the search's most
    frequent rejection (:func:`econ.analyses.optimize.rejected_summary`) with its detail. Vectorized group-bys."""
    from econ.analyses.optimize import rejected_summary

    fastest = points.group_by("hardware").agg(pl.col("tokens_per_s_per_user").max().alias("best_speed"))
    summary = rejected_summary(rejected)
    first = (summary.sort("families", descending=True).unique(subset="hardware", keep="first")
             .select("hardware", pl.when(pl.col("detail").fill_null("") != "")
                     .then(pl.col("reason") + pl.lit(" (") + pl.col("detail") + pl.lit(")"))
                     .otherwise(pl.col("reason")).alias("rejected")))
    out = (pl.DataFrame({"hardware": hardware}).join(fastest, on="hardware", how="left")
           .join(first, on="hardware", how="left"))
    status = (pl.when(pl.col("best_speed").is_not_null())
              .then(pl.format("no deployment reaches {} tokens/s per user (fastest: {})", pl.lit(f"{slo:g}"),
                              pl.col("best_speed").round(1)))
              .otherwise(pl.col("rejected").fill_null("no deployment can serve this model")))
    return out.select("hardware", status.alias("status"), meets_slo=pl.lit(False))


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
    pl.DataFrame (:data:`FRONTIER_COLUMNS`, plus the ``*_low`` / ``*_high`` band of throughput, cost and speed
    when the engine reports one), per accelerator sorted by tokens/s per user ascending: no kept row is
    beaten on both axes by another row of the same accelerator.

    Notes
    -----
    :func:`econ.analyses.search.pareto_frontier` with the throughput maximized (the one frontier of every search).
    """
    f = pareto_frontier(points.filter(pl.col("feasible")), by=("hardware",), x="tokens_per_s_per_user",
                        y="output_tokens_per_s_per_gpu", minimize_y=False)
    if names is None:
        f = f.with_columns(display_name=pl.col("hardware"))
    else:
        f = f.join(names.select("hardware", "display_name"), on="hardware", how="left")
    bands = [f"{c}_{end}" for c in ("output_tokens_per_s_per_gpu", "usd_per_m_output_tokens", "tokens_per_s_per_user")
             for end in ("low", "high") if f"{c}_{end}" in f.columns]  # the engine's uncertainty band, when given
    return f.select(*FRONTIER_COLUMNS, *bands)


# ---------------------------------------------------------------------------------------------
# Cost vs interactivity: the frontier read at chosen tokens/s-per-user levels
# ---------------------------------------------------------------------------------------------

LEVEL_COLUMN = "at_tokens_per_s_per_user"
"""Column of :func:`value_at_interactivity` holding the interactivity level a row answers. [tokens/s per user]"""

CARRIED_COLUMNS: tuple[str, ...] = (
    "hardware", "model", "precision", "layout", "num_gpus", "total_gpus", "tp", "dp", "ep", "pp", "batch_size",
    "disaggregated", "scale_up_domain_size", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
    "usd_per_m_output_tokens", "usd_per_m_output_tokens_all_in", "usd_per_m_input_tokens",
    "usd_per_m_blended_tokens", "usd_per_gpu_hour", "binding_wall", "ttft_s", "basis", "prefill_tp", "prefill_dp",
    "prefill_ep", "prefill_pp", "prefill_instances", "decode_instances", "input_len", "output_len")
"""Columns of the chosen point carried into :func:`value_at_interactivity`'s answer when present (plus every
``*_low`` / ``*_high`` uncertainty column)."""


def _levels(levels) -> list[float]:
    """Interactivity levels as a sorted list of distinct finite floats in [0, 1e6] (tokens/s per user)."""
    vals = [float(v) for v in (levels if levels is not None else INTERACTIVITY_LEVELS)]
    if not vals:
        raise InvalidInputError("levels is empty (give at least one tokens/s-per-user level)")
    for v in vals:
        if not math.isfinite(v) or not 0.0 <= v <= 1e6:
            raise InvalidInputError(f"levels={v!r} is outside [0, 1000000] (tokens/s per user)")
    return sorted(set(vals))


def value_at_interactivity(points: pl.DataFrame, levels=INTERACTIVITY_LEVELS, *, by=("hardware",),
                           speed: str = "tokens_per_s_per_user", cost: str = "usd_per_m_output_tokens") -> pl.DataFrame:
    """Per group and interactivity level, the cheapest point at least that fast: "$/M tokens at X tokens/s per user".

    Parameters
    ----------
    points : pl.DataFrame
        Evaluated deployments (a frontier from :func:`econ.analyses.search.pareto_frontier` or
        :func:`cost_frontier`, or every point: the answer is the same, since the cheapest point at least
        as fast as X is on the frontier). Columns ``by``, ``speed`` and ``cost``; rows with a null cost or
        ``feasible = False`` are ignored.
    levels : sequence of float
        Interactivity levels, output tokens/s per user (default :data:`econ.presets.INTERACTIVITY_LEVELS`,
        20 / 50 / 100). [tokens/s]
    by : sequence of str
        Group columns (one answer per accelerator by default; ``("setup",)`` for :func:`head_to_head`).
    speed : str
        The interactivity column (maximized). [tokens/s per user]
    cost : str
        The cost column minimized (``usd_per_m_output_tokens``; the optimizer's
        ``usd_per_m_output_tokens_all_in``). [USD per M tokens]

    Returns
    -------
    pl.DataFrame, one row per group and level (groups in first-seen order, levels ascending): ``by``,
    :data:`LEVEL_COLUMN`, ``reached`` (a point at least that fast exists), ``fastest_tokens_per_s_per_user``
    (the group's fastest point), then the chosen point's ``cost`` and :data:`CARRIED_COLUMNS` (null
    where not reached).

    Raises
    ------
    InvalidInputError
        A missing column, or a level outside [0, 1e6] or not finite.

    Notes
    -----
    Vectorized: the points are crossed with the levels, kept where ``speed >= level``, sorted by cost
    (ties: the faster point) and the first row of each (group, level) kept; O(points x levels), which
    for a frontier (tens of points per group) is a few thousand rows.
    """
    by = list(by)
    for c in (*by, speed, cost):
        if c not in points.columns:
            raise InvalidInputError(f"points is missing column {c!r} (needed by value_at_interactivity)")
    lv = pl.DataFrame({LEVEL_COLUMN: _levels(levels)})
    ok = points.filter(pl.col(cost).is_not_null() & pl.col(speed).is_not_null())
    if "feasible" in ok.columns:
        ok = ok.filter(pl.col("feasible").fill_null(False))
    carried = [c for c in CARRIED_COLUMNS if c in ok.columns and c not in by and c != cost]
    carried += [c for c in ok.columns if c.endswith(("_low", "_high")) and c not in carried and c not in by]
    keep = [*by, cost, *carried]
    best = (ok.select(keep).join(lv, how="cross")
            .filter(pl.col(speed) >= pl.col(LEVEL_COLUMN))
            .sort([cost, speed], descending=[False, True])
            .group_by([*by, LEVEL_COLUMN], maintain_order=True).first())
    groups = points.select(by).unique(maintain_order=True)
    fastest = ok.group_by(by, maintain_order=True).agg(pl.col(speed).max().alias("fastest_tokens_per_s_per_user"))
    out = (groups.join(lv, how="cross")
           .join(best, on=[*by, LEVEL_COLUMN], how="left", nulls_equal=True)
           .join(fastest, on=by, how="left", nulls_equal=True)
           .with_columns(reached=pl.col(cost).is_not_null()))
    return out.select(*by, LEVEL_COLUMN, "reached", "fastest_tokens_per_s_per_user", cost, *carried)


def add_efficiency(frame: pl.DataFrame, catalog: Catalog, economics: Economics = Economics(), *,
                   cost: str = "usd_per_m_output_tokens") -> pl.DataFrame:
    """Add tokens per dollar and tokens/s per provisioned MW to rows of deployments.

    Parameters
    ----------
    frame : pl.DataFrame with ``hardware``, ``output_tokens_per_s_per_gpu`` and ``cost``
    catalog : Catalog (``all_in_power_w`` per accelerator)
    economics : Economics (``pue``)
    cost : str, the $/M output tokens column the dollars are read from

    Returns
    -------
    ``frame`` plus
    ``output_tokens_per_usd`` = 1e6 / ``cost``: output tokens one dollar buys [tokens/USD];
    ``provisioned_power_w_per_gpu`` = ``all_in_power_w`` x PUE: the utility power provisioned per
    accelerator, host, network and cooling included [W];
    ``output_tokens_per_s_per_mw`` = ``output_tokens_per_s_per_gpu`` / provisioned power x 1e6: output
    tokens/s per MW of provisioned power [tokens/s/MW] (the "tokens per MW" of SemiAnalysis InferenceX,
    which divides by all-in provisioned power per GPU).
    Null where the cost or the throughput is null; ``*_low`` / ``*_high`` variants when the inputs have them.
    """
    power = catalog.accelerators.select(pl.col("id").alias("hardware"),
                                        (pl.col("all_in_power_w") * float(economics.pue))
                                        .alias("provisioned_power_w_per_gpu"))
    out = frame.drop([c for c in ("provisioned_power_w_per_gpu",) if c in frame.columns]).join(
        power, on="hardware", how="left")
    exprs = [(1e6 / pl.col(cost)).alias("output_tokens_per_usd"),
             (pl.col("output_tokens_per_s_per_gpu") / pl.col("provisioned_power_w_per_gpu") * 1e6)
             .alias("output_tokens_per_s_per_mw")]
    for end in ("_low", "_high"):  # a cheaper bound buys more tokens: low cost -> high tokens per dollar
        other = "_high" if end == "_low" else "_low"
        if f"{cost}{end}" in out.columns:
            exprs.append((1e6 / pl.col(f"{cost}{end}")).alias(f"output_tokens_per_usd{other}"))
        if f"output_tokens_per_s_per_gpu{end}" in out.columns:
            exprs.append((pl.col(f"output_tokens_per_s_per_gpu{end}") / pl.col("provisioned_power_w_per_gpu") * 1e6)
                         .alias(f"output_tokens_per_s_per_mw{end}"))
    return out.with_columns(exprs)


def interactivity_table(points: pl.DataFrame, catalog: Catalog, economics: Economics = Economics(),
                        levels=INTERACTIVITY_LEVELS, *, by=("hardware",), speed: str = "tokens_per_s_per_user",
                        cost: str = "usd_per_m_output_tokens") -> pl.DataFrame:
    """:func:`value_at_interactivity` with :func:`add_efficiency`: the headline cost-vs-interactivity table.

    One row per group and level: $/M output (``cost``), input and blended tokens, output tokens/s per
    GPU, output tokens per $1 and output tokens/s per provisioned MW of the cheapest deployment at least
    ``level`` tokens/s per user fast. Parameters as :func:`value_at_interactivity`; ``catalog`` and
    ``economics`` as :func:`add_efficiency`.
    """
    return add_efficiency(value_at_interactivity(points, levels, by=by, speed=speed, cost=cost), catalog, economics,
                          cost=cost)


def cost_frontier(points: pl.DataFrame, *, by=("hardware",), speed: str = "tokens_per_s_per_user",
                  cost: str = "usd_per_m_output_tokens") -> pl.DataFrame:
    """Pareto frontier of cost against interactivity per group: no kept point is beaten on both.

    A thin, documented use of :func:`econ.analyses.search.pareto_frontier` on the feasible priced rows of
    ``points`` (e.g. :attr:`Comparison.points`): per group, sorted by ``speed`` ascending.
    """
    ok = points.filter(pl.col(cost).is_not_null() & pl.col(speed).is_not_null())
    if "feasible" in ok.columns:
        ok = ok.filter(pl.col("feasible").fill_null(False))
    return pareto_frontier(ok, by=tuple(by), x=speed, y=cost)


def batch_at_floor(curve: pl.DataFrame, *, min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                   max_ttft_s: float = math.inf, at_most: int | None = None,
                   speed: str = "served_tokens_per_s_per_user", ttft: str = "served_ttft_s") -> int | None:
    """The largest batch of a batch curve that meets a speed floor (and a TTFT limit): the "auto" batch under an SLO.

    Parameters
    ----------
    curve : pl.DataFrame
        Rows of one deployment over batch sizes (:func:`econ.analyses.sweep.batch_curve`), with ``batch_size``,
        ``feasible``, ``speed`` and ``ttft``.
    min_tokens_per_s_per_user : float >= 0
        The floor, as served (default: the one default floor). [tokens/s]
    max_ttft_s : float > 0 [s]
    at_most : int, optional
        Upper bound on the batch (the sweet spot: beyond it cost per token no longer falls). [sequences]
    speed, ttft : str
        Columns read (served figures by default: aggregated serving includes its prefill chunks).

    Returns
    -------
    int or None: the largest qualifying ``batch_size`` (within the curve's grid), None when no row qualifies.
    """
    ok = curve.filter(pl.col("feasible").fill_null(False) & (pl.col(speed) >= float(min_tokens_per_s_per_user))
                      & (pl.col(ttft) <= float(max_ttft_s)))
    if at_most is not None:
        ok = ok.filter(pl.col("batch_size") <= int(at_most))
    return None if ok.height == 0 else int(ok["batch_size"].max())




def auto_batch_row(catalog: Catalog, *, min_tokens_per_s_per_user: float = DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                   max_ttft_s: float = math.inf, curve: pl.DataFrame | None = None,
                   **cost_kwargs) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The "auto" batch of ``econ cost`` and the Cost explorer: the sweet spot, unless it misses the speed floor.

    Parameters
    ----------
    catalog : Catalog
    min_tokens_per_s_per_user, max_ttft_s : the SLO (served figures) [tokens/s], [s]
    curve : pl.DataFrame, optional
        The deployment's batch curve (:func:`econ.analyses.sweep.batch_curve` on the chosen layout) when the caller
        has it; computed (4 batches per octave) only when the sweet spot misses the SLO.
    cost_kwargs : the keyword arguments of :func:`econ.analyses.sweep.cost_table` (``model``, ``hardware``, ...;
        without ``batch_sizes``).

    Returns
    -------
    (row, curve): a one-row :func:`econ.analyses.sweep.cost_table` frame, and the curve when one was used (else
    ``curve`` as given). The row is at the sweet spot (:func:`econ.analyses.sweep.cost_table`'s auto batch) when
    that meets the SLO, else at the largest batch of the curve that does (:func:`batch_at_floor`); when
    none does, at the sweet spot (its ``served_tokens_per_s_per_user`` tells by how much it misses).

    Raises
    ------
    As :func:`econ.analyses.sweep.cost_table`.
    """
    from econ.analyses.sweep import batch_curve, cost_table

    row = cost_table(catalog, **cost_kwargs, min_tokens_per_s_per_user=min_tokens_per_s_per_user,
                     max_ttft_s=None if math.isinf(max_ttft_s) else max_ttft_s)  # layout and batch chosen together
    r = row.row(0, named=True)
    speed = r.get("served_tokens_per_s_per_user", r.get("tokens_per_s_per_user"))
    ttft = r.get("served_ttft_s", r.get("ttft_s"))
    if cost_kwargs.get("slo_percentile") is not None and r["feasible"]:  # the SLO is judged at the percentile
        speed, ttft = 1.0 / max(r["tpot_percentile_s"], 1e-30), r["ttft_percentile_s"]
    if not r["feasible"] or (speed is not None and speed >= min_tokens_per_s_per_user
                             and ttft is not None and ttft <= max_ttft_s):
        return row, curve
    if curve is None:
        curve = batch_curve(catalog, **_pinned(cost_kwargs, r))
    b = batch_at_floor(curve, min_tokens_per_s_per_user=min_tokens_per_s_per_user, max_ttft_s=max_ttft_s,
                       at_most=r["batch_size"])
    return (row if b is None else curve.filter(pl.col("batch_size") == b).head(1)), curve


def curve_on_layout(catalog: Catalog, row: dict, *, points_per_octave: int = 4, **cost_kwargs) -> pl.DataFrame:
    """The batch curve of a deployment already evaluated: :func:`econ.analyses.sweep.batch_curve`'s rows in one engine pass.

    :func:`econ.analyses.sweep.batch_curve` evaluates the deployment once to learn its layout and KV-capacity maximum,
    then the grid; when the caller has that row (the KPI row of the Cost explorer), this skips the first
    pass. Same grid (``points_per_octave`` log-spaced batches per doubling from ``dp`` to the maximum, the
    maximum included), same rows (``tests/dashboards/test_interactivity.py`` checks they are equal).

    Parameters
    ----------
    row : dict
        A :func:`econ.analyses.sweep.cost_table` row: ``num_gpus``, ``tp``, ``dp``, ``ep``, ``pp``, ``max_batch_size``.
    cost_kwargs : the other keyword arguments of :func:`econ.analyses.sweep.cost_table` (the row's model, accelerator...).
    """
    from econ.analyses.sweep import cost_table

    require_in_range("points_per_octave", points_per_octave, 1, 64)
    max_b, dp = int(row["max_batch_size"]), int(row["dp"])
    n = max(2, int(np.log2(max(max_b / dp, 2)) * points_per_octave) + 1)
    batches = (np.unique(np.round(np.geomspace(1, max_b / dp, n)).astype(int)) * dp if max_b > dp
               else np.array([dp]))
    return cost_table(catalog, batch_sizes=[int(b) for b in batches if b <= max_b], **_pinned(cost_kwargs, row))


def _pinned(cost_kwargs: dict, row: dict) -> dict:
    """``cost_kwargs`` with a row's whole deployment pinned (layout and, when disaggregated, its pools)."""
    from econ.analyses.sweep import POOL_KEYS, deployment_of

    d = deployment_of(row)
    pools = {k: d.pop(k) for k in POOL_KEYS if k in d}
    out = {**cost_kwargs, **d, "pools": pools or None}
    if (row.get("cp") or 1) > 1:  # a searched context-parallel prefill (issue 22.3) stays pinned too
        out["long_context"] = {**(cost_kwargs.get("long_context") or {}), "cp": int(row["cp"])}
    return out


# ---------------------------------------------------------------------------------------------
# Head to head: two set-ups side by side
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Setup:
    """One side of a head-to-head comparison.

    Attributes
    ----------
    model, hardware : str
        Catalog ids.
    precision : {"bf16", "fp8", "fp4"}
        Weight and matmul precision.
    basis : str
        Cost tier of $/GPU-hour (:data:`econ.vocabulary.TIERS`; ``owned-custom`` is accepted for ``owned``).
    """

    model: str
    hardware: str
    precision: str = "fp8"
    basis: str = "owned"

    @property
    def spec(self) -> str:
        """``model:hardware:precision:tier``, the text :func:`parse_setup` reads."""
        return f"{self.model}:{self.hardware}:{self.precision}:{self.basis}"


def parse_setup(text: str, *, name: str = "setup", default_basis: str = "owned") -> Setup:
    """``MODEL:HARDWARE[:PRECISION[:TIER]]`` -> :class:`Setup` (precision fp8 and the default tier when omitted).

    Raises
    ------
    InvalidInputError
        Not 2 to 4 ``:``-separated parts, an unknown precision or tier (named with ``name``). Ids are
        checked against a catalog by :func:`head_to_head`.
    """
    parts = [p.strip() for p in str(text).split(":")]
    if not 2 <= len(parts) <= 4 or not all(parts):
        raise InvalidInputError(f"{name}={str(text)[:80]!r} is not MODEL:HARDWARE[:PRECISION[:TIER]] "
                                f"(e.g. deepseek-v3:b200:fp4:neocloud)")
    precision = parts[2] if len(parts) > 2 else "fp8"
    if precision not in PRECISIONS:
        raise InvalidInputError(f"{name}: precision {precision!r} is not one of {list(PRECISIONS)}")
    basis = TIER_ALIASES.get(parts[3], parts[3]) if len(parts) > 3 else default_basis
    if basis not in TIERS:
        raise InvalidInputError(f"{name}: tier {parts[3]!r} is not one of {[*TCO_CHOICES, 'custom']}")
    return Setup(parts[0], parts[1], precision, basis)


SETUP_NAMES = ("A", "B")
"""Labels of the two sides of :func:`head_to_head` (the ``setup`` column)."""


@dataclass(frozen=True)
class HeadToHead:
    """Result of :func:`head_to_head`.

    Attributes
    ----------
    setups : tuple of (Setup, Setup)
    frontier : pl.DataFrame
        Both Pareto frontiers of all-in $/M output tokens against tokens/s per user, ``setup`` = "A"/"B"
        (:data:`econ.analyses.optimize.POINT_COLUMNS` + ``setup``, ``basis``, ``input_len``, ``output_len``).
    at_levels : pl.DataFrame
        :func:`interactivity_table` of each frontier (``by = ("setup",)``).
    ratio : pl.DataFrame
        One row per level: each side's cost and throughput, ``cost_ratio_b_to_a`` (B's $/M over A's:
        below 1, B is cheaper) and ``throughput_ratio_b_to_a`` (output tokens/s per GPU, B over A).
    breakdown : pl.DataFrame
        :func:`econ.analyses.breakdown.step_breakdown` (long) of each side's point at each level it reaches,
        with ``setup`` and :data:`LEVEL_COLUMN`.
    binding : pl.DataFrame
        The same points wide: component times, ``binding_side``, ``hidden_s``, ``binding_wall``.
    """

    setups: tuple
    frontier: pl.DataFrame
    at_levels: pl.DataFrame
    ratio: pl.DataFrame
    breakdown: pl.DataFrame
    binding: pl.DataFrame


def head_to_head(catalog: Catalog, a: Setup, b: Setup, *, levels=INTERACTIVITY_LEVELS, input_len: int = DEFAULT_INPUT_LEN,
                 output_len: int = DEFAULT_OUTPUT_LEN, max_ttft_s: float = math.inf, assumptions: Assumptions = DEFAULT,
                 economics: Economics = Economics(), deployment=None, space=None,
                 slo_percentile: float | None = None) -> HeadToHead:
    """Two (model, accelerator, precision, cost tier) set-ups side by side on cost against interactivity.

    Parameters
    ----------
    catalog : Catalog
    a, b : Setup
    levels : sequence of float
        Interactivity levels read off both frontiers [tokens/s per user] (default 20 / 50 / 100).
    input_len, output_len : int [tokens]
    max_ttft_s : float > 0
        Points slower to the first token are left off the frontiers. [s]
    assumptions, economics : as :func:`econ.engine.evaluate`; each side's ``basis`` replaces
        ``economics.basis`` (``economics.usd_per_gpu_hour`` is the rate of tier "custom").
    deployment : DeploymentAssumptions, optional
    space : econ.analyses.optimize.SearchSpace, optional
        The search (default: everything); each side's precision replaces ``space.precisions``.
    slo_percentile : float, optional [%]
        Judge the TTFT limit at this percentile (:class:`econ.analyses.optimize.SLO`); None = the served mean.

    Returns
    -------
    HeadToHead

    Raises
    ------
    UnknownIdError, InvalidInputError
        Unknown ids, bad levels, or a side that cannot serve at all (its reason: the precision is not
        supported, the tier has no rate for the accelerator, the weights do not fit...).

    Notes
    -----
    Each side is one :func:`econ.analyses.optimize.search` over every layout (TP/EP/PP/attention-DP, aggregated
    and disaggregated) and batch; its frontier is :func:`econ.analyses.search.pareto_frontier` of all-in $/M
    output tokens (every GPU the request uses, prefill included) against served tokens/s per user.
    """
    from econ.analyses.breakdown import step_breakdown
    from econ.analyses.optimize import SLO, SearchSpace, rejected_summary, search

    deployment = deployment or DEFAULT_DEPLOYMENT
    space = space or SearchSpace()
    _levels(levels)
    cost = "usd_per_m_output_tokens_all_in"
    fronts, econ_by = [], {}
    for name, s in zip(SETUP_NAMES, (a, b)):
        check_ids("model", [s.model], catalog.models["id"].to_list())
        check_ids("hardware", [s.hardware], catalog.accelerators["id"].to_list())
        e = replace(economics, basis=s.basis)
        econ_by[name] = e
        res = search(catalog, model=s.model, hardware=[s.hardware], input_len=input_len, output_len=output_len,
                     slo=SLO(max_ttft_s=max_ttft_s, percentile=slo_percentile),
                     space=replace(space, precisions=(s.precision,)),
                     assumptions=assumptions, economics=e, deployment=deployment)
        if slo_percentile is None:
            pts = res.points.filter(pl.col("ttft_s") <= max_ttft_s)
        else:  # the TTFT limit judged at the percentile (the search's slo_miss), not at the mean
            pts = res.points.filter(~pl.col("slo_miss").fill_null("").str.contains("TTFT"))
        if pts.height == 0:
            summary = rejected_summary(res.rejected)
            why = "; ".join(f"{r['reason']}" + (f" ({r['detail']})" if r["detail"] else "")
                            for r in summary.head(2).iter_rows(named=True)) or "no deployment meets the TTFT limit"
            raise InvalidInputError(f"set-up {name} ({s.spec}) cannot serve: {why}")
        f = pareto_frontier(pts, by=("hardware",), y=cost).with_columns(
            setup=pl.lit(name), basis=pl.lit(s.basis), input_len=pl.lit(int(input_len), dtype=pl.Int64),
            output_len=pl.lit(int(output_len), dtype=pl.Int64))
        fronts.append(f)
    frontier = pl.concat(fronts, how="vertical_relaxed")
    at = pl.concat([interactivity_table(frontier.filter(pl.col("setup") == n), catalog, econ_by[n], levels,
                                        by=("setup",), cost=cost) for n in SETUP_NAMES], how="vertical_relaxed")
    wide = at.select("setup", LEVEL_COLUMN, cost, "output_tokens_per_s_per_gpu", "tokens_per_s_per_user").pivot(
        on="setup", index=LEVEL_COLUMN, values=[cost, "output_tokens_per_s_per_gpu", "tokens_per_s_per_user"])
    ratio = wide.rename({f"{c}_{n}": f"{c}_{n.lower()}" for c in (cost, "output_tokens_per_s_per_gpu",
                                                                   "tokens_per_s_per_user") for n in SETUP_NAMES})
    ratio = ratio.with_columns(
        cost_ratio_b_to_a=pl.col(f"{cost}_b") / pl.col(f"{cost}_a"),
        throughput_ratio_b_to_a=pl.col("output_tokens_per_s_per_gpu_b") / pl.col("output_tokens_per_s_per_gpu_a"),
    ).sort(LEVEL_COLUMN)
    ratio = ratio.join(_h2h_verdict(at, cost), on=LEVEL_COLUMN, how="left")
    reached = at.filter(pl.col("reached"))
    parts, wides = [], []
    for n in SETUP_NAMES:  # two engine calls per side (the points, and at a one-token context)
        rows = reached.filter(pl.col("setup") == n)
        rows = rows.with_columns(**{k: pl.lit(v) for k, v in space.decoding.columns().items()
                                    if k not in rows.columns})  # the formats / speculation the search ran
        if rows.height:
            parts.append(step_breakdown(rows, catalog, assumptions, econ_by[n], deployment,
                                        keep=("setup", LEVEL_COLUMN)))
            wides.append(step_breakdown(rows, catalog, assumptions, econ_by[n], deployment, wide=True,
                                        keep=("setup", LEVEL_COLUMN, "layout", "batch_size")))
    breakdown = pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame()
    binding = pl.concat(wides, how="vertical_relaxed") if wides else pl.DataFrame()
    return HeadToHead(setups=(a, b), frontier=frontier, at_levels=at, ratio=ratio, breakdown=breakdown,
                      binding=binding)


def _h2h_verdict(at: pl.DataFrame, cost: str) -> pl.DataFrame:
    """Per level: each side's cost band and which side is cheaper beyond the bands (``cheaper``: "A", "B", or "not
    distinguishable" when the bands overlap; a side without a band is compared by its point and says so)."""
    from econ.analyses.bands import overlap

    cols = [f"{cost}_low", f"{cost}_high"]
    have = at.with_columns(*(pl.lit(None, pl.Float64).alias(c) for c in cols if c not in at.columns))
    w = have.select("setup", LEVEL_COLUMN, cost, *cols).pivot(on="setup", index=LEVEL_COLUMN, values=[cost, *cols])
    w = w.rename({c: c.replace("_A", "_a").replace("_B", "_b") for c in w.columns})
    for c in (cost, *cols):
        for n in ("a", "b"):
            if f"{c}_{n}" not in w.columns:
                w = w.with_columns(pl.lit(None, pl.Float64).alias(f"{c}_{n}"))
    lo_a, hi_a, lo_b, hi_b = (pl.col(f"{cost}_{e}_{n}") for n in ("a", "b") for e in ("low", "high"))
    banded = lo_a.is_not_null() & hi_a.is_not_null() & lo_b.is_not_null() & hi_b.is_not_null()
    a, b = pl.col(f"{cost}_a"), pl.col(f"{cost}_b")
    cheaper = (pl.when(a.is_null() | b.is_null()).then(None)
               .when(banded & overlap(lo_a, hi_a, lo_b, hi_b)).then(pl.lit("not distinguishable"))
               .when(~banded).then(pl.when(b < a).then(pl.lit("B (no band)")).otherwise(pl.lit("A (no band)")))
               .when(b < a).then(pl.lit("B")).otherwise(pl.lit("A")))
    return w.select(LEVEL_COLUMN, *(pl.col(f"{cost}_{e}_{n}") for n in ("a", "b") for e in ("low", "high")),
                    cheaper.alias("cheaper"))


__all__ = ["Comparison", "hardware_comparison", "throughput_frontier", "with_bands", "level_winners",
           "value_at_interactivity", "add_efficiency", "interactivity_table", "cost_frontier", "Setup",
           "parse_setup", "HeadToHead", "head_to_head", "LEVEL_COLUMN", "SETUP_NAMES", "batch_at_floor",
           "auto_batch_row", "curve_on_layout", "BEST_COLUMNS", "FRONTIER_COLUMNS", "COST_PARTS", "OBJECTIVES"]
