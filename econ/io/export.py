"""Exports: result frames -> CSV, Parquet and XLSX bytes or files that are safe to open and easy to audit.

Every exporter takes a Polars frame whose column names carry their units (``usd_per_m_output_tokens``)
and writes it without changing its headers, values or row order, so a file read back with
``pl.read_csv`` / ``pl.read_excel`` equals the frame (tests/io/test_export.py):

- CSV: UTF-8, header row, polars' shortest round-trip float text. Text cells that a spreadsheet would
  run as a formula are neutralized (see :func:`neutralize_formulas`); :func:`restore_formulas` undoes it.
- Parquet: the frame as is; the metadata and assumptions ride along as JSON in the file's key-value
  metadata (``econ:metadata``, ``econ:assumptions``).
- XLSX (xlsxwriter): a *Results* sheet (frozen header, autofilter, widths, a number format and a unit
  comment per column), an *Assumptions* sheet (group, name, value, unit, source of every input), a
  *Columns* sheet (unit, format and formula of each Results column) and a *Metadata* sheet (econ
  version, data ``as_of`` dates, generation time). Text is written as text cells, never as formulas.
  With ``cost_chain=True`` the $/GPU-hour and $/M-token columns are live Excel formulas of named
  Assumptions cells and per-row hardware inputs (:func:`cost_workbook_bytes`), so changing the power
  price in Excel moves every $/M tokens figure; cached results are written too, for readers that do
  not recalculate.

:func:`write_table` writes any of them with :mod:`econ.safe_write`, the one writer of every output file: a
temporary file in the target folder, fsync, then an atomic rename; it never replaces an existing file
unless ``force=True``.

References
----------
OWASP, "CSV Injection" (https://owasp.org/www-community/attacks/CSV_Injection) and OWASP ASVS 5.0
requirement 1.2.10: prefix a single quote to cells starting with ``=``, ``+``, ``-``, ``@``, tab,
carriage return or NUL.
"""

from __future__ import annotations

import io
import json
import math
import re
from datetime import date, datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl
import xlsxwriter
from xlsxwriter.exceptions import XlsxWriterException
from xlsxwriter.utility import xl_col_to_name
from xlsxwriter.worksheet import Worksheet

import econ
from econ import units
from econ.errors import InvalidInputError
from econ.economics.pricing import usd_per_m_blended_tokens, usd_per_m_tokens
from econ.safe_write import check_target, write_bytes  # the one safe writer (re-exported here)
from econ.economics.tco import gpu_hour_cost_components, usd_per_gpu_hour_rented

FORMATS = ("csv", "parquet", "xlsx")
"""Export formats; :func:`write_table` infers one from the file suffix (``.csv``, ``.parquet``, ``.xlsx``)."""

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\0")
"""First characters that make a spreadsheet read a text cell as a formula (OWASP; ASVS 5.0 1.2.10)."""

_NEUTRALIZE_RE = r"^'*[=+\-@\t\r\x00]"
_RESTORE_RE = r"^'('*[=+\-@\t\r\x00])"

EXCEL_MAX_ROWS = 1_048_576
EXCEL_MAX_COLUMNS = 16_384
EXCEL_MAX_STRING_CHARS = 32_767
EXCEL_MAX_EXACT_INTEGER = 2**53
"""Excel's worksheet limits (Microsoft, "Excel specifications and limits"); cells hold IEEE doubles, exact
for integers up to 2**53."""

RESULTS_SHEET, ASSUMPTIONS_SHEET, COLUMNS_SHEET, METADATA_SHEET = "Results", "Assumptions", "Columns", "Metadata"

ECONOMIC_NAMES = ("basis", "usd_per_kwh", "pue", "build_usd_per_mw_it", "cost_of_capital_frac",
                  "accelerator_life_years", "facility_life_years", "opex_frac_of_capex_per_year",
                  "utilization_frac", "input_output_mix", "cache_hit_frac", "cached_input_cost_frac")
"""Economics scalars of the cost chain: named cells on the Assumptions sheet (econ.assumptions.Economics)."""

HARDWARE_INPUTS = ("all_in_capex_usd", "all_in_power_w", "rental_usd_per_hour")
"""Per-row hardware inputs of the cost chain, joined from the catalog's accelerators table by ``hardware``."""

CHAIN_COLUMNS = ("usd_per_gpu_hour_capex", "usd_per_gpu_hour_facility", "usd_per_gpu_hour_opex",
                 "usd_per_gpu_hour_power", "usd_per_gpu_hour", "usd_per_gpu_hour_rental", "usd_per_m_input_tokens",
                 "usd_per_m_output_tokens", "usd_per_m_blended_tokens", "usd_per_m_output_tokens_all_in",
                 "usd_per_m_tokens_capex", "usd_per_m_tokens_facility", "usd_per_m_tokens_opex",
                 "usd_per_m_tokens_power", "usd_per_m_tokens_rental")
"""Result columns that ``cost_chain=True`` writes as live formulas (in dependency order). The all-in $/M output
divides by ``served_output_tokens_per_s_per_gpu`` (written as a formula only when the frame has that rate); the
``usd_per_m_tokens_<part>`` split (econ.analyses.compare.hardware_comparison) is the ranked cost (the frame's
``objective``: output = all-in $/M output, blended = $/M blended) times the part's share of $/GPU-hour."""

TIER_RATE_COLUMN = "tier_usd_per_hour"
"""Per-row input of the cost chain for a tier other than owned and the catalog rental rate (hyperscaler / neocloud
TCO, 3-year and on-demand rental, custom): the tier's $/GPU-hour per hour of existence
(econ.vocabulary.TIER_SPECS; custom: the Assumptions cell usd_per_gpu_hour)."""

SPLIT_OBJECTIVES = {"output": "usd_per_m_output_tokens_all_in", "blended": "usd_per_m_blended_tokens"}
"""The ``objective`` column's values -> the cost column a ``usd_per_m_tokens_<part>`` split divides
(econ.analyses.compare.OBJECTIVES; tests/io/test_export.py checks they agree)."""

_PARTS = ("capex", "facility", "opex", "power", "rental")

CHAIN_RTOL = 1e-9
"""Relative tolerance within which a frame's cost columns must follow from its inputs before they are
written as formulas (the formulas are those of econ.economics.tco / econ.economics.pricing; rounding differs by ~1e-15)."""

_CRF_SERIES_BELOW = 1e-5
"""Below this rate the Excel CRF uses its Taylor series 1/n + (n+1) r / 2n + (n^2-1) r^2 / 12n, because
r / (1 - (1+r)^-n) cancels catastrophically as r -> 0 (no EXPM1/LOG1P in Excel). Worst relative error
of the switch over n in [0.1, 100]: 6e-11 (checked against 60-digit Decimal arithmetic)."""

# name -> (unit, Excel number format); exact names first, then the suffix rules of _unit_rule.
_UNITS_EXACT: dict[str, tuple[str, str]] = {
    "usd_per_kwh": ("USD/kWh", "$0.0000"),
    "pue": ("facility energy / IT energy", "0.00"),
    "build_usd_per_mw_it": ("USD per MW of IT load", "$#,##0"),
    "input_output_mix": ("input tokens per output token", "0.00"),
    "cost_of_capital_frac": ("1/year", "0.0%"),
    "opex_frac_of_capex_per_year": ("1/year (share of all-in capex)", "0.0%"),
    "rental_usd_per_hour": ("USD per GPU-hour (rented)", "$#,##0.00"),
    "num_gpus": ("accelerators", "#,##0"),
    "tp": ("accelerators (tensor parallel)", "0"),
    "pp": ("pipeline stages", "0"),
    "batch_size": ("sequences per replica", "#,##0"),
    "max_batch_size": ("sequences per replica", "#,##0"),
    "sweet_spot_batch": ("sequences per replica", "#,##0.0"),
    "tokens_per_s_per_user": ("tokens/s", "#,##0.0"),
    "arithmetic_intensity_flop_per_byte": ("FLOP/B", "#,##0.0"),
    "crf_accelerator": ("1/year", "0.000000"),
    "crf_facility": ("1/year", "0.000000"),
    "prefill_chunk_tokens": ("tokens", "#,##0"),
    "embedding_bytes_per_param": ("B/param", "0.00"),
    "activation_bytes": ("B/element", "0.00"),
    "year": ("year", "0"),
}


