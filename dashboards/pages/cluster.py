"""Cluster: capex, power, racks, reliability, training and serving for G accelerators, and the fleet planner.

One econ call per panel: :func:`econ.analyses.cluster.cluster_plan` over the chosen size and a ladder of sizes, and
again for what a power or capex budget buys (the same function and inputs as ``econ cluster`` / ``econ fleet size``);
:func:`econ.analyses.cluster.power_table` (power on each basis); :func:`econ.analyses.cluster.fleet_numbers` (seed
001's calculators); :func:`econ.economics.buildout.buildout_capex` (itemized build-out);
:func:`econ.analyses.cluster.training_run` (a 6ND run with failures and checkpoints).
The page gathers inputs and shows results; every number is formatted by ``econ.formatting``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import charts  # noqa: E402
from econ import vocabulary as V  # noqa: E402
from econ.vocabulary import column_title  # noqa: E402
from dashboards.components import memory  # noqa: E402
from dashboards.components import chart, fields, fmt, safe_text, scenario_sidebar, sources, state, table  # noqa: E402
from econ.analyses import cluster as cl  # noqa: E402
from econ.analyses.cluster import cluster_plan, plan_status  # noqa: E402
from econ.economics import buildout  # noqa: E402
from econ.errors import EconError  # noqa: E402
from econ.physics import fleet  # noqa: E402
from econ.physics.fleet import AI_RACK_KW_PER_RACK, AIR_COOLING_LIMIT_KW_PER_RACK  # noqa: E402
from econ.physics.precision import PEAK_COLUMN, PRECISIONS  # noqa: E402
from econ.io.scenario import Scenario  # noqa: E402
from dashboards.components import sensitivity  # noqa: E402

TITLE = "Cluster"
ICON = ":material/dns:"
ORDER = 30

SUMMARY_COLUMNS = ["cluster_gpus", "gpus_per_rack", "capex_total_usd", "capex_accelerators_usd", "capex_facility_usd",
                   "power_basis", "per_gpu_power_w", "it_power_mw", "facility_power_mw", "annual_energy_mwh",
                   "annual_energy_cost_usd", "rack_count", "rack_power_kw", "rack_cooling", "peak_flop_per_s",
                   "efficiency_model", "mfu_frac", "scaling_efficiency_frac", "goodput_frac", "realized_flop_per_s",
                   "cluster_mtbf_h", "prob_failure_in_window_frac", "checkpoint_bytes", "checkpoint_write_s",
                   "training_days", "training_cost_usd", "serving_precision", "serving_gpus_per_replica",
                   "serving_batch_size", "serving_tokens_per_day", "price_usd_per_m_input_tokens", "demand_share_frac",
                   "revenue_per_year_usd", "opex_per_year_usd", "payback_years", "irr_frac",
                   "revenue_capacity_sold_per_year_usd", "payback_capacity_sold_years", "irr_capacity_sold_frac"]

POWER_BASIS_LABELS = {"all-in": "All-in IT", "tdp": "Board TDP", "typed": "Typed (W per GPU)"}
EFFICIENCY_LABELS = {"seed001": "Seed 001 chain", "seed000": "Seed 000 curve"}
DISPLAY_NAMES = {"realized_frac_of_peak": "realized_of_peak_frac"}


def scale_ladder(num_gpus: int) -> list[int]:
    """Cluster sizes for the scale curve: powers of two from 8 to at least 131,072, and the chosen size first."""
    top = max(1 << 17, int(num_gpus))
    ladder = [int(2 ** k) for k in range(3, int(np.ceil(np.log2(top))) + 1)]
    return [int(num_gpus)] + [g for g in ladder if g != num_gpus]


def revenue_inputs() -> tuple[float, float]:
    """(input price [USD/M tokens], demand share [-]) from the page's widgets (the vocabulary's defaults before)."""
    from econ.vocabulary import default
    return (float(st.session_state.get("fl.price_in", default("price_usd_per_m_input_tokens"))),
            float(st.session_state.get("fl.demand", 100.0 * default("demand_share_frac"))) / 100.0)


def plan_inputs(sc: Scenario, cat, power_basis, efficiency_model: str, scaling_efficiency,
                revenue: tuple[float, float] | None = None) -> dict:
    """The inputs of :func:`econ.analyses.cluster.cluster_plan` from the scenario and the page's widgets: one set for
    the cluster at the top of the page and for the budget tab (the CLI's ``econ cluster`` reads the same fields);
    ``revenue`` = (input price, demand share) of :func:`revenue_inputs`."""
    p_in, share = revenue if revenue is not None else (None, 1.0)
    return dict(price_usd_per_m_input_tokens=p_in, demand_share_frac=share,
        hardware=sc.hardware, model=sc.model, decoding=sc.decoding(), slo_percentile=sc.slo_percentile,
        gpus_per_rack=sc.gpus_per_rack, training_precision=sc.training_precision, mfu_frac=sc.mfu_frac,
        overhead_fracs=(sc.bubble_frac, sc.checkpoint_overhead_frac, sc.failure_recovery_frac, sc.maintenance_frac),
        failure_window_h=sc.failure_window_h, mtbf_h_per_gpu=sc.mtbf_h_per_gpu,
        checkpoint_write_gb_per_s=sc.checkpoint_write_gb_per_s, training_tokens=sc.training_tokens,
        min_tokens_per_s_per_user=sc.min_tokens_per_s_per_user, precisions=sc.compare_precisions or None,
        price_usd_per_m_output_tokens=sc.price_usd_per_m_output_tokens, input_len=sc.input_len,
        output_len=sc.output_len, assumptions=sc.assumptions(), economics=sc.economics(cat),
        power_basis=power_basis, efficiency_model=efficiency_model, scaling_efficiency=scaling_efficiency)


@memory.cached(show_spinner=False, max_entries=32, ttl=3600)
def plan(token: str, sc: Scenario, power_basis, efficiency_model: str, scaling_efficiency, revenue=None,
         _catalog=None) -> pl.DataFrame:
    """:func:`econ.analyses.cluster.cluster_plan` at the chosen size (first row) and the scale ladder."""
    cat = _catalog if _catalog is not None else state.catalog()
    return cluster_plan(cat, num_gpus=scale_ladder(sc.cluster_gpus),
                        **plan_inputs(sc, cat, power_basis, efficiency_model, scaling_efficiency, revenue))


@memory.cached(show_spinner=False, max_entries=32, ttl=3600)
def budget_plan(token: str, sc: Scenario, power_basis, efficiency_model: str, scaling_efficiency, kind: str,
                amount: float, power_of: str, prices_key: tuple | None, revenue=None,
                _prices: buildout.BuildoutPrices | None = None, _catalog=None) -> pl.DataFrame:
    """:func:`econ.analyses.cluster.cluster_plan` for what a power [MW] or capex [USD] budget buys: the same inputs as
    :func:`plan` (serving through :func:`econ.analyses.cluster.serving_rate`)."""
    cat = _catalog if _catalog is not None else state.catalog()
    return cluster_plan(cat, power_w=amount * 1e6 if kind == "power" else None, power_of=power_of,
                        capex_usd=amount if kind == "capex" else None, it_prices=_prices,
                        **plan_inputs(sc, cat, power_basis, efficiency_model, scaling_efficiency, revenue))


def text_table(frame: pl.DataFrame, *, key: str, name: str, columns=None, height: int | str = "auto",
               download: bool = True, static: bool = False) -> None:
    """A result frame as text cells in SI units (``econ.formatting.cell``); downloads keep the stored units.

    ``static``: a plain table that wraps its cells (no cut-off values on a phone), for a few rows.
    """
    view = frame.select(columns) if columns else frame
    shown = view.rename({k: v for k, v in DISPLAY_NAMES.items() if k in view.columns})
    text = _text_cells(tuple(shown.columns), tuple(shown.rows()))
    if static:
        st.table(text.to_pandas().set_index(text.columns[0]))
    else:
        st.dataframe(text, hide_index=True, height=height, key=f"{key}.table")
    if download:
        table.downloads(view, key=key, name=name)


@memory.cached(max_entries=64, ttl=3600)
def _text_cells(columns: tuple, rows: tuple) -> pl.DataFrame:
    """Each cell formatted by its column's unit (``econ.formatting.cell``), memoized per content (a rerun that
    does not change the numbers does not format them again; keyed on the pickled content, so a NaN cell, which is
    not equal to itself, still hits)."""
    labels = {"num_gpus": "Cluster GPUs", "per_gpu_power_w": "Power per GPU", "power_basis": "Power basis"}
    return pl.DataFrame({labels.get(c, column_title(c)): [fmt.cell(c, r[i]) for r in rows]
                         for i, c in enumerate(columns)})


def inputs() -> tuple[object, str, float | None]:
    """The cluster's own inputs (the sidebar gives accelerator, model, power and finance)."""
    c = st.columns(4)
    fields.number("cluster_gpus", container=c[0], label="Accelerators in the cluster", step=1024,
                  help="G: every other number on this page scales from it")
    fields.select("training_precision", list(PRECISIONS), container=c[1], label="Training precision",
                  format_func=str.upper, help="Dense peak used for training FLOP/s")
    fields.number("price_usd_per_m_output_tokens", container=c[2], label="Selling price ($ per M output tokens)",
                  fmt="%.3f", step=0.05, help="Price the served output tokens sell at (revenue and payback)")
    fields.number("training_tokens", container=c[3], label="Training tokens (trillions)", scale=1e-12, unit="T",
                  fmt="%.1f", step=1.0, help="Tokens of a 6 x params x tokens training run of the chosen model")
    from econ.vocabulary import FIELDS
    c = st.columns(4)
    f_in, f_d = FIELDS["price_usd_per_m_input_tokens"], FIELDS["demand_share_frac"]
    c[0].number_input("Selling price, input ($ per M tokens)", min_value=float(f_in.lo), max_value=float(f_in.hi),
                      value=float(f_in.default), step=0.05, format="%.3f", key="fl.price_in",
                      help=f"{f_in.help}; cache hits (sidebar) sell at half of it. Source: {f_in.source}")
    c[1].number_input("Demand share (% of capacity sold)", min_value=1.0, max_value=100.0,
                      value=100.0 * float(f_d.default), step=5.0, format="%.0f", key="fl.demand",
                      help=f"{f_d.help}. The capacity-sold case is shown beside it")
    c = st.columns(4)
    basis = c[0].selectbox("Power per GPU", list(POWER_BASIS_LABELS), format_func=POWER_BASIS_LABELS.get,
                           key="fl.power_basis",
                           help="TDP: the board's rated power (seed 001: H100 700 W -> 10,000 GPUs = 7 MW IT). "
                                "All-in: critical IT incl. the GPU's share of host, NICs and switches, no facility "
                                "overhead (H100 1.5 kW: SemiAnalysis's 150 MW for 100k H100). Facility = IT x PUE.")
    power_basis = basis
    if basis == "typed":
        power_basis = c[1].number_input("Typed power per GPU (W)", min_value=1.0, max_value=100_000.0, value=1400.0,
                                        step=50.0, key="fl.power_w", help="Seed 000 uses ~1.4 kW all-in")
    model = c[2].selectbox("Efficiency at scale", list(EFFICIENCY_LABELS), format_func=EFFICIENCY_LABELS.get,
                           key="fl.efficiency",
                           help="Seed 000: an illustrative MFU that falls 2 points per doubling (no goodput). "
                                "Seed 001: MFU 50% x scaling efficiency (Table 5: 90% at 32, 70% at 256, 50% at "
                                "1,024, 35% at 8,192 GPUs) x goodput (1 - overheads, Table 8: 77%).")
    scaling = None
    if model == "seed001":
        auto = c[3].checkbox("Table 5 scaling", value=True, key="fl.scaling.auto")
        if not auto:
            scaling = c[3].number_input("Scaling efficiency (%)", min_value=1.0, max_value=100.0, value=50.0,
                                        step=5.0, key="fl.scaling") / 100.0
    with st.expander("Racks, MFU, overheads and reliability"):
        c = st.columns(4)
        with c[0]:
            fields.optional_number("gpus_per_rack", auto_label="Auto GPUs per rack", label="GPUs per rack",
                                   default_value=32, help="Auto: the NVLink domain for rack-scale systems "
                                                          "(NVL72), else 32 (four 8-GPU servers)")
        with c[1]:
            fields.optional_number("mfu_frac", auto_label="MFU from the efficiency model", label="MFU (%)",
                                   scale=100.0, unit="%", fmt="%.1f", default_value=0.40,
                                   help="Auto: seed 000's curve (62% at 1 GPU minus 2 points per doubling) or "
                                        "seed 001's 50%")
        fields.number("failure_window_h", container=c[2], label="Failure window (h)", fmt="%.0f", step=1.0)
        fields.number("mtbf_h_per_gpu", container=c[3], label="MTBF per GPU (h)", fmt="%.0f", step=1000.0,
                      help="Seed 001 Table 6: 50,000 h")
        c = st.columns(5)
        for i, (f, label) in enumerate([("bubble_frac", "Pipeline bubbles (%)"),
                                        ("checkpoint_overhead_frac", "Checkpointing (%)"),
                                        ("failure_recovery_frac", "Failure recovery (%)"),
                                        ("maintenance_frac", "Maintenance (%)")]):
            fields.number(f, container=c[i], label=label, scale=100.0, unit="%", fmt="%.1f", step=1.0,
                          help="Share of wall clock lost; seed 001 Table 8 budget 5/3/10/5%")
        fields.number("checkpoint_write_gb_per_s", container=c[4], label="Checkpoint write (GB/s)", fmt="%.0f",
                      step=10.0, help="Aggregate sustained storage bandwidth (seed 001 Table 7: 100 GB/s)")
    return power_basis, model, scaling


