"""``econ sensitivity cost|quote|site``: which assumptions move an answer most, and the Monte Carlo band.

Thin: flags in, one :mod:`econ.analyses.sensitivity` call, the tornado and the percentiles printed (or CSV / JSON).
"""

from __future__ import annotations

import json
import math
import sys

import polars as pl

from econ import formatting
from econ.commands._common import (add_data_dir, add_economics_options, add_field_option, add_slo_options,
                                   add_workload_options, catalog_from, check_fields, economics_from, render_table,
                                   slo_from, workload_from)
from econ.errors import InvalidInputError
from econ.vocabulary import CAPEX, EFFICIENCY_BAND, FIELDS, PRECISIONS, SENSITIVITY_RANGES

__all__ = ["register", "compute", "table_text", "result_json"]


def register(sub) -> None:
    p = sub.add_parser("sensitivity", help="which assumptions move an answer most: tornado and Monte Carlo band",
                       description="A tornado of the assumptions that move an answer most over their sourced ranges "
                                   "(econ.vocabulary.SENSITIVITY_RANGES) and the calibration band, and a Monte Carlo "
                                   "band combining them; every scenario through the one engine.")
    ss = p.add_subparsers(dest="sensitivity_command", required=True, metavar="ANSWER")

    c = ss.add_parser("cost", help="the $/M tokens of a deployment (econ cost's automatic answer)",
                      description="Sensitivity of econ cost's $/M tokens (automatic layout and batch at the speed "
                                  "floor) to utilization, power price, PUE, capex, life, cost of capital, speed floor, "
                                  "cache hits and the efficiency profile's calibration band.")
    c.add_argument("--model", required=True, help="model id (econ list models)")
    c.add_argument("--hardware", required=True, help="accelerator id (econ list hardware)")
    c.add_argument("--precision", choices=PRECISIONS, default=FIELDS["precision"].default,
                   help=f"weight and matmul precision [{FIELDS['precision'].default}]")
    c.add_argument("--metric", choices=("output", "input", "blended"), default="output",
                   help="which $/M tokens [output]")
    add_workload_options(c)
    add_slo_options(c, ttft=False)
    add_economics_options(c)
    _common(c)

    q = ss.add_parser("quote", help="a quote's blended gross margin against its floor (econ quotes check)",
                      description="Sensitivity of a quote's blended margin, 1 - floor / price, on the floor deployment "
                                  "econ quotes check finds for it.")
    q.add_argument("--quote", required=True, metavar="ID", help="quote_id (data/quotes.csv or --file)")
    q.add_argument("--file", metavar="QUOTES", help="quotes CSV or XLSX [data/quotes.csv]")
    q.add_argument("--min-tokens-per-s-per-user", type=float, metavar="X",
                   help="speed floor when the quote publishes none [25]")
    q.add_argument("--output-len", type=int, default=1024, help="generated tokens per request [1024]")
    add_economics_options(q)
    _common(q)

    s = ss.add_parser("site", help="the payback of a site serving a model (econ fleet size)",
                      description="Sensitivity of a site's simple payback (econ fleet size: a power or capex budget "
                                  "serving --model at --price) to utilization, power price, PUE, capex, speed "
                                  "floor, price and the calibration band.")
    s.add_argument("--hardware", required=True, help="accelerator id")
    s.add_argument("--model", required=True, help="model id served")
    b = s.add_mutually_exclusive_group(required=True)
    b.add_argument("--power-mw", type=float, help="facility power budget, MW")
    b.add_argument("--capex-usd", type=float, help="capex budget, USD")
    s.add_argument("--price", type=float, help=FIELDS["price_usd_per_m_output_tokens"].help_text())
    add_field_option(s, "demand_share_frac")
    add_workload_options(s)
    add_slo_options(s, ttft=False)
    add_economics_options(s, mix=False)
    _common(s)