def _unit_rule(name: str) -> tuple[str, str] | None:
    n = name.lower()
    if n in _UNITS_EXACT:
        return _UNITS_EXACT[n]
    rules = (
        (n.startswith("usd_per_m_"), ("USD per million tokens", "$#,##0.000")),
        (n.startswith("usd_per_gpu_hour"), ("USD per utilized GPU-hour", "$#,##0.00")),
        (n.startswith("eta_"), ("fraction of datasheet peak", "0.0%")),
        ("tokens_per_s" in n, ("tokens/s", "#,##0")),
        (n.endswith("_frac"), ("fraction (shown as %)", "0.0%")),
        (n.endswith("_usd"), ("USD", "$#,##0")),
        (n.endswith("_bytes") or n.endswith("_bytes_per_sequence") or n == "kv_bytes_per_sequence",
         ("bytes", "#,##0")),
        (n.endswith("_flop_per_s"), ("FLOP/s", "0.000E+00")),
        (n.endswith("_bytes_per_s"), ("B/s", "0.000E+00")),
        (n.endswith("_per_s"), ("per second", "#,##0.00")),
        (n.endswith("_s"), ("s", "0.000000")),
        (n.endswith("_w"), ("W", "#,##0")),
        (n.endswith("_years") or n.endswith("_per_year"), ("year", "0.0")),
        (n.endswith("_tokens") or n.endswith("_len"), ("tokens", "#,##0")),
        (n.endswith("_gb"), ("GB (1e9 bytes)", "#,##0.0")),
    )
    for hit, rule in rules:
        if hit:
            return rule
    return None


def column_unit(name: str) -> str:
    """Unit of a column or assumption from its name (``usd_per_m_output_tokens`` -> "USD per million
    tokens"); "" when the name carries none (ids, text)."""
    rule = _unit_rule(name)
    return rule[0] if rule else ""


def column_number_format(name: str, dtype: pl.DataType | None = None) -> str | None:
    """Excel number format of a column: ``$#,##0.000`` for usd_per_m_*, ``$#,##0.00`` for
    usd_per_gpu_hour*, ``#,##0`` for tokens/s, ``0.0%`` for *_frac, ...; None = General."""
    rule = _unit_rule(name)
    if rule:
        return rule[1]
    if dtype is not None and dtype.is_integer():
        return "0"
    return None


# ---------------------------------------------------------------------------------------------------
# checks and neutralization


def _require_frame(frame, what: str = "frame") -> pl.DataFrame:
    if not isinstance(frame, pl.DataFrame):
        raise InvalidInputError(f"{what} must be a polars DataFrame, got {type(frame).__name__}")
    return frame


def _check_exportable(frame: pl.DataFrame, fmt: str) -> None:
    """Raise InvalidInputError for NaN/inf floats (all formats) and for what CSV/XLSX cannot hold."""
    for name, dtype in frame.schema.items():
        if dtype.is_float():
            bad = (~frame[name].is_finite()).fill_null(False)
            if bad.any():
                i = int(bad.arg_true()[0])
                raise InvalidInputError(
                    f"column {name} holds {frame[name][i]} in row {i}: exports hold finite numbers or "
                    f"empty cells only (a NaN/inf is a bug upstream, not a result)")
        if fmt in ("csv", "xlsx") and dtype.is_nested():
            raise InvalidInputError(f"column {name} has nested type {dtype}: {fmt} holds flat columns only "
                                    f"(use parquet, or explode/unnest it first)")
    if fmt != "xlsx":
        return
    if frame.height + 1 > EXCEL_MAX_ROWS or frame.width > EXCEL_MAX_COLUMNS:
        raise InvalidInputError(
            f"frame of {frame.height:,} rows x {frame.width:,} columns exceeds an Excel sheet "
            f"({EXCEL_MAX_ROWS - 1:,} data rows x {EXCEL_MAX_COLUMNS:,} columns); use parquet or csv")
    for name, dtype in frame.schema.items():
        if dtype.is_integer():
            col = frame[name]
            big = ((col > EXCEL_MAX_EXACT_INTEGER) | (col < -EXCEL_MAX_EXACT_INTEGER)).fill_null(False)
            if big.any():
                i = int(big.arg_true()[0])
                raise InvalidInputError(
                    f"column {name} row {i} holds {frame[name][i]}, beyond the {EXCEL_MAX_EXACT_INTEGER:,} an "
                    f"Excel cell (a double) holds exactly; use csv or parquet, or cast it to float")
    for name in frame.columns:
        if len(name) > EXCEL_MAX_STRING_CHARS:
            raise InvalidInputError(f"a column name is {len(name):,} characters long; an Excel cell holds "
                                    f"at most {EXCEL_MAX_STRING_CHARS:,}")
        if frame[name].dtype in (pl.String, pl.Categorical) or isinstance(frame[name].dtype, pl.Enum):
            lengths = frame[name].cast(pl.String).str.len_chars()
            too_long = (lengths > EXCEL_MAX_STRING_CHARS).fill_null(False)
            if too_long.any():
                i = int(too_long.arg_true()[0])
                raise InvalidInputError(
                    f"column {name} row {i} holds {lengths[i]:,} characters; an Excel cell holds at most "
                    f"{EXCEL_MAX_STRING_CHARS:,}; use csv or parquet")


def _is_text(dtype: pl.DataType) -> bool:
    return dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum)


def _needs_quote(text: str) -> bool:
    return bool(re.match(_NEUTRALIZE_RE, text))


def neutralize_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Make text cells and headers inert in a spreadsheet: prefix a single quote to every text that
    starts with ``= + - @``, tab, CR or NUL (after any run of quotes). Numbers are untouched.

    Parameters
    ----------
    frame : pl.DataFrame

    Returns
    -------
    pl.DataFrame of the same shape; String/Categorical/Enum columns come back as String.

    Notes
    -----
    OWASP "CSV Injection": a cell starting with one of those characters is evaluated by Excel,
    LibreOffice and Google Sheets ("=HYPERLINK(...)", "=cmd|'/c calc'!A1"); a leading ``'`` makes it
    text. Texts that already start with quotes followed by a trigger get one more quote, so the
    escape is reversible: :func:`restore_formulas` ∘ :func:`neutralize_formulas` is the identity.
    """
    _require_frame(frame)
    names = {c: ("'" + c if _needs_quote(c) else c) for c in frame.columns}
    exprs = []
    for c, dtype in frame.schema.items():
        if _is_text(dtype):
            s = pl.col(c).cast(pl.String)
            exprs.append(pl.when(s.str.contains(_NEUTRALIZE_RE)).then(pl.lit("'") + s).otherwise(s).alias(c))
    return frame.with_columns(exprs).rename(names)


def restore_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Inverse of :func:`neutralize_formulas`: drop the one quote it added to texts and headers (for
    reading an econ CSV export back into exactly the frame that was exported)."""
    _require_frame(frame)
    names = {c: (c[1:] if re.match(_RESTORE_RE, c) else c) for c in frame.columns}
    exprs = [pl.col(c).str.replace(_RESTORE_RE, "$1").alias(c)
             for c, dtype in frame.schema.items() if dtype == pl.String]
    return frame.with_columns(exprs).rename(names)


