"""``econ fleet``: the seeds' cluster chapters as calculators, forward and inverse.

Subcommands (each a thin layer over ``econ.analyses.cluster``: flags in, one call, a table out):

- ``power``  IT and facility MW of G GPUs on the TDP, all-in and a typed per-GPU basis, rack kW vs cooling limits;
- ``scale``  peak and realized FLOP/s across cluster sizes under seed 000's MFU(G) or seed 001's chain;
- ``calc``   Amdahl, NVLink vs InfiniBand all-reduce, comm/compute ratio, MTBF, checkpoints, Young's interval,
  goodput, Little's law;
- ``capex``  itemized build-out capex (accelerators, servers, network by tier, storage, facility $/MW);
- ``size``   inverse sizing from a power or capex budget (GPUs, MW, racks, capex, FLOP/s, tokens/day, payback);
- ``train``  a training run: 6ND FLOPs, days and $ with failures and checkpoints, or GPU-hours x $/GPU-hour.
"""

from __future__ import annotations

import polars as pl

from econ.analyses import cluster as cl
from econ import formatting
from econ.commands._common import (add_data_dir, add_slo_options, add_workload_options, catalog_from, check_range,
                                   parse_int_list, render, slo_from, workload_from)
from econ.errors import InvalidInputError
from econ.physics.precision import PEAK_COLUMN, PRECISIONS
from econ.units import FLOP_PER_TFLOP, W_PER_MW

MAX_GPUS = 100_000_000


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
    q.add_argument("--pue", type=float, default=1.40, help="power usage effectiveness in [1, 3] [1.40]")
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
    q.add_argument("--pue", type=float, default=1.0, help="PUE in [1, 3] [1: seed 000's 1.4 kW is all-in]")
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
    _prices(q)
    q.add_argument("--power-basis", default="all-in", help="per-GPU IT power the facility is built for [all-in]")
    _fmt(q)

    q = fs.add_parser("size", help="what a power or capex budget buys: GPUs, MW, racks, capex, FLOP/s, tokens/day",
                      description="Inverse sizing from a power budget (facility or IT) or a capex budget.")
    q.add_argument("--hardware", required=True, help="accelerator id (econ list hardware)")
    b = q.add_mutually_exclusive_group(required=True)
    b.add_argument("--power-mw", type=float, help="power budget, MW (1 GW = 1000)")
    b.add_argument("--capex-usd", type=float, help="capex budget, USD (e.g. 5e9)")
    q.add_argument("--power-of", choices=("facility", "it"), default="facility",
                   help="the power budget is the facility's grid draw or the IT load [facility]")
    q.add_argument("--pue", type=float, default=1.2, help="PUE in [1, 3] [1.2]")
    q.add_argument("--power-basis", default="all-in", help="tdp | all-in | a number of W per GPU [all-in]")
    q.add_argument("--model", help="serve this model: tokens/day through the engine, revenue, payback")
    q.add_argument("--price", type=float, default=0.90, help="selling price, USD per M output tokens [0.90]")
    add_workload_options(q)
    add_slo_options(q, ttft=False)
    q.add_argument("--usd-per-kwh", type=float, default=0.066, help="electricity price, USD/kWh [0.066]")
    q.add_argument("--utilization", type=float, default=0.7, help="share of hours serving paid traffic [0.7]")
    q.add_argument("--training-precision", choices=PRECISIONS, default="bf16")
    _efficiency(q, default="seed001", goodput=False)
    _prices(q)
    _fmt(q)

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
    q.add_argument("--mtbf-h", type=float, default=cl.MTBF_H_PER_GPU, help="MTBF per GPU, h [50000]")
    q.add_argument("--restart-s", type=float, default=cl.RESTART_S, help="restart after a failure, s [600]")
    _efficiency(q, default="seed001", goodput=True)
    _fmt(q)
    p.set_defaults(func=run)


