"""Assumptions: every table and efficiency factor behind the numbers, viewable, editable, with sources.

Edits and uploads are validated with the same rules as ``data/`` (:func:`econ.tables.catalog.validate_table`
and :func:`econ.tables.catalog.load_catalog`); errors name the row and the column, and nothing is applied
until the whole table is valid. Changes last for this browser session; "Reset" restores the
shipped tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from dataclasses import fields as dc_fields  # noqa: E402

import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from econ.vocabulary import column_title as title  # noqa: E402
from dashboards.components import fields, fmt, profiles, safe_text, scenario_sidebar, sources, state, table  # noqa: E402,E501
from econ.analyses.owning_cost import explanation, owned_vs_semianalysis  # noqa: E402
from econ.assumptions import ASSUMPTION_SOURCES, Assumptions, assumptions_frame  # noqa: E402
from econ.tables.catalog import TABLES, validate_table  # noqa: E402
from econ.errors import DataError  # noqa: E402
from econ.io.scenario import SPECS, Scenario  # noqa: E402
from econ.tables.rental_rates import load_rental_rates, spread  # noqa: E402

TITLE = "Assumptions"
ICON = ":material/tune:"
ORDER = 90

TABLE_TITLES = {"accelerators": "Accelerators", "models": "Models", "power_prices": "Power prices (regions)",
                "facilities": "Facilities"}
UPLOADABLE = ("accelerators", "models")
EFFICIENCY_FIELDS = tuple(f.name for f in dc_fields(Assumptions)
                          if f.name in SPECS and SPECS[f.name].kind in ("float", "int"))
"""Editable efficiency factors: the Assumptions fields a scenario holds as numbers (not the calibration set)."""

KV_MEMORY_RULE_TITLES = {
    "total": "Of total HBM (vLLM, SGLang)",
    "free": "Of free HBM (TensorRT-LLM)",
}
"""How the KV-cache memory rule reads on the page (econ.vocabulary KV_MEMORY_RULES)."""


def _version(name: str) -> int:
    return st.session_state.get(f"as.ver.{name}", 0)


def _bump(name: str) -> None:
    st.session_state[f"as.ver.{name}"] = _version(name) + 1


_DEFAULT_SCENARIO = Scenario()


def efficiency_frame(sc: Scenario, cat=None) -> pl.DataFrame:
    """One row per efficiency factor: field (hidden), name, value in its display unit, unit, valid range, source,
    and (with a catalog) ``in_use``: whether answers on the sidebar's accelerator and precision take it from
    their calibration profile (and which), from the value here (set by you), or assume it (not calibrated).

    Fractions show in % (0.6 -> 60), step overheads in ms and hop latencies in us
    (:func:`dashboards.components.sources.display_unit`); :func:`check_efficiency` converts back.
    """
    status = profiles.efficiency_status(cat, sc.hardware, sc.precision, sc.assumptions()) if cat is not None else {}
    rows = []
    for f in EFFICIENCY_FIELDS:
        spec = SPECS[f]
        unit, scale = sources.display_unit(f)
        row = {"field": f, "label": sources.label(f), "value": float(getattr(sc, f)) * scale, "unit": unit,
               "range": f"{fmt.text(spec.lo * scale)} to {fmt.text(spec.hi * scale)}",
               "source": ASSUMPTION_SOURCES.get(f, "")}
        if cat is not None:
            changed = getattr(sc, f) != getattr(_DEFAULT_SCENARIO, f)
            row["in_use"] = status.get(f, "Set by you (not calibrated)" if changed else "Assumed (not calibrated)")
        rows.append(row)
    return pl.DataFrame(rows)


def check_efficiency(edited: pl.DataFrame) -> tuple[dict, list[str]]:
    """Valid changes (stored units) and one message per invalid row (assumption, value, range, unit)."""
    changes, errors = {}, []
    for f, label, v in edited.select("field", "label", "value").rows():
        spec = SPECS[f]
        unit, scale = sources.display_unit(f)
        lo, hi = spec.lo * scale, spec.hi * scale
        if v is None or not (lo * (1 - 1e-12) <= v <= hi * (1 + 1e-12)):
            shown = "empty" if v is None else fmt.text(v)
            errors.append(f"{label}: {shown} is outside {fmt.text(lo)} to {fmt.text(hi)} {unit}".rstrip())
        elif spec.kind == "int" and v != int(v):
            errors.append(f"{label}: {fmt.text(v)} is not a whole number")
        else:
            value = int(v) if spec.kind == "int" else min(max(float(v) / scale, spec.lo), spec.hi)
            changes[f] = value
    return changes, errors


def why_two_values(cat, sc: Scenario, field: str = "eta_bw") -> str:
    """Why the efficiency table shows two numbers for one factor ("HBM bandwidth efficiency 60%" beside "in use
    80.6%"), in words with the real reason: the Value column is the scalar default (its source: the v1 global fit,
    :data:`econ.assumptions.ASSUMPTION_SOURCES`), which an answer takes only without a calibration profile or
    when you edit it; "In use" is the sidebar accelerator's profile value from data/calibration.csv (econ calibrate)
    with its case count, or the scalar when no profile applies (issue 19.2)."""
    label = sources.label(field)
    scalar = sources.display_value(field, getattr(sc, field))
    default = sources.display_value(field, getattr(_DEFAULT_SCENARIO, field))
    origin = safe_text.md(ASSUMPTION_SOURCES.get(field, "").split(". ")[0].split(": ")[0].rstrip("."))
    hw = safe_text.md(cat.accelerator(sc.hardware)["display_name"]) if sc.hardware in \
        cat.accelerators["id"].to_list() else "the accelerator"
    prof = profiles.profile_of(cat, sc.hardware, sc.precision)
    row = next((r for r in cat.calibration.iter_rows(named=True) if r["profile"] == prof), None) \
        if prof and getattr(cat, "calibration", None) is not None else None
    why = (f"**Why two numbers.** 'Value' is the scalar default{f' ({default})' if scalar == default else ''}: "
           f"{label} {scalar} is {'the ' + origin if origin else 'an assumed value'}. An answer takes it only where no calibration "
           "profile applies or when you edit it. ")
    if row is None or row.get(field) is None:
        return why + (f"No calibration profile covers {hw} at {sc.precision.upper()}, so answers there use the "
                      "Value column.")
    fit = next((p.strip() for p in str(row.get("notes") or "").split(";") if p.strip().startswith("fitted on")), "")
    basis = fit if fit and not row.get("fallback_from") else profiles.fallback_text(row).lower()
    return why + (f"'In use' is what answers on {hw} at {sc.precision.upper()} take: the "
                  f"{profiles.profile_title(prof)} calibration profile of data/calibration.csv (econ calibrate: "
                  f"{safe_text.md(basis)}), where {label} is "
                  f"{sources.display_value(field, row[field])}. Calibration fits each generation and precision to "
                  "its measured runs, so it replaces the one global value.")


def efficiency_section(sc: Scenario) -> None:
    """Editable efficiency factors (they are part of the scenario, so they travel in the link)."""
    st.subheader("Efficiency factors")
    cat = state.catalog()
    hw = safe_text.md(str(cat.accelerator(sc.hardware)["display_name"])) if sc.hardware in \
        cat.accelerators["id"].to_list() else "the accelerator"
    st.caption("Achieved fractions of the datasheet roofline and serving-system facts. Edit a value; it applies "
               "to every page and is saved in the link and in scenario files. A value left at its default is "
               "replaced, row by row, by the calibration profile of the accelerator's generation and precision "
               f"(Calibration page); 'In use' says what answers on {hw} at {sc.precision.upper()} take. "
               "Changing a calibrated value pins it for every accelerator; Reset restores the profiles.")
    st.caption(why_two_values(cat, sc))
    frame = efficiency_frame(sc, cat)
    key = state.widget_key(f"efficiency.{_version('eff')}")  # cleared with the scenario widgets on a load
    edited = st.data_editor(frame, key=key, hide_index=True,
                            disabled=["field", "label", "unit", "in_use", "range", "source"],
                            column_order=["label", "value", "unit", "in_use", "range", "source"],
                            placeholder=fmt.MISSING,
                            column_config={
                                "label": st.column_config.TextColumn("Assumption", pinned=True),
                                "value": st.column_config.NumberColumn("Value", format="%.4g",
                                                                       help="Edit here; checked against the range"),
                                "unit": st.column_config.TextColumn("Unit"),
                                "in_use": st.column_config.TextColumn("In use (calibrated or set by you)",
                                                                      width="large"),
                                "range": st.column_config.TextColumn("Valid range"),
                                "source": st.column_config.TextColumn("Source", width="large")})
    changes = {k: v for k, v in check_efficiency(edited)[0].items()
               if abs(v - getattr(sc, k)) > 1e-9 * max(1.0, abs(getattr(sc, k)))}  # display rounding is no edit
    errors = check_efficiency(edited)[1]
    for e in errors:
        st.error(f"Efficiency factors: {e}. Not applied; the previous value stays in force.", icon=":material/error:")
    if changes:
        state.update(**changes)
    fields.select("kv_memory_rule", list(KV_MEMORY_RULE_TITLES), format_func=KV_MEMORY_RULE_TITLES.get,
                  label="KV cache: usable HBM share taken",
                  help=f"{SPECS['kv_memory_rule'].help}. Source: {ASSUMPTION_SOURCES['kv_memory_rule']}")
    c1, c2 = st.columns([3, 2])
    fields.toggle("stream_input_embedding", container=c1,
                  label="Stream the whole input embedding (seed convention)")
    if c2.button("Reset efficiency factors to defaults", key="as.eff.reset", icon=":material/restart_alt:"):
        default = Scenario()
        state.update(**{f: getattr(default, f) for f in EFFICIENCY_FIELDS},
                     stream_input_embedding=default.stream_input_embedding, kv_memory_rule=default.kv_memory_rule)
        _bump("eff")
        for f in ("stream_input_embedding", "kv_memory_rule"):
            st.session_state.pop(state.widget_key(f), None)
        st.rerun()


def _with_links(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(link=pl.col("source").map_elements(sources.first_url, return_dtype=pl.String))


def table_editor(name: str) -> None:
    """One catalog table in a data editor; "Apply" validates the whole table before it takes effect."""
    cat = state.catalog()
    raw = _with_links(state.raw_table(cat, name))
    key = f"as.ed.{name}.{_version(name)}"
    id_col = TABLES[name][2]
    def _config(c):
        help_ = f"CSV column `{c}`" + (f", {TABLES[name][1][c].unit}" if TABLES[name][1][c].unit else "")
        if raw.schema[c].is_numeric() and c not in ("year", "as_of"):  # 11,700,000 not 11700000.0
            return st.column_config.NumberColumn(title(c), help=help_, format="localized")
        return st.column_config.Column(title(c), help=help_)

    config = {c: _config(c) for c in raw.columns if c in TABLES[name][1]}
    config["link"] = st.column_config.LinkColumn("Source link", help="First web address in `source`",
                                                 display_text="open")
    config[id_col] = st.column_config.TextColumn(title(id_col), help=f"CSV column `{id_col}`: unique kebab-case id",
                                                 pinned=True)
    edited = st.data_editor(raw, key=key, num_rows="dynamic", hide_index=True, disabled=["link"],
                            column_config=config, height=360, placeholder=fmt.MISSING)
    c1, c2, _ = st.columns([1, 1, 3])
    err_key = f"as.err.{name}"
    if c1.button("Apply edits", key=f"as.apply.{name}", icon=":material/check:"):
        try:
            new = state.build_catalog({name: edited.drop("link")})
        except DataError as exc:
            st.session_state[err_key] = str(exc)
        else:
            st.session_state.pop(err_key, None)
            state.apply_catalog(new)
            st.session_state["as.msg"] = f"{TABLE_TITLES[name]}: edits applied ({edited.height} rows)."
            _bump(name)
            st.rerun()
    if c2.button("Discard edits", key=f"as.discard.{name}"):
        st.session_state.pop(err_key, None)
        _bump(name)
        st.rerun()
    if err_key in st.session_state:
        st.error("Not applied; the previous table stays in force.\n\n" +
                 _as_list(safe_text.md(st.session_state[err_key])),
                 icon=":material/error:")
    with st.expander(f"Sources of {TABLE_TITLES[name].lower()}"):
        st.markdown("\n".join(f"- `{i}` (as of {a}): {sources.links(s)}"
                              for i, s, a in raw.select(id_col, "source", "as_of").rows()))


def _as_list(message: str) -> str:
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    if len(lines) <= 1:
        return message
    return lines[0] + "\n" + "\n".join(f"- {ln}" for ln in lines[1:])


def read_upload(data: bytes, name: str) -> pl.DataFrame:
    """Parse and validate an uploaded CSV of ``name`` rows; raise DataError naming row and column.

    Bounded (:func:`econ.tables.uploads.read_table_bytes`: size and row limits); warnings (a column not in the
    schema, ignored) are kept in ``st.session_state["as.up.notes"]`` for the success message.
    """
    import warnings

    from econ.tables.rules import DataWarning
    from econ.tables.uploads import read_table_bytes

    fname, schema, id_col = TABLES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DataWarning)
        frame = validate_table(read_table_bytes(data, f"uploaded {fname}", allow_xlsx=False), schema, id_col,
                               f"uploaded {fname}")
    st.session_state["as.up.notes"] = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
    return frame


def upload_section() -> None:
    """Upload a CSV of your own accelerators or models: add rows or replace the table, after validation."""
    st.subheader("Upload your own accelerators or models")
    c1, c2 = st.columns(2)
    name = c1.radio("Table", UPLOADABLE, format_func=lambda n: TABLE_TITLES[n], horizontal=True, key="as.up.table")
    mode = c2.radio("Mode", ["add", "replace"], horizontal=True, key="as.up.mode",
                    format_func=lambda m: "Add rows to the table" if m == "add" else "Replace the whole table")
    st.caption(f"Same columns as data/{TABLES[name][0]} (see data/README.md); every row needs `source` and "
               "`as_of`. Download a table above as a template.")
    up_key = f"as.upload.{_version('upload')}"
    upload = st.file_uploader(f"CSV of {TABLE_TITLES[name].lower()}", type=["csv"], key=up_key)
    if upload is not None and st.session_state.get("as.up.done") != (upload.file_id, name, mode):
        st.session_state["as.up.done"] = (upload.file_id, name, mode)
        try:
            new_rows = read_upload(upload.getvalue(), name)
            current = state.raw_table(state.catalog(), name)
            merged = new_rows if mode == "replace" else pl.concat([current, new_rows], how="vertical_relaxed")
            new = state.build_catalog({name: merged})
        except DataError as exc:
            st.session_state["as.up.err"] = str(exc)
        else:
            st.session_state.pop("as.up.err", None)
            state.apply_catalog(new)
            _bump(name)
            verb = "added to" if mode == "add" else "now form"
            notes = "".join(f" Note: {n}." for n in st.session_state.pop("as.up.notes", []))
            st.session_state["as.msg"] = (f"{upload.name}: {new_rows.height} row(s) {verb} "
                                          f"{TABLE_TITLES[name].lower()}.{notes}")
            st.rerun()
    if "as.up.err" in st.session_state:
        st.error("Upload not applied; the previous data stays in force.\n\n" +
                 _as_list(safe_text.md(st.session_state["as.up.err"])),
                 icon=":material/error:")


def owning_cost_section(catalog, economics, hardware: str) -> None:
    """The default owned GPU-hour beside SemiAnalysis's owning cost, step by step (econ.analyses.owning_cost), and
    the market rental rates behind the on-demand tiers (data/rental_rates.csv)."""
    st.subheader("Owned GPU-hour against SemiAnalysis's owning cost")
    hw = hardware if catalog.accelerator(hardware)["all_in_capex_usd"] is not None else "h100-sxm"
    steps = owned_vs_semianalysis(catalog, economics, hw)
    st.markdown(safe_text.md(explanation(steps)))
    steps = steps.rename({"usd_per_gpu_hour": "usd_per_gpu_hour_of_existence"})  # not per utilized hour (19.3)
    table.show(steps, key="as.owning", name=f"owned-vs-semianalysis-{hw}", catalog=catalog)
    with st.expander("Market rental rates behind the on-demand tiers (data/rental_rates.csv)"):
        st.caption("Per accelerator, provider kind and commitment: the cheapest, median and dearest provider's latest "
                   "price. Each on-demand tier is the median of the providers' latest offers of its kind within a "
                   "year of the newest (data/README.md, rental_rates.csv).")
        rates = load_rental_rates(catalog.data_dir, catalog.accelerators["id"])
        table.show(spread(rates), key="as.rates", name="rental-rate-spread", catalog=catalog)


def render() -> None:
    """Draw the page."""
    sc = scenario_sidebar.current()
    cat_in_use = state.catalog_in_use()
    st.title("Assumptions and data")
    if cat_in_use.edited:
        st.info("You are using edited tables (this session only).", icon=":material/edit:")
    if "as.msg" in st.session_state:
        st.success(safe_text.md(st.session_state.pop("as.msg")), icon=":material/check_circle:")  # holds a file name
    efficiency_section(sc)
    sc = state.scenario()
    st.subheader("Economics")
    st.caption("Finance and power inputs are set in the sidebar; here with their sources.")
    economics = sc.economics(cat_in_use.catalog)
    all_rows = assumptions_frame(sc.assumptions(), economics)
    sources.show_assumptions(sc.assumptions(), economics, key="as.econ.table", group="economics")
    table.downloads(all_rows.filter(pl.col("group") == "economics"), key="as.econ", name="economics-assumptions",
                    metadata={"scenario": sc.to_query_params()}, catalog=cat_in_use.catalog)
    st.caption("The CSV/XLSX above hold the economics rows in stored units (field names as in scenario files); "
               "every page's downloads carry all assumptions.")
    owning_cost_section(cat_in_use.catalog, economics, sc.hardware)
    st.subheader("Catalog tables")
    tabs = st.tabs([TABLE_TITLES[n] for n in TABLES])
    for tab, name in zip(tabs, TABLES):
        with tab:
            table_editor(name)
            table.downloads(state.raw_table(state.catalog(), name), key=f"as.dl.{name}", name=name,
                            catalog=state.catalog())
    upload_section()
    if st.button("Reset all tables to the shipped data", key="as.reset_all", icon=":material/restart_alt:",
                 disabled=not cat_in_use.edited):
        state.apply_catalog(None)
        for n in TABLES:
            _bump(n)
        for k in ("as.up.err", "as.up.done"):
            st.session_state.pop(k, None)
        _bump("upload")
        st.session_state["as.msg"] = "All tables reset to the shipped data."
        st.rerun()


if __name__ == "__main__":
    render()

