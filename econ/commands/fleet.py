"""``econ fleet``: the seeds' cluster chapters as calculators, forward and inverse.

Subcommands (each a thin layer over ``econ.analyses.cluster``: flags in, one call, a table out):

- ``power``  IT and facility MW of G GPUs on the TDP, all-in and a typed per-GPU basis, rack kW vs cooling limits;
- ``scale``  peak and realized FLOP/s across cluster sizes under seed 000's MFU(G) or seed 001's chain;
- ``calc``   Amdahl, NVLink vs InfiniBand all-reduce, comm/compute ratio, MTBF, checkpoints, Young's interval,
  goodput, Little's law;
- ``capex``  itemized build-out capex (accelerators, servers, network by tier, storage, facility $/MW);
- ``size``   what a power or capex budget buys: ``econ cluster`` with a budget (one capability, one set of inputs);
- ``train``  a training run: 6ND FLOPs, days and $ with failures and checkpoints, or GPU-hours x $/GPU-hour.
"""

from __future__ import annotations

import polars as pl

from econ.analyses import cluster as cl
from econ import formatting
from econ.commands import cluster as plan_command
from econ.commands._common import (check_flag, add_data_dir, add_field_option, catalog_from, check_range, economics_from,
                                   parse_int_list, render)
from econ.commands.cluster import (add_efficiency_options, add_plan_options, add_price_options,
                                   check_efficiency, check_fraction, check_positive, prices_from, show)
from econ.economics import buildout
from econ.vocabulary import bounds
from econ.errors import InvalidInputError
from econ.physics import fleet
from econ.physics.precision import PEAK_COLUMN, PRECISIONS
from econ.units import FLOP_PER_TFLOP


def register(sub) -> None:
    p = sub.add_parser("fleet", help="fleet and build-out planner: power, scale, calculators, capex, sizing, training",
                       description="The seeds' cluster numbers as calculators: power on each basis, efficiency at "
                                   "scale, fleet calculators, itemized build-out capex, sizing from a power or "
                                   "capex budget, and training runs.")
    fs = p.add_subparsers(dest="fleet_command", required=True, metavar="CALCULATOR")

    q = fs.add_parser("power", help="IT and facility MW on the TDP / all-in / typed per-GPU basis; rack kW",
                      description="IT MW = G x per-GPU power; facility MW = IT x PUE; rack kW against the ~30 kW "
                                  "air-cooling limit and the ~70 kW AI rack (seed 001).")
    _hw_gpus(q, required_gpus=True)
    q.add_argument("--power-w", type=float, help="a typed per-GPU power, W (shown as a third basis)")
    _site(q)
    q.add_argument("--gpus-per-rack", type=int, help="default: the NVLink domain for NVL36/72/144, else 32")
    _fmt(q)

    q = fs.add_parser("scale", help="peak and realized FLOP/s and power across cluster sizes",
                      description="Realized = peak x the efficiency chain: seed 000 MFU(G) = 0.62 - 0.02 log2 G, "
                                  "or seed 001 MFU x scaling efficiency(G) x goodput.")
    _hw_gpus(q, required_gpus=True)
    q.add_argument("--peak-tflops", type=float, help="per-GPU peak, TFLOP/s (instead of --hardware)")
    q.add_argument("--power-w", type=float, help="per-GPU power, W (instead of --power-basis)")
    q.add_argument("--power-basis", default="all-in", help="tdp | all-in | a number of W [all-in]")
    q.add_argument("--training-precision", choices=PRECISIONS, default="bf16", help="dense peak used [bf16]")
    _site(q, note="; seed 000's 1.4 kW is all-in: --pue 1 reproduces it")
    _efficiency(q, default="seed000")
    _fmt(q)

    q = fs.add_parser("calc", help="Amdahl, all-reduce, MTBF, checkpoints, Young interval, goodput, Little's law",
                      description="Seed 001's fleet numbers for one cluster size, each with its formula.")
    _hw_gpus(q, required_gpus=True)
    q.add_argument("--serial-frac", type=float, help="Amdahl serial fraction [0.10]")
    q.add_argument("--gradient-gb", type=float, help="all-reduce message per GPU, GB [14 = 7B BF16 gradients]")
    q.add_argument("--compute-s", type=float, help="compute per GPU per step, s [5]")
    q.add_argument("--params", type=float, help="parameters checkpointed (14 B each) [175e9]")
    q.add_argument("--checkpoint-gb-per-s", type=float, help="checkpoint write bandwidth, GB/s [100]")
    q.add_argument("--mtbf-h", type=float, help="MTBF per GPU, h [50000]")
    q.add_argument("--window-h", type=float, help="failure window, h [24]")
    q.add_argument("--restart-s", type=float, help="restart time after a failure, s [600]")
    q.add_argument("--requests-per-s", type=float, help="Little's law arrival rate, requests/s [100]")
    q.add_argument("--request-s", type=float, help="time a request spends in the system, s [20]")
    q.add_argument("--sequences-per-replica", type=float, help="concurrent sequences per serving replica [64]")
    _fmt(q)

    q = fs.add_parser("capex", help="itemized build-out capex: accelerators, servers, network, storage, facility",
                      description="Each unit price from data/buildout_capex.csv (sourced), each adjustable.")
    _hw_gpus(q, required_gpus=True)
    add_price_options(q, default_basis="itemized")
    _site(q, pue=False)
    q.add_argument("--power-basis", default="all-in", help="per-GPU IT power the facility is built for [all-in]")
    _fmt(q)

    q = fs.add_parser("size", help="what a power or capex budget buys: GPUs, MW, racks, capex, FLOP/s, tokens/day",
                      description="`econ cluster` with a budget: the largest cluster a power budget (facility or IT) "
                                  "or a capex budget buys, with the same inputs, defaults and columns.")
    add_plan_options(q, budget_required=True)

    q = fs.add_parser("train", help="a training run: 6ND FLOPs, days and $, failures and checkpoints",
                      description="Days = 6 N D / (G x peak x MFU x scaling x goodput); cost = GPU-hours x price. "
                                  "Or --gpu-hours H for a published run's cost (and its implied MFU with --model).")
    _hw_gpus(q, required_gpus=False)
    q.add_argument("--model", help="model id: N = active matmul params, checkpoint = total params")
    q.add_argument("--params", type=float, help="active parameters N (instead of --model)")
    q.add_argument("--tokens", type=float, help="training tokens D [15e12]")
    q.add_argument("--gpu-hours", type=float, help="published GPU-hours: cost = GPU-hours x price")
    q.add_argument("--usd-per-gpu-hour", type=float, default=2.0, help="price of a GPU-hour [2.0]")
    q.add_argument("--training-precision", choices=PRECISIONS, default="bf16")
    q.add_argument("--checkpoint-gb-per-s", type=float, default=100.0, help="checkpoint write bandwidth [100]")
    q.add_argument("--mtbf-h", type=float, default=fleet.MTBF_H_PER_GPU, help="MTBF per GPU, h [50000]")
    q.add_argument("--restart-s", type=float, default=fleet.RESTART_S, help="restart after a failure, s [600]")
    _efficiency(q, default="seed001", goodput=True)
    _fmt(q)
    p.set_defaults(func=run)


