"""Quote checker: provider list prices against the modeled cost floor at each quote's own service level.

Inputs: the shared sidebar (power, finance, utilization, token mix, output length, and the formats and speculative
decoding of its expander, which every floor uses and the page names), the page's cost tier
(hyperscaler / neocloud / owned-custom / rental-3yr / on-demand TCO tiers or a typed $/GPU-hour; default: the
sidebar's), the accelerator generations floors of quotes without their own hardware come from, the speed floor for
quotes that publish none, and an optional upload of the analyst's own quotes (CSV or XLSX, the columns of
``data/quotes.csv``). One econ call (:func:`econ.analyses.quotes.check_quotes` over the catalog quotes and the upload),
then the verdict counts, the chart of each quoted price against the band of modeled floors, the table with tier,
band and reasons and downloads, and the detail of one quote across accelerators. Two forms: one typed price
(:func:`econ.analyses.quotes.single_quote`), and a provider's P&L beside econ's modeled floor for the same traffic
(:mod:`econ.analyses.provider_economics`, defaults: DeepSeek's day-6 disclosure).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import replace
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import charts  # noqa: E402
from econ.vocabulary import (COLUMNS, TIER_SPECS, Column, Tier, column_title, pct_col, usd_h_col,  # noqa: E402
                             usd_m_col)
from dashboards.components import memory  # noqa: E402
from dashboards.components import chart, safe_text, scenario_sidebar, sources, state, table  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.analyses.quotes import (QuoteCheck, check_quotes, cost_basis_label, decoding_notes, generations,  # noqa: E402
                                  single_quote)
from econ.assumptions import Decoding  # noqa: E402
from econ.formatting import short_accelerator_name  # noqa: E402
from econ.economics.margins import (NOT_COMPARABLE, RICH_MARGIN_FRAC, THIN_MARGIN_FRAC, UNDETERMINED,  # noqa: E402
                                    VERDICTS)
from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER  # noqa: E402
from econ.tables.catalog import DEFAULT_DATA_DIR  # noqa: E402
from econ.tables.quote_files import (  # noqa: E402
    MAX_QUOTE_ROWS, QUOTE_SCHEMA, REQUIRED_QUOTE_COLUMNS, WEIGHT_FORMATS, load_provider_systems, load_quotes,
    read_quotes,
)
from econ.io.scenario import Scenario  # noqa: E402
from dashboards.components import sensitivity  # noqa: E402

TITLE = "Quote checker"
ICON = ":material/fact_check:"
ORDER = 40

UPLOAD_PREFIX = "upload-"
# Uploaded quote ids get this prefix, so they never collide with the catalog's.

VERDICT_COLOURS = {"below-floor": charts.OKABE_ITO[5], UNDETERMINED: charts.OKABE_ITO[3], "thin": charts.OKABE_ITO[1],
                   "plausible": charts.OKABE_ITO[0], "rich": charts.OKABE_ITO[2], NOT_COMPARABLE: "#999999"}
# Okabe-Ito colours per verdict (vermillion, purple, orange, blue, green) and grey for quotes without a GPU floor.

VERDICT_COLOUR_NAMES = {"below-floor": "vermillion", UNDETERMINED: "purple", "thin": "orange", "plausible": "blue",
                        "rich": "green", NOT_COMPARABLE: "grey"}
# The colour of each verdict in words (VERDICT_COLOURS; Okabe-Ito names), for the caption that names every marker.

VERDICT_LABELS = {"below-floor": "Below floor", UNDETERMINED: "Undetermined", "thin": "Thin", "plausible": "Plausible",
                  "rich": "Rich", NOT_COMPARABLE: "Not GPU-comparable"}
VERDICT_HELP = {"below-floor": "The price is below the low end of the floor's calibration band at this speed",
                UNDETERMINED: "The price lies inside the floor's calibration band: the model cannot tell whether it "
                              "covers its cost",
                "thin": f"Gross margin under {THIN_MARGIN_FRAC:.0%}",
                "plausible": f"Gross margin {THIN_MARGIN_FRAC:.0%} to {RICH_MARGIN_FRAC:.0%}",
                "rich": f"Gross margin over {RICH_MARGIN_FRAC:.0%}",
                NOT_COMPARABLE: "No catalog GPU reaches the quote's speed even at the fast end of its calibration "
                                "band with speculative decoding (or holds the model): no GPU floor to compare with"}

TIER_LABELS = {"scenario": "As in the sidebar",
               **{spec.cli_name: spec.label for t, spec in TIER_SPECS.items() if t not in (Tier.RENTAL, Tier.CUSTOM)},
               "custom": "A $/GPU-hour I type"}
"""The page's cost-tier choices (``--tco`` tiers and ``--usd-per-gpu-hour``) and their labels."""


QUOTE_COLUMNS: dict[str, Column] = {  # this page's titles where COLUMNS' general one would mislead
    "price_usd_per_m_output_tokens": usd_m_col("Price, output ($ per M tokens)"),
    "batch_size": Column("Batch (sequences)", ",d", "%d"),
    "usd_per_m_input_tokens": usd_m_col("Floor cost, input ($ per M tokens)"),
    "usd_per_m_output_tokens": usd_m_col("Floor cost, output ($ per M tokens)"),
    "usd_per_m_blended_tokens": usd_m_col("Floor cost, blended ($ per M tokens)"),
    "usd_per_gpu_hour": usd_h_col("Cost per utilized GPU-hour ($)"),
    "generation": Column("Generation"), "in_scope": Column("In the quote's scope"),
    "layout": Column("Layout"), "quote_hardware": Column("Provider's hardware"), "weight_format": Column("Weight format"),
    "cost_basis": Column("Cost tier"), "utilization_frac": pct_col("Utilization (%)"),
    "floor_usd_per_gpu_hour": usd_h_col("Floor $/GPU-hour (utilized)"),
    "price_usd_per_m_blended_tokens": usd_m_col("Price ($/M blended)"),
    "floor_usd_per_m_blended_tokens": usd_m_col("Floor ($/M blended)"),
    "margin_blended_frac": pct_col("Margin, blended (%)"),
    "floor_usd_per_m_blended_tokens_low": usd_m_col("Floor band low ($/M)"),
    "floor_usd_per_m_blended_tokens_high": usd_m_col("Floor band high ($/M)"),
    "margin_blended_frac_low": pct_col("Margin at the band's high floor (%)"),
    "margin_blended_frac_high": pct_col("Margin at the band's low floor (%)"),
    "band_straddles_price": Column("Band straddles the price"),
    "floor_scope": Column("Floor taken from"), "floor_generation": Column("Floor generation"),
    "floor_layout": Column("Floor layout"), "floor_weight_format": Column("Floor weight format"),
    "floor_spec_method": Column("Speculative decoding"),
    "breakeven_usd_per_gpu_hour": usd_h_col("Break-even per utilized GPU-hour ($)"),
    "breakeven_rate_usd_per_gpu_hour": usd_h_col("Break-even GPU-hour rate at this utilization ($)"),
    "clearing_generations": Column("Generations where it clears the floor"),
    "cheapest_clearing_hardware": Column("Cheapest accelerator-hour that clears"),
    "cheapest_clearing_generation": Column("Its generation"),
    "cheapest_clearing_usd_per_gpu_hour": usd_h_col("Its cost per utilized GPU-hour ($)"),
    "cheapest_clearing_usd_per_m_blended_tokens": usd_m_col("Its floor ($ per M blended tokens)"),
}
_COLS = {**COLUMNS, **QUOTE_COLUMNS}
# Titles, formats and scales of this page's columns: the shared map (COLUMNS) and its overrides.

