"""``econ cost``: what it costs to serve one model on one accelerator (or a few), one row per batch size."""

from __future__ import annotations

import sys
from dataclasses import replace

import polars as pl

from econ.assumptions import DEFAULT, IDEAL_OVERRIDES
from econ.commands._common import (add_data_dir, add_decoding_options, add_economics_options, add_field_option,
                                   add_long_context_options, add_memory_options, add_scenario_option,
                                   add_slo_options, add_slo_percentile_option, add_workload_options, catalog_from,
                                   check_fields, check_flag, check_range, decoding_from, economics_from,
                                   load_scenario, long_context_from, memory_from, parse_int_list, parse_mix, render,
                                   slo_from, slo_percentile_from, with_warnings, workload_from)
from econ.vocabulary import MAX_CONTEXT, bounds
from econ.errors import EconError, InvalidInputError
from econ.physics.precision import PRECISIONS
from econ.analyses.sweep import cost_table, decoding_note

__all__ = ["register", "run", "compute", "add_cost_arguments", "parse_mix", "SUMMARY_COLUMNS", "COST_DEFAULTS"]

SUMMARY_COLUMNS = (
    "model", "hardware", "layout", "num_gpus", "total_gpus", "tp", "dp", "ep", "pp", "precision", "batch_size",
    "context_tokens",
    "max_batch_size",
    "sweet_spot_batch", "binding_wall", "feasible", "infeasible_reason", "meets_slo", "tpot_s",
    "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "input_tokens_per_s_per_gpu", "ttft_s",
    "accepted_tokens_per_step", "basis",
    "usd_per_gpu_hour", "usd_per_m_input_tokens", "usd_per_m_output_tokens", "usd_per_m_output_tokens_all_in",
    "usd_per_m_blended_tokens",
    "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high", "usd_per_m_blended_tokens_low",
    "usd_per_m_blended_tokens_high", "efficiency_profile", "profile_note",
    "input_output_mix", "cache_hit_frac",
    # a task preset (issue 22): where the waiting prefixes live, the true cost of a cached token, $/call and $/task
    "calls_per_task", "kv_tier", "usd_per_m_cached_input_tokens_true", "kv_load_s", "ttft_cache_hit_s",
    "usd_per_call", "usd_per_task",
)
"""The summary: the answer, its calibration band (the engine's ``*_low`` / ``*_high``: issue 18, every decision shows
its band) and the efficiency profile it rests on (``profile_note`` marks a fallback or wide-band one,
:func:`econ.analyses.bands.with_profiles`), then the assumptions of the mix."""

MAX_HARDWARE = 32
"""Most accelerators one ``econ cost --hardware a,b,...`` compares (a list, not a sweep: see ``econ optimize``)."""

DECODING_SUMMARY = ("weight_format", "expert_weight_format", "kv_precision", "spec_method", "spec_draft_tokens",
                    "spec_acceptance")
"""Summary columns after the answer's: the formats and speculative decoding it used (issue 19)."""
LONG_CONTEXT_SUMMARY = ("cp", "max_batch_size_hbm", "kv_offload_frac", "kv_offload_s", "kv_tier_usd_per_gpu_hour",
                        "prefix_load_s")
"""Summary columns of the long-context flags (issue 22; present only when one is given)."""
SUMMARY_COLUMNS = SUMMARY_COLUMNS + DECODING_SUMMARY + LONG_CONTEXT_SUMMARY


def register(sub) -> None:
    p = sub.add_parser("cost", help="cost of serving a model on an accelerator ($/M tokens, tokens/s, walls)",
                       description="Roofline cost of serving MODEL on HARDWARE (or a comma list: one block of rows "
                                   "each): TPOT, TTFT, tokens/s per GPU and per user, the binding wall, $/GPU-hour "
                                   "and $/M input/output/blended tokens. With --batch auto the batch is the sweet "
                                   "spot, or the largest batch that still meets the speed floor.")
    add_cost_arguments(p)
    p.add_argument("--all-columns", action="store_true", help="every result column, not the summary")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    p.set_defaults(func=run)


