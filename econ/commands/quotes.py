"""``econ quotes check | pnl | import``: provider price quotes vs the modeled cost floor, a provider's P&L, and
fresh prices from LiteLLM's community price table.

- ``check``: every quote of a file (default: the shipped ``data/quotes.csv``), or one typed quote
  (``--model M --input-price P --output-price Q [--cached-input-price C] [--speed S] [--hardware H]``), against
  the cheapest deployment at the quote's own speed, weight format and hardware, in a cost tier (``--tco``,
  ``--usd-per-gpu-hour``); verdict, margins, band and reason per quote.
- ``pnl``: a provider's daily P&L from its fleet and traffic (``--disclosure deepseek-v3r1-day6`` fills every
  figure from ``data/provider_disclosures.csv``; flags override), beside econ's modeled floor for that traffic.
- ``import``: ``--litellm FILE`` -> a quotes CSV (``-o OUT``, atomic, never over a file without ``--force``).
"""

from __future__ import annotations

import io
import sys
import textwrap
from dataclasses import replace

import polars as pl

from econ.commands._common import (check_flag, add_data_dir, add_decoding_options, add_economics_options,
                                   add_slo_percentile_option, slo_percentile_from,
                                   add_scenario_option, catalog_from, check_range, decoding_from, economics_from,
                                   load_scenario, render, show_value, terminal_width)
from econ.errors import InvalidInputError
from econ.safe_write import check_target, write_bytes
from econ.vocabulary import MAX_CONTEXT

TABLE_COLUMNS = (
    "quote_id", "model", "verdict", "price_usd_per_m_blended_tokens", "floor_usd_per_m_blended_tokens",
    "floor_usd_per_m_blended_tokens_low", "floor_usd_per_m_blended_tokens_high", "margin_text", "floor_hardware",
    "floor_precision", "speed_floor_tokens_per_s_per_user", "floor_usd_per_gpu_hour",
)
"""Columns of the terminal table (the full set goes to csv/json/xlsx); each row's reason follows the table."""

SINGLE_COLUMNS = (
    "model", "hardware", "weight_format", "verdict", "price_usd_per_m_blended_tokens",
    "floor_usd_per_m_blended_tokens", "margin_text", "floor_usd_per_m_blended_tokens_low",
    "floor_usd_per_m_blended_tokens_high", "floor_assumes", "cost_basis", "floor_usd_per_gpu_hour", "utilization_frac",
    "floor_scope", "floor_hardware", "floor_layout", "floor_num_gpus", "floor_precision", "floor_batch_size",
    "floor_tokens_per_s_per_user", "speed_floor_tokens_per_s_per_user", "breakeven_usd_per_gpu_hour",
    "breakeven_utilization_frac", "breakeven_batch_size", "cheapest_clearing_hardware",
)
"""Fields printed for one typed quote (``name  value`` lines), before its reason."""

SINGLE_FLAGS = ("input_price", "output_price", "cached_input_price", "speed")
"""Flags that make ``econ quotes check`` check one typed quote instead of a file (``--weight-format``, a decoding
flag, is the typed quote's format, or replaces every quote's format of a file)."""


def register(sub) -> None:
    p = sub.add_parser("quotes", help="check provider price quotes against the modeled cost floor; provider P&L; "
                                      "import LiteLLM prices",
                       description="Provider quotes (USD per million tokens) against the cheapest deployment that "
                                   "serves the model at the quote's speed; a provider's P&L; LiteLLM price import.")
    qsub = p.add_subparsers(dest="quotes_command", required=True, metavar="ACTION")
    _register_check(qsub)
    _register_pnl(qsub)
    _register_import(qsub)
    _register_cached(qsub)


def _add_output(c, formats=("table", "csv", "json", "xlsx")) -> None:
    c.add_argument("--format", default="table", choices=formats)
    c.add_argument("--output", "-o", metavar="FILE",
                   help="write to FILE instead of standard output" + (" (required for xlsx)" if "xlsx" in formats
                                                                       else "")
                   + "; atomic, never over an existing file without --force")
    c.add_argument("--force", action="store_true", help="replace FILE if it exists (atomically)")


