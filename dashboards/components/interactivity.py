"""The headline section of Hardware comparison and the optimizer: cost versus interactivity.

Per accelerator, the frontier read at chosen interactivity levels (default 20 / 50 / 100 output tokens/s
per user): $/M output, input and blended tokens, output tokens/s per GPU, tokens per $1 and tokens/s per
provisioned MW (:func:`econ.analyses.compare.interactivity_table`), as a chart (the cost frontier with the levels,
the point read at each, the public measurements) and a table with downloads. The page computes nothing:
its frontier comes from its own econ call, the reading from ``econ.analyses.compare``, the measurements from
``econ.tables.measured``.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from dashboards import charts
from dashboards.components import chart, memory, safe_text, state, table
from econ.analyses.compare import LEVEL_COLUMN, interactivity_table, level_winners
from econ.tables.measured import measured_points, with_cost
from econ.io.scenario import SPECS, from_mapping

TABLE_COLUMNS = (LEVEL_COLUMN, "tokens_per_s_per_user", "usd_per_m_output_tokens", "usd_per_m_output_tokens_low",
                 "usd_per_m_output_tokens_high", "usd_per_m_output_tokens_all_in", "usd_per_m_output_tokens_all_in_low",
                 "usd_per_m_output_tokens_all_in_high", "usd_per_m_input_tokens", "usd_per_m_blended_tokens",
                 "output_tokens_per_s_per_gpu", "output_tokens_per_usd", "output_tokens_per_s_per_mw", "precision",
                 "layout", "num_gpus", "total_gpus", "batch_size", "binding_wall", "fastest_tokens_per_s_per_user")


def levels_input(container=None) -> tuple[float, ...]:
    """A text input for the scenario's interactivity levels ("20, 50, 100"), page-local; bad text warns."""
    c = container or st
    sc = state.scenario()
    shown = ", ".join(f"{v:g}" for v in sc.interactivity_levels)
    key = state.seed("interactivity_levels", shown)
    text = c.text_input("Interactivity levels (output tokens/s per user)", key=key,
                        help="Comma-separated, up to 8 levels: each accelerator's cheapest deployment at least this "
                             "fast per user (issue 11 default: 20, 50, 100). "
                             f"Valid range: {SPECS['interactivity_levels'].lo:g} to "
                             f"{SPECS['interactivity_levels'].hi:g}.")
    parsed, warnings = from_mapping({"interactivity_levels": text})
    if warnings:
        c.warning("Levels: " + safe_text.md(warnings[0].split(";")[0]) + "; keeping " + shown + ".",
                  icon=":material/warning:")
        return sc.interactivity_levels
    state.update(interactivity_levels=parsed.interactivity_levels)
    return parsed.interactivity_levels


def measured_controls(key: str, container=None) -> tuple[bool, bool]:
    """(draw the public measurements, only those near the request shape): two page-local checkboxes."""
    c = container or st
    a, b = c.columns(2)
    show = a.checkbox("Show public measurements", value=True, key=f"{key}.measured",
                      help="data/measurements.csv (MLPerf, TensorRT-LLM, NIM, InferenceX; include = true): runs of "
                           "this model on these accelerators that report both speed per user and throughput; "
                           "hover a triangle for its source")
    near = b.checkbox("Only runs near this workload", value=True, key=f"{key}.near",
                      help="Keep measurements whose stated input and output lengths are within a factor 2 of the "
                           "scenario's (runs that state no length are kept)")
    return show, near


def measured_for(model: str, hardware, sc, frontier: pl.DataFrame, *, near: bool, cost: str,
                 data_dir=None) -> pl.DataFrame:
    """Measured points of ``model`` on ``hardware``, priced with the frontier's $/GPU-hour per accelerator.

    The points (a read of ``measurements.csv``, independent of the economics) are kept apart from their pricing
    (:func:`econ.tables.measured.with_cost`), so a rerun with another power price or PUE only prices them again."""
    hw = None if hardware is None else tuple(hardware)
    tolerance = 2.0 if near else None
    pts = memory.memo(measured_points, model, hw, input_len=sc.input_len, output_len=sc.output_len,
                      length_tolerance=tolerance, data_dir=data_dir, files=_measurement_files(data_dir),
                      key=(model, hw, sc.input_len, sc.output_len, tolerance, None if data_dir is None else str(data_dir)))
    if pts.height == 0 or "usd_per_gpu_hour" not in frontier.columns:
        return pts
    return with_cost(pts, frontier.select("hardware", "usd_per_gpu_hour"), cost=cost)


def _measurement_files(data_dir=None) -> tuple:
    """The measurement tables :func:`measured_for` reads from ``data_dir`` (default: the session's), their stamps key
    its cache: an edited file is read again."""
    from pathlib import Path

    from econ.tables.catalog import DEFAULT_DATA_DIR
    return tuple(Path(d) / "measurements.csv" for d in (data_dir or state.data_dir(), DEFAULT_DATA_DIR) if d)


