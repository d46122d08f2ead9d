"""``econ quotes check``: provider price quotes vs the modeled cost floor, with a verdict and reason per quote."""

from __future__ import annotations

import io
import sys
import textwrap

import polars as pl

from econ.commands._common import add_data_dir, catalog_from, check_range, render
from econ.commands.cost import parse_mix
from econ.errors import InvalidInputError
from econ.safe_write import check_target, write_bytes
from econ.sweep import MAX_CONTEXT, make_economics

TABLE_COLUMNS = (
    "quote_id", "model", "verdict", "price_usd_per_m_blended_tokens", "floor_usd_per_m_blended_tokens",
    "margin_blended_frac", "floor_hardware", "floor_num_gpus", "floor_precision", "floor_batch_size",
    "floor_batch_limit", "speed_floor_tokens_per_s_per_user",
)
"""Columns of the terminal table (the full set goes to csv/json/xlsx); each row's reason follows the table."""


def register(sub) -> None:
    p = sub.add_parser("quotes", help="check provider price quotes against the modeled cost floor",
                       description="Provider quotes (USD per million tokens) against the cheapest catalog deployment "
                                   "that serves the model at the quote's speed.")
    qsub = p.add_subparsers(dest="quotes_command", required=True, metavar="ACTION")
    c = qsub.add_parser(
        "check", help="verdict (below-floor, thin, plausible, rich), margins, binding wall and break-evens per quote",
        description="For each quote: the modeled cost floor on every catalog accelerator (cheapest deployment that "
                    "meets the quote's published speed, else --min-tokens-per-s-per-user), the implied gross margin "
                    "on input, output and blended price, a verdict with its reason, and the $/GPU-hour, utilization "
                    "and batch at which the quote breaks even.")
    c.add_argument("--file", metavar="QUOTES", help="quotes CSV or XLSX (columns: data/README.md, quotes.csv; "
                                                    "default: the shipped data/quotes.csv)")
    c.add_argument("--min-tokens-per-s-per-user", type=float, default=None, metavar="X",
                   help="speed floor for quotes that publish no speed, tokens/s per user [25: MLPerf v5.0 interactive]")
    c.add_argument("--input-output-mix", default="3:1", help="input:output tokens for the blended price [3:1]")
    c.add_argument("--cache-hit-rate", type=float, help="share of input tokens served from a prefix cache, [0, 1] [0]")
    b = c.add_mutually_exclusive_group()
    b.add_argument("--owned", dest="basis", action="store_const", const="owned",
                   help="price GPU-hours by TCO: capex annuity, facility, opex, power (default)")
    b.add_argument("--rental", dest="basis", action="store_const", const="rental",
                   help="price GPU-hours at the catalog's market rental rate")
    c.add_argument("--utilization", type=float, help="share of hours serving paid traffic, (0, 1] [0.7]")
    c.add_argument("--region", help="power-price region id (econ list regions)")
    c.add_argument("--facility", help="facility class id (econ list facilities)")
    c.add_argument("--output-len", type=int, default=1024, help="generated tokens per request [1024]; the prompt is "
                                                                "mix x output (3:1 -> 3072)")
    c.add_argument("--hardware", help="restrict the floor search to these accelerator ids (comma-separated)")
    c.add_argument("--model", help="check only quotes of these model ids (comma-separated)")
    c.add_argument("--provider", help="check only quotes of these providers (comma-separated)")
    c.add_argument("--format", default="table", choices=("table", "csv", "json", "xlsx"))
    c.add_argument("--output", "-o", metavar="FILE",
                   help="write to FILE instead of standard output (required for xlsx); atomic, never over an "
                        "existing file without --force")
    c.add_argument("--force", action="store_true", help="replace FILE if it exists (atomically)")
    add_data_dir(c)
    c.set_defaults(func=run_check)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    return items or None


