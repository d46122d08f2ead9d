"""``econ optimize`` and ``econ frontier``: the cheapest deployment meeting SLOs, and the Pareto frontier.

Both search every deployment of :mod:`econ.analyses.optimize` (TP/EP/PP/DP, attention-DP, precision, batch,
aggregated vs disaggregated) for one model on one accelerator, a list, or ``all``.
"""

from __future__ import annotations

import json
import math
import textwrap
import sys
from dataclasses import replace

import polars as pl

from econ.assumptions import DEFAULT, DEFAULT_DEPLOYMENT, IDEAL_OVERRIDES, NEUTRAL_DEPLOYMENT
from econ.commands._common import (add_data_dir, add_decoding_options, add_economics_options,
                                   add_long_context_options, add_memory_options, add_scenario_option,
                                   add_slo_options, add_slo_percentile_option, add_workload_options, catalog_from,
                                   check_flag, check_range, decoding_from, economics_from, load_scenario,
                                   long_context_from, memory_from, parse_int_list, progress, render, slo_from,
                                   slo_percentile_from, terminal_width, workload_from)
from econ.errors import InvalidInputError
from econ.analyses.optimize import SLO, OptimizeResult, SearchSpace, frontier, optimize, rejected_summary
from econ.physics.precision import PRECISIONS

TABLE_COLUMNS = ("hardware", "scale_up_domain_size", "layout", "precision", "batch_size", "total_gpus",
                 "tokens_per_s_per_user", "output_tokens_per_s_per_gpu", "ttft_s", "usd_per_m_output_tokens_all_in",
                 "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high", "binding_wall",
                 "profile_note")
JSON_POINT_COLUMNS = ("hardware", "scale_up_domain_size", "layout", "num_gpus", "tp", "ep", "pp", "dp", "batch_size",
                      "precision", "disaggregated", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
                      "usd_per_m_output_tokens", "binding_wall", "usd_per_m_output_tokens_all_in",
                      "usd_per_m_input_tokens", "usd_per_m_blended_tokens", "ttft_s", "tpot_s", "total_gpus",
                      "prefill_num_gpus", "prefill_tp", "prefill_ep", "prefill_pp", "prefill_dp", "prefill_instances",
                      "decode_instances", "max_batch_size", "hbm_used_frac", "meets_slo", "slo_miss",
                      "usd_per_m_output_tokens_all_in_low", "usd_per_m_output_tokens_all_in_high", "profile",
                      "calibrated", "profile_note", "distinguishable", "rank_note")
CONVENTIONS = ("tokens_per_s_per_user, output_tokens_per_s_per_gpu, ttft_s and tpot_s are as served: aggregated "
               "serving includes the prefill chunks interleaved with decode; per-GPU rates divide by every GPU of "
               "the unit (prefill and decode pools); num_gpus/tp/ep/pp/dp describe one (decode) instance; "
               "usd_per_m_output_tokens charges output tokens for the decode GPUs (or GPU-time), "
               "usd_per_m_output_tokens_all_in for every GPU the request used (the optimizer's objective)")


def _add_common(p, *, hardware_default) -> None:
    add_scenario_option(p)
    p.add_argument("--model", help="model id (econ list models); required unless --scenario gives it")
    p.add_argument("--hardware", default=None,
                   help=f"accelerator id, a comma list, or 'all' (econ list hardware) [{hardware_default}]")
    add_workload_options(p)
    add_slo_options(p)
    add_slo_percentile_option(p)
    add_decoding_options(p)
    add_long_context_options(p)
    add_memory_options(p)
    p.add_argument("--precision", help=f"comma list of weight precisions to try, of {list(PRECISIONS)} "
                                       "(default: all the hardware supports)")
    p.add_argument("--mode", default="both", choices=("both", "aggregated", "disaggregated"),
                   help="aggregated (prefill and decode on the same GPUs), disaggregated (xPyD pools), or both")
    p.add_argument("--max-gpus", type=int, default=256, help="largest (decode) instance, tp x dp x pp [256]")
    p.add_argument("--max-prefill-gpus", type=int, default=32, help="largest prefill instance [32]")
    for flag, what in (("--gpus", "GPUs per (decode) instance"), ("--tp", "tensor parallelism"),
                       ("--dp", "attention data parallelism"), ("--ep", "expert parallelism"),
                       ("--pp", "pipeline stages")):
        p.add_argument(flag, type=int, help=f"pin {what} (default: search)")
    p.add_argument("--scale-up-domain", help="evaluate with these scale-up domain sizes instead of the catalog's, "
                                             "e.g. 8,72 (the same chip on HGX vs NVL72)")
    p.add_argument("--arrival-rate", type=float, help="size pools and replicas for this request rate, requests/s")
    add_economics_options(p)
    p.add_argument("--expert-imbalance", type=float, help="busiest / mean expert-parallel rank load, >= 1 [1.2]")
    p.add_argument("--ideal", action="store_true",
                   help="pure roofline: every efficiency 1, no overheads, no parallel-layout latencies")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)