def add_cost_arguments(p) -> None:
    """The flags of ``econ cost`` (also used by ``econ export cost``); see :func:`compute`."""
    add_scenario_option(p)
    p.add_argument("--model", help="model id (econ list models); required unless --scenario gives it")
    p.add_argument("--hardware", help="accelerator id, or a comma list h100-sxm,b200 (econ list hardware); required "
                                      "unless --scenario gives it")
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
                   help="concurrent sequences per replica: N, a list 1,8,64,256, or auto [auto: the sweet spot, or "
                        "the largest batch meeting --min-tokens-per-s-per-user / --ttft-ms]")
    p.add_argument("--context", type=int, help="context tokens per sequence: sizes the KV cache and decode attention (instead of input+output); "
                        "prompts are this long too unless --input-len is given")
    add_workload_options(p)
    t = p.add_argument_group("task (agentic and long-context workloads; defaults: the --workload preset's)")
    for name in TASK_FIELDS:
        add_field_option(t, name)
    add_slo_options(p)
    add_slo_percentile_option(p)
    add_decoding_options(p)
    add_long_context_options(p)
    add_memory_options(p)
    add_economics_options(p)
    p.add_argument("--ideal", action="store_true", help="pure roofline: every efficiency 1, no overheads")
    p.add_argument("--stream-embeddings", action="store_true",
                   help="count the whole input-embedding table as read each step (the seeds' convention)")
    add_data_dir(p)


TASK_FIELDS = ("calls_per_task", "prefix_reuse_frac", "reuse_interval_s")
"""Vocabulary fields of a task (econ.presets task presets); given, or a task preset, adds $/task columns."""

COST_DEFAULTS = dict(precision="bf16", batch="auto")
"""Defaults of the flags a scenario file can also set (applied when neither gives a value)."""


def apply_scenario(args, catalog):
    """Fill the flags not given on the command line from ``--scenario FILE``, then from the defaults.

    Explicit flags always win. Warnings from the file (unknown ids, out-of-range values, which fall
    back to defaults) go to stderr.

    Returns
    -------
    (Scenario or None, Catalog): the scenario and the catalog (with the scenario's custom accelerator).

    Raises
    ------
    InvalidInputError
        If the file cannot be read, or ``--model``/``--hardware`` are given by neither.
    """
    sc, catalog = load_scenario(args, catalog)
    if sc is not None:
        fill = dict(model=sc.model, hardware=sc.hardware, precision=sc.precision, gpus=sc.num_gpus,
                    batch="auto" if sc.batch_size is None else str(sc.batch_size))
        for k, v in fill.items():
            if getattr(args, k, None) is None:
                setattr(args, k, v)
        args.stream_embeddings = args.stream_embeddings or sc.stream_input_embedding
    for k, v in COST_DEFAULTS.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    for flag in ("model", "hardware"):
        if getattr(args, flag) is None:
            raise InvalidInputError(f"--{flag} is required (or give --scenario FILE)")
    return sc, catalog


def run(args) -> int:
    frame = compute(args)[0]
    if not args.all_columns:
        frame = frame.select([c for c in SUMMARY_COLUMNS + ("warnings",) if c in frame.columns])
    render(frame, args.format)
    _decoding_note(args)
    return 0


def _hardware_list(text: str) -> list[str]:
    items = [h.strip() for h in str(text).split(",") if h.strip()]
    if not items:
        raise InvalidInputError("--hardware is empty (an accelerator id, or a comma list; econ list hardware)")
    if len(items) > MAX_HARDWARE:
        raise InvalidInputError(f"--hardware lists {len(items)} accelerators; at most {MAX_HARDWARE} "
                                "(econ optimize --hardware all searches the whole catalog)")
    return list(dict.fromkeys(items))


