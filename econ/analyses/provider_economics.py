"""A provider's daily P&L from its fleet and traffic, side by side with econ's modeled floor for that traffic.

The calculator (:func:`provider_pnl`) is accounting, not physics: a fleet of GPU-hours at a $/GPU-hour serves
input (part of it from a prefix/KV cache) and output tokens at list prices; the day's cost, revenue, gross
margin and cost-profit ratio follow. Its known answer is DeepSeek's own disclosure ("Day 6 - One More Thing:
DeepSeek-V3/R1 Inference System Overview", deepseek-ai/open-infra-index, 2025-03-01;
``data/provider_disclosures.csv``): 226.75 nodes x 8 H800 x 24 h at an assumed $2 per GPU-hour = $87,072/day;
608B input tokens (342B, 56.3%, from the on-disk KV cache) and 168B output tokens; R1 prices $0.14 (cache hit) /
$0.55 (miss) / $2.19 per M -> $562,027/day theoretical revenue and a 545% cost-profit margin.

The modeled side (:func:`modeled_floor_pnl`) prices the same traffic with econ's engine through the quote
checker's floor (:func:`econ.analyses.quotes.check_quotes`): the cheapest deployment on the stated accelerator that
delivers the stated speed per user, at the provider's $/GPU-hour (tier ``custom``), the traffic's
input:output mix and cache-hit rate. Cached input tokens skip prefill (free, as in the engine); the floor's
GPU-hours per day are the modeled cost over the floor's $ per utilized GPU-hour.

Every function is vectorized (scalars or arrays broadcast) except the modeled floor, which is one engine
search per call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from econ.economics.margins import gross_margin_frac
from econ.validate import require_in_range, require_not_above
from econ.presets import DEFAULT_OUTPUT_LEN

HOURS_PER_DAY = 24.0
"""Hours in the accounting day. [h]"""
TOKENS_PER_M = 1e6
"""Tokens in a million (prices are per million tokens). [tokens]"""
MAX_TOKENS_PER_DAY = 1e16
"""Upper bound of a daily token count accepted (DeepSeek served 7.76e11 in the disclosed day). [tokens]"""
MAX_GPU_HOURS_PER_DAY = 1e9
"""Upper bound of a fleet's GPU-hours per day (40 million GPUs). [GPU-hours]"""

PNL_FIELDS: tuple[str, ...] = (
    "gpu_hours_per_day", "usd_per_gpu_hour", "input_tokens_per_day", "cached_input_tokens_per_day",
    "output_tokens_per_day", "cache_hit_frac", "input_output_mix", "cost_usd_per_day", "usd_per_m_tokens",
    "revenue_input_usd_per_day", "revenue_cached_input_usd_per_day", "revenue_output_usd_per_day",
    "revenue_usd_per_day", "profit_usd_per_day", "gross_margin_frac", "cost_profit_margin_frac",
)
"""Keys of :func:`provider_pnl`'s result, in order."""

DEEPSEEK_DAY6 = "deepseek-v3r1-day6"
"""The ``disclosure`` id of DeepSeek's day-6 figures in ``data/provider_disclosures.csv``."""


