"""The shared sidebar: the scenario every page computes with, plus save / load / reset.

``show(key)`` draws it and returns the :class:`econ.io.scenario.Scenario`; ``current()`` is what pages
call: the scenario the app's sidebar drew this run, or (page run on its own, as in AppTest) the
sidebar drawn by the page itself.
"""

from __future__ import annotations

import streamlit as st

from dashboards.components import fields, safe_text, state
from econ.physics.precision import PRECISIONS
from econ.presets import CUSTOM, WORKLOAD_SOURCE, WORKLOADS, workload_of
from econ.io.scenario import Scenario, ScenarioWarning, from_mapping, from_toml
from econ.assumptions import DECODING_FIELDS
from econ.io.scenario import SPECS
from econ.vocabulary import GENERATIONS, KV_PRECISIONS, SPEC_METHODS, TIER_SPECS, TIERS, WEIGHT_FORMATS, Tier

PRECISION_TITLES = {"bf16": "BF16", "fp8": "FP8", "fp4": "FP4 (NVFP4)"}
LOADED_KEY = "_econ_loaded_file"

FORMAT_TITLES = {"bf16": "BF16", "fp8": "FP8 (per-tensor)", "int8": "INT8", "int4": "INT4 (W4A16)", "mxfp4": "MXFP4",
                 "nvfp4": "NVFP4", "fp8_block": "FP8 (128×128 blocks)"}
"""Human names of the weight formats (econ.vocabulary.WEIGHT_FORMATS)."""
KV_TITLES = {**{k: FORMAT_TITLES[k] for k in KV_PRECISIONS}, "fp8": "FP8", "int4": "INT4"}
"""Human names of the KV-cache formats (econ.vocabulary.KV_PRECISIONS; an INT4 cache is not W4A16)."""
SPEC_TITLES = {"none": "Off", "mtp": "MTP (the model's own module)", "eagle": "EAGLE-style draft head",
               "draft": "Draft model"}
"""Human names of the speculative-decoding methods (econ.vocabulary.SPEC_METHODS)."""
AUTO = "auto"
DEFAULT_POWER_TITLE = "Default $/kWh: Virginia industrial average (EIA 2023)"
"""The power-price choice while the typed price is the default (econ.vocabulary source of ``usd_per_kwh``)."""

BASIS_TITLES = {t: TIER_SPECS[Tier(t)].label for t in TIERS}
"""Human names of the cost tiers (econ.vocabulary.TIER_SPECS)."""
DEFAULT_CUSTOM_RATE = 2.0
"""$/GPU-hour a custom tier starts from (an H100-class 2025 market rate; the user types their own)."""

WORKLOAD_TITLES = {**{k: w.label for k, w in WORKLOADS.items()}, CUSTOM: "Custom lengths"}


def _apply_workload(key: str) -> None:
    """The user picked a workload: set both lengths to the preset's (callback, before the widgets are drawn)."""
    choice = st.session_state.get(key)
    old = state.scenario()
    new = old.with_workload(choice)
    state.update(workload=new.workload, input_len=new.input_len, output_len=new.output_len)
    for f in ("input_len", "output_len"):  # the length widgets show the preset's lengths
        st.session_state[state.widget_key(f)] = getattr(new, f)
    if new.cache_hit_frac != old.cache_hit_frac:  # a task preset brings its prefix-reuse share (econ.presets)
        state.update(cache_hit_frac=new.cache_hit_frac)
        if state.widget_key("cache_hit_frac") in st.session_state:
            st.session_state[state.widget_key("cache_hit_frac")] = new.cache_hit_frac


def workload_select(container) -> str:
    """The workload preset (chat / reasoning / summarization / custom): picking a preset sets both lengths;
    typing a length that matches no preset makes it "custom"."""
    sc = state.scenario()
    key = state.seed("workload", sc.workload)
    # the lengths decide what the selector shows, including lengths typed this run (drawn below it)
    typed = tuple(st.session_state.get(state.widget_key(f), getattr(sc, f)) for f in ("input_len", "output_len"))
    shown = sc.workload if typed == (sc.input_len, sc.output_len) else workload_of(*typed)
    if st.session_state.get(key) != shown:
        st.session_state[key] = shown
    container.selectbox("Workload", list(WORKLOAD_TITLES), key=key, on_change=_apply_workload, args=(key,),
                        format_func=lambda w: WORKLOAD_TITLES.get(w, w),
                        help="Request shape: " + " ".join(w.description for w in WORKLOADS.values())
                             + f" Source: {WORKLOAD_SOURCE}.")
    return sc.workload


