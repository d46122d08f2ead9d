"""Numbers as an analyst reads them: the one formatting module of every front end.

The dashboard (``dashboards/components/fmt.py`` re-exports this module) and the CLI's table renderer
(``econ/commands/_common.py``) format through these functions, so a number reads the same everywhere:

- money: ``$6.76B``, ``$52.3M``, ``$3.12``, ``$0.256`` (compact above $10,000; three significant
  digits, at least cents) -- compact currency from Babel's CLDR data (``format_compact_currency``);
- $/M tokens: three significant digits, at least cents: ``$0.256``, ``$0.0133``, ``$33.19``;
- SI quantities: ``98.9 EFLOP/s``, ``5.7 TB``, ``1.54 MW`` (``humanize.metric``, decimal prefixes,
  three significant digits);
- fractions as percentages (``42.3%``, Babel ``format_percent``), durations in ms / s / min / h / days;
- a missing value (None, NaN, inf) is :data:`MISSING` ("–"), never "None" or "nan".

:func:`cell` picks the format from a column name's unit suffix (``_usd``, ``usd_per_m_*``, ``_frac``,
``_s``, ``_bytes``, ``flop_per_s``, ``_mw``, ...), the naming convention of STYLE.md, so a table
renderer needs no per-column table. Presentation only: nothing here feeds a computation, and the
stored units stay in CSV/JSON/XLSX outputs.
"""

from __future__ import annotations

import functools
import math
import numbers

import humanize
from babel.numbers import format_compact_currency, format_compact_decimal, format_decimal, format_percent

LOCALE = "en_US"
"""Number conventions: comma thousands separator, point decimal (the analysts' US-dollar reports)."""

MISSING = "\u2013"
"""What a missing value (None, NaN, inf, no answer) shows as: an en dash."""

COMPACT_FROM_USD = 1e4
"""Dollar amounts at or above this are shown compact ($12.3K, $6.76B); below it, to the cent."""


def is_missing(x) -> bool:
    """True for None, NaN and +-inf (and anything that is not a real number)."""
    if x is None or isinstance(x, bool):
        return x is None
    if not isinstance(x, numbers.Real):
        return True
    return not math.isfinite(float(x))


def _decimals_for(x: float, sig: int, min_decimals: int = 0, max_decimals: int = 6) -> int:
    """Decimals that show ``sig`` significant digits of ``x`` (at least ``min_decimals``)."""
    if x == 0:
        return min_decimals
    exponent = math.floor(math.log10(abs(x)))
    return int(min(max(sig - 1 - exponent, min_decimals), max_decimals))


FORMAT_CACHE_ENTRIES = 8192
"""Babel results kept per helper (:func:`_fixed`, :func:`_compact_usd`, :func:`_compact_number`; LRU, a few hundred
kB each): a dashboard table formats hundreds of cells per rerun at ~0.1 ms each (the Cluster page's compact dollars),
and a rerun that changes the power price or PUE writes mostly the same 3-significant-digit amounts again. The
helpers are pure functions of their arguments, so a kept string is the one Babel would return."""


def _fixed(x: float, decimals: int) -> str:
    if x == 0:  # -0.0 and 0.0 are one key of a cache; Babel writes them differently
        return _fixed_babel(x, decimals)
    return _fixed_cached(x, decimals)


def _fixed_babel(x: float, decimals: int) -> str:
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "")
    return format_decimal(x, pattern, locale=LOCALE)


_fixed_cached = functools.lru_cache(maxsize=FORMAT_CACHE_ENTRIES, typed=True)(_fixed_babel)


@functools.lru_cache(maxsize=FORMAT_CACHE_ENTRIES, typed=True)
def _compact_usd(a: float, decimals: int) -> str:
    """Babel's compact US-dollar text of ``a`` > 0 (``$12.3K``), ``decimals`` fraction digits (memoized)."""
    return format_compact_currency(a, "USD", locale=LOCALE, fraction_digits=decimals)


@functools.lru_cache(maxsize=FORMAT_CACHE_ENTRIES, typed=True)
def _compact_number(a: float, decimals: int) -> str:
    """Babel's compact text of ``a`` > 0 (``212.7B``), ``decimals`` fraction digits (memoized)."""
    return format_compact_decimal(a, locale=LOCALE, fraction_digits=decimals)