TABLE_COLUMNS = ["quote_id", "verdict", "price_usd_per_m_blended_tokens", "floor_usd_per_m_blended_tokens",
                 "floor_usd_per_m_blended_tokens_low", "floor_usd_per_m_blended_tokens_high", "margin_text",
                 "floor_assumes", "band_straddles_price", "cost_basis", "floor_usd_per_gpu_hour", "utilization_frac",
                 "reason", "margin_blended_frac",
                 "provider", "model", "quote_set", "floor_scope", "floor_hardware", "floor_layout", "floor_precision",
                 "floor_weight_format", "floor_batch_size", "floor_binding_wall", "floor_batch_limit",
                 "speed_floor_tokens_per_s_per_user", "margin_input_frac", "margin_output_frac",
                 "breakeven_usd_per_gpu_hour", "breakeven_rate_usd_per_gpu_hour", "breakeven_utilization_frac",
                 "breakeven_batch_size", "clearing_generations", "cheapest_clearing_hardware"]
DETAIL_COLUMNS = ["hardware", "generation", "in_scope", "meets_floor", "usd_per_m_blended_tokens",
                  "margin_blended_frac", "usd_per_gpu_hour", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
                  "precision", "layout", "num_gpus", "batch_size", "tokens_per_s_per_user", "binding_wall",
                  "fastest_tokens_per_s_per_user", "note"]
SECTIONS = ("Every quote", "Check one price", "Provider P&L")
"""The page's tabs (``qc.section``): the catalog's and an uploaded file's quotes, one typed price, a provider's day."""

SINGLE_COLUMNS = ["verdict", "price_usd_per_m_blended_tokens", "floor_usd_per_m_blended_tokens", "margin_text",
                  "floor_usd_per_m_blended_tokens_low", "floor_usd_per_m_blended_tokens_high", "floor_assumes",
                  "cost_basis",
                  "floor_usd_per_gpu_hour", "utilization_frac", "floor_scope", "floor_layout",
                  "breakeven_usd_per_gpu_hour", "breakeven_utilization_frac", "breakeven_batch_size",
                  "cheapest_clearing_hardware"]


def _title(c: str) -> str:
    return _COLS[c].title if c in _COLS else column_title(c)


def _tooltip(columns) -> list[alt.Tooltip]:
    out = []
    for c in columns:
        spec = _COLS.get(c)
        fmt = spec.d3 if spec and spec.d3 not in ("d", ",.3~f") else None
        out.append(alt.Tooltip(c, title=_title(c), format=fmt) if fmt else alt.Tooltip(c, title=_title(c)))
    return out


def _band_frames(summary: pl.DataFrame, per_hardware: pl.DataFrame):
    """What :func:`quote_band_chart` draws: (quote ids in y order, verdicts shown, the band, tick and price frames)."""
    s = summary.sort("model", "price_usd_per_m_blended_tokens")
    order = s["quote_id"].to_list()
    bands = s.filter(pl.col("floor_usd_per_m_blended_tokens").is_not_null()).select(_BAND_COLUMNS)
    ticks = per_hardware.filter(pl.col("meets_floor") & pl.col("in_scope")
                                & pl.col("quote_id").is_in(order)).select(_TICK_COLUMNS)
    shown = [v for v in VERDICTS if v in set(s["verdict"])]
    return order, shown, bands, ticks, s.select(_PRICE_COLUMNS)


_BAND_COLUMNS = ["quote_id", "model", "floor_usd_per_m_blended_tokens", "floor_hardware",
                 "band_max_usd_per_m_blended_tokens", "band_max_hardware", "num_hardware_meeting_floor"]
_TICK_COLUMNS = ["quote_id", "hardware", "usd_per_m_blended_tokens", "precision", "num_gpus", "batch_size",
                 "tokens_per_s_per_user", "binding_wall"]
_PRICE_COLUMNS = ["quote_id", "quote_set", "provider", "model", "verdict", "price_usd_per_m_blended_tokens",
                  "floor_usd_per_m_blended_tokens", "floor_usd_per_m_blended_tokens_low",
                  "floor_usd_per_m_blended_tokens_high", "margin_text", "floor_assumes",
                  "speed_floor_tokens_per_s_per_user", "cost_basis"]


def quote_band_chart(summary: pl.DataFrame, per_hardware: pl.DataFrame, *, width: int = 620) -> alt.LayerChart:
    """Each quote's blended price (a diamond coloured by verdict) against the band of modeled floors.

    Parameters
    ----------
    summary : pl.DataFrame
        :attr:`econ.analyses.quotes.QuoteCheck.summary` rows to draw (one per quote), with ``quote_set``.
    per_hardware : pl.DataFrame
        :attr:`econ.analyses.quotes.QuoteCheck.per_hardware` rows of the same quotes: one tick per accelerator in the
        quote's scope that meets the speed floor.

    Returns
    -------
    alt.LayerChart: a grey bar from the cheapest to the dearest in-scope accelerator's floor, grey ticks for each
    accelerator, the price diamond; x is $ per M blended tokens on a log axis, y the quote (sorted by model, then
    price). Quotes without a GPU floor in scope have a diamond and no band.
    """
    order, shown, bands, ticks, prices = _band_frames(summary, per_hardware)
    return _band_layers(order, shown, bands.to_pandas(), ticks.to_pandas(), prices.to_pandas(), width)