def custom_accelerator_form(container) -> None:
    """Enter your own accelerator (FLOP/s, HBM, links, price, power): validated like a catalog row, then selectable."""
    before = state.scenario().custom_accelerator
    with container.expander("Custom accelerator", expanded=before):
        on = fields.toggle("custom_accelerator", label="Use my own accelerator",
                           help="Adds a row to the accelerator table for this scenario (saved in the link and the "
                                "scenario file), validated with the catalog's rules")
        if on != before:
            st.rerun()  # the accelerator lists above are drawn from the catalog: redraw them with (or without) it
        if not on:
            return
        fields.text("custom_name", label="Name")
        c1, c2 = st.columns(2)
        fields.number("custom_bf16_tflop_per_s", container=c1, label="BF16 dense (TFLOP/s)", fmt="%.0f", step=50.0)
        fields.optional_number("custom_fp8_tflop_per_s", auto_label="No FP8", container=c2,
                               label="FP8 dense (TFLOP/s)", fmt="%.0f", default_value=2000.0)
        fields.optional_number("custom_fp4_tflop_per_s", auto_label="No FP4", container=c1,
                               label="FP4 dense (TFLOP/s)", fmt="%.0f", default_value=4000.0)
        fields.number("custom_hbm_gib", container=c2, label="HBM (GiB)", fmt="%.0f", step=8.0)
        fields.number("custom_hbm_tb_per_s", container=c1, label="HBM bandwidth (TB/s)", fmt="%.2f", step=0.1)
        fields.number("custom_scale_up_domain_size", container=c2, label="Scale-up domain (GPUs)", step=1)
        fields.number("custom_scale_up_gb_per_s", container=c1, label="Scale-up (GB/s per GPU)", fmt="%.0f",
                      step=50.0)
        fields.number("custom_scale_out_gb_per_s", container=c2, label="Scale-out (GB/s per GPU)", fmt="%.0f",
                      step=25.0)
        fields.optional_number("custom_capex_usd", auto_label="No capex (rented only)", container=c1,
                               label="All-in capex ($ per GPU)", fmt="%.0f", default_value=50_000.0)
        fields.optional_number("custom_usd_per_gpu_hour", auto_label="No rental rate", container=c2,
                               label="Rental ($ per GPU-hour of existence)", fmt="%.2f", default_value=2.5)
        fields.number("custom_power_w", container=c1, label="All-in power (W per GPU)", fmt="%.0f", step=50.0)
        fields.select("custom_generation", ["none", *GENERATIONS], container=c2, label="Calibrated like",
                      format_func=lambda g: "No profile (scalar defaults)" if g == "none" else g.capitalize(),
                      from_value=lambda v: v or "none", to_value=lambda v: None if v == "none" else v,
                      help="The accelerator generation whose calibration profile (data/calibration.csv: efficiencies "
                           "fitted on public measurements) your chip's efficiencies take")
        fields.select("custom_scale_up_topology", ["switch", "mesh"], label="Scale-up topology",
                      format_func=lambda t: "Switch (NVSwitch-like)" if t == "switch" else "Direct mesh",
                      help="Switch: NVSwitch boards. Mesh: each GPU's links go directly to its peers (AMD Instinct, "
                           "Gaudi 3, 4-GPU HGX), so a TP2 pair of 8 gets 1/7 of the scale-up bandwidth")
        state.catalog_in_use()  # validates the row
        problem = state.custom_error()
        if problem:
            st.error("Custom accelerator not used: " + safe_text.md(" ".join(problem.split())),
                     icon=":material/error:")
        else:
            st.caption("Validated like a catalog row; pick it as the accelerator above, or compare it on any page.")


def current(key: str = "sidebar") -> Scenario:
    """The scenario in force for this run (draws the sidebar when the page runs without ``app.py``); a page whose
    accelerator would be substituted stops here (:func:`gate`)."""
    if st.session_state.get(state.APP_FLAG):
        return state.scenario()
    sc = show(key)
    show_warnings()
    if not gate():
        st.stop()
    return sc


def show_warnings() -> None:
    """Warnings from reading the URL or a scenario file (unknown ids, out-of-range values): each fallback in force is
    said on the page while the view is the one loaded (those that stop the page are said by :func:`gate`)."""
    stops = set(state.stopped())
    for w in state.warnings():
        if w not in stops:
            st.warning("Scenario: " + safe_text.md(w), icon=":material/warning:")  # w quotes the URL/file


def gate() -> bool:
    """True when the page may compute. False while the link or file asked for an accelerator that cannot be used as
    written (a custom chip's field out of its range or refused by the catalog's rules, an unknown accelerator id):
    then the page says why, names what the sidebar shows in its place, and computes nothing until the user
    continues with those values (never the default chip or the H100 in silence)."""
    stops = state.stopped()
    if not stops:
        return True
    st.error("This view is not computed: the scenario asked for an accelerator that cannot be used as written.\n\n"
             + "\n\n".join(f"- {safe_text.md(w, inline=True)}" for w in stops)
             + "\n\nThe sidebar shows the values that would stand in (its Custom accelerator form, the accelerator "
               "list): correct them there, then continue.", icon=":material/error:")
    st.button("Continue with the values shown in the sidebar", key="scenario.release", on_click=state.release,
              icon=":material/play_arrow:")
    return False


def _load_file(key: str) -> None:
    upload = st.session_state.get(key)
    if upload is None:
        return
    sc, warnings = from_toml(upload.getvalue(), state.base_catalog_in_use().catalog)
    state.set_scenario(sc, [ScenarioWarning(f"{upload.name}: {w}", getattr(w, "field", "")) for w in warnings])
    st.session_state[LOADED_KEY] = upload.name


