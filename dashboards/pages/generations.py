"""Generations: $/M output tokens by accelerator generation for the scenario's model and speed floor (issue 22.4).

One econ call (:func:`econ.analyses.trend.trend`: the hardware comparison's search on each generation of a vendor's
lineup). Announced parts (``data/roadmap_accelerators.csv``) are projections from vendor datasheets at their
predecessor's $/GPU-hour: drawn as a dashed line and listed in their own table with their status, as-of date,
source and caveat, so nobody mistakes a projection for a measurement.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import charts  # noqa: E402
from dashboards.components import chart, fmt, memory, safe_text, scenario_sidebar, state, table  # noqa: E402
from econ.analyses.trend import DEFAULT_VENDOR, LINEUPS, Trend, trend  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402

TITLE = "Generations"
ICON = ":material/timeline:"
ORDER = 25
SHOWN = ["hardware", "year", "availability", "basis", "usd_per_m_output_tokens_all_in",
         "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high", "cost_vs_first",
         "usd_per_m_uncalibrated", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "precision", "layout",
         "efficiency", "cost_from", "remark", "as_of", "source"]


def named(rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` with ``hardware`` holding the accelerator's short name (catalog and roadmap parts alike, from each
    row's ``display_name``: :func:`econ.formatting.short_accelerator_name`); the downloads keep the ids."""
    return rows.with_columns(hardware=pl.col("display_name").map_elements(
        lambda n: fmt.short_accelerator_name(n, max_chars=24), return_dtype=pl.String, skip_nulls=True)
        .fill_null(pl.col("hardware")))


@memory.cached(max_entries=16, ttl=3600)
def compute(token: str, sc: Scenario, vendor: str, speed: float, _catalog=None) -> Trend:
    """:func:`econ.analyses.trend.trend` for the scenario, cached per catalog + scenario + vendor + speed."""
    cat = _catalog if _catalog is not None else state.catalog()
    return trend(cat, model=sc.model, vendor=vendor, min_tokens_per_s_per_user=speed, input_len=sc.input_len,
                 output_len=sc.output_len, assumptions=sc.assumptions(), economics=sc.economics(cat))


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    st.title("Cost by accelerator generation")
    st.caption(f"{safe_text.md(cat.model(sc.model)['display_name'])}, {sc.input_len:,} input / {sc.output_len:,} "
               "output tokens: the cheapest deployment on each generation whose every user gets the chosen speed. "
               "Announced parts are projections (vendor datasheets, predecessor's $/GPU-hour), drawn dashed.")
    c1, c2 = st.columns([1, 2])
    vendor = c1.selectbox("Vendor lineup", list(LINEUPS), index=list(LINEUPS).index(DEFAULT_VENDOR),
                          format_func=lambda v: {"nvidia": "NVIDIA", "amd": "AMD", "aws": "AWS"}.get(v, v.title()),
                          key="gen.vendor")
    speed = c2.slider("Minimum output tokens/s per user", 0.0, 300.0,
                      value=float(min(300.0, sc.min_tokens_per_s_per_user)), step=1.0, key="gen.speed")
    try:
        t = compute(cat_in_use.token, sc, vendor, speed, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    tab = t.table
    shipped = tab.filter(pl.col("basis") == "catalog")
    projected = tab.filter(pl.col("basis") == "projection")
    c = st.columns(3)
    priced = shipped.filter(pl.col("usd_per_m_output_tokens_all_in").is_not_null())
    if priced.height:
        last = priced.row(-1, named=True)
        c[0].metric(f"Newest priced part: {safe_text.md(fmt.short_accelerator_name(last['display_name']))}", fmt.usd_per_m(last["usd_per_m_output_tokens_all_in"]))
    proj = projected.filter(pl.col("usd_per_m_output_tokens_all_in").is_not_null())
    if proj.height:
        top = proj.row(-1, named=True)
        c[1].metric(f"Projection: {safe_text.md(fmt.short_accelerator_name(top['display_name']))} "
                    f"({top['availability']})",
                    fmt.usd_per_m(top["usd_per_m_output_tokens_all_in"]),
                    help=table.names_in_text(f"cost from {top['cost_from']}; {top['efficiency']}. {top['remark']}",
                                             cat))
    c[2].metric("Generations with an answer", f"{tab['usd_per_m_output_tokens_all_in'].is_not_null().sum()} of "
                f"{tab.height}")
    if tab["usd_per_m_output_tokens_all_in"].is_not_null().any():
        chart.show(charts.trend_chart, tab, key="gen.chart", cache_key=(cat_in_use.token, sc, vendor, speed))
    st.subheader("Priced catalog parts")
    table.show(named(shipped), key="gen.shipped", name=f"generations-{sc.model}", columns=SHOWN, catalog=cat,
               download_frame=shipped.select("hardware", "display_name", *SHOWN[1:]))
    st.subheader("Projections: announced or not yet priced parts (not measurements)")
    st.caption("Physics from the vendor's published datasheet (data/roadmap_accelerators.csv, with status, as-of "
               "date and source); cost columns copied from the priced predecessor in 'Cost taken from' (no vendor "
               "has published a price); efficiencies uncalibrated, scaled by the predecessor's realized share.")
    table.show(named(projected), key="gen.projected", name=f"generations-projected-{sc.model}", columns=SHOWN,
               catalog=cat, download_frame=projected.select("hardware", "display_name", *SHOWN[1:]))


if __name__ == "__main__":
    render()
