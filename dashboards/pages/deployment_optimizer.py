"""Deployment optimizer: the cheapest TP/EP/PP/DP deployment meeting the SLOs, the frontier, the layout.

One econ call (:func:`econ.analyses.optimize.optimize`: every parallel layout x precision x batch x aggregated /
disaggregated, one vectorized evaluation per accelerator and scale-up domain size), then: the best
deployment's metrics, the throughput and cost frontiers per accelerator (and per domain size: the same
chip on an 8- vs a 72-GPU domain), the chosen deployment drawn GPU by GPU with the links its traffic
crosses, the top deployments with their walls, the rejected families with the reason, and downloads.
"""

from __future__ import annotations

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
from econ.vocabulary import column_title  # noqa: E402
from dashboards.components import memory  # noqa: E402
from dashboards.components import fields as scenario_fields  # noqa: E402
from dashboards.components import safe_text  # noqa: E402
from dashboards.components import chart, fmt, interactivity, scenario_sidebar, sources, state, table  # noqa: E402
from dashboards.components.scenario_sidebar import BASIS_TITLES as TIER_TITLES  # noqa: E402
from econ.assumptions import DEFAULT_DEPLOYMENT, DeploymentAssumptions, deployment_assumptions_frame  # noqa: E402
from econ.physics.deployment import instance_layout, traffic_summary  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.analyses.optimize import SLO, OptimizeResult, SearchSpace, optimize, rejected_summary  # noqa: E402
from econ.physics.precision import PRECISIONS  # noqa: E402

TITLE = "Deployment optimizer"
ICON = ":material/hub:"
ORDER = 25

TOP_SHOWN = ["hardware", "scale_up_domain_size", "layout", "precision", "batch_size", "total_gpus",
             "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "ttft_s", "usd_per_m_output_tokens_all_in",
             "usd_per_m_input_tokens", "usd_per_m_output_tokens", "binding_wall", "t_mem_s", "t_flop_s", "t_comm_tp_s",
             "t_comm_ep_s", "t_comm_pp_s", "kv_transfer_s", "prefill_stall_s", "hbm_used_frac", "weight_bytes_per_gpu",
             "kv_bytes_per_gpu", "tp", "dp", "ep", "pp", "num_gpus"]
TTFT_CHOICES = [0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, float("inf")]
DOMAIN_CHOICES = [2, 4, 8, 16, 32, 36, 64, 72, 144, 256, 576]
DRAW_LIMIT = 256


@memory.cached(show_spinner="Searching every deployment...", max_entries=8, ttl=3600)
def run(token: str, model: str, hardware: tuple, input_len: int, output_len: int, slo: SLO, space: SearchSpace,
        _assumptions, assumptions_key: str, _economics, economics_key: str, deployment: DeploymentAssumptions,
        _catalog=None) -> OptimizeResult:
    """:func:`econ.analyses.optimize.optimize` for the page's inputs, cached per catalog + inputs."""
    cat = _catalog if _catalog is not None else state.catalog()
    return optimize(cat, model=model, hardware=list(hardware) or None, input_len=input_len, output_len=output_len,
                    slo=slo, space=space, assumptions=_assumptions, economics=_economics, deployment=deployment,
                    top=25)


def series_label(frame: pl.DataFrame, names: dict | None = None) -> pl.DataFrame:
    """Add ``series`` = 'accelerator' or 'accelerator, N-GPU domain' (when several domain sizes are drawn).

    ``names``: accelerator id -> the name a reader sees (legends, tables; issue 19.3); an id without one stays."""
    several = frame.select(pl.struct("hardware", "scale_up_domain_size").n_unique()).item() > frame["hardware"].n_unique()
    hw = pl.col("hardware").replace(names) if names else pl.col("hardware")
    lab = (hw + pl.lit(", ") + pl.col("scale_up_domain_size").cast(pl.String) + pl.lit("-GPU domain")
           if several else hw)
    return frame.with_columns(lab.alias("series"))