def _reset() -> None:
    sc, warnings = from_mapping({}, state.base_catalog_in_use().catalog)
    state.set_scenario(sc, warnings)


def _typed_kwh() -> float:
    """The $/kWh typed in the sidebar this run (its widget, drawn below the choice, else the scenario's)."""
    v = st.session_state.get("sc.usd_per_kwh")
    return float(v) if isinstance(v, (int, float)) else state.scenario().usd_per_kwh


def _auto_select(field: str, options, titles: dict, auto_title: str, container, help: str | None = None):
    """A select of ``auto`` + ``options`` for a field whose None means automatic."""
    return fields.select(field, [AUTO, *options], container=container,
                         format_func=lambda v: auto_title if v == AUTO else titles.get(v, v),
                         from_value=lambda v: AUTO if v is None else v, to_value=lambda v: None if v == AUTO else v,
                         help=help or f"{SPECS[field].help}. Default: {SPECS[field].source}")


def decoding_form(container, model_name: dict) -> None:
    """Formats, speculative decoding and the SLO percentile (econ.assumptions.Decoding; every page that prices
    reads them from the scenario)."""
    sc = state.scenario()
    on = any(getattr(sc, f) is not None for f in DECODING_FIELDS) or sc.slo_percentile is not None
    with container.expander("Formats, speculative decoding, SLO percentile", expanded=on):
        _auto_select("weight_format", list(WEIGHT_FORMATS), FORMAT_TITLES, "Auto (the release's / precision's)",
                     st)
        _auto_select("expert_weight_format", list(WEIGHT_FORMATS), FORMAT_TITLES, "Auto (the release's / weights')",
                     st)
        _auto_select("kv_precision", list(KV_PRECISIONS), KV_TITLES, "Auto (FP8 with FP8/FP4, else BF16)", st)
        method = _auto_select("spec_method", list(SPEC_METHODS), SPEC_TITLES, "Auto (the vendor's default)", st)
        if method not in (None, "none"):
            fields.optional_number("spec_draft_tokens", auto_label="Draft tokens: automatic", default_value=1)
            fields.optional_number("spec_acceptance", auto_label="Acceptance: automatic (sourced)", fmt="%.2f",
                                   default_value=0.7)
        if method == "draft":
            fields.select("spec_draft_model", list(model_name), format_func=lambda i: model_name.get(i, i),
                          from_value=lambda v: v or next(iter(model_name)), label="Draft model")
        elif state.scenario().spec_draft_model is not None:
            state.update(spec_draft_model=None)
        fields.select("slo_percentile", [None, 50.0, 90.0, 99.0], format_func=lambda v: "Mean (served)" if v is None
                      else f"p{v:g}", label="SLOs judged at", help=SPECS["slo_percentile"].help)


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
    workload_select(sb)
    c1, c2 = sb.columns(2)
    fields.number("input_len", container=c1, label="Input (tokens)", step=256,
                  help="Prompt tokens per request (prefill), ISL")
    fields.number("output_len", container=c2, label="Output (tokens)", step=256,
                  help="Generated tokens per request (decode), OSL; KV cache is sized for input + output")
    now = state.scenario()
    if now.workload != workload_of(now.input_len, now.output_len):  # lengths typed: the preset follows them
        state.update(workload=workload_of(now.input_len, now.output_len))
    region_ids = ["custom"] + [r[0] for r in regions]
    region = fields.select("region", region_ids, container=sb, label="Power price",
                           format_func=lambda r: region_name.get(r, r) if r != "custom" else (
                               DEFAULT_POWER_TITLE if _typed_kwh() == SPECS["usd_per_kwh"].default
                               else "Your own $/kWh"),
                           from_value=lambda v: v or "custom", to_value=lambda v: None if v == "custom" else v,
                           help="A region of data/power_prices.csv, or your own price")
    fields.number("usd_per_kwh", container=sb, label="Electricity ($/kWh)", fmt="%.4f", step=0.005,
                  disabled=region is not None)
    if region is not None:
        sb.caption(f"In force: ${state.scenario().effective_usd_per_kwh(cat):.4f}/kWh from {region_name[region]}")
    fields.number("pue", container=sb, label="PUE (facility / IT energy)", fmt="%.2f", step=0.02)
    basis = fields.select("basis", list(BASIS_TITLES), container=sb, label="Cost tier ($ per GPU-hour)",
                          format_func=lambda b: BASIS_TITLES.get(b, b),
                          help="Where a GPU-hour's price comes from: " + "; ".join(
                              f"{spec.label}: {spec.source}" for spec in TIER_SPECS.values()))
    if basis == "custom":
        if state.scenario().usd_per_gpu_hour is None:
            state.update(usd_per_gpu_hour=DEFAULT_CUSTOM_RATE)
        fields.number("usd_per_gpu_hour", container=sb, label="Custom rate ($ per GPU-hour of existence)", fmt="%.2f",
                      step=0.1, help="Per hour of the fleet's existence, like a rental rate; divided by utilization "
                                     "it is the cost per utilized GPU-hour the pages show")
    custom_accelerator_form(sb)
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
    decoding_form(sb, model_name)
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
