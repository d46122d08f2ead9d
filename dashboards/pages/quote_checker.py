"""Quote checker: provider list prices against the modeled cost floor of every catalog accelerator.

Inputs: the shared sidebar (power, finance, utilization, token mix, cost basis, output length), the
speed floor for quotes that publish none, and an optional upload of the analyst's own quotes (CSV or
XLSX, the columns of ``data/quotes.csv``). One econ call (:func:`econ.quotes.check_quotes` over the
catalog quotes and the upload), then the verdict counts, the chart of each quoted price against the
band of modeled floors (cheapest to dearest accelerator), the table with its reasons and downloads,
and the detail of one quote across accelerators.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import charts  # noqa: E402
from dashboards.charts import Col  # noqa: E402
from dashboards.components import chart, safe_text, scenario_sidebar, sources, state, table  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.quotes import (  # noqa: E402
    DEFAULT_MIN_TOKENS_PER_S_PER_USER, MAX_QUOTE_ROWS, QUOTE_SCHEMA, REQUIRED_QUOTE_COLUMNS, VERDICTS, QuoteCheck,
    check_quotes, load_quotes, read_quotes,
)
from econ.scenario import Scenario  # noqa: E402

TITLE = "Quote checker"
ICON = ":material/fact_check:"
ORDER = 40

UPLOAD_PREFIX = "upload-"
# Uploaded quote ids get this prefix, so they never collide with the catalog's.

VERDICT_COLOURS = {"below-floor": charts.OKABE_ITO[5], "thin": charts.OKABE_ITO[1], "plausible": charts.OKABE_ITO[0],
                   "rich": charts.OKABE_ITO[2]}
# Okabe-Ito colours per verdict (vermillion, orange, blue, green).


def _usd_m(t: str) -> Col:
    return Col(t, "$,.3f", "$%.3f")


def _pct(t: str) -> Col:
    return Col(t, ".0%", "%.0f%%", 100.0)


QUOTE_COLUMNS: dict[str, Col] = {  # this page's titles where charts.COLUMNS' general one would mislead
    "price_usd_per_m_output_tokens": _usd_m("Price, output ($ per M tokens)"),
    "batch_size": Col("Batch (sequences)", ",d", "%d"),
    "usd_per_m_input_tokens": _usd_m("Floor cost, input ($ per M tokens)"),
    "usd_per_m_output_tokens": _usd_m("Floor cost, output ($ per M tokens)"),
    "usd_per_m_blended_tokens": _usd_m("Floor cost, blended ($ per M tokens)"),
}
_COLS = {**charts.COLUMNS, **QUOTE_COLUMNS}
# Titles, formats and scales of this page's columns: the shared map (charts.COLUMNS) and its overrides.

TABLE_COLUMNS = ["quote_set", "quote_id", "provider", "model", "verdict", "price_usd_per_m_blended_tokens",
                 "floor_usd_per_m_blended_tokens", "margin_blended_frac", "margin_input_frac", "margin_output_frac",
                 "floor_hardware", "floor_precision", "floor_num_gpus", "floor_batch_size", "floor_binding_wall",
                 "floor_batch_limit", "speed_floor_tokens_per_s_per_user", "breakeven_usd_per_gpu_hour",
                 "breakeven_utilization_frac", "breakeven_batch_size", "reason"]
DETAIL_COLUMNS = ["hardware", "meets_floor", "usd_per_m_blended_tokens", "margin_blended_frac",
                  "usd_per_m_input_tokens", "usd_per_m_output_tokens", "precision", "num_gpus", "tp", "pp",
                  "batch_size", "tokens_per_s_per_user", "binding_wall", "fastest_tokens_per_s_per_user", "note"]


def _title(c: str) -> str:
    return _COLS[c].title if c in _COLS else charts.title(c)


def _tooltip(columns) -> list[alt.Tooltip]:
    out = []
    for c in columns:
        spec = _COLS.get(c)
        fmt = spec.d3 if spec and spec.d3 not in ("d", ",.3~f") else None
        out.append(alt.Tooltip(c, title=_title(c), format=fmt) if fmt else alt.Tooltip(c, title=_title(c)))
    return out


def quote_band_chart(summary: pl.DataFrame, per_hardware: pl.DataFrame, *, width: int = 620) -> alt.LayerChart:
    """Each quote's blended price (a diamond coloured by verdict) against the band of modeled floors.

    Parameters
    ----------
    summary : pl.DataFrame
        :attr:`econ.quotes.QuoteCheck.summary` rows to draw (one per quote), with ``quote_set``.
    per_hardware : pl.DataFrame
        :attr:`econ.quotes.QuoteCheck.per_hardware` rows of the same quotes: one tick per accelerator
        that meets the speed floor.

    Returns
    -------
    alt.LayerChart: a grey bar from the cheapest to the dearest accelerator's floor, grey ticks for each
    accelerator, the price diamond; x is $ per M blended tokens on a log axis, y the quote (sorted by
    model, then price). Quotes no accelerator can serve at their speed have a diamond and no band.
    """
    s = summary.sort("model", "price_usd_per_m_blended_tokens")
    order = s["quote_id"].to_list()
    x_title = "$ per M blended tokens (log scale)"
    x = alt.X("price_usd_per_m_blended_tokens:Q", title=x_title, scale=alt.Scale(type="log"),
              axis=alt.Axis(format="$,.3~f", labelOverlap=True))
    y = alt.Y("quote_id:N", sort=order, title=None, axis=alt.Axis(labelLimit=260, labelOverlap=False))
    band_cols = ["quote_id", "model", "floor_usd_per_m_blended_tokens", "floor_hardware",
                 "band_max_usd_per_m_blended_tokens", "band_max_hardware", "num_hardware_meeting_floor"]
    bands = s.filter(pl.col("floor_usd_per_m_blended_tokens").is_not_null()).select(band_cols)
    band = alt.Chart(bands.to_pandas()).mark_bar(color="#BBBBBB", height=8, opacity=0.7).encode(
        x=alt.X("floor_usd_per_m_blended_tokens:Q", title=x_title, scale=alt.Scale(type="log"),
                axis=alt.Axis(format="$,.3~f", labelOverlap=True, orient="top")),  # tall chart: axis on top too
        x2="band_max_usd_per_m_blended_tokens:Q", y=y, tooltip=_tooltip(band_cols))
    tick_cols = ["quote_id", "hardware", "usd_per_m_blended_tokens", "precision", "num_gpus", "batch_size",
                 "tokens_per_s_per_user", "binding_wall"]
    ticks_df = per_hardware.filter(pl.col("meets_floor") & pl.col("quote_id").is_in(order)).select(tick_cols)
    ticks = alt.Chart(ticks_df.to_pandas()).mark_tick(color="#555555", thickness=1.5, size=12).encode(
        x=alt.X("usd_per_m_blended_tokens:Q", scale=alt.Scale(type="log"), axis=None), y=y,
        tooltip=_tooltip(tick_cols))
    price_cols = ["quote_id", "quote_set", "provider", "model", "verdict", "price_usd_per_m_blended_tokens",
                  "floor_usd_per_m_blended_tokens", "margin_blended_frac", "floor_hardware",
                  "speed_floor_tokens_per_s_per_user"]
    shown = [v for v in VERDICTS if v in set(s["verdict"])]
    price = alt.Chart(s.select(price_cols).to_pandas()).mark_point(shape="diamond", filled=True, size=110,
                                                                    opacity=1.0).encode(
        x=x, y=y,
        color=alt.Color("verdict:N", title=_title("verdict"),
                        scale=alt.Scale(domain=shown, range=[VERDICT_COLOURS[v] for v in shown]),
                        legend=alt.Legend(orient="top")),
        tooltip=_tooltip(price_cols))
    return alt.layer(band, ticks, price).properties(
        width=width, height=max(160, 20 * len(order)),
        title=charts.chart_title("Quoted blended price vs the band of modeled floors",
                                 "Grey: cheapest to dearest accelerator's floor; diamond: the quote"),
    ).resolve_axis(x="independent")  # one shared log scale, its axis at the top (band) and bottom (price)


def quotes_to_check(catalog, *, include_catalog: bool, upload: bytes | None,
                    upload_name: str | None) -> tuple[pl.DataFrame | None, str | None]:
    """The quotes of this run: the catalog's (optionally) plus a validated upload.

    Returns
    -------
    (quotes with a ``quote_set`` column, or None if there are none; the upload's error message or None).
    An upload with any problem is rejected whole (nothing half-processed) and its message returned.
    """
    frames, error = [], None
    if include_catalog:
        frames.append(load_quotes(catalog).with_columns(pl.lit("catalog").alias("quote_set")))
    if upload is not None:
        try:
            mine = read_quotes(upload, catalog, name=upload_name or "uploaded file")
            frames.append(mine.with_columns((pl.lit(UPLOAD_PREFIX) + pl.col("quote_id")).alias("quote_id"),
                                            pl.lit("uploaded").alias("quote_set")))
        except EconError as exc:
            error = str(exc)
    return (pl.concat(frames, how="vertical") if frames else None), error


@st.cache_data(show_spinner="Searching every accelerator for each quote's floor ...", max_entries=16,
               ttl=3600)
def run_check(token: str, sc: Scenario, include_catalog: bool, upload: bytes | None, upload_name: str | None,
              speed: float, _catalog=None) -> tuple[QuoteCheck | None, pl.DataFrame | None, str | None]:
    """One econ call for the page: the quote check and the quote sets. Cached per catalog + inputs."""
    cat = _catalog if _catalog is not None else state.catalog()
    quotes, error = quotes_to_check(cat, include_catalog=include_catalog, upload=upload, upload_name=upload_name)
    if quotes is None:
        return None, None, error
    result = check_quotes(quotes.drop("quote_set"), cat, sc.assumptions(), sc.economics(cat),
                          min_tokens_per_s_per_user=speed, output_len=sc.output_len)
    return result, quotes.select("quote_id", "quote_set"), error


def _column_config(frame: pl.DataFrame) -> dict:
    out = {}
    for c, dt in frame.schema.items():
        spec = _COLS.get(c)
        help_ = f"`{c}` in downloads"
        if dt == pl.Boolean:
            out[c] = st.column_config.CheckboxColumn(_title(c), help=help_)
        elif dt.is_numeric():
            out[c] = st.column_config.NumberColumn(_title(c), format=(spec.table if spec and spec.table
                                                                      else "localized"), help=help_)
        else:
            out[c] = st.column_config.TextColumn(_title(c), help=help_, width="large" if c == "reason" else None)
    return out


def _display(frame: pl.DataFrame) -> pl.DataFrame:
    exprs = [(pl.col(c) * _COLS[c].scale).alias(c) for c in frame.columns
             if c in _COLS and _COLS[c].scale != 1.0]
    return frame.with_columns(exprs) if exprs else frame


def _assumption_rows(cat, sc: Scenario, result: QuoteCheck) -> pl.DataFrame:
    """Every input behind the check, for the XLSX download: efficiencies, economics, floor hardware, settings."""
    from econ import export
    hw = result.summary["floor_hardware"].drop_nulls().unique().sort().to_list()
    return export.cost_assumptions_frame(cat, sc.assumptions(), sc.economics(cat), hardware=hw,
                                         extra=result.settings_rows())


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    st.title("Quote checker")
    econ_ = sc.economics(cat)
    st.caption(
        f"Each quote against the cheapest catalog deployment that serves its model at its published speed (else the "
        f"floor below): {'owned (TCO)' if sc.basis == 'owned' else 'rented'} accelerators at "
        f"${sc.effective_usd_per_kwh(cat):.4f}/kWh, {sc.utilization_frac:.0%} utilization, blended at "
        f"{sc.input_output_mix:g}:1 input:output with a {sc.cache_hit_frac:.0%} prefix-cache hit rate, requests of "
        f"{max(1, round(sc.input_output_mix * sc.output_len)):,} input + {sc.output_len:,} output tokens (input = "
        f"mix x output). Verdicts on the blended gross margin: below-floor < 0 <= thin < 20% <= plausible <= 80% < rich.")
    c1, c2, c3 = st.columns([2, 1, 1])
    upload = c1.file_uploader(
        "Your quotes (CSV or XLSX)", type=["csv", "xlsx"], key="qc.upload",
        help=f"Columns as data/quotes.csv; required: {', '.join(REQUIRED_QUOTE_COLUMNS)}; optional: "
             f"{', '.join(c for c in QUOTE_SCHEMA if c not in REQUIRED_QUOTE_COLUMNS)}. At most {MAX_QUOTE_ROWS:,} "
             f"rows. A file with any problem is rejected whole, with every bad row and column named.")
    include = c2.checkbox("Include the catalog's quotes", value=True, key="qc.include",
                          help="The 116 public list prices of data/quotes.csv (LiteLLM price table and provider pages)")
    speed = c3.number_input(
        "Speed floor (output tokens/s per user)", min_value=1.0, max_value=10_000.0,
        value=DEFAULT_MIN_TOKENS_PER_S_PER_USER, step=5.0, key="qc.speed",
        help="Used for quotes that publish no speed; a quote's own speed always wins. Default 25: MLPerf "
             "Inference v5.0 Llama-2-70B Interactive, TPOT <= 40 ms.")
    data = upload.getvalue() if upload is not None else None
    try:
        result, sets, error = run_check(cat_in_use.token, sc, include, data, upload.name if upload else None,
                                        float(speed), _catalog=cat)
    except EconError as exc:
        st.error(safe_text.md(f"{type(exc).__name__}: {exc}"), icon=":material/error:")
        return
    if error:
        st.error("Your file was not used; fix these problems and upload it again:", icon=":material/error:")
        st.code(error, language=None)
    if result is None:
        st.info("No quotes to check: include the catalog's quotes or upload your own.", icon=":material/info:")
        return
    summary = result.summary.join(sets, on="quote_id", how="left").select(["quote_set", *result.summary.columns])
    per_hw = result.per_hardware

    f1, f2, f3 = st.columns(3)
    models = f1.multiselect("Models", sorted(summary["model"].unique()), key="qc.models", placeholder="All models")
    providers = f2.multiselect("Providers", sorted(summary["provider"].unique()), key="qc.providers",
                               placeholder="All providers")
    verdicts = f3.multiselect("Verdicts", list(VERDICTS), key="qc.verdicts", placeholder="All verdicts")
    view = summary
    if models:
        view = view.filter(pl.col("model").is_in(models))
    if providers:
        view = view.filter(pl.col("provider").is_in(providers))
    if verdicts:
        view = view.filter(pl.col("verdict").is_in(verdicts))
    if view.height == 0:
        st.info("No quote matches the filters.", icon=":material/filter_alt_off:")
        return
    counts = dict(view["verdict"].value_counts().iter_rows())
    m = st.columns(len(VERDICTS))
    for col, v in zip(m, VERDICTS):
        col.metric(v.capitalize(), f"{counts.get(v, 0):,}",
                   help={"below-floor": "No catalog accelerator serves the model at this price and speed",
                         "thin": "Gross margin under 20%", "plausible": "Gross margin 20% to 80%",
                         "rich": "Gross margin over 80%"}[v])
    view_hw = per_hw.filter(pl.col("quote_id").is_in(view["quote_id"].implode()))
    chart.show(quote_band_chart, view, view_hw, key="qc.chart",  # built once per check and filter
               cache_key=(cat_in_use.token, sc, include, data, speed, tuple(models), tuple(providers), tuple(verdicts)))
    st.caption("Grey bar: modeled floor from the cheapest to the dearest accelerator that meets the quote's speed; "
               "grey ticks: each such accelerator; diamond: the quoted blended price. A diamond without a bar: no "
               "catalog accelerator reaches the quote's speed.")

    st.subheader("Verdicts and reasons")
    st.dataframe(_display(view.select(TABLE_COLUMNS)), column_config=_column_config(view.select(TABLE_COLUMNS)),
                 hide_index=True, key="qc.table", placeholder=table.PLACEHOLDER)
    meta = {"scenario": sc.to_query_params(), "speed_floor_default": speed, **cat.as_of_dates()}
    assumptions = _assumption_rows(cat, sc, result)
    st.caption("Downloads: every column of the check for the quotes shown (stored units in the headers), with the "
               "assumptions and sources in the workbook; provider names and notes are neutralized against "
               "spreadsheet formulas.")
    table.downloads(view, key="qc.dl", name="quote-check", assumptions=assumptions, metadata=meta)

    st.subheader("One quote across accelerators")
    pick = st.selectbox("Quote", view["quote_id"].to_list(), key="qc.pick")
    row = view.filter(pl.col("quote_id") == pick).row(0, named=True)
    st.markdown(f"**{row['verdict']}** — {safe_text.md(row['reason'].split(': ', 1)[1])}")  # $ is not LaTeX
    detail = per_hw.filter(pl.col("quote_id") == pick).select(DETAIL_COLUMNS)
    st.dataframe(_display(detail), column_config=_column_config(detail), hide_index=True, key="qc.detail",
                 placeholder=table.PLACEHOLDER)
    table.downloads(view_hw, key="qc.dl_hw", name="quote-floors-by-accelerator", assumptions=assumptions,
                    metadata=meta)
    sources.show(cat, sc.assumptions(), econ_, key="qc.sources",
                 hardware=view["floor_hardware"].drop_nulls().unique().sort().to_list(), region=sc.region)


if __name__ == "__main__":
    render()
