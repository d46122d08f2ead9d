"""Widgets bound to scenario fields: each draws itself, keeps the scenario in step, returns the typed value.

Labels carry units and every widget has a tooltip (``help``) with the valid range and, where the
core documents one, the source of the default (``econ.assumptions``).
"""

from __future__ import annotations

import streamlit as st

from dashboards.components import state
from econ.io.scenario import SPECS


def _help(field: str, extra: str | None, scale: float, unit: str) -> str:
    """Tooltip: the page's text, the field's one valid range and the source of its default (econ.vocabulary)."""
    spec = SPECS[field]
    parts = [extra] if extra else []
    if spec.lo is not None:
        lo, hi = spec.lo * scale, spec.hi * scale
        above = "above " if spec.lo_open else ""
        parts.append(f"Valid range: {above}{lo:,.6g} to {hi:,.6g} {unit}".rstrip())
    if spec.source:
        parts.append(f"Default: {spec.source}")
    return "\n\n".join(parts) or spec.label


def _bounds(spec, is_int: bool, scale: float, step=None):
    """(min, max) of a number widget: the field's one range, displayed at ``scale``; a range that excludes its
    lower bound (``lo_open``) starts one step above it."""
    lo = int(spec.lo) if is_int else float(spec.lo) * scale
    hi = int(spec.hi) if is_int else float(spec.hi) * scale
    if spec.lo_open:
        lo = lo + (step or (1 if is_int else 1e-6))
    return lo, hi


def _label(field: str, label: str | None, unit: str) -> str:
    return label or (f"{SPECS[field].label} ({unit})" if unit else SPECS[field].label)


def number(field: str, *, container=None, label: str | None = None, scale: float = 1.0, unit: str | None = None,
           fmt: str | None = None, step=None, help: str | None = None, disabled: bool = False):
    """A number input for a numeric scenario field. ``scale`` converts for display (0.1 -> 10 %)."""
    c = container or st
    spec = SPECS[field]
    unit = spec.unit if unit is None else unit
    value = getattr(state.scenario(), field)
    is_int = spec.kind == "int" and scale == 1.0
    shown = int(value) if is_int else round(float(value) * scale, 10)
    key = state.seed(field, shown)
    lo, hi = _bounds(spec, is_int, scale, step)
    v = c.number_input(_label(field, label, unit), min_value=lo, max_value=hi, step=step, format=fmt, key=key,
                       help=_help(field, help, scale, unit), disabled=disabled)
    if v is None:
        return value
    new = int(v) if spec.kind == "int" else round(float(v) / scale, 12)
    if spec.kind == "float" and abs(new - float(value)) <= 1e-12 * max(1.0, abs(float(value))):
        return value
    state.update(**{field: new})
    return new


def slider(field: str, *, container=None, label: str | None = None, lo=None, hi=None, step=None, scale: float = 1.0,
           unit: str | None = None, fmt: str | None = None, help: str | None = None):
    """A slider for a numeric scenario field (bounds default to the field's range)."""
    c = container or st
    spec = SPECS[field]
    unit = spec.unit if unit is None else unit
    value = getattr(state.scenario(), field)
    cast = int if spec.kind == "int" else float
    lo = cast(spec.lo * scale) if lo is None else cast(lo)
    hi = cast(spec.hi * scale) if hi is None else cast(hi)
    shown = min(max(cast(round(value * scale, 10)), lo), hi)
    key = state.seed(field, shown)
    v = c.slider(_label(field, label, unit), min_value=lo, max_value=hi, step=step, format=fmt, key=key,
                 help=_help(field, help, scale, unit))
    new = int(v) if spec.kind == "int" else round(float(v) / scale, 12)
    if spec.kind == "float" and abs(new - float(value)) <= 1e-12 * max(1.0, abs(float(value))):
        return value
    state.update(**{field: new})
    return new