def provider_pnl(*, gpu_hours_per_day, usd_per_gpu_hour, input_tokens_per_day, output_tokens_per_day,
                 usd_per_m_input_tokens, usd_per_m_output_tokens, cached_input_tokens_per_day=0.0,
                 usd_per_m_cached_input_tokens=None) -> dict[str, np.ndarray]:
    """Daily cost, revenue and margins of a serving fleet.

    Parameters
    ----------
    gpu_hours_per_day : scalar or array, (0, 1e9] [GPU-hours/day]
        GPU-hours paid for in the day (GPUs x 24 for a constant fleet; :func:`gpu_hours_per_day`).
    usd_per_gpu_hour : scalar or array, (0, 1e4] [USD/GPU-hour]
        Cost of one of those GPU-hours (lease rate or all-in TCO).
    input_tokens_per_day : scalar or array, [0, 1e16] [tokens/day]
        Every prompt token, cache hits included.
    output_tokens_per_day : scalar or array, [0, 1e16] [tokens/day]
        Generated tokens (input + output must be > 0).
    usd_per_m_input_tokens, usd_per_m_output_tokens : scalar or array, [0, 1e4] [USD/M tokens]
        List prices of an uncached input token and of an output token.
    cached_input_tokens_per_day : scalar or array, [0, input_tokens_per_day] [tokens/day]
        Input tokens served from the prefix/KV cache.
    usd_per_m_cached_input_tokens : scalar or array, [0, usd_per_m_input_tokens], optional [USD/M tokens]
        Price of a cache-hit input token (default: the uncached price).

    Returns
    -------
    dict of :data:`PNL_FIELDS` -> ndarray (broadcast shape):
    ``cost_usd_per_day`` = GPU-hours x $/GPU-hour; ``usd_per_m_tokens`` = cost per million tokens served
    (input + output); ``revenue_usd_per_day`` = uncached input x its price + cached input x its price + output
    x its price; ``gross_margin_frac`` = (revenue - cost) / revenue (null -> NaN where revenue is 0;
    :func:`econ.economics.margins.gross_margin_frac`); ``cost_profit_margin_frac`` = (revenue - cost) / cost
    (DeepSeek's "cost profit margin"); ``cache_hit_frac`` = cached / input; ``input_output_mix`` = input / output tokens.

    Raises
    ------
    InvalidInputError
        A value out of its range or not finite (named, e.g. ``input_tokens_per_day=-1 is outside ...``),
        more cached than input tokens, a cached price above the uncached one, or no tokens at all.

    Notes
    -----
    Accounting identities; DeepSeek's day-6 disclosure computes its 545% the same way:
    (562,027 - 87,072) / 87,072 = 5.45. Its revenue is *theoretical* (every token at R1 prices).
    """
    from econ.errors import InvalidInputError

    gh = require_in_range("gpu_hours_per_day", gpu_hours_per_day, 0.0, MAX_GPU_HOURS_PER_DAY, "GPU-hours/day",
                          lo_inclusive=False)
    rate = require_in_range("usd_per_gpu_hour", usd_per_gpu_hour, 0.0, 1e4, "USD/GPU-hour", lo_inclusive=False)
    t_in = require_in_range("input_tokens_per_day", input_tokens_per_day, 0.0, MAX_TOKENS_PER_DAY, "tokens/day")
    t_out = require_in_range("output_tokens_per_day", output_tokens_per_day, 0.0, MAX_TOKENS_PER_DAY, "tokens/day")
    t_c = require_in_range("cached_input_tokens_per_day", cached_input_tokens_per_day, 0.0, MAX_TOKENS_PER_DAY,
                           "tokens/day")
    p_in = require_in_range("usd_per_m_input_tokens", usd_per_m_input_tokens, 0.0, 1e4, "USD/M tokens")
    p_out = require_in_range("usd_per_m_output_tokens", usd_per_m_output_tokens, 0.0, 1e4, "USD/M tokens")
    p_c = p_in if usd_per_m_cached_input_tokens is None else require_in_range(
        "usd_per_m_cached_input_tokens", usd_per_m_cached_input_tokens, 0.0, 1e4, "USD/M tokens")
    require_not_above("cached_input_tokens_per_day", t_c, "input_tokens_per_day", t_in,
                      "cache hits are part of the input tokens")
    require_not_above("usd_per_m_cached_input_tokens", p_c, "usd_per_m_input_tokens", p_in, "a cache hit never costs more",
                      word="is above")
    total = t_in + t_out
    if np.any(total <= 0):
        raise InvalidInputError("input_tokens_per_day + output_tokens_per_day must be > 0 (no traffic to price)")
    cost = gh * rate
    rev_in = (t_in - t_c) * p_in / TOKENS_PER_M
    rev_c = t_c * p_c / TOKENS_PER_M
    rev_out = t_out * p_out / TOKENS_PER_M
    revenue = rev_in + rev_c + rev_out
    profit = revenue - cost
    with np.errstate(divide="ignore", invalid="ignore"):
        margin = np.where(revenue > 0, gross_margin_frac(np.where(revenue > 0, revenue, 1.0), cost), np.nan)
        hit = np.where(t_in > 0, t_c / np.where(t_in > 0, t_in, 1.0), 0.0)
        mix = np.where(t_out > 0, t_in / np.where(t_out > 0, t_out, 1.0), np.inf)
    out = dict(gpu_hours_per_day=gh, usd_per_gpu_hour=rate, input_tokens_per_day=t_in,
               cached_input_tokens_per_day=t_c, output_tokens_per_day=t_out, cache_hit_frac=hit,
               input_output_mix=mix, cost_usd_per_day=cost, usd_per_m_tokens=cost / total * TOKENS_PER_M,
               revenue_input_usd_per_day=rev_in, revenue_cached_input_usd_per_day=rev_c,
               revenue_output_usd_per_day=rev_out, revenue_usd_per_day=revenue, profit_usd_per_day=profit,
               gross_margin_frac=margin, cost_profit_margin_frac=profit / cost)
    shape = np.broadcast(*out.values()).shape
    return {k: np.broadcast_to(np.asarray(out[k], dtype=float), shape).copy() for k in PNL_FIELDS}