def _register_check(qsub) -> None:
    from econ.vocabulary import TCO_CHOICES

    c = qsub.add_parser(
        "check", help="verdict (below-floor, undetermined, thin, plausible, rich, not-gpu-comparable), margins, "
                      "band and break-evens per quote",
        description="For each quote: the modeled cost floor at the quote's own service level (its published speed, "
                    "else --min-tokens-per-s-per-user; its weight format; its own accelerator when it names one, "
                    "else the cheapest of --generation), the implied gross margin on input, output and blended "
                    "price, a verdict with its reason, and the $/GPU-hour, utilization, batch and accelerator "
                    "generations at which the quote breaks even. A price inside the floor's calibration band is "
                    "undetermined; a speed no catalog GPU reaches even at the fast end of its band with speculative "
                    "decoding is not-gpu-comparable. One typed quote: --model M --input-price P "
                    "--output-price Q [--cached-input-price C] [--speed S] [--hardware H] (also prints its verdict "
                    "with the floor on each generation at 20, 50, 100 tokens/s and its own speed). Cost tiers: --tco "
                    f"{'|'.join(TCO_CHOICES)} or --usd-per-gpu-hour X; every $/GPU-hour shown is per utilized GPU-hour.")
    c.add_argument("--file", metavar="QUOTES", help="quotes CSV or XLSX (columns: data/README.md, quotes.csv; "
                                                    "default: the shipped data/quotes.csv)")
    one = c.add_argument_group("one typed quote (instead of a file)")
    one.add_argument("--input-price", type=float, metavar="USD", help="USD per million uncached input tokens")
    one.add_argument("--output-price", type=float, metavar="USD", help="USD per million output tokens")
    one.add_argument("--cached-input-price", type=float, metavar="USD",
                     help="USD per million cache-hit input tokens [the input price]")
    one.add_argument("--speed", type=float, metavar="X",
                     help="the quote's output speed, tokens/s per user [--min-tokens-per-s-per-user]")
    c.add_argument("--min-tokens-per-s-per-user", type=float, default=None, metavar="X",
                   help="speed floor for quotes that publish no speed, tokens/s per user [25: MLPerf v5.0 interactive]")
    c.add_argument("--output-len", type=int, default=1024, help="generated tokens per request [1024]; the prompt is "
                                                                "mix x output (3:1 -> 3072)")
    c.add_argument("--hardware", help="with a file: restrict the floor search to these accelerator ids "
                                      "(comma-separated); with one typed quote: the quote's own hardware (an "
                                      "accelerator id, or groq-lpu, cerebras-wse-3, sambanova-sn40l)")
    c.add_argument("--generation", metavar="GEN",
                   help="floors of quotes without their own hardware come from these accelerator generations "
                        "(comma-separated: accelerators.csv generation, e.g. hopper, blackwell, ampere, ada, cdna3, "
                        "cdna4, tpu, gaudi, trainium) [every generation]")
    c.add_argument("--model", help="with a file: check only quotes of these model ids (comma-separated); with one "
                                   "typed quote: its model id")
    c.add_argument("--provider", help="with a file: check only quotes of these providers (comma-separated); with one "
                                      "typed quote: its provider's name [quote]")
    add_decoding_options(c)  # --weight-format: the typed quote's format, or every quote's of a file
    add_slo_percentile_option(c)  # the quote's speed held at this TPOT percentile [default: its median]
    add_economics_options(c)
    add_scenario_option(c)
    _add_output(c)
    add_data_dir(c)
    c.set_defaults(func=run_check)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    return items or None


def _single(args) -> bool:
    return any(getattr(args, k, None) is not None for k in SINGLE_FLAGS)