def _hw_gpus(q, *, required_gpus: bool) -> None:
    q.add_argument("--hardware", help="accelerator id (econ list hardware)")
    q.add_argument("--gpus", required=required_gpus, help="cluster size(s): N or a list 1024,8192,100000")


def _efficiency(q, *, default: str, goodput: bool = True) -> None:
    q.add_argument("--efficiency", choices=cl.EFFICIENCY_MODELS, default=default,
                   help=f"seed000: MFU(G) = 0.62 - 0.02 log2 G; seed001: MFU x scaling(G) x goodput [{default}]")
    q.add_argument("--mfu", type=float, help="override the model's MFU, (0, 1]")
    q.add_argument("--scaling-efficiency", type=float, help="override seed 001's scaling efficiency, (0, 1]")
    if goodput:
        q.add_argument("--goodput", help="budget | derived | none | a fraction (0, 1] [the model's budget]")


def _prices(q) -> None:
    q.add_argument("--cooling", choices=("air", "liquid"), help="facility class [liquid above the ~30 kW air limit]")
    q.add_argument("--accelerator-usd", type=float, help="accelerator price per GPU [purchase_price_usd]")
    q.add_argument("--server-usd", type=float, help="server/host share per GPU [6,845]")
    q.add_argument("--switch-usd", type=float, help="scale-out switch price [36,000]")
    q.add_argument("--switch-radix", type=float, help="switch ports [64]")
    q.add_argument("--link-usd", type=float, help="one link (optics + cable) per GPU per tier [1,280]")
    q.add_argument("--storage-usd", type=float, help="storage per GPU [278]")
    q.add_argument("--facility-usd-per-mw", type=float, help="facility build per MW IT [air 11.7M, liquid 14.83M]")
    q.add_argument("--all-in-usd", type=float, help="one all-in IT price per GPU replacing the IT items "
                                                    "(seed 004: H100 ~45,000)")


def _fmt(q) -> None:
    q.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(q)


def _gpus(args) -> list[int]:
    return parse_int_list("--gpus", args.gpus, 1, MAX_GPUS)


def _positive(flag: str, value, hi: float, unit: str = "") -> None:
    """Zero, negative, non-finite or absurd values are named with their range."""
    if value is None:
        return
    check_range(flag, value, 0, hi, unit)
    if value == 0:
        raise InvalidInputError(f"{flag}=0 is outside (0, {hi:g}] {unit}".rstrip())


def _frac(flag: str, value) -> None:
    if value is None:
        return
    if not (value == value) or not 0 < value <= 1:
        raise InvalidInputError(f"{flag}={value:g} is outside (0, 1]")


def _hardware(catalog, args, *, required: bool = True):
    if args.hardware is None:
        if required:
            raise InvalidInputError("--hardware is required (econ list hardware)")
        return None
    return catalog.accelerator(args.hardware)


def _price_overrides(args) -> dict:
    for flag, v, hi in (("--accelerator-usd", args.accelerator_usd, 1e7), ("--server-usd", args.server_usd, 1e7),
                        ("--switch-usd", args.switch_usd, 1e8), ("--link-usd", args.link_usd, 1e6),
                        ("--storage-usd", args.storage_usd, 1e7), ("--facility-usd-per-mw", args.facility_usd_per_mw, 1e9),
                        ("--all-in-usd", args.all_in_usd, 1e7)):
        check_range(flag, v, 0, hi, "USD")
    check_range("--switch-radix", args.switch_radix, 4, 4096, "ports")
    return dict(accelerator_usd_per_gpu=args.accelerator_usd, server_usd_per_gpu=args.server_usd,
                switch_usd=args.switch_usd, switch_radix=args.switch_radix, link_usd=args.link_usd,
                storage_usd_per_gpu=args.storage_usd, facility_usd_per_mw=args.facility_usd_per_mw,
                all_in_it_usd_per_gpu=args.all_in_usd)


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
    _frac("--goodput", v)
    return v


