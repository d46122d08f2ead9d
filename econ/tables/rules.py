"""Consistency rules of the data tables, declared in one place and checked at load.

The column schemas of :mod:`econ.tables.catalog` check each cell alone (type, required, schema range). The
rules here check what a cell-by-cell schema cannot, in the manner of dataframely's ``@dy.rule``
(Quantco/dataframely): each :class:`Rule` is a Polars expression that is true on a valid row, the
column it blames, and an expression describing the valid range for that row. Failures are reported
per cell as ``file, row <id>, column <col>: <value> ... (valid: <range>) [rule: <name>]`` and counted
per rule, all in one :class:`~econ.errors.DataError` raised by :func:`econ.tables.catalog.validate_table`.

Three kinds of rule:

- **cell rules** (every table, on the raw text): no control characters (NUL and the other C0
  codes but tab, line feed and carriage return, and DEL); every ``as_of*`` cell an ISO-8601 date
  ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (optional ``~`` for an approximate date) that exists in
  the calendar (``2024-13-45`` does not).
- **plausibility ranges** (catalog tables, typed): bandwidths, FLOP/s, capacities, power and
  prices within physically possible bounds (:data:`PLAUSIBLE`), so a datasheet typo such as a
  bandwidth of 1e-300 TB/s is refused instead of printing a TPOT of 1e297 s on a "feasible" row.
- **row rules** (:data:`ROW_RULES`, typed): relations between columns of one row, e.g.
  experts per token <= experts, KV heads divide attention heads, MLA rows carry their ranks, and the
  parameters counted from the architecture (:func:`econ.physics.architecture.derive_architecture`) within
  :data:`PARAM_COUNT_TOLERANCE_FRAC` of the stated total.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from dataclasses import dataclass

import polars as pl

PARAM_COUNT_TOLERANCE_FRAC = 0.03
"""Largest relative gap between the parameters counted from a model's config and its stated
``total_params_b``. Every shipped model lands within 2.7% (Kimi-K2: 1.026 T counted vs 1 T stated);
``tests/physics/test_core_known_answers.py`` holds the same 3% against the vendors' totals."""

CONTROL_CHARS = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
"""Characters refused in any cell: C0 controls except tab, line feed, carriage return; and DEL."""

ISO_DATE = r"^~?\d{4}(-\d{2}(-\d{2})?)?$"
"""Shape of an ``as_of`` cell: YYYY, YYYY-MM or YYYY-MM-DD, optionally prefixed by ``~``."""

DATE_YEARS = (1900, 2100)
"""Years an ``as_of`` date may name (inclusive): every source of the tables is from this century or the last; a year
such as 0000 (which Polars' calendar accepts) is a typo."""

MAX_LISTED = 40
"""Problems listed in one error message (all are counted)."""


@dataclass(frozen=True)
class Range:
    """A physically plausible range for a column, inclusive. ``why`` says where the bounds come from."""

    lo: float
    hi: float
    unit: str
    why: str


def _field_range(column: str, why: str) -> Range:
    """The plausible range of an accelerators.csv column a custom accelerator's field stands for: the field's one range
    (:func:`econ.vocabulary.custom_column_ranges`), so a typed chip and a shipped row obey the same numbers."""
    from econ.vocabulary import custom_column_ranges
    f = custom_column_ranges()[column]
    return Range(float(f.lo), float(f.hi), f.unit, why)


# Bounds are an order of magnitude or more outside every real device of 2015-2035, so they refuse
# only typos (a unit slip of 1e3 or worse, 1e-300, a price in cents), never a real datasheet. The columns a custom
# accelerator's fields stand for take the field's range (econ.vocabulary, one range per field).
PLAUSIBLE: dict[str, dict[str, Range]] = {
    "accelerators": {
        "_tflop_per_s": _field_range("bf16_dense_tflop_per_s", "a T4 gives 65 bf16-class, a GB300 15,000 fp4"),
        "hbm_capacity_gib": _field_range("hbm_capacity_gib", "16 GiB (V100) to 288 GiB (B300)"),
        "_tb_per_s": _field_range("hbm_bandwidth_tb_per_s", "0.3 TB/s (L4) to 8 TB/s (B200)"),
        "_gb_per_s": _field_range("scale_up_bandwidth_gb_per_s",
                                  "a 1 GbE NIC is 0.125 GB/s; NVLink 5 is 900 GB/s per direction"),
        "tdp_w": Range(10.0, 1e5, "W", "72 W (L4) to 1,400 W (B300)"),
        "_power_w": _field_range("all_in_power_w", "a server share per accelerator, 300 W to a few kW"),
        "purchase_price_usd": Range(100.0, 1e7, "USD", "thousands to tens of thousands per accelerator"),
        "all_in_capex_usd": _field_range("all_in_capex_usd", "thousands to tens of thousands per accelerator"),
        "_usd_per_hour": _field_range("rental_usd_per_hour", "cents to tens of dollars per accelerator-hour"),
    },
    "models": {
        "total_params_b": Range(1e-3, 1e5, "B params", "1 M to 100 T parameters"),
        "active_params_b": Range(1e-3, 1e5, "B params", "1 M to 100 T parameters"),
    },
    "power_prices": {
        "usd_per_kwh": Range(0.005, 2.0, "USD/kWh", "industrial tariffs are 0.03-0.30 USD/kWh"),
    },
    "facilities": {
        "pue": Range(1.0, 3.0, "ratio", "1.0 is the physical floor; legacy enterprise rooms reach ~2.5"),
        "build_usd_per_mw_it": Range(1e5, 1e8, "USD/MW", "data halls cost 7-13 M USD per MW of IT load"),
    },
}
"""Plausible ranges per catalog table: a key starting with ``_`` applies to every column ending in it."""


