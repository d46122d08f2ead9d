"""A price over a cost: gross margin, the break-even accelerator-hour and utilization, and the verdict on a margin.

The quote checker (:func:`econ.analyses.quotes.check_quotes`) and the provider P&L
(:mod:`econ.analyses.provider_economics`) read these; every function broadcasts over scalars and arrays
(and, except :func:`breakeven_utilization_frac`, Polars expressions).

Verdict on a gross margin (issue 4; cloud software gross margins run 60-80%):

==================  =======================================================================
below-floor         margin < 0: the price is under the cost
thin                0 <= margin < :data:`THIN_MARGIN_FRAC` (20%)
plausible           20% <= margin <= :data:`RICH_MARGIN_FRAC` (80%)
rich                margin > 80%
not-gpu-comparable  no margin (null): there is no GPU floor to compare with
==================  =======================================================================
"""

from __future__ import annotations

import numpy as np
import polars as pl

THIN_MARGIN_FRAC = 0.20
"""Gross margin below which a quote is 'thin' (issue 4; cloud software gross margins run 60-80%). [-]"""
RICH_MARGIN_FRAC = 0.80
"""Gross margin above which a quote is 'rich'. [-]"""

MARGIN_VERDICTS: tuple[str, ...] = ("below-floor", "thin", "plausible", "rich")
"""Verdicts on a margin, from worst to best (the order the property tests rely on)."""
NOT_COMPARABLE = "not-gpu-comparable"
"""Verdict of a quote with no GPU floor to compare with (non-GPU hardware, or a speed no accelerator in scope reaches)."""
VERDICTS: tuple[str, ...] = (*MARGIN_VERDICTS, NOT_COMPARABLE)
"""Every verdict of :func:`econ.analyses.quotes.check_quotes`."""


def gross_margin_frac(price_usd_per_m_tokens, cost_usd_per_m_tokens):
    """Implied gross margin of a price over a cost.

    Parameters
    ----------
    price_usd_per_m_tokens : scalar, array or pl.Expr, > 0 [USD/M tokens]
    cost_usd_per_m_tokens : scalar, array or pl.Expr, >= 0 [USD/M tokens]

    Returns
    -------
    same shape [-]: (price - cost) / price; 1 = free to serve, 0 = at cost, < 0 = below cost.
    The same identity holds for any pair of amounts in one unit (revenue and cost per day).
    """
    return (price_usd_per_m_tokens - cost_usd_per_m_tokens) / price_usd_per_m_tokens


def breakeven_usd_per_gpu_hour(usd_per_gpu_hour, price_usd_per_m_tokens, cost_usd_per_m_tokens):
    """Accelerator-hour cost at which a deployment's token cost equals the price.

    Parameters
    ----------
    usd_per_gpu_hour : scalar, array or pl.Expr [USD/h]
        The modeled accelerator-hour cost behind ``cost_usd_per_m_tokens``.
    price_usd_per_m_tokens, cost_usd_per_m_tokens : same shape [USD/M tokens]

    Returns
    -------
    same shape [USD/h]: usd_per_gpu_hour * price / cost. Token cost is linear in the hourly cost at a
    fixed deployment (pricing.usd_per_m_tokens), so the ratio carries over exactly.
    """
    return usd_per_gpu_hour * price_usd_per_m_tokens / cost_usd_per_m_tokens


def breakeven_utilization_frac(fixed_usd_per_gpu_hour_at_full_use, variable_usd_per_gpu_hour,
                               breakeven_usd_per_utilized_gpu_hour):
    """Utilization at which the cost per utilized accelerator-hour falls to a break-even value.

    Parameters
    ----------
    fixed_usd_per_gpu_hour_at_full_use : scalar or array, >= 0 [USD/h]
        Costs paid every hour whether or not the accelerator serves (owned: capex annuity + facility
        + opex, i.e. tco components x utilization; rental: the rate), spread over 8760 h.
    variable_usd_per_gpu_hour : scalar or array, >= 0 [USD/h]
        Costs paid only while serving (owned: power x PUE x price; rental: 0).
    breakeven_usd_per_utilized_gpu_hour : scalar or array, > 0 [USD/h]
        From :func:`breakeven_usd_per_gpu_hour` on the per-utilized-hour cost.

    Returns
    -------
    ndarray [-]: u* = F / (G* - V) (solving F/u + V = G*, tco.gpu_hour_cost_components); ``inf`` where
    G* <= V (the price does not even cover the variable cost). Values above 1 mean no utilization
    breaks even.
    """
    fixed = np.asarray(fixed_usd_per_gpu_hour_at_full_use, dtype=float)
    headroom = np.asarray(breakeven_usd_per_utilized_gpu_hour, dtype=float) - np.asarray(variable_usd_per_gpu_hour, dtype=float)
    positive = headroom > 0
    return np.where(positive, fixed / np.where(positive, headroom, 1.0), np.inf)


def verdict_expr(margin: pl.Expr) -> pl.Expr:
    """Margin -> verdict (:data:`MARGIN_VERDICTS`); a null margin (no floor to compare with) -> not-gpu-comparable.

    Parameters
    ----------
    margin : pl.Expr, Float64 [-]
        A gross margin (:func:`gross_margin_frac`), null where there is nothing to compare with.

    Returns
    -------
    pl.Expr, String: one of :data:`VERDICTS`, by :data:`THIN_MARGIN_FRAC` and :data:`RICH_MARGIN_FRAC`.
    """
    return (pl.when(margin.is_null()).then(pl.lit(NOT_COMPARABLE))
            .when(margin < 0).then(pl.lit(MARGIN_VERDICTS[0]))
            .when(margin < THIN_MARGIN_FRAC).then(pl.lit(MARGIN_VERDICTS[1]))
            .when(margin <= RICH_MARGIN_FRAC).then(pl.lit(MARGIN_VERDICTS[2]))
            .otherwise(pl.lit(MARGIN_VERDICTS[3])))
