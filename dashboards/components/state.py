"""Session state of the dashboard: the catalog in force and the scenario (mirrored in the URL).

- The shipped catalog (or ``$ECON_DATA_DIR``) is loaded once per process (``st.cache_resource``);
  a user's edits or uploads from the Assumptions page replace it for their session only, after
  validation, under a content token so cached results never mix catalogs.
- The scenario lives in ``st.session_state`` as one :class:`econ.io.scenario.Scenario` and is written to
  the URL query string on every run (only fields that differ from the defaults), so a copied link
  reproduces the view. The first run of a session reads the URL (unknown ids and out-of-range values
  become warnings and defaults).
- Widgets bound to scenario fields use the key ``sc.<field>``; Streamlit drops a widget's state when
  its page is not shown, so the canonical value is kept outside the widget and re-seeded from it.
- A widget's value belongs to its page unless the field is shared (:data:`SHARED_FIELDS`: the
  sidebar's scenario and the efficiency factors of the Assumptions page). A page-local field set on one
  page (say the tokens/s-per-user floor on Hardware comparison) is kept in that page's overlay and
  never changes another page (the optimizer's SLO, the Cluster page's serving floor), which read the
  base scenario (defaults, the link or the loaded file) plus their own overlay. The URL holds the
  scenario of the page in view.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl
import streamlit as st

from econ.assumptions import Assumptions, Economics
from econ.tables.catalog import TABLES, Catalog, load_catalog
from econ.tables.custom import CUSTOM_ID
from econ.io.scenario import SCENARIO_FIELDS, Scenario, from_mapping, substitutes_the_accelerator

SCENARIO_KEY = "_econ_scenario"
WARNINGS_KEY = "_econ_warnings"
STOP_KEY = "_econ_stop"
CATALOG_KEY = "_econ_catalog_override"
APP_FLAG = "_econ_app_sidebar"
WIDGET_PREFIX = "sc."
LOCAL_KEY = "_econ_page_overrides"
PAGE_KEY = "_econ_page"
OWNER_KEY = "_econ_widget_owner"

SIDEBAR_FIELDS: frozenset[str] = frozenset({
    "model", "hardware", "precision", "input_len", "output_len", "workload", "region", "usd_per_kwh", "pue", "basis",
    "usd_per_gpu_hour", "cost_of_capital_frac", "accelerator_life_years", "facility_life_years",
    "build_usd_per_mw_it", "opex_frac_of_capex_per_year", "utilization_frac", "input_output_mix", "cache_hit_frac",
    "cached_input_cost_frac",
} | {f for f in SCENARIO_FIELDS if f.startswith("custom_")})
"""Scenario fields drawn by the shared sidebar (``scenario_sidebar.show``)."""

SHARED_FIELDS: frozenset[str] = (SIDEBAR_FIELDS | {f for f in SCENARIO_FIELDS if f in Assumptions.__dataclass_fields__}
                                 | {f for f in SCENARIO_FIELDS if f in Economics.__dataclass_fields__})
"""Fields whose widgets change every page: the sidebar's, and the efficiency factors and economics
(edited on the Assumptions page, which applies them app-wide). Every other scenario field is
page-local: a widget on one page never changes another page."""


@dataclass(frozen=True)
class CatalogInUse:
    """The catalog a session computes with, and a token that identifies its content (cache key)."""

    catalog: Catalog
    token: str
    edited: bool


def data_dir() -> str | None:
    """Folder of the user's own tables (``ECON_DATA_DIR``), or None for the shipped ``data/``."""
    return os.environ.get("ECON_DATA_DIR") or None


@st.cache_resource(show_spinner=False)
def _default_catalog(path: str | None) -> Catalog:
    return load_catalog(path)


def base_catalog_in_use() -> CatalogInUse:
    """The session's tables: the user's validated edits if any, else the shipped/default ones (no custom row)."""
    override = st.session_state.get(CATALOG_KEY)
    if override is not None:
        return override
    path = data_dir()
    return CatalogInUse(_default_catalog(path), f"default:{path or ''}", False)


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)  # a catalog each (~1-2 MB with its engine arrays)
def _with_custom(token: str, spec, _base: Catalog) -> Catalog:
    from econ.tables.custom import with_custom_accelerator
    return with_custom_accelerator(_base, spec)


CUSTOM_ERROR_KEY = "_econ_custom_error"