# ---------------------------------------------------------------------------------------------------
# metadata


def default_metadata(catalog=None) -> dict:
    """Provenance of an export: econ version, generation time (UTC, ISO 8601), data folder and the
    latest ``as_of`` date of each data table (``catalog``, default: the shipped data)."""
    if catalog is None:
        from econ.tables.catalog import load_catalog
        catalog = load_catalog()
    meta = {"econ_version": econ.__version__,
            "generated_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    meta.update({f"data_as_of_{table}": d for table, d in catalog.as_of_dates().items()})
    meta["data_dir"] = str(catalog.data_dir)
    return meta


def _metadata(metadata: dict | None, catalog) -> dict:
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    return {**default_metadata(catalog), **(metadata or {})}


def _assumptions_table(assumptions) -> pl.DataFrame | None:
    """Normalize an assumptions frame to (group, name, value, unit, source, ...) with text values."""
    if assumptions is None:
        return None
    _require_frame(assumptions, "assumptions")
    missing = [c for c in ("name", "value") if c not in assumptions.columns]
    if missing:
        raise InvalidInputError(f"assumptions frame is missing column(s) {missing}; expected at least "
                                f"name and value (econ.assumptions.assumptions_frame)")
    a = assumptions
    if "group" not in a.columns:
        a = a.with_columns(pl.lit("").alias("group"))
    if "source" not in a.columns:
        a = a.with_columns(pl.lit("").alias("source"))
    if "unit" not in a.columns:
        a = a.with_columns(pl.col("name").cast(pl.String)
                           .map_elements(column_unit, return_dtype=pl.String).alias("unit"))
    a = a.with_columns(pl.col("value").cast(pl.String), pl.col("name").cast(pl.String))
    first = ["group", "name", "value", "unit", "source"]
    return a.select(first + [c for c in a.columns if c not in first])


# ---------------------------------------------------------------------------------------------------
# CSV and Parquet


def to_csv_bytes(frame: pl.DataFrame) -> bytes:
    """The frame as UTF-8 CSV bytes, formula-injection-safe (:func:`neutralize_formulas`).

    Read it back with ``restore_formulas(pl.read_csv(data, schema=frame.schema))``.

    Raises
    ------
    InvalidInputError
        For NaN/inf floats or nested columns (naming the column and row).
    """
    _require_frame(frame)
    _check_exportable(frame, "csv")
    return neutralize_formulas(frame).write_csv().encode("utf-8")


def to_parquet_bytes(frame: pl.DataFrame, *, assumptions: pl.DataFrame | None = None,
                     metadata: dict | None = None, catalog=None) -> bytes:
    """The frame as Parquet (zstd) bytes; metadata (:func:`default_metadata` + ``metadata``) and the
    assumptions rows are stored as JSON under the key-value keys ``econ:metadata`` / ``econ:assumptions``.

    Raises
    ------
    InvalidInputError
        For NaN/inf floats (naming the column and row).
    """
    _require_frame(frame)
    _check_exportable(frame, "parquet")
    kv = {"econ:metadata": json.dumps(_metadata(metadata, catalog), default=str)}
    table = _assumptions_table(assumptions)
    if table is not None:
        kv["econ:assumptions"] = json.dumps(table.to_dicts(), default=str)
    buf = io.BytesIO()
    frame.write_parquet(buf, metadata=kv)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------------
# XLSX


class _ExactWorksheet(Worksheet):
    """A worksheet that stores numbers with Python's shortest round-trip repr (up to 17 significant
    digits) instead of xlsxwriter's ``%.16G``, so every float reads back bit for bit."""

    def _xml_number_element(self, number, attributes=[]):  # noqa: B006 - xlsxwriter's signature
        attr = "".join(f' {k}="{self._escape_attributes(v)}"' for k, v in attributes)
        v = float(number)
        negative_zero = v == 0 and math.copysign(1.0, v) < 0
        text = str(int(v)) if v.is_integer() and abs(v) < 2**53 and not negative_zero else repr(v)
        self.fh.write(f"<c{attr}><v>{text}</v></c>")


_NUMBER_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _typed(value):
    """An assumption/metadata value as the cell type it denotes: number, bool, text, or None (an empty cell) for a
    value that is not set (``str(None)``, NaN): never the text "None" or "nan" in a cell."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, str):
        if value.strip() in ("None", "nan", "NaN", "null"):
            return None
        if value in ("True", "False"):
            return value == "True"
        if _NUMBER_TEXT.match(value.strip()):
            return float(value)
        return value
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=str)
    return value


class _Book:
    """One xlsxwriter workbook in memory, with the formats and cell writers the sheets share."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.wb = xlsxwriter.Workbook(self.buf, {
            "in_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
            "strings_to_numbers": False, "nan_inf_to_errors": False, "default_date_format": "yyyy-mm-dd"})
        self.wb.set_properties({"title": "econ export", "comments": f"econ {econ.__version__}"})
        self._formats: dict[tuple, object] = {}
        self.header = self.wb.add_format({"bold": True, "bg_color": "#DDE4EE", "bottom": 1})
        self.header_quoted = self.wb.add_format({"bold": True, "bg_color": "#DDE4EE", "bottom": 1,
                                                 "quote_prefix": True})

    def fmt(self, num_format: str | None = None, *, quoted: bool = False):
        key = (num_format, quoted)
        if key not in self._formats:
            props = {}
            if num_format:
                props["num_format"] = num_format
            if quoted:
                props["quote_prefix"] = True
            self._formats[key] = self.wb.add_format(props) if props else None
        return self._formats[key]

    def sheet(self, name: str):
        try:
            return self.wb.add_worksheet(name, worksheet_class=_ExactWorksheet)
        except XlsxWriterException as exc:  # InvalidWorksheetName, DuplicateWorksheetName
            raise InvalidInputError(f"sheet_name={name!r} is not a valid, unique Excel sheet name "
                                    f"(<= 31 characters, none of []:*?/\\; {exc})") from None

    def text(self, ws, row: int, col: int, value: str, num_format: str | None = None) -> None:
        """A text cell; a formula-looking text gets Excel's quote prefix (shown as text, kept as text)."""
        ws.write_string(row, col, value, self.fmt(num_format, quoted=_needs_quote(value)))

    def value(self, ws, row: int, col: int, value, num_format: str | None = None) -> None:
        """Any scalar by type: None -> empty, bool, number, date/datetime, else text."""
        if value is None:
            return
        if isinstance(value, bool):
            ws.write_boolean(row, col, value, self.fmt(num_format))
        elif isinstance(value, (int, float, np.integer, np.floating)):
            ws.write_number(row, col, float(value), self.fmt(num_format))
        elif isinstance(value, datetime):
            if value.tzinfo is not None:
                value = value.astimezone(timezone.utc).replace(tzinfo=None)
            ws.write_datetime(row, col, value, self.fmt(num_format or "yyyy-mm-dd hh:mm:ss"))
        elif isinstance(value, date):
            ws.write_datetime(row, col, value, self.fmt(num_format or "yyyy-mm-dd"))
        else:
            self.text(ws, row, col, str(value), num_format)

    def table(self, ws, frame: pl.DataFrame, *, formats: dict[str, str | None] | None = None,
              comments: dict[str, str] | None = None, widths_cap: int = 60) -> None:
        """Header row + one column at a time, then frozen header, autofilter and column widths."""
        formats = formats or {}
        for j, (name, dtype) in enumerate(frame.schema.items()):
            ws.write_string(0, j, name, self.header_quoted if _needs_quote(name) else self.header)
            if comments and comments.get(name):
                ws.write_comment(0, j, comments[name], {"x_scale": 2.2, "y_scale": 1.4})
            nf = formats.get(name)
            s = frame[name]
            if _is_text(dtype):
                s = s.cast(pl.String)
                text_fmt, quoted_fmt = self.fmt(nf), self.fmt(nf, quoted=True)
                flags = s.str.contains(_NEUTRALIZE_RE).fill_null(False).to_list()
                for i, (v, q) in enumerate(zip(s.to_list(), flags)):
                    if v is not None:
                        ws.write_string(i + 1, j, v, quoted_fmt if q else text_fmt)
            elif dtype.is_numeric():
                f = self.fmt(nf)
                for i, v in enumerate(s.cast(pl.Float64).to_list()):
                    if v is not None:
                        ws.write_number(i + 1, j, v, f)
            elif dtype == pl.Boolean:
                f = self.fmt(nf)
                for i, v in enumerate(s.to_list()):
                    if v is not None:
                        ws.write_boolean(i + 1, j, v, f)
            elif dtype == pl.Null:
                pass
            elif dtype in (pl.Date, pl.Datetime) or isinstance(dtype, pl.Datetime):
                for i, v in enumerate(s.to_list()):
                    self.value(ws, i + 1, j, v, nf)
            else:  # Time, Duration, Decimal, Binary, Object: their text form
                for i, v in enumerate(s.cast(pl.String).to_list()):
                    if v is not None:
                        self.text(ws, i + 1, j, v, nf)
            ws.set_column(j, j, _width(name, s, widths_cap))
        if frame.width:
            ws.freeze_panes(1, 0)
            ws.autofilter(0, 0, max(frame.height, 1), frame.width - 1)

    def close(self) -> bytes:
        self.wb.close()
        return self.buf.getvalue()