def _common(p) -> None:
    g = p.add_argument_group("sensitivity")
    g.add_argument("--samples", type=int, default=None, metavar="N", help="Monte Carlo samples, 0 = tornado only [500]")
    g.add_argument("--seed", type=int, default=None, metavar="S", help="seed of the Monte Carlo generator [18]")
    g.add_argument("--range", action="append", default=None, metavar="NAME=LOW:HIGH",
                   help="replace a sourced range, e.g. utilization_frac=0.6:0.9 (repeatable; capex and price are "
                        "multipliers of the point's value)")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_data_dir(p)
    p.set_defaults(func=run)


def _ranges(items) -> dict:
    out = {}
    for text in items:
        name, _, span = str(text).partition("=")
        lo, _, hi = span.partition(":")
        try:
            out[name.strip()] = (float(lo), float(hi))
        except ValueError:
            raise InvalidInputError(f"--range {text!r} is not NAME=LOW:HIGH (e.g. utilization_frac=0.6:0.9; "
                                    f"names: {', '.join(SENSITIVITY_RANGES)})") from None
    return out


def compute(args):
    """The :class:`econ.analyses.sensitivity.Sensitivity` the flags ask for."""
    from econ.analyses import sensitivity as S

    catalog = catalog_from(args)
    economics = economics_from(args, catalog)
    kw = dict(ranges=_ranges(args.range or ()),
              samples=S.DEFAULT_SAMPLES if args.samples is None else args.samples,
              seed=S.DEFAULT_SEED if args.seed is None else args.seed)
    cmd = args.sensitivity_command
    if cmd == "quote":
        from econ.tables.quote_files import load_quotes
        return S.quote_sensitivity(catalog, load_quotes(catalog, args.file), args.quote, economics=economics,
                                   min_tokens_per_s_per_user=args.min_tokens_per_s_per_user,
                                   output_len=args.output_len, **kw)
    floor, _ = slo_from(args)
    input_len, output_len = workload_from(args)
    if cmd == "cost":
        return S.cost_sensitivity(catalog, model=args.model, hardware=args.hardware, precision=args.precision,
                                  metric=args.metric, input_len=input_len, output_len=output_len,
                                  min_tokens_per_s_per_user=floor, economics=economics, **kw)
    check_fields(args, ["demand_share_frac"])
    for flag, v in (("--power-mw", args.power_mw), ("--capex-usd", args.capex_usd)):
        if v is not None and not (math.isfinite(v) and v > 0):
            raise InvalidInputError(f"{flag}={v:g} is outside (0, inf)")
    return S.site_sensitivity(catalog, hardware=args.hardware, model=args.model,
                              power_w=None if args.power_mw is None else args.power_mw * 1e6,
                              capex_usd=args.capex_usd, price_usd_per_m_output_tokens=args.price,
                              demand_share_frac=1.0 if args.demand_share_frac is None else args.demand_share_frac,
                              min_tokens_per_s_per_user=floor, economics=economics,
                              input_len=input_len, output_len=output_len, **kw)


def _answer(result, x) -> str:
    """The answer in its unit: $0.281, 92.5%, 1.02 years (never for an infinite payback)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "unreachable"
    if result.metric == "payback_years":
        return "never" if math.isinf(x) else f"{x:,.2f} y"
    if result.metric == "margin_blended_frac":
        return f"{x:.1%}"
    return f"${x:,.4g}" if abs(x) < 1 else f"${x:,.3f}"


def _value(name: str, x) -> str:
    """An assumption's value in its unit."""
    if x is None:
        return ""
    if name == EFFICIENCY_BAND:
        return f"x{x:.2f}"
    if name.endswith("_frac"):
        return f"{x:.0%}" if abs(x * 100 - round(x * 100)) < 1e-9 else f"{x:.1%}"
    if name == CAPEX:
        return formatting.usd(x)
    if name == "usd_per_kwh":
        return f"${x:.4f}"
    if name == "price_usd_per_m_output_tokens":
        return f"${x:.2f}"
    return f"{x:g}"