def sig(x, digits: int = 3) -> str:
    """A plain number to ``digits`` significant digits with separators: ``0.0123``, ``27.7``, ``3,383``."""
    if is_missing(x):
        return MISSING
    x = float(x)
    if abs(x) >= 10 ** digits:
        return _fixed(x, 0)
    return _fixed(x, _decimals_for(x, digits))


def usd(x, digits: int = 3) -> str:
    """Dollars: compact from $10,000 (``$6.76B``, ``$52.3M``, ``$12.3K``), else ``$3.12`` / ``$0.256``.

    Parameters
    ----------
    x : float or None
        USD.
    digits : int
        Significant digits of the compact form and of amounts under $1.
    """
    if is_missing(x):
        return MISSING
    x = float(x)
    if abs(x) >= COMPACT_FROM_USD:
        return usd_compact(x, digits)
    sign = "-" if x < 0 else ""
    a = abs(x)
    decimals = 2 if a >= 1 or a == 0 else _decimals_for(a, digits - 1, 2)
    return f"{sign}${_fixed(a, decimals)}"


def usd_compact(x, digits: int = 3) -> str:
    """Dollars always compact (K, M, B, T), ``digits`` significant digits: ``$6.76B``, ``$69.2M``, ``$950``."""
    if is_missing(x):
        return MISSING
    x = float(x)
    a = float(f"{abs(x):.{digits}g}")  # round first: 999,999 -> $1M, not $1000K
    if a < 1000:
        return usd(x) if a < 1 else f"{'-' if x < 0 else ''}${_fixed(a, _decimals_for(a, digits, 0, 2))}"
    scaled = a / 10 ** (3 * min(4, int(math.floor(math.log10(a) / 3))))
    decimals = _decimals_for(round(scaled, 10), digits, 0, 2)
    text = _compact_usd(a, decimals)
    return ("-" + text) if x < 0 else text


def usd_millions(x) -> str:
    """Kept for callers of the first dashboard: now the compact form (``$6.76B``, not ``$6,755.0M``)."""
    return usd_compact(x)


def usd_per_m(x) -> str:
    """$ per million tokens: three significant digits, at least cents: ``$0.256``, ``$0.0133``, ``$33.19``."""
    if is_missing(x):
        return MISSING
    x = float(x)
    sign = "-" if x < 0 else ""
    a = abs(x)
    return f"{sign}${_fixed(a, _decimals_for(a, 3, 2))}"


def compact(x, digits: int = 3) -> str:
    """A large count compact (K, M, B, T): ``212.7B`` tokens, ``1.23M``; small numbers as :func:`sig`."""
    if is_missing(x):
        return MISSING
    x = float(x)
    a = float(f"{abs(x):.{digits}g}")  # round first: 999,999 -> 1M, not 1000K
    if a < 1e4:
        return sig(x, digits)
    scaled = a / 10 ** (3 * min(4, int(math.floor(math.log10(a) / 3))))
    text = _compact_number(a, _decimals_for(round(scaled, 10), digits, 0, 2))
    return ("-" + text) if x < 0 else text


def si(x, unit: str, digits: int = 3) -> str:
    """An SI quantity with a decimal prefix: ``98.9 EFLOP/s``, ``5.70 TB``, ``1.54 MW`` (``humanize.metric``)."""
    if is_missing(x):
        return MISSING
    x = float(x)
    if x == 0:
        return f"0 {unit}".strip()
    return humanize.metric(x, unit, precision=digits)


def flops(x) -> str:
    """FLOP/s: ``98.9 EFLOP/s``, ``1.01 EFLOP/s``, ``989 TFLOP/s``."""
    return si(x, "FLOP/s")


def flop(x) -> str:
    """FLOP (a count, e.g. a training run), in the field's scientific notation: ``3.80e25 FLOP``."""
    if is_missing(x):
        return MISSING
    mantissa, exponent = f"{float(x):.2e}".split("e")
    return f"{mantissa}e{int(exponent)} FLOP"


