"""``econ compare A B``: two (model, accelerator, precision, cost tier) set-ups head to head.

Each set-up is ``MODEL:HARDWARE[:PRECISION[:TIER]]`` (``deepseek-v3:b200:fp4:neocloud``); both are searched
over every deployment (:func:`econ.analyses.compare.head_to_head`) and read at the interactivity levels of
``--at``: all-in $/M output tokens, output tokens/s per GPU, tokens per $1 and per provisioned MW, the
ratio B/A, and where the decode step's time goes (weights, KV cache, GEMM, attention, communication,
overhead) with what binds.
"""

from __future__ import annotations

import json
import math
import sys

import polars as pl

from econ.assumptions import DEFAULT
from econ.commands._common import (add_data_dir, add_decoding_options, add_slo_percentile_option, decoding_from,
                                   slo_percentile_from, add_economics_options, add_scenario_option, add_workload_options,
                                   catalog_from, economics_from, load_scenario, progress, render, show_value,
                                   workload_from)
from econ.errors import InvalidInputError

RATIO_COLUMNS = ("at_tokens_per_s_per_user", "usd_per_m_output_tokens_all_in_a", "usd_per_m_output_tokens_all_in_b",
                 "cost_ratio_b_to_a", "cheaper", "output_tokens_per_s_per_gpu_a", "output_tokens_per_s_per_gpu_b",
                 "throughput_ratio_b_to_a")
SETUP_COLUMNS = ("setup", "at_tokens_per_s_per_user", "layout", "batch_size", "tokens_per_s_per_user",
                 "usd_per_m_output_tokens_all_in", "usd_per_m_output_tokens_all_in_low",
                 "usd_per_m_output_tokens_all_in_high", "usd_per_m_input_tokens", "usd_per_m_blended_tokens",
                 "output_tokens_per_s_per_gpu", "output_tokens_per_usd", "output_tokens_per_s_per_mw", "binding_wall")
BREAKDOWN_COLUMNS = ("setup", "at_tokens_per_s_per_user", "weights_s", "kv_cache_s", "gemm_s", "attention_s",
                     "communication_s", "overhead_s", "prefill_chunks_s", "other_s", "served_tpot_s", "binding_side",
                     "binding_wall")


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="two set-ups head to head: cost vs interactivity, ratio, step-time breakdown",
        description="Compare two set-ups MODEL:HARDWARE[:PRECISION[:TIER]] (precision fp8 and tier owned-custom "
                    "when omitted; tiers: owned-custom, hyperscaler, neocloud, rental-3yr, on-demand, rental, custom "
                    "with --usd-per-gpu-hour). Each is searched over every deployment; the table reads both Pareto "
                    "frontiers at the --at interactivity levels: all-in $/M output tokens, output tokens/s per GPU, "
                    "the ratio B/A, tokens per $1 and per provisioned MW, and where the decode step's time goes.",
        epilog="example: econ compare deepseek-v3:h200-sxm:fp8 deepseek-v3:b200:fp4 --workload reasoning")
    p.add_argument("setups", nargs="*", default=(), metavar="SETUP",
                   help="set-up A, then set-up B (or --a / --b)")
    p.add_argument("--a", metavar="SETUP", help="set-up A, e.g. deepseek-v3:h200-sxm:fp8:neocloud")
    p.add_argument("--b", metavar="SETUP", help="set-up B, e.g. deepseek-v3:b200:fp4:neocloud")
    p.add_argument("--at", metavar="LEVELS",
                   help="interactivity levels, output tokens/s per user, comma list [20,50,100]")
    add_scenario_option(p)
    add_workload_options(p)
    g = p.add_argument_group("service-level objectives")
    g.add_argument("--ttft-ms", type=float, metavar="MS", help="SLO: maximum time to first token, ms [no limit]")
    add_slo_percentile_option(p)
    add_decoding_options(p)
    add_economics_options(p)
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def _levels(text: str | None, scenario) -> list[float]:
    from econ.presets import INTERACTIVITY_LEVELS

    if text is None:
        return list(scenario.interactivity_levels if scenario is not None else INTERACTIVITY_LEVELS)
    out = []
    for part in str(text).split(","):
        part = part.strip()
        try:
            v = float(part) if len(part) <= 40 else math.nan
        except ValueError:
            raise InvalidInputError(f"--at={show_value(part)} is not a number (tokens/s per user, e.g. 20,50,100)") \
                from None
        if not (math.isfinite(v) and 0 < v <= 1e5):
            raise InvalidInputError(f"--at={show_value(v) if math.isfinite(v) else show_value(part)} is outside "
                                    "(0, 100000] (tokens/s per user)")
        out.append(v)
    if not out or len(out) > 8:
        raise InvalidInputError("--at takes 1 to 8 levels (tokens/s per user), e.g. 20,50,100")
    return out


