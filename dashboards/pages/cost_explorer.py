"""Cost explorer: what one model costs on one accelerator, and how batch size moves it.

Inputs: the shared sidebar (model, accelerator, precision, lengths, power, finance) plus GPUs per
replica and the batch. One econ call (cost table at the chosen batch + the batch curve), then KPIs,
the cost/throughput-vs-batch chart with the KV-cache wall and the memory/compute crossover, the
table with downloads, and the assumptions and sources.
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
from dashboards.components import chart, fields, fmt, profiles, safe_text, scenario_sidebar, sources, state, table  # noqa: E402,E501
from dashboards.components.scenario_sidebar import BASIS_TITLES  # noqa: E402
from dashboards.components import sensitivity  # noqa: E402
from econ.analyses.compare import auto_batch_row, curve_on_layout  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402
from econ.analyses.sweep import cost_table, decoding_note  # noqa: E402

TITLE = "Cost explorer"
ICON = ":material/payments:"
ORDER = 10

GPU_CHOICES = ["auto", "1", "2", "4", "8", "16", "32", "64", "72", "128"]
CURVE_COLUMNS = ["batch_size", "binding_wall", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "tpot_s",
                 "ttft_s", "hbm_used_frac", "usd_per_gpu_hour", "usd_per_m_input_tokens", "usd_per_m_output_tokens",
                 "usd_per_m_blended_tokens"]


@memory.cached(show_spinner=False, max_entries=64, ttl=3600)
def explore(token: str, sc: Scenario, _catalog=None) -> tuple[dict, pl.DataFrame]:
    """The KPI row and the batch curve, cached per catalog + scenario.

    The KPI row is at the scenario's batch, else ("auto") at the sweet spot, or, when the sweet spot is
    slower than the scenario's speed floor, at the largest batch of the curve that meets it
    (:func:`econ.analyses.compare.auto_batch_row`, the rule of ``econ cost --batch auto``). The curve is evaluated
    on the KPI row's layout.
    """
    cat = _catalog if _catalog is not None else state.catalog()
    kw = dict(sc.cost_kwargs(), assumptions=sc.assumptions(), economics=sc.economics(cat))
    if sc.batch_size is not None:
        row = cost_table(cat, batch_sizes=[sc.batch_size], **kw).row(0, named=True)
        return row, curve_on_layout(cat, row, **kw)
    first, curve = auto_batch_row(cat, min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, **kw)
    row = first.row(0, named=True)
    if curve is None:
        curve = curve_on_layout(cat, row, **kw)  # econ.analyses.sweep.batch_curve's rows, without re-deriving the layout
    return row, curve


def kpis(row: dict, sc: Scenario) -> None:
    """The headline numbers, formatted as an analyst reads them."""
    mix = f"{sc.input_output_mix:g}:1"
    c = st.columns(4)
    c[0].metric("$ per M input tokens", fmt.usd_per_m(row["usd_per_m_input_tokens"]),
                help="Prefill cost of a million prompt tokens (uncached) at this deployment")
    c[1].metric("$ per M output tokens", fmt.usd_per_m(row["usd_per_m_output_tokens"]),
                help="Decode cost of a million generated tokens at this batch")
    c[2].metric(f"$ per M blended tokens ({mix})", fmt.usd_per_m(row["usd_per_m_blended_tokens"]),
                help=f"{mix} input:output, prefix-cache hit rate {sc.cache_hit_frac:.0%}")
    c[3].metric("$ per utilized GPU-hour", fmt.usd(row["usd_per_gpu_hour"]),
                help="Owned: capex annuity + facility + opex + power per utilized hour; a tier's rate (per GPU-hour "
                     "of existence) divided by the utilization")
    if sc.basis != "owned" and row.get("usd_per_gpu_hour") is not None:
        rate = row["usd_per_gpu_hour"] * sc.utilization_frac
        st.caption(f"{fmt.usd(rate)} per GPU-hour of existence (the {BASIS_TITLES.get(sc.basis, sc.basis)} rate) / "
                   f"{sc.utilization_frac:.0%} utilization = {fmt.usd(row['usd_per_gpu_hour'])} per utilized "
                   "GPU-hour")
    c = st.columns(4)
    c[0].metric("Output tokens/s per GPU", fmt.rate(row["output_tokens_per_s_per_gpu"]),
                help="Decode throughput of the replica divided by its GPUs")
    c[1].metric("Output tokens/s per user", fmt.rate(row["tokens_per_s_per_user"]),
                help="1 / time per output token: the speed one stream sees")
    c[2].metric("Max batch (KV-cache wall)", fmt.count(row["max_batch_size"]),
                help="Largest batch whose KV cache fits beside the weights at input + output tokens")
    c[3].metric("Binding wall", charts.WALL_TITLES.get(row["binding_wall"], row["binding_wall"]),
                help="What limits the decode step at this batch: memory bandwidth, compute, network, or capacity")


def task_section(row: dict, sc: Scenario, cat) -> None:
    """$ per task beside $/M tokens for a task preset (issue 22): calls per task, the true cost of a cached input
    token (storage for the reuse interval + load, :func:`econ.analyses.tasks.with_task_costs`) and where the waiting
    prefixes' KV lives."""
    from econ.analyses.tasks import with_task_costs
    from econ.presets import WORKLOADS

    w = WORKLOADS.get(sc.workload)
    if w is None or not w.is_task or not row.get("feasible"):
        return
    t = with_task_costs(pl.DataFrame([row]), cat, calls_per_task=w.calls_per_task,
                        prefix_reuse_frac=w.prefix_reuse_frac, reuse_interval_s=w.reuse_interval_s,
                        assumptions=sc.assumptions()).row(0, named=True)
    st.subheader(f"Per task: {safe_text.md(w.label)}")
    c = st.columns(4)
    c[0].metric("$ per task", fmt.usd(t["usd_per_task"]),
                help=f"{w.calls_per_task:g} calls x $ per call; each call: all-in $/M output x {sc.output_len:,} "
                     f"output tokens + {w.prefix_reuse_frac:.1%} of {sc.input_len:,} prompt tokens at the cached cost")
    c[1].metric("$ per call", fmt.usd(t["usd_per_call"]))
    c[2].metric("Cached input, true $ per M", fmt.usd_per_m(t["usd_per_m_cached_input_tokens_true"]),
                help=f"KV storage for {w.reuse_interval_s:g} s + loading it "
                     f"(storage {fmt.usd_per_m(t['usd_per_m_cached_storage'])}, load "
                     f"{fmt.usd_per_m(t['usd_per_m_cached_load'])}); recomputing costs "
                     f"{fmt.usd_per_m(t['usd_per_m_input_tokens'])} per M")
    c[3].metric("Waiting prefixes live in", str(t["kv_tier_medium"]),
                help=f"{t['sessions_waiting']:,.0f} sessions wait for their next call (Little's law); their KV fills "
                     "HBM beside the weights and the batch, then host memory, NVMe, a remote pool (data/kv_tiers.csv)")
    st.caption(f"Task preset source: {safe_text.md(w.source)}. Prefix-cache hit rate in the sidebar: "
               f"{sc.cache_hit_frac:.1%} (the preset sets it to its prefix-reuse share). Waiting sessions kept: "
               f"{t['sessions_held_hbm']:,.0f} in HBM alone, {t['sessions_held_host']:,.0f} with host memory.")
    with st.expander("KV-cache tiers of this system (data/kv_tiers.csv)"):
        from econ.tables.kv_tiers import load_kv_tiers, system_tiers

        tiers = pl.DataFrame([{k: r[k] for k in ("tier", "medium", "capacity_bytes", "read_bytes_per_s",
                                                 "usd_per_gb_hour", "source", "as_of")}
                              for r in system_tiers(load_kv_tiers(cat.data_dir), sc.hardware)])
        table.show(tiers, key="ce.tiers", name=f"kv-tiers-{sc.hardware}", catalog=cat)