def _width(name: str, s: pl.Series, cap: int) -> float:
    w = len(name) + 3  # room for the autofilter button
    if s.dtype == pl.String and s.len() and s.null_count() < s.len():
        w = max(w, int(s.str.len_chars().max()) + 2)
    elif s.dtype.is_numeric():
        w = max(w, 12)
    elif s.dtype in (pl.Date, pl.Datetime) or isinstance(s.dtype, pl.Datetime):
        w = max(w, 20)
    return float(min(w, cap))


def to_xlsx_bytes(frame: pl.DataFrame, *, sheet_name: str = RESULTS_SHEET,
                  assumptions: pl.DataFrame | None = None, metadata: dict | None = None,
                  cost_chain: bool = False, catalog=None) -> bytes:
    """The frame as an XLSX workbook: Results, Assumptions (if given), Columns and Metadata sheets.

    Parameters
    ----------
    frame : pl.DataFrame
        Headers are written as they are (units live in the names); each column gets a number format
        (:func:`column_number_format`) and a header comment with its unit.
    sheet_name : str
        Name of the results sheet.
    assumptions : pl.DataFrame, optional
        Rows of (group, name, value, unit, source): :func:`econ.assumptions.assumptions_frame` plus any
        extra rows (``unit`` is derived from the name when absent). Required for ``cost_chain``.
    metadata : dict, optional
        Added to (and overriding) :func:`default_metadata`.
    cost_chain : bool
        Write the cost columns (:data:`CHAIN_COLUMNS`) as live formulas; see :func:`cost_workbook_bytes`.
    catalog : Catalog, optional
        For the data ``as_of`` dates (default: the shipped data) and, with ``cost_chain``, the
        per-hardware capex, power and rental rate when the frame lacks those columns.

    Returns
    -------
    bytes of an .xlsx file. Read the results back with
    ``pl.read_excel(data, sheet_name=..., drop_empty_rows=False, drop_empty_cols=False,
    schema_overrides=frame.schema)``: headers, order and values come back exactly (numbers bit for
    bit, "" as "", null as an empty cell), except that readers end a sheet at its last non-empty cell, so
    trailing rows whose every cell is null are not seen (the Metadata sheet's ``rows`` has the count).

    Raises
    ------
    InvalidInputError
        NaN/inf or nested values, more than Excel holds, a bad sheet name, or (``cost_chain``) missing
        inputs or cost columns that do not follow from them.
    """
    _require_frame(frame)
    _check_exportable(frame, "xlsx")
    table = _assumptions_table(assumptions)
    reserved = {ASSUMPTIONS_SHEET, COLUMNS_SHEET, METADATA_SHEET}
    if sheet_name in reserved:
        raise InvalidInputError(f"sheet_name={sheet_name!r} is reserved; choose a name other than {sorted(reserved)}")
    if table is not None:
        _check_exportable(table, "xlsx")
    meta = _metadata(metadata, catalog)
    chain = _CostChain(frame, table, catalog) if cost_chain else None
    out = chain.frame if chain else frame

    book = _Book()
    ws = book.sheet(sheet_name)
    formats = {c: column_number_format(c, out.schema[c]) for c in out.columns}
    formulas = chain.descriptions() if chain else {}
    comments = {}
    for c in out.columns:
        unit = column_unit(c)
        parts = [f"Unit: {unit}"] if unit else []
        if c in formulas:
            parts.append(f"Live formula: {formulas[c]}")
        if parts:
            comments[c] = c + "\n" + "\n".join(parts)
    book.table(ws, out, formats=formats, comments=comments)

    if table is not None:
        wa = book.sheet(ASSUMPTIONS_SHEET)
        rows = chain.rows if chain else table
        book.table(wa, rows.with_columns(pl.lit(None, pl.String).alias("value")),
                   comments={"value": "Change a value here: every live formula on the results sheet "
                                      "that uses it recalculates."} if chain else None)
        for i, (name, v) in enumerate(zip(rows["name"].to_list(), rows["value"].to_list())):
            if chain and name in chain.assumption_formulas:
                formula, cached = chain.assumption_formulas[name]
                wa.write_formula(i + 1, 2, formula, book.fmt(column_number_format(name)), cached)
            else:
                typed = _typed(v)
                book.value(wa, i + 1, 2, typed, column_number_format(name) if isinstance(typed, float) else None)
        wa.set_column(2, 2, 16)
        if chain:
            chain.define_names(book.wb)
    if chain:
        chain.write_formulas(book, ws, formats)

    col_rows = pl.DataFrame({
        "column": out.columns,
        "unit": [column_unit(c) for c in out.columns],
        "excel_number_format": [formats[c] or "General" for c in out.columns],
        "formula": [formulas.get(c, "") for c in out.columns],
    }, schema={"column": pl.String, "unit": pl.String, "excel_number_format": pl.String, "formula": pl.String})
    book.table(book.sheet(COLUMNS_SHEET), col_rows, widths_cap=90)

    meta_rows = {**meta, "rows": frame.height, "columns": frame.width,
                 "formula_injection": "text cells starting with = + - @ tab CR or NUL are stored as text "
                                      "with Excel's quote prefix (OWASP CSV Injection)"}
    if chain:
        meta_rows["cost_chain"] = ("usd_per_gpu_hour* and usd_per_m_* on the results sheet are live formulas "
                                   "of the named cells on the Assumptions sheet and the per-row hardware "
                                   "inputs (econ.economics.tco, econ.economics.pricing); cached values match econ's. "
                                   "Each row is a fixed deployment: an edit reprices it, it does not search again "
                                   "(other inputs may make another deployment the cheapest: rerun econ for that)")
    wm = book.sheet(METADATA_SHEET)
    wm.write_string(0, 0, "key", book.header)
    wm.write_string(0, 1, "value", book.header)
    for i, (k, v) in enumerate(meta_rows.items()):
        book.text(wm, i + 1, 0, str(k))
        book.value(wm, i + 1, 1, _typed(v) if not isinstance(v, str) else v)
    wm.set_column(0, 0, 28)
    wm.set_column(1, 1, 70)
    return book.close()


# ---------------------------------------------------------------------------------------------------
# the live cost chain