def register(sub) -> None:
    p = sub.add_parser("optimize", help="cheapest deployment (TP/EP/PP/DP, batch, precision, xPyD) meeting SLOs",
                       description="Search every deployment of MODEL on HARDWARE and print the cheapest one that "
                                   "meets the SLOs, the best alternatives and why the rest were rejected.")
    _add_common(p, hardware_default="all")
    p.add_argument("--top", type=int, default=10, help="alternatives to show (best of each family) [10]")
    p.add_argument("--all-rejected", action="store_true", help="list every rejected family, not the summary")
    p.set_defaults(func=run_optimize)
    f = sub.add_parser("frontier", help="Pareto frontier of GPU throughput ($/M tokens) vs tokens/s per user",
                       description="Per accelerator (and scale-up domain size), the deployments no other beats on "
                                   "both tokens/s per user and $/M output tokens, with the deployment at each point.")
    _add_common(f, hardware_default="all")
    f.set_defaults(func=run_frontier)


def _inputs(args):
    """Check the flags; return (catalog, kwargs of econ.analyses.optimize.search with ``hardware`` a list or None)."""
    catalog = catalog_from(args)
    sc, catalog = load_scenario(args, catalog)
    if args.model is None:
        if sc is None:
            raise InvalidInputError("--model is required (or give --scenario FILE)")
        args.model = sc.model
    input_len, output_len = workload_from(args, sc)
    floor, max_ttft = slo_from(args, sc)
    check_range("--max-gpus", args.max_gpus, 1, 1 << 16, "accelerators")
    check_range("--max-prefill-gpus", args.max_prefill_gpus, 1, 1 << 16, "accelerators")
    check_flag("num_gpus", args.gpus)
    for flag in ("tp", "dp", "ep", "pp"):
        check_flag(flag, getattr(args, flag))
    check_range("--arrival-rate", args.arrival_rate, 1e-9, 1e9, "requests/s")
    check_flag("expert_imbalance_factor", args.expert_imbalance)
    precisions = None
    if args.precision:
        precisions = tuple(x.strip() for x in args.precision.split(",") if x.strip())
        for x in precisions:
            if x not in PRECISIONS:
                raise InvalidInputError(f"--precision={x!r} is not one of {list(PRECISIONS)}")
    domains = tuple(parse_int_list("--scale-up-domain", args.scale_up_domain, 1, 1 << 20)) if args.scale_up_domain \
        else None
    if args.gpus is not None and args.gpus > args.max_gpus:
        raise InvalidInputError(f"--gpus={args.gpus} is outside [1, {args.max_gpus}] (raise --max-gpus)")
    hw = (args.hardware or "all").strip()
    hardware = None if hw == "all" else [h.strip() for h in hw.split(",") if h.strip()]
    base = memory_from(args, sc.assumptions() if sc is not None else DEFAULT)
    assumptions, deployment = base, DEFAULT_DEPLOYMENT
    if args.ideal:
        assumptions, deployment = replace(base, **IDEAL_OVERRIDES), NEUTRAL_DEPLOYMENT
    if args.expert_imbalance is not None:
        deployment = replace(deployment, expert_imbalance_factor=args.expert_imbalance)
    economics = economics_from(args, catalog, sc)
    modes = ("aggregated", "disaggregated") if args.mode == "both" else (args.mode,)
    space = SearchSpace(max_gpus=args.max_gpus, max_prefill_gpus=args.max_prefill_gpus, precisions=precisions,
                        modes=modes, num_gpus=args.gpus, tp=args.tp, dp=args.dp, ep=args.ep, pp=args.pp,
                        scale_up_domain_sizes=domains, arrival_rate_per_s=args.arrival_rate,
                        decoding=decoding_from(args, sc), **long_context_from(args))
    slo = SLO(min_tokens_per_s_per_user=floor, max_ttft_s=max_ttft, percentile=slo_percentile_from(args, sc))
    kwargs = dict(model=args.model, hardware=hardware, input_len=input_len, output_len=output_len,
                  slo=slo, space=space, assumptions=assumptions, economics=economics, deployment=deployment)
    return catalog, kwargs


