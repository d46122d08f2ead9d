"""``econ cluster`` (and ``econ fleet size``): one capability, one set of inputs, one call.

A thin layer over :func:`econ.analyses.cluster.cluster_plan`: flags in, one call, a table out. The size is
``--gpus`` or what a budget buys (``--power-mw`` / ``--capex-usd``); ``econ fleet size`` is the same command
with a budget required, so the two give identical GPUs, capex, MW, tokens/day and payback for the same flags.
Every economics input (PUE, $/kWh, facility $/MW, utilization, cost of capital, lives) comes from the shared
economics flags over ``econ.assumptions.Economics`` (or a named ``--facility`` / ``--region``), shown in the output.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.cluster import PLAN_COLUMNS, cluster_plan, plan_status
from econ.commands._common import (add_decoding_options, decoding_from, add_slo_percentile_option, slo_percentile_from, check_flag, add_data_dir, add_economics_options, add_scenario_option, add_slo_options,
                                   add_field_option, add_workload_options, catalog_from, check_range, economics_from,
                                   load_scenario, parse_int_list, render, show_value, slo_from, workload_from)
from econ.economics.buildout import IT_CAPEX_BASES, buildout_prices
from econ.vocabulary import FIELDS, bounds
from econ.errors import InvalidInputError
from econ.io.scenario import Scenario
from econ.physics.fleet import EFFICIENCY_MODELS
from econ.physics.precision import PRECISIONS
from econ.units import W_PER_MW

CORE_COLUMNS = (
    "budget", "hardware", "num_gpus", "gpus_per_rack", "facility", "pue", "build_usd_per_mw_it", "usd_per_kwh",
    "utilization_frac", "it_capex_basis", "capex_total_usd", "capex_accelerators_usd", "capex_facility_usd",
    "power_basis", "per_gpu_power_w", "it_power_mw", "facility_power_mw", "annual_energy_mwh",
    "annual_energy_cost_usd", "rack_count", "rack_power_kw", "air_cooling_ok", "rack_cooling", "peak_flop_per_s",
    "efficiency_model", "mfu_frac", "scaling_efficiency_frac", "goodput_frac", "realized_frac_of_peak",
    "realized_flop_per_s", "cluster_mtbf_h", "failure_window_h", "prob_failure_in_window_frac",
)
MODEL_COLUMNS = (
    "model", "checkpoint_bytes", "checkpoint_write_s", "training_days", "training_cost_usd", "serving_precision",
    "serving_gpus_per_replica", "serving_replicas", "serving_tokens_per_day", "price_usd_per_m_output_tokens",
    "price_usd_per_m_input_tokens", "demand_share_frac", "revenue_per_year_usd", "opex_per_year_usd", "payback_years",
    "payback_years_low", "payback_years_high", "irr_frac", "irr_frac_low", "irr_frac_high",
    "revenue_capacity_sold_per_year_usd", "payback_capacity_sold_years", "irr_capacity_sold_frac",
)

DISPLAY_NAMES = {"realized_frac_of_peak": "realized_of_peak_frac"}
"""Table-only renames so the unit suffix (``_frac`` -> %) formats the cell; CSV/JSON keep the core's names."""

ITEM_FLAGS = (("--accelerator-usd", "accelerator_usd", "accelerator_usd_per_gpu"),
              ("--server-usd", "server_usd", "server_usd_per_gpu"),
              ("--switch-usd", "switch_usd", "switch_usd"),
              ("--switch-radix", "switch_radix", "switch_radix"),
              ("--link-usd", "link_usd", "link_usd"),
              ("--storage-usd", "storage_usd", "storage_usd_per_gpu"))
"""Itemized IT price flags: (flag, argparse dest, ``BuildoutPrices`` field = its econ.vocabulary field)."""


def show(frame: pl.DataFrame, fmt: str, **kwargs) -> None:
    """Render a result: tables with :data:`DISPLAY_NAMES` applied, CSV/JSON unchanged."""
    if fmt == "table":
        frame = frame.rename({k: v for k, v in DISPLAY_NAMES.items() if k in frame.columns})
    render(frame, fmt, **kwargs)


