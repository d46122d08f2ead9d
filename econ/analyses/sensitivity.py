"""Sensitivity of an answer to its assumptions: a tornado over sourced ranges and a Monte Carlo band (issue 18.5).

Three answers (:data:`ANSWERS`):

- ``cost``: the $ per M tokens of a deployment (``econ cost``'s automatic layout and batch at the speed floor);
- ``quote``: the blended gross margin of a provider quote against its floor (``econ quotes check``'s floor
  deployment for that quote);
- ``site``: the simple payback of a build-out that serves a model (``econ fleet size``'s site).

Each answer's point is exactly the deployment its command answers with (``econ cost``'s and
:func:`econ.analyses.cluster.cluster_plan`'s cheapest all-in point of the one search, possibly disaggregated; the
quote check's floor deployment). It is re-evaluated with one assumption at a time at the low and the high of its
sourced range (:data:`econ.vocabulary.SENSITIVITY_RANGES`), plus the calibration band of the efficiency profile
(the engine's ``*_low`` / ``*_high`` columns): the bars of a tornado, sorted by how far they move the answer. A
Monte Carlo band draws every assumption at once from its documented distribution (:func:`draw`) and combines it
with the calibration band.

Which deployment a scenario runs on: one with the point's speed floor keeps the point's deployment (utilization,
power, PUE, capex, life, cost of capital and the price change the $/GPU-hour of every deployment of one
accelerator alike, not their ranking; the cache-hit rate moves the prefill work the engine prices); one with another
floor takes the deployment the answer's own rule picks from the points of the one search
(:func:`econ.analyses.optimize.search`, run once; :func:`pick`), never a second search space. Everything runs
through the one engine (:func:`econ.engine.evaluate`): one call for the point and every low and high, one for all N
Monte Carlo samples (:func:`evaluate_scenarios`).

Simplifications, stated: the accelerator is held at the point's (a bar says how the answer moves for this
deployment, not which accelerator would then be best); the calibration band scales the answer of the scenario's
deployment, as the engine's band columns do; a cache-hit rate other than the point's keeps the deployment its floor
picks (the search ranks deployments at the point's rate) and lets the engine size its xPyD pools again; a site keeps its GPU count (PUE and capex move its
bills, not its size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from econ.assumptions import DEFAULT, Assumptions, Economics
from econ.engine import evaluate
from econ.errors import InvalidInputError
from econ.tables.catalog import Catalog
from econ.validate import require_integer
from econ.vocabulary import (CAPEX, EFFICIENCY_BAND, EFFICIENCY_BAND_SOURCE, FIELDS, SENSITIVITY_RANGES,
                             SensitivityRange, Tier, sensitivity_range, tier)

ANSWERS: tuple[str, ...] = ("cost", "quote", "site")
"""The answers a sensitivity analysis explains."""

COST_METRICS: dict[str, str] = {"output": "usd_per_m_output_tokens", "input": "usd_per_m_input_tokens",
                                "blended": "usd_per_m_blended_tokens"}
"""``cost`` answer: which $/M (the engine column)."""

OWNED_ONLY: tuple[str, ...] = ("usd_per_kwh", "pue", CAPEX, "accelerator_life_years", "cost_of_capital_frac")
"""Assumptions that enter only the owned tier's cost chain (a rental or TCO rate includes them already)."""

COST_ASSUMPTIONS: tuple[str, ...] = ("utilization_frac", "usd_per_kwh", "pue", CAPEX, "accelerator_life_years",
                                     "cost_of_capital_frac", "min_tokens_per_s_per_user", "cache_hit_frac")
"""What a ``cost`` or ``quote`` tornado moves (plus the calibration band)."""

SITE_ASSUMPTIONS: tuple[str, ...] = ("utilization_frac", "usd_per_kwh", "pue", CAPEX, "min_tokens_per_s_per_user",
                                     "price_usd_per_m_output_tokens")
"""What a ``site`` tornado moves (plus the calibration band): simple payback has no discounting, so life and
cost of capital do not enter it; the cache-hit rate is held at the scenario's (it moves the input revenue and the
prefill work together)."""

PERCENTILES: tuple[float, ...] = (5.0, 10.0, 50.0, 90.0, 95.0)
"""Monte Carlo percentiles reported."""

DEFAULT_SAMPLES = 500
"""Monte Carlo samples (rows of one engine call, one per sample)."""
MAX_SAMPLES = 20_000
DEFAULT_SEED = 18
"""Seed of the Monte Carlo generator (issue 18): the same seed gives the same band."""

Z_P90 = 1.2815515655446004
"""90th percentile of the standard normal (scipy.stats.norm.ppf(0.9)): a normal with the profile's p10 and p90 has
standard deviation (p90 - p10) / (2 Z_P90)."""

TORNADO_COLUMNS: tuple[str, ...] = (
    "rank", "assumption", "label", "unit", "value", "low", "high", "answer_at_low", "answer_at_high", "swing",
    "source")
"""Columns of :attr:`Sensitivity.tornado`: the assumption (a field name, ``all_in_capex_usd`` or
``efficiency_band``), its label and unit, the point's value and the range (absolute, in the unit), the answer at
each end, the swing |high - low| of the answer (null when an end cannot be reached), and the range's source."""


@dataclass(frozen=True)
class Sensitivity:
    """What :func:`cost_sensitivity`, :func:`quote_sensitivity` and :func:`site_sensitivity` return.

    Attributes
    ----------
    answer : str
        "cost", "quote" or "site".
    metric : str
        The answer's column (``usd_per_m_output_tokens``, ``margin_blended_frac``, ``payback_years``).
    unit : str
        Its unit ("USD/M tokens", "", "years").
    point : float
        The answer with every assumption at the scenario's value (``inf`` payback: never paid back).
    tornado : pl.DataFrame
        :data:`TORNADO_COLUMNS`, largest swing first.
    monte_carlo : pl.DataFrame
        ``percentile`` and ``value`` of the answer over the samples (:data:`PERCENTILES`); empty with 0 samples.
    samples, seed : int
        The Monte Carlo draw (``samples`` rows of the engine call, ``seed`` of ``numpy.random.default_rng``).
    unreachable_frac : float
        Share of samples whose speed floor no batch of the deployment meets (left out of the percentiles).
    setup : dict
        The deployment held fixed (accelerator, precision, layout, batch) and the answer's other inputs.
    notes : tuple of str
        What the analysis assumed or left out, in words.
    """

    answer: str
    metric: str
    unit: str
    point: float
    tornado: pl.DataFrame
    monte_carlo: pl.DataFrame
    samples: int
    seed: int
    unreachable_frac: float = 0.0
    setup: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()


