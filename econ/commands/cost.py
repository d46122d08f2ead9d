"""``econ cost``: what it costs to serve one model on one accelerator, one row per batch size."""

from __future__ import annotations

from dataclasses import replace

from econ.assumptions import DEFAULT, IDEAL_OVERRIDES
from econ.commands._common import add_data_dir, catalog_from, check_range, parse_int_list, render
from econ.errors import InvalidInputError
from econ.precision import PRECISIONS
from econ.engine import MAX_PARALLEL
from econ.sweep import MAX_BATCH, MAX_CONTEXT, cost_table, make_economics

SUMMARY_COLUMNS = (
    "model", "hardware", "layout", "num_gpus", "tp", "dp", "ep", "pp", "precision", "batch_size", "context_tokens",
    "max_batch_size",
    "sweet_spot_batch", "binding_wall", "feasible", "infeasible_reason", "tpot_s", "tokens_per_s_per_user",
    "output_tokens_per_s_per_gpu", "input_tokens_per_s_per_gpu", "ttft_s", "basis", "usd_per_gpu_hour",
    "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_blended_tokens", "input_output_mix",
    "cache_hit_frac",
)


def parse_mix(text: str) -> float:
    """'3:1' -> 3.0 input tokens per output token."""
    try:
        a, b = (float(x) for x in str(text).split(":"))
    except ValueError:
        raise InvalidInputError(f"--input-output-mix={text!r} is not of the form I:O (e.g. 3:1)") from None
    if a < 0 or b <= 0:
        raise InvalidInputError(f"--input-output-mix={text!r}: I must be >= 0 and O > 0")
    return a / b


def register(sub) -> None:
    p = sub.add_parser("cost", help="cost of serving a model on an accelerator ($/M tokens, tokens/s, walls)",
                       description="Roofline cost of serving MODEL on HARDWARE: TPOT, TTFT, tokens/s per GPU and "
                                   "per user, the binding wall, $/GPU-hour and $/M input/output/blended tokens.")
    add_cost_arguments(p)
    p.add_argument("--all-columns", action="store_true", help="every result column, not the summary")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    p.set_defaults(func=run)


def add_cost_arguments(p) -> None:
    """The scenario flags of ``econ cost`` (also used by ``econ export cost``); see :func:`compute`."""
    p.add_argument("--scenario", metavar="FILE",
                   help="TOML scenario file (saved from the dashboard sidebar); flags given explicitly override it")
    p.add_argument("--model", help="model id (econ list models); required unless --scenario gives it")
    p.add_argument("--hardware", help="accelerator id (econ list hardware); required unless --scenario gives it")
    p.add_argument("--gpus", type=int, help="accelerators per model replica (default: the cheapest power of two from the fewest that hold the weights up to the scale-up domain)")
    p.add_argument("--tp", type=int, help="tensor-parallel size per attention group (default: chosen, see below)")
    p.add_argument("--dp", type=int, help="attention data-parallel groups per replica (attention-DP; MoE models)")
    p.add_argument("--ep", type=int, help="expert-parallel size (divides the routed experts and tp x dp; MoE models)")
    p.add_argument("--pp", type=int, help="pipeline stages (default: gpus / (tp x dp))")
    p.add_argument("--mode", choices=("aggregated", "disaggregated"),
                   help="aggregated (prefill and decode share the GPUs) or disaggregated (prefill pool, xPyD) "
                        "[aggregated]. Layout flags not given are chosen: the cheapest valid layout at its sweet "
                        "spot (tensor x pipeline, or attention-DP + EP for MoE models), filling the scale-up domain "
                        "before pipelining; the table shows the layout chosen")
    p.add_argument("--precision", choices=PRECISIONS, help="weight and matmul precision [bf16]")
    p.add_argument("--batch",
                   help="concurrent sequences per replica: N, a list 1,8,64,256, or auto (sweet spot) [auto]")
    p.add_argument("--context", type=int, help="context tokens per sequence: sizes the KV cache and decode attention (instead of input+output); "
                        "prompts are this long too unless --input-len is given")
    p.add_argument("--input-len", type=int, help="prompt tokens per request [1024]")
    p.add_argument("--output-len", type=int, help="generated tokens per request [1024]")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--region", help="power-price region id (econ list regions)")
    g.add_argument("--usd-per-kwh", type=float, help="electricity price, USD/kWh")
    p.add_argument("--facility", help="facility class id (sets PUE and build cost; econ list facilities)")
    p.add_argument("--pue", type=float, help="power usage effectiveness, >= 1")
    b = p.add_mutually_exclusive_group()
    b.add_argument("--rental", dest="basis", action="store_const", const="rental", help="price GPU-hours at the rental rate")
    b.add_argument("--owned", dest="basis", action="store_const", const="owned", help="price GPU-hours by TCO (default)")
    p.add_argument("--utilization", type=float, help="share of hours serving paid traffic, (0, 1]")
    p.add_argument("--cost-of-capital", type=float, help="annual rate, e.g. 0.10")
    p.add_argument("--life-years", type=float, help="accelerator economic life, years")
    p.add_argument("--input-output-mix", help="input:output tokens for the blended price [3:1]")
    p.add_argument("--cache-hit-rate", type=float, help="share of input tokens served from a prefix cache, [0, 1]")
    p.add_argument("--ideal", action="store_true", help="pure roofline: every efficiency 1, no overheads")
    p.add_argument("--stream-embeddings", action="store_true",
                   help="count the whole input-embedding table as read each step (the seeds' convention)")
    add_data_dir(p)