def select(field: str, options: list, *, container=None, label: str | None = None, format_func=None,
           help: str | None = None, to_value=None, from_value=None, horizontal_radio: bool = False):
    """A selectbox (or horizontal radio) for a text/optional scenario field.

    ``from_value`` maps the scenario value to an option and ``to_value`` back (e.g. None <-> "auto").
    """
    c = container or st
    value = getattr(state.scenario(), field)
    shown = from_value(value) if from_value else value
    if shown not in options:
        shown = options[0]
    key = state.seed(field, shown)
    if st.session_state.get(key) not in options:
        st.session_state[key] = shown
    kwargs = dict(key=key, help=help or SPECS[field].label, format_func=format_func or str)
    if horizontal_radio:
        v = c.radio(label or SPECS[field].label, options, horizontal=True, **kwargs)
    else:
        v = c.selectbox(label or SPECS[field].label, options, **kwargs)
    new = to_value(v) if to_value else v
    state.update(**{field: new})
    return new


def multiselect(field: str, options: list, *, container=None, label: str | None = None, format_func=None,
                help: str | None = None, placeholder: str = "All"):
    """A multiselect for a tuple-of-ids field (empty = all)."""
    c = container or st
    value = [v for v in getattr(state.scenario(), field) if v in options]
    key = state.seed(field, value)
    st.session_state[key] = [v for v in st.session_state[key] if v in options]
    v = c.multiselect(label or SPECS[field].label, options, key=key, format_func=format_func or str,
                      help=help or SPECS[field].label, placeholder=placeholder)
    state.update(**{field: tuple(v)})
    return tuple(v)


def toggle(field: str, *, container=None, label: str | None = None, help: str | None = None) -> bool:
    """A checkbox for a boolean scenario field."""
    c = container or st
    key = state.seed(field, bool(getattr(state.scenario(), field)))
    v = c.checkbox(label or SPECS[field].label, key=key, help=_help(field, help, 1.0, ""))
    state.update(**{field: bool(v)})
    return bool(v)


def optional_number(field: str, *, auto_label: str, container=None, label: str | None = None, scale: float = 1.0,
                    unit: str | None = None, fmt: str | None = None, default_value=None, help: str | None = None):
    """A field that may be None (automatic): a checkbox "automatic" plus a number input when it is off."""
    c = container or st
    spec = SPECS[field]
    unit = spec.unit if unit is None else unit
    value = getattr(state.scenario(), field)
    auto_key = state.seed(field + ".auto", value is None)
    auto = c.checkbox(auto_label, key=auto_key, help=help or f"Automatic: {auto_label.lower()}")
    if auto:
        state.update(**{field: None})
        return None
    start = value if value is not None else default_value
    is_int = spec.kind == "int" and scale == 1.0
    shown = int(start) if is_int else round(float(start) * scale, 10)
    key = state.seed(field, shown)
    lo, hi = _bounds(spec, is_int, scale)
    v = c.number_input(_label(field, label, unit), min_value=lo, max_value=hi, format=fmt, key=key,
                       help=_help(field, help, scale, unit))
    new = int(v) if spec.kind == "int" else round(float(v) / scale, 12)
    state.update(**{field: new})
    return new


def text(field: str, *, container=None, label: str | None = None, help: str | None = None) -> str:
    """A text input for a free-text scenario field (a name): at most econ.vocabulary.MAX_TEXT_CHARS characters."""
    from econ.io.scenario import from_mapping
    from econ.vocabulary import MAX_TEXT_CHARS

    c = container or st
    key = state.seed(field, str(getattr(state.scenario(), field)))
    v = c.text_input(label or SPECS[field].label, key=key, max_chars=MAX_TEXT_CHARS, help=help or SPECS[field].label)
    ok, warnings = from_mapping({field: v})
    if warnings:  # control characters: keep the last valid name
        return getattr(state.scenario(), field)
    state.update(**{field: getattr(ok, field)})
    return getattr(ok, field)