def _grid(n: int, per_row: int = 3) -> list:
    """``n`` metric slots, ``per_row`` to a row, so values such as "1.01 EFLOP/s" are not cut off at 1,440 px."""
    slots = []
    for start in range(0, n, per_row):
        slots.extend(st.columns(per_row)[: min(per_row, n - start)])
    return slots


def kpis(row: dict, sc: Scenario) -> None:
    """Grouped headline numbers for the chosen cluster size."""
    st.markdown("**Capex and power**")
    c = _grid(5)
    c[0].metric("Capex total", fmt.usd_millions(row["capex_total_usd"]), help="Accelerators (all-in) + facility")
    c[1].metric("Capex: IT equipment", fmt.usd_millions(row["capex_accelerators_usd"]),
                help="Accelerators with their share of servers and network (all-in capex per accelerator)")
    c[2].metric("Capex: facility", fmt.usd_millions(row["capex_facility_usd"]), help="Build cost per MW of IT load")
    c[3].metric("IT power", fmt.megawatts(row["it_power_mw"]),
                help=f"G x {fmt.watts(row['per_gpu_power_w'])} per GPU ({POWER_BASIS_LABELS.get(row['power_basis'])})")
    c[4].metric("Facility power", fmt.megawatts(row["facility_power_mw"]),
                help=f"IT power x PUE {row['pue']:.2f} (facility: {row['facility']})")
    c = _grid(5)
    c[0].metric("Annual energy", fmt.energy_mwh(row["annual_energy_mwh"]),
                help=f"Facility power x 8,760 h x utilization {sc.utilization_frac:.0%}")
    c[1].metric("Annual energy cost", fmt.usd_millions(row["annual_energy_cost_usd"]))
    c[2].metric("Racks", fmt.count(row["rack_count"]), help=f"{row['gpus_per_rack']} GPUs per rack")
    c[3].metric("Rack power", fmt.watts(row["rack_power_kw"] * 1e3),
                help=f"Air cooling tops out near {AIR_COOLING_LIMIT_KW_PER_RACK:.0f} kW per rack; a current AI rack "
                     f"draws ~{AI_RACK_KW_PER_RACK:.0f} kW (seed 001)")
    c[4].metric("Cooling", row["rack_cooling"].capitalize(),
                help=f"Rack power against the ~{AIR_COOLING_LIMIT_KW_PER_RACK:.0f} kW air-cooling limit and the "
                     f"~{AI_RACK_KW_PER_RACK:.0f} kW AI rack")
    st.markdown("**Compute, reliability, checkpoints, training**")
    c = _grid(5)
    c[0].metric("Peak compute", fmt.flops(row["peak_flop_per_s"]), help=f"Dense {sc.training_precision.upper()}")
    c[1].metric("Realized compute", fmt.flops(row["realized_flop_per_s"]), help=row["efficiency_chain"])
    c[2].metric("Cluster MTBF", fmt.seconds(row["cluster_mtbf_h"] * 3600), help="MTBF per GPU / G")
    c[3].metric(f"P(failure in {row['failure_window_h']:g} h)", fmt.pct(row["prob_failure_in_window_frac"]),
                help="1 - exp(-G t / MTBF)")
    c[4].metric("Effective % of peak", fmt.pct(row["realized_frac_of_peak"], 2), help=row["efficiency_chain"])
    c = _grid(5)
    c[0].metric("Checkpoint size", fmt.bytes_(row["checkpoint_bytes"]), help="14 bytes per parameter")
    c[1].metric("Checkpoint write", fmt.seconds(row["checkpoint_write_s"]),
                help=f"At {sc.checkpoint_write_gb_per_s:g} GB/s")
    c[2].metric("Training time", fmt.days(row["training_days"]),
                help=f"6 x active params x {sc.training_tokens / 1e12:g}T tokens / realized FLOP/s")
    c[3].metric("Training cost", fmt.usd_millions(row["training_cost_usd"]),
                help=f"G x wall-clock hours x {fmt.usd(row['usd_per_gpu_hour_training'])} per GPU-hour of existence "
                     "(a training run uses every hour, so this is also per utilized GPU-hour)")
    c[4].metric("Goodput", fmt.pct(row["goodput_frac"]), help="1 - (bubbles + checkpointing + recovery + maintenance)")
    st.markdown(f"**Serving at >= {sc.min_tokens_per_s_per_user:g} output tokens/s per user** (the one default "
                "speed floor of every page and command, MLPerf v5.0 interactive; the sidebar's Minimum tokens/s "
                "per user sets it)")
    c = _grid(5)
    c[0].metric("Output tokens per day", fmt.compact(row["serving_tokens_per_day"]),
                help=f"Whole replicas x output tokens/s per GPU x utilization {sc.utilization_frac:.0%} x 86,400 s")
    ok = row["serving_gpus_per_replica"] is not None
    c[1].metric("GPUs per serving replica", f"{row['serving_gpus_per_replica']} x {row['serving_precision'].upper()}"
                if ok else "none", help=(f"Batch {row['serving_batch_size']:,}, {row['serving_replicas']:,} replicas: "
                                         "the cheapest deployment meeting the floor (econ.analyses.compare.hardware_comparison)")
                if ok else "No deployment of this accelerator meets the floor")
    c[2].metric("Revenue per year", fmt.usd_millions(row["revenue_per_year_usd"]),
                help=f"{fmt.pct(row['demand_share_frac'])} of the capacity sold, output at "
                     f"{fmt.usd_per_m(row['price_usd_per_m_output_tokens'])} and the requests' input tokens at "
                     f"{fmt.usd_per_m(row['price_usd_per_m_input_tokens'])} per M; capacity sold: "
                     f"{fmt.usd_millions(row['revenue_capacity_sold_per_year_usd'])}")
    c[3].metric("Energy + opex per year", fmt.usd_millions(row["opex_per_year_usd"]))
    c[4].metric("Payback", "never" if row["payback_years"] is None else f"{row['payback_years']:,.2f} years",
                delta=("capacity sold: never" if row["payback_capacity_sold_years"] is None else
                       f"capacity sold: {row['payback_capacity_sold_years']:,.2f} years"), delta_color="off",
                help="Capex / (revenue - energy - opex), undiscounted; " + payback_band_text(row)
                     + "; IRR over the accelerator life "
                     + ("n/a" if row["irr_frac"] is None else fmt.pct(row["irr_frac"]))
                     + " (capacity sold: " + ("n/a" if row["irr_capacity_sold_frac"] is None
                                              else fmt.pct(row["irr_capacity_sold_frac"])) + ")")