def _check_efficiency(args) -> None:
    _frac("--mfu", args.mfu)
    _frac("--scaling-efficiency", args.scaling_efficiency)


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


DISPLAY_NAMES = {"realized_frac_of_peak": "realized_of_peak_frac"}
"""Table-only renames so the unit suffix (``_frac`` -> %) formats the cell; CSV/JSON keep the core's names."""


def show(frame: pl.DataFrame, fmt: str, **kwargs) -> None:
    """Render a result: tables with :data:`DISPLAY_NAMES` applied, CSV/JSON unchanged."""
    if fmt == "table":
        frame = frame.rename({k: v for k, v in DISPLAY_NAMES.items() if k in frame.columns})
    render(frame, fmt, **kwargs)


def run(args) -> int:
    catalog = catalog_from(args)
    cmd = args.fleet_command
    if cmd == "power":
        return _run_power(catalog, args)
    if cmd == "scale":
        return _run_scale(catalog, args)
    if cmd == "calc":
        return _run_calc(catalog, args)
    if cmd == "capex":
        return _run_capex(catalog, args)
    if cmd == "size":
        return _run_size(catalog, args)
    return _run_train(catalog, args)


def _run_power(catalog, args) -> int:
    gpus = _gpus(args)
    if len(gpus) != 1:
        raise InvalidInputError("--gpus takes one cluster size for `econ fleet power`")
    check_range("--pue", args.pue, 1, 3)
    _positive("--power-w", args.power_w, 1e5, "W")
    check_range("--gpus-per-rack", args.gpus_per_rack, 1, 1024, "accelerators")
    hw = _hardware(catalog, args, required=args.power_w is None)
    rack = args.gpus_per_rack or (int(cl.default_gpus_per_rack(hw["scale_up_domain_size"])) if hw else
                                  cl.DEFAULT_GPUS_PER_RACK)
    frame = cl.power_table(gpus[0], pue=args.pue, gpus_per_rack=rack, tdp_w=hw["tdp_w"] if hw else None,
                           all_in_w=hw["all_in_power_w"] if hw else None, typed_w=args.power_w)
    frame = frame.with_columns(num_gpus=pl.lit(gpus[0]), pue=pl.lit(float(args.pue)), gpus_per_rack=pl.lit(rack))
    frame = frame.select("num_gpus", "pue", "gpus_per_rack", *[c for c in frame.columns
                                                               if c not in ("num_gpus", "pue", "gpus_per_rack")])
    show(frame, args.format)
    return 0