def catalog_in_use() -> CatalogInUse:
    """The session's catalog: :func:`base_catalog_in_use` plus the scenario's custom accelerator when one is in use.

    The custom row goes through the catalog's validation (:func:`econ.tables.custom.with_custom_accelerator`); a
    row that fails it is left out and the reason kept for the sidebar (``custom_error()``).
    """
    base = base_catalog_in_use()
    spec = base_scenario().custom_spec()  # the first run reads it from the URL (parsed with the base tables)
    if spec is None:
        st.session_state.pop(CUSTOM_ERROR_KEY, None)
        return base
    from econ.errors import EconError
    try:
        cat = _with_custom(base.token, spec, _base=base.catalog)
    except EconError as exc:
        st.session_state[CUSTOM_ERROR_KEY] = str(exc)
        sc = base_scenario()
        if CUSTOM_ID in (sc.hardware, sc.h2h_a_hardware, sc.h2h_b_hardware):  # it would be priced as another chip
            from econ.io.scenario import ScenarioWarning
            stop = ScenarioWarning(f"custom accelerator not used: {' '.join(str(exc).split())}", "custom_accelerator")
            if stop not in stopped():
                st.session_state[STOP_KEY] = stopped() + [stop]
        return base
    st.session_state.pop(CUSTOM_ERROR_KEY, None)
    digest = hashlib.sha256(repr(spec).encode()).hexdigest()[:12]
    return CatalogInUse(cat, f"{base.token}+custom:{digest}", base.edited)


def custom_error() -> str | None:
    """Why the scenario's custom accelerator is not in the catalog (validation message), or None."""
    return st.session_state.get(CUSTOM_ERROR_KEY)


def catalog() -> Catalog:
    """Shortcut for ``catalog_in_use().catalog``."""
    return catalog_in_use().catalog


def raw_table(cat: Catalog, name: str) -> pl.DataFrame:
    """One catalog table with only its CSV columns (datasheet units), for viewing and editing."""
    _, schema, _ = TABLES[name]
    return getattr(cat, name).select(list(schema))


def build_catalog(tables: dict[str, pl.DataFrame], base: Catalog | None = None) -> CatalogInUse:
    """Validate edited tables exactly as ``data/`` is validated and return the catalog they make.

    Parameters
    ----------
    tables : dict of table name -> frame with the CSV columns (any dtypes)
        Tables not given come from ``base`` (default: the catalog in force).

    Raises
    ------
    econ.errors.DataError
        Naming file, row id and column of every problem (nothing is applied).
    """
    base = base or base_catalog_in_use().catalog
    with tempfile.TemporaryDirectory(prefix="econ-edit-") as tmp:
        digest = hashlib.sha256()
        for name in TABLES:
            frame = tables[name] if name in tables else raw_table(base, name)
            fname = TABLES[name][0]
            text = frame.write_csv()
            digest.update(fname.encode() + text.encode())
            Path(tmp, fname).write_text(text, encoding="utf-8")
        cat = load_catalog(tmp)
    cat = replace(cat, data_dir=Path(data_dir() or base.data_dir))
    return CatalogInUse(cat, "edit:" + digest.hexdigest()[:16], True)


def apply_catalog(new: CatalogInUse | None) -> None:
    """Put a validated catalog in force for this session (None = back to the default)."""
    if new is None:
        st.session_state.pop(CATALOG_KEY, None)
    else:
        st.session_state[CATALOG_KEY] = new
    sc, warnings = from_mapping({}, base_catalog_in_use().catalog, base=base_scenario())
    set_scenario(sc, warnings)


# ---------------------------------------------------------------------------------------------
# scenario
# ---------------------------------------------------------------------------------------------

def set_page(page_id: str) -> None:
    """Name the page this run draws (``app.py`` calls it before the sidebar); page-local fields follow it."""
    st.session_state[PAGE_KEY] = page_id


def page_id() -> str:
    """The page this run draws: set by ``app.py``, else (a page run on its own) the script's file name."""
    page = st.session_state.get(PAGE_KEY)
    if page:  # set by app.py on every run (callbacks run before it, with the page of the last run)
        return page
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
        ctx = get_script_run_ctx()
        return Path(ctx.main_script_path).stem if ctx is not None else "main"
    except Exception:  # noqa: BLE001 - outside a script run
        return "main"


def is_shared(field: str) -> bool:
    """True when ``field`` belongs to every page (sidebar, efficiency factors, economics)."""
    return field in SHARED_FIELDS


def base_scenario() -> Scenario:
    """The scenario every page starts from (defaults, the link or the loaded file), before page overrides."""
    if SCENARIO_KEY not in st.session_state:
        sc, warnings = from_mapping({k: st.query_params.get_all(k) for k in st.query_params},
                                    base_catalog_in_use().catalog)
        st.session_state[SCENARIO_KEY] = sc
        _set_warnings(sc, warnings)
    return st.session_state[SCENARIO_KEY]


def _set_warnings(sc: Scenario, warnings) -> None:
    st.session_state[WARNINGS_KEY] = list(warnings or [])
    st.session_state[STOP_KEY] = substitutes_the_accelerator(warnings or [], sc)


def page_overrides(page: str | None = None) -> dict:
    """The page-local fields a page's widgets have set (field -> value)."""
    return dict(st.session_state.get(LOCAL_KEY, {}).get(page or page_id(), {}))


def scenario() -> Scenario:
    """The scenario of the page in view: the base scenario plus this page's own widget values.

    On the first run of a session the base is read from the URL query string.
    """
    base = base_scenario()
    local = st.session_state.get(LOCAL_KEY, {}).get(page_id())
    return replace(base, **local) if local else base