def compute(args):
    """Check the flags, load the quotes (or build the typed one) and run :func:`econ.analyses.quotes.check_quotes`.

    Returns
    -------
    (QuoteCheck, catalog, economics)
    """
    from econ.analyses.quotes import check_quotes, single_quote
    from econ.assumptions import DEFAULT
    from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER
    from econ.tables.quote_files import load_quotes

    speed = args.min_tokens_per_s_per_user
    check_flag("min_tokens_per_s_per_user", speed)
    check_range("--output-len", args.output_len, 1, MAX_CONTEXT, "tokens")
    if args.format == "xlsx" and not args.output:
        raise InvalidInputError("--format xlsx needs --output FILE.xlsx (a workbook is not printable)")
    single = _single(args)
    if single:
        missing = [f for f, v in (("--model", args.model), ("--input-price", args.input_price),
                                  ("--output-price", args.output_price)) if v is None]
        if missing:
            raise InvalidInputError(f"one typed quote needs {', '.join(missing)} (given: the flags of a single quote; "
                                    f"or drop them to check a quotes file)")
        if args.file:
            raise InvalidInputError("--file checks a quotes file; --input-price/--output-price check one typed quote: "
                                    "give one or the other")
        for flag, v in (("--model", args.model), ("--hardware", args.hardware), ("--provider", args.provider)):
            if v is not None and "," in str(v):
                raise InvalidInputError(f"{flag}={v!r}: one typed quote takes one value (no comma-separated list)")
    if args.output:
        check_target(args.output, args.force, force_hint="--force")  # before the work, not after it
    catalog = catalog_from(args)
    scenario, catalog = load_scenario(args, catalog)
    economics = economics_from(args, catalog, scenario)
    decoding = args.decoding = decoding_from(args, scenario)
    pct = slo_percentile_from(args, scenario)  # None: each quote at its published (median) speed
    generation = _split(args.generation)
    default_speed = speed if speed is not None else DEFAULT_MIN_TOKENS_PER_S_PER_USER
    kw = dict(economics=economics, output_len=args.output_len, min_tokens_per_s_per_user=default_speed,
              generation=generation, slo_percentile=pct)
    if scenario is not None:
        kw["assumptions"] = scenario.assumptions()
    if single:
        quote = single_quote(catalog, model=args.model, usd_per_m_input_tokens=args.input_price,
                             usd_per_m_output_tokens=args.output_price,
                             usd_per_m_cached_input_tokens=args.cached_input_price,
                             output_tokens_per_s_per_user=args.speed, hardware=args.hardware,
                             weight_format=decoding.weight_format, provider=args.provider or "quote",
                             quote_id=f"{args.provider or 'quote'}-{args.model}")
        kw["decoding"] = replace(decoding, weight_format=None)  # the typed quote's own format (provider-stated)
        result = check_quotes(quote, catalog, **kw)
        if args.format == "table":  # how robust the verdict is: the floor on each generation, at several speeds
            from econ.analyses.quotes import alternatives_table, verdict_alternatives
            alt = verdict_alternatives(quote, catalog, kw.get("assumptions", DEFAULT), economics,
                                       min_tokens_per_s_per_user=default_speed, output_len=args.output_len,
                                       decoding=kw["decoding"], slo_percentile=pct)
            args.alternatives = alternatives_table(alt)
        return result, catalog, economics
    quotes = load_quotes(catalog, args.file)
    models, providers = _split(args.model), _split(args.provider)
    if models:
        from econ.tables.catalog import check_ids
        check_ids("model", models, catalog.models["id"].to_list())
        quotes = quotes.filter(pl.col("model").is_in(models))
    if providers:
        quotes = quotes.filter(pl.col("provider").is_in(providers))
    if quotes.height == 0:
        raise InvalidInputError(f"no quote matches --model={args.model} --provider={args.provider}")
    return check_quotes(quotes, catalog, hardware=_split(args.hardware), decoding=decoding, **kw), catalog, economics


def run_check(args) -> int:
    from econ.analyses.quotes import decoding_notes

    result, catalog, economics = compute(args)
    fmt = args.format
    notes = decoding_notes(result.summary, args.decoding, catalog) if fmt == "table" else ()
    if fmt in ("csv", "xlsx"):
        from econ.io import export

        if fmt == "csv":
            data = export.to_csv_bytes(result.summary)
        else:
            data = xlsx_bytes(result, catalog, economics)
        _write(data, args.output, args.force)
        return 0
    if args.output:
        buf = io.StringIO()
        _print(result, fmt, buf, single=_single(args), alternatives=getattr(args, "alternatives", None),
               notes=notes)
        _write(buf.getvalue().encode("utf-8"), args.output, args.force)
        return 0
    _print(result, fmt, sys.stdout, single=_single(args), alternatives=getattr(args, "alternatives", None),
           notes=notes)
    return 0


