"""Altair charts built from result frames: pure functions, frame in, chart out.

Every axis, legend and tooltip title comes from one map, :data:`econ.vocabulary.COLUMNS` (column -> human title with
its unit, Vega/d3 number format, Streamlit table format, display scale), so no chart or table shows a
raw snake_case name. Colours are the Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design"),
distinguishable under the common forms of colour blindness.
"""

from __future__ import annotations

import json

import altair as alt
import polars as pl

from econ.vocabulary import COLUMNS, column_title

OKABE_ITO: tuple[str, ...] = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
"""Okabe-Ito colour-blind-safe palette (blue, orange, green, purple, sky blue, vermillion, yellow, black)."""

MAX_SERIES = len(OKABE_ITO)
"""Most lines one chart draws: one distinguishable colour each."""

COST_PART_COLOURS = {"capex": "#0072B2", "facility": "#E69F00", "opex": "#CC79A7", "power": "#D55E00",
                     "rental": "#009E73"}
COST_PART_TITLES = {"capex": "Accelerator capex", "facility": "Facility capex", "opex": "Opex",
                    "power": "Power", "rental": "Rental"}

WALL_TITLES = {"memory": "Memory", "compute": "Compute", "capacity": "KV capacity", "network": "Network"}
"""Short names of the binding walls (memory = HBM bandwidth; capacity = the KV cache does not fit)."""


TITLE_CHARS = 46
"""Chart titles longer than this wrap onto lines (a phone's screen shows ~46 characters of a title)."""


def chart_title(text: str, subtitle: str | None = None) -> alt.TitleParams:
    """A chart title that wraps instead of being cut ("Cheapest deployment per accelerator meeti...")."""
    import textwrap

    lines = textwrap.wrap(text, TITLE_CHARS) or [text]
    kw = {"subtitle": textwrap.wrap(subtitle, TITLE_CHARS + 10)} if subtitle else {}
    return alt.TitleParams(text=lines if len(lines) > 1 else text, anchor="start", **kw)


def _fmt(column: str) -> str:
    return COLUMNS[column].d3 if column in COLUMNS else ""


def _scaled(frame: pl.DataFrame, columns) -> pl.DataFrame:
    """Apply each column's display scale (USD -> $M, s -> ms) for plotting."""
    exprs = [(pl.col(c) * COLUMNS[c].scale).alias(c) for c in columns
             if c in COLUMNS and COLUMNS[c].scale != 1.0 and c in frame.columns]
    return frame.with_columns(exprs) if exprs else frame


def tooltip(columns) -> list[alt.Tooltip]:
    """Tooltips with human titles and formats."""
    return [alt.Tooltip(c, title=column_title(c), format=_fmt(c)) if _fmt(c) else alt.Tooltip(c, title=column_title(c))
            for c in columns]


def _x(column, *, log=False, domain=None):
    if log:
        scale = alt.Scale(type="log", domain=domain) if domain else alt.Scale(type="log")
    else:
        scale = alt.Scale(domain=domain) if domain else alt.Undefined
    return alt.X(column, type="quantitative", title=column_title(column), scale=scale,
                 axis=alt.Axis(format=_fmt(column) if not log else ",~r", labelOverlap=True))


def _y(column, *, log=False):
    fmt = _fmt(column)
    if log:
        fmt = fmt.replace(".3f", ".3~f").replace(".2f", ".2~f").replace(",.0f", ",~r")
    return alt.Y(column, type="quantitative", title=column_title(column),
                 scale=alt.Scale(type="log") if log else alt.Undefined,
                 axis=alt.Axis(format=fmt, labelOverlap=True, titleLimit=260))


def top_series(frame: pl.DataFrame, series: str, *, n: int = MAX_SERIES, min_tokens_per_s_per_user: float = 0.0,
               cost: str | None = None, speed: str = "tokens_per_s_per_user") -> list:
    """The ``n`` most relevant series of a frontier frame, best first: cheapest at the speed floor.

    Relevance, in order: the lowest cost (``cost``, default the first of ``usd_per_m_output_tokens_all_in`` /
    ``usd_per_m_output_tokens`` / ``usd_per_m_blended_tokens`` present) among the series' points at or above
    ``min_tokens_per_s_per_user``; series with no such point follow, by their highest ``speed``. So a
    chart keeps H200 and MI300X rather than the first eight names in alphabetical order.

    Parameters
    ----------
    frame : pl.DataFrame
        One row per point, with the ``series`` column.
    series : str
        The column naming a line (``hardware``, ``series``).
    """
    if frame.height == 0 or series not in frame.columns:
        return []
    if cost is None:
        cost = next((c for c in ("usd_per_m_output_tokens_all_in", "usd_per_m_output_tokens",
                                 "usd_per_m_blended_tokens") if c in frame.columns), None)
    if cost is None or speed not in frame.columns:
        return frame[series].unique(maintain_order=True).to_list()[:n]
    ok = pl.col(speed) >= min_tokens_per_s_per_user
    ranked = (frame.group_by(series, maintain_order=True)
              .agg(pl.col(cost).filter(ok).min().alias("_best"), pl.col(speed).max().alias("_fastest"))
              .sort([pl.col("_best").is_null(), "_best", pl.col("_fastest")], descending=[False, False, True],
                    nulls_last=True))
    return ranked[series].to_list()[:n]


# ---------------------------------------------------------------------------------------------
# Cost explorer
# ---------------------------------------------------------------------------------------------