def _band_layers(order, shown, bands, ticks, prices, width: int) -> alt.LayerChart:
    """The chart of :func:`quote_band_chart` from its frames (pandas, as Altair reads them)."""
    x_title = "$/M blended tokens (log)"
    x = alt.X("price_usd_per_m_blended_tokens:Q", title=x_title, scale=alt.Scale(type="log"),
              axis=alt.Axis(format="$,.3~f", labelOverlap=True))
    y = alt.Y("quote_id:N", sort=list(order), title=None, axis=alt.Axis(labelLimit=260, labelOverlap=False))
    band = alt.Chart(bands).mark_bar(color="#BBBBBB", height=8, opacity=0.7).encode(
        x=alt.X("floor_usd_per_m_blended_tokens:Q", title=x_title, scale=alt.Scale(type="log"),
                axis=alt.Axis(format="$,.3~f", labelOverlap=True, orient="top")),  # tall chart: axis on top too
        x2="band_max_usd_per_m_blended_tokens:Q", y=y, tooltip=_tooltip(_BAND_COLUMNS))
    tick = alt.Chart(ticks).mark_tick(color="#555555", thickness=1.5, size=12).encode(
        x=alt.X("usd_per_m_blended_tokens:Q", scale=alt.Scale(type="log"), axis=None), y=y,
        tooltip=_tooltip(_TICK_COLUMNS))
    price = alt.Chart(prices).mark_point(shape="diamond", filled=True, size=110, opacity=1.0).encode(
        x=x, y=y,
        color=alt.Color("verdict:N", title=_title("verdict"),
                        scale=alt.Scale(domain=list(shown), range=[VERDICT_COLOURS[v] for v in shown]),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=260, symbolLimit=0)),
        tooltip=_tooltip(_PRICE_COLUMNS))
    return alt.layer(band, tick, price).properties(
        width=width, height=max(160, 20 * len(order)),
        title=charts.chart_title("Quoted blended price vs the band of modeled floors",
                                 "Grey: cheapest to dearest in-scope accelerator's floor; diamond: the quote"),
    ).resolve_axis(x="independent")  # one shared log scale, its axis at the top (band) and bottom (price)


def quote_band_spec(summary: pl.DataFrame, per_hardware: pl.DataFrame, *, width: int = 620) -> dict:
    """The Vega-Lite dict of :func:`quote_band_chart` (equal to its ``to_dict``: tests/dashboards), built fast.

    The chart's structure depends on the quotes' order, the verdicts shown and the width only, which a rerun with
    other economics keeps (prices do not move, floors do): it is built once per structure with empty frames
    (:func:`_band_template`) and each layer's data filled in as Altair fills it (:func:`dashboards.components.chart.filled`),
    without Altair's ~100 ms of validation-free conversion and deep copies per rerun (issue 19.5).
    """
    order, shown, bands, ticks, prices = _band_frames(summary, per_hardware)
    return chart.filled(_band_template, (tuple(order), tuple(shown), width), (bands, ticks, prices),
                        key="quote_band_template")


def _band_template(order: tuple, shown: tuple, width: int, schema: tuple) -> dict:
    """The spec of :func:`_band_layers` for these quotes, verdicts, width and frame schemas, with empty data."""
    empty = [pl.DataFrame(schema=dict(cols)).to_pandas() for cols in schema]
    return _band_layers(list(order), list(shown), *empty, width).to_dict(validate=False)


def page_economics(sc: Scenario, cat, tier: str, rate: float | None):
    """The scenario's economics with the page's cost tier (``scenario`` keeps the sidebar's)."""
    e = sc.economics(cat)
    if tier == "scenario":
        return e
    if tier == "custom":
        return replace(e, basis="custom", usd_per_gpu_hour=float(rate))
    return replace(e, basis=tier, usd_per_gpu_hour=None)


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
        quotes = memory.memo(load_quotes, catalog, key=state.token_of(catalog),  # read + validated once per file
                             files=[Path(catalog.data_dir) / "quotes.csv", DEFAULT_DATA_DIR / "quotes.csv"])
        frames.append(quotes.with_columns(pl.lit("catalog").alias("quote_set")))
    if upload is not None:
        try:
            mine = read_quotes(upload, catalog, name=upload_name or "uploaded file")
            frames.append(mine.with_columns((pl.lit(UPLOAD_PREFIX) + pl.col("quote_id")).alias("quote_id"),
                                            pl.lit("uploaded").alias("quote_set")))
        except EconError as exc:
            error = str(exc)
    return (pl.concat(frames, how="vertical") if frames else None), error


@memory.cached(show_spinner="Searching every accelerator for each quote's floor ...", max_entries=16,
               ttl=3600)
def run_check(token: str, sc: Scenario, include_catalog: bool, upload: bytes | None, upload_name: str | None,
              speed: float, tier: str = "scenario", rate: float | None = None, gens: tuple = (),
              _catalog=None) -> tuple[QuoteCheck | None, pl.DataFrame | None, str | None]:
    """One econ call for the page: the quote check and the quote sets. Cached per catalog + inputs."""
    cat = _catalog if _catalog is not None else state.catalog()
    quotes, error = quotes_to_check(cat, include_catalog=include_catalog, upload=upload, upload_name=upload_name)
    if quotes is None:
        return None, None, error
    result = check_quotes(quotes.drop("quote_set"), cat, sc.assumptions(), page_economics(sc, cat, tier, rate),
                          min_tokens_per_s_per_user=speed, output_len=sc.output_len, generation=list(gens) or None,
                          decoding=sc.decoding(), slo_percentile=sc.slo_percentile)
    return result, quotes.select("quote_id", "quote_set"), error


@memory.cached(show_spinner="Finding the floor of this price ...", max_entries=32, ttl=3600)
def check_one(token: str, sc: Scenario, tier: str, rate: float | None, gens: tuple, speed_default: float,
              quote: tuple, _catalog=None) -> QuoteCheck:
    """:func:`econ.analyses.quotes.check_quotes` of one typed quote (``quote``: model, provider, input, cached, output
    price, speed, hardware, weight format)."""
    cat = _catalog if _catalog is not None else state.catalog()
    q, decoding = _typed_quote(cat, sc, quote)
    return check_quotes(q, cat, sc.assumptions(), page_economics(sc, cat, tier, rate),
                        min_tokens_per_s_per_user=speed_default, output_len=sc.output_len,
                        generation=list(gens) or None, decoding=decoding, slo_percentile=sc.slo_percentile)