def compute(args):
    """Check the flags of :func:`add_cost_arguments` and compute the cost table.

    With ``--batch auto`` each accelerator's row is at the sweet spot (:func:`econ.analyses.sweep.cost_table`),
    or, when the sweet spot is slower than the speed floor (or later than the TTFT limit), at the
    largest batch of its batch curve that meets them (:func:`econ.analyses.compare.auto_batch_row`); explicit
    batches are reported as asked, with ``meets_slo``.

    Returns
    -------
    (frame, catalog, assumptions, economics): the cost rows (one block per accelerator) and their inputs.
    """
    from econ.analyses.compare import auto_batch_row

    catalog = catalog_from(args)
    sc, catalog = apply_scenario(args, catalog)
    check_flag("num_gpus", args.gpus)
    for flag in ("tp", "dp", "ep", "pp"):
        check_flag(flag, getattr(args, flag))
    check_range("--context", args.context, 1, MAX_CONTEXT, "tokens")
    if args.context is not None and args.input_len is None and args.workload is None:
        args.input_len = args.context  # --context C alone: the prompt is the whole context (TTFT, $/M input)
    args.input_len, args.output_len = workload_from(args, sc)
    floor, max_ttft = slo_from(args, sc)
    batches = None if str(args.batch).strip().lower() == "auto" else parse_int_list("--batch", args.batch, *bounds("batch_size"), "sequences")
    hardware = _hardware_list(args.hardware)
    assumptions = replace(sc.assumptions() if sc is not None else DEFAULT, stream_input_embedding=args.stream_embeddings)
    assumptions = memory_from(args, assumptions)
    if args.ideal:
        assumptions = replace(assumptions, **IDEAL_OVERRIDES)
    economics = economics_from(args, catalog, sc)
    args.decoding = decoding_from(args, sc)
    pct = slo_percentile_from(args, sc)
    if pct is not None:
        assumptions = replace(assumptions, latency_percentile=pct)
    task = _task(args)
    if task is not None and getattr(args, "cache_hit_rate", None) is None:
        economics = replace(economics, cache_hit_frac=task["prefix_reuse_frac"])  # the cached prefix is not prefilled
    kw = dict(model=args.model, precision=args.precision, num_gpus=args.gpus, tp=args.tp, dp=args.dp, ep=args.ep,
              pp=args.pp, mode=args.mode, input_len=args.input_len, output_len=args.output_len,
              context_tokens=args.context, assumptions=assumptions, economics=economics, decoding=args.decoding,
              slo_percentile=pct, long_context=long_context_from(args) or None)
    frames, first_error, notes = [], None, []
    for hw in hardware:  # a handful of accelerators: one cost table each
        try:
            if batches is None:
                frame, _ = auto_batch_row(catalog, hardware=hw, min_tokens_per_s_per_user=floor, max_ttft_s=max_ttft,
                                          **kw)
                r = frame.row(0, named=True)
                if r["feasible"] and not _meets(r, floor, max_ttft):
                    notes.append(f"{hw}: no batch of {r['layout']} reaches {floor:g} tokens/s per user"
                                 + ("" if max_ttft == float("inf") else f" within a {max_ttft * 1e3:g} ms TTFT")
                                 + "; showing the sweet spot")
                    print(f"econ cost: note: {notes[-1]}", file=sys.stderr)
            else:
                frame = cost_table(catalog, hardware=hw, batch_sizes=batches, **kw)
        except EconError as exc:
            if len(hardware) == 1:
                raise
            first_error = first_error or exc
            notes.append(f"{hw} skipped: {exc}")
            print(f"econ cost: note: {hw}: {exc}", file=sys.stderr)
            continue
        frames.append(frame)
    if not frames:
        raise first_error
    frame = pl.concat(frames, how="vertical_relaxed")
    if pct is not None:  # judged at the percentile: 1 / TPOT and TTFT at it
        speed_x, ttft_x = 1.0 / pl.col("tpot_percentile_s"), pl.col("ttft_percentile_s")
    else:
        speed_x = pl.col("served_tokens_per_s_per_user" if "served_tokens_per_s_per_user" in frame.columns
                         else "tokens_per_s_per_user")
        ttft_x = pl.col("served_ttft_s" if "served_ttft_s" in frame.columns else "ttft_s")
    frame = frame.with_columns(meets_slo=(pl.col("feasible").fill_null(False) & (speed_x >= floor)
                                          & (ttft_x <= max_ttft)).fill_null(False))
    from econ.analyses.bands import with_profiles

    # the efficiency profile each row rests on (profile_note marks a fallback or wide-band one: issue 18)
    frame = with_profiles(frame, catalog)
    if task is not None:
        from econ.analyses.tasks import with_task_costs

        frame = with_task_costs(frame, catalog, assumptions=assumptions, **task)
    args.decoding_note = decoding_note(frame, args.decoding, catalog)
    return with_warnings(frame, notes), catalog, assumptions, economics


def _decoding_note(args) -> None:
    """The line naming the formats and speculative decoding used and where each default came from (stderr, tables)."""
    note = getattr(args, "decoding_note", "")
    if note and args.format == "table":
        import textwrap

        from econ.commands._common import terminal_width
        print(textwrap.fill(note, terminal_width(sys.stderr), subsequent_indent="  "), file=sys.stderr)


def _task(args) -> dict | None:
    """The task of the command line: the --workload preset's task fields, each replaced by its flag when given;
    None for a single-request workload with no task flag."""
    from econ.presets import WORKLOADS

    check_fields(args, TASK_FIELDS)
    preset = WORKLOADS.get(getattr(args, "workload", None) or "")
    given = {k: getattr(args, k, None) for k in TASK_FIELDS}
    if (preset is None or not preset.is_task) and all(v is None for v in given.values()):
        return None
    base = {k: (getattr(preset, k) if preset is not None else 0.0) for k in TASK_FIELDS}
    base["calls_per_task"] = base["calls_per_task"] or 1.0
    return {k: float(given[k]) if given[k] is not None else float(base[k]) for k in TASK_FIELDS}


def _meets(row: dict, floor: float, max_ttft: float) -> bool:
    speed = row.get("served_tokens_per_s_per_user", row.get("tokens_per_s_per_user"))
    ttft = row.get("served_ttft_s", row.get("ttft_s"))
    return bool(row["feasible"]) and speed is not None and speed >= floor and ttft is not None and ttft <= max_ttft