# ----------------------------------------------------------------------------------------------------
# Ranges and scenarios
# ----------------------------------------------------------------------------------------------------

def ranges_for(names, overrides: dict | None = None) -> dict[str, SensitivityRange]:
    """The ranges of ``names``: :data:`econ.vocabulary.SENSITIVITY_RANGES`, replaced by ``overrides``.

    Parameters
    ----------
    names : iterable of str
        Assumption names (field names, or ``all_in_capex_usd``).
    overrides : dict name -> SensitivityRange or (low, high), optional
        A user's own range; checked like the table's (:func:`econ.vocabulary.sensitivity_range`).

    Raises
    ------
    InvalidInputError
        An override for an assumption the answer does not move, or a bad range (low > high, outside the field's
        range): naming the field, the value and the valid range.
    """
    names = tuple(names)
    out = {n: SENSITIVITY_RANGES[n] for n in names}
    for name, r in (overrides or {}).items():
        if name not in out:
            raise InvalidInputError(f"sensitivity range of {name!r}: not an assumption of this answer "
                                    f"(valid: {', '.join(names)})")
        base = SENSITIVITY_RANGES[name]
        low, high = (r.low, r.high) if isinstance(r, SensitivityRange) else r
        out[name] = sensitivity_range(name, low, high, "your range", relative=base.relative,
                                      distribution=base.distribution, label=base.label)
    return out


def _absolute(r: SensitivityRange, value: float) -> tuple[float, float]:
    """(low, high) of a range in the assumption's unit (a relative range times the point's value)."""
    return (r.low * value, r.high * value) if r.relative else (r.low, r.high)


def scenario_values(point: dict[str, float], ranges: dict[str, SensitivityRange]) -> tuple[list[tuple], pl.DataFrame]:
    """The tornado's scenarios: the point, then each assumption at its low and its high (the others at the point).

    Parameters
    ----------
    point : dict name -> float
        Every assumption's value at the point (absolute: capex in USD, price in USD/M tokens).
    ranges : dict name -> SensitivityRange

    Returns
    -------
    (labels, values): ``labels[i]`` = ("point", "") or (name, "low" | "high"); ``values`` one row per scenario,
    one column per assumption of ``point`` (absolute values).
    """
    labels, rows = [("point", "")], [dict(point)]
    for name, r in ranges.items():
        lo, hi = _absolute(r, point[name])
        for end, x in (("low", lo), ("high", hi)):
            labels.append((name, end))
            rows.append({**point, name: x})
    return labels, pl.DataFrame(rows, schema={k: pl.Float64 for k in point})


def draw(point: dict[str, float], ranges: dict[str, SensitivityRange], samples: int,
         rng: np.random.Generator) -> pl.DataFrame:
    """``samples`` joint draws of the assumptions, each from its documented distribution, independently.

    ``triangular``: numpy's triangular between the range's ends with its mode at the point's value (clipped into
    the range; a range of zero width is the constant); ``uniform``: between the ends. Assumptions without a range
    stay at the point.

    Returns
    -------
    pl.DataFrame, ``samples`` rows, one column per assumption of ``point``.
    """
    cols = {}
    for name, value in point.items():
        r = ranges.get(name)
        if r is None:
            cols[name] = np.full(samples, float(value))
            continue
        lo, hi = _absolute(r, value)
        if hi <= lo:
            cols[name] = np.full(samples, float(lo))
        elif r.distribution == "uniform":
            cols[name] = rng.uniform(lo, hi, samples)
        else:
            cols[name] = rng.triangular(lo, min(max(float(value), lo), hi), hi, samples)
    return pl.DataFrame(cols)


def efficiency_draws(p10: float, p90: float, samples: int, rng: np.random.Generator) -> np.ndarray:
    """ln(measured / predicted throughput) per sample: normal with the profile's 10th and 90th percentiles.

    Returns
    -------
    float array [-]; zeros when the row has no calibrated band (NaN ``p10``/``p90``).
    """
    if not (math.isfinite(p10) and math.isfinite(p90)) or p90 < p10:
        return np.zeros(samples)
    return rng.normal((p10 + p90) / 2.0, (p90 - p10) / (2.0 * Z_P90), samples)


# ----------------------------------------------------------------------------------------------------
# The one engine call: every scenario on its deployment
# ----------------------------------------------------------------------------------------------------

_ECONOMICS_IN_FRAME = ("utilization_frac", "usd_per_kwh", "pue", "accelerator_life_years", "cost_of_capital_frac",
                       "cache_hit_frac")
_RESULT = ("batch_size", "feasible", "precision", "num_gpus", "total_gpus", "layout", "tokens_per_s_per_user",
           "served_tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "served_output_tokens_per_s_per_gpu",
           "output_tokens_per_s_per_gpu_low",
           "output_tokens_per_s_per_gpu_high", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
           "usd_per_m_blended_tokens", "usd_per_m_output_tokens_all_in", "usd_per_m_input_tokens_low",
           "usd_per_m_input_tokens_high", "usd_per_m_output_tokens_low", "usd_per_m_output_tokens_high",
           "usd_per_m_blended_tokens_low", "usd_per_m_blended_tokens_high", "usd_per_m_output_tokens_all_in_low",
           "usd_per_m_output_tokens_all_in_high", "usd_per_gpu_hour")

_LAYOUT = ("num_gpus", "tp", "dp", "ep", "pp")
_POOLS = ("prefill_tp", "prefill_dp", "prefill_ep", "prefill_pp", "prefill_instances", "decode_instances")
_SPEC = ("spec_method", "spec_draft_tokens", "spec_acceptance")
_KEYS = ("precision", *_LAYOUT, "disaggregated", *_POOLS, "batch_size", *_SPEC)
"""What names a deployment completely (:func:`econ.analyses.sweep.deployment_of` and its precision and batch, and a
speculative decoding other than the model's default, e.g. a quote floor's EAGLE-3 head): the columns a scenario row
takes from its deployment."""