@dataclass(frozen=True)
class Rule:
    """One row rule: ``ok`` is true (or null: not applicable) on a valid row.

    Attributes
    ----------
    name : str
        Short statement of the rule (``"experts_per_token <= num_experts"``), used in messages and counts.
    table : str
        Catalog table the rule applies to (``"models"``).
    column : str
        The column blamed (its value is shown).
    ok : pl.Expr
        Boolean expression over the typed table; false marks a failing row.
    valid : pl.Expr
        String expression describing the valid value or range for that row.
    needs : tuple of str
        Columns the rule reads; the rule is skipped when one is absent (an older table).
    """

    name: str
    table: str
    column: str
    ok: pl.Expr
    valid: pl.Expr
    needs: tuple[str, ...]


def _mla_needs(col: str) -> Rule:
    return Rule(f"mla rows need {col}", "models", col,
                (pl.col("attention_type").str.to_lowercase() != "mla") | pl.col(col).is_not_null(),
                pl.lit("a whole number >= 1 (MLA: arXiv:2405.04434 sec. 2.1)"), ("attention_type", col))


_COUNTED_B = pl.col("total_params") / 1e9

ROW_RULES: tuple[Rule, ...] = (
    _mla_needs("kv_lora_rank"),
    _mla_needs("qk_rope_head_dim"),
    _mla_needs("qk_nope_head_dim"),
    _mla_needs("v_head_dim"),
    Rule("sparse-attention rows need index_n_heads and index_head_dim", "models", "index_topk",
         (pl.col("index_topk").fill_null(0) == 0)
         | (pl.col("index_n_heads").is_not_null() & pl.col("index_head_dim").is_not_null()),
         pl.lit("empty, or with index_n_heads and index_head_dim (DeepSeek-V3.2: 64 heads x 128 dims, top 2048)"),
         ("index_topk", "index_n_heads", "index_head_dim")),
    Rule("eagle_acceptance < 1 and with eagle_draft_tokens", "models", "eagle_acceptance",
         pl.col("eagle_acceptance").is_null() | ((pl.col("eagle_acceptance") < 1) & pl.col("eagle_draft_tokens").is_not_null()),
         pl.lit("empty, or in [0, 1) with eagle_draft_tokens (the published head's draft length)"),
         ("eagle_acceptance", "eagle_draft_tokens")),
    Rule("experts_per_token <= num_experts", "models", "experts_per_token",
         pl.col("experts_per_token") <= pl.col("num_experts"),
         pl.format("[0, {}] (num_experts)", pl.col("num_experts")), ("experts_per_token", "num_experts")),
    Rule("moe rows route >= 1 expert per token", "models", "experts_per_token",
         (pl.col("num_experts") == 0) | (pl.col("experts_per_token") >= 1),
         pl.format("[1, {}] when num_experts > 0", pl.col("num_experts")), ("experts_per_token", "num_experts")),
    Rule("moe rows need moe_intermediate_size", "models", "moe_intermediate_size",
         (pl.col("num_experts") == 0) | (pl.col("moe_intermediate_size") >= 1),
         pl.lit(">= 1 when num_experts > 0"), ("moe_intermediate_size", "num_experts")),
    Rule("num_kv_heads divides num_attention_heads", "models", "num_kv_heads",
         (pl.col("num_attention_heads") % pl.col("num_kv_heads")) == 0,
         pl.format("a divisor of num_attention_heads = {} (GQA groups query heads evenly)",
                   pl.col("num_attention_heads")), ("num_kv_heads", "num_attention_heads")),
    Rule("num_sliding_layers <= num_layers", "models", "num_sliding_layers",
         pl.col("num_sliding_layers") <= pl.col("num_layers"),
         pl.format("[0, {}] (num_layers)", pl.col("num_layers")), ("num_sliding_layers", "num_layers")),
    Rule("sliding layers need sliding_window_tokens", "models", "sliding_window_tokens",
         (pl.col("num_sliding_layers") == 0) | pl.col("sliding_window_tokens").is_not_null(),
         pl.lit("a window in tokens when num_sliding_layers > 0"), ("num_sliding_layers", "sliding_window_tokens")),
    Rule("first_k_dense_layers <= num_layers", "models", "first_k_dense_layers",
         pl.col("first_k_dense_layers") <= pl.col("num_layers"),
         pl.format("[0, {}] (num_layers)", pl.col("num_layers")), ("first_k_dense_layers", "num_layers")),
    Rule("active_params_b <= total_params_b", "models", "active_params_b",
         pl.col("active_params_b") <= pl.col("total_params_b"),
         pl.format("<= total_params_b = {}", pl.col("total_params_b")), ("active_params_b", "total_params_b")),
    Rule("total_params_b within 3% of the parameters counted from the config", "models", "total_params_b",
         ((pl.col("total_params_b") - _COUNTED_B).abs() <= PARAM_COUNT_TOLERANCE_FRAC * _COUNTED_B),
         pl.format("{} B +- 3% (counted from the architecture columns by econ.physics.architecture)",
                   _COUNTED_B.round(3)), ("total_params_b", "total_params")),
    Rule("all_in_power_w >= tdp_w", "accelerators", "all_in_power_w",
         pl.col("all_in_power_w") >= pl.col("tdp_w"),
         pl.format(">= tdp_w = {} (all-in power includes the accelerator)", pl.col("tdp_w")),
         ("all_in_power_w", "tdp_w")),
    Rule("all_in_capex_usd >= purchase_price_usd", "accelerators", "all_in_capex_usd",
         pl.col("all_in_capex_usd") >= pl.col("purchase_price_usd"),
         pl.format(">= purchase_price_usd = {} (all-in capex includes the accelerator)", pl.col("purchase_price_usd")),
         ("all_in_capex_usd", "purchase_price_usd")),
)
"""Row rules of the catalog tables (models, accelerators)."""