def xlsx_bytes(result, catalog, economics, assumptions=None) -> bytes:
    """The quote check as a workbook: a 'Quote check' sheet (one row per quote) and the Assumptions sheet
    (economics, efficiencies, the capex/power/rental of every floor accelerator, the check's settings)."""
    from econ.io import export
    from econ.assumptions import DEFAULT

    hw = result.summary["floor_hardware"].drop_nulls().unique().sort().to_list()
    table = export.cost_assumptions_frame(catalog, assumptions or DEFAULT, economics, hardware=hw,
                                          extra=result.settings_rows())
    return export.to_xlsx_bytes(result.summary, sheet_name="Quote check", assumptions=table, catalog=catalog)


def settings_line(s: dict) -> str:
    """The check's settings in one line: tier and rate, utilization, mix, cache hits, request, speed floor."""
    rate = f" at ${s['usd_per_gpu_hour']:g} per GPU-hour" if s.get("usd_per_gpu_hour") is not None else ""
    return (f"settings: cost tier {s['cost_basis']}{rate} (every $/GPU-hour per utilized GPU-hour), utilization "
            f"{s['utilization_frac']:g}, input:output mix {s['input_output_mix']:.3g}:1, cache-hit rate "
            f"{s['cache_hit_frac']:.3g}, requests of {s['input_len_tokens']}+{s['output_len_tokens']} tokens, speed "
            f"floor {s['min_tokens_per_s_per_user']:g} tokens/s per user where a quote publishes none, generations "
            f"{s['generations']}; {s['deployments_evaluated']:,} deployments evaluated")


def _print(result, fmt: str, out, single: bool = False, alternatives=None, notes=()) -> None:
    if fmt == "json":
        render(result.summary, "json", vertical_if_single=False, out=out)
        return
    if single:
        render(result.summary.select(SINGLE_COLUMNS), "table", vertical_if_single=True, out=out)
        if alternatives is not None:
            alt = alternatives
            out.write("\nverdict with the floor on each generation (rows) at each speed (columns; * the quote's):\n")
            render(alt, "table", vertical_if_single=False, out=out)
    else:
        render(result.summary.select(TABLE_COLUMNS), "table", vertical_if_single=False, out=out)
        counts = result.summary["verdict"].value_counts(sort=True)
        out.write("\nverdicts: " + ", ".join(f"{v} {n}" for v, n in counts.iter_rows()) + "\n")
    width = min(120, terminal_width(out))
    out.write("\n" + textwrap.fill(settings_line(result.settings), width=width) + "\n")
    for note in notes:  # the formats and speculative decoding of the floors (econ cost's "decoding:" line)
        out.write(textwrap.fill(note, width=width, subsequent_indent="  ", break_on_hyphens=False) + "\n")
    out.write("\nreasons:\n")
    for quote_id, reason in result.summary.select("quote_id", "reason").iter_rows():
        out.write(textwrap.fill(f"{quote_id}: {reason}", width=width, subsequent_indent="    ",
                                break_on_hyphens=False) + "\n")


def _write(data: bytes, output: str | None, force: bool = False) -> None:
    if output:
        write_bytes(data, output, force=force, force_hint="--force")
    else:
        sys.stdout.buffer.write(data) if hasattr(sys.stdout, "buffer") else sys.stdout.write(data.decode("utf-8"))


# --------------------------------------------------------------------------------------------- pnl

PNL_FLAGS = {
    "gpu_hours_per_day": ("gpu_hours_per_day", "--gpu-hours-per-day"),
    "usd_per_gpu_hour": ("usd_per_gpu_hour", "--usd-per-gpu-hour"),
    "input_tokens_per_day": ("input_tokens_per_day", "--input-tokens-per-day"),
    "cached_input_tokens_per_day": ("cached_input_tokens_per_day", "--cached-input-tokens-per-day"),
    "output_tokens_per_day": ("output_tokens_per_day", "--output-tokens-per-day"),
    "usd_per_m_input_tokens": ("input_price", "--input-price"),
    "usd_per_m_cached_input_tokens": ("cached_input_price", "--cached-input-price"),
    "usd_per_m_output_tokens": ("output_price", "--output-price"),
}
""":func:`econ.analyses.provider_economics.provider_pnl` argument -> (argparse attribute, flag)."""