def _hw_gpus(q, *, required_gpus: bool) -> None:
    q.add_argument("--hardware", help="accelerator id (econ list hardware)")
    q.add_argument("--gpus", required=required_gpus, help="cluster size(s): N or a list 1024,8192,100000")


def _efficiency(q, *, default: str, goodput: bool = True) -> None:
    add_efficiency_options(q, default=default)
    if goodput:
        q.add_argument("--goodput", help="budget | derived | none | a fraction (0, 1] [the model's budget]")


def _site(q, *, pue: bool = True, note: str = "") -> None:
    """The site flags of the physics calculators: a named facility (PUE and build cost), or typed values."""
    q.add_argument("--facility", help="facility class id (sets PUE and build cost; econ list facilities)")
    if pue:
        add_field_option(q, "pue", note=note)
    else:
        add_field_option(q, "build_usd_per_mw_it", dest="build_usd_per_mw")


def _fmt(q) -> None:
    q.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(q)


def _gpus(args) -> list[int]:
    return parse_int_list("--gpus", args.gpus, *bounds("cluster_gpus"), "accelerators")


def _hardware(catalog, args, *, required: bool = True):
    if args.hardware is None:
        if required:
            raise InvalidInputError("--hardware is required (econ list hardware)")
        return None
    return catalog.accelerator(args.hardware)


def _goodput(text):
    if text is None:
        return "budget"
    t = str(text).strip().lower()
    if t in ("budget", "derived", "none"):
        return t
    try:
        v = float(t)
    except ValueError:
        raise InvalidInputError(f"--goodput={text!r} is not budget, derived, none or a fraction in (0, 1]") from None
    check_fraction("--goodput", v)
    return v


def _peak(hw, precision: str) -> float:
    peak = hw[PEAK_COLUMN[precision]]
    if peak is None:
        raise InvalidInputError(f"hardware={hw['id']} has no dense {precision} peak (--training-precision; try bf16)")
    return float(peak)