def payback_band_text(row: dict) -> str:
    """The payback's calibration band in words (the serving rate at the ends of its profile's band,
    econ.analyses.cluster.cluster_plan ``payback_years_low`` / ``_high``)."""
    lo, hi = row.get("payback_years_low"), row.get("payback_years_high")
    if lo is None and hi is None:
        return "no calibration band"
    return (f"calibration band {fmt.years(lo) if lo is not None else 'never'} to "
            f"{fmt.years(hi) if hi is not None else 'never'} (the serving rate at the ends of its efficiency "
            "profile's band)")


def power_panel(cat, sc: Scenario, row: dict, power_basis) -> None:
    """IT and facility MW of this cluster on every power basis, racks against the cooling limits."""
    hw = cat.accelerator(sc.hardware)
    typed = power_basis if not isinstance(power_basis, str) else None
    frame = cl.power_table(sc.cluster_gpus, pue=row["pue"], gpus_per_rack=int(row["gpus_per_rack"]), tdp_w=hw["tdp_w"],
                           all_in_w=hw["all_in_power_w"], typed_w=typed)
    frame = frame.with_columns(pl.col("power_basis").replace(POWER_BASIS_LABELS)).drop("air_cooling_limit_kw",
                                                                                        "ai_rack_kw")
    st.caption(f"{sc.cluster_gpus:,} x {safe_text.md(hw['display_name'])} at PUE {row['pue']:.2f} (sidebar): IT = G x power per "
               f"GPU, facility = IT x PUE; {int(row['gpus_per_rack'])} GPUs per rack against the "
               f"~{AIR_COOLING_LIMIT_KW_PER_RACK:.0f} kW air-cooling limit and the ~{AI_RACK_KW_PER_RACK:.0f} kW "
               "AI rack (seed 001).")
    text_table(frame, key="fl.power", name=f"power-{sc.hardware}-{sc.cluster_gpus}", static=True)