def gpu_hours_per_day(num_gpus, hours_per_day=HOURS_PER_DAY):
    """GPU-hours a fleet of ``num_gpus`` (average occupancy) pays in a day.

    Parameters
    ----------
    num_gpus : scalar or array, (0, 4e7] [GPUs]
    hours_per_day : scalar or array, (0, 24] [h]

    Returns
    -------
    ndarray [GPU-hours/day] = num_gpus x hours (DeepSeek: 226.75 nodes x 8 x 24 = 43,536).
    """
    n = require_in_range("num_gpus", num_gpus, 0.0, MAX_GPU_HOURS_PER_DAY / HOURS_PER_DAY, "GPUs", lo_inclusive=False)
    h = require_in_range("hours_per_day", hours_per_day, 0.0, HOURS_PER_DAY, "h", lo_inclusive=False)
    return n * h


# --------------------------------------------------------------------------------------------- disclosures

@dataclass(frozen=True)
class Disclosure:
    """A provider's published fleet and traffic, as inputs of :func:`provider_pnl` and the modeled floor.

    Attributes
    ----------
    id, provider, model, hardware, source, as_of : str
    inputs : dict, keyword arguments of :func:`provider_pnl`
    output_tokens_per_s_per_user : float, the stated speed floor per user (the lower bound of a range) [tokens/s]
    weight_format : str, the serving weight format stated (fp8 for DeepSeek's matmuls)
    reported : dict, the provider's own results (``cost_usd_per_day``, ``revenue_usd_per_day``,
        ``cost_profit_margin_frac``) to compare with :func:`provider_pnl`
    """

    id: str
    provider: str
    model: str
    hardware: str
    source: str
    as_of: str
    inputs: dict
    output_tokens_per_s_per_user: float
    weight_format: str | None
    reported: dict

    @property
    def traffic(self) -> dict:
        """The inputs without the fleet (``gpu_hours_per_day``): what :func:`modeled_floor_pnl` prices."""
        return {k: v for k, v in self.inputs.items() if k != "gpu_hours_per_day"}