def batch_curve_chart(curve: pl.DataFrame, *, max_batch: int, sweet_spot: float | None,
                      selected_batch: int | None = None, selected_row: dict | None = None, width: int = 400,
                      height: int = 280) -> dict:
    """$/M output tokens and output tokens/s per GPU against batch size (log axis), with the two walls.

    Returns a Vega-Lite ``hconcat`` spec as a dict, data as named Polars datasets (split into panels by
    :func:`panels`).

    Parameters
    ----------
    curve : pl.DataFrame
        Rows of :func:`econ.analyses.sweep.batch_curve` (feasible rows are plotted).
    max_batch : int
        KV-cache capacity wall (``max_batch_size``): a vertical rule.
    sweet_spot : float or None
        Memory/compute crossover batch; None = decode never turns compute-bound (no rule).
    selected_batch : int, optional
        The batch the KPIs use: a highlighted point (when that batch is a row of ``curve``).
    selected_row : dict, optional
        The KPIs' own result row (``cost_table(...).row(0, named=True)``): its point is marked where it
        is, on the curve's grid or not (the sweet-spot batch usually is not).
    """
    cols = ["batch_size", "usd_per_m_output_tokens", "output_tokens_per_s_per_gpu", "tokens_per_s_per_user",
            "tpot_s", "binding_wall"]
    data = _scaled(curve.filter(pl.col("feasible")).select(cols), cols)
    hi = max(max_batch, sweet_spot or 1.0) * 1.3
    domain = [1, max(hi, 2)]
    rules = [{"batch_size": float(max_batch), "label": f"KV-cache wall at {max_batch:,}"}]
    if sweet_spot is not None and sweet_spot <= domain[1]:
        rules.append({"batch_size": float(sweet_spot),
                      "label": f"Memory/compute crossover at {sweet_spot:,.0f}"})
    rules_df = pl.DataFrame(rules)
    if selected_row is not None and selected_row.get("feasible", True) and all(
            selected_row.get(c) is not None for c in cols):
        sel = _scaled(pl.DataFrame([{c: selected_row[c] for c in cols}], schema=curve.select(cols).schema), cols)
    elif selected_batch is not None:
        sel = data.filter(pl.col("batch_size") == selected_batch)
    else:
        sel = data.head(0)
    if len(sel):  # the axis reaches the marked point
        domain = [min(domain[0], float(sel["batch_size"].min())), max(domain[1], float(sel["batch_size"].max()) * 1.3)]
    labels = [r["label"] for r in rules]
    rule_colour = {"field": "label", "type": "nominal", "title": "Batch-size walls (sequences)", "sort": labels,
                   "scale": {"domain": labels, "range": [OKABE_ITO[5], OKABE_ITO[2]][:len(rules)]},
                   "legend": {"orient": "bottom", "labelLimit": 320, "direction": "vertical"}}
    x = {"field": "batch_size", "type": "quantitative", "title": column_title("batch_size"),
         "scale": {"type": "log", "domain": domain}, "axis": {"format": ",~r", "labelOverlap": True}}
    tips = _vl_tooltip(data, cols)
    datasets = {"curve": data, "walls": rules_df}
    if len(sel):
        datasets["marked"] = sel

    def panel(y_col, colour, log_y):
        fmt = _fmt(y_col)
        if log_y:
            fmt = fmt.replace(".3f", ".3~f").replace(".2f", ".2~f").replace(",.0f", ",~r")
        y = {"field": y_col, "type": "quantitative", "title": column_title(y_col),
             "axis": {"format": fmt, "labelOverlap": True, "titleLimit": 260}}
        if log_y:
            y["scale"] = {"type": "log"}
        layers = [{"data": {"name": "curve"}, "mark": {"type": "line", "color": colour,
                                                        "point": {"color": colour, "size": 28}},
                   "encoding": {"x": x, "y": y, "tooltip": tips}},
                  {"data": {"name": "walls"}, "mark": {"type": "rule", "strokeDash": [6, 4], "strokeWidth": 2},
                   "encoding": {"x": {"field": "batch_size", "type": "quantitative"}, "color": rule_colour,
                                "tooltip": [{"field": "label", "type": "nominal", "title": "Marker"}]}}]
        if len(sel):
            layers.append({"data": {"name": "marked"},
                           "mark": {"type": "point", "size": 140, "filled": True, "color": "#000000",
                                    "shape": "diamond"},
                           "encoding": {"x": {"field": "batch_size", "type": "quantitative"},
                                        "y": {"field": y_col, "type": "quantitative"}, "tooltip": tips}})
        import textwrap
        head = column_title(y_col) + " vs batch size"
        lines = textwrap.wrap(head, TITLE_CHARS) or [head]
        return {"layer": layers, "width": width, "height": height,
                "title": {"text": lines if len(lines) > 1 else head, "anchor": "start"}}

    return {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "datasets": datasets,
            "hconcat": [panel("usd_per_m_output_tokens", OKABE_ITO[0], True),
                        panel("output_tokens_per_s_per_gpu", OKABE_ITO[1], False)]}


def panels(chart, *, height: int | None = None) -> list:
    """The side-by-side panels of an ``alt.hconcat`` chart, each as its own chart that fills its container.

    A page draws them in ``st.columns``: side by side on a desktop, one under the other on a phone,
    where a fixed-width concatenation would run off the screen. Data and datasets are carried over.
    """
    if isinstance(chart, dict):  # a spec built as a dict (batch_curve_chart): same treatment, no Altair
        if "hconcat" not in chart:
            return [chart]
        out = []
        for sub in chart["hconcat"]:
            one = {**{k: v for k, v in chart.items() if k != "hconcat"}, **sub, "width": "container",
                   "autosize": {"type": "fit-x", "contains": "padding"}}
            if height:
                one["height"] = height
            out.append(one)
        return out
    if not isinstance(chart, alt.HConcatChart):
        return [chart]
    out = []
    for sub in chart.hconcat:
        sub = sub.copy(deep=True)
        if getattr(chart, "datasets", alt.Undefined) is not alt.Undefined:
            sub.datasets = chart.datasets
        # fit the width only: the height stays the plot's, with the title and a bottom legend added to it
        # (Streamlit otherwise squeezes title, plot and legend into the plot's height)
        sub = sub.properties(width="container", autosize=alt.AutoSizeParams(type="fit-x", contains="padding"),
                             **({"height": height} if height else {}))
        out.append(sub)
    return out


# ---------------------------------------------------------------------------------------------
# Hardware comparison
# ---------------------------------------------------------------------------------------------

def names_expr(names: dict) -> str:
    """A Vega expression showing an axis or legend label (an id) as its display name: ids stay in the data, the
    URL and the downloads, a reader sees names (issue 19.3). Unknown ids show as themselves."""
    expr = "datum.label"
    for k, v in list(names.items())[::-1]:
        if v is None or k is None:
            continue
        expr = f"datum.label === {json.dumps(str(k))} ? {json.dumps(str(v))} : ({expr})"
    return expr