def efficiency_panel(frame: pl.DataFrame, row: dict) -> None:
    """The chain for the chosen size and the scale curve."""
    long = {"seed001": "Seed 001: MFU x scaling efficiency x goodput", "seed000": "Seed 000: MFU(G) = 0.62 - 0.02 log2 G"}
    st.markdown(f"**{long[row['efficiency_model']]}** at {int(row['num_gpus']):,} GPUs: "
                f"{row['efficiency_chain']}; realized {fmt.flops(row['realized_flop_per_s'])} of "
                f"{fmt.flops(row['peak_flop_per_s'])} peak.")
    scale = frame.sort("num_gpus").unique("num_gpus", maintain_order=True)
    cols = ["num_gpus", "mfu_frac", "realized_frac_of_peak", "realized_flop_per_s", "peak_flop_per_s",
            "cluster_mtbf_h", "prob_failure_in_window_frac"]
    chart.show_panels(charts.mfu_scale_chart, scale, num_gpus=int(row["num_gpus"]), key="cl.scale",
               cache_key=(tuple(scale.select(cols).rows()), int(row["num_gpus"])))  # built once per content
    st.caption("Seed 000: MFU falls 2 points per doubling from 62% at one GPU (illustrative). Seed 001: MFU x scaling "
               "efficiency (held at 35% beyond 8,192 GPUs, where Table 5 ends) x goodput.")


