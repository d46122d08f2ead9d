"""Shared CLI helpers: catalog loading, flag validation, output (tables that fit the terminal, CSV, JSON), progress."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import threading

import polars as pl

from econ.tables.catalog import load_catalog
from econ.errors import InvalidInputError
from econ.formatting import cell


def add_data_dir(p) -> None:
    p.add_argument("--data-dir", metavar="DIR", help="folder with your own data/*.csv (missing files fall back to the shipped ones)")


_WARNED: set[str] = set()


def catalog_from(args):
    """The catalog of ``--data-dir`` (else the shipped data); load warnings (an ignored extra column) go to
    stderr as ``econ: warning: ...``, once per process."""
    import warnings

    from econ.tables.rules import DataWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        catalog = load_catalog(getattr(args, "data_dir", None))
    for w in caught:
        if not issubclass(w.category, DataWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif str(w.message) not in _WARNED:
            _WARNED.add(str(w.message))
            print(f"econ: warning: {w.message}", file=sys.stderr)
    return catalog


def parse_int_list(flag: str, text: str, lo: int, hi: int, unit: str = "") -> list[int]:
    """'1,8,64' -> [1, 8, 64]; each value checked against [lo, hi] (``unit`` named) with the flag named."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        if len(part) > 40 and part.lstrip("+-").isdigit():
            raise InvalidInputError(f"{flag}=a {len(part.lstrip('+-'))}-digit integer is outside [{lo}, {hi}]")
        try:
            v = int(part) if len(part) <= 40 else None
        except ValueError:
            v = None
        if v is None:
            raise InvalidInputError(f"{flag}={show_value(part)} is not a whole number (valid: [{lo}, {hi}])")
        if not lo <= v <= hi:
            raise InvalidInputError(f"{flag}={show_value(v)} is outside [{lo}, {hi}]" + (f" ({unit})" if unit else ""))
        out.append(v)
    return out


def show_value(value, limit: int = 40) -> str:
    """A flag value for a message: :func:`econ.vocabulary.show` (numbers as %g, a huge integer as its digit count,
    text quoted and cut at ``limit`` characters). Never raises."""
    from econ.vocabulary import show

    return show(value, limit)


MAX_MESSAGE_CHARS = 2_000
"""Longest message or table cell printed on a terminal; the rest is cut with its length said (a 1 MB name from a
hostile file must not flood the terminal). [characters]"""

