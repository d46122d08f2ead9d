"""``econ prefill``: one long prompt's TTFT and $ by context parallelism, on a prefill part, and chunked (issue 22.3)."""

from __future__ import annotations

import json
import sys

from econ.commands._common import (add_data_dir, add_economics_options, add_scenario_option, catalog_from,
                                   check_range, economics_from, load_scenario, parse_int_list, progress, render)
from econ.errors import InvalidInputError
from econ.physics.precision import PRECISIONS

DEFAULT_DECODE_BATCH = 64
"""Decode batch chunked prefill rides with when --chunk is given without --decode-batch. [sequences]"""

PLAN_COLUMNS = ("strategy", "hardware", "tp", "cp", "gpus", "ttft_s", "kv_transfer_s", "exposed_comm_s", "kv_fits",
                "usd_per_gpu_hour", "usd_per_prompt")


def register(sub) -> None:
    p = sub.add_parser(
        "prefill", help="one long prompt: TTFT and $ by context parallelism, on a prefill part, chunked",
        description="Prefill of one long prompt (100K+ tokens): ring-attention context parallelism over CP ranks of "
                    "TP accelerators (the KV blocks cross scale-out links, hidden behind attention when it is "
                    "longer), optionally on a prefill part whose KV then ships to the decode accelerators, and "
                    "chunked prefill beside a decode batch (TTFT and how much it slows decode).",
        epilog="example: econ prefill --model llama-3.1-405b --hardware h100-sxm --input-len 1000000 --tp 8 --cp 1,4,16")
    add_scenario_option(p)
    p.add_argument("--model", required=True, help="model id (econ list models)")
    p.add_argument("--hardware", required=True, help="accelerator id: decode, and prefill unless --prefill-hardware")
    p.add_argument("--input-len", "--isl", dest="input_len", type=int, required=True, help="prompt tokens")
    p.add_argument("--precision", choices=PRECISIONS, default="fp8", help="matmul precision of the linear layers [fp8]")
    p.add_argument("--tp", type=int, help="one rank = TP accelerators [the cheapest layout holding one sequence of the prompt]")
    p.add_argument("--cp", help="context-parallel sizes, comma list [1,2,4,8,16]")
    p.add_argument("--prefill-hardware", help="a prefill part (e.g. a GDDR accelerator) beside the decode accelerators")
    p.add_argument("--chunk", help="chunk sizes for chunked prefill beside a decode batch, comma list (tokens)")
    p.add_argument("--decode-batch", type=int, help="decode batch the chunks ride with (needs --chunk) [64]")
    add_economics_options(p, mix=False)
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from econ.analyses.long_prompt import DEFAULT_CP_SIZES, long_prompt
    from econ.assumptions import DEFAULT

    catalog = catalog_from(args)
    sc, catalog = load_scenario(args, catalog)
    check_range("--input-len", args.input_len, 1, 1 << 24, "tokens")
    check_range("--tp", args.tp, 1, 4096, "accelerators")
    if args.decode_batch is not None and not args.chunk:  # no silent no-op (issue 21.1)
        raise InvalidInputError(f"--decode-batch={args.decode_batch} needs --chunk (the decode batch is the one "
                                "chunked prefill rides with)")
    args.decode_batch = DEFAULT_DECODE_BATCH if args.decode_batch is None else args.decode_batch
    check_range("--decode-batch", args.decode_batch, 1, 1 << 20, "sequences")
    cps = parse_int_list("--cp", args.cp, 1, 1024, "ranks") if args.cp else list(DEFAULT_CP_SIZES)
    chunks = parse_int_list("--chunk", args.chunk, 1, 1 << 24, "tokens") if args.chunk else None
    economics = economics_from(args, catalog, sc)
    with progress(f"Prefilling {args.input_len:,} tokens of {args.model}"):
        r = long_prompt(catalog, model=args.model, hardware=args.hardware, prompt_tokens=args.input_len,
                        precision=args.precision, tp=args.tp, cp_sizes=cps, prefill_hardware=args.prefill_hardware,
                        chunk_tokens=chunks, decode_batch=args.decode_batch,
                        assumptions=sc.assumptions() if sc is not None else DEFAULT, economics=economics)
    plans = r.plans.select(PLAN_COLUMNS)
    if args.format == "json":
        json.dump({"plans": plans.to_dicts(), "chunked": r.chunked.to_dicts()}, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    if args.format == "csv":
        sys.stdout.write(plans.write_csv())
        return 0
    sys.stdout.write(f"{args.model}, one {args.input_len:,}-token prompt, {args.precision} linear layers, BF16 "
                     "attention; ring attention across CP ranks over scale-out\n")
    render(plans, "table", vertical_if_single=False)
    ctx = catalog.model(args.model).get("max_context_tokens")
    if ctx and args.input_len > ctx:
        sys.stdout.write(f"note: {args.input_len:,} tokens is beyond {args.model}'s {ctx:,}-token context (a what-if "
                         "of the arithmetic)\n")
    if r.chunked.height:
        sys.stdout.write(f"\nChunked prefill beside a decode batch of {args.decode_batch} on {args.hardware} "
                         "(tpot_inflation: decode users' time per token while the prompt streams in):\n")
        render(r.chunked, "table", vertical_if_single=False)
    return 0