def _num(x: float) -> str:
    """A constant as Excel formula text (integers without a decimal point)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else repr(x)


def crf_formula(rate: str, life: str) -> str:
    """Excel text of the capital recovery factor r / (1 - (1+r)^-n), with a series for tiny r.

    Parameters
    ----------
    rate, life : str
        Excel references (names or cells) of the rate [1/year] and the life [year].

    Notes
    -----
    Same quantity as :func:`econ.economics.tco.capital_recovery_factor`; see :data:`_CRF_SERIES_BELOW`.
    """
    r, n = rate, life
    return (f"IF({r}<{_CRF_SERIES_BELOW!r},1/{n}+({n}+1)*{r}/(2*{n})+({n}^2-1)*{r}^2/(12*{n}),"
            f"{r}/(1-(1+{r})^(-{n})))")


class _CostChain:
    """Inputs, Python check and Excel formulas of the cost chain of a cost frame.

    Formulas (econ.economics.tco.gpu_hour_cost_components, usd_per_gpu_hour_rented; econ.economics.pricing):
    capex = C * CRF(r, n_gpu) / (8760 u); facility = build * P / 1e6 * CRF(r, n_fac) / (8760 u);
    opex = C * opex_frac / (8760 u); power = P / 1000 * PUE * usd_per_kwh (owned rows; 0 for rented);
    usd_per_gpu_hour = owned sum, or rental / u; usd_per_m_x = usd_per_gpu_hour / (3600 tps_x) * 1e6;
    blended = (mix * in * (1 - h + h f) + out) / (mix + 1).
    """

    def __init__(self, frame: pl.DataFrame, table: pl.DataFrame | None, catalog):
        if table is None:
            raise InvalidInputError("cost_chain=True needs assumptions= (econ.assumptions.assumptions_frame "
                                    "with the economics rows): the formulas refer to them")
        present = [c for c in CHAIN_COLUMNS if c in frame.columns]
        if not present:
            raise InvalidInputError(
                f"cost_chain=True but the frame has none of the cost columns {list(CHAIN_COLUMNS)}")
        if "served_output_tokens_per_s_per_gpu" not in frame.columns:  # no rate: the all-in figure stays a value
            present = [c for c in present if c != "usd_per_m_output_tokens_all_in"]
        self.split_of = self._split_of(frame)
        if self.split_of is None:
            present = [c for c in present if not c.startswith("usd_per_m_tokens_")]
        frame = self._with_hardware(frame, catalog)
        frame = self._with_tier_rate(frame, table, catalog)
        self.chain = present
        self.table = table
        self.height = frame.height
        # economics: a named Assumptions cell, or a per-row column when the frame varies it
        self.scalar: dict[str, object] = {}
        names = table["name"].to_list()
        values = table["value"].to_list()
        groups = table["group"].to_list()
        for name in ECONOMIC_NAMES:
            hits = [i for i, n in enumerate(names) if n == name]
            if hits:
                i = next((k for k in hits if groups[k] == "economics"), hits[0])
                v = values[i] if name == "basis" else _typed(values[i])
                if name != "basis" and not isinstance(v, float):
                    raise InvalidInputError(f"assumption {name}={values[i]!r} is not a number")
                self.scalar[name] = (i, v)
        self.row_col: set[str] = set()
        self.echo: set[str] = set()
        costed = frame.select(pl.any_horizontal(pl.col(present).is_not_null())).to_series()  # rows with a cost
        for name in ECONOMIC_NAMES:
            if name in frame.columns:
                s = frame[name]
                if (s.is_null() & costed).any():  # a row without costs (no deployment) needs no inputs
                    raise InvalidInputError(f"column {name} has empty cells (first row "
                                            f"{int((s.is_null() & costed).arg_true()[0])}); the cost formulas need "
                                            f"a value")
                if name in self.scalar and (s == self.scalar[name][1]).all():
                    self.echo.add(name)  # constant = the assumption: written as =name, so it follows the cell
                else:
                    self.row_col.add(name)
            elif name not in self.scalar:
                raise InvalidInputError(f"cost_chain=True needs {name!r} as an assumptions row or a frame column")
        # the token rates the $/M divide by: the engine's billed_* (per charged accelerator-hour: a pool below full
        # use, a disaggregated unit's pools) where the frame has them, else the phase rates
        self.rate = {side: (f"billed_{side}_tokens_per_s_per_gpu" if f"billed_{side}_tokens_per_s_per_gpu"
                            in frame.columns else f"{side}_tokens_per_s_per_gpu") for side in ("input", "output")}
        self.rate["all_in"] = "served_output_tokens_per_s_per_gpu"
        self.rented = TIER_RATE_COLUMN if TIER_RATE_COLUMN in frame.columns else "rental_usd_per_hour"
        needed = ["basis", self.rate["output"], self.rate["input"], *HARDWARE_INPUTS]
        missing = [c for c in needed if c not in frame.columns and c not in self.scalar]
        if missing:
            raise InvalidInputError(f"cost_chain=True needs column(s) {missing} in the frame")
        self.frame = frame
        self._check_values()
        self.rows, self.assumption_formulas = self._assumption_rows()
        self.hardware_links = self._hardware_links()

    @staticmethod
    def _split_of(frame: pl.DataFrame) -> str | None:
        """The cost column the ``usd_per_m_tokens_<part>`` split divides (from the one ``objective`` of the frame),
        or None when the frame has no split or no single objective."""
        if not any(f"usd_per_m_tokens_{p}" in frame.columns for p in _PARTS) or "objective" not in frame.columns:
            return None
        objectives = frame["objective"].drop_nulls().unique().to_list()
        if len(objectives) != 1 or SPLIT_OBJECTIVES.get(objectives[0]) not in frame.columns:
            return None
        return SPLIT_OBJECTIVES[objectives[0]]

    @staticmethod
    def _with_tier_rate(frame: pl.DataFrame, table: pl.DataFrame, catalog) -> pl.DataFrame:
        """The frame plus :data:`TIER_RATE_COLUMN` when a row's tier is neither owned nor the catalog rental rate:
        the tier's first non-missing rate column of the accelerator (econ.vocabulary.TIER_SPECS, the engine's
        econ.engine.core.tier_rate), the custom rate of the assumptions, the catalog rental rate for tier rental."""
        from econ.vocabulary import TIER_SPECS, Tier
        if "basis" in frame.columns:
            tiers = set(frame["basis"].drop_nulls().unique().to_list())
        else:
            hit = table.filter(pl.col("name") == "basis")["value"].to_list()
            tiers = set(hit[:1])
        if tiers <= {Tier.OWNED.value, Tier.RENTAL.value} or TIER_RATE_COLUMN in frame.columns:
            return frame
        basis = frame["basis"] if "basis" in frame.columns else pl.Series([next(iter(tiers))] * frame.height)
        custom = table.filter(pl.col("name") == "usd_per_gpu_hour")["value"].to_list()
        custom_rate = _typed(custom[0]) if custom else None
        acc = ({r["id"]: r for r in catalog.accelerators.iter_rows(named=True)} if catalog is not None else {})
        hw = frame["hardware"].to_list() if "hardware" in frame.columns else [None] * frame.height
        rates = []
        for b, h, rental in zip(basis.to_list(), hw, frame["rental_usd_per_hour"].to_list()):
            rate = None
            if b == Tier.RENTAL.value:
                rate = rental
            elif b == Tier.CUSTOM.value:
                rate = custom_rate if isinstance(custom_rate, float) else None
            elif b is not None and b != Tier.OWNED.value:
                for col in TIER_SPECS[Tier(b)].rate_columns:
                    v = acc.get(h, {}).get(col)
                    if v is not None and v == v:
                        rate = float(v)
                        break
            rates.append(rate)
        return frame.with_columns(pl.Series(TIER_RATE_COLUMN, rates, dtype=pl.Float64))

    @staticmethod
    def _with_hardware(frame: pl.DataFrame, catalog) -> pl.DataFrame:
        absent = [c for c in HARDWARE_INPUTS if c not in frame.columns]
        if not absent:
            return frame
        if catalog is None or "hardware" not in frame.columns:
            raise InvalidInputError(f"cost_chain=True needs column(s) {absent}, or a 'hardware' column and "
                                    f"catalog= to join them from the accelerators table")
        from econ.tables.catalog import check_ids
        check_ids("hardware", frame["hardware"].drop_nulls().unique().to_list(), catalog.accelerators["id"].to_list())
        hw = catalog.accelerators.select(pl.col("id").alias("hardware"),
                                         *[pl.col(c).cast(pl.Float64) for c in absent])
        return frame.join(hw, on="hardware", how="left", maintain_order="left")

    def _inputs(self) -> dict[str, np.ndarray]:
        f, n = self.frame, self.height
        x = {}
        for name in ECONOMIC_NAMES:
            if name in f.columns:
                x[name] = f[name].to_numpy() if name == "basis" else f[name].cast(pl.Float64).to_numpy()
            else:
                v = self.scalar[name][1]
                x[name] = np.full(n, v, dtype=object if name == "basis" else float)
        for c in (*HARDWARE_INPUTS, self.rented, *self.rate.values()):
            x[c] = (f[c].cast(pl.Float64).fill_null(np.nan).to_numpy() if c in f.columns
                    else np.full(self.height, np.nan))
        return x

    def _check_values(self) -> None:
        """The frame's cost columns must follow from the inputs the formulas use (else the workbook
        would show one number and recalculate to another)."""
        x = self._inputs()
        owned = x["basis"] == "owned"
        with np.errstate(all="ignore"):
            parts = gpu_hour_cost_components(
                x["all_in_capex_usd"], x["all_in_power_w"], x["build_usd_per_mw_it"], x["pue"], x["usd_per_kwh"],
                x["cost_of_capital_frac"], x["accelerator_life_years"], x["facility_life_years"],
                x["opex_frac_of_capex_per_year"], x["utilization_frac"])
            gpu_hour = np.where(owned, parts["capex"] + parts["facility"] + parts["opex"] + parts["power"],
                                usd_per_gpu_hour_rented(x[self.rented], x["utilization_frac"]))
            usd_in = usd_per_m_tokens(gpu_hour, x[self.rate["input"]])
            usd_out = usd_per_m_tokens(gpu_hour, x[self.rate["output"]])
            expect = {f"usd_per_gpu_hour_{k}": np.where(owned, v, 0.0) for k, v in parts.items()}
            blended = usd_per_m_blended_tokens(usd_in, usd_out, x["input_output_mix"], x["cache_hit_frac"],
                                               x["cached_input_cost_frac"])
            expect.update(usd_per_gpu_hour=gpu_hour, usd_per_m_input_tokens=usd_in, usd_per_m_output_tokens=usd_out,
                          usd_per_m_blended_tokens=blended, usd_per_gpu_hour_rental=np.where(owned, 0.0, gpu_hour),
                          usd_per_m_output_tokens_all_in=usd_per_m_tokens(gpu_hour, x[self.rate["all_in"]]))
            if self.split_of is not None:  # the ranked cost times each part's share of $/GPU-hour
                ranked = expect[self.split_of]
                for p in _PARTS:
                    expect[f"usd_per_m_tokens_{p}"] = ranked * expect[f"usd_per_gpu_hour_{p}"] / gpu_hour
        for c in self.chain:
            got = self.frame[c].cast(pl.Float64).to_numpy()
            has = ~np.isnan(got)
            want = expect[c]
            ok = ~has | (got == want) | np.isclose(got, want, rtol=CHAIN_RTOL, atol=0.0)
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                raise InvalidInputError(
                    f"column {c} row {i} is {got[i]:.10g} but the cost chain of its inputs gives {want[i]:.10g} "
                    f"(hardware {self.frame['hardware'][i] if 'hardware' in self.frame.columns else '?'}); "
                    f"was the frame computed with other economics than the assumptions passed?")

    def descriptions(self) -> dict[str, str]:
        """Column -> human text of its live formula (for header comments and the Columns sheet)."""
        d = {
            "usd_per_gpu_hour_capex": "owned: all_in_capex_usd * crf_accelerator / (8760 * utilization_frac); "
                                      "rented: 0",
            "usd_per_gpu_hour_facility": "owned: build_usd_per_mw_it * all_in_power_w / 1e6 * crf_facility / "
                                         "(8760 * utilization_frac); rented: 0",
            "usd_per_gpu_hour_opex": "owned: all_in_capex_usd * opex_frac_of_capex_per_year / "
                                     "(8760 * utilization_frac); rented: 0",
            "usd_per_gpu_hour_power": "owned: all_in_power_w / 1000 * pue * usd_per_kwh; rented: 0",
            "usd_per_gpu_hour": "owned: capex + facility + opex + power; "
                                f"rented: {self.rented} / utilization_frac",
            "usd_per_gpu_hour_rental": "owned: 0; rented: usd_per_gpu_hour",
            "usd_per_m_output_tokens_all_in": f"usd_per_gpu_hour / (3600 * {self.rate['all_in']}) * 1e6",
            "usd_per_m_input_tokens": f"usd_per_gpu_hour / (3600 * {self.rate['input']}) * 1e6",
            "usd_per_m_output_tokens": f"usd_per_gpu_hour / (3600 * {self.rate['output']}) * 1e6",
            "usd_per_m_blended_tokens": "(input_output_mix * in * (1 - cache_hit_frac + cache_hit_frac * "
                                        "cached_input_cost_frac) + out) / (input_output_mix + 1)",
        }
        for p in _PARTS:
            d[f"usd_per_m_tokens_{p}"] = f"{self.split_of} * usd_per_gpu_hour_{p} / usd_per_gpu_hour"
        out = {c: d[c] for c in self.chain}
        if self.rented == TIER_RATE_COLUMN:
            out[TIER_RATE_COLUMN] = ("the tier's $/GPU-hour per hour of existence (rental rows: =rental_usd_per_hour; "
                                     "custom rows: =the Assumptions cell usd_per_gpu_hour; else the catalog's rate)")
        out.update({c: f"={c} (the Assumptions cell)" for c in self.echo})
        out.update({c: "=the Assumptions row <hardware>." + c for c in HARDWARE_INPUTS if self.hardware_links})
        return out

    def _assumption_rows(self) -> tuple[pl.DataFrame, dict[str, tuple[str, float]]]:
        """The assumptions table plus the derived CRF rows the formulas name (formula, cached value)."""
        from econ.economics.tco import capital_recovery_factor
        extra, formulas = [], {}
        for crf, life in (("crf_accelerator", "accelerator_life_years"), ("crf_facility", "facility_life_years")):
            if "cost_of_capital_frac" in self.row_col or life in self.row_col:
                continue  # per-row CRF: computed inline in the results sheet
            r, n = self.scalar["cost_of_capital_frac"][1], self.scalar[life][1]
            formulas[crf] = ("=" + crf_formula("cost_of_capital_frac", life), float(capital_recovery_factor(r, n)))
            extra.append({"group": "derived", "name": crf, "value": None, "unit": "1/year",
                          "source": f"capital recovery factor r / (1 - (1+r)^-n) of cost_of_capital_frac and "
                                    f"{life} (econ.economics.tco.capital_recovery_factor; annuity formula)"})
        rows = self.table
        if extra:
            rows = pl.concat([rows, pl.DataFrame(extra, schema={c: pl.String for c in extra[0]})],
                             how="diagonal_relaxed")
        return rows, formulas

    def _hardware_links(self) -> dict[tuple[str, str], int]:
        """(hardware id, input column) -> Assumptions row index of a ``<id>.<column>`` row whose value
        equals the frame's, so the Results cell can be a live reference to it."""
        if "hardware" not in self.frame.columns:
            return {}
        index = {n: i for i, n in enumerate(self.rows["name"].to_list())}
        values = self.rows["value"].to_list()
        links = {}
        pairs = self.frame.select("hardware", *HARDWARE_INPUTS).unique().iter_rows(named=True)
        for r in pairs:
            for c in HARDWARE_INPUTS:
                i = index.get(f"{r['hardware']}.{c}")
                if i is not None and r[c] is not None and _typed(values[i]) == r[c]:
                    links[(r["hardware"], c)] = i
        return links

    def define_names(self, wb) -> None:
        names = self.rows["name"].to_list()
        for n in [*self.scalar, *self.assumption_formulas]:
            i = names.index(n) if n not in self.scalar else self.scalar[n][0]
            if wb.define_name(n, f"='{ASSUMPTIONS_SHEET}'!$C${i + 2}") != 0:  # pragma: no cover
                raise InvalidInputError(f"cannot define the Excel name {n!r}")

    def write_formulas(self, book: _Book, ws, formats: dict) -> None:
        cols = {c: j for j, c in enumerate(self.frame.columns)}
        values = {c: self.frame[c].to_list() for c in self.chain + sorted(self.echo)}
        H = _num(units.HOURS_PER_YEAR)

        def cell(c, row):
            return f"{xl_col_to_name(cols[c])}{row + 1}"

        for name in sorted(self.echo):
            f = book.fmt(formats.get(name))
            for i, v in enumerate(values[name]):
                if v is not None:
                    ws.write_formula(i + 1, cols[name], f"={name}", f, v)
        if self.rented == TIER_RATE_COLUMN:  # the tier rate follows its input cell where it has one
            f = book.fmt(formats.get(TIER_RATE_COLUMN))
            names = self.rows["name"].to_list()
            custom = names.index("usd_per_gpu_hour") if "usd_per_gpu_hour" in names else None
            basis = (self.frame["basis"].to_list() if "basis" in self.frame.columns
                     else [self.scalar["basis"][1]] * self.height)
            for i, (b, v) in enumerate(zip(basis, self.frame[TIER_RATE_COLUMN].to_list())):
                if v is None:
                    continue
                if b == "rental":
                    ws.write_formula(i + 1, cols[TIER_RATE_COLUMN], f"={cell('rental_usd_per_hour', i + 1)}", f, v)
                elif b == "custom" and custom is not None:
                    ws.write_formula(i + 1, cols[TIER_RATE_COLUMN], f"='{ASSUMPTIONS_SHEET}'!$C${custom + 2}", f, v)
        if self.hardware_links:
            hw = self.frame["hardware"].to_list()
            for c in HARDWARE_INPUTS:
                f = book.fmt(formats.get(c))
                for i, (h, v) in enumerate(zip(hw, self.frame[c].to_list())):
                    k = self.hardware_links.get((h, c))
                    if k is not None:
                        ws.write_formula(i + 1, cols[c], f"='{ASSUMPTIONS_SHEET}'!$C${k + 2}", f, v)

        for i in range(self.height):
            row = i + 1

            def ref(name):
                return cell(name, row) if name in cols and (name in self.row_col or name in self.echo
                                                            or name not in ECONOMIC_NAMES) else name
            R = {n: ref(n) for n in (*ECONOMIC_NAMES, *HARDWARE_INPUTS, self.rented, *self.rate.values())}
            for crf, life in (("crf_accelerator", "accelerator_life_years"), ("crf_facility", "facility_life_years")):
                inline = f"({crf_formula(R['cost_of_capital_frac'], R[life])})"
                R[crf] = crf if crf in self.assumption_formulas else inline
            owned = f'{R["basis"]}="owned"'
            paid = f'({H}*{R["utilization_frac"]})'
            expr = {
                "usd_per_gpu_hour_capex": f'IF({owned},{R["all_in_capex_usd"]}*{R["crf_accelerator"]}/{paid},0)',
                "usd_per_gpu_hour_facility": f'IF({owned},{R["build_usd_per_mw_it"]}*{R["all_in_power_w"]}/'
                                             f'{_num(units.W_PER_MW)}*{R["crf_facility"]}/{paid},0)',
                "usd_per_gpu_hour_opex": f'IF({owned},{R["all_in_capex_usd"]}*{R["opex_frac_of_capex_per_year"]}'
                                         f'/{paid},0)',
                "usd_per_gpu_hour_power": f'IF({owned},{R["all_in_power_w"]}/{_num(units.W_PER_KW)}*{R["pue"]}*'
                                          f'{R["usd_per_kwh"]},0)',
            }
            for k in list(expr):  # later formulas use the cell if the column exists, else the expression
                R[k] = cell(k, row) if k in cols else f"({expr[k]})"
            expr["usd_per_gpu_hour"] = (f'IF({owned},{R["usd_per_gpu_hour_capex"]}+{R["usd_per_gpu_hour_facility"]}+'
                                        f'{R["usd_per_gpu_hour_opex"]}+{R["usd_per_gpu_hour_power"]},'
                                        f'{R[self.rented]}/{R["utilization_frac"]})')
            R["usd_per_gpu_hour"] = (cell("usd_per_gpu_hour", row) if "usd_per_gpu_hour" in cols
                                     else f'({expr["usd_per_gpu_hour"]})')
            for side in ("input", "output"):
                k = f"usd_per_m_{side}_tokens"
                expr[k] = (f'{R["usd_per_gpu_hour"]}/({_num(units.SECONDS_PER_HOUR)}*'
                           f'{R[self.rate[side]]})*{_num(units.TOKENS_PER_M)}')
                R[k] = cell(k, row) if k in cols else f"({expr[k]})"
            m, h, fc = R["input_output_mix"], R["cache_hit_frac"], R["cached_input_cost_frac"]
            expr["usd_per_m_blended_tokens"] = (f'({m}*({R["usd_per_m_input_tokens"]}*(1-{h}+{h}*{fc}))+'
                                                f'{R["usd_per_m_output_tokens"]})/({m}+1)')
            R["usd_per_m_blended_tokens"] = (cell("usd_per_m_blended_tokens", row) if "usd_per_m_blended_tokens" in cols
                                             else f'({expr["usd_per_m_blended_tokens"]})')
            expr["usd_per_gpu_hour_rental"] = f'IF({owned},0,{R["usd_per_gpu_hour"]})'
            R["usd_per_gpu_hour_rental"] = (cell("usd_per_gpu_hour_rental", row) if "usd_per_gpu_hour_rental" in cols
                                            else f'({expr["usd_per_gpu_hour_rental"]})')
            if "served_output_tokens_per_s_per_gpu" in cols:
                expr["usd_per_m_output_tokens_all_in"] = (
                    f'{R["usd_per_gpu_hour"]}/({_num(units.SECONDS_PER_HOUR)}*'
                    f'{R["served_output_tokens_per_s_per_gpu"]})*{_num(units.TOKENS_PER_M)}')
                R["usd_per_m_output_tokens_all_in"] = (
                    cell("usd_per_m_output_tokens_all_in", row) if "usd_per_m_output_tokens_all_in" in cols
                    else f'({expr["usd_per_m_output_tokens_all_in"]})')
            if self.split_of is not None:
                for p in _PARTS:
                    expr[f"usd_per_m_tokens_{p}"] = (f'{R[self.split_of]}*{R[f"usd_per_gpu_hour_{p}"]}/'
                                                      f'{R["usd_per_gpu_hour"]}')
            for c in self.chain:
                v = values[c][i]
                if v is not None:  # infeasible rows stay empty: no #DIV/0! from a null throughput
                    ws.write_formula(row, cols[c], "=" + expr[c], book.fmt(formats.get(c)), v)