def section(frontier: pl.DataFrame, *, sc, cat_in_use, economics, cost: str, series: str, key: str,
            name: str, by=("hardware",), min_speed: float | None = None, order=None, assumptions=None,
            metadata=None) -> pl.DataFrame:
    """Draw the cost-vs-interactivity chart and table for a frontier; returns the table.

    Parameters
    ----------
    frontier : pl.DataFrame
        Pareto frontier rows (cost against tokens/s per user) with ``series`` and ``by`` columns.
    cost : str
        The $/M output column read (``usd_per_m_output_tokens``; the optimizer's ``..._all_in``).
    series : str
        The column naming a line.
    """
    c1, c2 = st.columns([2, 3])
    levels = levels_input(c1)
    show_measured, near = measured_controls(key, c2)
    frontier_key = memory.digest(frontier)  # the reading below depends on the frontier's content, not only on sc
    picks = memory.memo(interactivity_table, frontier, cat_in_use.catalog, economics, levels, by=tuple(by), cost=cost,
                        key=(cat_in_use.token, frontier_key, economics, tuple(levels), tuple(by), cost))
    if series not in picks.columns:
        labels = frontier.select(*by, series).unique(subset=list(by), keep="first")
        picks = picks.join(labels, on=list(by), how="left")
    measured = None
    names = order or charts.top_series(frontier, series, min_tokens_per_s_per_user=min_speed or 0.0, cost=cost)
    if show_measured and frontier.height:
        drawn = frontier.filter(pl.col(series).is_in(names))["hardware"].unique().to_list()
        measured = memory.memo(measured_for, sc.model, drawn, sc, frontier, near=near, cost=cost,
                               data_dir=state.data_dir(), files=_measurement_files(),
                               key=(sc.model, tuple(drawn), sc.input_len, sc.output_len, frontier_key, near, cost,
                                    state.data_dir()))
        if series != "hardware" and series not in measured.columns:
            lab = frontier.select("hardware", series).unique(subset="hardware", keep="first")
            measured = measured.join(lab, on="hardware", how="left")
    chart.show(charts.cost_frontier_chart, frontier, y=cost, series=series, order=names, levels=levels, picks=picks,
               measured=measured, min_tokens_per_s_per_user=min_speed, key=f"{key}.chart",
               cache_key=(cat_in_use.token, sc, cost, series, tuple(names), show_measured, near, key))
    n_meas = 0 if measured is None else measured.filter(pl.col(series).is_in(names)).height
    st.caption("Lines: each accelerator's cheapest deployments from slow to fast per user (Pareto frontier). Rings: "
               "the deployment read at each level. "
               + (f"Triangles: {n_meas} public measurement(s), priced at the same $ per utilized GPU-hour (hover for the "
                  "source)." if n_meas else "No public measurement of this model on these accelerators "
                                            + ("near this workload." if near else "reports speed and throughput."))
               + " Shaded bands show the model's uncertainty when the engine reports one.")
    other = ({"usd_per_m_output_tokens", "usd_per_m_output_tokens_all_in"} - {cost}).pop()
    other_cost = {other, f"{other}_low", f"{other}_high"}
    shown = list(dict.fromkeys([series, *[c for c in TABLE_COLUMNS if c in picks.columns and c != "series"
                                          and c not in other_cost]]))
    view = picks.sort(LEVEL_COLUMN, pl.col(cost), nulls_last=True)
    if series == "hardware" and "precision" in view.columns and view.height:  # the frontier's winners, with the bands
        ranked = memory.memo(level_winners, view, cat_in_use.catalog, cost=cost,
                             key=(cat_in_use.token, memory.digest(view), cost))
        view = view.join(ranked.select(LEVEL_COLUMN, "hardware", "rank_note", "profile_note"),
                         on=[LEVEL_COLUMN, "hardware"], how="left")
        after = shown.index(f"{cost}_high") + 1 if f"{cost}_high" in shown else len(shown)  # the band in view first
        shown = [*shown[:after], "rank_note", "profile_note", *shown[after:]]
    table.show(view, key=f"{key}.table", name=name, columns=shown, assumptions=assumptions, metadata=metadata,
               catalog=cat_in_use.catalog, height=min(420, 38 + 35 * view.height), widths={series: "medium"},
               caption="Per accelerator and level, the cheapest deployment at least that fast per user; tokens per "
                       "$1 = 1,000,000 / $ per M output tokens; tokens/s per MW divides by all-in power x PUE per "
                       "GPU (provisioned power). '–': no deployment reaches the level.")
    return picks


__all__ = ["section", "levels_input", "measured_controls", "measured_for", "TABLE_COLUMNS"]
