"""Hardware comparison: cost versus interactivity per accelerator, and the cheapest deployment at a floor.

One econ call (:func:`econ.analyses.compare.hardware_comparison`: the one deployment search of every layout,
batch and serving mode per accelerator, the same as head to head and ``econ compare``). The headline reads each accelerator's cost frontier
(:func:`econ.analyses.compare.cost_frontier`) at chosen interactivity levels (20 / 50 / 100 output tokens/s per
user): $/M output, input and blended tokens, output tokens/s per GPU, tokens per $1 and per provisioned
MW (:func:`econ.analyses.compare.interactivity_table`), with the public measurements on the chart. Then the
ranked $/M bar chart at the floor split into capex, facility, opex and power, the
throughput-interactivity frontier, and the tables with downloads.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import charts  # noqa: E402
from econ.vocabulary import column_title  # noqa: E402
from dashboards.components import (chart, fields, fmt, interactivity, memory, safe_text, scenario_sidebar,  # noqa: E402
                                   sources, state, table)
from econ.analyses.compare import OBJECTIVES, Comparison, cost_frontier, hardware_comparison  # noqa: E402
from econ.analyses.optimize import SearchSpace  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.physics.precision import PRECISIONS  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402

from dashboards.components.scenario_sidebar import BASIS_TITLES as TIER_TITLES  # noqa: E402

TITLE = "Hardware comparison"
ICON = ":material/leaderboard:"
ORDER = 20
ALL_IN = OBJECTIVES["output"]
"""The cost the page ranks and draws: all-in $/M output tokens (the figure head to head and econ compare quote)."""

BEST_SHOWN = ["rank", "hardware", "usd_per_m_output_tokens_all_in", "usd_per_m_output_tokens_all_in_low",
              "usd_per_m_output_tokens_all_in_high", "tokens_per_s_per_user", "rank_note", "profile_note", "precision",
              "layout", "total_gpus", "batch_size", "binding_wall", "output_tokens_per_s_per_gpu",
              "usd_per_m_output_tokens", "usd_per_m_input_tokens",
              "usd_per_m_blended_tokens", "usd_per_gpu_hour", "usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility",
              "usd_per_gpu_hour_power", "usd_per_gpu_hour_opex", "usd_per_gpu_hour_rental", "ttft_s", "status"]


@memory.cached(show_spinner=False, max_entries=32, ttl=3600)
def compare(token: str, sc: Scenario, _catalog=None) -> tuple[Comparison, pl.DataFrame]:
    """:func:`econ.analyses.compare.hardware_comparison` for the scenario and its cost frontier, cached per catalog + scenario."""
    cat = _catalog if _catalog is not None else state.catalog()
    result = hardware_comparison(cat, model=sc.model, hardware=sc.compare_hardware or None,
                                 precisions=sc.compare_precisions or None,
                                 min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user,
                                 objective=sc.compare_objective, input_len=sc.input_len, output_len=sc.output_len,
                                 assumptions=sc.assumptions(), economics=sc.economics(cat),
                                 space=SearchSpace(decoding=sc.decoding()), slo_percentile=sc.slo_percentile)
    front = cost_frontier(result.points, cost=ALL_IN).join(
        cat.accelerators.select(pl.col("id").alias("hardware"), "display_name"), on="hardware", how="left")
    # the page reads the winners, the frontiers and ``front``, not the tens of thousands of points: a cache entry
    # without them is ~100x smaller to keep and to copy on every rerun (memory.cached pickles what it keeps)
    return replace(result, points=result.points.clear()), front


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    st.title("Hardware comparison")
    st.caption(f"{safe_text.md(cat.model(sc.model)['display_name'])}, {sc.input_len:,} input / {sc.output_len:,} "
               "output tokens: for each accelerator, the cheapest deployment (precision x GPUs per replica x batch) "
               "whose every user gets at least the chosen decode speed.")
    names = dict(cat.accelerators.select("id", "display_name").rows())
    c1, c2, c3 = st.columns([2, 3, 2])
    hi = max(300.0, float(sc.min_tokens_per_s_per_user))
    fields.slider("min_tokens_per_s_per_user", container=c1, label="Minimum output tokens/s per user", lo=0.0,
                  hi=hi, step=1.0, unit="tokens/s", fmt="%.0f",
                  help="Interactivity floor (1 / time per output token). Reading speed is ~5-10 tokens/s; "
                       "chat products aim at 20-100.")
    fields.multiselect("compare_hardware", list(names), container=c2, label="Accelerators (empty = all)",
                       format_func=lambda i: names.get(i, i), help="Subset of data/accelerators.csv to compare")
    with c3:
        fields.multiselect("compare_precisions", list(PRECISIONS), label="Precisions (empty = all)",
                           format_func=str.upper, help="Weight precisions allowed; each accelerator uses those it "
                                                       "supports in hardware")
        fields.select("compare_objective", ["output", "blended"], label="Rank by", horizontal_radio=True,
                      format_func=lambda o: "$/M output" if o == "output"
                      else f"$/M blended ({sc.input_output_mix:g}:1)",
                      help="Minimize the cost of output tokens, or the blended input+output price")
    sc = state.scenario()
    try:
        result, front = compare(cat_in_use.token, sc, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    best = result.best
    ranked = best.filter(pl.col("rank").is_not_null())
    objective = OBJECTIVES[sc.compare_objective]
    c = st.columns([3, 2, 2, 2])  # the name's tile the widest: a KPI value is never cut off (1440 and 390 px)
    if ranked.height:
        top = ranked.row(0, named=True)
        full = names.get(top["hardware"], top["hardware"])
        c[0].metric("Cheapest accelerator", safe_text.md(fmt.short_accelerator_name(full)),
                    help=safe_text.md(full) + table.names_in_text(f": {top['rank_note']}" + (
                        f"; {top['profile_note']}" if top["profile_note"] else ""), cat)
                    + " (two set-ups whose calibration bands overlap are not distinguishable)")
        c[1].metric("Its $ per M " + ("output tokens, all-in" if sc.compare_objective == "output" else "blended tokens"),
                    fmt.usd_per_m(top[objective]),
                    help=f"{top['precision'].upper()}, {top['layout']} ({top['total_gpus']:,} GPUs), batch "
                         f"{top['batch_size']:,}; all-in: every GPU of the unit, prefill included")
        c[2].metric("Its output tokens/s per user", fmt.rate(top["tokens_per_s_per_user"]))
    c[3].metric("Accelerators meeting the floor", f"{ranked.height} of {best.height}")
    assumptions = sources.show(cat, sc.assumptions(), sc.economics(cat), key="hc.sources", model=sc.model,
                               hardware=best["hardware"].to_list(), region=sc.region)
    meta = {"scenario": sc.to_query_params()}
    st.subheader("Cost versus interactivity")
    st.caption(f"Cost tier: {safe_text.md(TIER_TITLES.get(sc.basis, sc.basis))} (sidebar). Each accelerator's "
               "cheapest deployment at or above each interactivity level, read off its cost frontier.")
    if front.height:
        interactivity.section(front, sc=sc, cat_in_use=cat_in_use, economics=sc.economics(cat),
                              cost=ALL_IN, series="hardware", key="hc.ix",
                              name=f"cost-vs-interactivity-{sc.model}", min_speed=sc.min_tokens_per_s_per_user,
                              assumptions=assumptions, metadata=meta)
    st.subheader(f"Cheapest at the floor: {sc.min_tokens_per_s_per_user:g} output tokens/s per user")
    if ranked.height == 0:
        st.warning("No accelerator reaches the floor with this model; lower the minimum tokens/s per user.",
                   icon=":material/warning:")
    else:
        chart.show(charts.cost_ranking_spec, best, objective_title=column_title(objective), key="hc.rank",
                   cache_key=(cat_in_use.token, sc))
        st.caption("Each bar is the accelerator's cheapest deployment meeting the floor, split by what the GPU-hour "
                   "pays for (owned: capex annuity, facility annuity, opex, power; rented: the market rate).")
    st.subheader("Best deployment per accelerator")
    table.show(best, key="hc.best", name=f"hardware-comparison-{sc.model}", columns=BEST_SHOWN,
               assumptions=assumptions, metadata=meta, catalog=cat, download_frame=best,
               xlsx=lambda: table.cost_workbook(best, sc, cat, assumptions))  # live $/GPU-hour and $/M formulas
    st.subheader("Throughput versus interactivity")
    frontier = result.frontier
    default = ranked["hardware"].to_list()[:charts.MAX_SERIES]
    options = frontier["hardware"].unique(maintain_order=True).to_list()
    key = "hc.curves"
    if key not in st.session_state or not set(st.session_state[key]) <= set(options):
        st.session_state[key] = [h for h in default if h in options]
    chosen = st.multiselect(f"Accelerators drawn (up to {charts.MAX_SERIES}, one colour each)", options, key=key,
                            max_selections=charts.MAX_SERIES, format_func=lambda i: names.get(i, i),
                            help="Default: the cheapest accelerators at the floor")
    if chosen:
        shown = frontier.filter(pl.col("hardware").is_in(chosen)).sort(
            pl.col("hardware").replace_strict({h: i for i, h in enumerate(chosen)}, default=99),
            "tokens_per_s_per_user")
        measured = None
        if st.session_state.get("hc.ix.measured", True):
            measured = interactivity.measured_for(sc.model, chosen, sc, front, near=st.session_state.get(
                "hc.ix.near", True), cost=ALL_IN, data_dir=state.data_dir())
        chart.show(charts.frontier_chart, shown, min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user,
                   measured=measured, key="hc.frontier",
                   cache_key=(cat_in_use.token, sc, tuple(chosen), measured is not None,
                              st.session_state.get("hc.ix.near", True)))
        st.caption("Each point is a Pareto-optimal deployment (precision, GPUs, batch): moving right buys speed per "
                   "user with throughput per GPU. Points right of the dashed floor qualify.")
    lead = ["hardware", "precision", "num_gpus", "batch_size", "usd_per_m_output_tokens", "tokens_per_s_per_user",
            "output_tokens_per_s_per_gpu"]  # the cost and its band in view at 1440 px (issue 19.1); names, not ids
    table.show(frontier, key="hc.frontier_table", name=f"frontier-{sc.model}", assumptions=assumptions, metadata=meta,
               catalog=cat, height=300, download_frame=frontier,
               columns=[c for c in lead if c in frontier.columns]
               + [c for c in frontier.columns if c not in lead and c != "display_name"])


if __name__ == "__main__":
    render()