_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def terminal_text(text, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` safe to print on a terminal: control characters (an ANSI escape ``\\x1b[31m``, a bell, a C1 code) and
    lone surrogates written as escapes (``\\x1b``), line feeds and tabs kept, cut at ``limit`` characters with the
    length said. Never raises."""
    t = str(text)
    cut = t if len(t) <= limit else t[:limit]
    cut = _UNPRINTABLE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256
                           else f"\\u{ord(m.group()):04x}", cut)
    return cut if len(t) <= limit else f"{cut}... ({len(t):,} characters)"


def check_range(flag: str, value, lo: float, hi: float, unit: str = "") -> None:
    """Raise InvalidInputError unless ``lo <= value <= hi`` (None passes: the flag was not given).

    Exact for any Python int (no conversion to float that could overflow) and false for NaN.
    """
    if value is None:
        return
    if not (value == value) or not lo <= value <= hi:
        u = f" ({unit})" if unit else ""
        raise InvalidInputError(f"{flag}={show_value(value)} is outside [{show_value(lo)}, {show_value(hi)}]{u}")


# ---------------------------------------------------------------------------------------------
# tables on the terminal (rich), numbers through econ.formatting
# ---------------------------------------------------------------------------------------------

KEEP_IN_TABLE = ("batch_size", "feasible", "binding_wall")
"""Columns kept in a multi-row table even when every row has the same value (they explain the rows)."""

KEY_COLUMNS = ("setup", "at_tokens_per_s_per_user", "hardware", "model", "quote_id", "id", "region_id", "batch_size",
               "layout", "num_gpus")
"""Columns that identify a row: repeated at the left of every block when a wide table is split."""

DEFAULT_WIDTH = 120
"""Table width when the output is not a terminal and ``COLUMNS`` is unset (files, pipes)."""

GAP = 2
"""Spaces between columns."""


def _fmt_cell(v, column: str = "") -> str:
    """One cell as an analyst reads it (``econ.formatting.cell``): $6.76B, 98.9 EFLOP/s, missing as '–'."""
    return cell(column, v)


def terminal_width(out=None) -> int:
    """Columns available: ``$COLUMNS`` if set, else the terminal's width, else :data:`DEFAULT_WIDTH`."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    stream = out or sys.stdout
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return DEFAULT_WIDTH


def _console(out, width: int):
    from rich.console import Console

    tty = bool(getattr(out, "isatty", lambda: False)())
    return Console(file=out, width=width, color_system="auto" if tty else None, highlight=False, soft_wrap=False,
                   emoji=False, markup=False, force_terminal=tty or None)


def _wrap_header(name: str, width: int) -> str:
    """A snake_case header on as many lines as it needs at ``width``, broken after underscores."""
    if len(name) <= width:
        return name
    lines, line = [], ""
    for part in [p + "_" for p in name.split("_")[:-1]] + [name.split("_")[-1]]:
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    lines.append(line)
    return "\n".join(lines)


HEADER_MIN = 12
"""Headers up to this long never wrap; longer ones wrap at underscores when the table is too wide."""


def _column_widths(columns, cells) -> list[int]:
    """Each column's narrowest width: its widest cell, or its header (a short one whole, a long one's longest word)."""
    out = []
    for i, c in enumerate(columns):
        widest = max([len(r[i]) for r in cells] or [0])
        word = max(len(p) + 1 for p in c.split("_"))
        out.append(max(widest, len(c) if len(c) <= HEADER_MIN else word))
    return out


def _widen(block: list[int], columns, widths: list[int], width: int) -> dict[int, int]:
    """Widths of one block's columns, widened to their whole header while the block still fits."""
    out = {i: widths[i] for i in block}
    spare = width - sum(out.values()) - GAP * (len(block) - 1)
    for i in sorted(block, key=lambda i: len(columns[i]) - out[i]):
        extra = len(columns[i]) - out[i]
        if 0 < extra <= spare:
            out[i] += extra
            spare -= extra
    return out


def _key_indices(columns) -> list[int]:
    """The (at most two) columns that identify a row, else the first column."""
    return [i for i, c in enumerate(columns) if c in KEY_COLUMNS][:2] or [0]


def _blocks(columns, widths, width: int) -> list[list[int]]:
    """Split column indices into blocks that fit ``width``; the key columns start every block."""
    keys = _key_indices(columns)
    key_w = sum(widths[i] + GAP for i in keys)
    blocks, block, used = [], [], key_w
    for i in range(len(columns)):
        if i in keys:
            continue
        if block and used + widths[i] > width:
            blocks.append(keys + block)
            block, used = [], key_w
        block.append(i)
        used += widths[i] + GAP
    if block or not blocks:
        blocks.append(keys + block)
    return blocks


def _numeric(frame: pl.DataFrame, column: str) -> bool:
    return frame.schema[column].is_numeric()


def render_table(frame: pl.DataFrame, out=None, *, width: int | None = None, title: str | None = None) -> None:
    """Print a multi-row frame as aligned columns that fit the terminal (``rich``).

    Numbers are right-aligned and formatted by their column's unit suffix (:func:`econ.formatting.cell`);
    missing values show as '–'. A table wider than the terminal is split into blocks of columns, each
    repeating the columns that identify a row (:data:`KEY_COLUMNS`); headers wrap at underscores.
    """
    from rich import box
    from rich.table import Table

    out = out or sys.stdout
    width = width or terminal_width(out)
    columns = frame.columns
    cells = [[terminal_text(cell(c, v), 500) for c, v in zip(columns, row)] for row in frame.rows()]
    widths = _column_widths(columns, cells)
    keys_w = sum(widths[i] + GAP for i in _key_indices(columns))
    room = max(20, width - keys_w)
    wraps = {i for i, c in enumerate(columns) if widths[i] > room and not _numeric(frame, c)}
    for i in wraps:  # a long text column wraps within what the key columns leave
        widths[i] = room
    console = _console(out, width)
    if title:
        console.print(title)
    for n, block in enumerate(_blocks(columns, widths, width)):
        shown = _widen(block, columns, widths, width)
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, GAP // 2),
                      collapse_padding=True, header_style="bold" if console.color_system else None)
        for i in block:
            table.add_column(_wrap_header(columns[i], shown[i]), justify="right" if _numeric(frame, columns[i])
                             else "left", no_wrap=i not in wraps, overflow="fold", min_width=shown[i],
                             max_width=shown[i])
        for r in cells:
            table.add_row(*[r[i] for i in block])
        if n:
            console.print()
        console.print(table)


def render_record(row: dict, out=None, *, width: int | None = None) -> None:
    """Print one result row as ``name  value`` lines; long text values wrap under their value column."""
    import textwrap

    out = out or sys.stdout
    width = width or terminal_width(out)
    key_w = max(len(k) for k in row)
    room = max(20, width - key_w - GAP)
    for k, v in row.items():
        lines = textwrap.wrap(terminal_text(cell(k, v)), room) or [""]
        out.write(f"{k:<{key_w}}{' ' * GAP}{lines[0]}".rstrip() + "\n")
        for ln in lines[1:]:
            out.write(" " * (key_w + GAP) + ln + "\n")


def with_warnings(frame: pl.DataFrame, warnings) -> pl.DataFrame:
    """``frame`` with a ``warnings`` column when the answer carries any (a deliberate fallback: an accelerator of a
    list skipped, a sweet spot shown instead of a speed the curve cannot reach), so every format holds them, not
    only the terminal: ``; ``-joined text on every row (JSON and CSV keep it whole)."""
    notes = [str(w) for w in (warnings or []) if w]
    if not notes:
        return frame
    return frame.with_columns(pl.lit("; ".join(dict.fromkeys(notes))).alias("warnings"))


def render(frame: pl.DataFrame, fmt: str, *, vertical_if_single: bool = True, out=None, warnings=None) -> None:
    """Print a result frame as a table that fits the terminal, CSV or JSON (object for one row, list for several).

    ``table``: one row prints as ``name  value`` lines (when ``vertical_if_single``); several rows print
    the columns equal on every row once above the table, then :func:`render_table`. CSV and JSON keep
    the stored units and full precision (missing values: empty / null). ``warnings`` (the answer's fallbacks) go
    into every format: a ``warnings`` column (:func:`with_warnings`).
    """
    out = out or sys.stdout
    frame = with_warnings(frame, warnings)
    if fmt == "json":
        rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                for r in frame.to_dicts()]
        json.dump(rows[0] if len(rows) == 1 else rows, out, indent=2, default=str)
        out.write("\n")
    elif fmt == "csv":
        out.write(frame.write_csv())
    elif frame.height == 1 and vertical_if_single:
        render_record(frame.row(0, named=True), out)
    else:
        if frame.height > 1 and vertical_if_single:
            # columns equal on every row are printed once above the table, so it fits a terminal
            const = [c for c in frame.columns if frame[c].n_unique() == 1 and c not in KEEP_IN_TABLE]
            if len(const) == frame.width:  # identical rows (a repeated list value, e.g. --gpus 8,8): print one
                render_record(frame.row(0, named=True), out)
                return
            if const:
                import textwrap

                line = "  ".join(f"{c}={terminal_text(cell(c, frame[c][0]), 500).replace(' ', chr(160))}"
                                 for c in const)
                for ln in textwrap.wrap(line, terminal_width(out), break_on_hyphens=False):
                    out.write(ln.replace(chr(160), " ") + "\n")
                frame = frame.drop(const)
        render_table(frame, out)


# ---------------------------------------------------------------------------------------------
# progress on stderr for searches that take more than a second
# ---------------------------------------------------------------------------------------------

@contextlib.contextmanager
def progress(description: str, *, total: int | None = None, delay_s: float = 1.0, stream=None):
    """A progress indicator on stderr for work that may take more than ``delay_s`` seconds.

    Yields ``advance(n=1)``; with ``total`` a bar with counts and time left, else a spinner with the
    elapsed time. Nothing is drawn when stderr is not a terminal (pipes, CI, tests), nor for work that
    ends within ``delay_s``; stdout is never touched, so ``--format json`` stays clean.

    Examples
    --------
    >>> with progress("Searching deployments", total=len(hardware)) as advance:  # doctest: +SKIP
    ...     for h in hardware:
    ...         results.append(optimize_one(h))
    ...         advance()
    """
    stream = stream or sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    columns += [BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()] if total else [TimeElapsedColumn()]
    bar = Progress(*columns, console=Console(file=stream), transient=True)
    task = bar.add_task(description, total=total)
    started = threading.Event()
    timer = threading.Timer(delay_s, lambda: (bar.start(), started.set()))
    timer.daemon = True
    timer.start()
    try:
        yield lambda n=1: bar.advance(task, n)
    finally:
        timer.cancel()
        if started.is_set() or timer.is_alive():
            timer.join(timeout=1.0)
        if started.is_set():
            bar.stop()


# ---------------------------------------------------------------------------------------------
# shared option groups: every subcommand takes the same scenario, workload, SLO and economics flags
# ---------------------------------------------------------------------------------------------

from econ.vocabulary import FIELDS, TCO_CHOICES, TIER_SPECS, Tier  # noqa: E402  (the one vocabulary of inputs)

TCO_HELP = ("cost tier of a GPU-hour: " + "; ".join(f"{TIER_SPECS[t].cli_name} ({TIER_SPECS[t].label})"
                                                   for t in Tier if t is not Tier.CUSTOM)
            + "; each sourced per accelerator (data/README.md)")


def add_field_option(group, name: str, *, dest: str | None = None, metavar: str | None = None, aliases=(),
                     note: str = ""):
    """``--flag`` of the vocabulary field ``name``: its flag name, type, help, range and default from
    :data:`econ.vocabulary.FIELDS` (one place for each; ``note`` adds a sentence). The value is checked by
    :func:`check_fields` or :func:`check_economics`."""
    f = FIELDS[name]
    kind = {"float": float, "int": int}.get(f.kind, str)
    group.add_argument(f.flag_name, *aliases, dest=dest or name, type=kind,
                       metavar=metavar or {"float": "X", "int": "N"}.get(f.kind, "VALUE"),
                       help=(f.help_text() + note).replace("%", "%%"))


def check_flag(name: str, value, flag: str | None = None) -> None:
    """Check one typed flag against its vocabulary field's one range (None passes: not given); the message names
    ``flag`` (default: the field's own flag)."""
    if value is not None:
        FIELDS[name].check(value, shown_as=flag or FIELDS[name].flag_name)


def check_fields(args, names) -> None:
    """Range-check the vocabulary fields ``names`` that were given on the command line (each error names the flag
    the user typed, the value and the one range of :data:`econ.vocabulary.FIELDS`)."""
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            FIELDS[name].check(value, shown_as=FIELDS[name].flag_name)


def add_scenario_option(p) -> None:
    """``--scenario FILE``: a TOML scenario (saved from the dashboard); explicit flags override it."""
    p.add_argument("--scenario", metavar="FILE",
                   help="TOML scenario file (saved from the dashboard sidebar); flags given explicitly override it")


def add_workload_options(p, *, lengths: bool = True) -> None:
    """``--workload`` (chat|reasoning|summarization|custom) and ``--input-len/--isl``, ``--output-len/--osl``.

    Explicit lengths win over the preset's (:func:`econ.presets.lengths`); defaults: the scenario's, else chat.
    """
    from econ.presets import WORKLOAD_CHOICES, WORKLOADS

    names = ", ".join(f"{k} {w.input_len // 1024}k/{w.output_len // 1024}k" for k, w in WORKLOADS.items())
    g = p.add_argument_group("workload")
    g.add_argument("--workload", choices=WORKLOAD_CHOICES,
                   help=f"request shape preset, input/output tokens ({names}; SemiAnalysis InferenceX's three "
                        "sweeps) [chat]; --input-len/--output-len override it")
    if lengths:
        g.add_argument("--input-len", "--isl", dest="input_len", type=int,
                       help="prompt tokens per request, ISL [the workload's: 1024]")
        g.add_argument("--output-len", "--osl", dest="output_len", type=int,
                       help="generated tokens per request, OSL [the workload's: 1024]")


def add_slo_options(p, *, ttft: bool = True) -> None:
    """SLO flags in the field's terms: ``--min-tokens-per-s-per-user``, ``--tpot-ms``, ``--ttft-ms``.

    The speed floor defaults to :data:`econ.presets.DEFAULT_MIN_TOKENS_PER_S_PER_USER`; ``--tpot-ms T``
    is the same floor written as a time per output token (1000 / T tokens/s; the stricter of the two wins).
    """
    import argparse

    from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER as floor

    g = p.add_argument_group("service-level objectives")
    g.add_argument("--min-tokens-per-s-per-user", type=float, metavar="X",
                   help=f"SLO: minimum output tokens/s of one stream (interactivity) [{floor:g}: MLPerf v5.0 "
                        "interactive, TPOT 40 ms; 0 = no floor]")
    g.add_argument("--tpot-ms", type=float, metavar="MS",
                   help="SLO: maximum time per output token, ms (= a floor of 1000/MS tokens/s per user)")
    if ttft:
        g.add_argument("--ttft-ms", type=float, metavar="MS", help="SLO: maximum time to first token, ms [no limit]")
        g.add_argument("--max-ttft-s", type=float, help=argparse.SUPPRESS)  # the flag of earlier releases, seconds


def add_economics_options(p, *, mix: bool = True, build: bool = False, tier: bool = True) -> None:
    """The economics flags of every subcommand: power price, PUE, cost tier, finance, utilization, token mix.

    ``--tco``, ``--usd-per-gpu-hour`` (tier "custom"), ``--rental`` and ``--owned`` (short for
    ``--tco rental`` / ``--tco owned-custom``) are mutually exclusive. ``tier=False`` leaves out the cost tier and the
    finance flags (``--cost-of-capital``, ``--life-years``) for an answer they cannot change (a site's simple payback
    is owned and undiscounted): a flag is offered only where it is applied.
    """
    g = p.add_argument_group("economics")
    k = g.add_mutually_exclusive_group()
    k.add_argument("--region", help="power-price region id (econ list regions)")
    add_field_option(k, "usd_per_kwh")
    g.add_argument("--facility", help="facility class id (sets PUE and build cost; econ list facilities)")
    add_field_option(g, "pue")
    if build:
        add_field_option(g, "build_usd_per_mw_it", dest="build_usd_per_mw")
    if tier:
        t = g.add_mutually_exclusive_group()
        t.add_argument("--tco", choices=TCO_CHOICES, help=TCO_HELP + f" [{TIER_SPECS[Tier.OWNED].cli_name}]")
        add_field_option(t, "usd_per_gpu_hour", metavar="USD")
        t.add_argument("--rental", dest="tco", action="store_const", const="rental", help="short for --tco rental")
        t.add_argument("--owned", dest="tco", action="store_const", const="owned-custom",
                       help="short for --tco owned-custom")
    add_field_option(g, "utilization_frac", dest="utilization")
    if tier:
        add_field_option(g, "cost_of_capital_frac", dest="cost_of_capital")
        add_field_option(g, "accelerator_life_years", dest="life_years")
    if mix:
        g.add_argument("--input-output-mix", help="input:output tokens for the blended price [3:1]")
        add_field_option(g, "cache_hit_frac", dest="cache_hit_rate")


_ECONOMIC_FLAGS = {"usd_per_kwh": "usd_per_kwh", "pue": "pue", "build_usd_per_mw": "build_usd_per_mw_it",
                   "usd_per_gpu_hour": "usd_per_gpu_hour", "utilization": "utilization_frac",
                   "cost_of_capital": "cost_of_capital_frac", "life_years": "accelerator_life_years",
                   "cache_hit_rate": "cache_hit_frac"}
"""argparse dest -> vocabulary field of the economics flags."""


def load_scenario(args, catalog):
    """The ``--scenario FILE`` of ``args``, or None without one.

    A scenario with a custom accelerator returns it with the catalog extended (``(scenario, catalog)``).

    Raises
    ------
    InvalidInputError
        Any field the file holds that cannot be used as written (out of its range, unknown, mistyped): on the
        command line a scenario is refused rather than priced with a substituted default (the dashboard, which must
        open a stale link, substitutes and says so on the page). Every problem is listed.
    """
    path = getattr(args, "scenario", None)
    if not path:
        return None, catalog
    from econ.io.scenario import MAX_WARNINGS, load_toml_file

    sc, warnings = load_toml_file(path, catalog)
    if warnings:
        shown = "; ".join(w.split("; using the default")[0] for w in warnings[:MAX_WARNINGS])
        raise InvalidInputError(f"--scenario {path}: {shown}")
    return sc, sc.catalog(catalog)


def parse_mix(text: str) -> float:
    """'3:1' -> 3.0 input tokens per output token."""
    try:
        a, b = (float(x) for x in str(text).split(":"))
    except ValueError:
        raise InvalidInputError(f"--input-output-mix={show_value(str(text))} is not of the form I:O (e.g. 3:1)") \
            from None
    if not (a >= 0 and b > 0) or not (math.isfinite(a) and math.isfinite(b)):
        raise InvalidInputError(f"--input-output-mix={show_value(str(text))}: I must be >= 0 and O > 0")
    check_flag("input_output_mix", a / b, "--input-output-mix")
    return a / b


def check_economics(args) -> None:
    """Range-check the economics flags that were given (each error names the flag and the field's one range)."""
    for dest, name in _ECONOMIC_FLAGS.items():
        value = getattr(args, dest, None)
        if value is not None:
            FIELDS[name].check(value, shown_as=FIELDS[name].flag_name)


def economics_from(args, catalog, scenario=None, *, base=None):
    """:class:`econ.assumptions.Economics` from the economics flags, over the scenario's (or the defaults).

    An explicit ``--region``/``--usd-per-kwh`` replaces the file's power price, ``--facility`` its PUE and
    build cost; every other flag given replaces that field. ``--tco`` / ``--usd-per-gpu-hour`` set the tier.
    """
    from dataclasses import replace

    from econ.assumptions import Economics
    from econ.analyses.sweep import make_economics

    check_economics(args)
    default = Economics()
    base = base or (scenario.economics(catalog) if scenario is not None else default)
    region, kwh = getattr(args, "region", None), getattr(args, "usd_per_kwh", None)
    facility = getattr(args, "facility", None)
    if region is not None or kwh is not None:
        base = replace(base, usd_per_kwh=default.usd_per_kwh)
    if facility is not None:
        base = replace(base, pue=default.pue, build_usd_per_mw_it=default.build_usd_per_mw_it)
    tco, rate = getattr(args, "tco", None), getattr(args, "usd_per_gpu_hour", None)
    basis = "custom" if rate is not None else tco
    mix = getattr(args, "input_output_mix", None)
    return make_economics(
        catalog, region=region, facility=facility, base=base, basis=basis, usd_per_gpu_hour=rate,
        usd_per_kwh=kwh, pue=getattr(args, "pue", None), utilization_frac=getattr(args, "utilization", None),
        cost_of_capital_frac=getattr(args, "cost_of_capital", None),
        accelerator_life_years=getattr(args, "life_years", None),
        build_usd_per_mw_it=getattr(args, "build_usd_per_mw", None),
        input_output_mix=None if mix is None else parse_mix(mix),
        cache_hit_frac=getattr(args, "cache_hit_rate", None))


def workload_from(args, scenario=None) -> tuple[int, int]:
    """(input_len, output_len): explicit ``--input-len``/``--output-len``, else ``--workload``'s, else the scenario's.

    Raises
    ------
    InvalidInputError
        A length outside [1, 16,777,216] tokens.
    """
    from econ.presets import lengths
    from econ.vocabulary import MAX_CONTEXT

    name = getattr(args, "workload", None)
    given_in, given_out = getattr(args, "input_len", None), getattr(args, "output_len", None)
    check_range("--input-len", given_in, 1, MAX_CONTEXT, "tokens")
    check_range("--output-len", given_out, 1, MAX_CONTEXT, "tokens")
    if name is None and scenario is not None:
        base_in, base_out = scenario.input_len, scenario.output_len
        return (base_in if given_in is None else given_in, base_out if given_out is None else given_out)
    return lengths(name, given_in, given_out)


def slo_from(args, scenario=None) -> tuple[float, float]:
    """(min tokens/s per user, max TTFT in s) from the SLO flags, the scenario's floor, else the one default.

    ``--tpot-ms T`` is a floor of 1000 / T tokens/s; with ``--min-tokens-per-s-per-user`` too, the stricter
    wins. ``--ttft-ms`` (or the older ``--max-ttft-s``) bounds the TTFT; without one there is no limit.
    """
    from econ.presets import DEFAULT_MIN_TOKENS_PER_S_PER_USER

    speed = getattr(args, "min_tokens_per_s_per_user", None)
    tpot = getattr(args, "tpot_ms", None)
    ttft_ms, ttft_s = getattr(args, "ttft_ms", None), getattr(args, "max_ttft_s", None)
    check_flag("min_tokens_per_s_per_user", speed)
    if tpot is not None and not (tpot == tpot and 1e-3 <= tpot <= 1e6):
        raise InvalidInputError(f"--tpot-ms={show_value(tpot)} is outside [0.001, 1000000] (ms)")
    if ttft_ms is not None and not (ttft_ms == ttft_ms and 1e-3 <= ttft_ms <= 1e9):
        raise InvalidInputError(f"--ttft-ms={show_value(ttft_ms)} is outside [0.001, 1000000000] (ms)")
    if ttft_s is not None and not (ttft_s == ttft_s and ttft_s > 0):
        raise InvalidInputError(f"--max-ttft-s={show_value(ttft_s)} is outside (0, inf] (s)")
    if speed is None:
        speed = scenario.min_tokens_per_s_per_user if scenario is not None else DEFAULT_MIN_TOKENS_PER_S_PER_USER
    if tpot is not None:
        speed = max(speed, 1000.0 / tpot) if getattr(args, "min_tokens_per_s_per_user", None) is not None \
            else 1000.0 / tpot
    max_ttft = ttft_ms / 1000.0 if ttft_ms is not None else ttft_s if ttft_s is not None else math.inf
    return float(speed), float(max_ttft)


# ---------------------------------------------------------------------------------------------
# formats and speculative decoding (econ.assumptions.Decoding), the SLO percentile
# ---------------------------------------------------------------------------------------------

def add_decoding_options(p, *, skip: tuple[str, ...] = ()) -> None:
    """The flags of :class:`econ.assumptions.Decoding`: ``--weight-format``, ``--expert-format``, ``--kv-format``,
    ``--speculation``, ``--draft-tokens``, ``--acceptance``, ``--draft-model`` (each from its vocabulary field;
    not given = automatic, the engine's default for the model). ``skip``: fields a command declares itself."""
    from econ.assumptions import DECODING_FIELDS

    g = p.add_argument_group("formats and speculative decoding (not given: the release's / vendor's default)")
    for name in DECODING_FIELDS:
        if name not in skip:
            add_field_option(g, name)


LONG_CONTEXT_FIELDS: tuple[str, ...] = ("kv_offload", "prefix_cache_tier", "cp", "context_limit_tokens")
"""Issue-22 engine inputs (KV tiers, prefix-cache prefill, context parallelism) with a flag on cost and optimize."""


def add_long_context_options(p) -> None:
    """``--kv-offload``, ``--prefix-tier``, ``--cp``, ``--context-window`` (issue 22), each from its vocabulary field;
    not given = the engine's default (HBM only, no prefix physics, cp 1, the model's context)."""
    g = p.add_argument_group("long context: KV-cache tiers, prefix caching, context parallelism (not given: off)")
    for name in LONG_CONTEXT_FIELDS:
        add_field_option(g, name)


MEMORY_FIELDS: tuple[str, ...] = ("kv_memory_rule", "usable_hbm_frac")
"""How the serving engine sizes its KV cache (``econ.physics.memory.kv_pool_bytes``), with a flag on cost and
optimize; a scenario file sets them too."""


def add_memory_options(p) -> None:
    """``--kv-memory-rule`` (total: vLLM, SGLang; free: TensorRT-LLM) and ``--usable-hbm-frac``, each from its
    vocabulary field; not given = the scenario's, else the default (total, 0.9)."""
    g = p.add_argument_group("KV-cache memory (not given: the scenario's, else a share 0.9 of the total, as vLLM)")
    for name in MEMORY_FIELDS:
        add_field_option(g, name)


def given_fields(args, names) -> dict:
    """The vocabulary fields ``names`` given on the command line (a field's none token, e.g. ``--prefix-tier off``,
    counts as not given), each range-checked.

    Raises
    ------
    InvalidInputError
        A value outside its field's range, naming the flag, the value and the range.
    """
    out = {}
    for name in names:
        v = getattr(args, name, None)
        f = FIELDS[name]
        if v is None or (f.none_token and v == f.none_token):
            continue
        out[name] = f.check(v, shown_as=f.flag_name)
    return out


def memory_from(args, assumptions):
    """``assumptions`` with the given ``--kv-memory-rule`` / ``--usable-hbm-frac`` (:func:`given_fields`)."""
    given = given_fields(args, MEMORY_FIELDS)
    return assumptions.with_overrides(**given) if given else assumptions


def long_context_from(args) -> dict:
    """The given long-context flags as engine inputs (``--prefix-tier off`` = None): :func:`given_fields`."""
    return given_fields(args, LONG_CONTEXT_FIELDS)


def decoding_from(args, scenario=None):
    """:class:`econ.assumptions.Decoding` from the decoding flags, over the scenario's (flags given win).

    Raises
    ------
    InvalidInputError
        A value outside its field's range (naming the flag).
    """
    from econ.assumptions import DECODING_FIELDS, Decoding

    values = {}
    for name in DECODING_FIELDS:
        v = getattr(args, name, None)
        f = FIELDS[name]
        if isinstance(v, str) and v.strip().lower() in ("auto", f.none_token or "auto"):
            v = None
        elif v is not None:
            f.check(v, shown_as=f.flag_name)
        values[name] = v if v is not None else (getattr(scenario, name, None) if scenario is not None else None)
    _refuse_unused_decoding(values)
    return Decoding(**values)


def _refuse_unused_decoding(values: dict) -> None:
    """Refuse a speculative-decoding value the engine would not use (issue 21.1, no silent substitution): a draft
    model without ``--speculation draft`` (only that method reads it), and draft tokens or an acceptance with
    ``--speculation none``.

    Raises
    ------
    InvalidInputError
        Naming the flag, its value and the ``--speculation`` it needs.
    """
    method = values.get("spec_method")
    flag = {n: FIELDS[n].flag_name for n in ("spec_draft_model", "spec_method", "spec_draft_tokens",
                                             "spec_acceptance")}
    if values.get("spec_draft_model") is not None and method != "draft":
        raise InvalidInputError(f"{flag['spec_draft_model']}={values['spec_draft_model']} needs "
                                f"{flag['spec_method']} draft (it is the draft method's model; "
                                f"{flag['spec_method']} is {method or 'auto'})")
    if method == "none":
        for name in ("spec_draft_tokens", "spec_acceptance"):
            v = values.get(name)
            if v is not None and not (name == "spec_draft_tokens" and float(v) == 0):
                raise InvalidInputError(f"{flag[name]}={v} needs {flag['spec_method']} mtp|eagle|draft "
                                        f"({flag['spec_method']} none decodes without drafting)")


def _percentile(text: str) -> float:
    """'99', 'p99' or '99.9' -> 99.0 (the ``--slo-percentile`` type)."""
    import argparse

    t = str(text).strip().lower().removeprefix("p")
    try:
        return float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentile (50, 90, 99 or p99)") from None


def add_slo_percentile_option(p) -> None:
    """``--slo-percentile P``: judge the TPOT / TTFT SLOs at the P-th percentile (vocabulary ``slo_percentile``)."""
    f = FIELDS["slo_percentile"]
    groups = [g for g in getattr(p, "_action_groups", []) if g.title == "service-level objectives"]
    (groups[0] if groups else p).add_argument(f.flag_name, dest="slo_percentile", type=_percentile, metavar="P",
                   help=f.help_text().replace("%", "%%"))


def slo_percentile_from(args, scenario=None) -> float | None:
    """The ``--slo-percentile`` given (checked against its one range), else the scenario's, else None (means)."""
    v = getattr(args, "slo_percentile", None)
    check_flag("slo_percentile", v)
    if v is None and scenario is not None:
        v = getattr(scenario, "slo_percentile", None)
    return v