def calculators_panel(cat, sc: Scenario) -> None:
    """Seed 001's fleet numbers for this cluster, each with its formula."""
    hw = cat.accelerator(sc.hardware)
    d = cl.FLEET_NUMBERS_DEFAULTS
    c = st.columns(4)
    serial = c[0].number_input("Amdahl serial fraction (%)", 0.1, 100.0, d["serial_frac"] * 100, 1.0,
                               key="fl.serial") / 100
    grad = c[1].number_input("All-reduce message (GB)", 0.001, 1e5, d["gradient_bytes"] / 1e9, 1.0, key="fl.grad",
                             help="Per GPU; 14 GB = 7B BF16 gradients (seed 001 Table 11)")
    params = c[2].number_input("Parameters checkpointed (B)", 0.1, 1e5, d["params"] / 1e9, 10.0, key="fl.params",
                               help="14 bytes each (mixed-precision Adam, seed 001 Table 7)") * 1e9
    restart = c[3].number_input("Restart after a failure (s)", 0.0, 1e5, d["restart_s"], 60.0, key="fl.restart",
                                help="ASSUMPTION: detection, replacement and reload; seed 001 gives none")
    c = st.columns(4)
    compute = c[0].number_input("Compute per GPU per step (s)", 0.001, 1e5, d["compute_s"], 0.5, key="fl.compute")
    rate = c[1].number_input("Requests per second", 0.001, 1e9, d["arrival_rate_per_s"], 10.0, key="fl.rate",
                             help="Little's law arrival rate (illustrative default)")
    latency = c[2].number_input("Seconds per request", 0.001, 1e5, d["request_latency_s"], 1.0, key="fl.latency",
                                help="TTFT + output tokens x TPOT (illustrative default)")
    per_rep = c[3].number_input("Sequences per replica", 1.0, 1e6, d["sequences_per_replica"], 8.0, key="fl.per_rep",
                                help="Concurrent sequences one serving replica holds at its latency target")
    frame = cl.fleet_numbers(
        max(int(sc.cluster_gpus), 2), scale_up_bytes_per_s=hw["scale_up_bandwidth_bytes_per_s"],
        scale_out_bytes_per_s=hw["scale_out_bandwidth_bytes_per_s"], serial_frac=serial, gradient_bytes=grad * 1e9,
        compute_s=compute, params=params, checkpoint_write_bytes_per_s=sc.checkpoint_write_gb_per_s * 1e9,
        window_h=sc.failure_window_h, mtbf_h_per_gpu=sc.mtbf_h_per_gpu, restart_s=restart, arrival_rate_per_s=rate,
        request_latency_s=latency, sequences_per_replica=per_rep)
    by_unit = {"s": fmt.seconds, "frac": fmt.pct, "B": fmt.bytes_, "x": lambda v: f"{fmt.sig(v)}x",
               "requests": fmt.count, "replicas": fmt.count}
    values = [by_unit.get(u, fmt.sig)(v) for v, u in zip(frame["value"], frame["unit"])]
    values = [f"{t} ({fmt.sig(v / 60, 4)} min)" if q == "Cluster MTBF" else t
              for t, v, q in zip(values, frame["value"], frame["quantity"])]
    st.caption(f"{safe_text.md(hw['display_name'])}: scale-up {hw['scale_up_bandwidth_gb_per_s']:g} GB/s vs scale-out "
               f"{hw['scale_out_bandwidth_gb_per_s']:g} GB/s per GPU per direction; latencies ~1 us NVLink, ~5 us "
               "InfiniBand NDR (seed 001 Table 4). Checkpoint bandwidth, MTBF and window from the expander above.")
    st.table(pl.DataFrame({"Quantity": frame["quantity"], "Value": values, "Formula": frame["formula"]})
             .to_pandas().set_index("Quantity"))
    table.downloads(frame, key="fl.calc", name=f"fleet-numbers-{sc.hardware}-{sc.cluster_gpus}")