def _each_accelerator(catalog, kwargs, fn, what: str) -> list:
    """``fn(hardware=[h])`` for every accelerator asked, with a progress bar on stderr when it takes over a second."""
    from econ.tables.catalog import check_ids

    ids = catalog.accelerators["id"].to_list()
    hws = kwargs["hardware"] or ids
    check_ids("hardware", hws, ids)
    check_ids("model", [kwargs["model"]], catalog.models["id"].to_list())
    out = []
    with progress(f"{what} {kwargs['model']}", total=len(hws)) as advance:
        for h in hws:  # one accelerator at a time, so the bar moves (each search is vectorized inside)
            out.append(fn(**{**kwargs, "hardware": [h]}))
            advance()
    return out


def _merge_optimize(results: list[OptimizeResult], top: int) -> OptimizeResult:
    """One :class:`OptimizeResult` from per-accelerator ones (families never span accelerators)."""
    ok = [r.top for r in results if r.top.height]
    ranked = (pl.concat(ok, how="vertical_relaxed").sort(["usd_per_m_output_tokens_all_in", "tokens_per_s_per_user"],
                                                         descending=[False, True]).head(top)) if ok \
        else results[0].top
    fronts = [r.frontier for r in results if r.frontier.height]
    front = pl.concat(fronts, how="vertical_relaxed") if fronts else results[0].frontier
    rejected = pl.concat([r.rejected for r in results], how="vertical_relaxed")
    if ranked.height:
        return OptimizeResult(best=ranked.row(0, named=True), top=ranked, frontier=front, rejected=rejected,
                              reason="", slo=results[0].slo)
    reasons = [r.reason for r in results if r.reason.startswith("nothing meets")] or [r.reason for r in results]
    return OptimizeResult(best=None, top=ranked, frontier=front, rejected=rejected, reason=reasons[0],
                          slo=results[0].slo)


def _rows(frame: pl.DataFrame, cols) -> list[dict]:
    keep = [c for c in cols if c in frame.columns]
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
            for r in frame.select(keep).to_dicts()]


def _header(kwargs) -> dict:
    slo = kwargs["slo"]
    from econ.presets import workload_of
    return {"model": kwargs["model"], "hardware": kwargs["hardware"] or "all", "input_len": kwargs["input_len"],
            "output_len": kwargs["output_len"], "workload": workload_of(kwargs["input_len"], kwargs["output_len"]),
            "slo": {"min_tokens_per_s_per_user": slo.min_tokens_per_s_per_user,
                    "max_ttft_s": None if math.isinf(slo.max_ttft_s) else slo.max_ttft_s,
                    **({} if slo.percentile is None else {"percentile": slo.percentile})},
            "decoding": kwargs["space"].decoding.columns(),
            **({"long_context": lc} if (lc := _long_context(kwargs["space"])) else {}),
            "conventions": CONVENTIONS}


def _long_context(space: SearchSpace) -> dict:
    """The long-context settings a search ran with (issue 22), only those other than the default."""
    out = {k: getattr(space, k) for k in ("cp", "prefix_cache_tier", "context_limit_tokens")
           if getattr(space, k) is not None}
    return out | ({"kv_offload": space.kv_offload} if space.kv_offload != "none" else {})


def _slo_text(slo: SLO) -> str:
    """'>= 25 tokens/s per user, TTFT <= 500 ms' for the headline."""
    text = f">= {slo.min_tokens_per_s_per_user:g} tokens/s per user"
    text += "" if math.isinf(slo.max_ttft_s) else f", TTFT <= {slo.max_ttft_s * 1e3:g} ms"
    return text + ("" if slo.percentile is None else f", at p{slo.percentile:g}")