def _shown(value) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "...'"


def cell_problems(raw: pl.DataFrame, name: str, labels: list[str]) -> list[str]:
    """Control characters in any cell and invalid ``as_of*`` dates, on the table as read (text).

    Parameters
    ----------
    raw : pl.DataFrame
        Every column ``pl.String`` (stripped), as :func:`econ.tables.catalog.validate_table` holds it.
    name : str
        File name for messages.
    labels : list of str
        Row label (id, or ``#n``) of each row.

    Returns
    -------
    list of str
        One message per bad cell (empty: no problem), ending in ``[rule: <name>]``.
    """
    problems: list[str] = []
    for col in raw.columns:
        s = raw[col]
        if s.dtype != pl.String:
            continue
        bad = s.str.contains(CONTROL_CHARS).fill_null(False)
        for n in bad.arg_true().to_list():
            problems.append(f"{name}, row {labels[n]}, column {col}: {_shown(s[n])} holds a control character "
                            f"(valid: text without NUL or other control codes) [rule: no control characters]")
        if col.startswith("as_of"):
            for n in _bad_dates(s).arg_true().to_list():
                problems.append(f"{name}, row {labels[n]}, column {col}: {_shown(s[n])} is not YYYY[-MM[-DD]] "
                                f"(optional ~), a real calendar date in {DATE_YEARS[0]}-{DATE_YEARS[1]} "
                                f"[rule: as_of is an ISO date]")
    return problems


def _bad_dates(s: pl.Series) -> pl.Series:
    """True where a non-empty cell is not an ISO date of the calendar (nulls and empty cells pass)."""
    t = s.str.strip_chars().str.strip_prefix("~")
    shaped = t.str.contains(ISO_DATE)
    full = (pl.select(pl.when(t.str.len_chars() == 4).then(t + "-01-01")
                      .when(t.str.len_chars() == 7).then(t + "-01").otherwise(t)).to_series())
    date = full.str.to_date("%Y-%m-%d", strict=False)
    real = date.is_not_null() & date.dt.year().is_between(*DATE_YEARS)
    present = s.is_not_null() & (s.str.strip_chars() != "")
    return (present & ~(shaped & real).fill_null(False)).fill_null(False)