def _calc_table(frame: pl.DataFrame, fmt: str, out=None) -> None:
    """The calculator rows with each value formatted by its own unit (table), or raw (csv/json)."""
    if fmt != "table":
        render(frame, fmt, out=out)
        return
    by_unit = {"s": formatting.seconds, "frac": formatting.pct, "B": formatting.bytes_,
               "x": lambda v: f"{formatting.sig(v)}x", "requests": formatting.count, "replicas": formatting.count}
    text = [by_unit.get(u, formatting.sig)(v) for v, u in zip(frame["value"], frame["unit"])]
    text = [f"{t} ({formatting.sig(v / 60, 4)} min)" if q == "Cluster MTBF" else t
            for t, v, q in zip(text, frame["value"], frame["quantity"])]
    shown = frame.with_columns(pl.Series("value", text)).drop("unit")
    render(shown, "table", vertical_if_single=False, out=out)


def run(args) -> int:
    cmd = args.fleet_command
    if cmd == "size":
        return plan_command.run(args)
    catalog = catalog_from(args)
    if cmd == "power":
        return _run_power(catalog, args)
    if cmd == "scale":
        return _run_scale(catalog, args)
    if cmd == "calc":
        return _run_calc(catalog, args)
    if cmd == "capex":
        return _run_capex(catalog, args)
    return _run_train(catalog, args)


def _run_power(catalog, args) -> int:
    gpus = _gpus(args)
    if len(gpus) != 1:
        raise InvalidInputError("--gpus takes one cluster size for `econ fleet power`")
    pue = economics_from(args, catalog).pue
    check_positive("--power-w", args.power_w, 1e5, "W")
    check_flag("gpus_per_rack", args.gpus_per_rack)
    hw = _hardware(catalog, args, required=args.power_w is None)
    rack = args.gpus_per_rack or (int(cl.default_gpus_per_rack(hw["scale_up_domain_size"])) if hw else
                                  cl.DEFAULT_GPUS_PER_RACK)
    frame = cl.power_table(gpus[0], pue=pue, gpus_per_rack=rack, tdp_w=hw["tdp_w"] if hw else None,
                           all_in_w=hw["all_in_power_w"] if hw else None, typed_w=args.power_w)
    frame = frame.with_columns(num_gpus=pl.lit(gpus[0]), pue=pl.lit(float(pue)), gpus_per_rack=pl.lit(rack))
    frame = frame.select("num_gpus", "pue", "gpus_per_rack", *[c for c in frame.columns
                                                               if c not in ("num_gpus", "pue", "gpus_per_rack")])
    show(frame, args.format)
    return 0


def _run_scale(catalog, args) -> int:
    gpus = _gpus(args)
    pue = economics_from(args, catalog).pue
    check_positive("--peak-tflops", args.peak_tflops, 1e6, "TFLOP/s")
    check_positive("--power-w", args.power_w, 1e5, "W")
    check_efficiency(args)
    hw = _hardware(catalog, args, required=args.peak_tflops is None or args.power_w is None)
    peak = args.peak_tflops * FLOP_PER_TFLOP if args.peak_tflops is not None else _peak(hw, args.training_precision)
    watts = args.power_w if args.power_w is not None else fleet.power_w_per_gpu(hw, args.power_basis)
    frame = cl.scale_table(gpus, flop_per_s_per_gpu=peak, power_w_per_gpu=watts, pue=pue,
                           efficiency_model=args.efficiency, mfu_frac=args.mfu,
                           scaling_efficiency=args.scaling_efficiency)
    frame = frame.select("num_gpus", "efficiency_model", "peak_flop_per_s", "mfu_frac", "scaling_efficiency_frac",
                         "goodput_frac", "realized_frac_of_peak", "realized_flop_per_s", "it_power_mw",
                         "facility_power_mw", "chain")
    if args.format == "table":
        frame = frame.drop("chain")
    show(frame, args.format)
    return 0