def _register_pnl(qsub) -> None:
    c = qsub.add_parser(
        "pnl", help="a provider's daily P&L (fleet, traffic, prices) beside econ's modeled floor for that traffic",
        description="Cost per day (GPU-hours x $/GPU-hour), cost per million tokens, revenue, gross margin and "
                    "cost-profit ratio of a provider's fleet and traffic, side by side with econ's cheapest deployment "
                    "for the same traffic on the same accelerator at the same $/GPU-hour and speed per user. "
                    "--disclosure deepseek-v3r1-day6 fills every figure from data/provider_disclosures.csv "
                    "(DeepSeek's 2025-03-01 day-6 post); flags given override it.")
    c.add_argument("--disclosure", metavar="ID", help="fill every figure from provider_disclosures.csv "
                                                      "(deepseek-v3r1-day6)")
    fleet = c.add_argument_group("fleet")
    f = fleet.add_mutually_exclusive_group()
    f.add_argument("--gpu-hours-per-day", type=float, metavar="H", help="GPU-hours paid in the day")
    f.add_argument("--gpus", type=float, metavar="N", help="GPUs of the fleet (average occupancy; x 24 h)")
    fleet.add_argument("--usd-per-gpu-hour", type=float, metavar="USD", help="cost of one GPU-hour (lease or TCO)")
    t = c.add_argument_group("traffic and prices")
    t.add_argument("--input-tokens-per-day", type=float, metavar="T", help="every input token, cache hits included")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--cached-input-tokens-per-day", type=float, metavar="T", help="input tokens served from the cache")
    g.add_argument("--cache-hit-rate", type=float, metavar="F", help="share of input tokens from the cache, [0, 1]")
    t.add_argument("--output-tokens-per-day", type=float, metavar="T", help="generated tokens")
    t.add_argument("--input-price", type=float, metavar="USD", help="USD per million uncached input tokens")
    t.add_argument("--cached-input-price", type=float, metavar="USD", help="USD per million cache-hit input tokens")
    t.add_argument("--output-price", type=float, metavar="USD", help="USD per million output tokens")
    m = c.add_argument_group("modeled floor")
    m.add_argument("--model", help="catalog model id served")
    m.add_argument("--hardware", help="catalog accelerator id it runs on")
    m.add_argument("--speed", type=float, metavar="X", help="output tokens/s per user the floor must deliver [25]")
    m.add_argument("--utilization", type=float, help="share of the paid GPU-hours serving, (0, 1] [1: the fleet is "
                                                     "sized to its load]")
    add_decoding_options(c)  # --weight-format: the served weight format [the disclosure's, else the checkpoint's]
    _add_output(c, formats=("table", "csv", "json"))
    add_data_dir(c)
    c.set_defaults(func=run_pnl)