def load_disclosure(disclosure: str = DEEPSEEK_DAY6, data_dir=None) -> Disclosure:
    """A provider disclosure of ``provider_disclosures.csv`` as P&L inputs.

    Parameters
    ----------
    disclosure : str, the ``disclosure`` id (:data:`DEEPSEEK_DAY6`)
    data_dir : path, optional, a data folder (falls back to the shipped file)

    Returns
    -------
    Disclosure. GPU-hours per day = ``nodes_average`` x ``gpus_per_node`` x 24 (226.75 x 8 x 24 = 43,536 for
    DeepSeek); the per-user speed is the ``low`` bound of ``output_tokens_per_s_per_user`` (20 of "20-22").

    Raises
    ------
    DataError, InvalidInputError
        A malformed table, an unknown disclosure id (with the known ones), or a disclosure without the items a
        P&L needs (named).
    """
    from econ.tables.catalog import DEFAULT_DATA_DIR, PROVIDER_DISCLOSURE_SCHEMA, read_table
    from econ.errors import DataError, EconError, InvalidInputError

    base = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
    path = base / "provider_disclosures.csv"
    if not path.is_file():
        path = DEFAULT_DATA_DIR / "provider_disclosures.csv"
    table = read_table(path, PROVIDER_DISCLOSURE_SCHEMA, "id")
    rows = table.filter(table["disclosure"] == disclosure)
    if rows.height == 0:
        known = sorted(set(table["disclosure"].to_list()))
        raise InvalidInputError(f"disclosure={disclosure!r} is not one of {known} (provider_disclosures.csv)")
    items = {r["item"]: r for r in rows.iter_rows(named=True)}
    need = ("nodes_average", "gpus_per_node", "gpu_lease_usd_per_gpu_hour", "input_tokens_per_day",
            "cached_input_tokens_per_day", "output_tokens_per_day", "price_usd_per_m_input_tokens",
            "price_usd_per_m_cached_input_tokens", "price_usd_per_m_output_tokens", "output_tokens_per_s_per_user")
    missing = [k for k in need if k not in items or items[k]["value"] is None]
    if missing:
        raise InvalidInputError(f"disclosure {disclosure!r} lacks the item(s) {missing} (provider_disclosures.csv)")

    def v(k):
        return float(items[k]["value"])

    speed = items["output_tokens_per_s_per_user"]
    first = rows.row(0, named=True)
    sources = dict(gpu_hours_per_day=("nodes_average", "gpus_per_node"), usd_per_gpu_hour=("gpu_lease_usd_per_gpu_hour",),
                   input_tokens_per_day=("input_tokens_per_day",),
                   cached_input_tokens_per_day=("cached_input_tokens_per_day",),
                   output_tokens_per_day=("output_tokens_per_day",),
                   usd_per_m_input_tokens=("price_usd_per_m_input_tokens",),
                   usd_per_m_cached_input_tokens=("price_usd_per_m_cached_input_tokens",),
                   usd_per_m_output_tokens=("price_usd_per_m_output_tokens",))
    inputs = dict(gpu_hours_per_day=float(gpu_hours_per_day(v("nodes_average") * v("gpus_per_node"))),
                  usd_per_gpu_hour=v("gpu_lease_usd_per_gpu_hour"), input_tokens_per_day=v("input_tokens_per_day"),
                  cached_input_tokens_per_day=v("cached_input_tokens_per_day"),
                  output_tokens_per_day=v("output_tokens_per_day"),
                  usd_per_m_input_tokens=v("price_usd_per_m_input_tokens"),
                  usd_per_m_cached_input_tokens=v("price_usd_per_m_cached_input_tokens"),
                  usd_per_m_output_tokens=v("price_usd_per_m_output_tokens"))
    try:  # the rows obey the P&L's ranges: a bad row is named by file, row and column, never by a flag (issue 21)
        provider_pnl(**inputs)
    except EconError as exc:
        import re
        m = re.match(r"(\w+)=", str(exc))
        rows_of = sources.get(m.group(1) if m else "", ())
        where = ", ".join(f"row {items[k]['id']}" for k in rows_of) or f"disclosure {disclosure}"
        raise DataError(f"{path.name}, {where}, column value: {exc}") from None
    precision_text = (items.get("serving_precision") or {}).get("value_text") or ""
    reported = {k: v(src) for k, src in (("cost_usd_per_day", "cost_usd_per_day"),
                                         ("revenue_usd_per_day", "theoretical_revenue_usd_per_day"),
                                         ("cost_profit_margin_frac", "cost_profit_margin_frac")) if src in items}
    return Disclosure(
        id=disclosure, provider=first["provider"], model=first["model"], hardware=first["hardware"],
        source=first["source"], as_of=first["as_of"],
        inputs=inputs,
        output_tokens_per_s_per_user=float(speed["low"] if speed["low"] is not None else speed["value"]),
        weight_format="fp8" if "fp8" in precision_text.lower() else None,
        reported=reported)


# --------------------------------------------------------------------------------------------- modeled floor

MODELED_FIELDS: tuple[str, ...] = (
    "cost_usd_per_day", "usd_per_m_tokens", "gpu_hours_per_day", "gpus", "revenue_usd_per_day",
    "profit_usd_per_day", "gross_margin_frac", "cost_profit_margin_frac", "cost_usd_per_day_low",
    "cost_usd_per_day_high", "gross_margin_frac_low", "gross_margin_frac_high", "verdict", "floor_layout",
    "floor_num_gpus", "floor_batch_size", "floor_tokens_per_s_per_user", "floor_precision",
    "floor_spec_method", "floor_usd_per_gpu_hour", "floor_usd_per_m_input_tokens", "floor_usd_per_m_output_tokens",
    "reason",
)
"""Keys of :func:`modeled_floor_pnl`'s result."""


