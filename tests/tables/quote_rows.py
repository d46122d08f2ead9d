"""Rows of a quotes file for tests: the all-text frame a CSV reader gives (tests/tables, tests/analyses)."""

from __future__ import annotations

import polars as pl

from econ.tables.quote_files import QUOTE_SCHEMA


def raw_quotes(rows: list[dict]) -> pl.DataFrame:
    """Quote rows as the all-text frame a CSV reader gives (floats as repr: exact round trip)."""
    cols = list(QUOTE_SCHEMA)
    return pl.DataFrame([{c: (None if r.get(c) is None else (repr(r[c]) if isinstance(r[c], float) else str(r[c])))
                          for c in cols} for r in rows], schema={c: pl.String for c in cols})


def quote_row(quote_id="q1", model="llama-3.1-70b", p_in=1.0, p_out=1.0, **kw) -> dict:
    """One quote (acme's price for ``model``; more columns by keyword)."""
    return dict(quote_id=quote_id, provider="acme", model=model, usd_per_m_input_tokens=p_in,
                usd_per_m_output_tokens=p_out, **kw)
