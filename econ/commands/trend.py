"""``econ trend MODEL``: all-in $/M output tokens by accelerator generation, announced parts shown apart.

Each generation's answer is the cheapest deployment at the speed floor (:func:`econ.analyses.trend.trend`, the
search every ranking runs); announced parts (``data/roadmap_accelerators.csv``) are projections: datasheet
physics at their predecessor's $/GPU-hour, uncalibrated, listed under their own heading.
"""

from __future__ import annotations

import json
import math
import sys

import polars as pl

from econ.commands._common import (add_data_dir, add_economics_options, add_field_option, add_scenario_option,
                                   add_slo_options,
                                   add_workload_options, catalog_from, economics_from, load_scenario, progress,
                                   render, slo_from, workload_from)

SHOWN = ("hardware", "year", "availability", "usd_per_m_output_tokens_all_in", "cost_vs_first",
         "output_tokens_per_s_per_gpu", "tokens_per_s_per_user", "precision", "layout")


def register(sub) -> None:
    from econ.analyses.trend import LINEUPS

    p = sub.add_parser(
        "trend", help="$/M tokens by accelerator generation for one model and speed (announced parts apart)",
        description="All-in $/M output tokens of MODEL on each generation of a vendor's lineup, at the speed floor: "
                    "the cheapest deployment the search finds per accelerator. Announced parts (data/"
                    "roadmap_accelerators.csv: status, as_of, vendor source) are PROJECTIONS: vendor datasheet "
                    "physics, the cost of the priced predecessor named in cost_from (no vendor price exists), "
                    "uncalibrated efficiencies; they are listed apart and never enter other rankings.",
        epilog="example: econ trend llama-3.3-70b --vendor amd --min-tokens-per-s-per-user 50")
    p.add_argument("model", help="model id (econ list models)")
    p.add_argument("--vendor", choices=tuple(LINEUPS), help="generation lineup [nvidia]")
    p.add_argument("--hardware", help="comma list of catalog and roadmap ids, oldest first (replaces --vendor)")
    add_scenario_option(p)
    add_workload_options(p)
    add_slo_options(p)
    add_economics_options(p, mix=False)  # its answer is $/M output tokens: no input:output blend, but a cache hit
    add_field_option(next(g for g in p._action_groups if g.title == "economics"), "cache_hit_frac",
                     dest="cache_hit_rate")  # makes the prefill in that cost cheaper
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from econ.analyses.trend import trend
    from econ.assumptions import DEFAULT

    catalog = catalog_from(args)
    sc, catalog = load_scenario(args, catalog)
    input_len, output_len = workload_from(args, sc)
    speed, ttft = slo_from(args, sc)
    economics = economics_from(args, catalog, sc)
    hardware = [h.strip() for h in args.hardware.split(",") if h.strip()] if args.hardware else None
    with progress(f"Searching {args.model} on each generation"):
        t = trend(catalog, model=args.model, vendor=args.vendor, hardware=hardware,
                  min_tokens_per_s_per_user=speed, max_ttft_s=ttft, input_len=input_len, output_len=output_len,
                  assumptions=sc.assumptions() if sc is not None else DEFAULT, economics=economics)
    table = t.table
    out = sys.stdout
    if args.format == "json":
        rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                for r in table.to_dicts()]
        json.dump({"model": t.model, "min_tokens_per_s_per_user": t.min_tokens_per_s_per_user,
                   "input_len": t.input_len, "output_len": t.output_len, "rows": rows}, out, indent=2, default=str)
        out.write("\n")
        return 0
    if args.format == "csv":
        out.write(table.write_csv())
        return 0
    out.write(f"{t.model}, {t.input_len:,} in / {t.output_len:,} out tokens, at >= {t.min_tokens_per_s_per_user:g} "
              "output tokens/s per user; all-in $/M output tokens of the cheapest deployment per accelerator\n\n")
    shipped = table.filter(pl.col("basis") == "catalog")
    projected = table.filter(pl.col("basis") == "projection")
    if shipped.height:
        out.write("Priced catalog parts (calibrated where a profile exists):\n")
        render(shipped.select(SHOWN), "table", vertical_if_single=False)
        for r in shipped.filter(pl.col("remark") != "").iter_rows(named=True):
            out.write(f"- {r['hardware']}: {r['remark']}\n")
    if projected.height:
        out.write("\nPROJECTIONS - announced / not yet priced parts (vendor datasheets; NOT measurements):\n")
        render(projected.select(SHOWN), "table", vertical_if_single=False)
        out.write("\nWhat each projection rests on:\n")
        for r in projected.iter_rows(named=True):
            out.write(f"- {r['hardware']} ({r['availability']}, as of {r['as_of']}): cost from {r['cost_from']}; "
                      f"{r['efficiency']}. {r['remark']}\n")
    out.write("cost_vs_first: $/M relative to the first generation with an answer\n")
    return 0