def pnl_compute(args) -> tuple[dict, dict, dict]:
    """(provider P&L, modeled floor P&L, context) from the flags (and ``--disclosure``)."""
    import numpy as np

    from econ.analyses.provider_economics import gpu_hours_per_day, load_disclosure, modeled_floor_pnl, provider_pnl

    if args.output:
        check_target(args.output, args.force, force_hint="--force")
    check_flag("cache_hit_frac", args.cache_hit_rate)
    check_flag("utilization_frac", args.utilization)
    catalog = catalog_from(args)
    d = load_disclosure(args.disclosure, catalog.data_dir) if args.disclosure else None
    inputs = dict(d.inputs) if d else {}
    for key, (attr, _) in PNL_FLAGS.items():
        v = getattr(args, attr, None)
        if v is not None:
            inputs[key] = v
    if args.gpus is not None:
        inputs["gpu_hours_per_day"] = float(gpu_hours_per_day(args.gpus))
    if args.cache_hit_rate is not None:
        if "input_tokens_per_day" not in inputs:
            raise InvalidInputError("--cache-hit-rate needs --input-tokens-per-day")
        inputs["cached_input_tokens_per_day"] = args.cache_hit_rate * inputs["input_tokens_per_day"]
    need = [PNL_FLAGS[k][1] for k in ("usd_per_gpu_hour", "input_tokens_per_day", "output_tokens_per_day",
                                   "usd_per_m_input_tokens", "usd_per_m_output_tokens") if k not in inputs]
    if "gpu_hours_per_day" not in inputs:
        need.insert(0, "--gpu-hours-per-day or --gpus")
    model = args.model or (d.model if d else None)
    hardware = args.hardware or (d.hardware if d else None)
    if model is None:
        need.append("--model")
    if hardware is None:
        need.append("--hardware")
    if need:
        raise InvalidInputError(f"missing {', '.join(need)} (or --disclosure deepseek-v3r1-day6 for DeepSeek's figures)")
    reported = {k: float(np.asarray(v)) for k, v in provider_pnl(**inputs).items()}
    speed = args.speed if args.speed is not None else (d.output_tokens_per_s_per_user if d else 25.0)
    decoding = args.decoding = decoding_from(args)
    wf = decoding.weight_format or (d.weight_format if d else None)
    traffic = {k: v for k, v in inputs.items() if k != "gpu_hours_per_day"}
    modeled = modeled_floor_pnl(catalog, model=model, hardware=hardware, min_tokens_per_s_per_user=speed,
                                weight_format=wf, utilization_frac=args.utilization or 1.0,
                                decoding=replace(decoding, weight_format=None), **traffic)
    context = {"disclosure": d, "model": model, "hardware": hardware, "speed": speed, "weight_format": wf,
               "utilization": args.utilization or 1.0}
    return reported, modeled, context


PNL_ROWS = (
    ("gpu_hours_per_day", "GPU-hours per day"), ("cost_usd_per_day", "cost per day"),
    ("usd_per_m_tokens", "cost per M tokens (input + output)"), ("revenue_usd_per_day", "revenue per day"),
    ("profit_usd_per_day", "gross profit per day"), ("gross_margin_frac", "gross margin"),
    ("cost_profit_margin_frac", "cost-profit ratio"),
)
"""Rows of the P&L table: field, label."""


def pnl_frame(reported: dict, modeled: dict) -> pl.DataFrame:
    """The P&L side by side: metric, provider, modeled floor (floats; the table formats them)."""
    rows = [{"metric": label, "field": key, "provider": reported.get(key), "modeled_floor": modeled.get(key)}
            for key, label in PNL_ROWS]
    return pl.DataFrame(rows, schema={"metric": pl.String, "field": pl.String, "provider": pl.Float64,
                                      "modeled_floor": pl.Float64})


def _pnl_cell(field: str, v) -> str:
    from econ.formatting import MISSING
    if v is None:
        return MISSING
    if field.endswith("_frac"):
        return f"{v:.1%}"
    if field == "usd_per_m_tokens":
        return f"${v:,.3f}"
    if field.startswith("usd") or field.endswith("_usd_per_day"):
        return f"${v:,.0f}"
    return f"{v:,.0f}"