def bytes_(x) -> str:
    """Bytes, decimal prefixes (datasheet GB and TB): ``5.70 TB``, ``141 GB``."""
    return si(x, "B")


def watts(x) -> str:
    """Power in W: ``1.54 MW``, ``48.0 kW``, ``700 W``."""
    return si(x, "W")


def megawatts(x) -> str:
    """Power given in MW (``it_power_mw``): ``1.54 MW``, ``980 kW``."""
    return MISSING if is_missing(x) else si(float(x) * 1e6, "W")


def energy_mwh(x) -> str:
    """Energy given in MWh: ``13.2 GWh``."""
    return MISSING if is_missing(x) else si(float(x) * 1e6, "Wh")


def rate(x) -> str:
    """Tokens/s and similar rates: three significant digits, separators above 1,000: ``27.7``, ``3,383``."""
    return sig(x, 3)


def count(x) -> str:
    """Whole numbers with thousands separators: ``24,764``."""
    return MISSING if is_missing(x) else _fixed(round(float(x)), 0)


def pct(x, decimals: int = 1) -> str:
    """A fraction as a percentage: 0.423 -> ``42.3%`` (Babel ``format_percent``)."""
    if is_missing(x):
        return MISSING
    if float(x) == 0:
        return "0%"
    pattern = "#,##0" + ("." + "0" * decimals if decimals > 0 else "") + "%"
    return format_percent(float(x), pattern, locale=LOCALE)


def seconds(x) -> str:
    """Durations: us below a millisecond, ms below one second, s below ten minutes, min, h, days."""
    if is_missing(x):
        return MISSING
    x = float(x)
    a = abs(x)
    if a == 0:
        return "0 s"
    if a < 1e-3:
        return f"{sig(x * 1e6)} \u00b5s"
    if a < 1:
        return f"{sig(x * 1e3)} ms"
    if a < 600:
        return f"{sig(x)} s"
    if a < 3 * 3600:
        return f"{sig(x / 60)} min"
    if a < 3 * 86400:
        return f"{sig(x / 3600)} h"
    return f"{sig(x / 86400)} days"


def hours(x) -> str:
    """Durations given in hours (``cluster_mtbf_h``): ``48.8 h``, ``2.08 days``."""
    return MISSING if is_missing(x) else seconds(float(x) * 3600)


def days(x) -> str:
    """Durations given in days: ``221 days``."""
    return MISSING if is_missing(x) else f"{sig(x)} days"


def years(x) -> str:
    """Durations given in years: ``1.05 years``."""
    return MISSING if is_missing(x) else f"{sig(x)} years"


def number(x, decimals: int = 2) -> str:
    """Plain number with separators and fixed decimals."""
    return MISSING if is_missing(x) else _fixed(float(x), decimals)


def text(x) -> str:
    """Any value as text: missing -> "–", booleans yes/no, numbers to three significant digits."""
    if x is None:
        return MISSING
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, numbers.Integral):
        return f"{int(x):,}"
    if isinstance(x, numbers.Real):
        if is_missing(x):
            return MISSING
        if abs(float(x)) >= 1000:
            return _fixed(float(x), 0)
        shown = sig(x, 4)
        return shown.rstrip("0").rstrip(".") if "." in shown else shown
    s = str(x)
    return s if s.strip() else MISSING


# Catalog columns in datasheet units (data/README.md): (suffix, factor to SI, SI unit).
_DATASHEET_UNITS: tuple[tuple[str, float, str], ...] = (
    ("_pflop_per_s", 1e15, "FLOP/s"), ("_tflop_per_s", 1e12, "FLOP/s"), ("_tb_per_s", 1e12, "B/s"),
    ("_gb_per_s", 1e9, "B/s"), ("_gbps", 1e9, "bit/s"), ("_gb", 1e9, "B"),
)