def _keys_of(row: dict) -> dict:
    """The :data:`_KEYS` of a result or search row (pools null when aggregated; speculation null: the default)."""
    dis = bool(row.get("disaggregated"))
    return {"precision": row["precision"], **{k: int(row[k]) for k in _LAYOUT}, "disaggregated": dis,
            **{k: (int(row[k]) if dis else None) for k in _POOLS}, "batch_size": int(row["batch_size"]),
            **{k: row.get(k) for k in _SPEC}}


def _keys_frame(points: pl.DataFrame) -> pl.DataFrame:
    """:func:`_keys_of` of every row of ``points``, as a frame."""
    dis = pl.col("disaggregated").fill_null(False)
    spec_type = {"spec_method": pl.String, "spec_draft_tokens": pl.Int64, "spec_acceptance": pl.Float64}
    return points.select(pl.col("precision").cast(pl.String), *(pl.col(k).cast(pl.Int64) for k in _LAYOUT),
                         dis.alias("disaggregated"),
                         *(pl.when(dis).then(pl.col(k).cast(pl.Int64)).otherwise(None).alias(k) for k in _POOLS),
                         pl.col("batch_size").cast(pl.Int64),
                         *((pl.col(k) if k in points.columns else pl.lit(None)).cast(t).alias(k)
                           for k, t in spec_type.items()))


@dataclass(frozen=True)
class _Deployment:
    """The point's deployment and the one search's points a scenario with another speed floor re-picks from.

    Attributes
    ----------
    columns : dict
        What every row shares: model, accelerator, lengths (and the quote's weight formats).
    point : dict
        :data:`_KEYS` of the point's deployment: exactly the one ``econ cost``, ``econ quotes check`` or
        :func:`econ.analyses.cluster.cluster_plan` answers with (pools included).
    floor : float
        The point's speed floor. [tokens/s per user]
    cache_hit_frac : float
        The point's prefix-cache hit rate, at which the search sized the xPyD pools. [-]
    ordered : pl.DataFrame or None
        The one search's points (:func:`econ.analyses.optimize.search`) in the order of
        :func:`econ.analyses.search.cheapest` (cheapest first, ties: the faster), with their :data:`_KEYS` and
        ``speed``: a floor f picks the first point with ``speed`` >= f. None: the floor is not varied.
    engine_capex : bool
        False: the answer's capex column is not a per-accelerator capex (a site's total), so the engine keeps the
        catalog's.
    """

    columns: dict
    point: dict
    floor: float
    cache_hit_frac: float
    ordered: pl.DataFrame | None = None
    engine_capex: bool = True


def _deployment(columns: dict, point_row: dict, floor: float, cache_hit_frac: float, points: pl.DataFrame | None, *,
                cost: str, speed: str, engine_capex: bool = True) -> _Deployment:
    """The point's deployment and, when ``points`` are given, the one search's points in the pick order.

    Parameters
    ----------
    point_row : a row (engine result or search point) of the point's deployment
    points : the one search's points (every feasible deployment), or None when the floor is not varied
    cost, speed : the rule's columns: the cost minimized, the speed a floor applies to (ties: the faster)
    """
    ordered = None
    if points is not None and points.height:
        ranked = points.sort([cost, speed], descending=[False, True], maintain_order=True)
        ordered = _keys_frame(ranked).with_columns(speed=ranked[speed].cast(pl.Float64))
    return _Deployment(dict(columns), _keys_of(point_row), float(floor), float(cache_hit_frac), ordered, engine_capex)


def pick(dep: _Deployment, floors) -> tuple[np.ndarray, np.ndarray]:
    """For each speed floor, the row of ``dep.ordered`` the one rule picks: the cheapest point at least that fast.

    Returns
    -------
    (index, reached): int array (0 where not reached) and bool array. The floor equal to the point's keeps the
    point's deployment (index -1).

    Notes
    -----
    :func:`econ.analyses.search.cheapest` of the points meeting f is the first of the cost order whose speed is at
    least f, i.e. the first index where the running maximum of the speed reaches f: one ``np.searchsorted`` per
    floor on that non-decreasing array (no engine call).
    """
    f = np.asarray(floors, dtype=float)
    same = np.isclose(f, dep.floor, rtol=1e-12, atol=0.0)
    if dep.ordered is None:
        return np.where(same, -1, 0), same
    run_max = np.maximum.accumulate(dep.ordered["speed"].to_numpy())
    i = np.searchsorted(run_max, f * (1.0 - 1e-12), side="left")
    reached = same | (i < len(run_max))
    return np.where(same, -1, np.where(i < len(run_max), i, 0)), reached


def evaluate_scenarios(catalog: Catalog, dep: _Deployment, values: pl.DataFrame, assumptions: Assumptions,
                       economics: Economics) -> pl.DataFrame:
    """Every scenario of ``values`` on its deployment, in ONE engine call.

    A scenario with the point's speed floor keeps the point's deployment (an economics assumption changes the
    $/GPU-hour, not the ranking among deployments of one accelerator); one with another floor takes the deployment
    the one search's rule picks for it (:func:`pick`). A cache-hit rate other than the point's keeps the deployment
    of the scenario's floor and lets the engine size its xPyD pools for the prefill work left (the rule the search
    sized them by; an aggregated deployment is unchanged).

    Parameters
    ----------
    values : pl.DataFrame
        One row per scenario: the economics columns it sets (``_ECONOMICS_IN_FRAME``), ``all_in_capex_usd``
        (owned tier) and ``min_tokens_per_s_per_user`` (its speed floor).

    Returns
    -------
    pl.DataFrame, one row per scenario (in order): the engine columns ``_RESULT`` of its deployment, the deployment
    keys, and ``reachable`` (False: no point of the search meets its floor, or the engine finds the row
    infeasible; the answer is then left out).
    """
    n = values.height
    idx, reached = pick(dep, values["min_tokens_per_s_per_user"].to_numpy())
    point = pl.DataFrame([dep.point], schema=_keys_frame(pl.DataFrame([dep.point])).schema)
    keys = point[[0] * n] if dep.ordered is None else pl.concat([point, dep.ordered.drop("speed")],
                                                                 how="vertical_relaxed")[
        (np.where(reached, idx, -1) + 1).tolist()]
    if "cache_hit_frac" in values.columns:  # another prefill load: the engine sizes the pools (x, y) again
        other = pl.Series(~np.isclose(values["cache_hit_frac"].to_numpy(), dep.cache_hit_frac, rtol=0.0, atol=1e-12))
        keys = keys.with_columns(pl.when(other).then(None).otherwise(pl.col(k)).alias(k)
                                 for k in ("prefill_instances", "decode_instances"))
    econ_cols = [c for c in (*_ECONOMICS_IN_FRAME, *((CAPEX,) if dep.engine_capex else ())) if c in values.columns]
    shared = pl.DataFrame({k: [v] * n for k, v in dep.columns.items()})
    rows = pl.concat([shared, keys, values.select(econ_cols)], how="horizontal")
    res = evaluate(rows, catalog, assumptions, economics, strict=False, columns=_RESULT)
    ok = reached & res["feasible"].to_numpy()
    return res.with_columns(keys.select(*_LAYOUT[1:], "disaggregated", *_POOLS, "spec_draft_tokens",
                                        "spec_acceptance"), reachable=pl.Series(ok))