def modeled_floor_pnl(catalog, *, model: str, hardware: str, usd_per_gpu_hour: float, input_tokens_per_day: float,
                      output_tokens_per_day: float, usd_per_m_input_tokens: float, usd_per_m_output_tokens: float,
                      cached_input_tokens_per_day: float = 0.0, usd_per_m_cached_input_tokens: float | None = None,
                      min_tokens_per_s_per_user: float = 25.0, weight_format: str | None = None,
                      utilization_frac: float = 1.0, output_len: int = DEFAULT_OUTPUT_LEN, assumptions=None,
                      economics=None, decoding=None) -> dict:
    """econ's modeled floor for a provider's traffic: the cheapest deployment, its daily cost and the margins.

    Parameters
    ----------
    catalog : Catalog
    model, hardware : str, catalog ids (the model served and the accelerator it runs on)
    usd_per_gpu_hour : float, (0, 1e4] [USD per GPU-hour of existence]; the floor's tier is ``custom`` at this rate
    input_tokens_per_day, cached_input_tokens_per_day, output_tokens_per_day : float [tokens/day]
    usd_per_m_input_tokens, usd_per_m_cached_input_tokens, usd_per_m_output_tokens : float [USD/M tokens]
    min_tokens_per_s_per_user : float, (0, 1e5] [tokens/s per user], the speed the floor must deliver
    weight_format : str, optional, the served weight format (default: the quote rule, e.g. the checkpoint's)
    utilization_frac : float, (0.01, 1], share of the paid GPU-hours serving (1: the fleet is sized to its
        load, as DeepSeek's occupancy-based cost is)
    output_len : int [tokens], generated tokens per request (the prompt is input/output x that)
    assumptions : Assumptions, optional; economics : Economics, optional, other economic settings
    decoding : econ.assumptions.Decoding, optional, the floor's expert / KV-cache formats and speculative decoding
        (:func:`econ.analyses.quotes.check_quotes`; default automatic; the weight format is ``weight_format``)

    Returns
    -------
    dict of :data:`MODELED_FIELDS`: the floor's daily cost (uncached input x floor input cost + output x floor
    output cost; cache hits are free, as the engine prices them), cost per million tokens, GPU-hours and GPUs
    it implies (cost / the floor's $ per utilized GPU-hour; / 24 / utilization), the same revenue as
    :func:`provider_pnl`, the margins on it, the cost and margin at the ends of the engine's calibration band
    (``*_low`` / ``*_high``; None when the engine gives no band), and the quote checker's verdict, floor
    deployment and reason (plus ``check``, the whole :class:`econ.analyses.quotes.QuoteCheck`).

    Raises
    ------
    InvalidInputError, UnknownIdError
        Out-of-range values (named) and unknown ids.
    """
    from dataclasses import replace

    from econ.assumptions import DEFAULT, Economics
    from econ.analyses.quotes import check_quotes, single_quote

    pnl = provider_pnl(gpu_hours_per_day=1.0, usd_per_gpu_hour=usd_per_gpu_hour,
                       input_tokens_per_day=input_tokens_per_day, output_tokens_per_day=output_tokens_per_day,
                       cached_input_tokens_per_day=cached_input_tokens_per_day,
                       usd_per_m_input_tokens=usd_per_m_input_tokens, usd_per_m_output_tokens=usd_per_m_output_tokens,
                       usd_per_m_cached_input_tokens=usd_per_m_cached_input_tokens)
    t_in, t_c, t_out = float(input_tokens_per_day), float(cached_input_tokens_per_day), float(output_tokens_per_day)
    if t_out <= 0:
        from econ.errors import InvalidInputError
        raise InvalidInputError("output_tokens_per_day must be > 0 for a modeled floor (the floor serves requests)")
    mix = t_in / t_out
    hit = t_c / t_in if t_in > 0 else 0.0
    base = economics or Economics()
    econ_ = replace(base, basis="custom", usd_per_gpu_hour=float(usd_per_gpu_hour),
                    utilization_frac=float(utilization_frac), input_output_mix=mix, cache_hit_frac=hit)
    p_in = float(usd_per_m_input_tokens)
    quote = single_quote(catalog, model=model, usd_per_m_input_tokens=max(p_in, 1e-9),
                         usd_per_m_output_tokens=max(float(usd_per_m_output_tokens), 1e-9),
                         usd_per_m_cached_input_tokens=usd_per_m_cached_input_tokens,
                         output_tokens_per_s_per_user=min_tokens_per_s_per_user, hardware=hardware,
                         weight_format=weight_format, provider="provider", quote_id="traffic")
    kw = {} if decoding is None else {"decoding": decoding}
    check = check_quotes(quote, catalog, assumptions or DEFAULT, econ_, output_len=output_len, **kw)
    r = check.summary.row(0, named=True)
    revenue = float(pnl["revenue_usd_per_day"])
    c_in, c_out = r["floor_usd_per_m_input_tokens"], r["floor_usd_per_m_output_tokens"]
    lo = hi = m_lo = m_hi = None
    if c_in is None or c_out is None:
        cost = gh = gpus = margin = ratio = None
        per_m = None
    else:
        cost = ((t_in - t_c) * c_in + t_out * c_out) / TOKENS_PER_M
        per_m = cost / (t_in + t_out) * TOKENS_PER_M
        gh = cost / r["floor_usd_per_gpu_hour"]
        gpus = gh / HOURS_PER_DAY / float(utilization_frac)
        margin = gross_margin_frac(revenue, cost) if revenue > 0 else None
        ratio = (revenue - cost) / cost
        b_lo, b_hi = r["floor_usd_per_m_blended_tokens_low"], r["floor_usd_per_m_blended_tokens_high"]
        if b_lo is not None and b_hi is not None:  # the engine's calibration band of the floor (blended x tokens)
            lo, hi = b_lo * (t_in + t_out) / TOKENS_PER_M, b_hi * (t_in + t_out) / TOKENS_PER_M
            if revenue > 0:
                m_lo, m_hi = gross_margin_frac(revenue, hi), gross_margin_frac(revenue, lo)
    return {"cost_usd_per_day": cost, "usd_per_m_tokens": per_m, "gpu_hours_per_day": gh, "gpus": gpus,
            "revenue_usd_per_day": revenue, "profit_usd_per_day": None if cost is None else revenue - cost,
            "gross_margin_frac": margin, "cost_profit_margin_frac": ratio, "cost_usd_per_day_low": lo,
            "cost_usd_per_day_high": hi, "gross_margin_frac_low": m_lo, "gross_margin_frac_high": m_hi,
            "verdict": r["verdict"],
            **{k: r[k] for k in MODELED_FIELDS if k.startswith("floor_")}, "reason": r["reason"],
            "check": check}


def comparison_rows(reported: dict, modeled: dict) -> list[dict]:
    """The provider's P&L and the modeled floor's, metric by metric, for a table.

    Parameters
    ----------
    reported : dict, :func:`provider_pnl` of the provider's figures (scalars or one-element arrays)
    modeled : dict, :func:`modeled_floor_pnl`

    Returns
    -------
    list of dict with ``metric``, ``provider``, ``modeled_floor`` (floats, or text for the deployment rows).
    """
    def s(x):
        if x is None:
            return None
        a = np.asarray(x)
        return a.item() if a.ndim == 0 or a.size == 1 else a

    rows = []
    for key in ("cost_usd_per_day", "usd_per_m_tokens", "gpu_hours_per_day", "revenue_usd_per_day",
                "profit_usd_per_day", "gross_margin_frac", "cost_profit_margin_frac"):
        rows.append({"metric": key, "provider": s(reported.get(key)), "modeled_floor": s(modeled.get(key))})
    return rows


__all__ = ["provider_pnl", "gpu_hours_per_day", "load_disclosure", "Disclosure", "modeled_floor_pnl",
           "comparison_rows", "PNL_FIELDS", "MODELED_FIELDS", "DEEPSEEK_DAY6", "HOURS_PER_DAY"]