def table_frame(result) -> pl.DataFrame:
    """The tornado as text cells for a terminal: rank, assumption, low, high, answer at each end, swing."""
    rows = []
    for r in result.tornado.iter_rows(named=True):
        rows.append({"rank": str(r["rank"]), "assumption": r["label"], "low": _value(r["assumption"], r["low"]),
                     "high": _value(r["assumption"], r["high"]), "at_low": _answer(result, r["answer_at_low"]),
                     "at_high": _answer(result, r["answer_at_high"]),
                     "swing": "" if r["swing"] is None else _answer(result, r["swing"])})
    return pl.DataFrame(rows, schema={k: pl.String for k in ("rank", "assumption", "low", "high", "at_low",
                                                             "at_high", "swing")})


def table_text(result, out) -> None:
    """Print the point, the tornado, the Monte Carlo percentiles and the notes."""
    import textwrap

    from econ.commands._common import terminal_width

    width = terminal_width(out)
    st = result.setup
    if result.answer == "cost":
        what = (f"{st['model']} on {st['hardware']}: {st['precision']}, {st['layout']}, batch {st['batch_size']}, "
                f"{st['min_tokens_per_s_per_user']:g} tokens/s per user, {st['basis']} tier")
        name = {"output": "$/M output tokens", "input": "$/M input tokens", "blended": "$/M blended tokens"}[st["metric"]]
    elif result.answer == "quote":
        what = (f"{st['quote_id']} at ${st['price_usd_per_m_blended_tokens']:.3g}/M blended, floor on "
                f"{st['hardware']}: {st['precision']}, {st['layout']}, batch {st['batch_size']}, {st['basis']} tier")
        name = "blended gross margin"
    else:
        what = (f"{st['budget']} of {st['hardware']} serving {st['model']}: {st['serving_gpus']:,} GPUs, "
                f"{st['layout']}")
        sold = f"{st['demand_share_frac']:.0%} of the capacity sold at ${st['price_usd_per_m_output_tokens']:.2f}/M output"
        what = textwrap.fill(what, width) + "\n" + sold
        name = "simple payback"
    out.write((what if result.answer == "site" else textwrap.fill(what, width)) + "\n")
    out.write(f"{name}: {_answer(result, result.point)}\n\n")
    render_table(table_frame(result), out, title="tornado (largest swing first)")
    if result.samples:
        mc = result.monte_carlo
        cells = ", ".join(f"p{int(p)} {_answer(result, v)}" for p, v in mc.select("percentile", "value").iter_rows())
        line = f"Monte Carlo, {result.samples:,} samples (seed {result.seed}): {cells}"
        if result.unreachable_frac > 0:
            line += f"; {result.unreachable_frac:.1%} of samples reach no batch at their speed floor"
        out.write("\n" + textwrap.fill(line, width, subsequent_indent="  ") + "\n")
    for n in result.notes:
        out.write(textwrap.fill(f"note: {n}", width, subsequent_indent="  ") + "\n")


def result_json(result) -> dict:
    """The result as a JSON-able dict (infinite or missing numbers as null)."""
    def clean(v):
        return None if isinstance(v, float) and not math.isfinite(v) else v

    return {"answer": result.answer, "metric": result.metric, "unit": result.unit, "point": clean(result.point),
            "setup": result.setup,
            "tornado": [{k: clean(v) for k, v in r.items()} for r in result.tornado.to_dicts()],
            "monte_carlo": {"samples": result.samples, "seed": result.seed,
                            "unreachable_frac": result.unreachable_frac,
                            "percentiles": [{k: clean(v) for k, v in r.items()}
                                            for r in result.monte_carlo.to_dicts()]},
            "notes": list(result.notes)}


def run(args) -> int:
    from econ.analyses.sensitivity import summary_frame

    result = compute(args)
    if args.format == "json":
        json.dump(result_json(result), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif args.format == "csv":
        sys.stdout.write(summary_frame(result).write_csv())
    else:
        table_text(result, sys.stdout)
    return 0
