"""Assumptions and sources behind a result: every efficiency and economic input, and the catalog rows used."""

from __future__ import annotations

import functools
import re

from urllib.parse import quote

import polars as pl
import streamlit as st

from dashboards.components import safe_text

from econ.assumptions import assumptions_frame
from econ.vocabulary import TIER_SPECS

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
    hw = [hardware] if isinstance(hardware, str) else list(hardware or [])
    if hw:  # one join in the order asked (a filter per id cost ~5 ms each: 0.1 s a rerun with every accelerator)
        frames.append(pl.DataFrame({"id": hw}, schema={"id": pl.String}).join(
            catalog.accelerators.select("id", "source", "as_of"), on="id", how="inner", maintain_order="left")
            .select(pl.lit("accelerators").alias("table"), "id", "source", "as_of"))
    if region:
        frames.append(catalog.power_prices.filter(pl.col("region_id") == region).select(
            pl.lit("power_prices").alias("table"), pl.col("region_id").alias("id"), "source", "as_of"))
    if facility:
        frames.append(catalog.facilities.filter(pl.col("id") == facility).select(
            pl.lit("facilities").alias("table"), "id", "source", "as_of"))
    if not frames:
        return pl.DataFrame(schema={"table": pl.String, "id": pl.String, "source": pl.String, "as_of": pl.String})
    return pl.concat(frames)


# How an assumption reads on a page: display unit and the factor from the stored SI value (0.6 -> 60 %).
_PERCENT = ("%", 100.0)
_DISPLAY_UNITS: dict[str, tuple[str, float]] = {
    "s": ("ms", 1e3), "USD/kWh": ("$/kWh", 1.0), "USD/MW": ("$M per MW of IT load", 1e-6),
    "1/year": ("% per year", 100.0), "years": ("years", 1.0), "tokens": ("tokens", 1.0), "bytes": ("bytes", 1.0),
    "ratio": ("", 1.0), "input per output token": ("input tokens per output token", 1.0),
}
_FIELD_UNITS: dict[str, tuple[str, float]] = {  # where the unit's default scale reads badly
    "scale_up_latency_s": ("\u00b5s", 1e6), "scale_out_latency_s": ("\u00b5s", 1e6),
}
_GROUP_TITLES = {"performance": "Performance", "economics": "Economics"}
_CHOICE_TITLES = {("basis", t.value): spec.label for t, spec in TIER_SPECS.items()}


def display_unit(field: str) -> tuple[str, float]:
    """(unit shown, factor from the stored value) of an assumption: fractions in %, seconds in ms or us."""
    from econ.io.scenario import SPECS

    if field in _FIELD_UNITS:
        return _FIELD_UNITS[field]
    spec = SPECS.get(field)
    unit = spec.unit if spec is not None else ""
    if unit == "" and (field.endswith("_frac") or field.startswith("eta_") or spec is not None and spec.kind == "float"
                       and spec.hi is not None and spec.hi <= 1.0):
        return _PERCENT
    return _DISPLAY_UNITS.get(unit, (unit, 1.0))


def label(field: str) -> str:
    """The human name of an assumption (``eta_bw`` -> "HBM bandwidth efficiency")."""
    from econ.io.scenario import SPECS

    from econ.vocabulary import column_title as title

    spec = SPECS.get(field)
    return spec.label if spec is not None and spec.label else title(field)


def display_value(field: str, value) -> str:
    """An assumption's value as an analyst reads it: ``60%``, ``1.50 ms``, ``$11.7M per MW of IT load``."""
    from econ import formatting as f

    if value is None:
        return f.MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return _CHOICE_TITLES.get((field, value), value)
    unit, scale = display_unit(field)
    if field == "input_output_mix":
        return f"{f.text(value)}:1 input:output"
    if unit == "%":
        return f.pct(value, 1 if abs(value * 100 - round(value * 100)) > 1e-9 else 0)
    if unit == "% per year":
        return f"{f.pct(value)} per year"
    if unit == "$/kWh":
        return f"${f.sig(value, 3)}/kWh"
    if field == "usd_per_kwh":
        return f"${f.sig(value, 3)}/kWh"
    shown = f.text(float(value) * scale) if isinstance(value, float) else f.text(value)
    if unit.startswith("$M"):
        return f"${shown}M" + unit[2:]
    return f"{shown} {unit}".strip()


@functools.lru_cache(maxsize=64)
def _assumptions_frame(assumptions, economics) -> pl.DataFrame:
    """:func:`econ.assumptions.assumptions_frame`, memoized per (assumptions, economics): a rerun that does not
    change them does not rebuild the table (both are frozen, hashable dataclasses)."""
    return assumptions_frame(assumptions, economics)