def add_price_options(p, *, default_basis: str) -> None:
    """IT price flags: the basis (all-in or itemized, ``econ.economics.buildout.IT_CAPEX_BASES``) and each unit price."""
    g = p.add_argument_group("IT prices")
    g.add_argument("--it-capex", choices=IT_CAPEX_BASES, default=default_basis,
                   help="all-in: accelerators.csv all_in_capex_usd per GPU (the capex of econ cost); itemized: "
                        f"board + host share + fat-tree network + storage from data/buildout_capex.csv [{default_basis}]")
    for name, dest in (("all_in_it_usd_per_gpu", "all_in_usd"), *((field, dest) for _, dest, field in ITEM_FLAGS)):
        add_field_option(g, name, dest=dest)  # flag, range and help from econ.vocabulary (group "buildout")


def prices_from(args, catalog, hardware: str):
    """:class:`econ.economics.buildout.BuildoutPrices` from the IT price flags (each checked, with its range)."""
    for _, dest, field in ITEM_FLAGS + (("--all-in-usd", "all_in_usd", "all_in_it_usd_per_gpu"),):
        check_flag(field, getattr(args, dest))  # the field's one range (econ.vocabulary)
    given = [flag for flag, dest, _ in ITEM_FLAGS if getattr(args, dest) is not None]
    if given and args.it_capex != "itemized":
        raise InvalidInputError(f"{given[0]} prices an itemized build-out: add --it-capex itemized")
    overrides = {field: getattr(args, dest) for _, dest, field in ITEM_FLAGS}
    return buildout_prices(catalog, hardware, basis=args.it_capex,
                           all_in_it_usd_per_gpu=args.all_in_usd, **overrides)


def add_efficiency_options(p, *, default: str) -> None:
    """The efficiency-at-scale flags (``econ.physics.fleet.EFFICIENCY_MODELS``) of ``cluster`` and ``fleet``."""
    p.add_argument("--efficiency", choices=EFFICIENCY_MODELS, default=default,
                   help="seed000: MFU(G) = 0.62 - 0.02 log2 G; seed001: MFU x scaling efficiency(G) x goodput "
                        f"[{default}]")
    p.add_argument("--mfu", type=float, help="measured MFU in (0, 1]; default: the efficiency model's "
                                             "(seed 000's curve, seed 001's 50%%)")
    p.add_argument("--scaling-efficiency", type=float, help="seed 001 scaling efficiency in (0, 1]; default: "
                                                            "Table 5 at the cluster size")


def check_fraction(flag: str, value) -> None:
    """A fraction flag in (0, 1], named with its range when not (NaN included); None passes."""
    if value is None:
        return
    if not (value == value) or not 0 < value <= 1:
        raise InvalidInputError(f"{flag}={value:g} is outside (0, 1]")


def check_efficiency(args) -> None:
    """``--mfu`` in its vocabulary range, ``--scaling-efficiency`` in (0, 1] (``econ.physics.fleet.efficiency_chain``)."""
    check_flag("mfu_frac", args.mfu)
    check_fraction("--scaling-efficiency", args.scaling_efficiency)