def cost_assumptions_frame(catalog, assumptions, economics, *, hardware=None,
                           extra: pl.DataFrame | list[dict] | None = None) -> pl.DataFrame:
    """Every input of a cost table as (group, name, value, unit, source) rows.

    Parameters
    ----------
    catalog : Catalog
    assumptions : econ.assumptions.Assumptions
    economics : econ.assumptions.Economics
    hardware : iterable of str, optional
        Accelerator ids whose capex, power and rental rate (with their catalog source and as_of) are
        listed in group "hardware".
    extra : frame or list of dicts, optional
        Further rows (e.g. the scenario: model, precision, batch), appended as given.
    """
    from econ.assumptions import assumptions_frame
    base = assumptions_frame(assumptions, economics).with_columns(
        pl.col("name").map_elements(column_unit, return_dtype=pl.String).alias("unit"))
    base = base.select("group", "name", "value", "unit", "source")
    parts = [base]
    if hardware is not None:
        ids = list(dict.fromkeys(hardware))
        acc = catalog.accelerators.filter(pl.col("id").is_in(ids))
        rows = []
        for r in acc.iter_rows(named=True):
            for c in HARDWARE_INPUTS:
                rows.append({"group": "hardware", "name": f"{r['id']}.{c}",
                             "value": None if r[c] is None else repr(float(r[c])), "unit": column_unit(c),
                             "source": f"accelerators.csv ({r['source']}; as_of {r['as_of']})"})
        if rows:
            parts.append(pl.DataFrame(rows, schema={c: pl.String for c in base.columns}))
    if extra is not None:
        if isinstance(extra, pl.DataFrame):
            e = extra.with_columns([pl.col(c).cast(pl.String) for c in extra.columns])
        else:
            keys = list(dict.fromkeys(k for row in extra for k in row))
            e = pl.DataFrame([{k: (None if row.get(k) is None else str(row[k])) for k in keys} for row in extra],
                             schema={k: pl.String for k in keys})
        parts.append(e)
    return pl.concat(parts, how="diagonal_relaxed")


