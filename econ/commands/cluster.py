"""``econ cluster``: capex, power, racks, reliability, training and serving economics of G accelerators.

A thin layer over :func:`econ.analyses.cluster.cluster_plan` (which builds on :func:`econ.analyses.cluster.size_cluster`):
flags in, one call, a table out. With ``--model`` the table adds checkpoint, training and serving
columns (tokens/day at the tokens/s-per-user floor, revenue at ``--price``, payback).
"""

from __future__ import annotations

import sys
from dataclasses import replace

from econ.analyses.cluster import EFFICIENCY_MODELS, PLAN_COLUMNS, cluster_plan, plan_status
from econ.commands._common import (add_data_dir, add_economics_options, add_scenario_option, add_slo_options,
                                   add_workload_options, catalog_from, check_range, economics_from, load_scenario,
                                   parse_int_list, slo_from, workload_from)
from econ.commands.fleet import show
from econ.errors import InvalidInputError
from econ.physics.precision import PRECISIONS
from econ.io.scenario import Scenario

CORE_COLUMNS = (
    "hardware", "num_gpus", "gpus_per_rack", "capex_total_usd", "capex_accelerators_usd", "capex_facility_usd",
    "power_basis", "per_gpu_power_w", "it_power_mw", "facility_power_mw", "annual_energy_mwh", "annual_energy_cost_usd",
    "rack_count", "rack_power_kw", "air_cooling_ok", "rack_cooling", "peak_flop_per_s", "efficiency_model", "mfu_frac",
    "scaling_efficiency_frac", "goodput_frac", "realized_frac_of_peak", "realized_flop_per_s", "cluster_mtbf_h",
    "failure_window_h", "prob_failure_in_window_frac",
)
MODEL_COLUMNS = (
    "model", "checkpoint_bytes", "checkpoint_write_s", "training_days", "training_cost_usd", "serving_precision",
    "serving_gpus_per_replica", "serving_replicas", "serving_tokens_per_day", "revenue_per_year_usd",
    "opex_per_year_usd", "payback_years",
)


def register(sub) -> None:
    p = sub.add_parser(
        "cluster", help="cluster capex, power, racks, failures, training time and serving payback for G accelerators",
        description="Size a cluster of G accelerators: capex (all-in accelerators + facility $/MW of IT load), IT and "
                    "facility MW, annual energy and cost, racks against the ~30 kW air-cooling limit, peak and "
                    "realized FLOP/s (MFU x goodput), cluster MTBF and failure odds. With --model: checkpoint size "
                    "and write time, a 6 x params x tokens training run, and serving tokens/day, revenue and payback.")
    add_scenario_option(p)
    p.add_argument("--hardware", help="accelerator id (econ list hardware); needs all_in_capex_usd")
    p.add_argument("--gpus", help="cluster size(s): N or a list 1024,8192,100000 [1024]")
    p.add_argument("--model", help="model id for checkpoint, training and serving columns (econ list models)")
    p.add_argument("--gpus-per-rack", type=int, help="default: the NVLink domain for NVL36/72/144, else 32")
    p.add_argument("--training-precision", choices=PRECISIONS, help="dense peak used for training FLOP/s [bf16]")
    p.add_argument("--power-basis", default="all-in",
                   help="per-GPU power: tdp (board TDP), all-in (critical IT incl. host and network share), or a "
                        "number of W [all-in]")
    p.add_argument("--efficiency", choices=EFFICIENCY_MODELS, default="seed001",
                   help="seed000: MFU(G) = 0.62 - 0.02 log2 G; seed001: MFU x scaling efficiency(G) x goodput "
                        "[seed001]")
    p.add_argument("--mfu", type=float, help="measured MFU in (0, 1]; default: the efficiency model's "
                                             "(seed 000's curve, seed 001's 50%%)")
    p.add_argument("--scaling-efficiency", type=float, help="seed 001 scaling efficiency in (0, 1]; default: "
                                                            "Table 5 at the cluster size")
    p.add_argument("--overheads", help="goodput losses: bubbles,checkpointing,failure-recovery,maintenance as "
                                       "fractions; default: the model's (seed001 0.05,0.03,0.10,0.05 = Table 8; "
                                       "seed000 none)")
    p.add_argument("--failure-window-h", type=float, help="window for P(at least one failure), hours [24]")
    p.add_argument("--mtbf-h", type=float, help="MTBF per GPU, hours [50000]")
    p.add_argument("--checkpoint-gb-per-s", type=float, help="aggregate checkpoint write bandwidth, GB/s [100]")
    p.add_argument("--training-tokens", type=float, help="tokens of the training run [15e12]")
    p.add_argument("--price", type=float, help="selling price, USD per M output tokens [0.90]")
    add_workload_options(p)
    add_slo_options(p, ttft=False)
    add_economics_options(p, mix=False, build=True)
    p.add_argument("--all-columns", action="store_true", help="every column (default: without --model, the sizing)")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def _overheads(text: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(x) for x in str(text).split(","))
    except ValueError:
        raise InvalidInputError(f"--overheads={text!r} is not a comma-separated list of fractions "
                                "(e.g. 0.05,0.03,0.10,0.05)") from None
    for v in vals:
        check_range("--overheads", v, 0, 1)
    return vals


