"""Assumptions and sources behind a result: every efficiency and economic input, and the catalog rows used."""

from __future__ import annotations

import re

from urllib.parse import quote

import polars as pl
import streamlit as st

from dashboards.components import safe_text

from econ.assumptions import assumptions_frame

_URL = re.compile(r"https?://[^\s;,)]+")


def links(source: str | None) -> str:
    """Markdown for a ``source`` cell: URLs become links, other references stay as code.

    The cell may come from a user's uploaded table: its text is escaped (:mod:`safe_text`) and the URL
    percent-encoded, so a cell can add a link to its own source but never an image or other markup.
    """
    if not source:
        return "(no source)"
    parts = []
    for piece in [p.strip() for p in str(source).split(";") if p.strip()]:
        urls = _URL.findall(piece)
        if urls:
            text = _URL.sub("", piece).strip(" ,:-") or urls[0].split("//", 1)[1][:60]
            href = quote(urls[0], safe="/:?#@!$&'*+,;=%~-._")
            parts.append(f"[{safe_text.md(text, inline=True)}]({href})")
        else:
            parts.append(safe_text.code(piece))
    return "; ".join(parts)


def first_url(source: str | None) -> str | None:
    """The first web address in a ``source`` cell (for link columns), or None."""
    m = _URL.search(source or "")
    return m.group(0) if m else None


def catalog_rows(catalog, *, model: str | None = None, hardware=None, region: str | None = None,
                 facility: str | None = None) -> pl.DataFrame:
    """The catalog rows a result used: table, id, source, as_of."""
    frames = []
    if model:
        frames.append(catalog.models.filter(pl.col("id") == model).select(
            pl.lit("models").alias("table"), "id", "source", "as_of"))
    for h in ([hardware] if isinstance(hardware, str) else list(hardware or [])):
        frames.append(catalog.accelerators.filter(pl.col("id") == h).select(
            pl.lit("accelerators").alias("table"), "id", "source", "as_of"))
    if region:
        frames.append(catalog.power_prices.filter(pl.col("region_id") == region).select(
            pl.lit("power_prices").alias("table"), pl.col("region_id").alias("id"), "source", "as_of"))
    if facility:
        frames.append(catalog.facilities.filter(pl.col("id") == facility).select(
            pl.lit("facilities").alias("table"), "id", "source", "as_of"))
    if not frames:
        return pl.DataFrame(schema={"table": pl.String, "id": pl.String, "source": pl.String, "as_of": pl.String})
    return pl.concat(frames)


def export_frame(catalog, assumptions, economics, *, model=None, hardware=None, region=None) -> pl.DataFrame:
    """Assumptions (group, name, value, source) plus one row per catalog row used (its ``as_of`` and source)."""
    frame = assumptions_frame(assumptions, economics)
    rows = catalog_rows(catalog, model=model, hardware=hardware, region=region)
    used = rows.select(pl.format("catalog: {}", pl.col("table")).alias("group"), pl.col("id").alias("name"),
                       pl.format("as of {}", pl.col("as_of")).alias("value"), "source")
    return pl.concat([frame, used], how="vertical_relaxed")


def show(catalog, assumptions, economics, *, key: str, model=None, hardware=None, region=None,
         expanded: bool = False) -> pl.DataFrame:
    """Draw the assumptions (value + source) and the catalog rows' sources.

    Returns
    -------
    pl.DataFrame of :func:`export_frame` (for the downloads).
    """
    frame = assumptions_frame(assumptions, economics)
    with st.expander("Assumptions and sources", expanded=expanded):
        st.caption("Efficiency factors are edited on the Assumptions page; economics in the sidebar.")
        st.dataframe(frame, hide_index=True, key=f"{key}.assumptions",
                     column_config={"group": st.column_config.TextColumn("Group"),
                                    "name": st.column_config.TextColumn("Assumption"),
                                    "value": st.column_config.TextColumn("Value"),
                                    "source": st.column_config.TextColumn("Source", width="large")})
        rows = catalog_rows(catalog, model=model, hardware=hardware, region=region)
        if rows.height:
            st.markdown("**Catalog rows used**")
            st.markdown("\n".join(f"- {t} `{i}` (as of {a}): {links(s)}" for t, i, s, a in
                                  rows.select("table", "id", "source", "as_of").rows()))
    return export_frame(catalog, assumptions, economics, model=model, hardware=hardware, region=region)
