"""Head to head: two (model, accelerator, precision, cost tier) set-ups side by side.

One econ call (:func:`econ.analyses.compare.head_to_head`: each set-up searched over every deployment, both
Pareto frontiers of all-in $/M output tokens against tokens/s per user, read at the interactivity
levels, the step of each point split by :func:`econ.analyses.breakdown.step_breakdown`). The page draws: the
ratio B/A at each level (KPIs and table), both frontiers on one chart with the public measurements,
each set-up's numbers per level, and where the time per output token goes, with what binds.
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
from dashboards.components import memory  # noqa: E402
from dashboards.components import chart, fields, fmt, interactivity, profiles, safe_text, scenario_sidebar, sources, state, table  # noqa: E402,E501
from dashboards.components.scenario_sidebar import BASIS_TITLES, PRECISION_TITLES  # noqa: E402
from econ.analyses.compare import LEVEL_COLUMN, HeadToHead, Setup, head_to_head  # noqa: E402
from econ.analyses.optimize import SearchSpace  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.physics.precision import PRECISIONS  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402

TITLE = "Head to head"
ICON = ":material/compare_arrows:"
ORDER = 22

COST = "usd_per_m_output_tokens_all_in"
RATIO_SHOWN = [LEVEL_COLUMN, "cheaper", "usd_per_m_output_tokens_all_in_a", "usd_per_m_output_tokens_all_in_b",
               "cost_ratio_b_to_a", "usd_per_m_output_tokens_all_in_low_a", "usd_per_m_output_tokens_all_in_high_a",
               "usd_per_m_output_tokens_all_in_low_b", "usd_per_m_output_tokens_all_in_high_b",
               "output_tokens_per_s_per_gpu_a", "output_tokens_per_s_per_gpu_b", "throughput_ratio_b_to_a",
               "tokens_per_s_per_user_a", "tokens_per_s_per_user_b"]
SETUP_SHOWN = ["setup_label", LEVEL_COLUMN, "tokens_per_s_per_user", COST, f"{COST}_low", f"{COST}_high",
               "usd_per_m_input_tokens",
               "usd_per_m_blended_tokens", "output_tokens_per_s_per_gpu", "output_tokens_per_usd",
               "output_tokens_per_s_per_mw", "layout", "batch_size", "total_gpus", "binding_wall"]
BINDING_SHOWN = ["setup_label", LEVEL_COLUMN, "layout", "batch_size", "served_tpot_s", "weights_s", "kv_cache_s",
                 "gemm_s", "attention_s", "communication_s", "overhead_s", "prefill_chunks_s", "other_s", "binding_side",
                 "hidden_s", "binding_wall"]


SIDEBAR = "sidebar"
"""The set-up tier choice that follows the sidebar's cost tier (the field's automatic value)."""


def setups(sc: Scenario) -> tuple[Setup, Setup]:
    """The page's two set-ups from the scenario's ``h2h_*`` fields (a tier not set follows the sidebar's)."""
    return tuple(Setup(*(getattr(sc, f"h2h_{s}_{k}") for k in ("model", "hardware", "precision")),
                       getattr(sc, f"h2h_{s}_basis") or sc.basis) for s in ("a", "b"))


def _parts(setup: Setup, models: dict, hws: dict) -> list[str]:
    """Model, accelerator, precision and tier of a set-up in words (accelerator without its parenthetical)."""
    return [str(models.get(setup.model, setup.model)), str(hws.get(setup.hardware, setup.hardware)).split(" (")[0],
            PRECISION_TITLES.get(setup.precision, setup.precision).split(" ")[0],
            BASIS_TITLES.get(setup.basis, setup.basis)]


def labels(a: Setup, b: Setup, models: dict, hws: dict) -> dict[str, str]:
    """'A: ...' / 'B: ...' naming only what differs between the set-ups (short enough for a phone's legend)."""
    pa, pb = _parts(a, models, hws), _parts(b, models, hws)
    keep = [i for i in range(4) if pa[i] != pb[i]] or [1]
    return {"A": "A: " + ", ".join(pa[i] for i in keep), "B": "B: " + ", ".join(pb[i] for i in keep)}


def label(setup: Setup, name: str, models: dict, hws: dict) -> str:
    """'A: Llama-3.3-70B-Instruct on NVIDIA H100 SXM5 80GB, FP8, Owned (custom TCO)' (every part, human names)."""
    m, hw, p, tier = _parts(setup, models, hws)
    return f"{name}: {m} on {hw}, {p}, {tier}"


@memory.cached(show_spinner="Searching both set-ups...", max_entries=16, ttl=3600)
def compute(token: str, a: Setup, b: Setup, levels: tuple, input_len: int, output_len: int, assumptions_key: str,
            economics_key: str, _assumptions=None, _economics=None, _catalog=None, decoding=None,
            slo_percentile=None) -> HeadToHead:
    """:func:`econ.analyses.compare.head_to_head`, cached per catalog, set-ups, levels, lengths and assumptions."""
    cat = _catalog if _catalog is not None else state.catalog()
    return head_to_head(cat, a, b, levels=levels, input_len=input_len, output_len=output_len,
                        assumptions=_assumptions, economics=_economics, slo_percentile=slo_percentile,
                        space=None if decoding is None else SearchSpace(decoding=decoding))


def setup_inputs(side: str, container, models: dict, hws: dict) -> None:
    """Model, accelerator, precision and cost tier of one set-up (page-local scenario fields)."""
    with container:
        st.markdown(f"**Set-up {side.upper()}**")
        fields.select(f"h2h_{side}_model", list(models), label="Model", format_func=lambda i: models.get(i, i))
        fields.select(f"h2h_{side}_hardware", list(hws), label="Accelerator", format_func=lambda i: hws.get(i, i))
        c1, c2 = st.columns(2)
        fields.select(f"h2h_{side}_precision", list(PRECISIONS), container=c1, label="Precision",
                      format_func=lambda p: PRECISION_TITLES.get(p, p))
        tier = BASIS_TITLES.get(state.scenario().basis, state.scenario().basis)
        fields.select(f"h2h_{side}_basis", [SIDEBAR, *BASIS_TITLES], container=c2, label="Cost tier",
                      format_func=lambda b: f"Sidebar's: {tier}" if b == SIDEBAR else BASIS_TITLES.get(b, b),
                      from_value=lambda v: v or SIDEBAR, to_value=lambda v: None if v == SIDEBAR else v,
                      help="The sidebar's cost tier unless set here; custom uses the sidebar's custom $ per "
                           "GPU-hour of existence")


def kpis(h: HeadToHead) -> None:
    """One tile per level: B's cost as a multiple of A's."""
    rows = h.ratio.to_dicts()
    cols = st.columns(max(1, min(len(rows), 4)))
    for col, r in zip(cols * 2, rows):
        ratio = r["cost_ratio_b_to_a"]
        lv = r[LEVEL_COLUMN]
        if ratio is None:
            who = [s for s, k in (("A", "usd_per_m_output_tokens_all_in_a"), ("B", "usd_per_m_output_tokens_all_in_b"))
                   if r[k] is None]
            col.metric(f"At {lv:g} tok/s per user", "not reached", help=f"Set-up {' and '.join(who)} has no "
                       f"deployment at least {lv:g} tokens/s per user fast")
            continue
        col.metric(f"At {lv:g} tok/s per user: B costs", f"{ratio:,.2f}x A",
                   delta=("not distinguishable (bands overlap)" if r.get("cheaper") == "not distinguishable"
                          else f"{r.get('cheaper') or '?'} cheaper beyond the bands"), delta_color="off",
                   help=f"A {fmt.usd_per_m(r['usd_per_m_output_tokens_all_in_a'])}, B "
                        f"{fmt.usd_per_m(r['usd_per_m_output_tokens_all_in_b'])} per M output tokens, all-in; "
                        f"throughput per GPU B / A = {r['throughput_ratio_b_to_a']:,.2f}x")


def efficiency_note(picks: pl.DataFrame, factors: dict, cat, assumptions, levels) -> str:
    """Each set-up's efficiencies (calibration profile or assumed) and its band at the middle level it reaches."""
    lines = []
    for s in ("A", "B"):
        used = profiles.answer_text(cat, factors[s][0], assumptions)
        rows = picks.filter(pl.col("setup") == s, pl.col(COST).is_not_null()).sort(LEVEL_COLUMN)
        text = f"**{s}:** {used}"
        if rows.height:
            want = sorted(levels)[len(levels) // 2] if levels else None
            pick = rows.filter(pl.col(LEVEL_COLUMN) == want) if want is not None else rows.head(0)
            r = (pick if pick.height else rows.head(1)).row(0, named=True)
            cost = profiles.band_text(r[f"{COST}_low"], r[f"{COST}_high"], fmt.usd_per_m, "per M output tokens all-in")
            speed = profiles.band_text(r["tokens_per_s_per_user_low"], r["tokens_per_s_per_user_high"], fmt.rate,
                                       "output tokens/s per user")
            if cost and speed:
                text += f"; band at {r[LEVEL_COLUMN]:g} tok/s per user: {cost}, {speed}"
        lines.append(text + ".")
    return ("Efficiencies and band (10th to 90th percentile of held-out measured / predicted; each profile's basis "
            "on the Calibration page):  \n" + "  \n".join(lines))


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    models = dict(cat.models.select("id", "display_name").rows())
    hws = dict(cat.accelerators.select("id", "display_name").rows())
    st.title("Head to head")
    st.caption(f"Two set-ups on {sc.input_len:,} input / {sc.output_len:,} output tokens (workload from the sidebar): "
               "each searched over every deployment (tensor / attention-data / expert / pipeline parallel, "
               "aggregated or disaggregated, every batch), compared on cost per M output tokens (all-in) at each "
               "interactivity level.")
    ca, cb = st.columns(2)
    setup_inputs("a", ca, models, hws)
    setup_inputs("b", cb, models, hws)
    levels = interactivity.levels_input()
    sc = state.scenario()
    a, b = setups(sc)
    assumptions, economics = sc.assumptions(), sc.economics(cat)
    try:
        h = compute(cat_in_use.token, a, b, tuple(levels), sc.input_len, sc.output_len, repr(assumptions),
                    repr(economics), _assumptions=assumptions, _economics=economics, _catalog=cat,
                    decoding=sc.decoding(), slo_percentile=sc.slo_percentile)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    names = labels(a, b, models, hws)
    st.caption(safe_text.md(label(a, "A", models, hws)) + "  \n" + safe_text.md(label(b, "B", models, hws)))
    kpis(h)
    front = h.frontier.with_columns(setup_label=pl.col("setup").replace_strict(names, return_dtype=pl.String))
    picks = h.at_levels.with_columns(setup_label=pl.col("setup").replace_strict(names, return_dtype=pl.String))
    factors = {s: profiles.band_factors(cat, x.hardware, x.precision, assumptions) for s, x in (("A", a), ("B", b))}
    st.markdown(efficiency_note(picks, factors, cat, assumptions, levels))
    st.subheader("Both frontiers")
    show_measured, near = interactivity.measured_controls("h2h")
    measured = None
    if show_measured:
        parts = []
        for s, setup in zip(("A", "B"), (a, b)):
            m = interactivity.measured_for(setup.model, [setup.hardware], sc, front.filter(pl.col("setup") == s),
                                           near=near, cost=COST, data_dir=state.data_dir())
            parts.append(m.with_columns(setup_label=pl.lit(names[s])))
        measured = pl.concat(parts, how="diagonal_relaxed")
    order = [names["A"], names["B"]]
    chart.show(charts.cost_frontier_chart, front, y=COST, series="setup_label", order=order, levels=levels,
               picks=picks, measured=measured, key="h2h.chart", title_text="Cost versus interactivity, A and B",
               subtitle="Pareto frontier of each set-up", cache_key=(cat_in_use.token, sc, show_measured, near))
    n_meas = 0 if measured is None else measured.height
    st.caption("Rings: the point read at each level. " + (f"Triangles: {n_meas} public measurement(s) of these "
                                                          "models on these accelerators, priced at each set-up's "
                                                          "$ per utilized GPU-hour." if n_meas else
                                                          "No public measurement of these set-ups."))
    meta = {"scenario": sc.to_query_params()}
    assumptions_frame = sources.show(cat, assumptions, economics, key="h2h.sources", model=a.model,
                                     hardware=[a.hardware, b.hardware], region=sc.region)
    st.subheader("Ratio at each level")
    table.show(h.ratio, key="h2h.ratio", name="head-to-head-ratio", columns=[c for c in RATIO_SHOWN
                                                                             if c in h.ratio.columns],
               assumptions=assumptions_frame, metadata=meta, catalog=cat,
               caption="Cost B / A below 1: B is cheaper at that interactivity. '–': a set-up does not reach it.")
    st.subheader("Each set-up at each level")
    table.show(picks.sort(LEVEL_COLUMN, "setup"), key="h2h.setups", name="head-to-head-setups",
               columns=[c for c in SETUP_SHOWN if c in picks.columns], assumptions=assumptions_frame, metadata=meta,
               catalog=cat, widths={"setup_label": "medium"})
    st.subheader("Where the time per output token goes")
    if h.breakdown.height:
        long = h.breakdown.with_columns(bar_label=pl.col("setup") + pl.lit(" at ")
                                        + pl.col(LEVEL_COLUMN).cast(pl.Int64).cast(pl.String) + pl.lit(" tok/s"))
        chart.show(charts.breakdown_chart, long, key="h2h.breakdown", cache_key=(cat_in_use.token, sc, "breakdown"))
        wide = h.binding.with_columns(setup_label=pl.col("setup").replace_strict(names, return_dtype=pl.String))
        table.show(wide, key="h2h.binding", name="head-to-head-step-breakdown",
                   columns=[c for c in BINDING_SHOWN if c in wide.columns], assumptions=assumptions_frame,
                   metadata=meta, catalog=cat, widths={"setup_label": "medium"},
                   caption="The roofline side that binds (memory: weights + KV-cache reads; compute: GEMMs + "
                           "attention) is split in its parts; the other side runs under it (hidden). Communication "
                           "is what overlap does not hide; overhead is the fixed per-step and per-layer cost. Per "
                           "output token: a step that emits several tokens (MTP) is divided by them.")
    else:
        st.info("Neither set-up reaches any of the levels: nothing to break down.", icon=":material/info:")


if __name__ == "__main__":
    render()