def run_pnl(args) -> int:
    reported, modeled, ctx = pnl_compute(args)
    frame = pnl_frame(reported, modeled)
    buf = io.StringIO()
    if args.format == "csv":
        buf.write(frame.write_csv())
    elif args.format == "json":
        import json
        rec = {"provider": reported, "modeled_floor": {k: v for k, v in modeled.items() if k != "check"},
               "model": ctx["model"], "hardware": ctx["hardware"], "speed_tokens_per_s_per_user": ctx["speed"]}
        json.dump(rec, buf, indent=2, default=str)
        buf.write("\n")
    else:
        width = min(120, terminal_width(sys.stdout if not args.output else None))
        d = ctx["disclosure"]
        if d is not None:
            buf.write(textwrap.fill(f"{d.provider} {d.id} ({d.source.split(' (')[0]}, {d.as_of})", width=width,
                                    break_long_words=False, break_on_hyphens=False) + "\n")
        buf.write(textwrap.fill(
            f"traffic: {reported['input_tokens_per_day']:,.4g} input tokens/day ({reported['cache_hit_frac']:.2%} "
            f"cache hits), {reported['output_tokens_per_day']:,.4g} output tokens/day; {ctx['model']} on "
            f"{ctx['hardware']} at ${reported['usd_per_gpu_hour']:g} per GPU-hour, >= {ctx['speed']:g} tokens/s per "
            f"user", width=width) + "\n\n")
        w = max(len(label) for _, label in PNL_ROWS)
        buf.write(f"{'':<{w}}  {'provider':>14}  {'modeled floor':>14}\n")
        for r in frame.iter_rows(named=True):
            buf.write(f"{r['metric']:<{w}}  {_pnl_cell(r['field'], r['provider']):>14}  "
                      f"{_pnl_cell(r['field'], r['modeled_floor']):>14}\n")
        if modeled.get("gpus") is not None:
            buf.write("\n" + textwrap.fill(
                f"modeled floor: {modeled['floor_num_gpus']} x {ctx['hardware']} per instance "
                f"({modeled['floor_layout']}, batch {modeled['floor_batch_size']}, "
                f"{modeled['floor_tokens_per_s_per_user']:.1f} tokens/s per user), {modeled['gpus']:,.0f} GPUs "
                f"busy on average; verdict on the blended price: {modeled['verdict']}", width=width) + "\n")
        if modeled.get("cost_usd_per_day_low") is not None:
            buf.write(textwrap.fill(
                f"calibration band of the modeled floor: cost ${modeled['cost_usd_per_day_low']:,.0f} to "
                f"${modeled['cost_usd_per_day_high']:,.0f} per day, gross margin "
                f"{modeled['gross_margin_frac_low']:.1%} to {modeled['gross_margin_frac_high']:.1%}", width=width) + "\n")
        if d is not None and d.reported:
            rep = d.reported
            parts = [f"cost ${rep['cost_usd_per_day']:,.0f}/day" if "cost_usd_per_day" in rep else None,
                     f"revenue ${rep['revenue_usd_per_day']:,.0f}/day (theoretical)" if "revenue_usd_per_day" in rep
                     else None,
                     f"cost-profit margin {rep['cost_profit_margin_frac']:.0%}" if "cost_profit_margin_frac" in rep
                     else None]
            buf.write(textwrap.fill("as disclosed: " + ", ".join(p for p in parts if p), width=width) + "\n")
        buf.write("\n" + textwrap.fill(f"reason: {modeled['reason']}", width=width, subsequent_indent="    ",
                                break_on_hyphens=False) + "\n")
    data = buf.getvalue()
    if args.output:
        write_bytes(data.encode("utf-8"), args.output, force=args.force, force_hint="--force")
    else:
        sys.stdout.write(data)
    return 0


# --------------------------------------------------------------------------------------------- import

def _register_import(qsub) -> None:
    c = qsub.add_parser(
        "import", help="a quotes CSV from LiteLLM's model_prices_and_context_window JSON",
        description="Read LiteLLM's community price table (model_prices_and_context_window.json, or the "
                    "_backup.json inside the installed litellm package), map provider model names to catalog ids "
                    "(data/model_aliases.csv), and write a quotes CSV (prices per million = per token x 1e6; the "
                    "cached-input price from cache_read_input_token_cost). Reports the names it could not map and "
                    "the entries it skipped, with the reason. The output is written atomically, never over an "
                    "existing file without --force.")
    c.add_argument("--litellm", required=True, metavar="FILE", help="the LiteLLM price JSON")
    c.add_argument("--output", "-o", metavar="FILE", help="quotes CSV to write [standard output]")
    c.add_argument("--force", action="store_true", help="replace FILE if it exists (atomically)")
    c.add_argument("--as-of", metavar="DATE", help="snapshot date for the quotes' as_of [the file's modification date]")
    c.add_argument("--show-unmapped", type=int, default=10, metavar="N",
                   help="list at most N names that could not be mapped [10]")
    add_data_dir(c)
    c.set_defaults(func=run_import)


