"""The shared sidebar: the scenario every page computes with, plus save / load / reset.

``show(key)`` draws it and returns the :class:`econ.scenario.Scenario`; ``current()`` is what pages
call: the scenario the app's sidebar drew this run, or (page run on its own, as in AppTest) the
sidebar drawn by the page itself.
"""

from __future__ import annotations

import streamlit as st

from dashboards.components import fields, safe_text, state
from econ.precision import PRECISIONS
from econ.scenario import Scenario, from_mapping, from_toml

PRECISION_TITLES = {"bf16": "BF16", "fp8": "FP8", "fp4": "FP4 (NVFP4)"}
LOADED_KEY = "_econ_loaded_file"


def current(key: str = "sidebar") -> Scenario:
    """The scenario in force for this run (draws the sidebar when the page runs without ``app.py``)."""
    if st.session_state.get(state.APP_FLAG):
        return state.scenario()
    sc = show(key)
    show_warnings()
    return sc


def show_warnings() -> None:
    """Warnings from reading the URL or a scenario file (unknown ids, out-of-range values), once."""
    for w in state.pop_warnings():
        st.warning("Scenario: " + safe_text.md(w), icon=":material/warning:")  # w quotes the URL/file


def _load_file(key: str) -> None:
    upload = st.session_state.get(key)
    if upload is None:
        return
    sc, warnings = from_toml(upload.getvalue(), state.catalog())
    state.set_scenario(sc, [f"{upload.name}: {w}" for w in warnings])
    st.session_state[LOADED_KEY] = upload.name


def _reset() -> None:
    sc, warnings = from_mapping({}, state.catalog())
    state.set_scenario(sc, warnings)


def show(key: str = "sidebar") -> Scenario:
    """Draw the scenario sidebar and return the scenario.

    Inputs: model, accelerator, precision, input and output lengths, power price (region or $/kWh),
    PUE, owned vs rented, cost of capital, lives, utilization, token mix; save/load as TOML.
    """
    cat = state.catalog()
    sc = state.scenario()
    models = cat.models.select("id", "display_name").rows()
    hws = cat.accelerators.select("id", "display_name").rows()
    regions = cat.power_prices.select("region_id", "region", "segment", "usd_per_kwh").rows()
    model_name = dict(models)
    hw_name = dict(hws)
    region_name = {r[0]: f"{r[1]}, {r[2]} (${r[3]:.4f}/kWh)" for r in regions}
    sb = st.sidebar
    sb.header("Scenario")
    fields.select("model", [m[0] for m in models], container=sb, label="Model",
                  format_func=lambda i: model_name.get(i, i), help="Model served (data/models.csv)")
    fields.select("hardware", [h[0] for h in hws], container=sb, label="Accelerator",
                  format_func=lambda i: hw_name.get(i, i),
                  help="Accelerator for the cost explorer and the cluster (data/accelerators.csv)")
    fields.select("precision", list(PRECISIONS), container=sb, label="Weight precision", horizontal_radio=True,
                  format_func=lambda p: PRECISION_TITLES[p],
                  help="Weights and matmuls; the KV cache is FP8 with FP8/FP4 weights, BF16 with BF16")
    c1, c2 = sb.columns(2)
    fields.number("input_len", container=c1, label="Input (tokens)", step=256,
                  help="Prompt tokens per request (prefill)")
    fields.number("output_len", container=c2, label="Output (tokens)", step=256,
                  help="Generated tokens per request (decode); KV cache is sized for input + output")
    region_ids = ["custom"] + [r[0] for r in regions]
    region = fields.select("region", region_ids, container=sb, label="Power price",
                           format_func=lambda r: "Custom $/kWh" if r == "custom" else region_name.get(r, r),
                           from_value=lambda v: v or "custom", to_value=lambda v: None if v == "custom" else v,
                           help="A region of data/power_prices.csv, or your own price")
    fields.number("usd_per_kwh", container=sb, label="Electricity ($/kWh)", fmt="%.4f", step=0.005,
                  disabled=region is not None)
    if region is not None:
        sb.caption(f"In force: ${state.scenario().effective_usd_per_kwh(cat):.4f}/kWh from {region_name[region]}")
    fields.number("pue", container=sb, label="PUE (facility / IT energy)", fmt="%.2f", step=0.02)
    fields.select("basis", ["owned", "rental"], container=sb, label="Cost basis", horizontal_radio=True,
                  format_func=lambda b: "Owned (TCO)" if b == "owned" else "Rented (market rate)",
                  help="Owned: capex annuity + facility + opex + power. Rented: accelerators.csv rental rate.")
    with sb.expander("Finance, utilization and token mix", expanded=False):
        fields.number("cost_of_capital_frac", label="Cost of capital (% per year)", scale=100.0, unit="%",
                      fmt="%.1f", step=0.5)
        fields.number("accelerator_life_years", label="Accelerator life (years)", fmt="%.1f", step=0.5)
        fields.number("facility_life_years", label="Facility life (years)", fmt="%.0f", step=1.0)
        fields.number("build_usd_per_mw_it", label="Facility build ($M per MW IT)", scale=1e-6, unit="$M/MW",
                      fmt="%.2f", step=0.5)
        fields.number("opex_frac_of_capex_per_year", label="Opex (% of capex per year)", scale=100.0, unit="%",
                      fmt="%.1f", step=0.5)
        fields.number("utilization_frac", label="Utilization (% of hours)", scale=100.0, unit="%", fmt="%.0f",
                      step=5.0)
        fields.number("input_output_mix", label="Input tokens per output token (blend)", unit="", fmt="%.1f",
                      step=0.5)
        fields.number("cache_hit_frac", label="Prefix-cache hit rate (%)", scale=100.0, unit="%", fmt="%.0f",
                      step=5.0)
    with sb.expander("Save, load or share", expanded=False):
        sc = state.scenario()
        st.download_button("Save scenario (.toml)", sc.to_toml().encode("utf-8"), file_name="econ-scenario.toml",
                           mime="application/toml", key=f"{key}.save", on_click="ignore", icon=":material/save:",
                           help="The whole scenario as TOML; load it here or with `econ cost --scenario FILE`")
        st.file_uploader("Load scenario (.toml)", type=["toml"], key=f"{key}.load", on_change=_load_file,
                         args=(f"{key}.load",), help="Unknown ids or out-of-range values fall back to defaults "
                                                      "with a warning")
        st.button("Reset scenario to defaults", key=f"{key}.reset", on_click=_reset, icon=":material/restart_alt:")
        if LOADED_KEY in st.session_state:
            st.success("Loaded " + safe_text.md(st.session_state.pop(LOADED_KEY)), icon=":material/check_circle:")
        st.caption("The browser address holds the whole scenario: copy it to share this exact view.")
    sc = state.scenario()
    state.sync_url(sc)
    return sc