def _run_calc(catalog, args) -> int:
    gpus = _gpus(args)
    if len(gpus) != 1 or gpus[0] < 2:
        raise InvalidInputError("--gpus takes one cluster size of at least 2 GPUs for `econ fleet calc`")
    hw = _hardware(catalog, args, required=False)
    check_fraction("--serial-frac", args.serial_frac)
    for flag, v, hi, unit in (("--gradient-gb", args.gradient_gb, 1e6, "GB"), ("--compute-s", args.compute_s, 1e6, "s"),
                              ("--params", args.params, 1e16, "params"),
                              ("--checkpoint-gb-per-s", args.checkpoint_gb_per_s, 1e6, "GB/s"),
                              ("--mtbf-h", args.mtbf_h, 1e9, "h"), ("--window-h", args.window_h, 1e6, "h"),
                              ("--requests-per-s", args.requests_per_s, 1e9, "requests/s"),
                              ("--request-s", args.request_s, 1e6, "s"),
                              ("--sequences-per-replica", args.sequences_per_replica, 1e7, "sequences")):
        check_positive(flag, v, hi, unit)
    check_range("--restart-s", args.restart_s, 0, 1e6, "s")
    over = {k: v for k, v in dict(
        serial_frac=args.serial_frac, gradient_bytes=None if args.gradient_gb is None else args.gradient_gb * 1e9,
        compute_s=args.compute_s, params=args.params,
        checkpoint_write_bytes_per_s=None if args.checkpoint_gb_per_s is None else args.checkpoint_gb_per_s * 1e9,
        mtbf_h_per_gpu=args.mtbf_h, window_h=args.window_h, restart_s=args.restart_s,
        arrival_rate_per_s=args.requests_per_s, request_latency_s=args.request_s,
        sequences_per_replica=args.sequences_per_replica).items() if v is not None}
    links = {}
    if hw is not None:
        links = dict(scale_up_bytes_per_s=hw["scale_up_bandwidth_bytes_per_s"],
                     scale_out_bytes_per_s=hw["scale_out_bandwidth_bytes_per_s"])
    _calc_table(cl.fleet_numbers(gpus[0], **links, **over), args.format)
    return 0


def _run_capex(catalog, args) -> int:
    gpus = _gpus(args)
    hw = _hardware(catalog, args)
    prices = prices_from(args, catalog, args.hardware)
    e = economics_from(args, catalog)
    frame = buildout.buildout_capex(gpus, prices, it_power_w_per_gpu=fleet.power_w_per_gpu(hw, args.power_basis),
                                    build_usd_per_mw_it=e.build_usd_per_mw_it)
    frame = frame.with_columns(hardware=pl.lit(args.hardware), facility=pl.lit(
        cl.facility_label(catalog, e, args.facility))).select("hardware", "facility", *buildout.BUILDOUT_COLUMNS)
    show(frame, args.format)
    return 0


def _run_train(catalog, args) -> int:
    check_flag("usd_per_gpu_hour", args.usd_per_gpu_hour)
    check_positive("--gpu-hours", args.gpu_hours, 1e12, "GPU-hours")
    check_positive("--params", args.params, 1e16, "params")
    check_positive("--tokens", args.tokens, 1e17, "tokens")
    check_positive("--checkpoint-gb-per-s", args.checkpoint_gb_per_s, 1e6, "GB/s")
    check_positive("--mtbf-h", args.mtbf_h, 1e9, "h")
    check_range("--restart-s", args.restart_s, 0, 1e6, "s")
    check_efficiency(args)
    goodput = _goodput(args.goodput)
    active = total = None
    if args.model:
        m = catalog.model(args.model)
        active, total = float(m["active_matmul_params"]), float(m["total_params"])
    if args.params is not None:
        active = args.params
        total = total or args.params
    tokens = args.tokens if args.tokens is not None else 15e12
    if args.gpu_hours is not None:
        row = {"gpu_hours": args.gpu_hours, "usd_per_gpu_hour": args.usd_per_gpu_hour,
               "training_cost_usd": float(buildout.gpu_hours_cost_usd(args.gpu_hours, args.usd_per_gpu_hour))}
        if active is not None and args.hardware:
            hw = _hardware(catalog, args)
            flop = float(fleet.training_flop(active, tokens))
            row.update(hardware=args.hardware, training_flop=flop, training_tokens=tokens,
                       implied_mfu_frac=float(fleet.implied_mfu_frac(flop, args.gpu_hours,
                                                                  _peak(hw, args.training_precision))))
        show(pl.DataFrame([row]), args.format)
        return 0
    if not args.gpus:
        raise InvalidInputError("--gpus is required (or give --gpu-hours for a published run's cost)")
    if active is None:
        raise InvalidInputError("give --model or --params (active parameters) for a 6 N D training run")
    hw = _hardware(catalog, args)
    frame = cl.training_run(_gpus(args), training_flop=float(fleet.training_flop(active, tokens)),
                            flop_per_s_per_gpu=_peak(hw, args.training_precision),
                            usd_per_gpu_hour=args.usd_per_gpu_hour, efficiency_model=args.efficiency,
                            mfu_frac=args.mfu, scaling_efficiency=args.scaling_efficiency, goodput=goodput,
                            params_for_checkpoint=total,
                            checkpoint_write_bytes_per_s=args.checkpoint_gb_per_s * 1e9, mtbf_h_per_gpu=args.mtbf_h,
                            restart_s=args.restart_s)
    frame = frame.with_columns(hardware=pl.lit(args.hardware), training_tokens=pl.lit(float(tokens)))
    frame = frame.select("hardware", "training_tokens", *cl.TRAINING_COLUMNS)
    show(frame, args.format)
    return 0


__all__ = ["register", "run"]