def run_optimize(args) -> int:
    catalog, kwargs = _inputs(args)
    check_range("--top", args.top, 1, 10_000)
    res = _merge_optimize(_each_accelerator(catalog, kwargs, lambda **kw: optimize(catalog, top=args.top, **kw),
                                            "Searching deployments of"), args.top)
    summary = rejected_summary(res.rejected)
    if res.top.height:  # the ranking with its bands: profile marks, and whether the cheapest is told apart
        from econ.analyses.compare import with_bands
        top = res.top.with_columns(pl.format("{} {} {}", "hardware", "precision", "layout").alias("_name"))
        top = with_bands(top, catalog, cost="usd_per_m_output_tokens_all_in", name="_name").drop("_name")
        res = OptimizeResult(best=top.row(0, named=True), top=top, frontier=res.frontier, rejected=res.rejected,
                             reason=res.reason, slo=res.slo)
    out = sys.stdout
    if args.format == "json":
        doc = {**_header(kwargs), "best": _rows(res.top.head(1), JSON_POINT_COLUMNS)[0] if res.best else None,
               "reason": res.reason, "top": _rows(res.top, JSON_POINT_COLUMNS),
               "frontier": _rows(res.frontier, JSON_POINT_COLUMNS),
               "rejected": _rows(res.rejected if args.all_rejected else summary, list(
                   (res.rejected if args.all_rejected else summary).columns))}
        json.dump(doc, out, indent=2, default=str)
        out.write("\n")
        return 0
    if args.format == "csv":
        out.write(res.top.write_csv())
        return 0
    if res.best is None:
        out.write(f"No deployment of {kwargs['model']} meets the SLOs. {res.reason}\n")
    else:
        b = res.best
        out.write(f"Cheapest deployment of {kwargs['model']} ({kwargs['input_len']:,} in / {kwargs['output_len']:,} out "
                  f"tokens) meeting the SLOs ({_slo_text(kwargs['slo'])}):\n  {b['hardware']} (scale-up domain {b['scale_up_domain_size']}), "
                  f"{b['precision']}, {b['layout']}, batch {b['batch_size']:,} per instance, {b['total_gpus']:,} GPUs "
                  f"in the unit\n  {b['tokens_per_s_per_user']:,.1f} tokens/s per user, "
                  f"{b['output_tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU, TTFT {b['ttft_s']:.3f} s, "
                  f"${b['usd_per_m_output_tokens_all_in']:.4f} per M output tokens all-in "
                  f"(input ${b['usd_per_m_input_tokens']:.4f}/M, output ${b['usd_per_m_output_tokens']:.4f}/M); "
                  f"binding wall: {b['binding_wall']}\n")
        out.write(textwrap.fill(_band_text(b), width=min(120, terminal_width(out)), initial_indent="  ",
                                subsequent_indent="  ") + "\n")
        from econ.analyses.sweep import decoding_note, decoding_used
        dec = kwargs["space"].decoding
        note = decoding_note(decoding_used(catalog, model=b["model"], hardware=b["hardware"], precision=b["precision"],
                                           decoding=dec), dec, catalog)
        out.write(textwrap.fill(note, width=min(120, terminal_width(out)), initial_indent="  ",
                                subsequent_indent="  ") + "\n\nBest of each family:\n")
        render(res.top.select(TABLE_COLUMNS), "table", vertical_if_single=False)
    out.write("\nRejected families (" + ("all" if args.all_rejected else "summary") + "):\n")
    rej = res.rejected if args.all_rejected else summary
    if rej.height:
        render(rej, "table", vertical_if_single=False)
    else:
        out.write("  none\n")
    return 0


def _band_text(b: dict) -> str:
    """The cheapest deployment's calibration band, its profile and whether the ranking can tell it apart."""
    lo, hi = b.get("usd_per_m_output_tokens_all_in_low"), b.get("usd_per_m_output_tokens_all_in_high")
    band = (f"calibration band ${lo:.4f} to ${hi:.4f} per M output tokens" if lo is not None and hi is not None
            else "no calibration band (assumed efficiencies)")
    note = b.get("profile_note") or ""
    prof = f" ({b['profile']}, {note})" if note else (f" ({b['profile']})" if b.get("profile") else "")
    return f"{band}{prof}; {b.get('rank_note') or 'cheapest'}"


def run_frontier(args) -> int:
    catalog, kwargs = _inputs(args)
    parts = _each_accelerator(catalog, kwargs, lambda **kw: frontier(catalog, **kw), "Frontier of")
    front = pl.concat([f for f, _ in parts], how="vertical_relaxed")
    rejected = pl.concat([r for _, r in parts], how="vertical_relaxed")
    summary = rejected_summary(rejected)
    out = sys.stdout
    if args.format == "json":
        doc = {**_header(kwargs), "points": _rows(front, JSON_POINT_COLUMNS),
               "rejected": _rows(summary, list(summary.columns))}
        json.dump(doc, out, indent=2, default=str)
        out.write("\n")
        return 0
    if args.format == "csv":
        out.write(front.write_csv())
        return 0
    if front.height == 0:
        out.write(f"Empty frontier for {kwargs['model']}: no deployment can serve.\n")
    else:
        render(front.select([c for c in TABLE_COLUMNS if c in front.columns]), "table", vertical_if_single=False)
    if summary.height:
        out.write("\nRejected families (summary):\n")
        render(summary, "table", vertical_if_single=False)
    return 0