# (suffix or whole name, formatter), first match wins: the unit suffixes of STYLE.md.
_BY_NAME: tuple[tuple[str, object], ...] = (
    ("tokens_per_usd", compact), ("usd_per_m_", usd_per_m), ("usd_per_gpu_hour", usd),
    ("usd_per_task", usd), ("usd_per_call", usd), ("usd_per_prompt", usd), ("usd_per_kwh", lambda v: usd_per_m(v)),
    ("usd_per_mw_it", usd), ("_usd", usd), ("_usd_per_hour", usd),
    ("flop_per_s", flops), ("_flop", flop), ("_bytes", bytes_), ("_bytes_per_gpu", bytes_),
    ("_mwh", energy_mwh), ("_mw", megawatts), ("_kw", lambda v: watts(None if is_missing(v) else v * 1e3)),
    ("_w", watts), ("_frac", pct), ("_s", seconds), ("_h", hours), ("_days", days), ("_years", years),
    ("tokens_per_day", compact), ("training_tokens", compact),
)


@functools.lru_cache(maxsize=4096)  # a table calls it per cell; the answer depends on the name only
def formatter_for(column: str):
    """The formatter a column's unit suffix calls for, or None (then :func:`text`); a band's ``_low`` / ``_high``
    column formats as the column it bounds."""
    for suffix, scale, unit in _DATASHEET_UNITS:
        if column.endswith(suffix):
            return lambda v, scale=scale, unit=unit: si(None if is_missing(v) else float(v) * scale, unit)
    if column.endswith("_gib"):  # binary capacities stay in GiB as the datasheet gives them
        return lambda v: MISSING if is_missing(v) else f"{text(v)} GiB"
    if column.endswith("flop_per_s"):
        return flops
    if "tokens_per_s" in column or column.endswith("_per_s"):
        return rate
    for key, fn in _BY_NAME:
        if key.endswith("_") and key in column or not key.endswith("_") and (
                column.endswith(key) or column == key.lstrip("_")):
            return fn
    for band_end in ("_low", "_high"):  # a band's end formats as its column (payback_years_low: years)
        if column.endswith(band_end):
            return formatter_for(column[:-len(band_end)])
    return None


def cell(column: str, value) -> str:
    """One table cell, formatted by its column's unit suffix; missing -> "–", booleans yes/no.

    >>> cell("capex_total_usd", 6.755e9), cell("peak_flop_per_s", 9.89e19), cell("tpot_s", 0.0194)
    ('$6.76B', '98.9 EFLOP/s', '19.4 ms')
    """
    if value is None or isinstance(value, (bool, str)):
        return text(value)
    if isinstance(value, numbers.Real) and is_missing(value):
        return MISSING
    fn = formatter_for(column)
    if fn is None or not isinstance(value, numbers.Real):
        return text(value)
    return fn(value)


ACCELERATOR_VENDOR_PREFIXES: tuple[str, ...] = ("NVIDIA HGX ", "NVIDIA ", "AMD Instinct ", "AMD ", "Google Cloud ",
                                                "Google ", "Intel ", "AWS ")
"""Vendor words :func:`short_accelerator_name` drops from a catalog ``display_name`` (the id names the vendor)."""


def short_accelerator_name(display_name: str, max_chars: int = 16) -> str:
    """An accelerator's name for a KPI tile: the catalog ``display_name`` without the vendor and the parenthesized
    detail, at most ``max_chars`` characters (a longer rest is cut at a word and ends with an ellipsis). The full
    name belongs in the tile's help.

    >>> short_accelerator_name("AMD Instinct MI355X"), short_accelerator_name("NVIDIA GB200 NVL72 (per B200 GPU, 1200 W)")
    ('MI355X', 'GB200 NVL72')
    """
    name = str(display_name).split(" (")[0].strip()
    for prefix in ACCELERATOR_VENDOR_PREFIXES:
        if name.startswith(prefix) and len(name) > len(prefix):
            name = name[len(prefix):]
            break
    if len(name) <= max_chars:
        return name
    cut = name[:max_chars - 1].rsplit(" ", 1)[0]
    return cut.rstrip() + "…"


__all__ = ["MISSING", "ACCELERATOR_VENDOR_PREFIXES", "short_accelerator_name", "LOCALE", "is_missing", "sig", "usd", "usd_compact", "usd_millions", "usd_per_m", "compact",
           "si", "flops", "flop", "bytes_", "watts", "megawatts", "energy_mwh", "rate", "count", "pct", "seconds",
           "hours", "days", "years", "number", "text", "formatter_for", "cell"]