def capex_inputs(cat, sc: Scenario, key: str) -> buildout.BuildoutPrices:
    """IT unit prices of the build-out, each defaulting to its sourced value and adjustable (the facility is the
    sidebar's: PUE and build cost per MW)."""
    base = buildout.buildout_prices(cat, sc.hardware, basis="itemized")
    c = st.columns(4)
    sold_as_racks = base.accelerator_usd_per_gpu <= 0  # no purchase_price_usd: the itemized basis has no board price
    use_all_in = c[0].checkbox("All-in IT price", value=base.basis == "all-in", key=f"{key}.allin.on",
                               disabled=sold_as_racks,
                               help="Replace the IT items with one price per GPU (the catalog's all_in_capex_usd; "
                                    "seed 004: H100 ~$45,000 incl. networking and infrastructure)"
                                    + ("; this accelerator has no board price (sold as racks): all-in only"
                                       if sold_as_racks else ""))
    if use_all_in or sold_as_racks:
        default = base.all_in_it_usd_per_gpu or cat.accelerator(sc.hardware)["all_in_capex_usd"] or 45_000.0
        lo, hi = fields.bounds("all_in_it_usd_per_gpu", step=1000.0)
        price = c[1].number_input(V.FIELDS["all_in_it_usd_per_gpu"].label, lo, hi, min(max(float(default), lo), hi),
                                  1000.0, key=f"{key}.allin", help=V.FIELDS["all_in_it_usd_per_gpu"].help_text())
        return buildout.buildout_prices(cat, sc.hardware, basis="all-in", all_in_it_usd_per_gpu=price)
    c = st.columns(6)
    overrides = {}
    for i, (f, step) in enumerate([("accelerator_usd_per_gpu", 1000.0), ("server_usd_per_gpu", 500.0),
                                   ("switch_usd", 1000.0), ("switch_radix", 8), ("link_usd", 100.0),
                                   ("storage_usd_per_gpu", 50.0)]):
        spec = V.FIELDS[f]  # each widget takes its field's one range (econ.vocabulary), as the CLI flag does
        lo, hi = fields.bounds(f, step=step)
        cast = int if spec.kind == "int" else float
        overrides[f] = c[i].number_input(spec.label, lo, hi, min(max(cast(getattr(base, f)), lo), hi), step,
                                         key=f"{key}.{f}", help=spec.help_text())
    return buildout.buildout_prices(cat, sc.hardware, basis="itemized", **overrides)


def capex_panel(cat, sc: Scenario, row: dict) -> buildout.BuildoutPrices | None:
    """Itemized build-out capex of this cluster, each unit price sourced and adjustable."""
    try:
        prices = capex_inputs(cat, sc, "fl.capex")
    except EconError as exc:  # a price the build-out refuses (named, with its range), never an uncaught error box
        st.error(safe_text.error(exc), icon=":material/error:")
        return None
    frame = buildout.buildout_capex([int(sc.cluster_gpus), 1024, 16_384, 100_000], prices,
                                    it_power_w_per_gpu=row["per_gpu_power_w"],
                                    build_usd_per_mw_it=row["build_usd_per_mw_it"])
    one = frame.row(0, named=True)
    c = _grid(5)
    c[0].metric("Build-out capex", fmt.usd(one["capex_total_usd"]), help="IT items + facility")
    c[1].metric("IT capex", fmt.usd(one["capex_it_usd"]))
    c[2].metric("Facility capex", fmt.usd(one["capex_facility_usd"]),
                help=f"{fmt.megawatts(one['it_power_mw'])} IT x {fmt.usd(one['facility_usd_per_mw_it'])}/MW "
                     f"(facility: {row['facility']})")
    c[3].metric("IT $ per GPU", fmt.usd(one["it_capex_per_gpu_usd"]))
    c[4].metric("All-in $ per GPU", fmt.usd(one["all_in_capex_per_gpu_usd"]), help="IT + facility, per GPU")
    st.caption("Sources: data/buildout_capex.csv (E. Cheah H100 cluster capex, Aug 2024: $310k HGX server with NICs, "
               "$36k 64-port NDR switch, ~$1,280 per link; Bernstein 2025: storage ~$20k per 72-GPU rack); the "
               "facility per MW of IT load is the sidebar's (econ.assumptions.Economics, or a data/facilities.csv "
               "row such as liquid-cooled-ai-bernstein, Bernstein's $14.83M/MW). Network: non-blocking rail-optimized fat tree, (2t - 1) / radix switches and "
               "t links per GPU for t tiers. The rows below add 1,024, 16,384 and 100,000 GPUs for scale.")
    frame = frame.unique("num_gpus", maintain_order=True)
    items = [("network_tiers", "Scale-out fabric tiers"), ("capex_accelerators_usd", "Accelerators"),
             ("capex_servers_usd", "Servers (host share, NICs)"), ("capex_network_switches_usd", "Network: switches"),
             ("capex_network_links_usd", "Network: optics and cables"), ("capex_storage_usd", "Storage"),
             ("capex_it_all_in_usd", "IT at one all-in price"), ("capex_it_usd", "IT total"),
             ("it_power_mw", "IT power"), ("capex_facility_usd", "Facility"), ("capex_total_usd", "Total"),
             ("it_capex_per_gpu_usd", "IT per GPU"), ("all_in_capex_per_gpu_usd", "All-in per GPU")]
    body = {"Item": [label for _, label in items]}
    for r in frame.iter_rows(named=True):
        body[f"{r['num_gpus']:,} GPUs"] = [fmt.cell(c, r[c]) for c, _ in items]
    st.table(pl.DataFrame(body).to_pandas().set_index("Item"))
    table.downloads(frame, key="fl.capex", name=f"buildout-{sc.hardware}")
    return prices