COST_DEFAULTS = dict(precision="bf16", batch="auto", input_len=1024, output_len=1024, input_output_mix="3:1")
"""Defaults of the flags a scenario file can also set (applied when neither gives a value)."""


def apply_scenario(args):
    """Fill the flags not given on the command line from ``--scenario FILE``, then from the defaults.

    Explicit flags always win. Warnings from the file (unknown ids, out-of-range values, which fall
    back to defaults) go to stderr. Without ``--scenario``, behaviour is the flags' own defaults.

    Returns
    -------
    (Assumptions, Economics): the bases for the values the flags do not cover (efficiency factors,
    facility life, opex share, build cost, cached-input cost).

    Raises
    ------
    InvalidInputError
        If the file cannot be read, or ``--model``/``--hardware`` are given by neither.
    """
    import sys

    from econ.assumptions import Economics
    from econ.scenario import load_toml_file

    if getattr(args, "context", None) is not None and args.input_len is None:
        args.input_len = args.context  # --context C alone: the prompt is the whole context (TTFT, $/M input)
    if not getattr(args, "scenario", None):
        for k, v in COST_DEFAULTS.items():
            if getattr(args, k) is None:
                setattr(args, k, v)
        for flag in ("model", "hardware"):
            if getattr(args, flag) is None:
                raise InvalidInputError(f"--{flag} is required (or give --scenario FILE)")
        return DEFAULT, Economics()
    sc, warnings = load_toml_file(args.scenario, catalog_from(args))
    for w in warnings:
        print(f"econ: warning: --scenario {args.scenario}: {w}", file=sys.stderr)
    fill = dict(model=sc.model, hardware=sc.hardware, precision=sc.precision, gpus=sc.num_gpus,
                batch="auto" if sc.batch_size is None else str(sc.batch_size), input_len=sc.input_len,
                output_len=sc.output_len, basis=sc.basis, utilization=sc.utilization_frac,
                cost_of_capital=sc.cost_of_capital_frac, life_years=sc.accelerator_life_years,
                input_output_mix=f"{sc.input_output_mix!r}:1", cache_hit_rate=sc.cache_hit_frac)
    if args.region is None and args.usd_per_kwh is None:  # power price: --region or --usd-per-kwh beat the file
        fill.update(region=sc.region, usd_per_kwh=None if sc.region else sc.usd_per_kwh)
    if args.facility is None:  # an explicit --facility sets PUE and build cost over the file's
        fill.update(pue=sc.pue)
    for k, v in fill.items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    args.stream_embeddings = args.stream_embeddings or sc.stream_input_embedding
    base_economics = replace(sc.economics(), usd_per_kwh=sc.usd_per_kwh)
    if args.facility is not None:
        base_economics = replace(base_economics, pue=Economics().pue)
    return sc.assumptions(), base_economics


def run(args) -> int:
    frame = compute(args)[0]
    if not args.all_columns:
        frame = frame.select(SUMMARY_COLUMNS)
    render(frame, args.format)
    return 0


def compute(args):
    """Check the flags of :func:`add_cost_arguments` and compute the cost table.

    Returns
    -------
    (frame, catalog, assumptions, economics): the :func:`econ.sweep.cost_table` frame and its inputs.
    """
    base_assumptions, base_economics = apply_scenario(args)
    check_range("--gpus", args.gpus, 1, 1 << 20, "accelerators")
    for flag in ("tp", "dp", "ep", "pp"):
        check_range(f"--{flag}", getattr(args, flag), 1, MAX_PARALLEL)
    check_range("--context", args.context, 1, MAX_CONTEXT, "tokens")
    check_range("--input-len", args.input_len, 1, MAX_CONTEXT, "tokens")
    check_range("--output-len", args.output_len, 1, MAX_CONTEXT, "tokens")
    check_range("--usd-per-kwh", args.usd_per_kwh, 0, 10, "USD/kWh")
    check_range("--pue", args.pue, 1, 5)
    check_range("--utilization", args.utilization, 0.01, 1)
    check_range("--cost-of-capital", args.cost_of_capital, 0, 1)
    check_range("--life-years", args.life_years, 0.1, 50, "years")
    check_range("--cache-hit-rate", args.cache_hit_rate, 0, 1)
    batches = None if str(args.batch).strip().lower() == "auto" else parse_int_list("--batch", args.batch, 1, MAX_BATCH)
    catalog = catalog_from(args)
    assumptions = replace(base_assumptions, stream_input_embedding=args.stream_embeddings)
    if args.ideal:
        assumptions = replace(assumptions, **IDEAL_OVERRIDES)
    economics = make_economics(
        catalog, region=args.region, facility=args.facility, basis=args.basis, usd_per_kwh=args.usd_per_kwh,
        pue=args.pue, utilization_frac=args.utilization, cost_of_capital_frac=args.cost_of_capital,
        accelerator_life_years=args.life_years, input_output_mix=parse_mix(args.input_output_mix),
        cache_hit_frac=args.cache_hit_rate, base=base_economics)
    frame = cost_table(catalog, model=args.model, hardware=args.hardware, precision=args.precision,
                       num_gpus=args.gpus, tp=args.tp, dp=args.dp, ep=args.ep, pp=args.pp,
                       mode=args.mode or "aggregated", batch_sizes=batches, input_len=args.input_len,
                       output_len=args.output_len, context_tokens=args.context, assumptions=assumptions,
                       economics=economics)
    return frame, catalog, assumptions, economics