def cost_workbook_bytes(cost_frame: pl.DataFrame, catalog, economics, assumptions=None, *,
                        metadata: dict | None = None, extra_assumptions=None,
                        sheet_name: str = RESULTS_SHEET) -> bytes:
    """An XLSX workbook of a cost table whose cost chain is live Excel formulas.

    Parameters
    ----------
    cost_frame : pl.DataFrame
        From :func:`econ.analyses.sweep.evaluate` or :func:`econ.analyses.sweep.cost_table` (needs ``hardware``,
        ``basis``, ``output_tokens_per_s_per_gpu``, ``input_tokens_per_s_per_gpu`` and at least one
        of :data:`CHAIN_COLUMNS`).
    catalog : Catalog
        Supplies ``all_in_capex_usd``, ``all_in_power_w``, ``rental_usd_per_hour`` per hardware id
        (appended as Results columns) and the data ``as_of`` dates.
    economics : econ.assumptions.Economics
        The economics ``cost_frame`` was computed with; its scalars become named cells
        (``usd_per_kwh``, ``pue``, ...) on the Assumptions sheet, plus ``crf_accelerator`` and
        ``crf_facility``.
    assumptions : econ.assumptions.Assumptions, optional
        The performance assumptions (listed; default ``econ.assumptions.DEFAULT``).
    metadata : dict, optional
    extra_assumptions : frame or list of dicts, optional
        More (group, name, value, unit, source) rows, e.g. the scenario.

    Returns
    -------
    bytes of an .xlsx file. In Excel or LibreOffice, changing ``usd_per_kwh`` on the Assumptions sheet
    recalculates usd_per_gpu_hour_power, usd_per_gpu_hour and every usd_per_m_* of owned rows.

    Raises
    ------
    InvalidInputError
        If the frame's costs do not follow from ``economics`` and the catalog within 1e-9 relative (the
        workbook would otherwise recalculate to other numbers than it shows), or inputs are missing.
    """
    from econ.assumptions import DEFAULT
    hardware = cost_frame["hardware"].to_list() if "hardware" in cost_frame.columns else None
    table = cost_assumptions_frame(catalog, assumptions or DEFAULT, economics, hardware=hardware,
                                   extra=extra_assumptions)
    return to_xlsx_bytes(cost_frame, sheet_name=sheet_name, assumptions=table, metadata=metadata,
                         cost_chain=True, catalog=catalog)