def compute(args):
    """Check the flags, load the quotes and run :func:`econ.quotes.check_quotes`.

    Returns
    -------
    (QuoteCheck, catalog, economics)
    """
    from econ.quotes import DEFAULT_MIN_TOKENS_PER_S_PER_USER, check_quotes, load_quotes

    speed = args.min_tokens_per_s_per_user
    check_range("--min-tokens-per-s-per-user", speed, 1e-6, 1e5, "tokens/s per user")
    check_range("--cache-hit-rate", args.cache_hit_rate, 0, 1)
    check_range("--utilization", args.utilization, 0.01, 1)
    check_range("--output-len", args.output_len, 1, MAX_CONTEXT, "tokens")
    if args.format == "xlsx" and not args.output:
        raise InvalidInputError("--format xlsx needs --output FILE.xlsx (a workbook is not printable)")
    if args.output:
        check_target(args.output, args.force, force_hint="--force")  # before the work, not after it
    catalog = catalog_from(args)
    economics = make_economics(catalog, region=args.region, facility=args.facility, basis=args.basis,
                               utilization_frac=args.utilization, input_output_mix=parse_mix(args.input_output_mix),
                               cache_hit_frac=args.cache_hit_rate)
    quotes = load_quotes(catalog, args.file)
    models, providers = _split(args.model), _split(args.provider)
    if models:
        from econ.catalog import check_ids
        check_ids("model", models, catalog.models["id"].to_list())
        quotes = quotes.filter(pl.col("model").is_in(models))
    if providers:
        quotes = quotes.filter(pl.col("provider").is_in(providers))
    if quotes.height == 0:
        raise InvalidInputError(f"no quote matches --model={args.model} --provider={args.provider}")
    result = check_quotes(quotes, catalog, economics=economics, output_len=args.output_len,
                          min_tokens_per_s_per_user=speed if speed is not None else DEFAULT_MIN_TOKENS_PER_S_PER_USER,
                          hardware=_split(args.hardware))
    return result, catalog, economics


def run_check(args) -> int:
    result, catalog, economics = compute(args)
    fmt = args.format
    if fmt in ("csv", "xlsx"):
        from econ import export

        if fmt == "csv":
            data = export.to_csv_bytes(result.summary)
        else:
            data = xlsx_bytes(result, catalog, economics)
        _write(data, args.output, args.force)
        return 0
    if args.output:
        buf = io.StringIO()
        _print(result, fmt, buf)
        _write(buf.getvalue().encode("utf-8"), args.output, args.force)
        return 0
    _print(result, fmt, sys.stdout)
    return 0


def xlsx_bytes(result, catalog, economics, assumptions=None) -> bytes:
    """The quote check as a workbook: a 'Quote check' sheet (one row per quote) and the Assumptions sheet
    (economics, efficiencies, the capex/power/rental of every floor accelerator, the check's settings)."""
    from econ import export
    from econ.assumptions import DEFAULT

    hw = result.summary["floor_hardware"].drop_nulls().unique().sort().to_list()
    table = export.cost_assumptions_frame(catalog, assumptions or DEFAULT, economics, hardware=hw,
                                          extra=result.settings_rows())
    return export.to_xlsx_bytes(result.summary, sheet_name="Quote check", assumptions=table, catalog=catalog)


def _print(result, fmt: str, out) -> None:
    if fmt == "json":
        render(result.summary, "json", vertical_if_single=False, out=out)
        return
    render(result.summary.select(TABLE_COLUMNS), "table", vertical_if_single=False, out=out)
    counts = result.summary["verdict"].value_counts(sort=True)
    out.write("\nverdicts: " + ", ".join(f"{v} {n}" for v, n in counts.iter_rows()) + "\n")
    s = result.settings
    out.write(f"settings: basis {s['basis']}, utilization {s['utilization_frac']:g}, input:output mix "
              f"{s['input_output_mix']:g}:1, cache-hit rate {s['cache_hit_frac']:g}, requests of "
              f"{s['input_len_tokens']}+{s['output_len_tokens']} tokens, speed floor "
              f"{s['min_tokens_per_s_per_user']:g} tokens/s per user where a quote publishes "
              f"none; {s['deployments_evaluated']:,} deployments evaluated\n\nreasons:\n")
    for quote_id, reason in result.summary.select("quote_id", "reason").iter_rows():
        out.write(textwrap.fill(f"{quote_id}: {reason}", width=120, subsequent_indent="    ") + "\n")


def _write(data: bytes, output: str | None, force: bool = False) -> None:
    if output:
        write_bytes(data, output, force=force, force_hint="--force")
    else:
        sys.stdout.buffer.write(data) if hasattr(sys.stdout, "buffer") else sys.stdout.write(data.decode("utf-8"))
