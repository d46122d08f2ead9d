"""Boundary validation for scalars and arrays. Kernels stay branch-free; public entry points call these."""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.errors import InvalidInputError


def _first_bad(mask: np.ndarray) -> str:
    if mask.ndim == 0:
        return ""
    idx = int(np.flatnonzero(mask.ravel())[0])
    return f"; first bad row {idx} of {mask.size}"


def require_finite(name: str, value) -> np.ndarray:
    """Raise InvalidInputError if any element of ``value`` is NaN or +-inf.

    Parameters
    ----------
    name : str
        Field name used in the message.
    value : scalar or array-like of numbers

    Returns
    -------
    ndarray of float (the input as an array).

    Raises
    ------
    InvalidInputError
        Naming the field, the first bad value and its row.
    """
    arr = np.asarray(value, dtype=float)
    bad = ~np.isfinite(arr)
    if bad.any():
        v = arr[bad].ravel()[0] if arr.ndim else arr
        raise InvalidInputError(f"{name}={v} is not a finite number{_first_bad(bad)}")
    return arr


def require_in_range(name: str, value, lo: float, hi: float, unit: str = "",
                     *, lo_inclusive: bool = True, hi_inclusive: bool = True) -> np.ndarray:
    """Raise InvalidInputError unless every element of ``value`` lies in [lo, hi].

    Parameters
    ----------
    name : str
        Field (or CLI flag) name used in the message, e.g. ``"batch_size"``.
    value : scalar or array-like of numbers
    lo, hi : float
        Bounds; ``np.inf`` for an open end.
    unit : str
        Unit shown after the range, e.g. ``"sequences"``, ``"USD/kWh"``.
    lo_inclusive, hi_inclusive : bool
        Whether the bounds themselves are valid.

    Returns
    -------
    ndarray of float (the input as an array).

    Raises
    ------
    InvalidInputError
        ``"batch_size=0 is outside [1, 65536] (sequences); first bad row 17"``.
    """
    arr = require_finite(name, value)
    too_low = arr < lo if lo_inclusive else arr <= lo
    too_high = arr > hi if hi_inclusive else arr >= hi
    bad = too_low | too_high
    if bad.any():
        v = arr[bad].ravel()[0] if arr.ndim else arr
        lb = "[" if lo_inclusive else "("
        rb = "]" if hi_inclusive else ")"
        unit_txt = f" ({unit})" if unit else ""
        raise InvalidInputError(
            f"{name}={_fmt(v)} is outside {lb}{_fmt(lo)}, {_fmt(hi)}{rb}{unit_txt}{_first_bad(bad)}"
        )
    return arr


def require_not_above(name: str, value, limit_name: str, limit, why: str = "", *, word: str = "exceeds") -> None:
    """Raise InvalidInputError where ``value`` exceeds ``limit`` (both broadcast; scalars or arrays).

    Raises
    ------
    InvalidInputError
        Naming both fields, the first offending pair of values and, for arrays, its row: "NAME=v WORD
        LIMIT_NAME=l (WHY)", ``word`` "exceeds" or "is above", ``why`` e.g. "a cache hit never costs more".
    """
    v, lim = np.broadcast_arrays(np.asarray(value, dtype=float), np.asarray(limit, dtype=float))
    over = v > lim
    if over.any():
        i = int(np.flatnonzero(over.ravel())[0])
        raise InvalidInputError(f"{name}={v.ravel()[i]:g} {word} {limit_name}={lim.ravel()[i]:g}"
                                + (f" ({why})" if why else "") + _first_bad(over))


def require_integer(name: str, value, lo: int = 1, hi: float = np.inf, unit: str = "") -> np.ndarray:
    """Like :func:`require_in_range`, and every element must be a whole number."""
    arr = require_in_range(name, value, lo, hi, unit)
    frac = arr != np.round(arr)
    if frac.any():
        v = arr[frac].ravel()[0] if arr.ndim else arr
        raise InvalidInputError(f"{name}={_fmt(v)} must be a whole number{_first_bad(frac)}")
    return arr


def _fmt(x) -> str:
    x = float(x)
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:g}"


def require_finite_frame(frame: pl.DataFrame) -> None:
    """No NaN or inf reaches a user's table: nulls are explicit (infeasible rows), non-finite is a bug.

    Raises
    ------
    InvalidInputError
        Naming the column and the first bad row (with its model and hardware when the frame has them).
    """
    floats = [c for c, dt in frame.schema.items() if dt.is_float()]
    if not floats or frame.height == 0:
        return
    flags = frame.select((~pl.col(c).is_finite()).fill_null(False).any().alias(c) for c in floats).row(0)
    for c, bad in zip(floats, flags):  # one pass over every column; the slow search only on a failure
        if bad:
                i = int((~frame[c].is_finite()).fill_null(False).arg_true()[0])
                where = (f" ({frame['model'][i]} on {frame['hardware'][i]})"
                         if {"model", "hardware"} <= set(frame.columns) else "")
                raise InvalidInputError(f"result column {c} is not finite in row {i}{where}")