# ----------------------------------------------------------------------------------------------------
# Tornado and Monte Carlo from per-scenario answers
# ----------------------------------------------------------------------------------------------------

def _label(name: str, r: SensitivityRange | None) -> tuple[str, str]:
    if name == EFFICIENCY_BAND:
        return "Efficiency (calibration band)", "x throughput"
    if r is not None and r.label:
        return r.label, "USD" if name == CAPEX else FIELDS[name].unit
    f = FIELDS[name]
    return f.label, f.unit


def tornado_frame(labels: list[tuple], answers: np.ndarray, values: pl.DataFrame,
                  ranges: dict[str, SensitivityRange], band: tuple[float, float] | None) -> pl.DataFrame:
    """The tornado: one bar per assumption (and the calibration band), largest swing first.

    Parameters
    ----------
    labels, values : :func:`scenario_values`'s output
    answers : float array, the answer of each scenario (NaN: not reachable)
    ranges : the ranges used
    band : (answer at the band's low end, at its high end, throughput multiplier at each end) of the point, or
        None without a calibrated profile

    Returns
    -------
    pl.DataFrame with :data:`TORNADO_COLUMNS`.
    """
    rows = []
    idx = {lab: i for i, lab in enumerate(labels)}
    for name, r in ranges.items():
        i_lo, i_hi = idx[(name, "low")], idx[(name, "high")]
        a_lo, a_hi = float(answers[i_lo]), float(answers[i_hi])
        label, unit = _label(name, r)
        swing = abs(a_hi - a_lo) if math.isfinite(a_lo) and math.isfinite(a_hi) else None
        if swing is not None and swing <= 1e-12 * max(abs(a_lo), abs(a_hi)):
            swing = 0.0  # rounding of an answer the assumption does not move
        rows.append(dict(assumption=name, label=label, unit=unit, value=float(values[name][0]),
                         low=float(values[name][i_lo]), high=float(values[name][i_hi]), answer_at_low=a_lo,
                         answer_at_high=a_hi, swing=swing, source=r.source))
    if band is not None and all(math.isfinite(x) for x in band[:2]):
        label, unit = _label(EFFICIENCY_BAND, None)
        rows.append(dict(assumption=EFFICIENCY_BAND, label=label, unit=unit, value=1.0, low=band[2], high=band[3],
                         answer_at_low=band[0], answer_at_high=band[1], swing=abs(band[1] - band[0]),
                         source=EFFICIENCY_BAND_SOURCE))
    schema = {"assumption": pl.String, "label": pl.String, "unit": pl.String, "value": pl.Float64,
              "low": pl.Float64, "high": pl.Float64, "answer_at_low": pl.Float64, "answer_at_high": pl.Float64,
              "swing": pl.Float64, "source": pl.String}
    frame = pl.DataFrame(rows, schema=schema).with_columns(
        pl.col("answer_at_low", "answer_at_high").fill_nan(None))
    frame = frame.sort(pl.col("swing").is_null(), pl.col("swing"), descending=[False, True], nulls_last=True)
    return frame.with_columns(rank=pl.int_range(1, frame.height + 1, dtype=pl.Int64)).select(TORNADO_COLUMNS)


