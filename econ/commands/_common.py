"""Shared CLI helpers: catalog loading, output formatting, flag validation."""

from __future__ import annotations

import json
import math
import sys

import polars as pl

from econ.catalog import load_catalog
from econ.errors import InvalidInputError


def add_data_dir(p) -> None:
    p.add_argument("--data-dir", metavar="DIR", help="folder with your own data/*.csv (missing files fall back to the shipped ones)")


def catalog_from(args):
    return load_catalog(getattr(args, "data_dir", None))


def parse_int_list(flag: str, text: str, lo: int, hi: int) -> list[int]:
    """'1,8,64' -> [1, 8, 64]; each value checked against [lo, hi] with the flag named."""
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
            raise InvalidInputError(f"{flag}={show_value(v)} is outside [{lo}, {hi}]")
        out.append(v)
    return out


def show_value(value, limit: int = 40) -> str:
    """A flag value for a message: numbers as %g (a huge integer as its digit count), text quoted and cut.

    Never raises (``f"{10**400:g}"`` would raise OverflowError).
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        if abs(value) < 10**15:
            return str(value)
        try:
            return f"{float(value):g}"
        except OverflowError:
            return f"a {len(str(abs(value))) if abs(value) < 10**4000 else 'more than 4000'}-digit integer"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 10**15 else f"{value:g}"
    text = repr(str(value))
    return text if len(text) <= limit else text[:limit] + f"...' ({len(str(value)):,} characters)"


def check_range(flag: str, value, lo: float, hi: float, unit: str = "") -> None:
    """Raise InvalidInputError unless ``lo <= value <= hi`` (None passes: the flag was not given).

    Exact for any Python int (no conversion to float that could overflow) and false for NaN.
    """
    if value is None:
        return
    if not (value == value) or not lo <= value <= hi:
        u = f" ({unit})" if unit else ""
        raise InvalidInputError(f"{flag}={show_value(value)} is outside [{show_value(lo)}, {show_value(hi)}]{u}")


def _fmt_cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v == 0:
            return "0"
        a = abs(v)
        if a >= 1e6:
            return f"{v:,.0f}"
        if a >= 100:
            return f"{v:,.1f}"
        if a >= 1:
            return f"{v:.3f}"
        return f"{v:.4g}"
    return str(v)


KEEP_IN_TABLE = ("batch_size", "feasible", "binding_wall")


def render(frame: pl.DataFrame, fmt: str, *, vertical_if_single: bool = True, out=None) -> None:
    """Print a result frame as an aligned table, CSV or JSON (object for one row, list for several)."""
    out = out or sys.stdout
    if fmt == "json":
        rows = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                for r in frame.to_dicts()]
        json.dump(rows[0] if len(rows) == 1 else rows, out, indent=2, default=str)
        out.write("\n")
    elif fmt == "csv":
        out.write(frame.write_csv())
    else:
        if frame.height == 1 and vertical_if_single:
            width = max(len(c) for c in frame.columns)
            for k, v in frame.row(0, named=True).items():
                out.write(f"{k:<{width}}  {_fmt_cell(v)}\n")
        else:
            if frame.height > 1 and vertical_if_single:
                # columns equal on every row are printed once above the table, so it fits a terminal
                const = [c for c in frame.columns if frame[c].n_unique() == 1 and c not in KEEP_IN_TABLE]
                if const:
                    out.write("  ".join(f"{c}={_fmt_cell(frame[c][0])}" for c in const) + "\n")
                    frame = frame.drop(const)
            cells = [[_fmt_cell(v) for v in row] for row in frame.rows()]
            widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(frame.columns)]
            out.write("  ".join(c.rjust(w) for c, w in zip(frame.columns, widths)) + "\n")
            for r in cells:
                out.write("  ".join(v.rjust(w) for v, w in zip(r, widths)) + "\n")
