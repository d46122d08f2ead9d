"""A result table with human column titles, analyst number formats, and CSV + XLSX downloads.

Display only: values are scaled for reading ($M, ms, %) as :data:`dashboards.COLUMNS` says;
downloads keep the stored units, which every column name carries (``capex_total_usd``), plus the
assumptions and sources (``econ.io.export``, imported lazily).
"""

from __future__ import annotations

import functools
import inspect
import re

import polars as pl
import streamlit as st

from econ.vocabulary import COLUMNS, column_title as title
from econ.formatting import MISSING

PLACEHOLDER = MISSING
"""What an empty cell shows in every table (``st.dataframe(placeholder=...)``): "–", never "None"."""


def column_config(frame: pl.DataFrame, widths: dict | None = None) -> dict:
    """Streamlit column configs: title with unit, number format, and the stored name as the tooltip.

    ``widths``: column -> "small" | "medium" | "large" for text columns whose values must show whole (ids).
    """
    out = {}
    widths = widths or {}
    for c, dt in frame.schema.items():
        help_ = f"`{c}` in downloads"
        spec = COLUMNS.get(c)
        if dt == pl.Boolean:
            out[c] = st.column_config.CheckboxColumn(title(c), help=help_)
        elif dt.is_numeric():
            fmt = spec.table if spec and spec.table else "localized"
            short = band_title(c, frame.columns)
            out[c] = st.column_config.NumberColumn(short or title(c), format=fmt,
                                                   help=f"{title(c)}; {help_}" if short else help_)
        else:
            out[c] = st.column_config.TextColumn(title(c), help=help_, width=widths.get(c))
    return out


def display_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with each column's display scale applied (USD -> $M etc.)."""
    schema = frame.schema  # read once: each ``frame.schema`` builds a Schema (~0.1 ms on a wide frame)
    exprs = [(pl.col(c) * COLUMNS[c].scale).alias(c) for c in frame.columns
             if c in COLUMNS and COLUMNS[c].scale != 1.0 and schema[c].is_numeric()]
    return frame.with_columns(exprs) if exprs else frame


NAME_COLUMNS = ("hardware", "accelerator", "prefill_hardware", "decode_hardware", "series", "model", "model_id")
"""Text columns that hold catalog ids: a table shows the accelerator's or model's name there, the downloads the id
(issue 19.3: ids only in exports and URLs)."""


def catalog_names(catalog=None) -> dict[str, str]:
    """Catalog id -> the name a reader sees in a table: an accelerator's display name without the vendor and the
    parenthesized detail (:func:`econ.formatting.short_accelerator_name`, at most 24 characters), a model's display
    name. ``catalog``: the one in force (default: the session's, :func:`dashboards.components.state.catalog`)."""
    from econ.formatting import short_accelerator_name

    if catalog is None:
        from dashboards.components import state
        catalog = state.catalog()
    names = {i: short_accelerator_name(n, max_chars=24) for i, n in catalog.accelerators.select("id", "display_name")
             .iter_rows() if n}
    names.update((i, n) for i, n in catalog.models.select("id", "display_name").iter_rows() if n)
    return names


KEEP_TEXT = ("source", "link", "url")
"""Text columns shown as written (citations and addresses may spell an id as part of a file name or path)."""


def id_pattern(names: dict[str, str]) -> re.Pattern:
    """A regex matching any id of ``names`` as a whole word inside a text ("not distinguishable from b200, ..."):
    not as part of a longer id, a path or a file name (``b200`` in ``gb200-nvl72`` or ``b200.csv`` does not match)."""
    return _id_pattern(tuple(names))


@functools.lru_cache(maxsize=16)
def _id_pattern(ids: tuple[str, ...]) -> re.Pattern:
    """:func:`id_pattern` of these ids, built once (a page names several tables a rerun)."""
    return re.compile(rf"(?<![\w./-])({id_alternation(ids)})(?![\w-]|\.\w)")


def id_alternation(ids) -> str:
    """A regex alternation of ``ids`` (literal strings) as a prefix tree: at each position it matches what
    ``"|".join(sorted(map(re.escape, ids), key=len, reverse=True))`` matches, the longest id that lets the rest of
    the pattern match (two ids that match at one position are one a prefix of the other, and a tree tries the longer
    first, backing off to the shorter as that list does), without trying every id at every position of a text
    (~40% less time naming the Quote checker's ~230 reasons: issue 19.5; tests/dashboards/test_table.py)."""
    tree: dict = {}
    for word in ids:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}  # an id ends here

    def emit(node: dict) -> str:
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(k for k in node if k)]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(tree) if tree else "(?!)"


def names_in_text(text: str, catalog=None) -> str:
    """``text`` with every catalog id in it replaced by the name a reader sees (a KPI's help, a caption)."""
    names = catalog_names(catalog)
    return id_pattern(names).sub(lambda m: names[m.group(1)], text) if names and text else text


