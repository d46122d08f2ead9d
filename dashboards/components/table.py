"""A result table with human column titles, analyst number formats, and CSV + XLSX downloads.

Display only: values are scaled for reading ($M, ms, %) as :data:`dashboards.COLUMNS` says;
downloads keep the stored units, which every column name carries (``capex_total_usd``), plus the
assumptions and sources (``econ.io.export``, imported lazily).
"""

from __future__ import annotations

import inspect

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
            out[c] = st.column_config.NumberColumn(title(c), format=fmt, help=help_)
        else:
            out[c] = st.column_config.TextColumn(title(c), help=help_, width=widths.get(c))
    return out


def display_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with each column's display scale applied (USD -> $M etc.)."""
    exprs = [(pl.col(c) * COLUMNS[c].scale).alias(c) for c in frame.columns
             if c in COLUMNS and COLUMNS[c].scale != 1.0 and frame.schema[c].is_numeric()]
    return frame.with_columns(exprs) if exprs else frame


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
    """
    view = frame.select(columns) if columns else frame
    st.dataframe(display_frame(view), column_config=column_config(view, widths), hide_index=True, height=height,
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