def add_plan_options(p, *, budget_required: bool) -> None:
    """The one set of inputs of a cluster plan (``econ cluster`` and ``econ fleet size``)."""
    add_scenario_option(p)
    p.add_argument("--hardware", required=budget_required, help="accelerator id (econ list hardware); needs "
                                                                "all_in_capex_usd unless --it-capex itemized")
    size = p.add_mutually_exclusive_group(required=budget_required)
    if not budget_required:
        size.add_argument("--gpus", help="cluster size(s): N or a list 1024,8192,100000 [1024]")
    size.add_argument("--power-mw", type=float, help="size by a power budget, MW (1 GW = 1000)")
    size.add_argument("--capex-usd", type=float, help="size by a capex budget for IT + facility, USD (e.g. 5e9)")
    p.add_argument("--power-of", choices=("facility", "it"), default="facility",
                   help="the power budget is the facility's grid draw (IT = power / PUE) or the IT load [facility]")
    p.add_argument("--model", help="model id for checkpoint, training and serving columns (econ list models)")
    p.add_argument("--gpus-per-rack", type=int, help="default: the NVLink domain for NVL36/72/144, else 32")
    p.add_argument("--training-precision", choices=PRECISIONS, help="dense peak used for training FLOP/s [bf16]")
    p.add_argument("--precision", help=f"serving precisions the search may use, a comma list of {list(PRECISIONS)} "
                                       "[the scenario's compare_precisions, else all the accelerator supports]")
    p.add_argument("--power-basis", default="all-in",
                   help="per-GPU power: tdp (board TDP), all-in (critical IT incl. host and network share), or a "
                        "number of W [all-in]")
    add_efficiency_options(p, default="seed001")
    p.add_argument("--overheads", help="goodput losses: bubbles,checkpointing,failure-recovery,maintenance as "
                                       "fractions; default: the model's (seed001 0.05,0.03,0.10,0.05 = Table 8; "
                                       "seed000 none)")
    p.add_argument("--failure-window-h", type=float, help="window for P(at least one failure), hours [24]")
    p.add_argument("--mtbf-h", type=float, help="MTBF per GPU, hours [50000]")
    p.add_argument("--checkpoint-gb-per-s", type=float, help="aggregate checkpoint write bandwidth, GB/s [100]")
    p.add_argument("--training-tokens", type=float, help="tokens of the training run [15e12]")
    p.add_argument("--price", type=float, help="selling price, USD per M output tokens [0.90]")
    add_field_option(p, "price_usd_per_m_input_tokens")
    add_field_option(p, "cache_hit_frac", dest="cache_hit_rate")
    add_field_option(p, "cached_price_frac", note=" (the share of input tokens that hit is --cache-hit-rate)")
    add_field_option(p, "demand_share_frac", note="; the capacity-sold case is shown beside it")
    add_workload_options(p)
    add_slo_options(p, ttft=False)
    add_slo_percentile_option(p)
    add_decoding_options(p)
    add_economics_options(p, mix=False, build=True)
    add_price_options(p, default_basis="all-in")
    p.add_argument("--all-columns", action="store_true", help="every column (default: without --model, the sizing)")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)


def register(sub) -> None:
    p = sub.add_parser(
        "cluster", help="cluster capex, power, racks, failures, training time and serving payback for G accelerators",
        description="Size a cluster of G accelerators, or what a power or capex budget buys: capex (IT at the "
                    "all-in price or itemized, + facility $/MW of IT load), IT and facility MW, annual energy and "
                    "cost, racks against the ~30 kW air-cooling limit, peak and realized FLOP/s (MFU x goodput), "
                    "cluster MTBF and failure odds. With --model: checkpoint size and write time, a 6 x params x "
                    "tokens training run, and serving tokens/day, revenue and payback. `econ fleet size` is the "
                    "same command with a budget.")
    add_plan_options(p, budget_required=False)
    p.set_defaults(func=run)


OVERHEAD_FIELDS = ("bubble_frac", "checkpoint_overhead_frac", "failure_recovery_frac", "maintenance_frac")
"""The four goodput losses of ``--overheads``, in order: each obeys its vocabulary field's one range."""


def _overheads(text: str) -> tuple[float, ...]:
    parts = str(text).split(",")
    try:
        vals = tuple(float(x) for x in parts)
    except ValueError:
        vals = ()
    if len(vals) != len(OVERHEAD_FIELDS):
        raise InvalidInputError(f"--overheads={show_value(str(text))} is not four comma-separated fractions "
                                "bubbles,checkpointing,failure-recovery,maintenance (e.g. 0.05,0.03,0.10,0.05)")
    for name, v in zip(OVERHEAD_FIELDS, vals):
        check_flag(name, v, f"--overheads ({FIELDS[name].label.lower()})")
    return vals


def check_positive(flag: str, value, hi: float, unit: str = "") -> None:
    """Zero, negative, non-finite or absurd values are named with their range."""
    if value is None:
        return
    check_range(flag, value, 0, hi, unit)
    if value == 0:
        raise InvalidInputError(f"{flag}=0 is outside (0, {hi:g}] {unit}".rstrip())


def _precisions(text: str | None) -> tuple[str, ...] | None:
    """``--precision bf16,fp8`` as a tuple (checked against the precisions), None when not given."""
    if not text:
        return None
    out = tuple(dict.fromkeys(x.strip() for x in str(text).split(",") if x.strip()))
    for x in out:
        if x not in PRECISIONS:
            raise InvalidInputError(f"--precision={show_value(x)} is not one of {list(PRECISIONS)}")
    return out or None