def _setups(args, scenario):
    from econ.analyses.compare import Setup, parse_setup

    a, b = args.a, args.b
    rest = list(args.setups or [])
    if len(rest) > 2:
        raise InvalidInputError(f"econ compare takes two set-ups; got {len(rest)} ({' '.join(rest)[:80]})")
    if a is None and rest:
        a = rest.pop(0)
    if b is None and rest:
        b = rest.pop(0)
    if rest:
        raise InvalidInputError("give set-ups either as two words or with --a / --b, not both")
    tier = getattr(args, "tco", None)
    default_basis = "custom" if args.usd_per_gpu_hour is not None else (
        {"owned-custom": "owned"}.get(tier, tier) if tier else "owned")
    sides = []
    for name, text, prefix in (("A", a, "h2h_a_"), ("B", b, "h2h_b_")):
        if text is None:
            if scenario is None:
                raise InvalidInputError(f"set-up {name} is missing: econ compare MODEL:HARDWARE[:PRECISION[:TIER]] "
                                        "MODEL:HARDWARE[:PRECISION[:TIER]] (or --scenario FILE)")
            sides.append(Setup(*(getattr(scenario, prefix + k) for k in ("model", "hardware", "precision")),
                               getattr(scenario, prefix + "basis") or (default_basis if tier or args.usd_per_gpu_hour
                                                                       is not None else scenario.basis)))
        else:
            sides.append(parse_setup(text, name=f"--{name.lower()}", default_basis=default_basis))
    return sides


def run(args) -> int:
    from econ.analyses.compare import head_to_head
    from econ.presets import workload_of

    catalog = catalog_from(args)
    sc, catalog = load_scenario(args, catalog)
    a, b = _setups(args, sc)
    levels = _levels(args.at, sc)
    input_len, output_len = workload_from(args, sc)
    ttft = args.ttft_ms
    if ttft is not None and not (ttft == ttft and 1e-3 <= ttft <= 1e9):
        raise InvalidInputError(f"--ttft-ms={show_value(ttft)} is outside [0.001, 1000000000] (ms)")
    economics = economics_from(args, catalog, sc)
    from econ.analyses.optimize import SearchSpace

    space = SearchSpace(decoding=decoding_from(args, sc))
    with progress(f"Searching {a.spec} and {b.spec}"):
        h = head_to_head(catalog, a, b, levels=levels, input_len=input_len, output_len=output_len,
                         max_ttft_s=math.inf if ttft is None else ttft / 1e3, space=space,
                         slo_percentile=slo_percentile_from(args, sc),
                         assumptions=sc.assumptions() if sc is not None else DEFAULT, economics=economics)
    setups = h.at_levels.select([c for c in SETUP_COLUMNS if c in h.at_levels.columns])
    ratio = h.ratio.select([c for c in RATIO_COLUMNS if c in h.ratio.columns])
    breakdown = h.binding.select([c for c in BREAKDOWN_COLUMNS if c in h.binding.columns]) if h.binding.height \
        else pl.DataFrame()
    out = sys.stdout
    if args.format == "json":
        def rows(f):
            return [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                    for r in f.to_dicts()]
        doc = {"a": a.spec, "b": b.spec, "input_len": input_len, "output_len": output_len,
               "workload": workload_of(input_len, output_len), "levels_tokens_per_s_per_user": levels,
               "ratio": rows(ratio), "setups": rows(setups), "breakdown": rows(breakdown)}
        json.dump(doc, out, indent=2, default=str)
        out.write("\n")
        return 0
    if args.format == "csv":
        out.write(setups.write_csv())
        return 0
    out.write(f"A: {_describe(a)}\nB: {_describe(b)}\n{input_len:,} in / {output_len:,} out tokens "
              f"({workload_of(input_len, output_len)}); costs all-in (every GPU a request uses, prefill included)\n\n")
    render(ratio, "table", vertical_if_single=False)
    missing = [lv for lv, reached in zip(ratio["at_tokens_per_s_per_user"], ratio["cost_ratio_b_to_a"])
               if reached is None]
    if missing:
        out.write(f"(– : a set-up has no deployment as fast as {', '.join(f'{m:g}' for m in missing)} tokens/s "
                  f"per user)\n")
    out.write("cheaper: the set-up whose calibration band lies below the other's; 'not distinguishable' where the "
              "bands overlap\n")
    notes = [f"{n}: {_profile_note(catalog, s)}" for n, s in (("A", a), ("B", b)) if _profile_note(catalog, s)]
    if notes:
        out.write("profiles: " + "; ".join(notes) + "\n")
    out.write("\nEach set-up at each level:\n")
    render(setups, "table", vertical_if_single=False)
    if breakdown.height:
        out.write("\nWhere a decode step's time goes (per output token, as served):\n")
        render(breakdown, "table", vertical_if_single=False)
    return 0


def _profile_note(catalog, s) -> str:
    """The set-up's efficiency profile when it is a fallback or wide-band one (econ.analyses.bands), else ""."""
    from econ.analyses.bands import profile_table

    t = profile_table(catalog).filter((pl.col("hardware") == s.hardware) & (pl.col("precision") == s.precision))
    return t["profile_note"][0] if t.height else ""


def _describe(s) -> str:
    tier = "owned-custom" if s.basis == "owned" else s.basis
    return f"{s.model} on {s.hardware}, {s.precision}, {tier} $/GPU-hour"