FRONTIER_COLUMNS = ["series", "layout", "precision", "batch_size", "total_gpus", "tokens_per_s_per_user",
                    "output_tokens_per_s_per_gpu", "usd_per_m_output_tokens_all_in", "ttft_s", "binding_wall"]
"""The columns of the frontier chart's points and tooltips."""


def _frontier_frames(front: pl.DataFrame, best: dict | None, *, min_speed: float,
                     names: dict | None = None) -> tuple[list, list[pl.DataFrame]]:
    """What :func:`frontier_chart` draws: (the series in legend order, each layer's data: the frontier lines, the
    chosen deployment when there is one, the SLO floor when it is above 0)."""
    data = series_label(front, names)
    order = charts.top_series(data, "series", min_tokens_per_s_per_user=min_speed)  # cheapest at the SLO first
    frames = [data.filter(pl.col("series").is_in(order)).select(FRONTIER_COLUMNS)]
    if best is not None:
        frames.append(pl.DataFrame([{c: best[c] for c in FRONTIER_COLUMNS if c != "series"}]).with_columns(
            series=pl.lit("chosen deployment")).select(FRONTIER_COLUMNS))
    if min_speed > 0:
        frames.append(pl.DataFrame({"tokens_per_s_per_user": [float(min_speed)],
                                    "label": [f"SLO: {min_speed:g} tokens/s per user"]}))
    return order, frames


def frontier_chart(front: pl.DataFrame, best: dict | None, *, y: str, min_speed: float, log_y: bool,
                   width: int = 760, height: int = 340, names: dict | None = None) -> alt.LayerChart:
    """One frontier line per accelerator (and domain size); the chosen deployment starred; the SLO floor.

    ``names``: accelerator id -> legend name (:func:`series_label`)."""
    order, frames = _frontier_frames(front, best, min_speed=min_speed, names=names)
    return _frontier_layers(order, frames, has_best=best is not None, y=y, min_speed=min_speed, log_y=log_y,
                            width=width, height=height)


def frontier_spec(front: pl.DataFrame, best: dict | None, *, y: str, min_speed: float, log_y: bool,
                  width: int = 760, height: int = 340, names: dict | None = None) -> dict:
    """The Vega-Lite dict of :func:`frontier_chart` (equal to its ``to_dict``: tests/dashboards), built fast: its
    structure (series order, whether a deployment is chosen, the axes, the SLO) kept, the data filled in
    (:func:`dashboards.components.chart.filled`; a rerun after a PUE change moves the points, not the structure)."""
    order, frames = _frontier_frames(front, best, min_speed=min_speed, names=names)
    structure = (tuple(order), best is not None, y, float(min_speed), bool(log_y), width, height)
    return chart.filled(_frontier_template, structure, frames, key="frontier_template", max_entries=16)


def _frontier_template(order: tuple, has_best: bool, y: str, min_speed: float, log_y: bool, width: int, height: int,
                       schema: tuple) -> dict:
    """The spec of :func:`_frontier_layers` for this structure and these frame schemas, with empty data."""
    empty = [pl.DataFrame(schema=dict(cols)) for cols in schema]
    return _frontier_layers(list(order), empty, has_best=has_best, y=y, min_speed=min_speed, log_y=log_y,
                            width=width, height=height).to_dict(validate=False)