def set_scenario(sc: Scenario, warnings: list[str] | None = None) -> None:
    """Replace the whole scenario (file load, reset, catalog change): every page and widget re-seeds from it."""
    st.session_state[SCENARIO_KEY] = sc
    _set_warnings(sc, warnings)
    st.session_state[LOCAL_KEY] = {}
    st.session_state[OWNER_KEY] = {}
    for k in [k for k in st.session_state if isinstance(k, str) and k.startswith(WIDGET_PREFIX)]:
        del st.session_state[k]


def update(**changes) -> Scenario:
    """Change some fields (from widgets): shared fields for every page, the others for this page only.

    Returns the scenario of the page in view.
    """
    sc = scenario()
    changed = {k: v for k, v in changes.items() if getattr(sc, k) != v}
    if not changed:
        return sc
    shared = {k: v for k, v in changed.items() if is_shared(k)}
    local = {k: v for k, v in changed.items() if not is_shared(k)}
    st.session_state[WARNINGS_KEY] = []  # the user changed the view: it is no longer the loaded one
    if shared:
        st.session_state[SCENARIO_KEY] = replace(base_scenario(), **shared)
    if local:
        pages = dict(st.session_state.get(LOCAL_KEY, {}))
        pages[page_id()] = {**pages.get(page_id(), {}), **local}
        st.session_state[LOCAL_KEY] = pages
    sc = scenario()
    sync_url(sc)
    return sc


def warnings() -> list[str]:
    """Warnings from the last URL/file load (a stale link's fallbacks): they stand, on the page and in every download
    (a ``warnings`` column), while the view is the one loaded; the user's first change of the scenario ends them."""
    return list(st.session_state.get(WARNINGS_KEY) or [])


def stopped() -> list[str]:
    """The warnings that stop every page (another accelerator than the one linked would be priced:
    :func:`econ.io.scenario.substitutes_the_accelerator`), until the user continues with the values shown."""
    return list(st.session_state.get(STOP_KEY) or [])


def release() -> None:
    """The user checked the sidebar and continues with the values shown: the pages compute again."""
    st.session_state[STOP_KEY] = []


def sync_url(sc: Scenario) -> None:
    """Write the scenario's non-default fields to the URL query string (only when they changed)."""
    want = sc.to_query_params()
    have = {k: st.query_params.get(k) for k in st.query_params}
    if have != want:
        st.query_params.from_dict(want)


def widget_key(field: str) -> str:
    """Session-state key of the widget bound to a scenario field."""
    return WIDGET_PREFIX + field


def seed(field: str, value) -> str:
    """Make sure the widget bound to ``field`` starts from ``value``; returns its key.

    A page-local field's widget is re-seeded when its key was last drawn by another page, so a value
    never carries over from one page's widget to another's.
    """
    key = widget_key(field)
    owners = st.session_state.setdefault(OWNER_KEY, {})
    owner = None if is_shared(field.split(".", 1)[0]) else page_id()
    if key not in st.session_state or owners.get(key) != owner:
        st.session_state[key] = value
        owners[key] = owner
    return key


KEPT_KEY = "_econ_kept"
"""Session entry holding the last value of widgets drawn in lazy tabs ({widget key: value}, :func:`kept`)."""


def kept(key: str, default):
    """The value the widget ``key`` starts from: the one it had the last time it was drawn (:func:`keep`), else
    ``default``.

    Streamlit drops a keyed widget's state after a run that does not draw it (a tab of a page that runs only its open
    tab, ``st.tabs(..., on_change="rerun")``); a plain session entry is kept, so passing ``kept(key, default)`` as
    the widget's initial value brings the user's value back when the tab opens again. The widget's key is its identity
    (Streamlit 1.67 ``key_as_main_identity``), so a changed initial value never resets a drawn widget."""
    return st.session_state.get(KEPT_KEY, {}).get(key, default)


def keep(key: str, value):
    """Remember ``value`` as the widget ``key``'s (see :func:`kept`); returns ``value``."""
    st.session_state.setdefault(KEPT_KEY, {})[key] = value
    return value


def token_of(catalog: Catalog) -> str | None:
    """The cache token of ``catalog`` if it is the session's catalog in force, else None (no safe cache key)."""
    cur = catalog_in_use()
    return cur.token if cur.catalog is catalog else None


def cache_token(cat_in_use: CatalogInUse | None = None) -> str:
    """Cache key of the catalog in force (pages pass it to ``st.cache_data`` functions)."""
    return (cat_in_use or catalog_in_use()).token


__all__ = ["CatalogInUse", "catalog", "catalog_in_use", "base_catalog_in_use", "custom_error", "build_catalog", "apply_catalog", "raw_table", "scenario",
           "base_scenario", "page_overrides", "set_page", "page_id", "is_shared", "set_scenario", "update",
           "warnings", "stopped", "release", "sync_url", "widget_key", "seed", "kept", "keep", "KEPT_KEY", "cache_token", "token_of", "data_dir", "SCENARIO_FIELDS",
           "SHARED_FIELDS", "SIDEBAR_FIELDS", "APP_FLAG"]