def percentiles(values: np.ndarray) -> pl.DataFrame:
    """:data:`PERCENTILES` of the finite ``values`` (``inf`` payback counts as the largest value; NaN is left out).

    Returns
    -------
    pl.DataFrame: ``percentile`` [%], ``value`` (null when every sample is NaN or the percentile is infinite).
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return pl.DataFrame({"percentile": list(PERCENTILES), "value": [None] * len(PERCENTILES)},
                            schema={"percentile": pl.Float64, "value": pl.Float64})
    q = np.percentile(v, PERCENTILES, method="linear") if np.isfinite(v).all() else \
        np.percentile(np.where(np.isfinite(v), v, np.finfo(float).max), PERCENTILES, method="inverted_cdf")
    q = [None if not np.isfinite(x) or x >= np.finfo(float).max else float(x) for x in q]
    return pl.DataFrame({"percentile": list(PERCENTILES), "value": q},
                        schema={"percentile": pl.Float64, "value": pl.Float64})


def _check_samples(samples: int, seed: int) -> None:
    require_integer("samples", samples, 0, MAX_SAMPLES, "samples")
    require_integer("seed", seed, 0, 2 ** 63 - 1)


def _assumption_names(names, economics: Economics) -> tuple[tuple[str, ...], list[str]]:
    """The assumptions that enter the answer on its cost tier, and a note for those left out."""
    if tier(economics.basis) is Tier.OWNED:
        return tuple(names), []
    kept = tuple(n for n in names if n not in OWNED_ONLY)
    left = [n for n in names if n in OWNED_ONLY]
    note = (f"the {economics.basis} tier is a rate per GPU-hour: {', '.join(left)} enter only the owned cost chain, "
            f"so they are not varied")
    return kept, [note] if left else []


def _run(catalog: Catalog, dep: _Deployment, point: dict, ranges: dict, assumptions: Assumptions,
         economics: Economics, answer_of, samples: int, seed: int):
    """Tornado scenarios and Monte Carlo samples of one answer: two engine calls (the scenarios, the samples).

    ``answer_of(chosen, values, efficiency_log_ratio)`` -> float array: the answer of each scenario from its
    engine row, its assumption values and its ln(measured / predicted) throughput (0 = the model's prediction).
    Returns (tornado, point value, band answers, monte-carlo frame, unreachable share, p10/p90 of the band).
    """
    labels, values = scenario_values(point, ranges)
    chosen = evaluate_scenarios(catalog, dep, values, assumptions, economics)
    answers = answer_of(chosen, values, np.zeros(values.height))
    answers = np.where(chosen["reachable"].to_numpy(), answers, np.nan)
    row = chosen.row(0, named=True)
    lo_col, hi_col = "output_tokens_per_s_per_gpu_low", "output_tokens_per_s_per_gpu_high"
    tput = row["output_tokens_per_s_per_gpu"]
    p10 = math.log(row[lo_col] / tput) if row[lo_col] and tput else math.nan
    p90 = math.log(row[hi_col] / tput) if row[hi_col] and tput else math.nan
    band = None
    if math.isfinite(p10) and math.isfinite(p90):
        at = answer_of(chosen.head(1).vstack(chosen.head(1)), values.head(1).vstack(values.head(1)),
                       np.array([p10, p90]))
        band = (float(at[0]), float(at[1]), math.exp(p10), math.exp(p90))
    tornado = tornado_frame(labels, answers, values, ranges, band)
    mc, unreachable = pl.DataFrame(schema={"percentile": pl.Float64, "value": pl.Float64}), 0.0
    if samples:
        rng = np.random.default_rng(seed)
        drawn = draw(point, ranges, samples, rng)
        eff = efficiency_draws(p10, p90, samples, rng)
        got = evaluate_scenarios(catalog, dep, drawn, assumptions, economics)
        reach = got["reachable"].to_numpy()
        vals = np.where(reach, answer_of(got, drawn, eff), np.nan)
        unreachable = float(1.0 - reach.mean())
        mc = percentiles(vals)
    return tornado, float(answers[0]), mc, unreachable


def _point_economics(economics: Economics) -> dict[str, float]:
    return {k: float(getattr(economics, k)) for k in _ECONOMICS_IN_FRAME}


# ----------------------------------------------------------------------------------------------------
# The three answers
# ----------------------------------------------------------------------------------------------------

def cost_sensitivity(catalog: Catalog, *, model: str, hardware: str, precision: str = "fp8",
                     metric: str = "output", input_len: int = 1024, output_len: int = 1024,
                     min_tokens_per_s_per_user: float | None = None, assumptions: Assumptions = DEFAULT,
                     economics: Economics = Economics(), ranges: dict | None = None,
                     samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> Sensitivity:
    """How the $/M tokens of a deployment moves with its assumptions.

    Parameters
    ----------
    catalog : Catalog
    model, hardware : catalog ids; precision : bf16|fp8|fp4
    metric : {"output", "input", "blended"}
        Which $/M (:data:`COST_METRICS`).
    input_len, output_len : [tokens]
    min_tokens_per_s_per_user : float, optional
        The speed floor (default: the vocabulary's, MLPerf v5.0 interactive). [tokens/s]
    assumptions, economics : the point's (economics' cost tier decides which assumptions enter: :data:`OWNED_ONLY`)
    ranges : dict name -> (low, high), optional
        Replace a sourced range (checked: low <= high, inside the field's range).
    samples : int in [0, 20,000]
        Monte Carlo samples (0: tornado only).
    seed : int >= 0

    Returns
    -------
    Sensitivity, ``metric`` the engine column [USD/M tokens].

    Raises
    ------
    InvalidInputError, UnknownIdError, DoesNotFitError
        As ``econ cost`` for the deployment; a bad range, metric, sample count or seed (named).

    Notes
    -----
    The point is ``econ cost``'s automatic answer (:func:`econ.analyses.compare.auto_batch_row`: the cheapest all-in
    deployment of the one search meeting the floor, possibly disaggregated); a scenario with the point's floor keeps
    that deployment, one with another floor takes the cheapest all-in point of the same search
    (:func:`econ.analyses.sweep.deployment_search`) whose served speed meets it.
    """
    from econ.analyses.compare import auto_batch_row
    from econ.analyses.sweep import deployment_search

    if metric not in COST_METRICS:
        raise InvalidInputError(f"metric={metric!r} is not one of {list(COST_METRICS)}")
    _check_samples(samples, seed)
    floor = FIELDS["min_tokens_per_s_per_user"].default if min_tokens_per_s_per_user is None \
        else float(FIELDS["min_tokens_per_s_per_user"].check(min_tokens_per_s_per_user))
    row, _ = auto_batch_row(catalog, model=model, hardware=hardware, precision=precision, input_len=input_len,
                            output_len=output_len, min_tokens_per_s_per_user=floor, assumptions=assumptions,
                            economics=economics)
    r = row.row(0, named=True)
    if not r["feasible"]:
        raise InvalidInputError(f"{model} on {hardware} ({precision}) has no feasible deployment: "
                                f"{r['infeasible_reason']}")
    cols = dict(model=model, hardware=hardware, input_len=input_len, output_len=output_len)
    names, notes = _assumption_names(COST_ASSUMPTIONS, economics)
    rng_ = ranges_for(names, ranges)
    points = None
    if "min_tokens_per_s_per_user" in rng_:  # the one search econ cost picked from: other floors re-pick from it
        points = deployment_search(catalog, model=model, hardware=hardware, precision=precision, input_len=input_len,
                                   output_len=output_len, assumptions=assumptions, economics=economics,
                                   min_tokens_per_s_per_user=floor).points
    dep = _deployment(cols, r, floor, economics.cache_hit_frac, points, cost="usd_per_m_output_tokens_all_in",
                      speed="tokens_per_s_per_user")
    hw = catalog.accelerator(hardware)
    point = {**_point_economics(economics), "min_tokens_per_s_per_user": floor}
    if CAPEX in rng_:
        point[CAPEX] = float(hw["all_in_capex_usd"])
    col = COST_METRICS[metric]

    def answer_of(chosen, values, log_ratio):
        return chosen[col].fill_null(np.nan).to_numpy() / np.exp(log_ratio)

    tornado, point_value, mc, unreachable = _run(catalog, dep, point, rng_, assumptions, economics, answer_of,
                                                 samples, seed)
    if metric == "output":
        notes.append("the cache-hit rate moves prefill only: the output $/M (decode) moves only through the prefill "
                     "chunks an aggregated deployment interleaves with its decode steps, not at all when disaggregated")
    setup = dict(model=model, hardware=hardware, precision=precision, layout=r["layout"], batch_size=int(r["batch_size"]),
                 input_len=input_len, output_len=output_len, min_tokens_per_s_per_user=floor,
                 basis=economics.basis, metric=metric)
    return Sensitivity("cost", col, "USD/M tokens", point_value, tornado, mc, samples, seed, unreachable, setup,
                       tuple(notes))


def quote_sensitivity(catalog: Catalog, quotes: pl.DataFrame, quote_id: str, *, assumptions: Assumptions = DEFAULT,
                      economics: Economics = Economics(), min_tokens_per_s_per_user: float | None = None,
                      output_len: int = 1024, ranges: dict | None = None, samples: int = DEFAULT_SAMPLES,
                      seed: int = DEFAULT_SEED, decoding=None) -> Sensitivity:
    """How a quote's blended gross margin against its floor moves with the assumptions.

    Parameters
    ----------
    catalog : Catalog
    quotes : pl.DataFrame
        Validated quotes (:func:`econ.tables.quote_files.load_quotes`).
    quote_id : str
    min_tokens_per_s_per_user : float, optional
        Speed floor of a quote that publishes none (the check's default otherwise). [tokens/s]
    output_len : int [tokens], as :func:`econ.analyses.quotes.check_quotes`
    decoding : econ.assumptions.Decoding, optional
        The check's formats and speculative decoding (:func:`econ.analyses.quotes.check_quotes`; default automatic):
        the floor deployment keeps its KV-cache format and speculation in every scenario.
    other parameters : as :func:`cost_sensitivity`

    Returns
    -------
    Sensitivity, ``metric`` = ``margin_blended_frac`` (1 - floor / price, blended at the mix and cache-hit rate).

    Raises
    ------
    InvalidInputError
        An unknown quote id, a quote without a GPU floor (not GPU-comparable, no accelerator meets its speed), or
        the errors of :func:`cost_sensitivity`.

    Notes
    -----
    The point is the check's floor deployment (:func:`econ.analyses.quotes.check_quotes`: accelerator, precision,
    formats, layout, batch); a scenario with the quote's floor keeps it, one with another floor takes the cheapest
    blended point whose decode speed meets it in the one search (:func:`econ.analyses.optimize.search`, aggregated,
    on the floor's accelerator and precision; evaluated with the quote's weight formats). The quote's blended
    price follows the cache-hit rate as the check blends it.
    """
    from econ.analyses.quotes import check_quotes
    from econ.economics.margins import gross_margin_frac
    from econ.economics.pricing import usd_per_m_blended_tokens

    _check_samples(samples, seed)
    q = quotes.filter(pl.col("quote_id") == str(quote_id))
    if q.height == 0:
        import difflib
        close = difflib.get_close_matches(str(quote_id), quotes["quote_id"].to_list(), n=3, cutoff=0.3)
        raise InvalidInputError(f"quote_id={quote_id!r} is not in the quotes" +
                                (f" (closest: {', '.join(close)})" if close else ""))
    kw = {} if min_tokens_per_s_per_user is None else {"min_tokens_per_s_per_user": float(min_tokens_per_s_per_user)}
    if decoding is not None:
        kw["decoding"] = decoding
    check = check_quotes(q, catalog, assumptions, economics, output_len=output_len, **kw)
    s = check.summary.row(0, named=True)
    if s["floor_hardware"] is None or s["floor_usd_per_m_blended_tokens"] is None:
        raise InvalidInputError(f"quote {quote_id} has no GPU floor ({s['verdict']}): nothing to vary")
    qr = q.row(0, named=True)
    price_in, price_out = qr["usd_per_m_input_tokens"], qr["usd_per_m_output_tokens"]
    cached = qr.get("usd_per_m_cached_input_tokens")
    cached_frac = (cached if cached is not None else price_in) / price_in if price_in else 1.0
    mix = economics.input_output_mix
    input_len = int(check.settings.get("input_len_tokens", max(1, round(mix * output_len))))
    floor = float(s["speed_floor_tokens_per_s_per_user"])
    cols = dict(model=s["model"], hardware=s["floor_hardware"], input_len=input_len, output_len=output_len)
    for k in ("weight_format", "expert_weight_format"):
        if s.get(f"floor_{k}") is not None:
            cols[k] = s[f"floor_{k}"]
    if decoding is not None and decoding.kv_precision is not None:  # the check's KV-cache format
        cols["kv_precision"] = decoding.kv_precision
    batch = int(s["floor_batch_size"])
    floor_row = {"precision": s["floor_precision"], **{k: s[f"floor_{k}"] for k in _LAYOUT}, "batch_size": batch,
                 "disaggregated": False}  # the floor search serves aggregated
    d = decoding
    if d is not None and any(getattr(d, k) is not None for k in ("spec_method", "spec_draft_tokens",
                                                                  "spec_acceptance")):
        from econ.analyses.quotes import EAGLE_ACCEPTANCE, EAGLE_DRAFT_TOKENS
        eagle = s["floor_spec_method"] == "eagle" and d.spec_method is None  # the search's head, as the check set it
        spec = dict(spec_method=s["floor_spec_method"] or "none",
                    spec_draft_tokens=EAGLE_DRAFT_TOKENS if eagle and d.spec_draft_tokens is None else d.spec_draft_tokens,
                    spec_acceptance=EAGLE_ACCEPTANCE if eagle and d.spec_acceptance is None else d.spec_acceptance)
        floor_row.update({k: v for k, v in spec.items() if v is not None})
        if d.spec_draft_model is not None:
            cols["spec_draft_model"] = d.spec_draft_model
    elif s["floor_spec_method"] == "eagle":  # the floor's EAGLE-3 head (econ.analyses.quotes), kept by its scenarios
        from econ.analyses.quotes import EAGLE_ACCEPTANCE, EAGLE_DRAFT_TOKENS
        floor_row.update(spec_method="eagle", spec_draft_tokens=EAGLE_DRAFT_TOKENS, spec_acceptance=EAGLE_ACCEPTANCE)
    names, notes = _assumption_names(COST_ASSUMPTIONS, economics)
    if s["speed_floor_source"] == "quote":
        names = tuple(n for n in names if n != "min_tokens_per_s_per_user")
        notes.append(f"the quote publishes its speed ({floor:g} tokens/s per user): the floor is not varied")
    rng_ = ranges_for(names, ranges)
    points = None
    if "min_tokens_per_s_per_user" in rng_:  # other floors: the one search on the floor's accelerator and precision
        from econ.analyses.optimize import SLO, SearchSpace, search
        points = search(catalog, model=s["model"], hardware=[s["floor_hardware"]], input_len=input_len,
                        output_len=output_len, slo=SLO(min_tokens_per_s_per_user=floor),
                        space=SearchSpace(precisions=(s["floor_precision"],), modes=("aggregated",)),
                        assumptions=assumptions, economics=economics).points
    if points is not None and floor_row.get("spec_method") == "eagle":
        notes.append("the floor runs an EAGLE-3 head; scenarios with another speed floor re-pick from the one search, "
                     "which decodes as the model does by default: a floor only speculation reaches is left out")
    dep = _deployment(cols, floor_row, floor, economics.cache_hit_frac, points, cost="usd_per_m_blended_tokens",
                      speed="decode_tokens_per_s_per_user")
    point = {**_point_economics(economics), "min_tokens_per_s_per_user": floor}
    if CAPEX in rng_:
        point[CAPEX] = float(catalog.accelerator(cols["hardware"])["all_in_capex_usd"])

    def answer_of(chosen, values, log_ratio):
        cost = chosen["usd_per_m_blended_tokens"].fill_null(np.nan).to_numpy() / np.exp(log_ratio)
        price = usd_per_m_blended_tokens(price_in, price_out, mix, values["cache_hit_frac"].to_numpy(), cached_frac)
        return gross_margin_frac(price, cost)

    tornado, point_value, mc, unreachable = _run(catalog, dep, point, rng_, assumptions, economics, answer_of,
                                                 samples, seed)
    if not math.isclose(point_value, s["margin_blended_frac"], rel_tol=1e-6, abs_tol=1e-9):
        notes.append(f"the floor re-evaluated on its deployment gives a margin of {point_value:.4f} against the "
                     f"check's {s['margin_blended_frac']:.4f}")
    setup = dict(quote_id=str(quote_id), provider=s["provider"], model=s["model"], hardware=s["floor_hardware"],
                 precision=s["floor_precision"], layout=s["floor_layout"], batch_size=batch,
                 min_tokens_per_s_per_user=floor, price_usd_per_m_blended_tokens=s["price_usd_per_m_blended_tokens"],
                 basis=economics.basis)
    return Sensitivity("quote", "margin_blended_frac", "", point_value, tornado, mc, samples, seed, unreachable,
                       setup, tuple(notes))


def site_sensitivity(catalog: Catalog, *, hardware: str, model: str, power_w: float | None = None,
                     capex_usd: float | None = None, power_of: str = "facility", power_basis="all-in", prices=None,
                     price_usd_per_m_output_tokens: float | None = None,
                     price_usd_per_m_input_tokens: float | None = None, cached_price_frac: float | None = None,
                     demand_share_frac: float = 1.0, min_tokens_per_s_per_user: float | None = None,
                     economics: Economics = Economics(), input_len: int = 1024, output_len: int = 1024,
                     ranges: dict | None = None, samples: int = DEFAULT_SAMPLES,
                     seed: int = DEFAULT_SEED) -> Sensitivity:
    """How the simple payback of a site that serves ``model`` moves with the assumptions.

    Parameters
    ----------
    catalog : Catalog
    hardware, model : catalog ids
    power_w, capex_usd : float
        The site's budget, one of them (:func:`econ.analyses.cluster.cluster_plan`). [W], [USD]
    power_of : {"facility", "it"}
        Whether ``power_w`` is the facility's grid draw or its IT load.
    power_basis : {"tdp", "all-in"} or float
        Per-GPU power of the site (:func:`econ.analyses.cluster.power_w_per_gpu`).
    prices : econ.analyses.cluster.BuildoutPrices, optional
        Build-out unit prices (default: the catalog's for ``hardware``).
    price_usd_per_m_output_tokens, price_usd_per_m_input_tokens : float, optional
        Selling prices (the vocabulary's defaults otherwise). [USD/M tokens]
    cached_price_frac : float in [0, 1], optional
        A cache hit's price as a share of the input price (the vocabulary's default otherwise). [-]
    demand_share_frac : float in (0, 1]
        Share of the tokens the site can serve at its utilization that are sold. [-]
    min_tokens_per_s_per_user : float, optional [tokens/s]
    economics : Economics, the point's power price, PUE, utilization and opex share
    other parameters : as :func:`cost_sensitivity`

    Returns
    -------
    Sensitivity, ``metric`` = ``payback_years`` [years] (``inf``: the yearly margin is not positive).

    Raises
    ------
    InvalidInputError
        A demand share outside (0, 1] (named, with its range), a site no deployment of which meets the floor, or
        the errors of :func:`econ.analyses.cluster.cluster_plan`.

    Notes
    -----
    Payback = capex / (revenue - opex) (:func:`econ.economics.buildout.payback_years`), with revenue = GPUs serving
    x output tokens/s per GPU x utilization x 86,400 s x 365 x demand share x the price per output token of a request
    / 1e6 (:func:`econ.economics.buildout.usd_per_m_output_tokens_sold`: output price + input_len / output_len input
    tokens at the input price, cache hits at the cached price), as :func:`econ.analyses.cluster.cluster_plan` counts
    it; opex = energy (IT power x PUE at the utilization, x $/kWh) + the opex share of IT capex, capex = IT capex (x
    the capex range) + facility. The selling-price range multiplies both prices. The GPU count and the IT power are
    the point's.
    """
    from econ.analyses.cluster import cluster_plan
    from econ.analyses.compare import hardware_comparison
    from econ.economics.buildout import (annual_energy_cost_usd, annual_energy_kwh, payback_years,
                                         revenue_per_year_usd, usd_per_m_output_tokens_sold)
    from econ.physics.fleet import serving_tokens_per_day
    _check_samples(samples, seed)
    share = float(FIELDS["demand_share_frac"].check(demand_share_frac))
    price = FIELDS["price_usd_per_m_output_tokens"].default if price_usd_per_m_output_tokens is None \
        else float(FIELDS["price_usd_per_m_output_tokens"].check(price_usd_per_m_output_tokens))
    floor = FIELDS["min_tokens_per_s_per_user"].default if min_tokens_per_s_per_user is None \
        else float(FIELDS["min_tokens_per_s_per_user"].check(min_tokens_per_s_per_user))
    e = economics
    site = cluster_plan(catalog, hardware=hardware, power_w=power_w, capex_usd=capex_usd, power_of=power_of,
                        model=model, economics=e, power_basis=power_basis, it_prices=prices,
                        price_usd_per_m_output_tokens=price, price_usd_per_m_input_tokens=price_usd_per_m_input_tokens,
                        cached_price_frac=cached_price_frac, demand_share_frac=share,
                        min_tokens_per_s_per_user=floor, input_len=input_len, output_len=output_len).row(0, named=True)
    per_m = usd_per_m_output_tokens_sold(price, site["price_usd_per_m_input_tokens"], input_len / output_len,
                                         e.cache_hit_frac, site["cached_price_frac"])
    comp = hardware_comparison(catalog, model=model, hardware=[hardware], min_tokens_per_s_per_user=floor,
                               input_len=input_len, output_len=output_len, assumptions=DEFAULT, economics=e)
    rate = comp.best.row(0, named=True)  # serving_rate's deployment: the cheapest all-in point of the one search
    if not rate["meets_slo"]:
        raise InvalidInputError(f"no deployment of {model} on {hardware} meets {floor:g} tokens/s per user: the site "
                                f"serves nothing ({rate['status']})")
    gpus = int(site["num_gpus"])
    serving = int(site["serving_replicas"]) * int(site["serving_gpus_per_replica"])
    cols = dict(model=model, hardware=hardware, input_len=input_len, output_len=output_len)
    batch = int(rate["batch_size"])
    dep = _deployment(cols, rate, floor, e.cache_hit_frac, comp.points, cost="usd_per_m_output_tokens_all_in",
                      speed="tokens_per_s_per_user", engine_capex=False)
    rng_ = ranges_for(SITE_ASSUMPTIONS, ranges)
    capex_it, capex_fac = float(site["capex_accelerators_usd"]), float(site["capex_facility_usd"])
    it_w = float(site["it_power_mw"]) * 1e6
    point = {**_point_economics(e), "min_tokens_per_s_per_user": floor, CAPEX: capex_it,
             "price_usd_per_m_output_tokens": price}

    def answer_of(chosen, values, log_ratio):
        v = {k: values[k].to_numpy() for k in values.columns}
        # over every accelerator of the unit (both pools), as serving_rate and cluster_plan count it
        tput = chosen["served_output_tokens_per_s_per_gpu"].fill_null(np.nan).to_numpy() * np.exp(log_ratio)
        per_replica = chosen["total_gpus"].fill_null(1).to_numpy()  # the whole unit, both pools
        serving_s = gpus // per_replica * per_replica  # whole replicas of the scenario's layout
        tokens = serving_tokens_per_day(serving_s, tput, v["utilization_frac"])
        scale = v["price_usd_per_m_output_tokens"] / price if price > 0 else np.ones(len(tokens))  # both prices
        revenue = revenue_per_year_usd(tokens, per_m * scale) * share
        energy = annual_energy_cost_usd(annual_energy_kwh(it_w * v["pue"], v["utilization_frac"]), v["usd_per_kwh"])
        opex = energy + e.opex_frac_of_capex_per_year * v[CAPEX]
        ok = np.isfinite(revenue)
        years = np.full(len(ok), np.nan)
        years[ok] = payback_years(v[CAPEX][ok] + capex_fac, revenue[ok], opex[ok])
        return years

    tornado, point_value, mc, unreachable = _run(catalog, dep, point, rng_, DEFAULT, e, answer_of, samples, seed)
    notes = ["the site keeps its GPU count and IT power: PUE and capex move its bills, not its size",
             "simple payback is undiscounted: accelerator life and cost of capital do not enter it"]
    if share < 1.0:
        notes.append(f"{share:.0%} of the capacity is sold")
    setup = dict(hardware=hardware, model=model, budget=site["budget"], num_gpus=int(site["num_gpus"]),
                 serving_gpus=serving, precision=rate["precision"], layout=rate["layout"], batch_size=batch,
                 price_usd_per_m_output_tokens=price, price_usd_per_m_input_tokens=site["price_usd_per_m_input_tokens"],
                 demand_share_frac=share, min_tokens_per_s_per_user=floor)
    return Sensitivity("site", "payback_years", "years", point_value, tornado, mc, samples, seed, unreachable, setup,
                       tuple(notes))


def summary_frame(result: Sensitivity) -> pl.DataFrame:
    """The tornado and the Monte Carlo band in one long frame (CSV export): ``section`` ("point", "tornado",
    "monte_carlo"), ``name``, ``low``, ``high``, ``answer_at_low``, ``answer_at_high``, ``swing``, ``value``,
    ``source``."""
    t = result.tornado.select(pl.lit("tornado").alias("section"), pl.col("assumption").alias("name"), "low", "high",
                              "answer_at_low", "answer_at_high", "swing", pl.lit(None, pl.Float64).alias("value"),
                              "source")
    point = pl.DataFrame({"section": ["point"], "name": [result.metric], "value": [result.point]},
                         schema={"section": pl.String, "name": pl.String, "value": pl.Float64})
    mc = result.monte_carlo.select(pl.lit("monte_carlo").alias("section"),
                                   pl.format("p{}", pl.col("percentile").cast(pl.Int64)).alias("name"), "value")
    return pl.concat([point, t, mc], how="diagonal_relaxed").select(
        "section", "name", "low", "high", "answer_at_low", "answer_at_high", "swing", "value", "source")


__all__ = ["ANSWERS", "COST_METRICS", "COST_ASSUMPTIONS", "SITE_ASSUMPTIONS", "OWNED_ONLY", "PERCENTILES",
           "DEFAULT_SAMPLES", "MAX_SAMPLES", "DEFAULT_SEED", "TORNADO_COLUMNS", "Sensitivity", "ranges_for",
           "scenario_values", "draw", "efficiency_draws", "evaluate_scenarios", "tornado_frame", "percentiles",
           "cost_sensitivity", "quote_sensitivity", "site_sensitivity", "summary_frame"]