def efficiency_note(row: dict, sc: Scenario, cat) -> str:
    """Which efficiencies the KPIs used (calibration profile or assumed) and the band of their cost and speed."""
    used = profiles.answer_text(cat, row.get("efficiency_profile"), sc.assumptions())
    cost = profiles.band_text(row.get("usd_per_m_output_tokens_low"), row.get("usd_per_m_output_tokens_high"),
                              fmt.usd_per_m, "per M output tokens")
    speed = profiles.band_text(row.get("tokens_per_s_per_user_low"), row.get("tokens_per_s_per_user_high"),
                               fmt.rate, "output tokens/s per user")
    text = f"**Efficiencies:** {used}; see the Calibration page."
    prof = row.get("efficiency_profile")
    if cost and speed:
        pinned = len(sc.assumptions().assumed)
        caveat = (f" It is the calibrated profile's: the {pinned} efficienc{'ies' if pinned != 1 else 'y'} you set "
                  f"{'are' if pinned != 1 else 'is'} not covered by it." if pinned else "")
        return text + f"  \n**Band** ({profiles.band_label(cat, prof)}): {cost}; {speed}.{caveat}"
    if prof and prof != "assumed" and not row.get("feasible", True):
        return text + "  \n**Band:** none (this deployment has no cost)."
    return text + "  \n**Band:** none (no calibrated profile: the error of your own efficiencies is unknown)."


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    st.title("Cost explorer")
    model = safe_text.md(cat.model(sc.model)["display_name"])  # names may come from a user's uploaded table
    hw = safe_text.md(cat.accelerator(sc.hardware)["display_name"])
    st.caption(f"{model} on {hw}, {sc.precision.upper()} weights, {sc.input_len:,} input / {sc.output_len:,} output "
               f"tokens, {safe_text.md(BASIS_TITLES.get(sc.basis, sc.basis))} at "
               f"${sc.effective_usd_per_kwh(cat):.4f}/kWh, PUE {sc.pue:.2f}.")
    c1, c2, c3 = st.columns([1, 1, 2])
    options = GPU_CHOICES + ([str(sc.num_gpus)] if sc.num_gpus is not None and str(sc.num_gpus) not in GPU_CHOICES
                             else [])
    fields.select("num_gpus", options, container=c1, label="GPUs per replica",
                  format_func=lambda s: "Auto (cheapest $/M output)" if s == "auto" else s,
                  from_value=lambda v: "auto" if v is None else str(v),
                  to_value=lambda s: None if s == "auto" else int(s),
                  help="Accelerators per model replica; tensor parallel inside the scale-up domain, pipeline across")
    with c2:
        fields.optional_number("batch_size", auto_label="Auto batch",
                               label="Batch (sequences)",
                               default_value=64,
                               help="Auto: min(KV-cache wall, memory/compute crossover), or the largest batch that "
                                    f"still gives every user the speed floor ({state.scenario().min_tokens_per_s_per_user:g}"
                                    " output tokens/s, the default of every page and command)")
    sc = state.scenario()
    try:
        row, curve = explore(cat_in_use.token, sc, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    if not row["feasible"]:
        st.warning(f"Batch {row['batch_size']:,} is not feasible: {row['infeasible_reason']} "
                   f"(max batch {row['max_batch_size']:,}). Pick a smaller batch or more GPUs.",
                   icon=":material/warning:")
    kpis(row, sc)
    used = decoding_note(row, sc.decoding(), cat)
    if used:  # the formats and speculative decoding priced, and where each default came from
        st.caption(safe_text.md(used[0].upper() + used[1:]))
    task_section(row, sc, cat)
    st.markdown(efficiency_note(row, sc, cat))
    sweet = row["sweet_spot_batch"]
    c3.markdown(
        f"**Deployment:** {row['num_gpus']} GPU{'s' if row['num_gpus'] != 1 else ''} (TP {row['tp']} x PP {row['pp']}), "
        f"batch {row['batch_size']:,}  \n"
        f"**Latency:** {fmt.seconds(row['tpot_s'])} per output token, time to first token "
        f"{fmt.seconds(row['ttft_s'])}  \n"
        f"**Crossover:** " + (f"compute-bound above {sweet:,.0f} sequences" if sweet is not None
                               else "never compute-bound (KV reads grow as fast as FLOPs)"))
    chart.show_panels(charts.batch_curve_chart, curve, max_batch=int(row["max_batch_size"]), sweet_spot=sweet,
                      selected_batch=int(row["batch_size"]), selected_row=row, key="ce.chart",
                      cache_key=(cat_in_use.token, sc))  # side by side, stacked on a phone; built once per scenario
    st.caption("Dashed lines: the KV-cache capacity wall (largest batch that fits) and the memory/compute "
               "crossover (batch where decode turns compute-bound). Diamond: the batch of the KPIs.")
    sensitivity.cost_panel(cat, cat_in_use.token, sc, key="ce.sens")
    frame = sources.show(cat, sc.assumptions(), sc.economics(cat), key="ce.sources", model=sc.model,
                         hardware=sc.hardware, region=sc.region)
    st.subheader("Cost and throughput by batch size")
    table.show(curve, key="ce.curve", name=f"cost-{sc.model}-{sc.hardware}-{sc.precision}", columns=CURVE_COLUMNS,
               download_frame=curve, assumptions=frame, metadata={"scenario": sc.to_query_params()}, catalog=cat,
               xlsx=lambda: workbook(curve, sc, cat, frame),
               caption="Downloads hold every result column; the XLSX computes $/GPU-hour and $/M tokens with live "
                       "formulas of its Assumptions sheet (change the power price there and every cost follows).")


def workbook(curve: pl.DataFrame, sc: Scenario, cat, sources_frame: pl.DataFrame) -> bytes:
    """The cost table as an XLSX with a live cost chain (:func:`dashboards.components.table.cost_workbook`)."""
    return table.cost_workbook(curve, sc, cat, sources_frame)


if __name__ == "__main__":
    render()