def with_names(frame: pl.DataFrame, catalog=None) -> pl.DataFrame:
    """``frame`` as a reader sees it: the catalog ids of its :data:`NAME_COLUMNS` replaced by names (an unknown
    value stays), and an id inside another text cell ("cost from gb300-nvl72") by its name, except in
    :data:`KEEP_TEXT` columns."""
    schema = frame.schema  # read once: each ``frame.schema`` builds a Schema (~0.1 ms on a wide frame)
    text = [c for c in frame.columns if schema[c] == pl.Utf8 and c not in KEEP_TEXT]
    if not text or frame.height == 0:
        return frame
    names = catalog_names(catalog)
    if not names:
        return frame
    pattern = id_pattern(names)
    named: dict[str, str] = {}  # each distinct text named once

    def rename(value: str | None) -> str | None:
        if not value:
            return value
        if value not in named:
            named[value] = pattern.sub(lambda m: names[m.group(1)], value)
        return named[value]

    exprs = []
    for c in text:
        if c in NAME_COLUMNS:
            exprs.append(pl.col(c).replace(names))
            continue
        values = frame[c].to_list()
        renamed = [rename(v) for v in values]  # a list, not map_elements (~1 ms of bytecode inspection per column)
        if renamed != values:
            exprs.append(pl.Series(c, renamed, dtype=pl.String))
    return frame.with_columns(exprs) if exprs else frame


_BAND = re.compile(r"(.+)_(low|high)(_[ab])?")
"""A band column: ``<value>_low`` / ``<value>_high`` (head to head: ``<value>_low_a``)."""


def band_title(column: str, columns) -> str | None:
    """The short title of a band column shown beside its value ("Band low", "A: band high"), so value and band fit a
    1440 px screen; None for any other column (its full title is the header's help)."""
    m = _BAND.fullmatch(column)
    if not m or m.group(1) + (m.group(3) or "") not in columns:
        return None
    side = (m.group(3) or "").lstrip("_").upper()
    return f"{side}: band {m.group(2)}" if side else f"Band {m.group(2)}"


def band_order(columns) -> list[str]:
    """``columns`` with each band column (:data:`_BAND`) moved right after its value, low then high (issue 19.1:
    the band sat off-screen at 1440 px); a band whose value is not shown stays where it was.

    >>> band_order(["a", "cost", "b", "cost_low", "cost_high"])
    ['a', 'cost', 'cost_low', 'cost_high', 'b']
    """
    columns = list(columns)
    present = set(columns)
    bands: dict[str, list[str]] = {}
    for c in columns:
        m = _BAND.fullmatch(c)
        if m and m.group(1) + (m.group(3) or "") in present:
            bands.setdefault(m.group(1) + (m.group(3) or ""), []).append(c)
    moved = {c for cs in bands.values() for c in cs}
    out = []
    for c in columns:
        if c in moved:
            continue
        out.append(c)
        out += sorted(bands.get(c, []), key=lambda b: _BAND.fullmatch(b).group(2) == "high")
    return out


def show(frame: pl.DataFrame, *, key: str, name: str, columns=None, assumptions: pl.DataFrame | None = None,
         metadata: dict | None = None, catalog=None, xlsx=None, download_frame: pl.DataFrame | None = None,
         height: int | str = "auto", caption: str | None = None, widths: dict | None = None) -> None:
    """Draw ``frame`` (or its ``columns``) as a table with CSV and XLSX download buttons.

    Parameters
    ----------
    frame : pl.DataFrame
    key : str
        Widget-key prefix (unique on the page).
    name : str
        File name stem of the downloads.
    assumptions : pl.DataFrame, optional
        (group, name, value, source) rows written beside the table (the XLSX Assumptions sheet):
        ``econ.assumptions.assumptions_frame`` plus the catalog rows' sources.
    metadata : dict, optional
        Scenario link, etc.: written into the workbook's Metadata sheet.
    catalog : Catalog, optional
        The catalog in force (its ``as_of`` dates go into the workbook).
    xlsx : callable, optional
        Makes the XLSX bytes instead (e.g. :func:`econ.io.export.cost_workbook_bytes` with live formulas).
    download_frame : pl.DataFrame, optional
        What the downloads hold when it is more than the columns shown (e.g. every result column).

    The table shows names where ``frame`` holds catalog ids (:func:`with_names`); the downloads keep the ids.
    """
    view = frame.select(band_order(columns or frame.columns))
    st.dataframe(display_frame(with_names(view, catalog)), column_config=column_config(view, widths), hide_index=True, height=height,
                 key=f"{key}.table", placeholder=PLACEHOLDER)
    if caption:
        st.caption(caption)
    downloads(view if download_frame is None else download_frame, key=key, name=name, assumptions=assumptions,
              metadata=metadata, catalog=catalog, xlsx=xlsx)