def run(args) -> int:
    """Run ``econ cluster`` / ``econ fleet size``: the flags over the scenario over the one set of defaults."""
    catalog = catalog_from(args)
    sc, catalog = load_scenario(args, catalog)
    scenario = sc
    sc = sc or Scenario()
    hardware = args.hardware or (sc.hardware if scenario is not None else None)
    if hardware is None:
        raise InvalidInputError("--hardware is required (or give --scenario FILE)")
    check_positive("--power-mw", args.power_mw, 1e6, "MW")
    check_positive("--capex-usd", args.capex_usd, 1e15, "USD")
    budget = args.power_mw is not None or args.capex_usd is not None
    gpus_text = getattr(args, "gpus", None)
    gpus = None if budget else (parse_int_list("--gpus", gpus_text, *bounds("cluster_gpus"), "accelerators") if gpus_text else [sc.cluster_gpus])
    model = args.model or (sc.model if scenario is not None else None)
    check_flag("gpus_per_rack", args.gpus_per_rack)
    check_efficiency(args)
    for name, value in (("failure_window_h", args.failure_window_h), ("mtbf_h_per_gpu", args.mtbf_h),
                        ("checkpoint_write_gb_per_s", args.checkpoint_gb_per_s), ("training_tokens", args.training_tokens),
                        ("price_usd_per_m_output_tokens", args.price),
                        ("price_usd_per_m_input_tokens", args.price_usd_per_m_input_tokens),
                        ("cached_price_frac", args.cached_price_frac), ("demand_share_frac", args.demand_share_frac)):
        check_flag(name, value)
    input_len, output_len = workload_from(args, scenario)
    floor, _ = slo_from(args, scenario)
    economics = economics_from(args, catalog, scenario)
    prices = prices_from(args, catalog, hardware)
    overheads = _overheads(args.overheads) if args.overheads else (
        (sc.bubble_frac, sc.checkpoint_overhead_frac, sc.failure_recovery_frac, sc.maintenance_frac)
        if args.scenario else None)

    def pick(flag, field):
        return flag if flag is not None else getattr(sc, field)

    frame = cluster_plan(
        catalog, hardware=hardware, num_gpus=gpus,
        power_w=None if args.power_mw is None else args.power_mw * W_PER_MW, power_of=args.power_of,
        capex_usd=args.capex_usd, model=model, gpus_per_rack=pick(args.gpus_per_rack, "gpus_per_rack"),
        training_precision=pick(args.training_precision, "training_precision"), mfu_frac=pick(args.mfu, "mfu_frac"),
        overhead_fracs=overheads, failure_window_h=pick(args.failure_window_h, "failure_window_h"),
        mtbf_h_per_gpu=pick(args.mtbf_h, "mtbf_h_per_gpu"),
        checkpoint_write_gb_per_s=pick(args.checkpoint_gb_per_s, "checkpoint_write_gb_per_s"),
        training_tokens=pick(args.training_tokens, "training_tokens"),
        min_tokens_per_s_per_user=floor,
        precisions=_precisions(args.precision) or sc.compare_precisions or None,
        price_usd_per_m_output_tokens=pick(args.price, "price_usd_per_m_output_tokens"),
        price_usd_per_m_input_tokens=args.price_usd_per_m_input_tokens, cached_price_frac=args.cached_price_frac,
        demand_share_frac=1.0 if args.demand_share_frac is None else args.demand_share_frac,
        input_len=input_len, output_len=output_len, decoding=decoding_from(args, scenario),
        slo_percentile=slo_percentile_from(args, scenario),
        assumptions=sc.assumptions(), economics=economics, facility=args.facility, power_basis=args.power_basis,
        efficiency_model=args.efficiency, scaling_efficiency=args.scaling_efficiency, it_prices=prices)
    full = frame
    if not args.all_columns:
        frame = frame.select(CORE_COLUMNS + (MODEL_COLUMNS if model else ()))
        if not budget:
            frame = frame.drop("budget")
    notes = [plan_status(row) for row in full.select([c for c in PLAN_COLUMNS if c in full.columns])
             .iter_rows(named=True)]
    if args.format != "table" and any(notes):  # the plan's fallbacks and limits, in every format (issue 21)
        frame = frame.with_columns(pl.Series("warnings", [n or None for n in notes], dtype=pl.String))
    show(frame, args.format)
    if args.format == "table":
        for n, note in zip(frame["num_gpus"], notes):
            if note:
                print(f"note ({n:,} GPUs): {note}")
    return 0


__all__ = ["register", "run", "add_efficiency_options", "add_plan_options", "add_price_options", "check_efficiency",
           "check_fraction", "check_positive", "prices_from", "show"]
