"""``econ export KIND``: write a result table to CSV, XLSX (live cost formulas) or Parquet.

``KIND`` names the table; each kind takes the flags of the command that computes it (``econ export
cost`` takes every flag of ``econ cost``). The writing is :func:`econ.io.export.write_table` through
:mod:`econ.safe_write`: atomic, formula-injection-safe, never over an existing file without ``--force``.
"""

from __future__ import annotations

from econ.commands import cost as cost_cmd
from econ.errors import InvalidInputError
from econ.io.export import FORMATS, cost_assumptions_frame, format_of, write_table
from econ.safe_write import check_target


def _add_output_arguments(p) -> None:
    p.add_argument("--output", "-o", required=True, metavar="FILE",
                   help="file to write (.csv, .xlsx or .parquet; the suffix sets the format unless --format)")
    p.add_argument("--format", choices=FORMATS, help="output format [from the FILE suffix]")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists (atomically)")


def register(sub) -> None:
    p = sub.add_parser("export", help="write a result table to CSV, XLSX (live cost formulas) or Parquet",
                       description="Write a result table to a file. XLSX workbooks carry Results, Assumptions "
                                   "(every input with its source), Columns (units, formats, formulas) and Metadata "
                                   "sheets; `export cost` writes the cost chain as live Excel formulas of the "
                                   "Assumptions cells.")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    c = kinds.add_parser("cost", help="the `econ cost` table",
                         description="The `econ cost` table (same flags) as a file; in XLSX, $/GPU-hour and "
                                     "$/M tokens are formulas of the named Assumptions cells (usd_per_kwh, pue, "
                                     "utilization_frac, ...) and the per-row hardware capex, power and rental rate.")
    cost_cmd.add_cost_arguments(c)
    c.add_argument("--summary", action="store_true", help="only the columns `econ cost` prints (default: all)")
    _add_output_arguments(c)
    p.set_defaults(func=run)


def _export_cost(args) -> str:
    fmt = format_of(args.output, args.format)
    check_target(args.output, args.force, force_hint="--force")  # before the work, not after it
    frame, catalog, assumptions, economics = cost_cmd.compute(args)
    if args.summary:
        keep = cost_cmd.SUMMARY_COLUMNS + ("billed_input_tokens_per_s_per_gpu", "billed_output_tokens_per_s_per_gpu",
                                           "warnings")  # the rates the workbook's $/M formulas divide by
        frame = frame.select([c for c in keep if c in frame.columns])  # task columns only with a task
    scenario = [
        {"group": "scenario", "name": k, "value": v, "unit": unit, "source": "command line"}
        for k, v, unit in (("model", args.model, ""), ("hardware", args.hardware, ""),
                           ("precision", args.precision, ""), ("gpus", args.gpus or "auto", "accelerators"),
                           ("tp", args.tp or "auto", ""), ("pp", args.pp or "auto", ""),
                           ("batch", args.batch, "sequences"), ("input_len", args.input_len, "tokens"),
                           ("output_len", args.output_len, "tokens"),
                           ("context", args.context or "input+output", "tokens"),
                           ("region", args.region or "", ""), ("facility", args.facility or "", ""),
                           ("ideal", args.ideal, ""), ("stream_embeddings", args.stream_embeddings, ""))
    ]
    table = cost_assumptions_frame(catalog, assumptions, economics, hardware=frame["hardware"].to_list(),
                                   extra=scenario)
    path = write_table(frame, args.output, fmt, force=args.force, assumptions=table,
                       metadata={"export_kind": "cost"}, cost_chain=fmt == "xlsx", catalog=catalog,
                       force_hint="--force")
    extra = "; $/GPU-hour and $/M tokens are live formulas of the Assumptions sheet" if fmt == "xlsx" else ""
    return f"wrote {frame.height} row(s) x {frame.width} columns to {path} ({fmt}{extra})"


KINDS = {"cost": _export_cost}
"""Export kinds: name -> function(args) that writes the file and returns a one-line report."""


def run(args) -> int:
    if args.kind not in KINDS:  # pragma: no cover - argparse restricts the choices
        raise InvalidInputError(f"export kind {args.kind!r} is not one of {sorted(KINDS)}")
    print(KINDS[args.kind](args))
    return 0