def _frontier_layers(names: list, frames: list[pl.DataFrame], *, has_best: bool, y: str, min_speed: float,
                     log_y: bool, width: int, height: int) -> alt.LayerChart:
    """The chart of :func:`frontier_chart` from its frames (:func:`_frontier_frames`)."""
    cols = FRONTIER_COLUMNS
    colour = alt.Color("series:N", title=column_title("series"), sort=names,
                       scale=alt.Scale(domain=names, range=list(charts.OKABE_ITO[:len(names)])),
                       legend=alt.Legend(orient="right", labelLimit=260))
    layers = [alt.Chart(frames[0]).mark_line(point=alt.OverlayMarkDef(size=28)).encode(
        x=charts._x("tokens_per_s_per_user", log=True), y=charts._y(y, log=log_y), color=colour,
        order="tokens_per_s_per_user:Q", tooltip=charts.tooltip(cols))]
    if has_best:
        layers.append(alt.Chart(frames[1]).mark_point(
            shape="diamond", size=220, filled=True, color="#000000").encode(
            x="tokens_per_s_per_user:Q", y=f"{y}:Q", tooltip=charts.tooltip(cols)))
    if min_speed > 0:
        layers.append(alt.Chart(frames[-1]).mark_rule(strokeDash=[6, 4], color="#555555").encode(
            x="tokens_per_s_per_user:Q", tooltip=[alt.Tooltip("label:N", title="Marker")]))
    what = "Throughput" if y == "output_tokens_per_s_per_gpu" else "Cost"
    return alt.layer(*layers).properties(width=width, height=height,
                                         title=f"{what} vs interactivity: Pareto frontier per accelerator")