def _typed_quote(cat, sc: Scenario, quote: tuple) -> tuple[pl.DataFrame, Decoding]:
    """The typed quote (:func:`econ.analyses.quotes.single_quote`) and the decoding its floor uses: the sidebar's
    formats and speculative decoding, the weight format being the form's when it names one, else the sidebar's."""
    model, provider, p_in, p_c, p_out, speed, hw, wf = quote
    d = sc.decoding()
    q = single_quote(cat, model=model, usd_per_m_input_tokens=p_in, usd_per_m_output_tokens=p_out,
                     usd_per_m_cached_input_tokens=p_c, output_tokens_per_s_per_user=speed, hardware=hw,
                     weight_format=wf or d.weight_format, provider=provider or "quote",
                     quote_id=f"{provider or 'quote'}-{model}")
    return q, replace(d, weight_format=None)


@memory.cached(show_spinner="Checking the verdict under the alternatives ...", max_entries=32, ttl=3600)
def alternatives_one(token: str, sc: Scenario, tier: str, rate: float | None, speed_default: float, quote: tuple,
                     _catalog=None) -> pl.DataFrame:
    """The typed quote's verdict with the floor on each generation at 20, 50, 100 tokens/s and its own speed
    (:func:`econ.analyses.quotes.verdict_alternatives`, as a small table)."""
    from econ.analyses.quotes import alternatives_table, verdict_alternatives

    cat = _catalog if _catalog is not None else state.catalog()
    q, decoding = _typed_quote(cat, sc, quote)
    return alternatives_table(verdict_alternatives(q, cat, sc.assumptions(), page_economics(sc, cat, tier, rate),
                                                   min_tokens_per_s_per_user=speed_default, output_len=sc.output_len,
                                                   decoding=decoding, slo_percentile=sc.slo_percentile))


@memory.cached(show_spinner="Pricing the traffic with econ's floor ...", max_entries=16, ttl=3600)
def provider_pnl_page(token: str, sc: Scenario, inputs: tuple, model: str, hardware: str, speed: float,
                      weight_format: str | None, _catalog=None) -> tuple[dict, dict]:
    """(the provider's P&L, econ's modeled floor P&L) for the form's figures (:mod:`econ.analyses.provider_economics`)."""
    from econ.analyses.provider_economics import modeled_floor_pnl, provider_pnl

    cat = _catalog if _catalog is not None else state.catalog()
    kw = dict(inputs)
    reported = {k: float(v) for k, v in provider_pnl(**kw).items()}
    traffic = {k: v for k, v in kw.items() if k != "gpu_hours_per_day"}
    d = sc.decoding()
    modeled = modeled_floor_pnl(cat, model=model, hardware=hardware, min_tokens_per_s_per_user=speed,
                                weight_format=d.weight_format or weight_format, assumptions=sc.assumptions(),
                                economics=sc.economics(cat), output_len=sc.output_len,
                                decoding=replace(d, weight_format=None), **traffic)
    modeled.pop("check", None)
    return reported, modeled


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


def _display(frame: pl.DataFrame, cat) -> pl.DataFrame:
    """``frame`` as the page shows it: scaled columns (% as 0-100) and display names for ids (:func:`with_names`)."""
    return with_names(_scaled(frame), cat)