def budget_panel(cat, cat_token: str, sc: Scenario, power_basis, efficiency_model: str, scaling, prices) -> None:
    """What a power or capex budget buys: the plan at the top of the page with a budget instead of a size (the same
    inputs, the same numbers as ``econ fleet size`` / ``econ cluster --power-mw``)."""
    c = st.columns(4)
    kind = c[0].radio("Budget", ["power", "capex"], horizontal=True, key="fl.budget.kind",
                      format_func={"power": "Power (MW)", "capex": "Capex ($)"}.get)
    if kind == "power":
        amount = c[1].number_input("Power budget (MW)", 0.1, 1e6, 1000.0, 50.0, key="fl.budget.mw",
                                   help="1 GW = 1,000 MW")
        power_of = c[2].radio("The budget is", ["facility", "it"], horizontal=True, key="fl.budget.of",
                              format_func={"facility": "Facility (grid)", "it": "IT load"}.get)
    else:
        amount = c[1].number_input("Capex budget ($B)", 0.001, 1e4, 5.0, 0.5, key="fl.budget.usd",
                                   help="Seed 004: ~$5B per 100k-GPU cluster") * 1e9
        power_of = "facility"
    itemized = c[3].checkbox("IT prices of the Build-out capex tab", value=False, key="fl.budget.prices",
                             help="Off: the catalog's all-in capex per GPU, as the cluster above and `econ cluster`. "
                                  "On: the unit prices set in the Build-out capex tab.")
    it_prices = prices if itemized else None
    try:
        frame = budget_plan(cat_token, sc, power_basis, efficiency_model, scaling, kind, float(amount), power_of,
                            None if it_prices is None else dataclasses.astuple(it_prices), revenue=revenue_inputs(),
                            _prices=it_prices, _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    r = frame.row(0, named=True)
    c = _grid(6)
    c[0].metric("Budget buys", f"{fmt.count(r['num_gpus'])} GPUs",
                help=f"{r['budget']}; facility {r['facility']}: PUE {r['pue']:g}, "
                     f"{fmt.usd(r['build_usd_per_mw_it'])}/MW IT; IT at the {r['it_capex_basis']} price")
    c[1].metric("Budget: IT power", fmt.megawatts(r["it_power_mw"]),
                help=f"{fmt.watts(r['per_gpu_power_w'])} per GPU")
    c[2].metric("Budget: facility power", fmt.megawatts(r["facility_power_mw"]), help="IT x PUE")
    c[3].metric("Budget: racks", fmt.count(r["rack_count"]), help=f"{fmt.watts(r['rack_power_kw'] * 1e3)} per rack, "
                                                                  f"{r['rack_cooling']}")
    c[4].metric("Budget: capex", fmt.usd(r["capex_total_usd"]),
                help=f"IT {fmt.usd(r['capex_accelerators_usd'])} + facility {fmt.usd(r['capex_facility_usd'])}")
    c[5].metric("Budget: training compute", fmt.flops(r["realized_flop_per_s"]),
                help=f"{fmt.pct(r['realized_frac_of_peak'], 2)} of {fmt.flops(r['peak_flop_per_s'])} peak")
    c = _grid(5)
    c[0].metric("Budget: output tokens per day", fmt.compact(r["serving_tokens_per_day"]),
                help=f"{safe_text.md(cat.model(sc.model)['display_name'])} at >= {sc.min_tokens_per_s_per_user:g} tokens/s per user, "
                     f"utilization {sc.utilization_frac:.0%} (engine: econ.analyses.cluster.serving_rate)")
    c[1].metric("Budget: revenue per year", fmt.usd(r["revenue_per_year_usd"]),
                help=f"{fmt.pct(r['demand_share_frac'])} of the capacity sold at "
                     f"{fmt.usd_per_m(r['price_usd_per_m_output_tokens'])} output, "
                     f"{fmt.usd_per_m(r['price_usd_per_m_input_tokens'])} input per M tokens; capacity sold: "
                     f"{fmt.usd(r['revenue_capacity_sold_per_year_usd'])}")
    c[2].metric("Budget: energy + opex per year", fmt.usd(r["opex_per_year_usd"]))
    c[3].metric("Budget: payback", "never" if r["payback_years"] is None else fmt.years(r["payback_years"]),
                delta=("capacity sold: never" if r["payback_capacity_sold_years"] is None else
                       f"capacity sold: {fmt.years(r['payback_capacity_sold_years'])}"), delta_color="off",
                help="Capex / (revenue - energy - opex), undiscounted; " + payback_band_text(r)
                     + "; IRR over the accelerator life " + ("n/a" if r["irr_frac"] is None else fmt.pct(r["irr_frac"])))
    c[4].metric("Budget: serving replicas", fmt.count(r["serving_replicas"]) if r["serving_replicas"] is not None
                else "none", help="Whole replicas of the cheapest deployment meeting the floor")
    sensitivity.site_panel(cat, cat_token, hardware=sc.hardware, model=sc.model,
                           power_w=amount * 1e6 if kind == "power" else None,
                           capex_usd=amount if kind == "capex" else None, power_of=power_of,
                           price=sc.price_usd_per_m_output_tokens, floor=sc.min_tokens_per_s_per_user,
                           economics=sc.economics(cat), revenue=revenue_inputs(),
                           power_basis=power_basis, prices=prices, key="cl.sens")


def training_panel(cat, sc: Scenario, row: dict, efficiency_model: str, scaling) -> None:
    """A 6ND training run of the sidebar's model on this cluster, with failures and checkpoints; a published run."""
    hw = cat.accelerator(sc.hardware)
    m = cat.model(sc.model)
    c = st.columns(4)
    mode = c[0].selectbox("Goodput", ["budget", "derived", "none"], key="fl.train.goodput",
                          format_func={"budget": "Model budget", "derived": "Derived (Young)", "none": "None"}.get,
                          help="Derived: 1 - bubbles 5% - maintenance 5% - (checkpoint write / interval + "
                               "(interval / 2 + restart) / MTBF) at Young's interval sqrt(2 x write x MTBF)")
    price = c[1].number_input("$ per GPU-hour of existence", 0.0, 1e4, float(round(row["usd_per_gpu_hour_training"], 2)), 0.25,
                              key="fl.train.price",
                              help="Default: this cluster's owned cost per GPU-hour of existence (every hour of the "
                                   "run is used: utilization 100%)")
    peak = hw[PEAK_COLUMN[sc.training_precision]]
    try:
        run = cl.training_run(
            sc.cluster_gpus, training_flop=fleet.training_flop(m["active_matmul_params"], sc.training_tokens),
            flop_per_s_per_gpu=peak, usd_per_gpu_hour=price, efficiency_model=efficiency_model, mfu_frac=sc.mfu_frac,
            scaling_efficiency=scaling, goodput=mode, params_for_checkpoint=m["total_params"],
            checkpoint_write_bytes_per_s=sc.checkpoint_write_gb_per_s * 1e9, mtbf_h_per_gpu=sc.mtbf_h_per_gpu)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    r = run.row(0, named=True)
    c = _grid(5)
    c[0].metric("Run: wall clock", fmt.days(r["training_days"]),
                help=f"6 x {fmt.compact(m['active_matmul_params'])} active params x "
                     f"{fmt.compact(sc.training_tokens)} tokens = {fmt.flop(r['training_flop'])} at "
                     f"{fmt.flops(r['realized_flop_per_s'])}")
    c[1].metric("Run: cost", fmt.usd(r["training_cost_usd"]), help=f"{fmt.compact(r['gpu_hours'])} GPU-hours")
    c[2].metric("Run: expected failures", fmt.sig(r["expected_failures"]), help="Wall clock / cluster MTBF")
    c[3].metric("Run: checkpoint interval", fmt.seconds(r["checkpoint_interval_s"]), help="Young: sqrt(2 x write x MTBF)")
    c[4].metric("Run: goodput", fmt.pct(r["goodput_frac"]),
                help=f"{r['goodput_basis']}; checkpoint + failure waste {fmt.pct(r['checkpoint_failure_overhead_frac'])}")
    st.markdown("**A published run: GPU-hours x price**")
    c = st.columns(4)
    hours = c[0].number_input("GPU-hours (millions)", 0.000001, 1e6, 2.788, 0.1, key="fl.pub.hours", format="%.3f",
                              help="DeepSeek-V3: 2.788M H800 GPU-hours (technical report, Table 1)") * 1e6
    pub_price = c[1].number_input("$ per GPU-hour of existence", 0.0, 1e4, 2.0, 0.25, key="fl.pub.price",
                                  help="DeepSeek-V3 report's rental assumption: $2 per rented GPU-hour")
    c[2].metric("Published run cost", fmt.usd(buildout.gpu_hours_cost_usd(hours, pub_price)),
                help="DeepSeek-V3: 2.788M x $2 = $5.576M")


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    cat = cat_in_use.catalog
    st.title("Cluster and fleet planner")
    st.caption(f"{safe_text.md(cat.accelerator(sc.hardware)['display_name'])} (accelerator from the sidebar); model "
               f"{safe_text.md(cat.model(sc.model)['display_name'])} for checkpoints, training and serving.")
    power_basis, efficiency_model, scaling = inputs()
    sc = state.scenario()
    try:
        frame = plan(cat_in_use.token, sc, power_basis, efficiency_model, scaling, revenue=revenue_inputs(), _catalog=cat)
    except EconError as exc:
        st.error(safe_text.error(exc), icon=":material/error:")
        return
    row = frame.row(0, named=True)
    note = plan_status(row)
    if note:
        st.info(note[:1].upper() + note[1:] + ".", icon=":material/info:")
    kpis(row, sc)
    # two panels in st.columns: side by side at 1440 px, one under the other at 390 px (issue 19: the fixed-width
    # pair ran the facility-power bar off a phone's screen)
    chart.show_panels(charts.capex_power_chart, row, key="cl.capex", cache_key=tuple(
        row[c] for c in ("capex_accelerators_usd", "capex_facility_usd", "it_power_mw", "facility_power_mw")))
    tabs = st.tabs(["Efficiency at scale", "Power basis", "Fleet calculators", "Build-out capex",
                    "What a budget buys", "Training run", "Tables"])
    with tabs[0]:
        efficiency_panel(frame, row)
    with tabs[1]:
        power_panel(cat, sc, row, power_basis)
    with tabs[2]:
        calculators_panel(cat, sc)
    with tabs[3]:
        prices = capex_panel(cat, sc, row)
    with tabs[4]:
        budget_panel(cat, cat_in_use.token, sc, power_basis, efficiency_model, scaling, prices)
    with tabs[5]:
        training_panel(cat, sc, row, efficiency_model, scaling)
    with tabs[6]:
        sources.show(cat, sc.assumptions(), sc.economics(cat), key="cl.sources", model=sc.model,
                     hardware=sc.hardware, region=sc.region)
        st.subheader("This cluster")
        one = frame.head(1).rename({"num_gpus": "cluster_gpus"})
        text_table(one, key="cl.summary", name=f"cluster-{sc.hardware}-{sc.cluster_gpus}", columns=SUMMARY_COLUMNS)
        st.subheader("By cluster size")
        scale = frame.sort("num_gpus").unique("num_gpus", maintain_order=True).rename({"num_gpus": "cluster_gpus"})
        text_table(scale, key="cl.scale_table", name=f"cluster-scale-{sc.hardware}", columns=SUMMARY_COLUMNS,
                   height=320)


if __name__ == "__main__":
    render()