def _run_scale(catalog, args) -> int:
    gpus = _gpus(args)
    check_range("--pue", args.pue, 1, 3)
    _positive("--peak-tflops", args.peak_tflops, 1e6, "TFLOP/s")
    _positive("--power-w", args.power_w, 1e5, "W")
    _check_efficiency(args)
    hw = _hardware(catalog, args, required=args.peak_tflops is None or args.power_w is None)
    peak = args.peak_tflops * FLOP_PER_TFLOP if args.peak_tflops is not None else _peak(hw, args.training_precision)
    watts = args.power_w if args.power_w is not None else cl.power_w_per_gpu(hw, args.power_basis)
    frame = cl.scale_table(gpus, flop_per_s_per_gpu=peak, power_w_per_gpu=watts, pue=args.pue,
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
    _frac("--serial-frac", args.serial_frac)
    for flag, v, hi, unit in (("--gradient-gb", args.gradient_gb, 1e6, "GB"), ("--compute-s", args.compute_s, 1e6, "s"),
                              ("--params", args.params, 1e16, "params"),
                              ("--checkpoint-gb-per-s", args.checkpoint_gb_per_s, 1e6, "GB/s"),
                              ("--mtbf-h", args.mtbf_h, 1e9, "h"), ("--window-h", args.window_h, 1e6, "h"),
                              ("--requests-per-s", args.requests_per_s, 1e9, "requests/s"),
                              ("--request-s", args.request_s, 1e6, "s"),
                              ("--sequences-per-replica", args.sequences_per_replica, 1e7, "sequences")):
        _positive(flag, v, hi, unit)
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
    prices = cl.buildout_prices(catalog, args.hardware, cooling=args.cooling, **_price_overrides(args))
    frame = cl.buildout_capex(gpus, prices, it_power_w_per_gpu=cl.power_w_per_gpu(hw, args.power_basis))
    frame = frame.with_columns(hardware=pl.lit(args.hardware)).select("hardware", *cl.BUILDOUT_COLUMNS)
    show(frame, args.format)
    return 0


def _run_size(catalog, args) -> int:
    _positive("--power-mw", args.power_mw, 1e6, "MW")
    _positive("--capex-usd", args.capex_usd, 1e15, "USD")
    check_range("--pue", args.pue, 1, 3)
    check_range("--price", args.price, 0, 1e4, "USD/M tokens")
    floor, _ = slo_from(args)
    check_range("--min-tokens-per-s-per-user", floor, 0, 1e4, "tokens/s")
    input_len, output_len = workload_from(args)
    check_range("--usd-per-kwh", args.usd_per_kwh, 0, 10, "USD/kWh")
    _frac("--utilization", args.utilization)
    _check_efficiency(args)
    prices = cl.buildout_prices(catalog, args.hardware, cooling=args.cooling, **_price_overrides(args))
    frame = cl.size_from_budget(
        catalog, hardware=args.hardware, power_w=None if args.power_mw is None else args.power_mw * W_PER_MW,
        power_of=args.power_of, capex_usd=args.capex_usd, pue=args.pue, power_basis=args.power_basis,
        training_precision=args.training_precision, efficiency_model=args.efficiency, mfu_frac=args.mfu,
        model=args.model, price_usd_per_m_output_tokens=args.price,
        min_tokens_per_s_per_user=floor, usd_per_kwh=args.usd_per_kwh,
        utilization_frac=args.utilization, prices=prices, input_len=input_len, output_len=output_len)
    if args.model is None and args.format == "table":
        frame = frame.select([c for c in frame.columns if not c.startswith(("serving_", "revenue", "payback", "model",
                                                                              "usd_per_m_"))])
    show(frame, args.format)
    return 0


def _run_train(catalog, args) -> int:
    check_range("--usd-per-gpu-hour", args.usd_per_gpu_hour, 0, 1e4, "USD/GPU-hour")
    _positive("--gpu-hours", args.gpu_hours, 1e12, "GPU-hours")
    _positive("--params", args.params, 1e16, "params")
    _positive("--tokens", args.tokens, 1e17, "tokens")
    _positive("--checkpoint-gb-per-s", args.checkpoint_gb_per_s, 1e6, "GB/s")
    _positive("--mtbf-h", args.mtbf_h, 1e9, "h")
    check_range("--restart-s", args.restart_s, 0, 1e6, "s")
    _check_efficiency(args)
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
               "training_cost_usd": float(cl.gpu_hours_cost_usd(args.gpu_hours, args.usd_per_gpu_hour))}
        if active is not None and args.hardware:
            hw = _hardware(catalog, args)
            flop = float(cl.training_flop(active, tokens))
            row.update(hardware=args.hardware, training_flop=flop, training_tokens=tokens,
                       implied_mfu_frac=float(cl.implied_mfu_frac(flop, args.gpu_hours,
                                                                  _peak(hw, args.training_precision))))
        show(pl.DataFrame([row]), args.format)
        return 0
    if not args.gpus:
        raise InvalidInputError("--gpus is required (or give --gpu-hours for a published run's cost)")
    if active is None:
        raise InvalidInputError("give --model or --params (active parameters) for a 6 N D training run")
    hw = _hardware(catalog, args)
    frame = cl.training_run(_gpus(args), training_flop=float(cl.training_flop(active, tokens)),
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


__all__ = ["register", "run", "MAX_GPUS"]