def _scaled(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its scaled columns as shown (% as 0-100): numeric columns only, so it commutes with
    :func:`with_names` (which changes text columns only)."""
    exprs = [(pl.col(c) * _COLS[c].scale).alias(c) for c in frame.columns
             if c in _COLS and _COLS[c].scale != 1.0]
    return frame.with_columns(exprs) if exprs else frame


HARDWARE_COLUMNS = ("hardware", "floor_hardware", "band_max_hardware", "ceiling_hardware",
                    "cheapest_clearing_hardware")
"""Columns of the check holding an accelerator (or provider system) id, shown as its display name."""
TEXT_COLUMNS = ("reason", "floor_assumes")
"""Columns of the check whose text names accelerators by id, shown with their short names."""


def _names(cat) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """(accelerator and provider-system id -> display name, the same -> short name for running text,
    model id -> display name) of ``cat``."""
    hw = dict(cat.accelerators.select("id", "display_name").rows())
    hw.update(dict(load_provider_systems(cat).select("id", "display_name").rows()))
    hw = {k: str(v or k) for k, v in hw.items()}
    short = {k: short_accelerator_name(v, max_chars=24) for k, v in hw.items()}
    return hw, short, {k: str(v or k) for k, v in cat.models.select("id", "display_name").rows()}


def name_ids(text, short: dict[str, str]):
    """``text`` with every accelerator id written as a whole token (``gb200-nvl72``, not the ``b200`` inside it)
    replaced by its short name (``GB200 NVL72``); None stays None."""
    if text is None or not short:
        return text
    return _id_pattern(tuple(short)).sub(lambda m: short[m.group(1)], str(text))


@functools.lru_cache(maxsize=8)
def _id_pattern(ids: tuple[str, ...]):
    """The regex of :func:`name_ids` for these ids (built once: a page names hundreds of cells)."""
    import re

    return re.compile(r"(?<![\w.-])(" + table.id_alternation(ids) + r")(?![\w-])")  # a prefix tree: ~40% faster


def with_names(frame: pl.DataFrame, cat) -> pl.DataFrame:
    """``frame`` with display names for its ids: accelerators (:data:`HARDWARE_COLUMNS`) and models by their
    catalog ``display_name``, accelerator ids inside text (:data:`TEXT_COLUMNS`) by their short names
    (:func:`econ.formatting.short_accelerator_name`). Quote ids and downloads keep the ids."""
    hw, short, models = _names(cat)
    out = []
    schema = frame.schema  # read once: each ``frame.schema`` builds a Schema (~0.1 ms on the check's wide frames)
    for c in frame.columns:
        if c == "model" and schema[c] == pl.String:
            out.append(pl.col(c).replace(models))
        elif c in HARDWARE_COLUMNS and schema[c] == pl.String:
            out.append(pl.col(c).replace(hw))
        elif c in TEXT_COLUMNS and schema[c] == pl.String:
            named = {t: name_ids(t, short) for t in frame[c].unique().to_list()}  # each distinct text once
            out.append(pl.Series(c, [named[t] for t in frame[c].to_list()], dtype=pl.String))
    return frame.with_columns(out) if out else frame


def _assumption_rows(cat, sc: Scenario, result: QuoteCheck, economics) -> pl.DataFrame:
    """Every input behind the check, for the XLSX download: efficiencies, economics, floor hardware, settings."""
    from econ.io import export
    hw = result.summary["floor_hardware"].drop_nulls().unique().sort().to_list()
    return export.cost_assumptions_frame(cat, sc.assumptions(), economics, hardware=hw,
                                         extra=result.settings_rows())


def verdict_key(counts: dict[str, int]) -> str:
    """Every verdict of the chart in words, with its diamond colour and count: the key that stays readable on a
    phone, where the chart's legend can be cut (issue 19: at 390 px it lost 'rich' and 'thin')."""
    shown = [v for v in VERDICTS if counts.get(v)]
    return "Diamond colours: " + "; ".join(f"{VERDICT_COLOUR_NAMES[v]} = {VERDICT_LABELS[v]} ({counts[v]:,})"
                                           for v in shown) + "."


def decoding_captions(result: QuoteCheck, sc: Scenario, cat) -> list[str]:
    """What the floors used: the formats and speculative decoding of the sidebar's expander, set or automatic with
    its source (:func:`econ.analyses.quotes.decoding_notes`, the "decoding:" lines of ``econ quotes check``), and
    the TPOT percentile the quotes' speeds are held at when the sidebar sets one (``econ quotes check
    --slo-percentile``)."""
    out = [n[0].upper() + n[1:] for n in decoding_notes(result.summary, sc.decoding(), cat)]
    if sc.slo_percentile is not None:
        out.append(f"Speeds held at p{sc.slo_percentile:g} TPOT (sidebar): each floor gives the quote's speed to all "
                   f"but {100 - sc.slo_percentile:g}% of its tokens (the profile's measured p99 / mean TPOT, log-normal "
                   "in between); without a percentile a quote is held at its published speed, a median.")
    return out


def _rate_text(result: QuoteCheck) -> str:
    s = result.settings
    rate = f" at ${s['usd_per_gpu_hour']:,.2f} per GPU-hour" if s.get("usd_per_gpu_hour") is not None else ""
    return f"cost tier {s['cost_basis']}{rate}, {s['utilization_frac']:.0%} utilization"


def _money(v, digits: int = 0) -> str:
    from econ.formatting import MISSING
    return MISSING if v is None else f"${v:,.{digits}f}"


def _frac(v) -> str:
    from econ.formatting import MISSING
    return MISSING if v is None else f"{v:.1%}"


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    st.title("Quote checker")
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
    t1, t2, t3 = st.columns([2, 1, 2])
    tier = t1.selectbox("Cost tier of a GPU-hour", list(TIER_LABELS), format_func=TIER_LABELS.get, key="qc.tier",
                        help="Each tier is sourced per accelerator (data/README.md, accelerators.csv): SemiAnalysis "
                             "InferenceX cost of owning as a hyperscaler or a neocloud, its 3-year rental price, "
                             "on-demand rental, or econ's own capex + facility + power + opex chain. Every $/GPU-hour "
                             "shown is per utilized GPU-hour (the tier's rate / utilization).")
    rate = None
    if tier == "custom":
        rate = t2.number_input("$ per GPU-hour", min_value=0.01, max_value=1000.0, value=2.0, step=0.25,
                               key="qc.rate", help="Per GPU-hour of the fleet's existence (like a lease rate)")
    gen_options = generations(cat)
    gens = t3.multiselect("Generations for quotes without their hardware", gen_options, key="qc.gens",
                          placeholder="Every generation",
                          help="A quote that names its accelerator (DeepSeek on H800) is priced on it; the others "
                               "on the cheapest accelerator of these generations.")
    econ_ = page_economics(sc, cat, tier, rate)
    st.caption(
        f"Each quote against the cheapest deployment that serves its model at its own published speed (else the "
        f"floor above), in its own weight format, on its own accelerator when it names one: "
        f"{cost_basis_label(econ_.basis)} cost tier"
        f"{f' at ${rate:,.2f} per GPU-hour' if rate is not None else ''}, {econ_.utilization_frac:.0%} utilization, "
        f"${sc.effective_usd_per_kwh(cat):.4f}/kWh, blended at {sc.input_output_mix:g}:1 input:output with a "
        f"{sc.cache_hit_frac:.0%} prefix-cache hit rate, requests of "
        f"{max(1, round(sc.input_output_mix * sc.output_len)):,} input + {sc.output_len:,} output tokens. Verdicts "
        f"on the blended gross margin: below-floor < 0 <= thin < 20% <= plausible <= 80% < rich; not-gpu-comparable "
        f"when there is no GPU floor to compare with.")
    data = upload.getvalue() if upload is not None else None
    # the page's three parts as tabs that run only when open (Streamlit 1.67 lazy tabs): a rerun of the quote table
    # does not redraw the two forms' ~25 widgets (~35 ms each rerun on 2 cores); the forms' values are kept across
    # tab switches (state.kept)
    t_all, t_one, t_pnl = st.tabs(list(SECTIONS), key="qc.section", on_change="rerun")
    result = None
    if t_all.open:
        with t_all:
            result = _all_quotes(cat, cat_in_use, sc, econ_, dict(include=include, data=data, speed=speed, tier=tier,
                                                                  rate=rate, gens=tuple(gens)),
                                 upload.name if upload else None)
    if t_one.open:
        with t_one:
            _single_form(cat, cat_in_use, sc, tier, rate, tuple(gens), float(speed))
    if t_pnl.open:
        with t_pnl:
            _pnl_form(cat, cat_in_use, sc)
    st.divider()
    sources.show(cat, sc.assumptions(), econ_, key="qc.sources",
                 hardware=result.summary["floor_hardware"].drop_nulls().unique().sort().to_list() if result else None,
                 region=sc.region)


def _all_quotes(cat, cat_in_use, sc, econ_, inputs: dict, upload_name: str | None) -> QuoteCheck | None:
    """The tab of every quote (the catalog's and an upload's): verdicts, chart, tables. Returns the check (None when
    there is none)."""
    try:
        result, sets, error = run_check(cat_in_use.token, sc, inputs["include"], inputs["data"], upload_name,
                                        float(inputs["speed"]), inputs["tier"], inputs["rate"], inputs["gens"],
                                        _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return None
    if error:
        st.error("Your file was not used; fix these problems and upload it again:", icon=":material/error:")
        st.code(error, language=None)
    if result is None:
        st.info("No quotes to check: include the catalog's quotes or upload your own.", icon=":material/info:")
        return None
    notes = decoding_captions(result, sc, cat)
    if sc.slo_percentile is not None:
        st.caption(safe_text.md(notes.pop()))
    given = sc.decoding().columns()
    head = ("set in the sidebar: " + ", ".join(f"{k} {v}" for k, v in given.items())) if given else "automatic"
    with st.expander(f"Formats and speculative decoding of the floors ({safe_text.md(head)})", expanded=False):
        for note in notes:  # the formats and speculative decoding each floor used, and where each came from
            st.caption(safe_text.md(note))
    _results(cat, cat_in_use, sc, result, sets, econ_, inputs)
    return result


def _results(cat, cat_in_use, sc, result: QuoteCheck, sets, econ_, inputs: dict) -> None:
    summary = result.summary.join(sets, on="quote_id", how="left").select(["quote_set", *result.summary.columns])
    per_hw = result.per_hardware

    f1, f2, f3 = st.columns(3)
    model_names = _names(cat)[2]
    model_opts, provider_opts = sorted(summary["model"].unique()), sorted(summary["provider"].unique())
    models = state.keep("qc.models", f1.multiselect(
        "Models", model_opts, key="qc.models", placeholder="All models", format_func=lambda m: model_names.get(m, m),
        default=[m for m in state.kept("qc.models", []) if m in model_opts]))
    providers = state.keep("qc.providers", f2.multiselect(
        "Providers", provider_opts, key="qc.providers", placeholder="All providers",
        default=[p for p in state.kept("qc.providers", []) if p in provider_opts]))
    verdicts = state.keep("qc.verdicts", f3.multiselect(
        "Verdicts", list(VERDICTS), key="qc.verdicts", placeholder="All verdicts", format_func=VERDICT_LABELS.get,
        default=[v for v in state.kept("qc.verdicts", []) if v in VERDICTS]))
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
        col.metric(VERDICT_LABELS[v], f"{counts.get(v, 0):,}", help=VERDICT_HELP[v])
    view_hw = per_hw.filter(pl.col("quote_id").is_in(view["quote_id"].implode()))
    named = with_names(view, cat)  # once for the chart and the table (the reasons' ids named: ~10 ms a rerun)
    ticks = view_hw.filter(pl.col("meets_floor") & pl.col("in_scope"))  # the rows the chart draws, named alone
    chart.show(quote_band_spec, named, with_names(ticks, cat), key="qc.chart",  # built once
               cache_key=(cat_in_use.token, sc, *inputs.values(), tuple(models), tuple(providers), tuple(verdicts)))
    st.caption("Grey bar: modeled floor from the cheapest to the dearest accelerator in the quote's scope that meets "
               "its speed; grey ticks: each such accelerator; diamond: the quoted blended price. A diamond without a "
               "bar: no accelerator in scope reaches the quote's speed, or the quote runs on non-GPU hardware.")
    st.caption(verdict_key(counts))

    st.subheader("Verdicts and reasons")
    band = ("the engine's calibration band (10th to 90th percentile of its held-out errors)"
            if not str(result.settings["calibration_band"]).startswith("none") else "empty: the engine reports no band")
    st.caption(f"Every floor at {_rate_text(result)}; $/GPU-hour per utilized GPU-hour. Floor band columns: {band}.")
    shown = view.select(TABLE_COLUMNS)
    st.dataframe(_scaled(named.select(TABLE_COLUMNS)), column_config=_column_config(shown), hide_index=True,
                 key="qc.table",  # = _display(shown, cat): the names already made for the chart
                 placeholder=table.PLACEHOLDER)
    meta = {"scenario": sc.to_query_params(), "speed_floor_default": inputs["speed"], "cost_tier": inputs["tier"],
            **cat.as_of_dates()}
    assumptions = _assumption_rows(cat, sc, result, econ_)
    st.caption("Downloads: every column of the check for the quotes shown (stored units in the headers), with the "
               "assumptions and sources in the workbook; provider names and notes are neutralized against "
               "spreadsheet formulas.")
    table.downloads(view, key="qc.dl", name="quote-check", assumptions=assumptions, metadata=meta)

    st.subheader("One quote across accelerators")
    ids = view["quote_id"].to_list()
    pick = state.keep("qc.pick", st.selectbox("Quote", ids, key="qc.pick", index=_kept_position("qc.pick", ids, None)))
    row = view.filter(pl.col("quote_id") == pick).row(0, named=True)
    st.markdown(f"**{VERDICT_LABELS[row['verdict']]}** — "
                f"{safe_text.md(name_ids(row['reason'], _names(cat)[1]).split(': ', 1)[1])}")  # $ is not LaTeX
    detail = per_hw.filter(pl.col("quote_id") == pick).select(DETAIL_COLUMNS)
    st.dataframe(_display(detail, cat), column_config=_column_config(detail), hide_index=True, key="qc.detail",
                 placeholder=table.PLACEHOLDER)
    table.downloads(view_hw, key="qc.dl_hw", name="quote-floors-by-accelerator", assumptions=assumptions,
                    metadata=meta)
    quotes, _ = quotes_to_check(cat, include_catalog=inputs["include"], upload=inputs["data"], upload_name=None)
    sensitivity.quote_panel(cat, cat_in_use.token, quotes, pick, sc.assumptions(), econ_, inputs["speed"],
                            sc.output_len, key="qc.sens", decoding=sc.decoding())


def _hardware_options(cat) -> dict[str, str]:
    """'' (unknown) + catalog accelerators + provider systems -> display names."""
    out = {"": "Unknown"}
    out.update(dict(cat.accelerators.select("id", "display_name").rows()))
    systems = load_provider_systems(cat)
    out.update({i: f"{n} (no GPU cost basis)" for i, n in systems.select("id", "display_name").rows()})
    return out


def _single_form(cat, cat_in_use, sc, tier, rate, gens, speed_default) -> None:
    st.caption(f"A price you type, checked like a quote of the table (same cost tier, generations and speed floor). "
               f"Empty speed: the speed floor above ({speed_default:g} tokens/s per user).")
    models = dict(cat.models.select("id", "display_name").rows())
    hw_names = _hardware_options(cat)
    with st.form("qc.single"):
        a, b, c = st.columns(3)
        model_ids, hw_ids, wf_opts = list(models), list(hw_names), ["", *WEIGHT_FORMATS]

        model = state.keep("qc.s.model", a.selectbox("Model", model_ids, format_func=models.get, key="qc.s.model",
                                                     index=_kept_position("qc.s.model", model_ids, "llama-3.3-70b")))
        provider = state.keep("qc.s.provider", b.text_input(
            "Provider (a label)", value=state.kept("qc.s.provider", "my-quote"), max_chars=40, key="qc.s.provider"))
        hardware = state.keep("qc.s.hw", c.selectbox(
            "Provider's hardware", hw_ids, format_func=hw_names.get, key="qc.s.hw",
            index=_kept_position("qc.s.hw", hw_ids, ""),
            help="Unknown: the cheapest accelerator of the generations picked above; a Groq, Cerebras or SambaNova "
                 "system: not GPU-comparable (a GPU floor is shown for reference)"))
        d, e, f = st.columns(3)
        p_in = state.keep("qc.s.in", d.number_input(
            "Input price ($ per M tokens)", min_value=0.0001, max_value=10_000.0, value=state.kept("qc.s.in", 0.59),
            step=0.01, format="%.4f", key="qc.s.in"))
        p_out = state.keep("qc.s.out", e.number_input(
            "Output price ($ per M tokens)", min_value=0.0001, max_value=10_000.0,
            value=state.kept("qc.s.out", 0.79), step=0.01, format="%.4f", key="qc.s.out"))
        p_c = state.keep("qc.s.cached", f.number_input(
            "Cached input price ($ per M tokens, optional)", min_value=0.0, max_value=10_000.0,
            value=state.kept("qc.s.cached", None), step=0.01, format="%.4f", key="qc.s.cached",
            help="Empty: cache hits are billed at the input price"))
        g, h = st.columns(2)
        s = state.keep("qc.s.speed", g.number_input(
            "Output speed (tokens/s per user, optional)", min_value=0.1, max_value=100_000.0,
            value=state.kept("qc.s.speed", None), step=5.0, key="qc.s.speed"))
        wf = state.keep("qc.s.wf", h.selectbox(
            "Weight format served", wf_opts, key="qc.s.wf", index=_kept_position("qc.s.wf", wf_opts, ""),
            format_func=lambda x: scenario_sidebar.FORMAT_TITLES.get(x, x) if x else
            "By the rule ('Turbo'/'fp8' name, else the checkpoint's)"))
        submitted = st.form_submit_button("Check this price")
    if not submitted and "qc.s.last" not in st.session_state:
        return
    quote = (model, provider.strip() or "quote", float(p_in), None if p_c is None else float(p_c), float(p_out),
             None if s is None else float(s), hardware or None, wf or None)
    if submitted:
        st.session_state["qc.s.last"] = quote
    quote = st.session_state["qc.s.last"]
    try:
        res = check_one(cat_in_use.token, sc, tier, rate, gens, speed_default, quote, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.md(f"{exc}"), icon=":material/error:")
        return
    r = res.summary.row(0, named=True)
    k = st.columns(4)
    k[0].metric("Verdict", VERDICT_LABELS[r["verdict"]], help=VERDICT_HELP[r["verdict"]])
    k[1].metric("Blended price", _money(r["price_usd_per_m_blended_tokens"], 3) + "/M")
    k[2].metric("Modeled floor", _money(r["floor_usd_per_m_blended_tokens"], 3) + "/M"
                if r["floor_usd_per_m_blended_tokens"] is not None else "none in scope")
    k[3].metric("Gross margin", r["margin_text"] or "–", help="bounded and in words: a price far below its floor "
                "reads as the ratio, one below the power cost alone says so")
    st.markdown(safe_text.md(name_ids(r["reason"], _names(cat)[1]).split(": ", 1)[1]))
    for note in decoding_notes(res.summary, sc.decoding(), cat):  # what this floor used
        st.caption(safe_text.md(note[0].upper() + note[1:]))
    try:
        alt = alternatives_one(cat_in_use.token, sc, tier, rate, speed_default, quote, _catalog=cat)
        st.markdown("**How robust the verdict is**: the floor taken on each generation (rows) at each speed "
                    "(columns; * the quote's)")
        st.dataframe(alt, hide_index=True, key="qc.s.alternatives")
    except EconError as exc:
        st.caption(safe_text.md(f"No alternatives: {exc}"))
    shown = res.summary.select(SINGLE_COLUMNS)
    st.dataframe(_display(shown, cat), column_config=_column_config(shown), hide_index=True, key="qc.s.table",
                 placeholder=table.PLACEHOLDER)


def _kept_position(key: str, options: list, default) -> int:
    """The index a select widget ``key`` starts from: its kept value's (:func:`state.kept`: the tab was closed in
    between), else ``default``'s, else 0 (a catalog without either)."""
    for value in (state.kept(key, default), default):
        if value in options:
            return options.index(value)
    return 0


def _pnl_defaults(cat) -> dict:
    from econ.analyses.provider_economics import load_disclosure
    d = memory.memo(load_disclosure, data_dir=cat.data_dir, key=str(cat.data_dir),  # a file read once per change
                    files=[Path(cat.data_dir) / "provider_disclosures.csv", DEFAULT_DATA_DIR / "provider_disclosures.csv"])
    return {"gpus": d.inputs["gpu_hours_per_day"] / 24.0, **d.inputs, "model": d.model, "hardware": d.hardware,
            "speed": d.output_tokens_per_s_per_user, "weight_format": d.weight_format, "source": d.source,
            "as_of": d.as_of, "reported": d.reported}


def _pnl_form(cat, cat_in_use, sc) -> None:
    try:
        dflt = _pnl_defaults(cat)
    except EconError as exc:
        st.error(safe_text.md(f"{exc}"), icon=":material/error:")
        return
    st.caption(f"A provider's day: GPUs and their $/GPU-hour, tokens served, cache hits and prices, against econ's "
               f"cheapest deployment for the same traffic on the same accelerator at the same $/GPU-hour and speed "
               f"per user. Defaults: DeepSeek's own figures (V3/R1 inference, {dflt['as_of']}, "
               f"open-infra-index day 6: $87,072 per day, $562,027 theoretical revenue, 545% cost-profit margin).")
    models = dict(cat.models.select("id", "display_name").rows())
    gpus_names = dict(cat.accelerators.select("id", "display_name").rows())
    with st.form("qc.pnl"):
        def number(col, label, key, default, **kw):  # the value kept while the tab was closed, else the default
            return col.number_input(label, value=state.kept(key, default), key=key, **kw)

        a, b, c = st.columns(3)
        gpus = number(a, "GPUs serving (average)", "qc.p.gpus", float(dflt["gpus"]), min_value=1.0, max_value=1e7,
                      step=8.0)
        rate = number(b, "$ per GPU-hour", "qc.p.rate", float(dflt["usd_per_gpu_hour"]), min_value=0.01,
                      max_value=1000.0, step=0.1)
        speed = number(c, "Output speed (tokens/s per user)", "qc.p.speed", float(dflt["speed"]), min_value=0.1,
                       max_value=100_000.0, step=1.0)
        d, e, f = st.columns(3)
        t_in = number(d, "Input tokens per day (billions)", "qc.p.in", dflt["input_tokens_per_day"] / 1e9,
                      min_value=0.0, max_value=1e7, step=1.0)
        t_c = number(e, "of which cache hits (billions)", "qc.p.cached", dflt["cached_input_tokens_per_day"] / 1e9,
                     min_value=0.0, max_value=1e7, step=1.0)
        t_out = number(f, "Output tokens per day (billions)", "qc.p.out", dflt["output_tokens_per_day"] / 1e9,
                       min_value=0.0, max_value=1e7, step=1.0)
        g, h, i = st.columns(3)
        p_in = number(g, "Input price ($ per M, cache miss)", "qc.p.pin", float(dflt["usd_per_m_input_tokens"]),
                      min_value=0.0, max_value=10_000.0, step=0.01, format="%.4f")
        p_c = number(h, "Cached input price ($ per M)", "qc.p.pc", float(dflt["usd_per_m_cached_input_tokens"]),
                     min_value=0.0, max_value=10_000.0, step=0.01, format="%.4f")
        p_out = number(i, "Output price ($ per M)", "qc.p.pout", float(dflt["usd_per_m_output_tokens"]),
                       min_value=0.0, max_value=10_000.0, step=0.01, format="%.4f")
        j, k = st.columns(2)
        model = j.selectbox("Model served", list(models), format_func=models.get, key="qc.p.model",
                            index=_kept_position("qc.p.model", list(models), dflt["model"]))
        hardware = k.selectbox("Accelerator", list(gpus_names), format_func=gpus_names.get, key="qc.p.hw",
                               index=_kept_position("qc.p.hw", list(gpus_names), dflt["hardware"]))
        asked = st.form_submit_button("Compute the P&L")
    for k, v in (("gpus", gpus), ("rate", rate), ("speed", speed), ("in", t_in), ("cached", t_c), ("out", t_out),
                 ("pin", p_in), ("pc", p_c), ("pout", p_out), ("model", model), ("hw", hardware)):
        state.keep(f"qc.p.{k}", v)  # brought back when the tab opens again (state.kept)
    inputs = (("gpu_hours_per_day", float(gpus) * 24.0), ("usd_per_gpu_hour", float(rate)),
              ("input_tokens_per_day", float(t_in) * 1e9), ("cached_input_tokens_per_day", float(t_c) * 1e9),
              ("output_tokens_per_day", float(t_out) * 1e9), ("usd_per_m_input_tokens", float(p_in)),
              ("usd_per_m_cached_input_tokens", float(p_c)), ("usd_per_m_output_tokens", float(p_out)))
    wf = dflt["weight_format"] if model == dflt["model"] else None
    if asked:
        st.session_state["qc.p.asked"] = True
    try:
        if st.session_state.get("qc.p.asked"):
            reported, modeled = provider_pnl_page(cat_in_use.token, sc, inputs, model, hardware, float(speed), wf,
                                                  _catalog=cat)
        else:  # the floor is a search of its own: run on request, as "Check one price" is
            from econ.analyses.provider_economics import provider_pnl

            reported, modeled = {k: float(v) for k, v in provider_pnl(**dict(inputs)).items()}, None
    except EconError as exc:
        st.error(safe_text.md(f"{exc}"), icon=":material/error:")
        return
    k = st.columns(2 if modeled is None else 4)
    mine = k if modeled is None else (k[0], k[2])
    mine[0].metric("Provider's cost per M tokens", _money(reported["usd_per_m_tokens"], 3),
                   help="Cost per day over input + output tokens")
    mine[1].metric("Provider's gross margin", _frac(reported["gross_margin_frac"]),
                   help=f"Revenue {_money(reported['revenue_usd_per_day'])} per day; cost-profit ratio "
                        f"{reported['cost_profit_margin_frac']:.1%} ((revenue - cost) / cost)")
    if modeled is None:
        st.caption("Press **Compute the P&L** to put econ's modeled floor beside these figures: the cheapest "
                   "deployment for the same traffic on the same accelerator, at the same $/GPU-hour and speed per "
                   "user (a search of every layout and batch, about a second).")
        return
    k[1].metric("Floor's cost per M tokens", _money(modeled["usd_per_m_tokens"], 3),
                help="econ's cheapest deployment for the same traffic, same accelerator, $/GPU-hour and speed")
    k[3].metric("Floor's gross margin", _frac(modeled["gross_margin_frac"]),
                help="The same revenue over the modeled floor's cost")
    rows = [("GPU-hours per day", "gpu_hours_per_day", "n"), ("Cost per day", "cost_usd_per_day", "$"),
            ("Cost per M tokens (input + output)", "usd_per_m_tokens", "$3"),
            ("Revenue per day", "revenue_usd_per_day", "$"), ("Gross profit per day", "profit_usd_per_day", "$"),
            ("Gross margin", "gross_margin_frac", "%"), ("Cost-profit ratio", "cost_profit_margin_frac", "%")]

    def fmt(v, kind):
        from econ.formatting import MISSING
        if v is None:
            return MISSING
        return (f"{v:,.0f}" if kind == "n" else _money(v) if kind == "$" else _money(v, 3) if kind == "$3"
                else f"{v:.1%}")

    frame = pl.DataFrame({"Metric": [r[0] for r in rows],
                          "Provider": [fmt(reported.get(r[1]), r[2]) for r in rows],
                          "econ's modeled floor": [fmt(modeled.get(r[1]), r[2]) for r in rows]})
    st.dataframe(frame, hide_index=True, key="qc.p.table", placeholder=table.PLACEHOLDER)
    if modeled.get("gpus") is not None:
        band = ("" if modeled.get("cost_usd_per_day_low") is None else
                f" Calibration band of the floor: {_money(modeled['cost_usd_per_day_low'])} to "
                f"{_money(modeled['cost_usd_per_day_high'])} per day, gross margin "
                f"{_frac(modeled['gross_margin_frac_low'])} to {_frac(modeled['gross_margin_frac_high'])}.")
        st.caption(safe_text.md(
            f"Modeled floor: {modeled['floor_num_gpus']} x {gpus_names[hardware]} per instance "
            f"({modeled['floor_layout']}, batch {modeled['floor_batch_size']:,}, "
            f"{modeled['floor_tokens_per_s_per_user']:.1f} tokens/s per user), {modeled['gpus']:,.0f} GPUs busy "
            f"on average; verdict on the blended price: {VERDICT_LABELS[modeled['verdict']].lower()}.{band}"))
    with st.expander("Why (the floor's reason)"):
        st.markdown(safe_text.md(name_ids(modeled["reason"], _names(cat)[1])))


if __name__ == "__main__":
    render()