# ---------------------------------------------------------------------------------------------------
# files


def format_of(path, fmt: str | None = None) -> str:
    """The export format: ``fmt`` if given, else from the suffix (.csv, .parquet/.pq, .xlsx).

    Raises
    ------
    InvalidInputError
        For an unknown ``fmt`` or suffix.
    """
    if fmt is not None:
        f = str(fmt).lower().lstrip(".")
        if f not in FORMATS:
            raise InvalidInputError(f"format={fmt!r} is not one of {list(FORMATS)}")
        return f
    suffix = Path(path).suffix.lower()
    found = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx"}.get(suffix)
    if found is None:
        raise InvalidInputError(f"cannot tell the format of {str(path)!r} from its suffix {suffix or '(none)'!r}; "
                                f"use .csv, .parquet or .xlsx, or give the format (one of {list(FORMATS)})")
    return found


def write_table(frame: pl.DataFrame, path, fmt: str | None = None, *, force: bool = False,
                assumptions: pl.DataFrame | None = None, metadata: dict | None = None,
                cost_chain: bool = False, catalog=None, force_hint: str = "force=True") -> Path:
    """Export ``frame`` to ``path`` as CSV, Parquet or XLSX, atomically.

    Parameters
    ----------
    frame : pl.DataFrame
    path : str or Path
    fmt : {"csv", "parquet", "xlsx"}, optional
        Default: from the suffix (:func:`format_of`).
    force : bool
        Replace an existing file (atomically). Default False: an existing file raises.
    force_hint : str
        How the caller's user asks for ``force`` (``"--force"`` on the CLI), quoted when refusing.
    assumptions, metadata, cost_chain, catalog
        As in :func:`to_xlsx_bytes` (XLSX) and :func:`to_parquet_bytes` (Parquet; no formulas there,
        ``cost_chain`` is ignored). CSV carries the table only.

    Returns
    -------
    Path written.

    Raises
    ------
    InvalidInputError
        Unknown format, existing file without ``force``, missing folder, a failed write (no partial
        file is left), or a table the format cannot hold (see the ``to_*_bytes`` functions).
    """
    _require_frame(frame)
    path = Path(path)
    f = format_of(path, fmt)
    check_target(path, force, force_hint=force_hint)  # fail before the work when the answer is already no
    if f == "csv":
        data = to_csv_bytes(frame)
    elif f == "parquet":
        data = to_parquet_bytes(frame, assumptions=assumptions, metadata=metadata, catalog=catalog)
    else:
        data = to_xlsx_bytes(frame, assumptions=assumptions, metadata=metadata, cost_chain=cost_chain,
                             catalog=catalog)
    return write_bytes(data, path, force=force, force_hint=force_hint)


__all__ = [
    "FORMATS", "FORMULA_TRIGGERS", "CHAIN_COLUMNS", "ECONOMIC_NAMES", "HARDWARE_INPUTS",
    "neutralize_formulas", "restore_formulas", "column_unit", "column_number_format", "default_metadata",
    "to_csv_bytes", "to_parquet_bytes", "to_xlsx_bytes", "crf_formula", "cost_assumptions_frame",
    "cost_workbook_bytes", "format_of", "check_target", "write_bytes", "write_table",
]