def cost_ranking_chart(best: pl.DataFrame, *, objective_title: str = "Cost ($ per M output tokens)",
                       width: int = 640) -> alt.Chart:
    """Ranked horizontal stacked bars: $/M tokens per accelerator split into capex, facility, opex, power, rental.

    Parameters
    ----------
    best : pl.DataFrame
        :attr:`econ.analyses.compare.Comparison.best` (rows with a rank are drawn, cheapest on top).
    """
    return _cost_ranking_layers(*_cost_ranking_frames(best), objective_title=objective_title, width=width)


def cost_ranking_spec(best: pl.DataFrame, *, objective_title: str = "Cost ($ per M output tokens)",
                      width: int = 640) -> dict:
    """The Vega-Lite dict of :func:`cost_ranking_chart` (equal to its ``to_dict``: tests/dashboards), built fast: the
    structure (accelerator order and names, cost parts drawn, titles) kept, the bars' data filled in
    (:func:`dashboards.components.chart.filled`)."""
    from dashboards.components import chart

    long, order, drawn, labels = _cost_ranking_frames(best)
    structure = (tuple(order), tuple(drawn), None if labels is None else tuple(labels.items()), objective_title, width)
    return chart.filled(_cost_ranking_template, structure, [long], key="cost_ranking_template", max_entries=16)


def _cost_ranking_template(order: tuple, drawn: tuple, labels, objective_title: str, width: int, schema: tuple) -> dict:
    """The spec of :func:`cost_ranking_chart` for this structure and frame schema, with empty data."""
    empty = pl.DataFrame(schema=dict(schema[0]))
    return _cost_ranking_layers(empty, list(order), list(drawn), None if labels is None else dict(labels),
                                objective_title=objective_title, width=width).to_dict(validate=False)


def _cost_ranking_frames(best: pl.DataFrame):
    """What :func:`cost_ranking_chart` draws: (the bars' long frame, accelerators in rank order, cost parts drawn,
    accelerator id -> display name for the axis or None)."""
    ranked = best.filter(pl.col("rank").is_not_null())
    parts = [p for p in COST_PART_TITLES if f"usd_per_m_tokens_{p}" in ranked.columns]
    keep = ["rank", "hardware", "display_name", "precision", "num_gpus", "batch_size", "binding_wall",
            "tokens_per_s_per_user", "usd_per_m_output_tokens", "usd_per_m_input_tokens", "usd_per_m_blended_tokens"]
    long = (ranked.select(keep + [f"usd_per_m_tokens_{p}" for p in parts])
            .unpivot(index=keep, on=[f"usd_per_m_tokens_{p}" for p in parts], variable_name="cost_part",
                     value_name="usd_per_m_tokens")
            .with_columns(pl.col("cost_part").str.replace("usd_per_m_tokens_", "")
                          .replace(COST_PART_TITLES))
            .filter(pl.col("usd_per_m_tokens") > 0))
    order = ranked["hardware"].to_list()
    present = set(long["cost_part"].to_list())
    drawn = [p for p in parts if COST_PART_TITLES[p] in present]  # no legend entry without a bar
    labels = dict(ranked.select("hardware", "display_name").iter_rows()) if "display_name" in ranked.columns else None
    return long, order, drawn, labels


def _cost_ranking_layers(long: pl.DataFrame, order: list, drawn: list, labels: dict | None, *, objective_title: str,
                         width: int) -> alt.Chart:
    """The chart of :func:`cost_ranking_chart` from its frame and structure (:func:`_cost_ranking_frames`)."""
    shown = [COST_PART_TITLES[p] for p in drawn]
    return alt.Chart(long).mark_bar(height={"band": 0.8}).encode(
        y=alt.Y("hardware:N", sort=order, title=column_title("hardware"),
                axis=alt.Axis(labelLimit=0, labelExpr=names_expr(labels))
                if labels is not None else alt.Axis(labelLimit=0)),
        x=alt.X("sum(usd_per_m_tokens):Q", title=objective_title,
                axis=alt.Axis(format="$,.3~f", titleLimit=0, labelOverlap=True)),
        color=alt.Color("cost_part:N", title=column_title("cost_part"),
                        scale=alt.Scale(domain=shown, range=[COST_PART_COLOURS[p] for p in drawn]),
                        legend=alt.Legend(orient="bottom", labelLimit=0, columns=max(1, len(drawn)))),
        order=alt.Order("cost_part:N"),
        tooltip=tooltip(["hardware", "cost_part", "usd_per_m_tokens", "usd_per_m_output_tokens",
                         "usd_per_m_input_tokens", "precision", "num_gpus", "batch_size", "binding_wall",
                         "tokens_per_s_per_user"]),
    ).properties(width=width, height=alt.Step(26),
                 title=chart_title("Cheapest deployment per accelerator meeting the tokens/s floor"))


