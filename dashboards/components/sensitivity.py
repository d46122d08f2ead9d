"""The sensitivity panel of the Cost explorer, Quote checker and Cluster pages (issue 18.5).

A toggle (off by default: the analysis is a few engine calls) opens the tornado of the answer on the page
(:func:`dashboards.charts.tornado_chart`), the Monte Carlo band and the ranges with their sources, from one
:mod:`econ.analyses.sensitivity` call cached per catalog and inputs.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboards import charts
from dashboards.components import chart, memory, safe_text, state, table
from econ.analyses import sensitivity as S
from econ.assumptions import Assumptions, Economics

SAMPLES = 300
"""Monte Carlo samples on a page (the CLI's default is :data:`econ.analyses.sensitivity.DEFAULT_SAMPLES`)."""

_TITLES = {"usd_per_m_output_tokens": ("Cost ($ per M output tokens)", "$,.3f"),
           "usd_per_m_input_tokens": ("Cost ($ per M input tokens)", "$,.3f"),
           "usd_per_m_blended_tokens": ("Cost ($ per M blended tokens)", "$,.3f"),
           "margin_blended_frac": ("Gross margin, blended (%)", ".0%"),
           "payback_years": ("Payback (years)", ",.2f")}


@memory.cached(show_spinner="Moving each assumption across its range ...", max_entries=32, ttl=3600)
def _cost(token: str, model: str, hardware: str, precision: str, input_len: int, output_len: int, floor: float,
          assumptions: Assumptions, economics: Economics, _catalog=None):
    return S.cost_sensitivity(_catalog, model=model, hardware=hardware, precision=precision, input_len=input_len,
                              output_len=output_len, min_tokens_per_s_per_user=floor, assumptions=assumptions,
                              economics=economics, samples=SAMPLES)


@memory.cached(show_spinner="Moving each assumption across its range ...", max_entries=32, ttl=3600)
def _quote(token: str, quotes_key: tuple, quote_id: str, assumptions: Assumptions, economics: Economics,
           floor: float, output_len: int, decoding=None, _quotes=None, _catalog=None):
    return S.quote_sensitivity(_catalog, _quotes, quote_id, assumptions=assumptions, economics=economics,
                               min_tokens_per_s_per_user=floor, output_len=output_len, samples=SAMPLES,
                               decoding=decoding)


@memory.cached(show_spinner="Moving each assumption across its range ...", max_entries=32, ttl=3600)
def _site(token: str, hardware: str, model: str, power_w: float | None, capex_usd: float | None, power_of: str,
          power_basis, price: float, floor: float, economics: Economics, prices_key: tuple, revenue: tuple = (None, 1.0),
          _prices=None, _catalog=None):
    return S.site_sensitivity(_catalog, hardware=hardware, model=model, power_w=power_w, capex_usd=capex_usd,
                              power_of=power_of, power_basis=power_basis, prices=_prices, price_usd_per_m_output_tokens=price,
                              price_usd_per_m_input_tokens=revenue[0], demand_share_frac=revenue[1],
                              min_tokens_per_s_per_user=floor, economics=economics, samples=SAMPLES)


def show(result: S.Sensitivity, *, key: str) -> None:
    """Draw a result: the tornado chart, the Monte Carlo band in words, the ranges and their sources."""
    title, fmt = _TITLES[result.metric]
    mc = dict(result.monte_carlo.select("percentile", "value").iter_rows()) if result.samples else {}
    band = (mc.get(10.0), mc.get(90.0)) if mc else None
    chart.show(charts.tornado_chart, result.tornado, point=result.point, answer_title=title, answer_format=fmt,
               band=band, key=f"{key}.chart")
    if mc:
        cells = ", ".join(f"{int(p)}th {_fmt(result, v)}" for p, v in mc.items())
        st.caption(f"Point {_fmt(result, result.point)}. Monte Carlo over every range and the calibration band at once "
                   f"({result.samples:,} samples, seed {result.seed}): percentiles {cells}"
                   + (f"; {result.unreachable_frac:.0%} of samples reach no batch at their speed floor"
                      if result.unreachable_frac else "") + ".")
    for n in result.notes:
        st.caption(safe_text.md(n[:1].upper() + n[1:] + "."))
    shown = result.tornado.select("rank", "label", "low", "high", "answer_at_low", "answer_at_high", "swing",
                                  "source")
    table.show(shown, key=f"{key}.table", name=f"sensitivity-{result.answer}", widths={"source": "large"})


def _fmt(result: S.Sensitivity, x) -> str:
    if x is None:
        return "–"
    if result.metric == "payback_years":
        return "never" if x == float("inf") else f"{x:,.2f} years"
    if result.metric == "margin_blended_frac":
        return f"{x:.0%}"
    return f"${x:,.3f}"


def _toggle(key: str) -> bool:
    """The panel's on/off switch; kept while a lazy tab that holds it is closed (:func:`state.kept`)."""
    return state.keep(key, st.toggle("What moves this answer (sensitivity)", key=key, value=state.kept(key, False),
                                     help="A tornado over each assumption's sourced range and the calibration band, "
                                          "and a Monte Carlo band over all of them (econ sensitivity on the command "
                                          "line)."))


def cost_panel(cat, token: str, sc, *, key: str) -> None:
    """The Cost explorer's panel: the $/M output tokens of the page's deployment (catalog ``cat``, its cache ``token``)."""
    if not _toggle(f"{key}.on"):
        return
    try:
        result = _cost(token, sc.model, sc.hardware, sc.precision, sc.input_len, sc.output_len,
                       float(sc.min_tokens_per_s_per_user), sc.assumptions(), sc.economics(cat), _catalog=cat)
    except Exception as exc:  # noqa: BLE001 - an EconError (or a deployment that does not fit) is shown, not raised
        st.warning(safe_text.error(exc), icon=":material/warning:")
        return
    show(result, key=key)


def quote_panel(cat, token: str, quotes: pl.DataFrame | None, quote_id: str, assumptions: Assumptions,
                economics: Economics, floor: float, output_len: int, *, key: str, decoding=None) -> None:
    """The Quote checker's panel: the picked quote's blended margin on its floor deployment (``decoding``: the
    check's formats and speculative decoding, :class:`econ.assumptions.Decoding`)."""
    if quotes is None or not _toggle(f"{key}.on"):
        return
    try:
        result = _quote(token, (quotes.height, tuple(quotes["quote_id"].to_list())), quote_id, assumptions,
                        economics, float(floor), int(output_len), decoding, _quotes=quotes.select(
                            [c for c in quotes.columns if c != "quote_set"]), _catalog=cat)
    except Exception as exc:  # noqa: BLE001 - a quote without a GPU floor says so
        st.info(safe_text.error(exc), icon=":material/info:")
        return
    show(result, key=key)


def site_panel(cat, token: str, *, hardware: str, model: str, power_w: float | None, capex_usd: float | None,
               power_of: str, price: float, floor: float, economics: Economics, power_basis="all-in", prices=None,
               revenue: tuple = (None, 1.0), key: str) -> None:
    """The Cluster page's panel: the payback of the budget's site (``revenue``: its input price and demand share)."""
    if not _toggle(f"{key}.on"):
        return
    try:
        import dataclasses
        result = _site(token, hardware, model, power_w, capex_usd, power_of, power_basis, float(price), float(floor),
                       economics, dataclasses.astuple(prices) if prices is not None else (), tuple(revenue),
                       _prices=prices, _catalog=cat)
    except Exception as exc:  # noqa: BLE001
        st.warning(safe_text.error(exc), icon=":material/warning:")
        return
    show(result, key=key)