@functools.lru_cache(maxsize=64)
def human_frame(assumptions, economics) -> pl.DataFrame:
    """Every assumption for a page: group, human name, value with its unit, source (no raw identifiers).

    Downloads keep :func:`econ.assumptions.assumptions_frame` (stored names and values). Memoized per inputs.
    """
    raw = _assumptions_frame(assumptions, economics)
    values = {**{k: getattr(assumptions, k) for k in raw.filter(pl.col("group") == "performance")["name"]},
              **{k: getattr(economics, k) for k in raw.filter(pl.col("group") == "economics")["name"]}}
    return pl.DataFrame({
        "group": [_GROUP_TITLES.get(g, g.capitalize()) for g in raw["group"]],
        "assumption": [label(n) for n in raw["name"]],
        "value": [display_value(n, values[n]) for n in raw["name"]],
        "source": raw["source"].to_list(),
    }, schema={"group": pl.String, "assumption": pl.String, "value": pl.String, "source": pl.String})


def export_frame(catalog, assumptions, economics, *, model=None, hardware=None, region=None,
                 rows: pl.DataFrame | None = None) -> pl.DataFrame:
    """Assumptions (group, name, value, source) plus one row per catalog row used (its ``as_of`` and source;
    ``rows``: :func:`catalog_rows` of the same arguments, when the caller has it)."""
    frame = _assumptions_frame(assumptions, economics)
    if rows is None:
        rows = catalog_rows(catalog, model=model, hardware=hardware, region=region)
    used = rows.select(pl.format("catalog: {}", pl.col("table")).alias("group"), pl.col("id").alias("name"),
                       pl.format("as of {}", pl.col("as_of")).alias("value"), "source")
    return pl.concat([frame, used], how="vertical_relaxed")


def show_assumptions(assumptions, economics, *, key: str, group: str | None = None, height="auto") -> None:
    """The assumptions as a read-only table with human names, formatted values and sources."""
    frame = human_frame(assumptions, economics)
    if group:
        frame = frame.filter(pl.col("group") == _GROUP_TITLES.get(group, group)).drop("group")
    st.dataframe(frame, hide_index=True, key=key, height=height, placeholder="\u2013",
                 column_config={"group": st.column_config.TextColumn("Group"),
                                "assumption": st.column_config.TextColumn("Assumption"),
                                "value": st.column_config.TextColumn("Value"),
                                "source": st.column_config.TextColumn("Source", width="large")})


def show(catalog, assumptions, economics, *, key: str, model=None, hardware=None, region=None,
         expanded: bool = False) -> pl.DataFrame:
    """Draw the assumptions (value + source) and the catalog rows' sources.

    Returns
    -------
    pl.DataFrame of :func:`export_frame` (for the downloads).
    """
    from dashboards.components import memory, state

    hw = [hardware] if isinstance(hardware, str) else list(hardware or [])
    # the catalog rows and their list depend on the catalog and the ids only, not on the economics: kept (a rerun
    # after a PUE change lists the same rows; ~40 source cells formatted on Hardware comparison)
    token = state.token_of(catalog)  # None: not the session's catalog, nothing identifies it: not kept
    rows, listed = memory.memo(rows_used, catalog, model=model, hardware=hw, region=region, max_entries=64,
                               key=None if token is None else (token, model, tuple(hw), region))
    with st.expander("Assumptions and sources", expanded=expanded):
        st.caption("Efficiency factors are edited on the Assumptions page; economics in the sidebar.")
        show_assumptions(assumptions, economics, key=f"{key}.assumptions")
        if rows.height:
            st.markdown("**Catalog rows used**")
            st.markdown(listed)
    return export_frame(catalog, assumptions, economics, model=model, hardware=hw, region=region, rows=rows)


def rows_used(catalog, *, model=None, hardware=None, region=None) -> tuple[pl.DataFrame, str]:
    """(:func:`catalog_rows`, their markdown list with display names and linked sources) for :func:`show`."""
    rows = catalog_rows(catalog, model=model, hardware=hardware, region=region)
    if not rows.height:
        return rows, ""
    shown = {**dict(catalog.models.select("id", "display_name").iter_rows()),
             **dict(catalog.accelerators.select("id", "display_name").iter_rows())}  # names, not ids (19.3)
    return rows, "\n".join(f"- {t} {safe_text.md(shown[i]) if shown.get(i) else f'`{i}`'} (as of {a}): {links(s)}"
                           for t, i, s, a in rows.select("table", "id", "source", "as_of").rows())