def with_view_warnings(frame: pl.DataFrame, metadata: dict | None = None) -> tuple[pl.DataFrame, dict | None]:
    """(frame, metadata) of a download, with the fallbacks in force on this view (a stale link's,
    :func:`dashboards.components.state.warnings`): a ``warnings`` column and a ``warnings`` metadata row."""
    from dashboards.components import state
    notes = state.warnings()
    if not notes:
        return frame, metadata
    text = "; ".join(notes)
    return frame.with_columns(pl.lit(text).alias("warnings")), {**(metadata or {}), "warnings": text}


def _export():
    try:
        from econ.io import export  # lazy: only when a download is clicked
    except ImportError:
        return None
    return export


def _kwargs(fn, **candidates) -> dict:
    """The keyword arguments ``fn`` accepts, among those given and not None."""
    params = inspect.signature(fn).parameters
    return {k: v for k, v in candidates.items() if k in params and v is not None}


def _text_metadata(metadata: dict | None) -> dict | None:
    if metadata is None:
        return None
    return {k: (v if isinstance(v, str) else "&".join(f"{a}={b}" for a, b in v.items()) if isinstance(v, dict)
                else str(v)) for k, v in metadata.items()}


def csv_bytes(frame: pl.DataFrame) -> bytes:
    """CSV of the table in stored units, formula-injection safe (``econ.io.export.to_csv_bytes``)."""
    ex = _export()
    if ex is not None and hasattr(ex, "to_csv_bytes"):
        return ex.to_csv_bytes(frame)
    return frame.write_csv().encode("utf-8")


def xlsx_bytes(frame: pl.DataFrame, assumptions=None, metadata=None, catalog=None) -> bytes:
    """XLSX workbook: the table, the assumptions with sources, metadata (``econ.io.export.to_xlsx_bytes``)."""
    ex = _export()
    if ex is not None and hasattr(ex, "to_xlsx_bytes"):
        return ex.to_xlsx_bytes(frame, **_kwargs(ex.to_xlsx_bytes, assumptions=assumptions,
                                                 metadata=_text_metadata(metadata), catalog=catalog))
    import io

    import xlsxwriter
    buf = io.BytesIO()
    with xlsxwriter.Workbook(buf, {"in_memory": True}) as wb:
        frame.write_excel(wb, worksheet="Results")
        if assumptions is not None:
            assumptions.write_excel(wb, worksheet="Assumptions")
    return buf.getvalue()


def cost_workbook(frame: pl.DataFrame, sc, cat, sources_frame: pl.DataFrame | None = None) -> bytes:
    """A cost table as an XLSX whose $/GPU-hour and $/M tokens are live formulas of its Assumptions sheet
    (:func:`econ.io.export.cost_workbook_bytes`, the one formula writer), for any page's table that holds a cost chain.

    Parameters
    ----------
    frame : pl.DataFrame
        Rows priced with ``sc.economics(cat)`` (:func:`econ.engine.evaluate` columns: ``hardware``, ``basis``, the
        billed token rates and the cost columns).
    sc : econ.io.scenario.Scenario
        The scenario in force (its economics become the named cells; its link goes into the Metadata sheet).
    cat : Catalog
    sources_frame : pl.DataFrame, optional
        :func:`dashboards.components.sources.show`'s rows; the catalog rows (group ``catalog*``) are added to the
        Assumptions sheet.

    Raises
    ------
    InvalidInputError
        If the frame's costs do not follow from the scenario's economics (see ``cost_workbook_bytes``).
    """
    from dashboards.components import state
    ex = _export()
    extra = None if sources_frame is None else sources_frame.filter(pl.col("group").str.starts_with("catalog"))
    metadata = {"scenario": "&".join(f"{k}={v}" for k, v in sc.to_query_params().items())}
    if state.warnings():  # a stale link's fallbacks in force: said in the workbook too
        metadata["warnings"] = "; ".join(state.warnings())
    return ex.cost_workbook_bytes(frame, cat, sc.economics(cat), sc.assumptions(), metadata=metadata,
                                  extra_assumptions=extra)


def downloads(frame: pl.DataFrame, *, key: str, name: str, assumptions=None, metadata=None, catalog=None,
              xlsx=None) -> None:
    """CSV and XLSX buttons; the bytes are made only when clicked (deferred callables).

    While the view carries a stale link's fallbacks (:func:`dashboards.components.state.warnings`), every download
    says so: a ``warnings`` column in the CSV, a ``warnings`` row in the workbook's Metadata sheet."""
    frame, metadata = with_view_warnings(frame, metadata)
    c1, c2, _ = st.columns([1, 1, 5])
    c1.download_button("CSV", lambda: csv_bytes(frame), file_name=f"{name}.csv", mime="text/csv", key=f"{key}.csv",
                       on_click="ignore", icon=":material/download:",
                       help="Stored units in the headers (e.g. usd_per_m_output_tokens)")
    make = xlsx or (lambda: xlsx_bytes(frame, assumptions, metadata, catalog))
    c2.download_button("XLSX", make, file_name=f"{name}.xlsx",
                       mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", key=f"{key}.xlsx",
                       on_click="ignore", icon=":material/download:",
                       help="Workbook: the table, every assumption with its source, and the data dates")