def is_iso_date(text: str) -> bool:
    """True when ``text`` is an ``as_of`` date of the tables' rule: YYYY, YYYY-MM or YYYY-MM-DD (optional ``~``), a
    real calendar date in :data:`DATE_YEARS` (``--as-of`` of ``econ quotes import`` obeys the same rule)."""
    return isinstance(text, str) and len(text) <= 20 and not _bad_dates(pl.Series([text])).item() and bool(text.strip())


def row_problems(df: pl.DataFrame, table: str | None, name: str, labels: list[str]) -> list[str]:
    """Plausible ranges and row rules of a typed catalog table.

    Parameters
    ----------
    df : pl.DataFrame
        The typed table (schema dtypes), rows in file order.
    table : str or None
        Catalog table key (``"models"``); None (a table outside the catalog) checks nothing.
    name, labels
        As in :func:`cell_problems`.

    Returns
    -------
    list of str
        One message per failing cell, naming file, row id, column, value and the valid range, ending
        in ``[rule: <name>]``.
    """
    if table is None:
        return []
    problems: list[str] = []
    for key, rng in PLAUSIBLE.get(table, {}).items():
        cols = [c for c in df.columns if (c.endswith(key) if key.startswith("_") else c == key)]
        for col in cols:
            if not df.schema[col].is_numeric():
                continue
            s = df[col].cast(pl.Float64)
            bad = ((s < rng.lo) | (s > rng.hi)).fill_null(False)
            for n in bad.arg_true().to_list():
                problems.append(f"{name}, row {labels[n]}, column {col}: {s[n]:g} is outside the plausible range "
                                f"[{rng.lo:g}, {rng.hi:g}] {rng.unit} ({rng.why}) [rule: {col} is plausible]")
    frame = df
    if table == "models" and {"attention_type", "num_layers"} <= set(df.columns):
        from econ.physics.architecture import derive_architecture  # the parameter count lives there, not here
        try:
            frame = derive_architecture(df)
        except Exception:  # noqa: BLE001 - a count that cannot run leaves the count rule unchecked, not a crash
            frame = df
    for rule in ROW_RULES:
        if rule.table != table or not set(rule.needs) <= set(frame.columns):
            continue
        res = frame.select(rule.ok.fill_null(True).alias("ok"), rule.valid.alias("valid"))
        for n in (~res["ok"]).arg_true().to_list():
            problems.append(f"{name}, row {labels[n]}, column {rule.column}: {_shown(frame[rule.column][n])} "
                            f"(valid: {res['valid'][n]}) [rule: {rule.name}]")
    return problems


class DataWarning(UserWarning):
    """A table loaded, with something the user should know (a column not in the schema, ignored)."""


def warn_extra_columns(name: str, extra: list[str]) -> None:
    """Warn (:class:`DataWarning`) that ``extra`` columns of ``name`` are not in the schema and are ignored.

    A user's own notes column is a normal edit: the table loads, the column stays in the file, and
    the model never reads it. A misspelled *required* column still fails, as a missing column.
    """
    shown = ", ".join(repr(c[:40]) for c in extra[:10]) + (f" (+{len(extra) - 10} more)" if len(extra) > 10 else "")
    warnings.warn(f"{name}: column(s) {shown} not in the schema; kept in the file, ignored by econ "
                  f"(data/README.md lists the columns)", DataWarning, stacklevel=3)


_RULE_TAG = re.compile(r"\[rule: (.+)\]$")


def format_problems(name: str, problems: list[str]) -> str:
    """The one message of a table's problems: how many, how many per rule, then up to :data:`MAX_LISTED`.

    Example: ``models.csv: 2 problem(s) (rule experts_per_token <= num_experts: 1; ...):``, then one
    line per problem.
    """
    counts = Counter(m.group(1) for p in problems if (m := _RULE_TAG.search(p)))
    per_rule = f" (per rule: {'; '.join(f'{r}: {n}' for r, n in counts.most_common())})" if counts else ""
    head = problems[:MAX_LISTED]
    more = f"\n  (+{len(problems) - MAX_LISTED} more)" if len(problems) > MAX_LISTED else ""
    return f"{name}: {len(problems)} problem(s){per_rule}:\n  " + "\n  ".join(head) + more


__all__ = ["Rule", "Range", "DataWarning", "warn_extra_columns", "ROW_RULES", "PLAUSIBLE", "PARAM_COUNT_TOLERANCE_FRAC", "CONTROL_CHARS", "ISO_DATE", "DATE_YEARS", "is_iso_date",
           "cell_problems", "row_problems", "format_problems"]