def run_import(args) -> int:
    from econ.io import export
    from econ.tables.litellm import import_litellm
    from econ.tables.quote_files import QUOTE_SCHEMA

    from econ.tables.rules import DATE_YEARS, is_iso_date

    if args.as_of is not None and not is_iso_date(args.as_of):  # the tables' own as_of rule
        raise InvalidInputError(f"--as-of={show_value(args.as_of)} is not a date (YYYY-MM-DD, YYYY-MM or YYYY, a real "
                                f"calendar date in {DATE_YEARS[0]}-{DATE_YEARS[1]})")
    check_range("--show-unmapped", args.show_unmapped, 0, 100_000)
    if args.output:
        check_target(args.output, args.force, force_hint="--force")  # before the work, not after it
    catalog = catalog_from(args)
    result = import_litellm(args.litellm, catalog, as_of=args.as_of)
    data = export.to_csv_bytes(result.quotes.select(list(QUOTE_SCHEMA)))  # a quotes.csv: its columns, in order
    if args.output:
        write_bytes(data, args.output, force=args.force, force_hint="--force")
    else:
        sys.stdout.buffer.write(data) if hasattr(sys.stdout, "buffer") else sys.stdout.write(data.decode("utf-8"))
    err = sys.stderr
    where = f" to {args.output}" if args.output else ""
    err.write(f"econ quotes import: {result.quotes.height} quote(s) of {result.quotes['model'].n_unique()} model(s)"
              f"{where}; {result.entries:,} entries read, {result.not_chat:,} not chat models, "
              f"{len(result.unmapped):,} chat models not in model_aliases.csv, {len(result.skipped):,} skipped\n")
    n = args.show_unmapped
    for key, reason in result.skipped[:max(n, 10)]:
        err.write(f"  skipped {key}: {reason}\n")
    if len(result.skipped) > max(n, 10):
        err.write(f"  (+{len(result.skipped) - max(n, 10):,} more skipped; --show-unmapped N lists more)\n")
    if result.unmapped and n:
        shown = ", ".join(result.unmapped[:n])
        more = f" (+{len(result.unmapped) - n:,} more; --show-unmapped N lists more)" if len(result.unmapped) > n else ""
        err.write(f"  not mapped (add them to data/model_aliases.csv if they are catalog models): {shown}{more}\n")
    return 0


# --------------------------------------------------------------------------------------------- cached (issue 22)

def _register_cached(qsub) -> None:
    from econ.presets import TASK_WORKLOADS
    from econ.physics.precision import PRECISIONS

    c = qsub.add_parser(
        "cached", help="cached-input prices against the true cost of a cached token (KV storage + load)",
        description="Each quote's cached-input price against what a cached token truly costs on --hardware: its KV "
                    "stored for the task preset's time between calls in the tier it lands in (HBM, host memory, "
                    "NVMe, a remote pool: data/kv_tiers.csv) plus loading it (econ.analyses.tasks). A price above "
                    "that cost is sustainable from storage and load alone; the recompute cost is shown beside it.")
    c.add_argument("--hardware", default="h200-sxm", help="accelerator the cost is modeled on [h200-sxm]")
    c.add_argument("--workload", choices=TASK_WORKLOADS, default="agentic-coding",
                   help="task preset: lengths, prefix reuse, time between calls [agentic-coding]")
    c.add_argument("--precision", choices=PRECISIONS, default="fp8", help="[fp8]")
    c.add_argument("--quotes", metavar="FILE", help="quotes CSV [data/quotes.csv]")
    c.add_argument("--format", default="table", choices=("table", "csv", "json"))
    add_economics_options(c, mix=False)
    add_data_dir(c)
    c.set_defaults(func=run_cached)


def run_cached(args) -> int:
    from econ.analyses.tasks import check_cached_prices
    from econ.tables.quote_files import load_quotes

    catalog = catalog_from(args)
    economics = economics_from(args, catalog)
    from econ.commands._common import progress

    with progress(f"Pricing cached tokens on {args.hardware}"):
        table = check_cached_prices(catalog, load_quotes(catalog, args.quotes), hardware=args.hardware,
                                    workload=args.workload, precision=args.precision, economics=economics)
    if args.format != "table":
        render(table, args.format)
        return 0
    sys.stdout.write(f"Cached-input prices vs the true cost of a cached token on {args.hardware} ({args.workload}: "
                     "storage for the time between calls + load)\n")
    render(table.drop("quote_id", "hardware"), "table", vertical_if_single=False)
    return 0