def frontier_chart(frontier: pl.DataFrame, *, min_tokens_per_s_per_user: float | None = None,
                   measured: pl.DataFrame | None = None, height: int = 360) -> dict:
    """Output tokens/s per GPU against tokens/s per user, one line per accelerator (InferenceMAX style).

    At most :data:`MAX_SERIES` accelerators are drawn (one Okabe-Ito colour each): the ones the caller
    passed, else the :func:`top_series` by cost at the floor, never the first ones alphabetically. A
    shaded band when the frame carries ``output_tokens_per_s_per_gpu_low`` / ``_high``; public
    measurements (:func:`econ.tables.measured.measured_points`) as triangles with their source on hover.
    Returns the Vega-Lite spec as a dict (see :func:`cost_frontier_chart`).
    """
    import textwrap

    cols = ["display_name", "hardware", "precision", "num_gpus", "batch_size", "tokens_per_s_per_user",
            "output_tokens_per_s_per_gpu", "usd_per_m_output_tokens", "binding_wall"]
    hw = top_series(frontier, "hardware", min_tokens_per_s_per_user=min_tokens_per_s_per_user or 0.0)
    sel = frontier.filter(pl.col("hardware").is_in(hw))
    cols = [c for c in cols if c in sel.columns]
    colour = {"field": "hardware", "type": "nominal", "title": column_title("hardware"), "sort": hw,
              "scale": {"domain": hw, "range": list(OKABE_ITO[:len(hw)])},
              "legend": {"orient": "right", "labelLimit": 200}}
    if "display_name" in sel.columns:  # ids in the data, short names on the legend (a long one was cut at 200 px)
        from econ.formatting import short_accelerator_name
        colour["legend"]["labelExpr"] = names_expr({h: short_accelerator_name(n, max_chars=24) if n else h for h, n in
                                                    sel.select("hardware", "display_name").unique().iter_rows()})
    x = {"field": "tokens_per_s_per_user", "type": "quantitative", "title": column_title("tokens_per_s_per_user"),
         "scale": {"type": "log"}, "axis": {"format": ",~r", "labelOverlap": True}}
    yname = "output_tokens_per_s_per_gpu"
    y = {"field": yname, "type": "quantitative", "title": column_title(yname), "scale": {"type": "log"},
         "axis": {"format": ",~r", "labelOverlap": True, "titleLimit": 260}}
    datasets = {"frontier": sel.select(cols)}
    layers = []
    band = band_columns(sel, yname)
    if band:
        datasets["band"] = sel.select("hardware", "tokens_per_s_per_user", *band)
        layers.append({"data": {"name": "band"}, "mark": {"type": "area", "opacity": 0.18},
                       "encoding": {"x": x, "y": {**y, "field": band[0]}, "y2": {"field": band[1]}, "color": colour,
                                    "order": {"field": "tokens_per_s_per_user", "type": "quantitative"}}})
    layers.append({"data": {"name": "frontier"}, "mark": {"type": "line", "interpolate": "linear", "point": {"size": 30}},
                   "encoding": {"x": x, "y": y, "color": colour,
                                "order": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                "tooltip": _vl_tooltip(sel, cols)}})
    if measured is not None and measured.height:
        m = measured.filter(pl.col("hardware").is_in(hw))
        if m.height:
            mcols = [c for c in MEASURED_TOOLTIP if c in m.columns]
            datasets["measured"] = m.select(mcols).with_columns(kind=pl.lit("Measured (public benchmark)"))
            layers.append({"data": {"name": "measured"},
                           "mark": {"type": "point", "shape": "triangle-up", "filled": True, "size": 90,
                                    "opacity": 0.9, "stroke": "#000000", "strokeWidth": 0.6},
                           "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                        "y": {"field": yname, "type": "quantitative"}, "color": colour,
                                        "shape": {"field": "kind", "type": "nominal", "title": column_title("kind"),
                                                  "scale": {"range": ["triangle-up"]},
                                                  "legend": {"orient": "bottom", "labelLimit": 0}},
                                        "tooltip": _vl_tooltip(m, mcols)}})
    if min_tokens_per_s_per_user:
        datasets["floor"] = pl.DataFrame({"tokens_per_s_per_user": [float(min_tokens_per_s_per_user)],
                                          "label": [f"Floor: {min_tokens_per_s_per_user:g} tokens/s per user"]})
        layers.append({"data": {"name": "floor"}, "mark": {"type": "rule", "strokeDash": [6, 4], "color": "#555555"},
                       "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                    "tooltip": [{"field": "label", "type": "nominal", "title": "Marker"}]}})
        layers.append({"data": {"name": "floor"},
                       "mark": {"type": "text", "align": "left", "dx": 4, "baseline": "top", "color": "#555555"},
                       "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                    "y": {"value": 4}, "text": {"field": "label", "type": "nominal"}}})
    head = "Throughput vs interactivity"
    return {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "datasets": datasets, "layer": layers,
            "width": "container", "height": height, "autosize": {"type": "fit-x", "contains": "padding"},
            "title": {"text": head, "anchor": "start",
                      "subtitle": textwrap.wrap("Pareto frontier per accelerator", TITLE_CHARS + 10)}}


# ---------------------------------------------------------------------------------------------
# Cluster
# ---------------------------------------------------------------------------------------------

def mfu_scale_chart(scale: pl.DataFrame, *, num_gpus: int, width: int = 330, height: int = 260) -> alt.HConcatChart:
    """MFU and realized compute against cluster size (log axis), the chosen size marked."""
    cols = ["num_gpus", "mfu_frac", "realized_frac_of_peak", "realized_flop_per_s", "peak_flop_per_s",
            "cluster_mtbf_h", "prob_failure_in_window_frac"]
    data = _scaled(scale.select(cols), ["realized_flop_per_s", "peak_flop_per_s"])
    long = (scale.select("num_gpus", "mfu_frac", "realized_frac_of_peak")
            .unpivot(index="num_gpus", variable_name="series", value_name="fraction")
            .with_columns(pl.col("series").replace({"mfu_frac": "MFU", "realized_frac_of_peak":
                                                    "Realized (MFU x goodput)"})))
    chosen = data.filter(pl.col("num_gpus") == num_gpus)
    x = alt.X("num_gpus:Q", title="Cluster size (GPUs)", scale=alt.Scale(type="log"), axis=alt.Axis(format=",~s"))
    left = alt.layer(
        alt.Chart(long).mark_line(point=True).encode(
            x=x, y=alt.Y("fraction:Q", title="Share of peak (%)", axis=alt.Axis(format=".0%")),
            color=alt.Color("series:N", title="Series", scale=alt.Scale(range=[OKABE_ITO[0], OKABE_ITO[1]]),
                            legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0)),
            tooltip=[alt.Tooltip("num_gpus:Q", title="Cluster size (GPUs)", format=","),
                     alt.Tooltip("series:N", title="Series"), alt.Tooltip("fraction:Q", title="Share", format=".1%")]),
        alt.Chart(chosen).mark_point(size=150, filled=True, shape="diamond", color="#000000").encode(
            x="num_gpus:Q", y="mfu_frac:Q", tooltip=tooltip(cols)),
    ).properties(width=width, height=height, title=chart_title("MFU versus scale"))
    right = alt.layer(
        alt.Chart(data).mark_line(point=True, color=OKABE_ITO[2]).encode(
            x=x, y=_y("realized_flop_per_s", log=True), tooltip=tooltip(cols)),
        alt.Chart(chosen).mark_point(size=150, filled=True, shape="diamond", color="#000000").encode(
            x="num_gpus:Q", y="realized_flop_per_s:Q", tooltip=tooltip(cols)),
    ).properties(width=width, height=height, title=chart_title("Realized training compute versus scale"))
    return alt.hconcat(left, right)


def capex_power_chart(row: dict, *, width: int = 330, height: int = 140) -> alt.HConcatChart:
    """Capex split ($M) and power (MW) of one cluster as two horizontal bars.

    Drawn with :func:`dashboards.components.chart.show_panels` (each bar fills its column; on a 390 px phone the
    two stack), legends below, one entry a line."""
    capex = pl.DataFrame({"part": ["Accelerators, servers, network", "Facility"], "order": [0, 1],
                          "usd_m": [row["capex_accelerators_usd"] / 1e6, row["capex_facility_usd"] / 1e6]})
    power = pl.DataFrame({"part": ["IT load", "Cooling, losses (PUE)"], "order": [0, 1],
                          "mw": [row["it_power_mw"], row["facility_power_mw"] - row["it_power_mw"]]})
    left = alt.Chart(capex).mark_bar().encode(
        x=alt.X("sum(usd_m):Q", title="Capex ($M)", axis=alt.Axis(format="$,.0f")),
        color=alt.Color("part:N", title="Capex part", sort=["Accelerators, servers, network", "Facility"],
                        scale=alt.Scale(domain=["Accelerators, servers, network", "Facility"],
                                        range=[OKABE_ITO[0], OKABE_ITO[1]]),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0)),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("part:N", title="Part"), alt.Tooltip("usd_m:Q", title="Capex ($M)", format="$,.1f")],
    ).properties(width=width, height=height // 2, title=chart_title("Capex split"))
    power_parts = ["IT load", "Cooling, losses (PUE)"]
    right = alt.Chart(power).mark_bar().encode(
        x=alt.X("sum(mw):Q", title="Power (MW)", axis=alt.Axis(format=",.1f")),
        color=alt.Color("part:N", title="Power part", sort=power_parts,
                        scale=alt.Scale(domain=power_parts, range=[OKABE_ITO[2], OKABE_ITO[5]]),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0)),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("part:N", title="Part"), alt.Tooltip("mw:Q", title="Power (MW)", format=",.2f")],
    ).properties(width=width, height=height // 2, title=chart_title("Facility power"))
    return alt.hconcat(left, right).resolve_scale(color="independent")


# ---------------------------------------------------------------------------------------------
# Cost versus interactivity (issue 11): frontiers, levels, measured points, uncertainty bands
# ---------------------------------------------------------------------------------------------

def band_columns(frame: pl.DataFrame | None, column: str) -> tuple[str, str] | None:
    """``(column_low, column_high)`` when the frame carries an uncertainty band for ``column``, else None."""
    if frame is None:
        return None
    lo, hi = f"{column}_low", f"{column}_high"
    return (lo, hi) if lo in frame.columns and hi in frame.columns else None


MEASURED_TOOLTIP = ("hardware", "source_label", "scenario", "precision", "num_gpus", "concurrency", "input_len",
                    "output_len", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "measurement_basis",
                    "speculative_decoding", "as_of", "case_id")


def _vl_field(frame: pl.DataFrame, column: str, **extra) -> dict:
    """A Vega-Lite field definition with the column's human title and format (quantitative or nominal)."""
    numeric = column in frame.columns and frame.schema[column].is_numeric()
    out = {"field": column, "type": "quantitative" if numeric else "nominal", "title": column_title(column)}
    if numeric and _fmt(column):
        out["format"] = _fmt(column)
    out.update(extra)
    return out


def _vl_tooltip(frame: pl.DataFrame, columns) -> list[dict]:
    return [_vl_field(frame, c) for c in dict.fromkeys(columns) if c in frame.columns]


def cost_frontier_chart(frontier: pl.DataFrame, *, y: str = "usd_per_m_output_tokens", series: str = "hardware",
                        order: list | None = None, levels=(), picks: pl.DataFrame | None = None,
                        measured: pl.DataFrame | None = None, min_tokens_per_s_per_user: float | None = None,
                        log_y: bool = True, height: int = 360, title_text: str = "Cost versus interactivity",
                        subtitle: str | None = "Pareto frontier per accelerator") -> dict:
    """A y metric (cost by default) against output tokens/s per user, one line per series (InferenceX style).

    Returns the Vega-Lite spec as a dict (built directly, with the data as named Polars datasets that
    Streamlit sends as Arrow): a chart of several hundred points and six layers builds in a few
    milliseconds instead of Altair's ~100 ms, which keeps a rerun of the page under its budget.

    Parameters
    ----------
    frontier : pl.DataFrame
        Frontier points with ``tokens_per_s_per_user``, ``y`` and ``series``. When it carries
        ``{y}_low`` / ``{y}_high`` (the engine's uncertainty band) a shaded band is drawn under each line;
        without them, none.
    series : str
        The column naming a line (``hardware``, ``series``, ``setup_label``). With ``hardware`` and a
        ``display_name`` column, the legend shows the names (the ids stay in the data).
    order : list, optional
        Series to draw, best first (default :func:`top_series` by cost at the floor; at most
        :data:`MAX_SERIES`).
    levels : sequence of float
        Interactivity levels: a dashed rule each, labelled.
    picks : pl.DataFrame, optional
        The point read at each level (:func:`econ.analyses.compare.value_at_interactivity` rows with ``series``,
        ``at_tokens_per_s_per_user``, ``tokens_per_s_per_user`` and ``y``): hollow rings.
    measured : pl.DataFrame, optional
        Public measurements (:func:`econ.tables.measured.measured_points`, priced with :func:`econ.tables.measured.with_cost`
        when ``y`` is a cost) with ``series``: triangles, the source on hover.
    min_tokens_per_s_per_user : float, optional
        A speed floor: a dotted rule.
    """
    names = order if order is not None else top_series(
        frontier, series, min_tokens_per_s_per_user=min_tokens_per_s_per_user or 0.0,
        cost=y if y.startswith("usd_per_m") else None)
    present = set(frontier[series].to_list()) if series in frontier.columns else set()
    names = [n for n in names if n in present][:MAX_SERIES]
    data = frontier.filter(pl.col(series).is_in(names))
    labels = (dict(data.select(series, "display_name").unique(subset=series).iter_rows())
              if "display_name" in data.columns and series == "hardware" else {})  # ids in the data, names drawn
    colour = {"field": series, "type": "nominal", "title": column_title(series), "sort": names,
              "scale": {"domain": names, "range": list(OKABE_ITO[:len(names)])},
              "legend": {"orient": "bottom", "columns": 1 if max((len(str(labels.get(n) or n)) for n in names),
                                                                 default=0) > 20 else 2,
                         "labelLimit": 0, "symbolType": "stroke", "symbolStrokeWidth": 3, "symbolOpacity": 1}}
    if labels:
        colour["legend"]["labelExpr"] = names_expr(labels)
    domain = cost_axis_domain(data, y, picks) if log_y and y.startswith("usd_per_m") else None
    yscale = {"type": "log", **({"domain": domain} if domain else {})} if log_y else {}
    yfmt = _fmt(y).replace(".3f", ".3~f").replace(".2f", ".2~f").replace(",.0f", ",~r")
    x = {"field": "tokens_per_s_per_user", "type": "quantitative", "title": column_title("tokens_per_s_per_user"),
         "scale": {"type": "log"}, "axis": {"format": ",~r", "labelOverlap": True}}

    def yq(col, axis=True):
        enc = {"field": col, "type": "quantitative", "title": column_title(y), "scale": yscale}
        if axis:
            enc["axis"] = {"format": yfmt, "labelOverlap": True, "titleLimit": 260}
        return enc

    band = band_columns(data, y)
    tip = [c for c in (series, "layout", "precision", "num_gpus", "total_gpus", "batch_size", "tokens_per_s_per_user",
                       "output_tokens_per_s_per_gpu", y, "usd_per_m_input_tokens", "usd_per_m_blended_tokens",
                       "ttft_s", "binding_wall", *(band or ())) if c in data.columns]
    tip = list(dict.fromkeys(tip))
    datasets = {"frontier": data.select(tip).sort(series, "tokens_per_s_per_user")}
    layers = []
    if band:
        datasets["band"] = data.select(series, "tokens_per_s_per_user", *band)
        layers.append({"data": {"name": "band"}, "mark": {"type": "area", "opacity": 0.18, "clip": True},
                       "encoding": {"x": x, "y": yq(band[0]), "y2": {"field": band[1]}, "color": colour,
                                    "order": {"field": "tokens_per_s_per_user", "type": "quantitative"}}})
    layers.append({"data": {"name": "frontier"},
                   "mark": {"type": "line", "clip": True, "point": {"size": 26}},
                   "encoding": {"x": x, "y": yq(y), "color": colour,
                                "order": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                "tooltip": _vl_tooltip(data, tip)}})
    if levels:
        lv = sorted(float(v) for v in levels)
        datasets["levels"] = pl.DataFrame({"tokens_per_s_per_user": lv, "level_label": [f"{v:g} tok/s" for v in lv],
                                           "label_y": [2.0 + 12.0 * (i % 3) for i in range(len(lv))]})
        layers.append({"data": {"name": "levels"}, "mark": {"type": "rule", "strokeDash": [4, 4], "color": "#777777"},
                       "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                    "tooltip": [{"field": "level_label", "type": "nominal",
                                                 "title": column_title("level_label")}]}})
        layers.append({"data": {"name": "levels"},
                       "mark": {"type": "text", "align": "left", "dx": 3, "baseline": "top", "color": "#555555",
                                "fontSize": 10},
                       "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                    # labels of nearby levels staggered (pixels from the top) so they never overlap
                                    "y": {"field": "label_y", "type": "quantitative", "scale": None},
                                    "text": {"field": "level_label", "type": "nominal"}}})
    if min_tokens_per_s_per_user:
        datasets["floor"] = pl.DataFrame({"tokens_per_s_per_user": [float(min_tokens_per_s_per_user)],
                                          "level_label": [f"Floor {min_tokens_per_s_per_user:g}"]})
        layers.append({"data": {"name": "floor"},
                       "mark": {"type": "rule", "strokeDash": [1, 3], "strokeWidth": 2, "color": "#000000"},
                       "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                    "tooltip": [{"field": "level_label", "type": "nominal", "title": "Speed floor"}]}})
    if picks is not None and picks.height and series in picks.columns and y in picks.columns:
        p = picks.filter(pl.col(series).is_in(names) & pl.col(y).is_not_null())
        ptip = [c for c in (series, "at_tokens_per_s_per_user", "tokens_per_s_per_user", y, "output_tokens_per_s_per_gpu",
                            "output_tokens_per_usd", "output_tokens_per_s_per_mw", "layout", "precision", "batch_size")
                if c in p.columns]
        if p.height:
            datasets["picks"] = p.select(list(dict.fromkeys(ptip)))
            layers.append({"data": {"name": "picks"},
                           "mark": {"type": "point", "size": 150, "filled": False, "strokeWidth": 2.5, "clip": True},
                           "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                        "y": yq(y, axis=False), "color": colour, "tooltip": _vl_tooltip(p, ptip)}})
    if measured is not None and measured.height and y in measured.columns and series in measured.columns:
        m = measured.filter(pl.col(series).is_in(names) & pl.col(y).is_not_null())
        if m.height:
            mcols = list(dict.fromkeys([series, *[c for c in MEASURED_TOOLTIP if c in m.columns], y]))
            datasets["measured"] = m.select(mcols).with_columns(kind=pl.lit("Measured (public benchmark)"))
            layers.append({"data": {"name": "measured"},
                           "mark": {"type": "point", "shape": "triangle-up", "filled": True, "size": 90, "clip": True,
                                    "opacity": 0.9, "stroke": "#000000", "strokeWidth": 0.6},
                           "encoding": {"x": {"field": "tokens_per_s_per_user", "type": "quantitative"},
                                        "y": yq(y, axis=False), "color": colour,
                                        "tooltip": _vl_tooltip(m, mcols)}})  # triangles: told in the caption
    import textwrap
    lines = textwrap.wrap(title_text, TITLE_CHARS) or [title_text]
    head = {"text": lines if len(lines) > 1 else title_text, "anchor": "start"}
    if subtitle:
        head["subtitle"] = textwrap.wrap(subtitle, TITLE_CHARS + 10)
    return {"$schema": "https://vega.github.io/schema/vega-lite/v6.json", "datasets": datasets, "layer": layers,
            "resolve": {"scale": {"color": "shared"}}, "width": "container", "height": height, "title": head,
            "autosize": {"type": "fit-x", "contains": "padding"}}


def cost_axis_domain(frontier: pl.DataFrame, y: str, picks: pl.DataFrame | None = None) -> list[float] | None:
    """A log-axis range for a cost frontier that keeps the informative part in view.

    Frontiers run up steeply near their fastest deployments (batch 1 on many GPUs costs 100x the
    floor); drawn whole, the cheap part is a flat line at the bottom. The range runs from 0.8x the
    cheapest point to the larger of 4x the dearest point read at a level and 12x the cheapest point;
    lines leave the top of the chart (clipped) rather than squash it.
    """
    if frontier.height == 0 or y not in frontier.columns:
        return None
    lo = frontier[y].min()
    if lo is None or not lo > 0:
        return None
    top = 12.0 * lo
    if picks is not None and y in picks.columns and picks[y].drop_nulls().len():
        top = max(top, 4.0 * float(picks[y].max()))
    hi = float(frontier[y].max())
    return [0.8 * float(lo), min(hi * 1.05, top)] if hi > 0 else None


def breakdown_chart(long: pl.DataFrame, *, label: str = "bar_label") -> dict:
    """Stacked horizontal bars: where each deployment's decode step goes (:func:`econ.analyses.breakdown.step_breakdown`).

    Parameters
    ----------
    long : pl.DataFrame
        Long rows with ``label`` (one bar each, in order of appearance), ``component``, ``title``,
        ``time_s`` and ``share_frac``; zero parts are not drawn (no legend entry without a bar).

    Returns the Vega-Lite spec as a dict (data as a named Polars dataset, see :func:`cost_frontier_chart`).
    """
    import textwrap

    from econ.analyses.breakdown import COMPONENT_TITLES, COMPONENTS

    colours = {"weights": OKABE_ITO[0], "kv_cache": OKABE_ITO[4], "gemm": OKABE_ITO[5], "attention": OKABE_ITO[1],
               "communication": OKABE_ITO[3], "overhead": "#999999", "prefill_chunks": OKABE_ITO[2],
               "other": OKABE_ITO[7]}
    data = _scaled(long.filter(pl.col("time_s") > 0), ["time_s"])
    present = [c for c in COMPONENTS if c in set(data["component"].to_list())]
    titles = [COMPONENT_TITLES[c] for c in present]
    bars = data[label].unique(maintain_order=True).to_list()
    order = {c: i for i, c in enumerate(COMPONENTS)}
    data = data.with_columns(_order=pl.col("component").replace_strict(order, return_dtype=pl.Int64)).select(
        label, "title", "time_s", "share_frac", "_order")
    head = "Time per output token, by part of the step"
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json", "datasets": {"parts": data},
        "data": {"name": "parts"}, "mark": {"type": "bar", "height": {"band": 0.7}},
        "encoding": {
            "y": {"field": label, "type": "nominal", "sort": bars, "title": None, "axis": {"labelLimit": 0}},
            "x": {"aggregate": "sum", "field": "time_s", "type": "quantitative", "title": column_title("time_s"),
                  "axis": {"format": ",~r", "labelOverlap": True}},
            "color": {"field": "title", "type": "nominal", "title": column_title("title"), "sort": titles,
                      "scale": {"domain": titles, "range": [colours[c] for c in present]},
                      "legend": {"orient": "bottom", "columns": 2, "labelLimit": 0}},
            "order": {"field": "_order", "type": "quantitative"},
            "tooltip": [{"field": label, "type": "nominal", "title": "Deployment"},
                        {"field": "title", "type": "nominal", "title": column_title("title")},
                        {"field": "time_s", "type": "quantitative", "title": column_title("time_s"), "format": ",.3f"},
                        {"field": "share_frac", "type": "quantitative", "title": column_title("share_frac"), "format": ".0%"}]},
        "width": "container", "height": {"step": 34}, "autosize": {"type": "fit-x", "contains": "padding"},
        "title": {"text": textwrap.wrap(head, TITLE_CHARS), "anchor": "start",
                  "subtitle": textwrap.wrap("Binding roofline side, exposed communication, overheads, prefill chunks",
                                            TITLE_CHARS + 10)}}


TORNADO_ENDS = {"low": "Assumption at its low", "high": "Assumption at its high"}
"""Legend of a tornado's two bar halves."""


def tornado_chart(tornado: pl.DataFrame, *, point: float, answer_title: str, answer_format: str = "$,.3f",
                  band: tuple[float, float] | None = None, width: int = 560) -> alt.LayerChart:
    """A tornado: per assumption, a bar from the point to the answer at the assumption's low and at its high.

    Parameters
    ----------
    tornado : pl.DataFrame
        :attr:`econ.analyses.sensitivity.Sensitivity.tornado` (``rank``, ``label``, ``low``, ``high``,
        ``answer_at_low``, ``answer_at_high``, ``swing``, ``source``), largest swing first (drawn on top).
    point : float
        The answer with every assumption at the scenario's value (the vertical rule).
    answer_title : str
        The x axis title with its unit ("Cost ($ per M output tokens)").
    answer_format : str
        d3 format of the answer.
    band : (low, high), optional
        The Monte Carlo band (10th to 90th percentile), shaded behind the bars.

    Returns
    -------
    alt.LayerChart: bars (coloured by which end of the range), the point's rule, the band.
    """
    rows = tornado.filter(pl.col("answer_at_low").is_not_null() | pl.col("answer_at_high").is_not_null())
    order = rows["label"].to_list()
    long = pl.concat([
        rows.select("rank", "label", "source", pl.lit(TORNADO_ENDS[end]).alias("end"),
                    pl.col(end).alias("assumption_value"), pl.col(f"answer_at_{end}").alias("answer"))
        for end in ("low", "high")]).filter(pl.col("answer").is_not_null()).with_columns(point=pl.lit(float(point)))
    y = alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=0))
    fmt = answer_format
    bars = alt.Chart(long).mark_bar(height={"band": 0.7}).encode(
        y=y, x=alt.X("point:Q", title=answer_title, axis=alt.Axis(format=fmt, labelOverlap=True, titleLimit=0),
                     scale=alt.Scale(zero=False)),
        x2="answer:Q",
        color=alt.Color("end:N", title=None, scale=alt.Scale(domain=list(TORNADO_ENDS.values()),
                                                             range=[OKABE_ITO[0], OKABE_ITO[1]]),
                        legend=alt.Legend(orient="bottom")),
        tooltip=[alt.Tooltip("label:N", title="Assumption"), alt.Tooltip("end:N", title="End of its range"),
                 alt.Tooltip("assumption_value:Q", title="Value", format=",.4~g"),
                 alt.Tooltip("answer:Q", title=answer_title, format=fmt), alt.Tooltip("source:N", title="Source")])
    rule = alt.Chart(pl.DataFrame({"point": [float(point)]})).mark_rule(color=OKABE_ITO[7], strokeWidth=2).encode(
        x="point:Q", tooltip=[alt.Tooltip("point:Q", title="Point estimate", format=fmt)])
    layers = [bars, rule]
    if band is not None and all(b is not None for b in band):
        shade = alt.Chart(pl.DataFrame({"p10": [float(band[0])], "p90": [float(band[1])]})).mark_rect(
            color="#999999", opacity=0.18).encode(
            x="p10:Q", x2="p90:Q", tooltip=[alt.Tooltip("p10:Q", title="Monte Carlo 10th percentile", format=fmt),
                                            alt.Tooltip("p90:Q", title="Monte Carlo 90th percentile", format=fmt)])
        layers.insert(0, shade)
    return alt.layer(*layers).properties(
        width=width, height=alt.Step(26),
        title=chart_title("What moves this answer most",
                          "Bars: the answer at each end of a sourced range; rule: the point; grey: Monte Carlo "
                          "10th-90th percentile"))


def trend_chart(table: pl.DataFrame, *, width: int = 640) -> alt.LayerChart:
    """$/M output tokens by generation: a solid line through priced catalog parts, a dashed one to projections.

    Parameters
    ----------
    table : pl.DataFrame
        :attr:`econ.analyses.trend.Trend.table` (rows without a cost are left out; x order = the table's order).

    Notes
    -----
    The dashed segment starts at the last priced part, so a projection reads as an extrapolation of the line,
    never as one more measurement (issue 22: "shown apart: a dashed line").
    """
    cost = "usd_per_m_output_tokens_all_in"
    order = table["hardware"].to_list()
    drawn = table.filter(pl.col(cost).is_not_null())
    shipped = drawn.filter(pl.col("basis") == "catalog").with_columns(segment=pl.lit("Priced catalog part"),
                                                                      bridge=pl.lit(False))
    proj = drawn.filter(pl.col("basis") == "projection").with_columns(segment=pl.lit("Projection (announced specs)"),
                                                                      bridge=pl.lit(False))
    bridge = shipped.tail(1).with_columns(segment=pl.lit("Projection (announced specs)"), bridge=pl.lit(True)) \
        if proj.height else shipped.head(0)
    frame = pl.concat([shipped, bridge, proj], how="vertical_relaxed")
    from econ.formatting import short_accelerator_name

    names = dict(zip(table["hardware"].to_list(), (table["display_name"].to_list() if "display_name" in table.columns
                                                   else table["hardware"].to_list())))
    label = {h: short_accelerator_name(str(names.get(h) or h)) for h in order}  # a reader's name on the axis
    frame = frame.with_columns(accelerator=pl.col("hardware").replace_strict(label, default=pl.col("hardware")))
    domain = ["Priced catalog part", "Projection (announced specs)"]
    lo, hi = (float(drawn[cost].min()), float(drawn[cost].max())) if drawn.height else (0.01, 1.0)
    base = alt.Chart(frame).encode(
        x=alt.X("accelerator:N", sort=[label[h] for h in order], title="Accelerator",
                axis=alt.Axis(labelAngle=0, labelLimit=0)),
        y=alt.Y(f"{cost}:Q", scale=alt.Scale(type="log", domain=[lo / 1.5, hi * 1.5], nice=False),
                title=column_title(cost), axis=alt.Axis(format="$,.3~f", titleLimit=0, values=[
                    v for v in (m * 10.0 ** e for e in range(-4, 4) for m in (1, 2, 5)) if lo / 1.5 <= v <= hi * 1.5])),
        color=alt.Color("segment:N", title="Basis", scale=alt.Scale(domain=domain, range=[OKABE_ITO[0], OKABE_ITO[5]]),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=0)),  # whole at 390 px
        strokeDash=alt.StrokeDash("segment:N", scale=alt.Scale(domain=domain, range=[[1, 0], [6, 4]]), legend=None),
        tooltip=tooltip(["accelerator", "year", "availability", "basis", cost, "output_tokens_per_s_per_gpu",
                         "tokens_per_s_per_user", "precision", "layout", "cost_from", "remark"]))
    # the line through every row (the bridge joins the solid line to the dashed one); points only on real rows: the
    # bridge repeats the last priced part under the projection colour and drew an orange point on it (issue 19.6)
    line = base.mark_line()
    points = base.mark_point(filled=True, size=60, opacity=1).transform_filter(alt.datum.bridge == False)  # noqa: E712
    return alt.layer(line, points).properties(
        width=width, height=460, title=chart_title("Cost per M output tokens by generation (dashed: projected)"))