def layout_chart(cells: pl.DataFrame, *, title: str, domain: int) -> alt.LayerChart:
    """The accelerators of one instance: a cell per GPU (colour = pipeline stage), boxed by scale-up domain."""
    n = cells.height
    cols = min(domain, 16)
    per_domain_rows = -(-min(domain, n) // cols)
    pos = cells["gpu"] % domain
    data = cells.with_columns(
        x=(pos % cols).cast(pl.Float64), y=(cells["domain"] * (per_domain_rows + 1) + pos // cols).cast(pl.Float64),
        stage_label=pl.lit("stage ") + pl.col("stage").cast(pl.String),
        layers=pl.col("first_layer").cast(pl.String) + pl.lit("-") + pl.col("last_layer").cast(pl.String),
        experts=pl.when(pl.col("first_expert") >= 0).then(
            pl.col("first_expert").cast(pl.String) + pl.lit("-") + pl.col("last_expert").cast(pl.String))
        .otherwise(pl.lit("dense")),
        label=pl.when(pl.col("first_expert") >= 0).then(
            pl.lit("E") + pl.col("first_expert").cast(pl.String) + pl.lit("-") + pl.col("last_expert").cast(pl.String))
        .otherwise(pl.lit("G") + pl.col("attention_group").cast(pl.String) + pl.lit(" T") + pl.col("tp_rank").cast(pl.String)),
    )
    boxes = (data.group_by("domain").agg(pl.col("y").min().alias("y0"), pl.col("y").max().alias("y1"))
             .with_columns(x0=pl.lit(-0.5), x1=pl.lit(cols - 0.5), y0=pl.col("y0") - 0.5, y1=pl.col("y1") + 0.5,
                           name=pl.lit("scale-up domain ") + pl.col("domain").cast(pl.String)))
    size = 58 if n <= 64 else 40
    tip = [alt.Tooltip("gpu:Q", title="GPU"), alt.Tooltip("domain:Q", title="Scale-up domain"),
           alt.Tooltip("stage:Q", title="Pipeline stage"), alt.Tooltip("layers:N", title="Layers"),
           alt.Tooltip("attention_group:Q", title="Attention DP group"), alt.Tooltip("tp_rank:Q", title="TP rank"),
           alt.Tooltip("ep_rank:Q", title="EP rank"), alt.Tooltip("experts:N", title="Routed experts held")]
    stages = sorted(data["stage_label"].unique().to_list(), key=lambda s: int(s.split()[1]))
    data = data.with_columns(x0=pl.col("x") - 0.5, x1=pl.col("x") + 0.5, y0=pl.col("y") - 0.5, y1=pl.col("y") + 0.5)
    ymax = float(data["y"].max()) + 0.5
    xs = alt.Scale(domain=[-0.5, cols - 0.5], nice=False, zero=False)
    ys = alt.Scale(domain=[-0.5, ymax], nice=False, zero=False, reverse=True)
    pd = data  # Altair takes Polars frames directly (no pandas round trip)
    cell = alt.Chart(pd).mark_rect(stroke="white", strokeWidth=1).encode(
        x=alt.X("x0:Q", axis=None, scale=xs), x2="x1:Q", y=alt.Y("y0:Q", axis=None, scale=ys), y2="y1:Q",
        color=alt.Color("stage_label:N", title="Pipeline stage", sort=stages,
                        scale=alt.Scale(range=list(charts.OKABE_ITO)),
                        legend=alt.Legend(orient="top", direction="horizontal", columns=8)), tooltip=tip)
    layers = [cell]
    if n <= 128:
        layers.append(alt.Chart(pd).mark_text(fontSize=8 if n > 32 else 9, color="white").encode(
            x=alt.X("x:Q", scale=xs), y=alt.Y("y:Q", scale=ys), text="label:N", tooltip=tip))
    layers.append(alt.Chart(boxes).mark_rect(fill=None, stroke="#000000", strokeWidth=2).encode(
        x=alt.X("x0:Q", scale=xs), x2="x1:Q", y=alt.Y("y0:Q", scale=ys), y2="y1:Q",
        tooltip=[alt.Tooltip("name:N", title="Box")]))
    return alt.layer(*layers).properties(width=cols * size, height=int(ymax + 0.5) * size, title=title)


def _deployment_inputs(key: str) -> DeploymentAssumptions:
    """Number inputs for every deployment assumption (page-local), defaults from econ.physics.deployment."""
    d = DEFAULT_DEPLOYMENT
    c = st.columns(4)
    imb = c[0].number_input("Expert load imbalance (busiest / mean EP rank)", 1.0, 4.0, d.expert_imbalance_factor,
                            0.05, key=f"{key}.imb", help="1 = perfectly balanced routing; applies when ep > 1")
    a2a_up = c[1].number_input("All-to-all latency, scale-up (us)", 0.0, 500.0, d.alltoall_scale_up_latency_s * 1e6,
                               1.0, key=f"{key}.a2a_up")
    a2a_out = c[2].number_input("All-to-all latency, scale-out (us)", 0.0, 2000.0,
                                d.alltoall_scale_out_latency_s * 1e6, 5.0, key=f"{key}.a2a_out")
    launch = c[3].number_input("Kernel launch per extra collective (us)", 0.0, 100.0, d.kernel_launch_latency_s * 1e6,
                               0.5, key=f"{key}.launch")
    c = st.columns(4)
    disp = c[0].selectbox("Dispatch precision", [1.0, 2.0], index=0 if d.dispatch_activation_bytes == 1.0 else 1,
                          format_func=lambda b: "FP8 (1 B)" if b == 1.0 else "BF16 (2 B)", key=f"{key}.disp")
    kv_eta = c[1].number_input("KV transfer efficiency", 0.05, 1.0, d.kv_transfer_eta, 0.05, key=f"{key}.kv_eta")
    kv_lat = c[2].number_input("KV transfer fixed latency (ms)", 0.0, 100.0, d.kv_transfer_latency_s * 1e3, 0.1,
                               key=f"{key}.kv_lat")
    repl = c[3].toggle("Replicate KV heads when tp > KV heads", d.kv_head_replication, key=f"{key}.repl")
    return replace(d, expert_imbalance_factor=float(imb), alltoall_scale_up_latency_s=a2a_up * 1e-6,
                   alltoall_scale_out_latency_s=a2a_out * 1e-6, kernel_launch_latency_s=launch * 1e-6,
                   dispatch_activation_bytes=float(disp), kv_transfer_eta=float(kv_eta),
                   kv_transfer_latency_s=kv_lat * 1e-3, kv_head_replication=bool(repl))


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    model = cat.model(sc.model)
    names = dict(cat.accelerators.select("id", "display_name").rows())
    short = {i: fmt.short_accelerator_name(n, max_chars=24) for i, n in names.items()}  # legends, KPI, tables
    st.title("Deployment optimizer")
    st.caption(f"{safe_text.md(model['display_name'])}, {sc.input_len:,} input / {sc.output_len:,} output tokens: "
               "every tensor / attention-data / expert / pipeline-parallel layout, precision, batch size, aggregated or "
               "disaggregated (prefill and decode pools), priced; the cheapest one meeting the SLOs, the Pareto "
               "frontier, and the layout of the choice.")
    c1, c2, c3 = st.columns([2, 2, 3])
    scenario_fields.slider("min_tokens_per_s_per_user", container=c1, label="SLO: minimum output tokens/s per user",
                           lo=0.0, hi=max(400.0, float(sc.min_tokens_per_s_per_user)), step=1.0, unit="tokens/s",
                           fmt="%.0f", help="As served: aggregated serving includes the prefill chunks interleaved "
                                            "with decode steps.")
    ttft = c2.select_slider("SLO: maximum time to first token (s)", TTFT_CHOICES, value=float("inf"),
                            format_func=lambda v: "no limit" if v == float("inf") else f"{v:g} s", key="do.ttft",
                            help="The prompt prefilled alone (+ the KV transfer when disaggregated); queueing not modelled")
    key = "do.hardware"
    if key not in st.session_state or not set(st.session_state[key]) <= set(names):
        st.session_state[key] = [sc.hardware] if sc.hardware in names else []
    hardware = c3.multiselect("Accelerators (empty = all)", list(names), key=key, format_func=lambda i: names.get(i, i))
    c1, c2, c3, c4 = st.columns([2, 2, 2, 2])
    compare_domains = c1.toggle("HGX vs NVL72 domains", False, key="do.hgx_nvl",
                                help="Redraw each accelerator with scale-up domains of 8 and 72 GPUs: the seeds' "
                                     "'EP wants one rack' and 'bigger scale-up lowers the latency floor' on one chart")
    domains = c2.multiselect("Or: scale-up domain sizes (empty = catalog's)", DOMAIN_CHOICES, key="do.domains",
                             disabled=compare_domains)
    mode = c3.radio("Serving", ["both", "aggregated", "disaggregated"], horizontal=True, key="do.mode",
                    help="Aggregated: prefill and decode share GPUs. Disaggregated: xPyD pools with KV transfer.")
    max_gpus = c4.select_slider("Largest instance (GPUs)", [8, 16, 32, 64, 128, 256, 512], value=256, key="do.max")
    precisions = st.multiselect("Weight precisions (empty = every one the accelerator supports; the sidebar's "
                                "precision is not used here)", list(PRECISIONS), key="do.precisions",
                                format_func=str.upper)
    with st.expander("Deployment assumptions (parallel layouts)", expanded=False):
        deployment = _deployment_inputs("do.assume")
        st.dataframe(deployment_assumptions_frame(deployment), hide_index=True, key="do.assume.table",
                     placeholder=table.PLACEHOLDER)
    slo = SLO(min_tokens_per_s_per_user=float(state.scenario().min_tokens_per_s_per_user), max_ttft_s=float(ttft),
              percentile=state.scenario().slo_percentile)
    dom = (8, 72) if compare_domains else tuple(sorted(domains)) or None
    space = SearchSpace(max_gpus=int(max_gpus), precisions=tuple(precisions) or None, modes=("aggregated", "disaggregated") if mode == "both" else (mode,),
                        scale_up_domain_sizes=dom, decoding=state.scenario().decoding())
    sc = state.scenario()
    a, e = sc.assumptions(), sc.economics(cat)
    try:
        res = run(cat_in_use.token, sc.model, tuple(hardware), sc.input_len, sc.output_len, slo, space, a, repr(a), e,
                  repr(e), deployment, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    best = res.best
    c = st.columns([3, 2, 2, 2, 2])  # the name's tile the widest: a KPI value is never cut off (1440 and 390 px)
    if best is None:
        st.warning(f"No deployment meets the SLOs. {res.reason}", icon=":material/warning:")
    else:
        c[0].metric("Cheapest deployment", safe_text.md(short.get(best["hardware"], best["hardware"])),
                    help=safe_text.md(names.get(best["hardware"], best["hardware"])) + f": {best['layout']}, {best['precision'].upper()}, "
                    f"batch {best['batch_size']:,} per instance, scale-up domain {best['scale_up_domain_size']}")
        c[1].metric("$ per M output tokens, all-in", fmt.usd_per_m(best["usd_per_m_output_tokens_all_in"]),
                    help="Every GPU the request used (prefill included) per output token; input "
                         f"{fmt.usd_per_m(best['usd_per_m_input_tokens'])}/M, output "
                         f"{fmt.usd_per_m(best['usd_per_m_output_tokens'])}/M split by the GPUs each phase uses")
        c[2].metric("Output tokens/s per user", fmt.rate(best["tokens_per_s_per_user"]))
        c[3].metric("Output tokens/s per GPU", fmt.rate(best["output_tokens_per_s_per_gpu"]),
                    help="Over every GPU of the unit (both pools when disaggregated)")
        c[4].metric("Time to first token", fmt.seconds(best["ttft_s"]), help=f"Binding wall: {best['binding_wall']}")
        st.caption(f"Deployment: **{best['layout']}** ({best['precision'].upper()}), {best['total_gpus']:,} GPUs in the "
                   f"unit; binding wall **{best['binding_wall']}**.")
    front = res.frontier
    assumptions = pl.concat([sources.show(cat, a, e, key="do.sources", model=sc.model,
                                          hardware=hardware or list(names), region=sc.region),
                             deployment_assumptions_frame(deployment)], how="vertical")
    meta = {"scenario": sc.to_query_params(), **cat.as_of_dates()}
    ckey = (cat_in_use.token, sc, tuple(hardware), slo, space, deployment)
    if front.height:
        labelled = series_label(front, short)
        st.subheader("Cost versus interactivity")
        st.caption(f"Cost tier: {safe_text.md(TIER_TITLES.get(sc.basis, sc.basis))} (sidebar); costs all-in: every "
                   "GPU a request uses (prefill pool included) per output token.")
        interactivity.section(labelled, sc=sc, cat_in_use=cat_in_use, economics=e,
                              cost="usd_per_m_output_tokens_all_in", series="series", key="do.ix",
                              by=("hardware", "scale_up_domain_size"), name=f"optimizer-interactivity-{sc.model}",
                              min_speed=slo.min_tokens_per_s_per_user, assumptions=assumptions, metadata=meta)
        st.subheader("Throughput frontier per accelerator")
        shown = labelled["series"].unique(maintain_order=True).to_list()
        if len(shown) > charts.MAX_SERIES:
            st.caption(f"{len(shown)} series; the {charts.MAX_SERIES} cheapest at the SLO are drawn (pick accelerators "
                       "above).")
        chart.show(frontier_spec, front, best, y="output_tokens_per_s_per_gpu", log_y=True,
                   min_speed=slo.min_tokens_per_s_per_user, key="do.front.tput", cache_key=ckey, names=short)
        st.caption("Each point is a deployment no other beats on both tokens/s per user and cost; moving right buys "
                   "speed per user with GPU throughput. The diamond is the chosen deployment; the dashed line the SLO.")
    if res.top.height:
        st.subheader("Layout of a deployment")
        options = list(range(res.top.height))
        pick = st.selectbox("Deployment drawn", options, key="do.pick", format_func=lambda i: (
            f"#{i + 1}: {short.get(res.top['hardware'][i], res.top['hardware'][i])} ({res.top['scale_up_domain_size'][i]}-GPU domain), "
            f"{res.top['layout'][i]}, {res.top['precision'][i].upper()}, "
            f"{fmt.usd_per_m(res.top['usd_per_m_output_tokens_all_in'][i])}/M"))
        row = res.top.row(int(pick), named=True)
        _draw(row, model)
    st.subheader("Top deployments (best of each family)")
    table.show(res.top, key="do.top", name=f"deployments-{sc.model}", columns=[c for c in TOP_SHOWN if c in res.top.columns],
               assumptions=assumptions, metadata=meta, height=320)
    st.subheader("Frontier points")
    table.show(front, key="do.front", name=f"deployment-frontier-{sc.model}",
               columns=[c for c in TOP_SHOWN if c in front.columns], assumptions=assumptions, metadata=meta, height=260)
    st.subheader("Rejected families")
    summary = rejected_summary(res.rejected)
    if summary.height:
        table.show(summary, key="do.rejected", name=f"rejected-{sc.model}", assumptions=assumptions, metadata=meta,
                   height=240, caption="Grouped by reason; the download of the full list has one row per family.")
    else:
        st.caption("None: every family found a batch size that serves.")


def _draw(row: dict, model: dict) -> None:
    """The chosen deployment's instances, GPU by GPU, and the links its collectives cross."""
    dom = int(row["scale_up_domain_size"])
    parts = []
    if row["disaggregated"]:
        parts.append(("Prefill instance", dict(tp=row["prefill_tp"], dp=row["prefill_dp"], ep=row["prefill_ep"],
                                                pp=row["prefill_pp"]), row["prefill_instances"]))
    parts.append(("Decode instance" if row["disaggregated"] else "Instance", dict(tp=row["tp"], dp=row["dp"],
                                                                                   ep=row["ep"], pp=row["pp"]),
                  row["decode_instances"]))
    for name, lay, count in parts:  # <= 2 instances, drawn one above the other
        n = lay["tp"] * lay["dp"] * lay["pp"]
        if n > DRAW_LIMIT:
            st.info(f"{name}: {n} GPUs, too many to draw (limit {DRAW_LIMIT}).")
            continue
        cells = instance_layout(**{k: int(v) for k, v in lay.items()}, num_layers=int(model["num_layers"]),
                                num_experts=int(model["num_experts"]), scale_up_domain_size=dom)
        built = chart.spec(layout_chart, cells, title=f"{name} x{count}: {n} GPUs (TP{lay['tp']} x DP{lay['dp']} x "
                           f"PP{lay['pp']}, EP{lay['ep']})", domain=dom,
                           cache_key=(name, tuple(sorted(lay.items())), count, dom, int(model["num_layers"]),
                                      int(model["num_experts"])))
        st.vega_lite_chart(spec=built, key=f"do.layout.{name}", width="content",
                           height=int(built.get("height", 300)) + 100)
    st.caption("Cells are GPUs (colour = pipeline stage; label = routed experts held, or attention group / TP rank "
               "for dense models); black boxes are scale-up domains. Hover a cell for its layers and ranks.")
    traffic = traffic_summary(tp=int(row["tp"]), dp=int(row["dp"]), ep=int(row["ep"]), pp=int(row["pp"]),
                              scale_up_domain_size=dom, total_gpus=int(row["total_gpus"]),
                              disaggregated=bool(row["disaggregated"]), t_comm_tp_s=row["t_comm_tp_s"],
                              t_comm_ep_s=row["t_comm_ep_s"], t_comm_pp_s=row["t_comm_pp_s"],
                              kv_transfer_s=row["kv_transfer_s"])
    st.markdown("**Links the traffic crosses** (decode step of the decode instance; KV transfer per request)")
    st.dataframe(traffic.with_columns(pl.col("scale_out_share_frac") * 100, pl.col("time_per_step_s") * 1e3),
                 hide_index=True, key="do.traffic", placeholder=table.PLACEHOLDER, column_config={
                     "collective": st.column_config.TextColumn("Collective"),
                     "group_size": st.column_config.NumberColumn("Group (GPUs)", format="%d"),
                     "link": st.column_config.TextColumn("Link tier"),
                     "scale_out_share_frac": st.column_config.NumberColumn("Bytes over scale-out (%)", format="%.0f%%"),
                     "time_per_step_s": st.column_config.NumberColumn("Time (ms)", format="%.3f")})


if __name__ == "__main__":
    render()