def run(args) -> int:
    catalog = catalog_from(args)
    sc, catalog = load_scenario(args, catalog)
    scenario = sc
    sc = sc or Scenario()
    hardware = args.hardware or (sc.hardware if scenario is not None else None)
    if hardware is None:
        raise InvalidInputError("--hardware is required (or give --scenario FILE)")
    gpus = parse_int_list("--gpus", args.gpus, 1, 100_000_000) if args.gpus else [sc.cluster_gpus]
    model = args.model or (sc.model if scenario is not None else None)
    check_range("--gpus-per-rack", args.gpus_per_rack, 1, 1024, "accelerators")
    check_range("--mfu", args.mfu, 0.01, 1)
    check_range("--scaling-efficiency", args.scaling_efficiency, 0.01, 1)
    check_range("--failure-window-h", args.failure_window_h, 0.01, 8760, "h")
    check_range("--mtbf-h", args.mtbf_h, 1, 1e7, "h")
    check_range("--checkpoint-gb-per-s", args.checkpoint_gb_per_s, 0.01, 1e6, "GB/s")
    check_range("--training-tokens", args.training_tokens, 1e6, 1e16, "tokens")
    check_range("--price", args.price, 0, 1000, "USD/M tokens")
    input_len, output_len = workload_from(args, scenario)
    floor, _ = slo_from(args, scenario)
    economics = economics_from(args, catalog, scenario)
    overheads = _overheads(args.overheads) if args.overheads else (
        (sc.bubble_frac, sc.checkpoint_overhead_frac, sc.failure_recovery_frac, sc.maintenance_frac)
        if args.scenario else None)

    def pick(flag, field):
        return flag if flag is not None else getattr(sc, field)

    frame = cluster_plan(
        catalog, hardware=hardware, num_gpus=gpus, model=model,
        gpus_per_rack=pick(args.gpus_per_rack, "gpus_per_rack"),
        training_precision=pick(args.training_precision, "training_precision"), mfu_frac=pick(args.mfu, "mfu_frac"),
        overhead_fracs=overheads, failure_window_h=pick(args.failure_window_h, "failure_window_h"),
        mtbf_h_per_gpu=pick(args.mtbf_h, "mtbf_h_per_gpu"),
        checkpoint_write_gb_per_s=pick(args.checkpoint_gb_per_s, "checkpoint_write_gb_per_s"),
        training_tokens=pick(args.training_tokens, "training_tokens"),
        min_tokens_per_s_per_user=floor,
        precisions=sc.compare_precisions or None,
        price_usd_per_m_output_tokens=pick(args.price, "price_usd_per_m_output_tokens"),
        input_len=input_len, output_len=output_len,
        assumptions=sc.assumptions(), economics=economics, power_basis=args.power_basis,
        efficiency_model=args.efficiency, scaling_efficiency=args.scaling_efficiency)
    if not args.all_columns:
        frame = frame.select(CORE_COLUMNS + (MODEL_COLUMNS if model else ()))
    show(frame, args.format)
    if args.format == "table":
        for row in frame.select([c for c in PLAN_COLUMNS if c in frame.columns]).iter_rows(named=True):
            note = plan_status(row)
            if note:
                print(f"note ({row['num_gpus']:,} GPUs): {note}", file=sys.stderr)
    return 0
